# SPDX-License-Identifier: MIT
# Raw timerfd system calls (issue 12 item 1), sourced by run.sh:
# syscall(SYS_timerfd_settime) on a timer of glibc's timerfd_create, and
# the rest, under --raw-syscalls; an unrelated call and the program's own
# SIGSYS handler and filter; the filter that option installs.

rawsys() {
	selected "rawsys seccomp" || return 0
	if [ ! -x "$dir/rawsys" ]; then
		skip "rawsys: not built"
		return
	fi
	xopt=--raw-syscalls
	for b in engine kernel virtual; do
		same "$dir/rawsys" rawsys "$b"
		same "$dir/rawsys" rawsys.other "$b" other
		same "$dir/rawsys" rawsys.sandbox "$b" sandbox
		same "$dir/rawsys" rawsys.libc "$b" libc
		same "$dir/rawsys" rawsys.blocked "$b" blocked
	done
	# A program run from it has the filter too (it cannot be removed):
	# with the preload, and without it (its C library is elsewhere, its
	# raw calls reach the kernel as they would).
	same sh rawsys.child engine -c "'$dir/rawsys'"
	same env rawsys.nopreload engine -u LD_PRELOAD "$dir/rawsys"
	xopt=
	seccomp
}

# --raw-syscalls installs a seccomp filter; tfd exec without it, none.
seccomp() {
	run seccomp.on "$tool" exec --raw-syscalls -- \
	    grep '^Seccomp:' /proc/self/status
	has "$out/seccomp.on" "--raw-syscalls installs a filter" \
	    '^Seccomp:[[:space:]]+2$'
	grep '^Seccomp:' /proc/self/status >"$out/seccomp.native"
	run seccomp.off "$tool" exec -- grep '^Seccomp:' /proc/self/status
	if cmp -s "$out/seccomp.native" "$out/seccomp.off"; then
		ok "no filter without --raw-syscalls"
	else
		bad "a filter without --raw-syscalls: $(cat "$out/seccomp.off")"
	fi
}
