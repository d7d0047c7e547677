# SPDX-License-Identifier: MIT
# Input from outside the tree (issue 21), sourced by run.sh: a wait that a
# process outside the tree can end (a pipe the tree inherited, a FIFO
# opened by its name, a socket with a peer outside) is not jumped over:
# time flows at the real rate while the tree waits on it.  A tree that
# waits only on itself still jumps.

outside() {
	selected "outside" || return 0
	outside_read
	# The same through epoll (Python's selectors), and poll.
	if_installed python3 \
	    "python3 epoll and poll on a pipe from outside" outside_python
	if_installed python3 \
	    "python3 poll of an epoll set, and a set in a set" outside_nested
	outside_fifo
	# Sockets the tree makes (vsockets.py): a client of a server outside
	# (UNIX and TCP), a server whose client is outside, answered after
	# 1 s: the answer comes, as on Linux; one 3 s late times out at 1 s.
	# Two processes of the tree on a socket pair and on TCP still jump.
	if_installed python3 "sockets with a peer outside the tree" sockets
	outside_pure
}

# `read -t` on a pipe written after 1 s gets the line, as on Linux; with a
# writer later than the timeout it times out at 1 s, exactly on virtual
# time.  ms: the real time until the tree ended (its writer keeps the
# pipeline going).
outside_read() {
	rd='s=$EPOCHREALTIME; read -t $0 x; r=$?; e=$EPOCHREALTIME
	    us=$(( ${e/./} - ${s/./} ))
	    echo "read -t $0: status $r, line [$x]"
	    [ $r = 0 ] || echo "timed out after $((us / 1000000)) s"
	    [ $us = ${0}000000 ] && echo "exactly $0 s"; :'
	for t in 5:1 1:2; do
		to=${t%:*} w=${t#*:}
		(sleep "$w"; echo hi) | { bash -c "$rd" "$to" \
		    >"$out/outside.$to.linux" 2>&1; }
		t0=$(date +%s%N)
		(sleep "$w"; echo hi) | { timeout 60 "$tool" exec --backend \
		    virtual -- bash -c "$rd" "$to" >"$out/outside.$to" 2>&1
		    date +%s%N >"$out/outside.$to.end"; }
		ms=$((($(cat "$out/outside.$to.end") - t0) / 1000000))
		grep -v '^exactly' "$out/outside.$to" >"$out/outside.$to.facts"
		want=$((to < w ? to : w))
		msg="(sleep $w; echo hi) | read -t $to"
		if cmp -s "$out/outside.$to.linux" "$out/outside.$to.facts" &&
		    { [ "$to" -lt "$w" ] ||
		    grep -q '\[hi\]' "$out/outside.$to"; } &&
		    { [ "$to" -ge "$w" ] ||
		    grep -q "^exactly $to s\$" "$out/outside.$to"; } &&
		    [ "$ms" -ge $((want * 1000 - 100)) ] &&
		    [ "$ms" -lt $((want * 1000 + 1500)) ]; then
			msg="$msg: as on Linux, time flows while the tree"
			ok "$msg waits on its input (${ms} ms)"
		else
			bad "$msg on virtual time (${ms} ms)"
			show_diff "$out/outside.$to.linux" "$out/outside.$to"
		fi
	done
}

# writer W: once $out/started.py is there (10 s at most), a line W s
# later, and another 1 s after.
writer() {
	i=0
	while [ ! -e "$out/started.py" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep "$1"
	echo a
	sleep 1
	echo b
}

# Python's selectors on a pipe from outside: the poll's second of the 1 s
# case ends 2 s before the writer.  The writer starts counting once Python
# has started (it makes the file started.py): Python under a sanitizer
# build starts in 3 s here.
outside_python() {
	py='import selectors, sys
open(sys.argv[2], "w").close()
for name in ("EpollSelector", "PollSelector"):
    s = getattr(selectors, name)()
    s.register(sys.stdin, selectors.EVENT_READ)
    r = s.select(float(sys.argv[1]))
    print(name, "ready" if r else "timed out", flush=True)
    if r:
        sys.stdin.readline()'
	for t in 5:1 1:4; do
		to=${t%:*} w=${t#*:}
		rm -f "$out/started.py"
		writer "$w" | python3 -c "$py" "$to" \
		    "$out/started.py" >"$out/outside.py$to.linux" 2>&1
		rm -f "$out/started.py"
		writer "$w" | run "outside.py$to" "$tool" exec --backend \
		    virtual -- python3 -c "$py" "$to" "$out/started.py"
		msg="python3 epoll and poll for ${to} s on a pipe written"
		matches "$out/outside.py$to.linux" "$out/outside.py$to" \
		    "$msg after ${w} s: as on Linux" "$msg after ${w} s"
	done
}

# The same pipe through an epoll set: polled, then in another set.  Each
# wait lasts up to 5 s; the lines come 1 s and 2 s after Python starts.
# (Before, both waits were jumped over: "timed out" at once.)
outside_nested() {
	py='import select, sys
open(sys.argv[1], "w").close()
inner = select.epoll()
inner.register(0, select.EPOLLIN)
p = select.poll()
p.register(inner.fileno(), select.POLLIN)
r = p.poll(5000)
print("poll of an epoll set:", "ready" if r else "timed out", flush=True)
if r:
    sys.stdin.readline()
o = select.epoll()
o.register(inner.fileno(), select.EPOLLIN)
r = o.poll(5)
print("an epoll set in another:", "ready" if r else "timed out")'
	rm -f "$out/started.py"
	writer 1 | python3 -c "$py" "$out/started.py" \
	    >"$out/outside.nest.linux" 2>&1
	rm -f "$out/started.py"
	writer 1 | run outside.nest "$tool" exec --backend virtual -- \
	    python3 -c "$py" "$out/started.py"
	msg="python3 poll of an epoll set, and a set in a set, on a pipe"
	matches "$out/outside.nest.linux" "$out/outside.nest" \
	    "$msg written after 1 s: as on Linux" "$msg written after 1 s"
}

# A FIFO opened by its name, written from outside after 1 s.  (The writer
# opens it read-write, which never blocks: it ends even if the tree is
# gone.)
outside_fifo() {
	mkfifo "$out/fifo"
	(sleep 1; exec 3<>"$out/fifo"; echo hi >&3) &
	t0=$(date +%s%N)
	run outside.fifo "$tool" exec --backend virtual -- bash -c \
	    'exec 3<>"$1"; read -t 5 x <&3; echo "status $?, line [$x]"' \
	    sh "$out/fifo" </dev/null
	ms=$(ms_since)
	wait
	msg="read -t 5 on a FIFO written from outside"
	grep -q '^status 0, line \[hi\]$' "$out/outside.fifo" &&
	    [ "$ms" -ge 900 ]
	verdict $? "$msg after 1 s: the line (${ms} ms)" "$msg (${ms} ms)" \
	    "$out/outside.fifo"
}

# A tree that waits only on itself (stdin /dev/null; a pipe of its own,
# written by a program of the tree) still jumps.
outside_pure() {
	t0=$(date +%s%N)
	run outside.pure "$tool" exec --backend virtual -- bash -c \
	    'read -t 100 x < <(sleep 200); echo "status $?"; kill $!
	     sleep 100; echo done' </dev/null
	ms=$(ms_since)
	msg="a tree that waits only on itself"
	[ "$(cat "$out/outside.pure")" = "status 142
done" ] && [ "$ms" -lt 500 ]
	verdict $? "$msg still jumps (${ms} ms)" "$msg (${ms} ms)" \
	    "$out/outside.pure"
}

# sockets: the cases of vsockets.py, natively and on virtual time; the
# outside peer is a python3 of the script's own, outside the tree.
sockets() {
	py=$src/vsockets.py
	for c in "serve unix 1 client 5" "serve tcp 1 client 5" \
	    "serve tcp 3 client 1" "send tcp 1 server 5" \
	    "dserve unix 1 dclient 5"; do
		set -- $c
		label=sockets.$1.$2.$3
		for side in linux virtual; do
			socket_run "$side" "$@"
		done
		want=$(($3 < $5 ? $3 : $5))
		if cmp -s "$out/$label.linux" "$out/$label.virtual" &&
		    [ "$ms" -ge $((want * 1000 - 100)) ]; then
			msg="$(cat "$out/$label.virtual"), after $3 s from"
			ok "$msg outside: as on Linux (${ms} ms)"
		else
			bad "sockets: $c on virtual time (${ms} ms)"
			show_diff "$out/$label.linux" "$out/$label.virtual"
		fi
	done
	sockets_tree
}

# socket_run SIDE ROLE PROTO SECONDS PEER SECONDS: one case of sockets,
# natively (SIDE linux) or on virtual time; ms: how long the tree's side
# took.
socket_run() {
	side=$1
	shift
	rm -f "$out/$label.addr"*
	if [ "$1" = send ] || [ "$1" = dserve ]; then
		python3 "$py" "$1" "$out/$label.addr" "$3" &
	else
		python3 "$py" serve "$2" "$out/$label.addr" "$3" &
	fi
	t0=$(date +%s%N)
	if [ "$side" = linux ]; then
		run "$label.$side" python3 "$py" "$4" "$out/$label.addr" "$5"
	else
		run "$label.$side" "$tool" exec --backend virtual \
		    -- python3 "$py" "$4" "$out/$label.addr" "$5"
	fi
	ms=$(ms_since)
	wait
}

# Sockets whose peers are all in the tree: the waits still jump.
sockets_tree() {
	# A daemon of the tree that listens and forks: the kernel names its
	# first process, gone, as the client's peer; its child holds the
	# socket, so the wait is the tree's.
	msg="a daemon of the tree that listens on a UNIX path and forks:"
	jumps sockets.daemon "daemon (unix)" "$msg its client's wait" \
	    sh -c 'd=$(mktemp -d) && python3 "$0" daemon "$d"; r=$?
	    rm -rf "$d"; exit $r' "$py"
	# A pair whose maker made it, forked a child for each end and ended
	# (the kernel names it, gone): the waiter's peer is its sibling's,
	# found by the peer socket's inode (sock_diag).
	msg="a socket pair whose maker ended, its ends in two processes"
	jumps sockets.orphan "orphan pair (unix)" "$msg of the tree" \
	    python3 "$py" orphan
	for k in unix tcp; do
		jumps "sockets.pair.$k" "pair ($k)" \
		    "a socket between two processes of the tree ($k)" \
		    python3 "$py" pair "$k"
	done
}

# jumps LABEL WHAT SAYS CMD...: CMD on virtual time 5 times prints "WHAT:
# ready after 100.000000 s", in under 5 s each: the wait on a socket of
# the tree's still jumps.
jumps() {
	label=$1 what=$2 says=$3 max= limit=5000
	shift 3
	# Far below the 100 s a wait in real time takes; a sanitizer's
	# build on a loaded machine took 5.8 s for one run of five.
	[ -n "${TFD_SAN:-}" ] && limit=20000
	if again "$label" 5 "$@" &&
	    [ "$(cat "$out/$label.1")" = "$what: ready after 100.000000 s" ] &&
	    [ "$max" -lt "$limit" ]; then
		ok "$says: still jumps, at 100 s exactly"
	else
		bad "$says (slowest ${max:-?} ms)"
		sed 's/^/    /' "$out/$label.1"
	fi
}
