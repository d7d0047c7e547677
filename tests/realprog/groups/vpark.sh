# SPDX-License-Identifier: MIT
# Threads parked in untimed waits on virtual time (tfd-preload(7), The
# cost of a move), sourced by run.sh: a thread woken by a condition, a
# semaphore or a signal runs before time moves, and the mover does not
# look at the threads parked at every move, nor at those in timed waits
# that end in turn.

vpark() {
	selected vpark && virtual_prog vpark || return 0
	run vpark.wake "$tool" exec --backend virtual -- "$dir/vpark" wake
	cat >"$out/vpark.wake.want" <<'EOF2'
woken by pthread_cond_signal, it runs before its waker's sleep ends: yes
woken by pthread_cond_broadcast, it runs before its waker's sleep ends: yes
woken by sem_post, it runs before its waker's sleep ends: yes
woken by a signal's handler, it runs before its waker's sleep ends: yes
cancelled before its wait, its cleanup runs before its canceller's sleep ends: yes
a join ends when its thread does, before another's sleep ends: yes
a handler that blocks, then computes, holds time while it computes: yes
EOF2
	matches "$out/vpark.wake.want" "$out/vpark.wake" \
	    "vpark: a thread parked and woken runs before time moves" \
	    "vpark: a thread parked and woken"
	msg="vpark: 128 threads parked"
	vpark_cost cost "$msg cost a move no look in /proc" "$msg"
	vpark_cost signals "$msg, a signal to another process: still" \
	    "$msg, another process signalled" 128 signals
	run vpark.timed "$tool" exec --backend virtual -- "$dir/vpark" timed
	cat >"$out/vpark.timed.want" <<'EOF2'
4 threads in timed waits: all ended
the mover reads /proc fewer than 6 times a sleep: yes
EOF2
	matches "$out/vpark.timed.want" "$out/vpark.timed" \
	    "vpark: timed waits ending in turn do not wake each other" \
	    "vpark: timed waits ending in turn"
}

# vpark_cost LABEL OK BAD [ARG...]: vpark cost ARG... on virtual time.
vpark_cost() {
	label=$1 good=$2 bad=$3
	shift 3
	run "vpark.$label" "$tool" exec --backend virtual -- \
	    "$dir/vpark" cost "$@"
	cat >"$out/vpark.$label.want" <<'EOF2'
128 threads parked, a third in joins: all ended
the mover reads /proc fewer than 16 times a sleep: yes
EOF2
	matches "$out/vpark.$label.want" "$out/vpark.$label" "$good" "$bad"
}
