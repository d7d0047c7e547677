#!/bin/sh
# SPDX-License-Identifier: MIT
# check.sh - the stages of make check, one after the other, each to its
# end even when an earlier one failed; then one line that sums them:
#
#   check: N passed, N failed, N skipped (unit 1/0/2, fallback ..., ...)
#
# A stage's figures are the last "[NAME: ]N passed, N failed, N skipped"
# line its runner printed; a stage that prints none counts as one test
# (check-header: it passed or failed).  A stage that fails without saying
# which of its tests failed (it did not build, its runner crashed) counts
# one failure more.  Exit status 1 if anything failed.
#
#   sh tests/check.sh MAKE STAGE...      (MAKE: the make to run them with)
set -u
make=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/tfd-check.XXXXXX") || exit 1
trap 'rm -f "$log" "$log.status"' EXIT INT TERM
pass=0 fail=0 skipped=0 detail= n='\([0-9][0-9]*\)'

for stage; do
	{
		$make --no-print-directory "$stage" 2>&1
		echo $? >"$log.status"
	} | tee "$log"
	status=$(cat "$log.status")
	counts=$(sed -n "s/^\([a-z]*: \)\{0,1\}$n passed, $n failed, $n skipped\$/\2 \3 \4/p" \
	    "$log" | tail -n 1)
	if [ -n "$counts" ]; then
		read -r p f s <<EOF
$counts
EOF
	elif [ "$status" = 0 ]; then
		p=1 f=0 s=0
	else
		p=0 f=0 s=0
	fi
	if [ "$status" != 0 ] && [ "$f" = 0 ]; then
		echo "check: $stage failed (exit status $status) with no test" \
		    "failed: counted as one failure"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skipped=$((skipped + s))
	detail="$detail${detail:+, }${stage#check-} $p/$f/$s"
done
echo "check: $pass passed, $fail failed, $skipped skipped" \
    "($detail: passed/failed/skipped)"
[ "$fail" = 0 ]
