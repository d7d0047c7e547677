#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the host cases (tests/host/*.c): each case natively (glibc's
# timerfd_*, that is Linux), then through tfd: libtfd.a on the engine's
# main path and on its fallback (TFD_ENGINE_FILES=direct), and
# libtfd-preload.so on the engine and on virtual time.  Every run must
# print what the native one printed and exit as it did.  One line per
# case, then "host: N passed, N failed, N skipped"; exit status 1 if any
# failed.  TFD_TESTS (make check TESTS=...) picks cases by name
# (tests/select.sh).
#
#   TFD_TOOL=build/tfd sh tests/host/run.sh build/host [CASE...]
set -u
dir=$(cd "$1" && pwd)
shift
tool=${TFD_TOOL:?TFD_TOOL names the tfd program}
case $tool in /*) ;; *) tool=$(pwd)/$tool ;; esac
out=$(mktemp -d "${TMPDIR:-/tmp}/tfd-host.XXXXXX")
trap 'rm -rf "$out"' EXIT
pass=0 fail=0 skipped=0
. "$(dirname "$0")/../select.sh"
ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
TSAN_OPTIONS="report_signal_unsafe=0 die_after_fork=0${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export ASAN_OPTIONS TSAN_OPTIONS

# one CASE MODE CMD...: the output and exit status of one run.
one() {
	c=$1 m=$2 lsan=
	shift 2
	# A plugin's library, dlopen()ed and pinned, built with the lock
	# checks of the sanitizer builds (src/lockorder.h): LeakSanitizer's
	# own tracer dies at exit ("Tracer caught signal 11"), after the
	# case has printed all it prints; not without the checks.  Its leak
	# check is left out there.
	case $c in plugin_*) lsan=:detect_leaks=0 ;; esac
	ASAN_OPTIONS="$ASAN_OPTIONS$lsan" timeout -k 5 20 "$@" "$c" \
	    >"$out/$c.$m" 2>"$out/$c.$m.err" </dev/null
	echo "exit $?" >>"$out/$c.$m"
}

# check CASE MODE CMD...: one run, compared with the native one; a run
# that differs is tried once more (a loaded machine may delay an event
# past another on both sides).
check() {
	c=$1 m=$2
	for try in 1 2; do
		one "$@"
		cmp -s "$out/$c.linux" "$out/$c.$m" && return 0
		[ $try = 2 ] || one "$c" linux "$dir/host"
	done
	bad="$bad $m"
	{
		echo "    --- $m"
		diff "$out/$c.linux" "$out/$c.$m" | sed 's/^/    /'
		head -n 5 "$out/$c.$m.err" | sed 's/^/    err: /'
	} >>"$out/$c.report"
	return 1
}

"$dir/host" --list >"$out/list" || exit 1
while read -r c flags; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $c "*) ;; *) continue ;; esac
	fi
	selected "$c" || continue
	case $flags in *notsan*)
		skipped=$((skipped + 1))
		echo "skip $c: not in a ThreadSanitizer build (see the case)"
		continue ;;
	esac
	bad= modes=
	: >"$out/$c.report"
	one "$c" linux "$dir/host"
	case $flags in *nolib*) ;; *)
		modes="$modes lib"
		check "$c" lib env TFD_BACKEND=engine "$dir/host-lib"
		check "$c" lib.direct env TFD_BACKEND=engine \
		    TFD_ENGINE_FILES=direct "$dir/host-lib" ;;
	esac
	case $flags in *nopreload*) ;; *)
		modes="$modes preload"
		check "$c" preload "$tool" exec --backend engine -- "$dir/host"
		case $flags in *novirtual*) ;; *)
			modes="$modes virtual"
			check "$c" virtual "$tool" exec --backend virtual -- \
			    "$dir/host" ;;
		esac ;;
	esac
	if [ -z "$bad" ]; then
		pass=$((pass + 1))
		echo "ok   $c:$modes same as Linux ($(tail -n 1 "$out/$c.linux"))"
	else
		fail=$((fail + 1))
		echo "FAIL $c: differs from Linux on$bad"
		echo "    --- linux"
		sed 's/^/    /' "$out/$c.linux"
		cat "$out/$c.report"
	fi
done <"$out/list"
echo "host: $pass passed, $fail failed, $skipped skipped"
[ $fail = 0 ]
