# SPDX-License-Identifier: MIT
# Virtual time with threads (synctest's rules), sourced by run.sh: on
# virtual time only, an hour of timers in well under a second, in the same
# order every time.  ThreadSanitizer defers signals inside its own
# interceptors, which can hold back a signal that virtual time sends at
# once: not run under it.

vthreads() {
	selected vthreads || return 0
	# Its children exit() from a process with other threads: a child's
	# LeakSanitizer warns that it could not stop them (they are not in
	# the child), on the output compared.
	ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
	run vthreads "$tool" exec --backend virtual -- "$dir/vthreads"
	ASAN_OPTIONS=${ASAN_OPTIONS%:detect_leaks=0}
	cat >"$out/vthreads.want" <<'EOF'
1: first ready: pipe 
1: then: timer
2: read of a disarmed timer: -1 EINTR
3: timer of an hour: 1 after 3600 s
4: ten children ended while their parent slept 2 s each
5: the first thread gone, a sleep of 90 s took 90000000000 ns
EOF
	matches "$out/vthreads.want" "$out/vthreads" \
	    "vthreads: virtual time waits for the other threads" \
	    "vthreads: virtual time with threads"
}
