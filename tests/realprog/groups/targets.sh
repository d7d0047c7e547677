# SPDX-License-Identifier: MIT
# What a new user tries first (issue 13's targets), sourced by run.sh: a
# shell's date and sleep, timeout(1), ping, Python's sleeps, a busy
# program at --virtual-rate, a C++ condition variable.

targets() {
	selected "targets date timeout ping python busy virtual-rate cvwait" ||
	    return 0
	t0=$(date +%s%N)
	run date "$tool" exec --backend virtual -- \
	    sh -c 'date +%s%N; sleep 100; date +%s%N'
	ms=$(ms_since)
	d=$(($(sed -n 2p "$out/date") - $(sed -n 1p "$out/date")))
	msg="sh -c 'date; sleep 100; date'"
	case $d in
	100000000000|1000000000??|99999999999?)
		ok "$msg: 100 s apart on one clock ($ms ms)" ;;
	*)
		bad "$msg: $d ns apart"
		sed 's/^/    /' "$out/date" ;;
	esac
	t0=$(date +%s%N)
	run timeout "$tool" exec --backend virtual -- timeout 3 sleep 10
	st=$? ms=$(ms_since)
	if [ $st = 124 ]; then
		ok "timeout 3 sleep 10: exit 124 ($ms ms)"
	else
		bad "timeout 3 sleep 10: exit $st, want 124"
	fi
	targets_ping
	targets_python
	targets_busy
	if [ -x "$dir/cvwait" ]; then
		run cvwait "$tool" exec --backend virtual -- "$dir/cvwait"
		msg="condition_variable::wait_until wakes at the sleeper's time"
		has "$out/cvwait" "$msg" '7.000000 s exactly'
	else
		skip "cvwait: no C++ compiler"
	fi
}

targets_ping() {
	if ! command -v ping >/dev/null 2>&1 ||
	    ! ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1; then
		skip "ping: not installed or not allowed here"
		return
	fi
	t0=$(date +%s%N)
	run ping "$tool" exec --backend virtual -- \
	    ping -c 3 -i 1 127.0.0.1
	ms=$(ms_since)
	has "$out/ping" "ping -c 3 -i 1: 3 received ($ms ms)" ' 3 received'
}

targets_python() {
	if ! command -v python3 >/dev/null 2>&1; then
		skip "python3: not installed"
		return
	fi
	t0=$(date +%s%N)
	run python "$tool" exec --backend virtual -- python3 \
	    "$src/vpython.py"
	ms=$(ms_since)
	msg="python3 time.sleep, threading.Timer, asyncio.sleep"
	has "$out/python" "$msg exact ($ms ms)" 'exact to 1 ms$' 3
}

# A busy program (issue 13 item 4): it polls a 5 s timer with a zero
# timeout, never blocking; time flows 100 times the real rate.
targets_busy() {
	t0=$(date +%s%N)
	run busy "$tool" exec --backend virtual --virtual-rate 100 -- \
	    "$dir/vbusy" 5000
	ms=$(ms_since)
	msg="--virtual-rate 100: a busy program's"
	grep -q '^fired after some polls, not early$' "$out/busy" &&
	    [ "$ms" -lt 4000 ]
	verdict $? "$msg 5 s timer in $ms ms" "$msg timer ($ms ms)" \
	    "$out/busy"
}
