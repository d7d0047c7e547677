# SPDX-License-Identifier: MIT
# stress-ng's timerfd stressor (issue 12), when it is installed, sourced
# by run.sh: as it is and under each backend.  What compares without
# timing: the exit status, no line reporting a failure or an error, the
# run completed, and bogo ops counted (not on virtual time, where it runs
# in the busy mode: tfd-preload(7), VIRTUAL TIME).  Speed is never judged
# here (the figures are in tfd-preload(7)).  Then the descriptor limit:
# with `ulimit -n 64`, the most timers it runs with natively, and the same
# number under the engine.

stressng_facts() { # FILE STATUS
	ops=$(awk '/metrc: .* timerfd / { print $5 }' "$1")
	echo "exit $2," \
	    "$(grep -c -E '^stress-ng: (fail|error):' "$1") failure line(s)," \
	    "$(grep -q 'successful run completed' "$1" ||
	    echo 'not ')completed" \
	    "$([ "${ops:-0}" -gt 0 ] 2>/dev/null && echo '(bogo ops)' ||
	    echo '(no bogo ops)')"
}

stressng_run() { # LABEL LIMIT CMD...: the facts into $out/LABEL.facts
	label=$1 lim=$2
	shift 2
	(ulimit -n "$lim" && run "$label" "$@" --timeout 1 --metrics-brief \
	    --temp-path "$out")
	stressng_facts "$out/$label" $? >"$out/$label.facts"
}

stressng() {
	selected stress-ng || return 0
	if ! command -v stress-ng >/dev/null 2>&1; then
		skip "stress-ng: not installed (apt-get install stress-ng)"
		return
	fi
	if [ -n "${TFD_SAN:-}" ]; then
		# A sanitized preload needs its runtime first; stress-ng, not
		# built with it, crashes at start (a call through an interceptor
		# not yet set up).
		skip "stress-ng: a sanitizer build ($TFD_SAN)"
		return
	fi
	set -- stress-ng --timerfd 2 --timerfd-fds 64 --timerfd-rand
	stressng_run stressng.linux 1024 "$@"
	for b in engine kernel virtual; do
		stressng_backend "$b" "$@"
	done
	stressng_limit
}

# stressng_backend B CMD...: the stressor under backend B, the facts of
# its run as natively.
stressng_backend() {
	b=$1
	shift
	# The stressor polls with a zero timeout and never waits: on virtual
	# time it runs in the busy mode, time flowing at the real rate
	# between jumps (its one second must come).
	rate=
	[ "$b" = virtual ] && rate="--virtual-rate 1"
	# shellcheck disable=SC2086
	stressng_run "stressng.$b" 1024 "$tool" exec --backend "$b" \
	    $rate -- "$@"
	f="$out/stressng.$b.facts" want="$out/stressng.linux.facts"
	if [ "$b" = virtual ]; then
		sed -i 's/ (.*)$//' "$f"
		sed 's/ (.*)$//' "$want" >"$out/stressng.want"
		want="$out/stressng.want"
	fi
	if cmp -s "$want" "$f"; then
		ok "stress-ng --timerfd: $b: $(cat "$f")"
	else
		msg="stress-ng --timerfd: $b: $(cat "$f")"
		bad "$msg, natively $(cat "$want")"
		sed 's/^/    /' "$out/stressng.$b"
	fi
}

# With `ulimit -n 64`: the most timers the stressor runs with natively,
# and the same number under the engine.
stressng_limit() {
	n=64
	while [ $n -gt 0 ]; do
		stressng_run stressng.lim 64 stress-ng --timerfd 1 \
		    --timerfd-fds $n
		grep -q '^exit 0,' "$out/stressng.lim.facts" && break
		n=$((n - 1))
	done
	if [ $n = 0 ]; then
		skip "stress-ng with ulimit -n 64: it does not run natively"
		return
	fi
	stressng_run stressng.lim.engine 64 "$tool" exec -- stress-ng \
	    --timerfd 1 --timerfd-fds $n
	msg="stress-ng with ulimit -n 64: the most timers it runs with"
	if cmp -s "$out/stressng.lim.facts" \
	    "$out/stressng.lim.engine.facts"; then
		ok "$msg natively ($n), on the engine too"
	else
		bad "stress-ng --timerfd-fds $n with ulimit -n 64: $(cat \
		    "$out/stressng.lim.engine.facts"), natively $(cat \
		    "$out/stressng.lim.facts")"
		sed 's/^/    /' "$out/stressng.lim.engine"
	fi
}
