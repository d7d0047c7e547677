#!/bin/sh
# SPDX-License-Identifier: MIT
# traceability.sh - documentation traceability: every (function, errno) that a
# manual page lists under ERRORS is produced by a conformance case or by a
# named test, and every errno a case produces is listed for its function;
# every departure row names a page and section that exist.
#
#   sh tests/traceability.sh TFD_PROGRAM [MANDIR [TESTDIR]]
#
# Reads man/*.3 and the output of `tfd conform --errnos` and `tfd conform
# --departures`.  Prints what it checked; exit status 1 on any problem.
# Only sh and awk.
#
# Which function an errno belongs to.  In a page's ERRORS section an
# errno is a `.TP` line followed by `.B EXXX`.  It belongs to every
# function of the page's NAME line, unless a paragraph (right after
# `.SH ERRORS` or after `.PP`) starts with `.BR function ()`: from there on
# it belongs to that function alone.  So tfd_settime.3 lists tfd_settime's
# errors, then, after ".PP / .BR tfd_gettime ()", tfd_gettime's;
# tfd_virtual.3 lists errors shared by its four functions.  A page that is
# only `.so man/OTHER.3` (tfd_gettime.3) has no ERRORS of its own: its
# name must be a function in OTHER.3's NAME line.

set -u
tool=${1:?usage: traceability.sh TFD_PROGRAM [MANDIR [TESTDIR]]}
mandir=${2:-man}
testdir=${3:-tests}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# Errors no conformance row can produce without breaking the process
# (allocation, thread creation and the system-wide file limit fail only
# through the linker's --wrap in test_fault.c).  Each line: function,
# errno, file, test; the test must exist and contain
# CHECK_ERR(function(...), errno).
cat > "$tmp/bytest" <<'EOF'
tfd_create ENFILE test_fault.c enfile_is_passed_through
tfd_create ENOMEM test_fault.c create_enomem_timer
tfd_create EAGAIN test_fault.c create_eagain_when_the_thread_cannot_start
timerfd EAGAIN test_fault.c revised_create_fails_whole
timerfd ENFILE test_fault.c enfile_is_passed_through
timerfd ENOMEM test_fault.c revised_create_fails_whole
tfd_set_create EINVAL test_set.c set_errors_create
tfd_set_create EMFILE test_fault.c set_create_fails_whole
tfd_set_create ENFILE test_fault.c set_create_fails_whole
tfd_set_create ENOMEM test_fault.c set_create_fails_whole
tfd_set_create EAGAIN test_fault.c set_create_fails_whole
tfd_set_settime EFAULT test_set.c set_errors_settime
tfd_set_settime EINVAL test_set.c set_errors_settime
tfd_set_settime EBADF test_set.c set_errors_settime
tfd_set_settime ENOMEM test_fault.c set_settime_enomem_keeps_the_set
tfd_set_gettime EBADF test_set.c set_errors_gettime
tfd_set_gettime EINVAL test_set.c set_errors_gettime
tfd_set_gettime ENOENT test_set.c set_errors_gettime
tfd_set_gettime EFAULT test_set.c set_errors_gettime
tfd_set_read EBADF test_set.c set_errors_read
tfd_set_read EINVAL test_set.c set_errors_read
tfd_set_read EFAULT test_set.c set_errors_read
tfd_set_read EAGAIN test_set.c set_errors_read
tfd_set_read EINTR test_set.c set_errors_read
tfd_set_read ECANCELED test_set.c set_cancel_on_set_on_the_engine
EOF

