# SPDX-License-Identifier: MIT
# Clocks and sleeps (issue 13), sourced by run.sh: natively with short
# lengths, never early; on virtual time exact to the nanosecond, long, and
# quick (a sleep of 30 s, two threads of 50 sleeps due at the same
# instants, a timer due in 200 years that must not make time run to its
# end).

vclock() {
	selected vclock || return 0
	if run vclock.linux "$dir/vclock"; then
		ok "vclock: clocks and sleeps natively"
	else
		bad "vclock: clocks and sleeps natively"
		sed 's/^/    /' "$out/vclock.linux"
	fi
	t0=$(date +%s%N)
	if run vclock.virtual "$tool" exec --backend virtual -- "$dir/vclock"
	then
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [ "$ms" -lt 5000 ]; then
			ok "vclock: exact on virtual time, in $ms ms"
		else
			bad "vclock: exact on virtual time, but in $ms ms"
		fi
	else
		bad "vclock: clocks and sleeps on virtual time"
		sed 's/^/    /' "$out/vclock.virtual"
	fi
}
