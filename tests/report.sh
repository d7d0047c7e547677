# SPDX-License-Identifier: MIT
# report.sh - the lines a shell stage of make check prints, sourced by its
# runner (tests/install.sh, tests/realprog/lib.sh), which names the stage
# in $stage first.  One line a test: "ok   NAME", "FAIL NAME" (with FILE,
# its last 20 lines indented), "skip NAME"; then finish prints
# "STAGE: N passed, N failed, N skipped" (tests/check.sh sums them) and
# exits, with status 1 if any failed.

pass=0 fail=0 skipped=0

ok() {
	pass=$((pass + 1))
	echo "ok   $1"
}

# bad NAME [FILE]
bad() {
	fail=$((fail + 1))
	echo "FAIL $1"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		sed 's/^/    /' "$2" | tail -n 20
	fi
}

skip() {
	skipped=$((skipped + 1))
	echo "skip $1"
}

finish() {
	echo "$stage: $pass passed, $fail failed, $skipped skipped"
	[ "$fail" = 0 ]
	exit
}