# ---- the pages: "function errno page" ----
for page in "$mandir"/*.3; do
	first=$(grep -v '^\.\\"' "$page" | head -n 1) # past comments
	case $first in
	.so\ *)
		target=$mandir/${first##*/}
		name=$(basename "$page" .3)
		if [ ! -f "$target" ]; then
			echo "traceability: $page: .so to a missing page $target"
			fail=1
		elif ! awk -v n="$name" '
			/^\.SH / { in_name = ($0 ~ /^\.SH NAME/); next }
			in_name { gsub(/,/, " "); for (i = 1; i <= NF; i++) {
				if ($i == "\\-") exit; if ($i == n) found = 1 } }
			END { exit !found }' "$target"; then
			echo "traceability: $page: $name is not in the NAME of $target"
			fail=1
		fi
		continue ;;
	esac
	awk -v page="${page##*/}" '
	/^\.SH / {
		sec = $0; sub(/^\.SH +/, "", sec); gsub(/"/, "", sec)
		in_name = (sec == "NAME"); in_err = (sec == "ERRORS")
		para = 1; cur = names; next
	}
	in_name && !done_name {
		line = $0; gsub(/,/, " ", line); k = split(line, w, " ")
		for (i = 1; i <= k; i++) {
			if (w[i] == "\\-") { done_name = 1; break }
			names = names (names == "" ? "" : " ") w[i]
		}
		cur = names; next
	}
	!in_err { next }
	/^\.PP/ { para = 1; next }
	para && /^\.BR [a-z_]+ \(\)/ {
		if ((" " names " ") ~ (" " $2 " ")) cur = $2
		para = 0; next
	}
	{ para = 0 }
	/^\.TP/ { tp = 1; next }
	tp && /^\.B E[A-Z0-9]+$/ {
		k = split(cur, f, " ")
		for (i = 1; i <= k; i++) print f[i], $2, page
	}
	{ tp = 0 }' "$page"
done | sort -u > "$tmp/documented"

# ---- what the conformance cases produce: "function errno case" ----
if ! "$tool" conform --errnos > "$tmp/rows" || [ ! -s "$tmp/rows" ]; then
	echo "traceability: '$tool conform --errnos' failed"
	exit 1
fi

# ---- what the named tests produce ----
: > "$tmp/tests"
while read -r fn err file test; do
	if awk -v t="$test" -v fn="$fn" -v err="$err" '
		$0 ~ ("^TEST(_LIMIT)?\\(" t "[,)]") { body = 1; next }
		body && /^}/ { exit }
		body { text = text " " $0 }
		END {
			gsub(/[ \t]+/, " ", text)
			exit !(text ~ ("CHECK_ERR\\( ?" fn "\\([^;]*, " err "\\)"))
		}' "$testdir/$file"; then
		echo "$fn $err $file:$test" >> "$tmp/tests"
	else
		echo "traceability: $testdir/$file: no TEST($test) with" \
		     "CHECK_ERR($fn(...), $err)"
		fail=1
	fi
done < "$tmp/bytest"

cat "$tmp/rows" "$tmp/tests" | awk '{ print $1, $2 }' | sort -u \
	> "$tmp/produced"
awk '{ print $1, $2 }' "$tmp/documented" | sort -u > "$tmp/listed"

# Listed but produced by nothing.
comm -23 "$tmp/listed" "$tmp/produced" | while read -r fn err; do
	pages=$(awk -v f="$fn" -v e="$err" '$1 == f && $2 == e { print $3 }' \
		"$tmp/documented" | tr '\n' ' ')
	echo "traceability: $fn $err is listed in ${pages% } but no conformance" \
	     "case or named test produces it"
done > "$tmp/missing"
# Produced but listed nowhere for that function.
comm -13 "$tmp/listed" "$tmp/produced" | while read -r fn err; do
	src=$(awk -v f="$fn" -v e="$err" '$1 == f && $2 == e { print $3 }' \
		"$tmp/rows" "$tmp/tests" | sort -u | tr '\n' ' ')
	echo "traceability: $fn $err is produced by ${src% } but no ERRORS" \
	     "section lists it for $fn"
done > "$tmp/extra"
if [ -s "$tmp/missing" ] || [ -s "$tmp/extra" ]; then
	cat "$tmp/missing" "$tmp/extra"
	fail=1
fi

# ---- departures: "case|page SECTION [item]" ----
if ! "$tool" conform --departures > "$tmp/departures"; then
	echo "traceability: '$tool conform --departures' failed"
	exit 1
fi
while IFS='|' read -r case where; do
	page=${where%% *}
	rest=${where#* }
	item=${rest##* }
	case $item in
	*[!0-9]*|'') item= ; section=$rest ;;
	*) section=${rest% *} ;;
	esac
	if [ ! -f "$mandir/$page" ]; then
		echo "traceability: $case: departure names $page, not in $mandir/"
		fail=1
	elif ! awk -v s="$section" -v item="$item" '
		/^\.SH / { sec = $0; sub(/^\.SH +/, "", sec); gsub(/"/, "", sec)
			in_s = (sec == s); if (in_s) found = 1; next }
		in_s && item != "" && $0 ~ ("^\\.IP " item "\\.( |$)") { hit = 1 }
		END { exit !(found && (item == "" || hit)) }' "$mandir/$page"; then
		echo "traceability: $case: departure names $where, no such section" \
		     "${item:+or item }in $mandir/$page"
		fail=1
	fi
done < "$tmp/departures"

pairs=$(wc -l < "$tmp/listed")
rows=$(awk '{ print $1, $2 }' "$tmp/rows" | sort -u | wc -l)
ntests=$(wc -l < "$tmp/tests")
deps=$(wc -l < "$tmp/departures")
if [ "$fail" -ne 0 ]; then
	echo "traceability: FAILED"
	exit 1
fi
echo "traceability: $pairs (function, errno) pairs in the ERRORS sections;" \
     "$rows produced by conformance cases, $ntests by named tests;" \
     "$deps departure rows, each naming an existing section"
