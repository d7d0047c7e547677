# SPDX-License-Identifier: MIT
# Determinism and a tree of processes (issue 13 items 1, 2, 6), sourced by
# run.sh: the example loop for an hour; libwayland-server's and sd-event's
# loops, also with a helper thread in nanosleep, 20 runs each, the same
# events as on Linux; both at once as a tree of two processes under one
# clock; vtree, a server and a client over a socketpair with timers and
# threads.

domain() {
	selected "domain loop wl_timers sd_timers tree vtree" || return 0
	again loop 20 "$TFD_EXAMPLES/eventloop-timerfd" 3600 </dev/null
	for p in wl_timers sd_timers; do
		if [ ! -x "$dir/$p" ]; then
			skip "$p on virtual time: not built (see above)"
			continue
		fi
		run "$p.native" "$dir/$p"
		for m in "" helper; do
			if again "$p${m:+.$m}" 20 "$dir/$p" $m &&
			    ! cmp -s "$out/$p.native" "$out/$p${m:+.$m}.1"; then
				msg="on virtual time not as on Linux"
				bad "$p${m:+ $m}: $msg"
				show_diff "$out/$p.native" "$out/$p${m:+.$m}.1"
			fi
		done
	done
	if [ -x "$dir/wl_timers" ] && [ -x "$dir/sd_timers" ]; then
		domain_tree
	fi
	domain_vtree
}

# wl_timers and sd_timers at once, a tree of two processes.
domain_tree() {
	run tree "$tool" exec --backend virtual -- sh -c \
	    "'$dir/wl_timers' helper >'$out/tree.wl' &
	    '$dir/sd_timers' helper >'$out/tree.sd'; wait"
	msg="wl_timers and sd_timers as one tree of processes"
	if cmp -s "$out/wl_timers.native" "$out/tree.wl" &&
	    cmp -s "$out/sd_timers.native" "$out/tree.sd"; then
		ok "$msg: as on Linux"
	else
		bad "$msg"
		show_diff "$out/wl_timers.native" "$out/tree.wl"
		show_diff "$out/sd_timers.native" "$out/tree.sd"
	fi
}

# vtree on virtual time, 20 runs as on Linux; then without tfd exec.
domain_vtree() {
	# The server prints when its client exits.  LeakSanitizer checks a
	# process at exit from a tracer it starts with clone(2), not fork: a
	# process the domain does not see, while the client waits for it
	# blocked outside our calls (tfd-preload(7), Differences).
	ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
	run vtree.native "$dir/vtree" 2
	if again vtree 20 "$dir/vtree" &&
	    cut -d' ' -f2- "$out/vtree.native" >"$out/vtree.native.events" &&
	    cut -d' ' -f2- "$out/vtree.1" >"$out/vtree.events" &&
	    cmp -s "$out/vtree.native.events" "$out/vtree.events"; then
		ok "vtree: two processes, the same events as on Linux"
	else
		bad "vtree: two processes on virtual time not as on Linux"
		show_diff "$out/vtree.native.events" "$out/vtree.events"
	fi
	domain_fallback
	ASAN_OPTIONS=${ASAN_OPTIONS%:detect_leaks=0}
}

# Without tfd exec (TFD_DOMAIN cleared): the process makes a domain of its
# own, its mover a thread of the library's (it once took that thread for
# one of the program's and never moved time).  Not under a sanitizer: its
# fork in a process with another thread (the mover) can leave the child's
# allocator locked (AddressSanitizer's allocator is not locked around fork
# in this GCC's runtime).
domain_fallback() {
	if [ -n "${TFD_SAN:-}" ]; then
		msg="under a sanitizer (fork of a threaded process)"
		skip "vtree without tfd exec: $msg"
		return
	fi
	run fallback "$tool" exec --backend virtual -- env -u TFD_DOMAIN \
	    "$dir/vtree"
	msg="vtree without tfd exec"
	if cut -d' ' -f2- "$out/fallback" | cmp -s - "$out/vtree.events"; then
		ok "$msg: a domain of its own, the same events"
	else
		bad "$msg (a domain of its own)"
		sed 's/^/    /' "$out/fallback"
	fi
}
