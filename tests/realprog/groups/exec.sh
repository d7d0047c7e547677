# SPDX-License-Identifier: MIT
# tfd exec itself, its trace and tfd trace, sourced by run.sh: the last
# group, "exec trace".

exec_trace() {
	selected "exec trace" || return 0
	exec_status
	trace_ticker
	trace_mistakes
	trace_children
	trace_env
	trace_symlink
	trace_relpreload
}

# tfd exec's own failures exit 125, as env(1)'s and timeout(1)'s; the
# environment it gives the program.
exec_status() {
	expect 125 "exec without a program" "$tool" exec
	expect 125 "exec --backend bogus" "$tool" exec --backend bogus -- true
	expect 125 "exec --trace without a file" "$tool" exec --trace
	expect 125 "exec with TFD_BACKEND naming no backend" \
	    env TFD_BACKEND=virtaul "$tool" exec -- true
	expect 1 "exec passes the status on" "$tool" exec -- false
	expect 127 "exec of a program not found" "$tool" exec -- \
	    /nonexistent/prog
	expect 126 "exec of a program that cannot be run" "$tool" exec -- \
	    /etc/passwd
	expect 125 "exec with TFD_PRELOAD not found" \
	    env TFD_PRELOAD=/nonexistent/lib.so "$tool" exec -- true

	run env "$tool" exec --backend virtual -- \
	    sh -c 'echo "LD_PRELOAD=$LD_PRELOAD TFD_BACKEND=$TFD_BACKEND"'
	has "$out/env" "exec sets LD_PRELOAD and TFD_BACKEND" \
	    'LD_PRELOAD=[^ ]*libtfd-preload\.so TFD_BACKEND=virtual$'
}

# The start of a trace line: time, pid, thread.
hdr='[0-9]+\.[0-9]{9} [0-9]+ [0-9]+ '

# --trace /dev/stderr shows the timer calls of a program of ours; the
# program's own output is unchanged.  tfd trace reads it back: one timer,
# 3 reads of one expiration each, never early.
trace_ticker() {
	"$tool" exec --trace /dev/stderr -- "$dir/ticker" 3 \
	    >"$out/ticker.out" 2>"$out/trace"
	t="$out/trace"
	has "$out/ticker.out" "ticker under exec prints its result" \
	    '^3 reads, 3 expirations$'
	has "$t" "trace: timerfd_create" \
	    "^${hdr}timerfd_create\(CLOCK_MONOTONIC, TFD_CLOEXEC\) = [0-9]+$"
	re="^${hdr}timerfd_settime\([0-9]+, 0, \{0\.020000000, 0\.020000000\}"
	has "$t" "trace: timerfd_settime, and when it is next due" \
	    "$re, NULL\) \[next 0\.0[12][0-9]{7}\] = 0$"
	trace_due
	has "$t" "trace: read, with the count" \
	    "^${hdr}read\([0-9]+, 8\) \[count [0-9]+\] = 8$" 3
	has "$t" "trace: timerfd_gettime" "^${hdr}timerfd_gettime\([0-9]+, \{"
	has "$t" "trace: dup" "^${hdr}dup\([0-9]+\) = [0-9]+$"
	has "$t" "trace: close of both numbers" "^${hdr}close\([0-9]+\) = 0$" 2

	"$tool" trace "$t" >"$out/ticker.summary" 2>&1
	re='^  reads +3 with a count, 0 EAGAIN, 0 failed \(0 ECANCELED\);'
	has "$out/ticker.summary" "tfd trace: the ticker's reads" \
	    "$re counts 1 x3$"
	has "$out/ticker.summary" \
	    "tfd trace: the ticker's reads were never early" \
	    '^  lateness +p50 [0-9.]+ us .* early 0  \(of 3 reads\)$'
}

