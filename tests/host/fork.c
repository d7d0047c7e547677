/* SPDX-License-Identifier: MIT */
/*
 * fork.c - processes that fork around their timers: a child that makes a
 * timer, a daemon whose parent exits, a double fork, a prefork server;
 * fork from a thread, programs started by popen, posix_spawn, fork and
 * exec, system and vfork, many children, the process limit.
 */
#include "host.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* The exit status of a child, or -1. */
static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A child makes a timer, reads it, closes it, and so does its parent. */
HOST_CASE(fork_then_create, 0)
{
	int fd = h_timer(0, 10, 10);
	pid_t pid = fork();

	if (pid == 0) {
		int mine = h_timer(0, 5, 0);

		say("child: made a timer: %s", mine >= 0 ? "yes" : "no");
		say("child: its read: %lld", h_read(mine));
		say("child: inherited one read: %s",
		    h_read(fd) >= 1 ? ">= 1" : "none");
		_exit(T_close(mine) == 0 ? 0 : 1);
	}
	say("child exit %d", reap(pid));
	say("parent read: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* daemon-style start: the parent exits, the child polls the inherited
 * timer and counts at least 5 expirations in 5 polls. */
HOST_CASE(daemon_child_polls_inherited_timer, 0)
{
	int fd = h_timer(T_NONBLOCK, 20, 20), i, ok = 0;
	int pfd[2];
	char c;
	pid_t pid;

	if (pipe(pfd) < 0)
		return 1;
	pid = fork();
	if (pid != 0) {
		close(pfd[1]);
		/* "the parent exits": it only waits for the daemon's word */
		say("parent exits");
		reap(pid);
		while (read(pfd[0], &c, 1) == 1)
			putchar(c);
		fflush(stdout);
		return 0;
	}
	if (fork() != 0)
		_exit(0); /* the first child exits at once: a double fork */
	setsid();
	close(pfd[0]);
	for (i = 0; i < 5; i++)
		if (h_poll(fd, 2000) == 1 && h_count(fd) >= 1)
			ok++;
	dprintf(pfd[1], "daemon: %d of 5 polls found expirations\n", ok);
	dprintf(pfd[1], "daemon: a new timer: %lld\n",
		h_read(h_timer(0, 10, 0)));
	_exit(0);
}

/* A master holding a timer forks 100 workers; each makes a timer of its
 * own and reads it.  The master's timer expires first at 1 s and then
 * every 60 s: its one expiration holds however slowly the workers run (a
 * ThreadSanitizer build under the preload takes 3 s for the 100). */
HOST_CASE(prefork_hundred_workers, 0)
{
	int fd = h_timer(0, 1000, 60000), i, good = 0, bad = 0, st;
	pid_t pids[100];

	for (i = 0; i < 100; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int mine = h_timer(0, 20, 0);

			if (mine < 0)
				_exit(10 + errno % 100);
			_exit(h_read(mine) == 1 && T_close(mine) == 0 ? 0 : 3);
		}
	}
	for (i = 0; i < 100; i++) {
		st = reap(pids[i]);
		if (st == 0)
			good++;
		else if (bad++ == 0)
			say("worker %d: status %d (the first to fail)", i, st);
	}
	say("%d of 100 workers made and read a timer", good);
	say("master reads: %lld", h_read(fd));
	return T_close(fd) != 0;
}

/* ---- threads, exec, spawn, limits ---- */

struct reader {
	int fd;
	long long got;
};

static void *read_once(void *arg)
{
	struct reader *r = arg;

	r->got = h_read(r->fd);
	return NULL;
}

/* The first thread blocks in read on a periodic timer while another
 * thread forks: the child (one thread, the forking one) reads the same
 * timer and makes one of its own; the blocked read returns in the
 * parent. */
static void *fork_child_of_thread(void *arg)
{
	int fd = *(int *)arg;
	pid_t pid;

	h_sleep_ms(10); /* the first thread blocks in read meanwhile */
	pid = fork();
	if (pid == 0) {
		int mine = h_timer(0, 5, 0);
		long long n = h_read(fd);

		say("child: inherited read: %s", n >= 1 ? ">= 1" : h_err(n));
		say("child: its own read: %lld", h_read(mine));
		_exit(T_close(mine) != 0);
	}
	say("child exit %d", reap(pid));
	return NULL;
}

HOST_CASE(fork_from_a_thread_while_another_reads, 0)
{
	int fd = h_timer(0, 40, 40);
	long long got;
	pthread_t th;

	if (fd < 0 || pthread_create(&th, NULL, fork_child_of_thread, &fd))
		return 1;
	got = h_read(fd);
	pthread_join(th, NULL);
	say("blocked read: %s", got >= 1 ? ">= 1" : h_err(got));
	say("read again: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* The numbers a program started now would be given: those open here
 * without FD_CLOEXEC, below max, as text. */
static void expected_fds(char *buf, size_t len, int max)
{
	size_t at = 0;
	int fd, f;

	buf[0] = 0;
	for (fd = 0; fd < max && at + 16 < len; fd++)
		if ((f = fcntl(fd, F_GETFD)) >= 0 && !(f & FD_CLOEXEC))
			at += (size_t)snprintf(buf + at, len - at, "%d ", fd);
}

/* A shell that prints the numbers open in it below $1, then reads two
 * counts from number $2 ("read ok" if it got them: the second waits for
 * an expiration). */
static char list_script[] =
	"n=0; while [ $n -lt $1 ]; do "
	"[ -e /proc/self/fd/$n ] && printf '%s ' $n; n=$((n+1)); done; echo; "
	"x=$(od -An -tu8 -w8 -N16 <&$2 | wc -l); [ \"$x\" = 2 ] && "
	"echo read ok || echo read failed";

/* How many numbers of the list are not 0, 1, 2 or fd. */
static int others(const char *list, int fd)
{
	char *end;
	int n = 0;

	for (;;) {
		long k = strtol(list, &end, 10);

		if (end == list)
			return n;
		n += k > 2 && k != fd;
		list = end;
	}
}

/* What a child got, compared with what it should have: its two lines
 * from r. */
static void judge(const char *who, FILE *r, const char *want, int ctimer,
                  int ptimer)
{
	char line[4096], spaced[4100], tok[16];
	int has_c, has_p;

	if (!r || !fgets(line, sizeof(line), r)) {
		say("%s: no output", who);
		return;
	}
	line[strcspn(line, "\n")] = 0;
	snprintf(spaced, sizeof(spaced), " %s", line);
	snprintf(tok, sizeof(tok), " %d ", ctimer);
	has_c = strstr(spaced, tok) != NULL;
	snprintf(tok, sizeof(tok), " %d ", ptimer);
	has_p = strstr(spaced, tok) != NULL;
	say("%s: CLOEXEC timer open: %s; the other: %s; numbers as the "
	    "kernel gives: %s", who, has_c ? "yes" : "no", has_p ? "yes" : "no",
	    !strcmp(line, want) ? "yes" : "no");
	say("%s: open beyond 0-2 and the timer: %d", who, others(line, ptimer));
	if (strcmp(line, want))
		say("%s: has [%s], should have [%s]", who, line, want);
	if (fgets(line, sizeof(line), r))
		say("%s: %s", who, strtok(line, "\n"));
}

/* Programs started while timers run (one read by a thread, one not
 * close-on-exec): popen, posix_spawn, fork + exec, system.  Each gets the
 * numbers Linux gives it and nothing of ours, and reads the timer it
 * inherited through a plain read (od): the count that is there (each is
 * started once the timer has expired unread), then the next one.
 * Not on virtual time with ThreadSanitizer: a forked sh there crashes in
 * TSan's runtime, whose own thread starts through the preload's
 * pthread_create as a thread of the domain's (start_in_tree, with no
 * state of TSan's), whatever the timers do. */
#ifdef __SANITIZE_THREAD__
#define H_TSAN_NOVIRTUAL H_NOVIRTUAL
#else
#define H_TSAN_NOVIRTUAL 0
#endif
HOST_CASE(spawned_programs_get_what_linux_gives, H_TSAN_NOVIRTUAL)
{
	struct reader r = { h_timer(T_CLOEXEC, 5, 5), 0 };
	int plain = h_timer(0, 5, 5), max, p[2], st;
	char want[1024], cmd[2048], arg1[16], arg2[16];
	char *argv[] = { "sh", "-c", list_script, "sh", arg1, arg2,
		         NULL };
	posix_spawn_file_actions_t fa;
	pthread_t th;
	FILE *f;
	pid_t pid;

	if (r.fd < 0 || plain < 0 ||
	    pthread_create(&th, NULL, read_once, &r) != 0)
		return 1;
	max = (plain > r.fd ? plain : r.fd) + 16;
	snprintf(arg1, sizeof(arg1), "%d", max);
	snprintf(arg2, sizeof(arg2), "%d", plain);
	say("timers: CLOEXEC one %s, the other %s", r.fd >= 0 ? "made" : "-",
	    plain >= 0 ? "made" : "-");

	expected_fds(want, sizeof(want), max);
	h_sleep_ms(20);
	snprintf(cmd, sizeof(cmd), "set -- %d %d; %s", max, plain,
		 list_script);
	f = popen(cmd, "r");
	judge("popen", f, want, r.fd, plain);
	say("popen: status %d", f ? WEXITSTATUS(pclose(f)) : -1);

	if (pipe2(p, O_CLOEXEC) < 0)
		return 1;
	h_sleep_ms(20);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	st = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	say("posix_spawn: %s", st ? h_err(st) : "started");
	f = fdopen(p[0], "r");
	judge("posix_spawn", f, want, r.fd, plain);
	fclose(f);
	say("posix_spawn: exit %d", reap(pid));

	if (pipe2(p, O_CLOEXEC) < 0)
		return 1;
	h_sleep_ms(20);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		execv("/bin/sh", argv);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	judge("fork+exec", f, want, r.fd, plain);
	fclose(f);
	say("fork+exec: exit %d", reap(pid));

	h_sleep_ms(20);
	snprintf(cmd, sizeof(cmd), "exit $(od -An -tu8 -w8 -N16 <&%d | wc -l)",
		 plain);
	st = system(cmd);
	say("system: it read two counts: %s",
	    WIFEXITED(st) && WEXITSTATUS(st) == 2 ? "yes" : "no");

	pthread_join(th, NULL);
	say("thread read the CLOEXEC timer: %s", r.got >= 1 ? ">= 1" : "no");
	say("parent reads the other: %s", h_read(plain) >= 1 ? ">= 1" : "no");
	return T_close(r.fd) != 0 || T_close(plain) != 0;
}

/* vfork() and exec while a thread reads a timer: the child's exit status
 * comes back, and the timer goes on. */
HOST_CASE(vfork_exec_while_a_thread_reads, 0)
{
	struct reader r = { h_timer(0, 20, 20), 0 };
	pthread_t th;
	pid_t pid;

	if (r.fd < 0 || pthread_create(&th, NULL, read_once, &r) != 0)
		return 1;
	pid = vfork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(127);
	}
	say("vfork child exit %d", reap(pid));
	pthread_join(th, NULL);
	say("thread read: %s", r.got >= 1 ? ">= 1" : h_err(r.got));
	say("read again: %s", h_read(r.fd) >= 1 ? ">= 1" : "none");
	return T_close(r.fd) != 0;
}

/* 300 short-lived children, one after another, each looks at the timer
 * it inherited (and every 50th arms it again, as it was); the parent's
 * timer runs on. */
HOST_CASE(three_hundred_children_touch_an_inherited_timer, 0)
{
	int fd = h_timer(T_NONBLOCK, 10, 10), i, good = 0;

	for (i = 0; i < 300; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			struct itimerspec cur;
			long long n;

			if (T_gettime(fd, &cur) != 0 ||
			    cur.it_interval.tv_nsec != 10 * MS)
				_exit(1);
			n = h_count(fd);
			if (n < 0 && n != -EAGAIN)
				_exit(2);
			if (i % 50 == 0 && h_arm(fd, 10, 10) != 0)
				_exit(3);
			_exit(0);
		}
		if (reap(pid) == 0)
			good++;
	}
	say("%d of 300 children found the timer armed every 10 ms", good);
	say("parent: readable: %d", h_poll(fd, 2000));
	say("parent: count: %s", h_count(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* A prefork server whose 100 workers are all alive at once: each makes a
 * timer of its own and reads it, and reads the master's timer with a
 * plain read(2) (the file they all share). */
HOST_CASE(prefork_hundred_workers_alive_at_once, 0)
{
	int fd = h_timer(0, 5, 5), ready[2], go[2], i, good = 0, st;
	pid_t pids[100];
	char c;

	if (pipe(ready) < 0 || pipe(go) < 0)
		return 1;
	for (i = 0; i < 100; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			int mine = h_timer(0, 20, 0);
			uint64_t n;

			close(ready[0]);
			close(go[1]);
			if (write(ready[1], mine < 0 ? "n" : "y", 1) != 1 ||
			    read(go[0], &c, 1) != 1)
				_exit(4);
			if (mine < 0)
				_exit(10 + errno % 100);
			if (read(fd, &n, 8) != 8 || n < 1)
				_exit(5);
			_exit(h_read(mine) == 1 && T_close(mine) == 0 ? 0 : 3);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < 100 && read(ready[0], &c, 1) == 1; i++)
		good += c == 'y';
	say("%d of 100 workers alive at once made a timer", good);
	for (i = 0; i < 100; i++)
		if (write(go[1], "g", 1) != 1)
			return 1;
	for (good = 0, i = 0; i < 100; i++) {
		st = reap(pids[i]);
		if (st == 0)
			good++;
		else
			say("worker %d: status %d", i, st);
	}
	say("%d of 100 read the master's timer and their own", good);
	say("master reads: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* RLIMIT_NPROC reached (as an ordinary user: root is not limited): fork()
 * and pthread_create() fail with EAGAIN; the timers go on, and a new one
 * can be made. */
HOST_CASE(fork_fails_at_the_process_limit, 0)
{
	int fd = h_timer(0, 10, 10), more;
	struct rlimit was, one;
	pthread_t th;
	struct reader r;
	pid_t pid;
	int e;

	if (fd < 0)
		return 1;
	if (setresgid(65534, 65534, 65534) != 0 ||
	    setresuid(65534, 65534, 65534) != 0) {
		say("not root: the limit is the user's, untested");
	}
	getrlimit(RLIMIT_NPROC, &was);
	one = was;
	one.rlim_cur = 1; /* the hard limit stays: restored below */
	if (getuid() != 0 && setrlimit(RLIMIT_NPROC, &one) == 0) {
		pid = fork();
		if (pid == 0)
			_exit(0);
		e = errno;
		say("fork: %s", pid < 0 ? h_err(e) : "worked");
		if (pid > 0)
			reap(pid);
		r.fd = fd;
		e = pthread_create(&th, NULL, read_once, &r);
		say("pthread_create: %s", e ? h_err(e) : "worked");
		if (!e)
			pthread_join(th, NULL);
		setrlimit(RLIMIT_NPROC, &was);
	}
	say("read: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	more = h_timer(0, 5, 0);
	say("a new timer: %lld", more >= 0 ? h_read(more) : -1LL);
	return T_close(fd) != 0 || (more >= 0 && T_close(more) != 0);
}

/* The tasks of this process (threads), or -1. */
static int tasks(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int n = -1;

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* Runs as a user of its own: the limit counts every task of the user's,
 * and other tests may run as nobody meanwhile.  0 if it cannot (said). */
static int own_user(void)
{
	uid_t id = 50000 + (uid_t)getpid() % 10000;

	if (setresgid(id, id, id) == 0 && setresuid(id, id, id) == 0)
		return 1;
	say("not root: the limit is the user's, untested");
	return 0;
}

/* fork() with RLIMIT_NPROC one above the tasks the user runs (own_user):
 * fork() works, one thread more would not; the parent's limit as it
 * was.  The parent says whether fork() worked (fork_said) once the
 * child is done: before, its line and the child's first came in either
 * order. */
static pid_t fork_at_the_limit(void)
{
	struct rlimit was, lim;
	pid_t pid;

	getrlimit(RLIMIT_NPROC, &was);
	lim = was;
	lim.rlim_cur = (rlim_t)tasks() + 1;
	if (setrlimit(RLIMIT_NPROC, &lim) != 0)
		return -1;
	pid = fork();
	if (pid == 0)
		return 0;
	setrlimit(RLIMIT_NPROC, &was);
	return pid;
}

/* The child of fork_at_the_limit() reaped: fork's result and its. */
static int fork_said(pid_t pid)
{
	int st;

	if (pid < 0) {
		say("fork: %s", h_err(errno));
		return 1;
	}
	st = reap(pid);
	say("fork: worked");
	say("child's status: %d", st);
	return 0;
}

/* A child forked at RLIMIT_NPROC (the limit one above the tasks its
 * user runs: fork() works, one thread more would not).  Its inherited
 * timer works as on Linux: it reads the parent's expirations, asks,
 * re-arms and reads, and goes on doing so once the parent has closed
 * its copy, the child then its only holder (waiting in read(2), or in
 * poll(2) where polls); and it runs no task more than Linux's child
 * does.  The parent keeps a second timer open, so that the tasks it runs
 * stay as they were. */
static int at_the_process_limit(int polls)
{
	int fd = h_timer(0, 10, 10), keep = h_timer(0, 0, 0), go[2], done[2];
	struct itimerspec cur;
	pid_t pid;
	char c = 0;

	if (fd < 0 || keep < 0 || pipe(go) < 0 || pipe(done) < 0)
		return 1;
	if (!own_user())
		return T_close(fd) != 0 || T_close(keep) != 0;
	pid = fork_at_the_limit();
	if (pid == 0) {
		say("child: read %s", h_read(fd) >= 1 ? ">= 1" : "none");
		if (T_gettime(fd, &cur) != 0)
			say("child: gettime: %s", h_err(errno));
		else
			say("child: every %ld ms", cur.it_interval.tv_nsec / MS);
		say("child: armed %d, read %lld", h_arm(fd, 30, 0),
		    h_read(fd));
		if (write(go[1], "c", 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(3);
		if (polls)
			say("child: alone, armed %d, polled %d",
			    h_arm(fd, 30, 0), h_poll(fd, 5000));
		say("child: alone, armed %d, read %lld", h_arm(fd, 30, 0),
		    h_read(fd));
		say("child: again, armed %d, read %lld", h_arm(fd, 20, 0),
		    h_read(fd));
		say("child: %d task(s)", tasks());
		_exit(T_close(fd) != 0);
	}
	if (pid > 0 && (read(go[0], &c, 1) != 1 || T_close(fd) != 0 ||
	                write(done[1], "p", 1) != 1))
		say("parent: pipe or close failed");
	return fork_said(pid) || T_close(keep) != 0;
}

/* The child's part of a_child_at_the_process_limit_makes_timers. */
static int limit_child_makes(void)
{
	struct itimerspec far = { { 0, 0 }, { 7258118400, 0 } }, cur = { 0 };
	int fd, rt, bad = 0;

	errno = 0;
	fd = T_create(CLOCK_MONOTONIC, 0);
	say("child: monotonic %s, errno %s", fd >= 0 ? "made" : h_err(errno),
	    errno ? h_err(errno) : "as it was");
	if (fd >= 0) {
		say("child: armed %d", h_arm(fd, 20, 0));
		say("child: read %lld", h_read(fd));
		say("child: armed %d", h_arm(fd, 20, 0));
		say("child: polled %d", h_poll(fd, 5000));
		say("child: read %lld", h_read(fd));
		bad |= T_close(fd) != 0;
	}
	rt = T_create(CLOCK_REALTIME, 0);
	say("child: realtime %s", rt >= 0 ? "made" : h_err(errno));
	if (rt >= 0) {
		say("child: armed at 2200 %d",
		    T_settime(rt, T_ABSTIME | T_CANCEL_ON_SET, &far, NULL));
		say("child: asked %d", T_gettime(rt, &cur));
		say("child: due in more than a year: %s",
		    cur.it_value.tv_sec > 365 * 86400L ? "yes" : "no");
		bad |= T_close(rt) != 0;
	}
	say("child: %d task(s)", tasks());
	return bad;
}

/* Not under ThreadSanitizer, whose run-time starts a thread of its own in
 * the child, and there is no task left for it. */
HOST_CASE(a_child_at_the_process_limit_keeps_its_timers, H_NOTSAN)
{
	return at_the_process_limit(0);
}

/* A child forked at RLIMIT_NPROC makes timers of its own, as Linux's
 * child does: a monotonic one it reads and polls, a CLOCK_REALTIME one
 * with TFD_TIMER_CANCEL_ON_SET (a clock watcher's) it asks; with no task
 * more, and errno as it was (the engine's EAGAIN is not the program's).
 * Not with libtfd, whose tfd_create fails with EAGAIN there
 * (tfd_create(3)): the drop-in makes the kernel's timer instead
 * (tfd-preload(7)), where it failed with EAGAIN too. */
HOST_CASE(a_child_at_the_process_limit_makes_timers, H_NOTSAN | H_NOLIB)
{
	int keep = h_timer(0, 0, 0);
	pid_t pid;

	if (keep < 0 || !own_user())
		return keep < 0 || T_close(keep) != 0;
	pid = fork_at_the_limit();
	if (pid == 0)
		_exit(limit_child_makes());
	return fork_said(pid) || T_close(keep) != 0;
}

/* Its poll(2) too: not with libtfd, whose timers a plain poll(2) sees
 * only as their service threads post them (tfd(7), RESOURCES). */
HOST_CASE(a_child_at_the_process_limit_polls_its_timer, H_NOTSAN | H_NOLIB)
{
	return at_the_process_limit(1);
}

/* The family's 64 records taken (the master and 63 children, which wait
 * on a pipe): the next child shares nothing, yet reads the master's
 * close-on-exec timer with plain read(2)s, the count there (it has
 * expired unread) and the next one, while the master waits for its word
 * on a pipe. */
HOST_CASE(a_child_beyond_the_family_reads_the_timer, 0)
{
	int fd = h_timer(T_CLOEXEC, 5, 5), hold[2], word[2], k;
	pid_t kids[63], last;
	char c = 0;

	if (fd < 0 || pipe(hold) < 0 || pipe(word) < 0)
		return 1;
	for (k = 0; k < 63; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			close(hold[1]);
			_exit(read(hold[0], &c, 1) != 0);
		}
	}
	h_sleep_ms(20);
	last = fork();
	if (last == 0) {
		uint64_t n;
		int i;

		for (i = 0; i < 2; i++)
			c += read(fd, &n, 8) == 8 && n >= 1;
		_exit(write(word[1], &c, 1) != 1);
	}
	say("the child beyond read %d counts",
	    read(word[0], &c, 1) == 1 ? c : -1);
	say("it exits %d", reap(last));
	close(hold[1]);
	for (k = 0; k < 63; k++)
		if (reap(kids[k]) != 0)
			say("child %d failed", k);
	say("master reads: %s", h_read(fd) >= 1 ? ">= 1" : "none");
	return T_close(fd) != 0;
}

/* A timer shared with a child in a time namespace an hour ahead (made by
 * unshare(CLONE_NEWTIME), as a container runtime does): the child sees
 * the time left as its parent does, and its own arming, relative or
 * absolute on its clock, expires when it says.  Where no namespace can be
 * made (no privilege, no kernel support) the case says so, as natively. */
static int in_a_time_namespace(int fd)
{
	struct itimerspec cur, at = { { 0, 0 }, { 0, 0 } };
	struct timespec now;
	int ok;

	ok = T_gettime(fd, &cur) == 0 && cur.it_value.tv_sec >= 5 &&
	     cur.it_value.tv_sec < 10;
	say("child: the time left, as its parent's: %s", ok ? "yes" : "no");
	h_arm(fd, 100, 0);
	say("child: re-armed for 100 ms, read: %lld", h_read(fd));
	clock_gettime(CLOCK_MONOTONIC, &now);
	at.it_value.tv_sec = now.tv_sec;
	at.it_value.tv_nsec = now.tv_nsec + 100 * 1000000L;
	if (at.it_value.tv_nsec >= 1000000000L) {
		at.it_value.tv_sec++;
		at.it_value.tv_nsec -= 1000000000L;
	}
	T_settime(fd, TFD_TIMER_ABSTIME, &at, NULL);
	ok = T_gettime(fd, &cur) == 0 && cur.it_value.tv_sec == 0 &&
	     cur.it_value.tv_nsec > 0;
	say("child: armed at its own now + 100 ms: %s, read: %lld",
	    ok ? "less than a second left" : "no", h_read(fd));
	return T_close(fd) != 0;
}

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif

/* The namespace an hour ahead for the children to come: 0 or -1. */
static int children_an_hour_ahead(void)
{
	int w, ok;

	if (unshare(CLONE_NEWTIME) != 0) {
		say("no time namespace: %s", h_err(errno));
		return -1;
	}
	w = open("/proc/self/timens_offsets", O_WRONLY);
	ok = w >= 0 && dprintf(w, "monotonic 3600 0\n") > 0;
	say("offset of an hour written: %s", ok ? "yes" : "no");
	if (w >= 0)
		close(w);
	return 0;
}

/* The child in it, on fd, armed for 10 s; then the parent sees the
 * child's arming done. */
static int share_with_a_child_ahead(int fd)
{
	struct itimerspec cur;
	pid_t pid = fork();

	if (pid == 0)
		_exit(in_a_time_namespace(fd));
	say("child exit %d", reap(pid));
	say("parent: the child's arming is done: %s",
	    T_gettime(fd, &cur) == 0 && cur.it_value.tv_sec == 0 &&
	    cur.it_value.tv_nsec == 0 ? "yes" : "no");
	return T_close(fd) != 0;
}

HOST_CASE(child_in_a_time_namespace_shares_a_timer, H_NOVIRTUAL)
{
	int fd = h_timer(0, 10 * 1000, 0);

	if (children_an_hour_ahead() != 0)
		return T_close(fd) != 0;
	return share_with_a_child_ahead(fd);
}

/* The same, with the namespace made before the process's first timer
 * (as a container runtime does before it starts anything). */
HOST_CASE(time_namespace_made_before_the_first_timer, H_NOVIRTUAL)
{
	if (children_an_hour_ahead() != 0)
		return 0;
	return share_with_a_child_ahead(h_timer(0, 10 * 1000, 0));
}
