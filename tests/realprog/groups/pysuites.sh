# SPDX-License-Identifier: MIT
# Python's own suites (issue 21), sourced by run.sh: sched, queue,
# threading and four of asyncio's (Debian's libpython3.X-testsuite),
# natively and on virtual time, one suite at a time.  Every test that
# passes natively passes on virtual time (one that fails natively may fail
# there too: this Python's test_threading fails
# test_import_from_another_thread outside tfd), and the virtual run exits
# 0 or as the native one did (not killed by the timeout); the results are
# read from regrtest's JUnit file, the wall times go in a note.  Not under
# a sanitizer: Python with its run-time preloaded takes seconds to start.

pysuites() {
	selected pysuites || return 0
	if ! py=$(command -v python3); then
		skip "Python's suites: no python3"
		return
	fi
	suites="test_sched test_queue test_threading test_asyncio.test_waitfor"
	suites="$suites test_asyncio.test_locks test_asyncio.test_timeouts"
	suites="$suites test_asyncio.test_queues"
	if ! "$py" -c 'import test.test_sched' 2>/dev/null; then
		v=$("$py" -c 'import sys; print(sys.version_info[1])')
		msg="(apt-get install libpython3.$v-testsuite)"
		skip "Python's suites: not installed $msg"
		return
	fi
	if [ -n "${TFD_SAN:-}" ]; then
		skip "Python's suites: a sanitizer build ($TFD_SAN)"
		return
	fi
	times=
	for t in $suites; do
		if ! "$py" -c "import test.$t" 2>/dev/null; then
			skip "Python's $t: not in this Python's suite"
			continue
		fi
		for b in linux virtual; do
			pysuite_run "$t" "$b"
		done
		times="$times $t ${ms_linux}/${ms_virtual}"
		pysuite_verdict "$t"
	done
	echo "note Python's suites, ms natively/on virtual time:$times"
}

# pysuite_run T B: suite T natively (B linux) or on virtual time (B
# virtual): its exit status in rc_B, its wall time in ms_B, and "STATUS
# NAME" a test, sorted, in $out/py.T.B.res (STATUS: ok, failure, error,
# skipped).
pysuite_run() {
	t=$1 b=$2
	rm -f "$out/py.$t.$b.xml"
	set -- "$py" -m test --junit-xml "$out/py.$t.$b.xml" "$t"
	[ "$b" = linux ] || set -- "$tool" exec --backend virtual -- "$@"
	t0=$(date +%s%N)
	(cd "$out" && timeout -k 5 300 "$@") >"$out/py.$t.$b" 2>&1
	eval "rc_$b=$? ms_$b=\$(ms_since)"
	"$py" -c 'import sys, xml.etree.ElementTree as E
for c in E.parse(sys.argv[1]).getroot().iter("testcase"):
    s = [k.tag for k in c if k.tag in ("failure", "error", "skipped")]
    print(s[0] if s else
          "skipped" if c.get("status") == "skipped" else "ok",
          c.get("name"))' \
	    "$out/py.$t.$b.xml" 2>/dev/null | sort >"$out/py.$t.$b.res"
}

# pysuite_verdict T: the tests of suite T that pass natively pass on
# virtual time, and the run there exits 0 or as natively.
pysuite_verdict() {
	grep '^ok ' "$out/py.$1.linux.res" >"$out/py.$1.want"
	grep '^ok ' "$out/py.$1.virtual.res" >"$out/py.$1.got"
	n=$(wc -l <"$out/py.$1.want")
	lost=$(comm -23 "$out/py.$1.want" "$out/py.$1.got")
	if [ "$n" -gt 0 ] && [ -z "$lost" ] &&
	    { [ "$rc_virtual" = 0 ] || [ "$rc_virtual" = "$rc_linux" ]; }
	then
		msg="the $n tests that pass natively pass on virtual time"
		ok "Python's $1: $msg ($ms_virtual ms, natively $ms_linux ms)"
	else
		msg="exit $rc_virtual (natively $rc_linux), $n pass natively"
		bad "Python's $1 on virtual time: $msg"
		[ -z "$lost" ] ||
		    printf '%s\n' "$lost" |
		    sed 's/^/    passes natively only: /'
		tail -5 "$out/py.$1.virtual" | sed 's/^/    /'
	fi
}
