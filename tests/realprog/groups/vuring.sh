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
