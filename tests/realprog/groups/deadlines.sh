# SPDX-License-Identifier: MIT
# When time moves (issue 21), sourced by run.sh: loops that wait until
# they are past their deadline, natively (a tenth of the time) and on
# virtual time 1 ns past it exactly, 5 runs giving one output; alarm()
# against the process's own sleep (C, perl); timer slack; syscall(); Java;
# busy programs; a tree whose mover is killed goes on in real time; the
# clocks' start (--virtual-start, and a whole second by default).

deadlines() {
	names="deadlines vdeadline vslack alarm busy preempt killed"
	selected "$names virtual-start java vsyscall" || return 0
	if [ -x "$dir/vdeadline" ]; then
		deadlines_loops
	else
		skip "vdeadline: not built (see above)"
	fi
	if_installed perl "perl alarm" deadlines_perl
	if_installed python3 "python3 deadlines" deadlines_python
	if_installed python3 "timer slack" deadlines_slack
	if [ -x "$dir/vsyscall" ]; then
		deadlines_vsyscall
	else
		skip "vsyscall: not built (see above)"
	fi
	deadlines_java
	deadlines_busy
	deadlines_killed
	deadlines_start
}

# vdeadline's loops that wait until past their deadline, and alarm().
deadlines_loops() {
	for m in cond poll sleep spin; do
		base=$out/vdeadline.$m
		run "vdeadline.$m.linux" "$dir/vdeadline" $m 200
		msg="vdeadline $m: a loop"
		if again "vdeadline.$m" 5 env TFD_EXACT=1 \
		    "$dir/vdeadline" $m 2000 &&
		    cmp -s "$base.linux" "$base.1"; then
			msg="$msg waits until past its deadline, as on Linux"
			ok "$msg, 1 ns past it"
		else
			bad "$msg that waits until past its deadline"
			show_diff "$base.linux" "$base.1"
		fi
	done
	run vdeadline.alarm.linux "$dir/vdeadline" alarm 1
	if again vdeadline.alarm 5 env TFD_EXACT=1 "$dir/vdeadline" alarm 3 &&
	    sed 's/(1)/(3)/' "$out/vdeadline.alarm.linux" |
	    cmp -s - "$out/vdeadline.alarm.1"; then
		msg="alarm(3) ends the process's sleep(100) at 3 s, 97 left,"
		ok "$msg as on Linux"
	else
		bad "alarm(3) against the process's own sleep(100)"
		show_diff "$out/vdeadline.alarm.linux" "$out/vdeadline.alarm.1"
	fi
}

deadlines_perl() {
	# perl's sleep returns the seconds slept.
	if again perl.alarm 5 perl -e '$SIG{ALRM} = sub { print "alarm\n" };
	    alarm 3; my $s = sleep 100; print "$s\n"' &&
	    [ "$(tr '\n' ' ' <"$out/perl.alarm.1")" = "alarm 3 " ]; then
		ok "perl: alarm 3 ends sleep 100 at 3 s"
	else
		bad "perl: alarm 3 against sleep 100"
		sed 's/^/    /' "$out/perl.alarm.1"
	fi
}

deadlines_python() {
	run vdeadline.py.linux python3 "$src/vdeadline.py" 20
	if again vdeadline.py 5 env TFD_EXACT=1 python3 "$src/vdeadline.py" &&
	    cmp -s "$out/vdeadline.py.linux" "$out/vdeadline.py.1"; then
		msg="python3 subprocess.run(timeout=), Future.result(timeout=),"
		msg="$msg as_completed(timeout=), a process pool's"
		ok "$msg result(timeout=): at their deadline, as on Linux"
	else
		bad "python3 deadlines: subprocess, concurrent.futures"
		show_diff "$out/vdeadline.py.linux" "$out/vdeadline.py.1"
	fi
}

