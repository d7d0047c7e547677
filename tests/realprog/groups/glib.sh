# SPDX-License-Identifier: MIT
# A second real suite (issue 21), sourced by run.sh: GLib's own installed
# tests of its timeouts, timers, conditions, queues, tasks, cancellables
# and child processes (Debian's libglib2.0-tests), natively and on
# virtual time: the same tests pass.  Natively they run at once, in the
# background.

glib() {
	selected glib || return 0
	g=/usr/libexec/installed-tests/glib
	tests="timeout timer cond asyncqueue task cancellable"
	tests="$tests spawn-multithreaded contexts sleepy-stream"
	if [ ! -x "$g/timeout" ]; then
		msg="not installed (apt-get install libglib2.0-tests)"
		skip "GLib's installed tests: $msg"
		return
	fi
	if [ -n "${TFD_SAN:-}" ]; then
		skip "GLib's installed tests: a sanitizer build ($TFD_SAN)"
		return
	fi
	have=
	for t in $tests; do
		if [ -x "$g/$t" ]; then
			have="$have $t"
		else
			msg="not in this version of libglib2.0-tests"
			skip "GLib's $t: $msg"
		fi
	done
	glib_run
	for t in $have; do
		glib_verdict "$t"
	done
	msg="note GLib's tests: natively $native ms (run at once),"
	echo "$msg on virtual time $virtual ms (one after another)"
}

# The tests in $have natively, at once, then on virtual time, one after
# another: their output and exit status in $out/glib.T.linux and
# $out/glib.T; the wall times in native and virtual.
glib_run() {
	t0=$(date +%s%N)
	for t in $have; do
		(cd "$g" && timeout -k 5 120 "./$t" >"$out/glib.$t.linux" 2>&1
		 echo "exit $?" >>"$out/glib.$t.linux") &
	done
	wait
	native=$(ms_since)
	t0=$(date +%s%N)
	for t in $have; do
		(cd "$g" && timeout -k 5 120 "$tool" exec --backend virtual -- \
		    "./$t" >"$out/glib.$t" 2>&1
		 echo "exit $?" >>"$out/glib.$t")
	done
	virtual=$(ms_since)
}

# glib_verdict T: the test program T's results (TAP) on virtual time as
# natively, and its exit status 0.
glib_verdict() {
	for f in "$out/glib.$1.linux" "$out/glib.$1"; do
		grep -E '^(ok|not ok|1\.\.|exit )' "$f" |
		    sed 's/ # .*//' >"$f.tap"
	done
	if cmp -s "$out/glib.$1.linux.tap" "$out/glib.$1.tap" &&
	    grep -q '^exit 0$' "$out/glib.$1.tap"; then
		passed=$(grep -c '^ok' "$out/glib.$1.tap")
		ok "GLib's $1: $passed tests pass, as natively"
	else
		bad "GLib's $1 on virtual time"
		show_diff "$out/glib.$1.linux.tap" "$out/glib.$1.tap"
	fi
}
