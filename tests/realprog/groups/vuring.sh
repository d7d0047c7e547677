# SPDX-License-Identifier: MIT
# An io_uring operation done by the kernel's worker while every thread of
# the tree waits (one for its completion, one in a 5 s sleep) is work in
# progress: time does not jump past it to the sleep's end (tfd-preload(7),
# The kernel's io_uring threads hold time).  Sourced by run.sh.

vuring() {
	selected vuring && virtual_prog vuring || return 0
	run vuring.linux "$dir/vuring" "$out/vuring.data" 64
	case $(cat "$out/vuring.linux") in
	done) ;;
	*)
		skip "vuring: io_uring is not available here ($(head -n 1 \
		    "$out/vuring.linux"))"
		return 0 ;;
	esac
	run vuring.virtual "$tool" exec --backend virtual -- \
	    "$dir/vuring" "$out/vuring.data" 64
	matches "$out/vuring.linux" "$out/vuring.virtual" \
	    "vuring: a worker's write ends before the 5 s sleep, as on Linux" \
	    "vuring: a worker's write against a 5 s sleep"
	vuring_pinned
	# The ring made by a system call instruction of the program's own,
	# as liburing makes it: seen by its workers, not by its making.
	run vuring.raw.linux "$dir/vuring" "$out/vuring.data" 64 raw
	run vuring.raw.virtual "$tool" exec --backend virtual -- \
	    "$dir/vuring" "$out/vuring.data" 64 raw
	msg="vuring raw: a ring made as liburing makes it"
	matches "$out/vuring.raw.linux" "$out/vuring.raw.virtual" \
	    "$msg, its worker's write ends before the 5 s sleep, as on Linux" \
	    "$msg, against a 5 s sleep"
}

# The same, three times, pinned to one CPU with a busy loop beside it: a
# worker the kernel has made waits there for the CPU, under its maker's
# name until it first runs (found by its flag: tfd-preload(7)); before,
# time jumped past it in 4 runs of 20.
vuring_pinned() {
	if ! command -v taskset >/dev/null 2>&1; then
		skip "vuring pinned: no taskset here"
		return 0
	fi
	cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	spin=$!
	: >"$out/vuring.pinned"
	for k in 1 2 3; do
		run vuring.pinned.$k taskset -c "$cpu" "$tool" exec \
		    --backend virtual -- "$dir/vuring" "$out/vuring.data" 64
		cat "$out/vuring.pinned.$k" >>"$out/vuring.pinned"
	done
	kill "$spin"
	wait "$spin" 2>/dev/null
	printf 'done\ndone\ndone\n' >"$out/vuring.pinned.want"
	matches "$out/vuring.pinned.want" "$out/vuring.pinned" \
	    "vuring pinned beside a busy loop: the write ends first, 3 of 3" \
	    "vuring pinned beside a busy loop: time jumped past the write"
}