# Timer slack (tfd-preload(7), When time moves): sleeps due within 50 us
# of the earliest end together, at the latest deadline; a sleep alone, and
# an interval timer, exactly; no sleep is taken past the timer.  On
# virtual time only (natively, each is late by whatever the machine
# gives), 5 runs the same.
deadlines_slack() {
	printf '%s\n' \
	    "sleep 1 s          ended at 1000030 us" \
	    "sleep 1.00003 s    ended at 1000030 us" \
	    "sleep 2 s, alone   ended at 2000000 us" \
	    "sleep 2.99997 s    ended at 2999970 us" \
	    "SIGALRM at 3 s     ended at 3000000 us" \
	    "sleep 3.00002 s    ended at 3000020 us" \
	    "sleep 4 s          ended at 4000000 us" \
	    "sleep 4.0001 s     ended at 4000100 us" >"$out/vslack.want"
	if again vslack 5 python3 "$src/vslack.py" &&
	    cmp -s "$out/vslack.want" "$out/vslack.1"; then
		msg="timer slack: sleeps 30 us apart end together at the later"
		ok "$msg deadline; one alone and a timer exactly"
	else
		bad "timer slack on virtual time"
		show_diff "$out/vslack.want" "$out/vslack.1"
	fi
	# --virtual-slack 0: each at its own deadline; a bad value is one
	# line and exit 125.
	sed 's/1000030 us/1000000 us/' "$out/vslack.want" |
	    awk 'NR == 2 { sub(/1000000 us/, "1000030 us") } 1' \
	    >"$out/vslack0.want"
	run vslack0 "$tool" exec --backend virtual --virtual-slack 0 \
	    -- python3 "$src/vslack.py"
	run vslack.bad "$tool" exec --backend virtual \
	    --virtual-slack 1ms -- true
	st=$?
	if cmp -s "$out/vslack0.want" "$out/vslack0" && [ $st = 125 ] &&
	    [ "$(wc -l <"$out/vslack.bad")" = 1 ]; then
		msg="--virtual-slack 0: each sleep at its own deadline;"
		ok "$msg --virtual-slack 1ms: one line, exit 125"
	else
		bad "--virtual-slack 0, or a bad value (exit $st)"
		show_diff "$out/vslack0.want" "$out/vslack0"
		sed 's/^/    /' "$out/vslack.bad"
	fi
}

# Clock reads, sleeps and futex waits through syscall() (GLib's
# conditions, libstdc++'s futures): they slept in real time.
deadlines_vsyscall() {
	run vsyscall.linux "$dir/vsyscall" 10
	if again vsyscall 5 env TFD_EXACT=1 "$dir/vsyscall" &&
	    cmp -s "$out/vsyscall.linux" "$out/vsyscall.1" &&
	    grep -q '^all ok$' "$out/vsyscall.1"; then
		msg="syscall(): clock_gettime, nanosleep, clock_nanosleep,"
		ok "$msg futex waits at their deadlines, as on Linux"
	else
		msg="syscall(): clocks, sleeps and futex waits"
		bad "$msg on virtual time"
		show_diff "$out/vsyscall.linux" "$out/vsyscall.1"
	fi
}

# Java: Thread.sleep, a scheduled executor at a fixed rate, Future.get,
# Object.wait and parkNanos with timeouts; natively 5 times faster, on
# virtual time exact, 5 runs the same.  The JVM's own threads block
# outside our waits and its own ticks (every 50 ms) are moves of the
# clock: this is the mover's speed with them.  Facts, not exact times: a
# JVM thread that computes for more than 20 ms at a stretch (its
# compilers, its interpreter loading the classes of an exception) lets
# time flow (tfd-preload(7)), which a loaded machine made a few
# microseconds late.
deadlines_java() {
	if [ -n "${TFD_SAN:-}" ]; then
		msg="the JVM with a sanitizer's runtime preloaded"
		skip "java: a sanitizer build ($TFD_SAN): $msg"
		return
	fi
	if ! command -v javac >/dev/null 2>&1 ||
	    ! command -v java >/dev/null 2>&1; then
		msg="(apt-get install default-jdk-headless)"
		skip "java: javac or java not installed $msg"
		return
	fi
	if ! javac -d "$out" "$src/VTimers.java" >"$out/javac.err" 2>&1; then
		bad "java: javac VTimers.java"
		sed 's/^/    /' "$out/javac.err"
		return
	fi
	run vtimers.java.linux java -cp "$out" VTimers 5
	# 13.7 s of timers: on virtual time well under 8 s.
	if again vtimers.java 5 java -cp "$out" VTimers &&
	    cmp -s "$out/vtimers.java.linux" "$out/vtimers.java.1" &&
	    grep -q '^all ok$' "$out/vtimers.java.1" &&
	    [ "$med" -lt 8000 ]; then
		msg="java: Thread.sleep, ScheduledExecutorService, Future.get,"
		ok "$msg Object.wait, parkNanos at their deadlines, as on Linux"
	else
		bad "java: timers on virtual time (median $med ms)"
		show_diff "$out/vtimers.java.linux" "$out/vtimers.java.1"
	fi
}

