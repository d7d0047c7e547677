#!/bin/sh
# SPDX-License-Identifier: MIT
# man.sh - every page renders, in the tree, without a warning: groff -man
# -ww -z (all warnings) and man -l (what a reader types, from the top of
# the tree: a `.so man/OTHER.3` page is resolved from there), each with
# nothing on stderr; with MANDIR, the installed pages too, with man -M.
# And no page glues words: the alternating-font macros (.BI, .BR...)
# join their arguments with no space, so two unquoted arguments that end
# and begin with a letter or digit render as one word (".BI x y (a note)"
# gives "y(anote)").  Prints what failed; exit status 1 if any did, 77
# if neither groff nor man is here (skipped).
#
#   sh tests/man.sh [MANDIR]
set -u
fail=0 n=0
have_groff=$(command -v groff)
have_man=$(command -v man)
if [ -z "$have_groff" ] && [ -z "$have_man" ]; then
	echo "man: skipped: neither groff nor man(1) is installed"
	exit 77
fi
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT INT TERM

# check LABEL CMD...: CMD's stderr must be empty, its status 0.
check() {
	label=$1
	shift
	if ! MANWIDTH=80 "$@" >/dev/null 2>"$tmp" || [ -s "$tmp" ]; then
		echo "man: $label:"
		sed 's/^/    /' "$tmp"
		fail=1
	fi
	n=$((n + 1))
}

for p in man/*.[1-9]; do
	[ -n "$have_groff" ] && check "groff -man -ww -z $p" \
	    groff -man -ww -z "$p"
	[ -n "$have_man" ] && check "man -l $p" man -l "$p"
done
if [ -n "${1:-}" ] && [ -n "$have_man" ]; then
	for p in man/*.[1-9]; do
		s=${p##*.} name=${p##*/}
		check "installed $name (man -M $1 $s ${name%.*})" \
		    man -M "$1" "$s" "${name%.*}"
	done
fi
# The words: each argument of an alternating-font macro, quoted or not,
# and whether two unquoted ones meet letter to letter.
awk '
/^\.(BI|BR|IB|IR|RB|RI)[ \t]/ {
	line = substr($0, 5)
	n = 0
	while (sub(/^[ \t]+/, "", line) >= 0 && line != "") {
		n++
		if (substr(line, 1, 1) == "\"") {
			line = substr(line, 2)
			q = index(line, "\"")
			if (!q)
				q = length(line) + 1
			arg[n] = substr(line, 1, q - 1)
			line = substr(line, q + 1)
			quoted[n] = 1
		} else {
			if (!match(line, /[ \t]/))
				RSTART = length(line) + 1
			arg[n] = substr(line, 1, RSTART - 1)
			line = substr(line, RSTART)
			quoted[n] = 0
		}
	}
	for (i = 1; i < n; i++)
		if (!quoted[i] && !quoted[i + 1] && arg[i] ~ /[A-Za-z0-9]$/ &&
		    arg[i + 1] ~ /^[A-Za-z0-9]/) {
			printf "man: %s:%d: \"%s\" and \"%s\" render as one " \
			    "word\n", FILENAME, FNR, arg[i], arg[i + 1]
			bad = 1
			break
		}
}
END { exit bad }' man/*.[1-9] || fail=1
[ -z "$have_groff" ] && echo "man: groff is not installed: man -l only"
[ -z "$have_man" ] && echo "man: man(1) is not installed: groff only"
if [ "$fail" -ne 0 ]; then
	echo "man: FAILED"
	exit 1
fi
echo "man: $n renderings of $(ls man/*.[1-9] | wc -l) pages, no warning"
