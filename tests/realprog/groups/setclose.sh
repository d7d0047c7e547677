# SPDX-License-Identifier: MIT
# A program linked with libtfd.so under the drop-in: a set's number that
# the program closes or replaces with its own calls ends the set, as
# tfd_close(3) does (tfd_set(3)).  Sourced by run.sh.  On the engine, the
# kernel backend and virtual time (not under ThreadSanitizer: lib.sh).

setclose() {
	wanted setclose || return 0
	cat >"$out/setclose.want" <<'EOF2'
ended by close(2): yes
ended by close_range(2): yes
ended by close_range(2), CLOSE_RANGE_UNSHARE: yes
ended by closefrom(3): yes
ended by dup2(2) onto it: yes
ended by dup3(2) onto it: yes
a set made after works: yes
a handler's close(2) beside set calls: done
timers made and closed beside set calls: done
EOF2
	for b in $(dropin_backends); do
		run "setclose.$b" "$tool" exec --backend "$b" -- \
		    "$dir/setclose"
		matches "$out/setclose.want" "$out/setclose.$b" \
		    "setclose: a set's number closed or replaced ends it ($b)" \
		    "setclose: a set outlives its number ($b)"
	done
}
