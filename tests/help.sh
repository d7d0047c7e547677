#!/bin/sh
# SPDX-License-Identifier: MIT
# help.sh - the options tfd(1) documents are the options the program's help
# lists: for each command, the set in the SYNOPSIS of the page, the set in
# its section (the .TP items of ".SS tfd COMMAND"), the set `tfd COMMAND
# --help` prints, and the set under "tfd COMMAND" in `tfd --help` must be
# one set (--help itself, which every command takes, aside).  The global
# options (`tfd --help`, `tfd --version`) likewise.  Prints what differs;
# exit status 1 if anything does.
#
#   sh tests/help.sh TFD_PROGRAM [PAGE]
set -u
tool=${1:?usage: help.sh TFD_PROGRAM [PAGE]}
page=${2:-man/tfd.1}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# "COMMAND OPTION" lines, from the page: where = synopsis or section.
awk '
function opts(line, cmd, what,   s, m) {
	s = line
	gsub(/\\-/, "-", s)   # the page writes \-\-plain\-read
	while (match(s, /--[a-z][a-z-]*/)) {
		m = substr(s, RSTART, RLENGTH)
		if (m != "--help" || cmd == "tfd")
			print what, cmd, m
		s = substr(s, RSTART + RLENGTH)
	}
}
/^\.SH / { sec = $2; cmd = ""; next }
sec == "SYNOPSIS" && /^\.B tfd( |$)/ {
	w = $3
	if (w == "\\-\\-help" || w == "\\-\\-version") cmd = "tfd"
	else if (w ~ /^[a-z]+$/ && w != "help") cmd = w
	else cmd = ""
}
sec == "SYNOPSIS" && cmd != "" { opts($0, cmd, "synopsis") }
/^\.SS tfd [a-z]+$/ { cmd = $3; next }
sec == "DESCRIPTION" && /^\.TP/ { tp = 1; next }
tp { tp = 0; if (cmd != "" && $0 ~ /^\.B[IR]? +\\-\\-/) opts($1 " " $2, cmd, "section") }
' "$page" > "$tmp/page"

commands=$(awk '$1 == "synopsis" && $2 != "tfd" { print $2 }' "$tmp/page" |
    sort -u)
# The commands of `tfd --help`: "tfd NAME [OPTION]..." lines.
"$tool" --help > "$tmp/all" || { echo "help: tfd --help failed"; exit 1; }
listed=$(awk '/^tfd [a-z]+ \[OPTION\]/ { print $2 }' "$tmp/all" | sort -u)
if [ "$commands" != "$listed" ]; then
	echo "help: tfd(1) SYNOPSIS has the commands:" $commands
	echo "help: tfd --help lists the commands:" $listed
	fail=1
fi

# compare A B LABEL-A LABEL-B: the sets in two files.
compare() {
	sort -u "$1" > "$1.s"
	sort -u "$2" > "$2.s"
	if ! cmp -s "$1.s" "$2.s"; then
		comm -23 "$1.s" "$2.s" | sed "s/^/help: $3 has /; s/\$/, $4 has not/"
		comm -13 "$1.s" "$2.s" | sed "s/^/help: $4 has /; s/\$/, $3 has not/"
		fail=1
	fi
}

for c in $commands tfd; do
	awk -v c="$c" '$1 == "synopsis" && $2 == c { print $3 }' "$tmp/page" \
	    > "$tmp/$c.syn"
	# `tfd --help`: from "tfd NAME [OPTION]..." (or "tfd") to the next
	# blank line, the "    --name" lines.
	awk -v c="$c" '
		/^$/ { on = 0 }
		(c == "tfd" && $0 == "tfd") || (c != "tfd" && $1 == "tfd" &&
		    $2 == c && $3 ~ /^\[OPTION\]/) { on = 1; next }
		on && /^    --/ { if ($1 != "--help" || c == "tfd") print $1 }
	' "$tmp/all" > "$tmp/$c.all"
	compare "$tmp/$c.syn" "$tmp/$c.all" "tfd(1) SYNOPSIS of '$c'" \
	    "tfd --help for '$c'"
	[ "$c" = tfd ] && continue
	awk -v c="$c" '$1 == "section" && $2 == c { print $3 }' "$tmp/page" \
	    > "$tmp/$c.sec"
	compare "$tmp/$c.syn" "$tmp/$c.sec" "tfd(1) SYNOPSIS of '$c'" \
	    "tfd(1) section 'tfd $c'"
	if ! "$tool" "$c" --help > "$tmp/$c.out"; then
		echo "help: tfd $c --help failed"
		fail=1
		continue
	fi
	awk '/^options:$/ { on = 1; next } on && /^  --/ && $1 != "--help" {
		print $1 }' "$tmp/$c.out" > "$tmp/$c.help"
	compare "$tmp/$c.syn" "$tmp/$c.help" "tfd(1) SYNOPSIS of '$c'" \
	    "tfd $c --help"
done
n=$(cat "$tmp"/*.syn | wc -l)
if [ "$fail" -ne 0 ]; then
	echo "help: FAILED"
	exit 1
fi
echo "help: $n options of" $commands "and tfd itself: the same in" \
    "tfd(1) (synopsis and sections), tfd --help and each tfd COMMAND --help"
