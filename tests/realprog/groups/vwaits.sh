# SPDX-License-Identifier: MIT
# Every way a program reads time or waits (issue 13), sourced by run.sh:
# natively, a unit of 10 ms and never early; on virtual time a unit of 1 s
# and exact.  The two outputs must be the same facts.

vwaits() {
	selected vwaits || return 0
	for try in 1 2; do
		run vwaits.linux "$dir/vwaits"
		t0=$(date +%s%N)
		run vwaits.virtual "$tool" exec --backend virtual -- \
		    "$dir/vwaits"
		ms=$(ms_since)
		if cmp -s "$out/vwaits.linux" "$out/vwaits.virtual" &&
		    grep -q '^all passed$' "$out/vwaits.virtual"; then
			facts=$(grep -c '^ok' "$out/vwaits.virtual")
			msg="facts of every wait, natively and exact on virtual"
			msg="$msg time ($ms ms)${first:+, second try}"
			ok "vwaits: $facts $msg"
			[ -z "${first:-}" ] ||
			    sed 's/^/    /' "$out/vwaits.first"
			return
		fi
		# A loaded machine: SIGEV_THREAD's third call a unit late, or
		# a condition variable's wake-up missed (tfd-preload(7), BUGS):
		# shown, and run once more.
		first=1
		diff -u "$out/vwaits.linux" "$out/vwaits.virtual" \
		    >"$out/vwaits.first"
	done
	bad "vwaits: every wait, natively and on virtual time"
	show_diff "$out/vwaits.linux" "$out/vwaits.virtual"
}