# Busy programs: a busy loop ended by alarm(); a busy Python thread
# preempted by another that waits on time (CPython's GIL).  Time flows at
# the real rate while they run: facts, not exact times.
deadlines_busy() {
	if [ -x "$dir/vdeadline" ]; then
		run vbusy.alarm.linux "$dir/vdeadline" busy 1
		t0=$(date +%s%N)
		run vbusy.alarm "$tool" exec --backend virtual -- \
		    "$dir/vdeadline" busy 1
		ms=$(ms_since)
		matches "$out/vbusy.alarm.linux" "$out/vbusy.alarm" \
		    "alarm(1) ends a busy loop, as on Linux ($ms ms)" \
		    "alarm(1) and a busy loop"
	fi
	command -v python3 >/dev/null 2>&1 || return 0
	run vpreempt.linux python3 "$src/vpreempt.py"
	t0=$(date +%s%N)
	run vpreempt "$tool" exec --backend virtual -- python3 \
	    "$src/vpreempt.py"
	ms=$(ms_since)
	msg="python3: a busy thread"
	if cmp -s "$out/vpreempt.linux" "$out/vpreempt" &&
	    grep -q 'True$' "$out/vpreempt"; then
		msg="$msg is preempted (the GIL's timed wait), as on Linux"
		ok "$msg ($ms ms)"
	else
		bad "$msg and the GIL's timed wait"
		show_diff "$out/vpreempt.linux" "$out/vpreempt"
	fi
}

# A tree whose mover is killed: a busy shell holds time while its
# background `sleep 2` waits; tfd exec gets SIGKILL; the sleep must end
# about 2 s later, in real time (it slept for ever).
deadlines_killed() {
	rm -f "$out/killed.pid" "$out/killed.done"
	"$tool" exec --backend virtual -- sh -c "echo \$\$ >'$out/killed.pid'
	    (sleep 2; echo done >'$out/killed.done') & while :; do :; done" \
	    >/dev/null 2>&1 &
	mover=$! n=0
	while [ ! -s "$out/killed.pid" ] && [ $n -lt 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	sleep 0.2 # the background sleep waits
	kill -KILL $mover
	wait $mover 2>/dev/null
	t0=$(date +%s%N) n=0
	while [ ! -e "$out/killed.done" ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	ms=$(ms_since)
	[ -s "$out/killed.pid" ] && kill "$(cat "$out/killed.pid")" 2>/dev/null
	msg="a tree whose tfd exec is killed: its sleep 2"
	if [ -e "$out/killed.done" ] && [ "$ms" -ge 1000 ]; then
		ok "$msg ends in real time ($ms ms after)"
	else
		msg="$msg (done: $(cat "$out/killed.done" 2>/dev/null),"
		bad "$msg $ms ms)"
	fi
}

# The clocks' start.
deadlines_start() {
	i=0 same=1
	while [ $i -lt 5 ]; do
		i=$((i + 1))
		run vstart.$i "$tool" exec --backend virtual \
		    --virtual-start @1700000000 -- \
		    sh -c 'date -u +%s.%N; sleep 61.25; date -u "+%F %T.%N"'
		printf '1700000000.000000000\n2023-11-14 22:14:21.250000000\n' |
		    cmp -s - "$out/vstart.$i" || same=0
	done
	run vstart.date "$tool" exec --backend virtual \
	    --virtual-start '2024-02-29 12:00:00' -- date -u '+%F %T.%N'
	run vstart.whole "$tool" exec --backend virtual -- \
	    sh -c 'date +%N; cat /proc/uptime >/dev/null; sleep 0.25; date +%N'
	if [ $same = 1 ] &&
	    [ "$(cat "$out/vstart.date")" = "2024-02-29 12:00:00.000000000" ] &&
	    [ "$(tr '\n' ' ' <"$out/vstart.whole")" = \
	    "000000000 250000000 " ]; then
		msg="--virtual-start @SECONDS and a date: the same times in 5"
		ok "$msg runs; a whole second by default"
	else
		bad "--virtual-start, and the default start"
		for f in vstart.1 vstart.date vstart.whole; do
			sed "s/^/    $f: /" "$out/$f"
		done
	fi
	run vstart.bad "$tool" exec --backend virtual \
	    --virtual-start 2023-02-29 -- true
	st=$?
	if [ $st = 125 ] && [ "$(wc -l <"$out/vstart.bad")" = 1 ]; then
		ok "--virtual-start 2023-02-29: one line, exit 125"
	else
		bad "--virtual-start 2023-02-29: exit $st"
		sed 's/^/    /' "$out/vstart.bad"
	fi
}
