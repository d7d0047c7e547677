# SPDX-License-Identifier: MIT
# The waits that deliver (tfd(7), Delivery), sourced by run.sh: deliver
# through raw system calls, and with TFD_DELIVERY=post, where the service
# thread posts every expiration (compare deliver runs it on each backend);
# onehop, delivery in one hop; clockjump, a wait that delivers sees
# CLOCK_REALTIME move.

# deliver_modes: deliver on the engine and kernel with raw system calls,
# and posted.
deliver_modes() {
	[ -x "$dir/deliver" ] && selected deliver || return 0
	same "$dir/deliver" deliver.raw engine raw
	same "$dir/deliver" deliver.raw kernel raw
	export TFD_DELIVERY=post
	same "$dir/deliver" deliver.post engine
	same "$dir/deliver" deliver.post.raw engine raw
	unset TFD_DELIVERY
}

# Delivery in one hop, counted (tfd(7), Delivery): an epoll loop's
# system calls and the switches of every thread, under the preload only
# (natively the loop makes three calls an iteration).  Not in a
# sanitizer's build, whose run-time has threads and calls of its own.
onehop() {
	on_engine onehop "its run-time's threads and calls"
}

# A wait that delivers sees CLOCK_REALTIME move (tfd(7), Delivery): the
# program moves the clock as this process reads it, which the kernel's
# timers do not see; under the preload only, and not in a sanitizer's
# build (whose run-time has a clock_gettime of its own).
clockjump() {
	on_engine clockjump "its run-time's clock_gettime"
}

# on_engine PROG WHY: the program, a group of its own, on the engine
# under the preload: it exits 0, and what it printed is shown.  Not under
# a sanitizer (WHY: what of the sanitizer's run-time gets in the way).
on_engine() {
	[ -x "$dir/$1" ] && selected "$1" || return 0
	if [ -n "${TFD_SAN:-}" ]; then
		skip "$1: under a sanitizer ($2)"
		return
	fi
	expect 0 "$1" "$tool" exec --backend engine -- "$dir/$1"
	sed 's/^/    /' "$out/$1"
}
