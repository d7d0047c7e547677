# SPDX-License-Identifier: MIT
# lib.sh - the helpers of the real-program tests, sourced by run.sh before
# the groups (groups/*.sh): run a program, compare its output as it is and
# through the preload, and the ok, FAIL and skip lines (tests/report.sh).
# They use run.sh's $dir (the programs built), $src (this directory),
# $tool (the tfd program) and $out (a directory for the outputs).  Shell
# variables are global: a helper's names are its callers' too.

stage=realprog
. "$src/../report.sh"

# run NAME CMD...: CMD's stdout and stderr into $out/NAME, 60 s at most.
run() {
	name=$1
	shift
	timeout 60 "$@" >"$out/$name" 2>&1
}

# same PROG LABEL BACKEND [ARG...]: the program's output, as it is and
# through the preload (with the options in $xopt), twice at most (a
# machine loaded enough to delay an event by 50 ms changes the order on
# both).
same() {
	prog=$1 label=$2 b=$3 try=1
	shift 3
	while :; do
		if run "$label.linux" "$prog" "$@" &&
		    run "$label.$b" "$tool" exec ${xopt:-} --backend "$b" -- \
		    "$prog" "$@" &&
		    cmp -s "$out/$label.linux" "$out/$label.$b"; then
			[ $try = 1 ] && ok "$label: $b same as Linux" ||
			    ok "$label: $b same as Linux (second try)"
			[ $try = 1 ] || sed 's/^/    /' "$out/$label.first"
			return
		fi
		[ $try = 2 ] && break
		try=2
		diff -u "$out/$label.linux" "$out/$label.$b" \
		    >"$out/$label.first"
	done
	bad "$label: $b differs from Linux"
	show_diff "$out/$label.linux" "$out/$label.$b"
}

# compare PROG: the program $dir/PROG, as it is and on each backend; a
# group of its own, named PROG.
compare() {
	prog=$dir/$1 label=$1
	selected "$label" || return 0
	if [ ! -x "$prog" ]; then
		skip "$label: not built (see above)"
		return
	fi
	for b in engine kernel virtual; do
		same "$prog" "$label" "$b"
	done
}

# matches WANT GOT OK BAD: ok OK if file GOT is file WANT, else bad BAD
# and the difference.
matches() {
	if cmp -s "$1" "$2"; then
		ok "$3"
	else
		bad "$4"
		show_diff "$1" "$2"
	fi
}

# show_diff WANT GOT: how file GOT differs from WANT, indented (under a
# FAIL line).
show_diff() {
	diff -u "$1" "$2" | sed 's/^/    /'
}

# verdict STATUS OK BAD FILE: ok OK if STATUS, that of the checks just
# made, is 0; else bad BAD and FILE, indented.
verdict() {
	if [ "$1" = 0 ]; then
		ok "$2"
	else
		bad "$3"
		sed 's/^/    /' "$4"
	fi
}

# if_installed PROG NAME FUNCTION: FUNCTION, or NAME skipped when the
# program PROG is not installed.
if_installed() {
	if command -v "$1" >/dev/null 2>&1; then
		"$3"
	else
		skip "$2: $1 not installed"
	fi
}

# expect STATUS NAME CMD...: CMD exits with STATUS.
expect() {
	want=$1 name=$2
	shift 2
	run "$name" "$@"
	got=$?
	if [ "$got" = "$want" ]; then
		ok "$name: exit $want"
	else
		bad "$name: exit $got, want $want"
		sed 's/^/    /' "$out/$name"
	fi
}

# has FILE LABEL PATTERN [MIN]: at least MIN (1) lines match.
has() {
	cnt=$(grep -c -E -- "$3" "$1" 2>/dev/null)
	if [ "${cnt:-0}" -ge "${4:-1}" ]; then
		ok "$2"
	else
		bad "$2: ${cnt:-0} line(s) match '$3'"
		sed 's/^/    /' "$1"
	fi
}

# ms since t0 (set with: t0=$(date +%s%N)).
ms_since() {
	echo $((($(date +%s%N) - t0) / 1000000))
}

# again LABEL N CMD...: CMD on virtual time N times; every log the same as
# the first; prints the slowest run and the median.  A log whose lines
# begin with a time of CLOCK_MONOTONIC (the example loop) is compared from
# its first time: virtual time starts where the system's clock is.
#
# A batch with a run that differs is shown, and run once more: now and
# then a batch of vtree (two processes, several threads) has one run where
# an event is stamped early or one deadline late, known faults of virtual
# time (tfd-preload(7), BUGS) that this does not hide: the diff is
# printed and the ok line says so.  Two such batches fail.
again() {
	label=$1 n=$2 batch=1
	shift 2
	while ! again_batch "$label" "$n" "$@"; do
		if [ $batch = 2 ]; then
			runs="a run differs from the first, in two batches"
			bad "$label: $runs"
			sed 's/^/    /' "$out/$label.diff"
			return 1
		fi
		batch=2
		cp "$out/$label.diff" "$out/$label.first.diff"
	done
	med=$(echo $times | tr ' ' '\n' | sort -n |
	    sed -n "$(((n + 1) / 2))p")
	max=$(echo $times | tr ' ' '\n' | sort -n | tail -n 1)
	runs="$label: the same log in $n runs of $n"
	if [ $batch = 1 ]; then
		ok "$runs (median $med ms, slowest $max ms)"
	else
		runs="$runs, second batch (the first had a run that differed;"
		ok "$runs the mover's known fault):"
		sed 's/^/    /' "$out/$label.first.diff"
	fi
}

# One batch of again: 0, or 1 with the difference in $out/LABEL.diff.
again_batch() {
	label=$1 n=$2
	shift 2
	i=0 times=
	while [ $i -lt "$n" ]; do
		i=$((i + 1))
		t0=$(date +%s%N)
		run "$label.$i" "$tool" exec --backend virtual -- "$@"
		times="$times $(ms_since)"
		[ "$label" = loop ] && from_first_time "$out/$label.$i"
		if ! cmp -s "$out/$label.1" "$out/$label.$i"; then
			{
				echo "run $i of $n differs from the first:"
				diff -u "$out/$label.1" "$out/$label.$i"
			} >"$out/$label.diff"
			return 1
		fi
	done
	return 0
}

# from_first_time FILE: each line's first field, a time of seconds and
# milliseconds, made the milliseconds since the first line's.
from_first_time() {
	awk 'NR == 1 { split($1, a, "."); b = a[1] * 1000 + a[2] }
	     { split($1, t, "."); $1 = t[1] * 1000 + t[2] - b; print }' \
	    "$1" >"$1.rel" && mv "$1.rel" "$1"
}

# virtual_prog NAME: built, and not under ThreadSanitizer, whose run-time
# reads files of its own meanwhile and holds back the signals virtual
# time sends; else skipped.
virtual_prog() {
	if [ ! -x "$dir/$1" ]; then
		skip "$1: not built"
		return 1
	fi
	case ${TFD_SAN:-} in
	*thread*)
		skip "$1: ThreadSanitizer"
		return 1 ;;
	esac
}

# wanted NAME: the test is selected and its program built (else a skip
# line says so); status 1 if it is not to run.
wanted() {
	selected "$1" || return 1
	[ -x "$dir/$1" ] && return 0
	skip "$1: not built"
	return 1
}

# The backends a program runs on under the drop-in: virtual time too,
# but not under ThreadSanitizer (virtual_prog, above).
dropin_backends() {
	case ${TFD_SAN:-} in
	*thread*) echo "engine kernel" ;;
	*) echo "engine kernel virtual" ;;
	esac
}