# The settime line's time plus [next] is when the timer is due, never
# later (the time is the moment the time left was asked, not when the
# line was written): no later than the deadline the ticker itself found.
trace_due() {
	awk -v d="$(sed -n 's/^deadline //p' "$out/ticker.out")" '
	    /timerfd_settime\(.*\[next / && !done {
	        n = $0; sub(/.*\[next /, "", n); sub(/\].*/, "", n)
	        split($1, a, "."); split(n, b, "."); split(d, c, ".")
	        s = a[1] + b[1] - c[1]; f = a[2] + b[2] - c[2]; l = s * 1e9 + f
	        print (l <= 0 ? "not later" : "later by " l " ns")
	        done = 1
	    }' "$t" >"$out/ticker.due"
	msg="trace: the settime line's time plus [next] is not after the"
	has "$out/ticker.due" "$msg deadline" '^not later$'
}

# Times that are not valid times are shown as they were given; the trace
# of a program that makes every mistake still reads back.
trace_mistakes() {
	"$tool" exec --trace "$out/glibc.trace" -- "$dir/timerfd_glibc" \
	    >/dev/null 2>&1
	re="^${hdr}timerfd_settime\([0-9]+, 0, "
	has "$out/glibc.trace" "trace: a negative time as it was given" \
	    "$re\{\{-1, 100000000\}, \{0, -1\}\}, NULL\) = -1 EINVAL$"
	has "$out/glibc.trace" "trace: tv_nsec out of range as it was given" \
	    "$re\{\{0, 1000000000\}, 0\.000000000\}, NULL\) = -1 EINVAL$"
	"$tool" trace "$out/glibc.trace" >"$out/glibc.summary" 2>&1
	has "$out/glibc.summary" "tfd trace reads the trace of every mistake" \
	    '^trace .*: [0-9]+ lines, 3 processes, [0-9]+ timers'
}

# The preload follows the environment into the programs PROG runs; a
# relative trace file is made absolute.  On virtual time: not under
# ThreadSanitizer, as the domain's tests (that build leaves a shell's
# vfork() to the C library: tfd-preload(7), BUGS).
trace_children() {
	case ${TFD_SAN:-} in
	*thread*)
		msg="trace of two child programs on virtual time"
		skip "$msg: ThreadSanitizer"
		return ;;
	esac
	(cd "$out" && "$tool" exec --backend virtual --trace rel.trace -- \
	    sh -c "cd / && '$dir/ticker' 1 && '$dir/ticker' 1" \
	    >/dev/null 2>&1)
	has "$out/rel.trace" "trace of two child programs, relative file" \
	    "^${hdr}timerfd_create\(" 2
	has "$out/rel.trace" "virtual time moved for them" \
	    '^[0-9.]+ [0-9]+ - virtual-advance\(\+0\.020000000\) = 0$' 2
}

# The trace file is named when the program starts: a program that
# rewrites its environment block (setproctitle) keeps its trace, and no
# file named after its title appears.
trace_env() {
	mkdir "$out/envcwd"
	(cd "$out/envcwd" && "$tool" exec --trace "$out/env.trace" -- \
	    "$dir/dropin" env >/dev/null 2>&1)
	has "$out/env.trace" "trace after the environment was rewritten" \
	    "^${hdr}timerfd_settime\(" 1
	if [ -z "$(ls -A "$out/envcwd")" ]; then
		ok "no file named after the rewritten environment"
	else
		msg="files made in the program's directory"
		bad "$msg: $(ls -A "$out/envcwd")"
	fi
}

# A trace file is not followed through a symbolic link (a privileged
# program would append to the file the link names).
trace_symlink() {
	: >"$out/target"
	ln -s "$out/target" "$out/link"
	TFD_TRACE=$out/link "$tool" exec -- "$dir/ticker" 1 >/dev/null 2>&1
	if [ -s "$out/target" ]; then
		bad "trace written through a symbolic link"
	else
		ok "trace not written through a symbolic link"
	fi
}

# tfd exec makes a relative TFD_PRELOAD absolute: a child that changes
# directory still loads it.
trace_relpreload() {
	lib=$(dirname "$tool")
	case ${TFD_SAN:-} in
	*thread*)
		msg="relative TFD_PRELOAD made absolute (virtual time)"
		skip "$msg: ThreadSanitizer"
		return ;;
	esac
	(cd "$lib" && TFD_PRELOAD=./libtfd-preload.so "$tool" exec \
	    --backend virtual --trace "$out/relpre.trace" -- \
	    sh -c "cd / && '$dir/ticker' 1" >"$out/relpre.out" 2>&1)
	has "$out/relpre.trace" "relative TFD_PRELOAD made absolute" \
	    "^${hdr}timerfd_create\(" 1
}
