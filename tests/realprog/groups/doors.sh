# SPDX-License-Identifier: MIT
# A program linked with libtfd.so under the drop-in, whose doors take its
# own calls of the library in (src/preload/exports_api.c).  Sourced by
# run.sh.

# The library's errors: the same lines as the program run as it is, on
# each backend (not virtual time under ThreadSanitizer: lib.sh).
apierrs() {
	wanted apierrs || return 0
	run apierrs.none "$dir/apierrs"
	for b in $(dropin_backends); do
		run "apierrs.$b" "$tool" exec --backend "$b" -- "$dir/apierrs"
		matches "$out/apierrs.none" "$out/apierrs.$b" \
		    "apierrs: the library's errors as without the drop-in ($b)" \
		    "apierrs: the library's errors differ under the drop-in ($b)"
	done
}

# On virtual time: its own calls (tfd_create, tfd_settime, tfd_read,
# timerfd(), the set calls) are virtual time's, hours of timers exact and
# at once.
apivirt() {
	wanted apivirt || return 0
	cat >"$out/apivirt.want" <<'EOF2'
tfd_read: 8, count 1, at 3600.000
tfd_gettime: 1800 s left
poll: 1 at 5400.000
epoll_wait: 1 at 6000.000
tfd_read: 8, count 1
tfd_close: 0
timerfd: 7200 s left
tfd_read: 8, count 1, at 13200.000
read: 8, count 1, at 13260.000
tfd_close: 0
tfd_set_read: 16, key 7, count 1, at 18660.000
tfd_set_gettime: 3600 s left
poll: 1 at 22260.000
tfd_set_read: 16, key 8, count 1
tfd_close: 0
tfd_close: 0 at 22261.000
tfd_read: -1 EBADF at 22261.000
EOF2
	run apivirt.virtual "$tool" exec --backend virtual -- "$dir/apivirt"
	matches "$out/apivirt.want" "$out/apivirt.virtual" \
	    "apivirt: a libtfd program's own calls run on virtual time" \
	    "apivirt: a libtfd program's own calls are not virtual time's"
}
