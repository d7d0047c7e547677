# SPDX-License-Identifier: MIT
# The conformance suite through the preload, sourced by run.sh.
#
# conform B: the conformance suite's kernel column run through the preload
# on backend B.  That column calls glibc's timerfd_create, timerfd_settime,
# timerfd_gettime, read, write, poll, select, epoll, close..., so every
# call lands on a preload timer.  The rows that may fail are the engine's
# departures the preload keeps (tfd-preload(7) DIFFERENCES): the alarm
# clocks, fdinfo, TFD_IOC_SET_TICKS; on virtual also a signal during a
# wait on an armed timer.
#
# conform engine post: the same with TFD_DELIVERY=post (the service thread
# posts every expiration: the waits that deliver, tfd(7), do not).
conform() {
	b=$1 keep='alarm|fdinfo|set_ticks'
	selected conform || return 0
	[ "$b" = virtual ] && keep="$keep|eintr"
	if [ "${2:-}" = post ]; then
		b=$b.post
		run "conform.$b" env TFD_DELIVERY=post "$tool" exec --backend \
		    engine -- "$tool" conform --backend kernel
	else
		run "conform.$b" "$tool" exec --backend "$b" -- "$tool" \
		    conform --backend kernel
	fi
	if ! grep -q '^[0-9]* cases: ' "$out/conform.$b"; then
		conform_none "$out/conform.$b"
		return
	fi
	grep -E '^[a-z0-9_]+\.[a-z0-9_]+ +[A-Za-z]+ +FAIL' "$out/conform.$b" |
	    awk '{ print $1 }' >"$out/conform.$b.failed"
	if grep -v -E -- "$keep" "$out/conform.$b.failed" >"$out/conform.$b.bad"
	then
		bad "conformance suite through the preload ($b): rows failed"
		grep -A3 -F -f "$out/conform.$b.bad" "$out/conform.$b" |
		    sed 's/^/    /'
	else
		ok "conformance suite through the preload ($b): $(tail -n 1 \
		    "$out/conform.$b")"
	fi
}

# conform_none FILE: a run that printed no summary; skipped if this tfd has
# no conform command.
conform_none() {
	if grep -q "unknown command 'conform'" "$1"; then
		skip "conformance through the preload: no tfd conform"
	else
		bad "conformance suite through the preload ($b): no summary"
		sed 's/^/    /' "$1"
	fi
}
