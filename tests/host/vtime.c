/* SPDX-License-Identifier: MIT */
/*
 * vtime.c - processes and threads around their timers, as virtual time
 * (tfd exec --backend virtual) must see them: a child that ends from a
 * worker thread, children reaped in the order they end, a child killed
 * in its sleep, system() and popen() beside a timer, a thread that ends
 * with pthread_exit(), a child stopped and continued, a timer at the end
 * of time.  The facts are the same natively and on virtual time; times
 * are never printed, only whether they are late enough.
 */
#include "host.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Under ThreadSanitizer an exit() with other threads running sleeps a
 * second first (its atexit_sleep_ms): the parent's watch is longer. */
#ifdef __SANITIZE_THREAD__
#define WATCH_MS 3000
#else
#define WATCH_MS 400
#endif

/* A shell's commands (vfork) on virtual time: not under ThreadSanitizer,
 * where the preload leaves vfork() to the C library (src/preload/
 * exports.c): each command runs unseen from its exec until its program
 * loads the library, which the sanitizer's start makes long, and time
 * moves meanwhile (tfd-preload(7), what is not covered). */
#ifdef __SANITIZE_THREAD__
#define SHELL_FLAGS H_NOVIRTUAL
#else
#define SHELL_FLAGS 0
#endif

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The status of a child as a word: "exit N", "signal N", or "?". */
static const char *status_text(int st)
{
	static char buf[32];

	if (WIFEXITED(st))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(st));
	else
		snprintf(buf, sizeof(buf), "?");
	return buf;
}

static const char *reap_text(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return "not reaped";
	return status_text(st);
}

/* ---- a child that ends from a worker thread ---- */

static int end_with_exit; /* exit() or _exit() */

static void *end_process(void *arg)
{
	(void)arg;
	h_sleep_ms(20);
	if (end_with_exit)
		exit(7);
	_exit(7);
}

/*
 * A child's worker thread ends the process after 20 ms while the child's
 * first thread waits (in pthread_join, a sleep of 5 s, a read of a timer
 * due in 5 s, a poll with no timeout); its parent meanwhile sleeps 50 ms
 * or reads a timer due in 50 ms, then reaps it and sleeps 10 ms again.
 * A timer of the parent's, due in 400 ms (WATCH_MS), shows that time did
 * not run to the child's 5 s meanwhile.  (Virtual time stood still for good once the
 * child was reaped, or ran to the child's deadline: the mover took the
 * first thread of a process on its way out for a thread still waiting.)
 */
static int worker_ends_child(void)
{
	static const char *const waits[] = { "join", "sleep", "timer read",
		                             "poll" };
	int w, p, bad = 0;

	for (w = 0; w < 4; w++) {
		for (p = 0; p < 2; p++) {
			int watch = h_timer(0, WATCH_MS, 0), fd;
			int64_t t0 = now_ns(CLOCK_MONOTONIC);
			pid_t pid = fork();
			long long n;

			if (pid == 0) {
				pthread_t th;
				struct pollfd pf = { -1, POLLIN, 0 };
				int mine = h_timer(0, 5000, 0), pfd[2];

				if (pipe(pfd) < 0 ||
				    pthread_create(&th, NULL, end_process,
				                   NULL) != 0)
					_exit(1);
				pf.fd = pfd[0];
				if (w == 0)
					pthread_join(th, NULL);
				else if (w == 1)
					h_sleep_ms(5000);
				else if (w == 2)
					h_read(mine);
				else
					poll(&pf, 1, -1);
				_exit(2);
			}
			if (p == 0) {
				h_sleep_ms(50);
			} else {
				fd = h_timer(0, 50, 0);
				n = h_read(fd);
				T_close(fd);
				if (n != 1)
					say("parent's timer read: %lld", n);
			}
			say("%s from a worker, child in %s, parent %s: %s",
			    end_with_exit ? "exit" : "_exit", waits[w],
			    p ? "reads a timer" : "sleeps", reap_text(pid));
			h_sleep_ms(10);
			n = h_count(watch);
			if (n != 0 ||
			    now_ns(CLOCK_MONOTONIC) - t0 < 60 * MS) {
				say("  then: watch timer %lld, %s", n,
				    now_ns(CLOCK_MONOTONIC) - t0 < 60 * MS
				            ? "early"
				            : "late enough");
				bad = 1;
			}
			T_close(watch);
		}
	}
	return bad;
}

/* Not under ThreadSanitizer: its _exit() sleeps a second first, and
 * natively the parent's 400 ms timer is then read late (the reference
 * itself differs). */
HOST_CASE(child_exit_from_worker, H_NOTSAN)
{
	end_with_exit = 1;
	return worker_ends_child();
}

HOST_CASE(child__exit_from_worker, H_NOTSAN)
{
	end_with_exit = 0;
	return worker_ends_child();
}

/* ---- a handler on the mover's signal ---- */

static volatile sig_atomic_t rtmax1_seen;

static void on_rtmax1(int sig)
{
	(void)sig;
	rtmax1_seen++;
}

/* A program's handler for SIGRTMAX-1, the signal virtual time's mover
 * knocks with: sigaction() tells it back, a sleep and a timer's read
 * after it end, and the handler never runs, as nobody sends the signal
 * (on virtual time it replaced the mover's handler and ran at each of
 * its knocks). */
HOST_CASE(handler_on_sigrtmax_minus_1, 0)
{
	struct sigaction sa, back;
	int fd;
	long long n;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_rtmax1;
	if (sigaction(SIGRTMAX - 1, &sa, NULL) ||
	    sigaction(SIGRTMAX - 1, NULL, &back)) {
		say("sigaction: %s", strerror(errno));
		return 1;
	}
	say("sigaction tells the handler back: %s",
	    back.sa_handler == on_rtmax1 ? "yes" : "no");
	h_sleep_ms(100);
	fd = h_timer(0, 50, 0);
	n = h_read(fd);
	T_close(fd);
	say("a sleep and a timer's read (%lld) after it end; the handler "
	    "ran %s", n, rtmax1_seen ? "(it was sent none)" : "never");
	return 0;
}

/* ---- twenty children ---- */

/* Twenty children sleep until 15 to 300 ms after their parent has
 * forked them all (in a shuffled order; the time is told through a pipe,
 * so that the time the forks take does not count) and exit; their parent,
 * reading a timer of 10 ms meanwhile, reaps them with wait().  Each is
 * reaped no earlier than its deadline, and in the order of the deadlines
 * wherever two lie 150 ms apart or more: real time may be late (natively,
 * on a loaded machine, two exits 15 ms apart swap), never early.  On
 * virtual time the order is exact, which this case cannot tell from a
 * late-free native run (tests/realprog's vtree holds virtual time to
 * one exact log of several processes, over 20 runs). */
HOST_CASE(twenty_children_reaped_in_order, 0)
{
	int64_t t0, due[20], reaped_due[20];
	pid_t pids[20];
	int i, j, st, fd, go[2], n = 0, early = 0, swapped = 0, odd = 0;

	if (pipe(go) < 0)
		return 1;
	for (i = 0; i < 20; i++)
		due[i] = 15 * MS * ((i * 7) % 20 + 1);
	for (i = 0; i < 20; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct timespec ts;
			int64_t at;

			if (read(go[0], &t0, sizeof(t0)) != sizeof(t0))
				_exit(100);
			at = t0 + due[i];
			ts.tv_sec = at / 1000000000;
			ts.tv_nsec = at % 1000000000;
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
			                       &ts, NULL) == EINTR)
				;
			_exit(i);
		}
	}
	fd = h_timer(0, 10, 0);
	t0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < 20; i++)
		if (write(go[1], &t0, sizeof(t0)) != sizeof(t0))
			return 1;
	say("parent's 10 ms timer: %lld", h_read(fd));
	for (i = 0; i < 20; i++) {
		pid_t got = wait(&st);
		int64_t at = now_ns(CLOCK_MONOTONIC) - t0;

		for (j = 0; j < 20 && pids[j] != got; j++)
			;
		if (j == 20 || !WIFEXITED(st) || WEXITSTATUS(st) != j) {
			odd++;
			continue;
		}
		early += at < due[j];
		reaped_due[n++] = due[j];
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			swapped += reaped_due[i] >= reaped_due[j] + 150 * MS;
	say("reaped %d as themselves, %d otherwise", n, odd);
	say("reaped before their deadline: %d", early);
	say("reaped after one due 150 ms or more later: %d", swapped);
	say("then wait(): %s", wait(&st) < 0 ? h_err(errno) : "a child");
	close(go[0]);
	close(go[1]);
	return T_close(fd) != 0;
}

/* ---- a child killed in its sleep ---- */

static void *read_forever(void *arg)
{
	h_read(*(int *)arg);
	return NULL;
}

/* A child sleeps 5 s (one thread, or with another thread in a read of a
 * timer due in 5 s); its parent kills it after 20 ms: it is reaped killed
 * before the parent's timer of 300 ms fires, which then fires. */
HOST_CASE(child_killed_while_sleeping, 0)
{
	int threads, bad = 0;

	for (threads = 1; threads <= 2; threads++) {
		int fd = h_timer(0, 300, 0);
		pid_t pid = fork();
		const char *how;

		if (pid == 0) {
			int mine = h_timer(0, 5000, 0);
			pthread_t th;

			if (threads == 2 &&
			    pthread_create(&th, NULL, read_forever, &mine) != 0)
				_exit(1);
			h_sleep_ms(5000);
			_exit(0);
		}
		h_sleep_ms(20);
		kill(pid, SIGKILL);
		how = reap_text(pid);
		say("%d thread%s: %s, the parent's timer then: %lld", threads,
		    threads > 1 ? "s" : "", how, h_count(fd));
		say("  its read: %lld", h_read(fd));
		bad |= T_close(fd) != 0;
	}
	return bad;
}

/* ---- system() and popen() ---- */

static int first_pipe, first_timer;

/* Which comes first: a word on the pipe, or the timer's expiry. */
static void *which_first(void *arg)
{
	struct pollfd p[2] = { { first_pipe, POLLIN, 0 },
		               { first_timer, POLLIN, 0 } };

	(void)arg;
	if (poll(p, 2, -1) < 0)
		return (void *)"error";
	if (p[0].revents && p[1].revents)
		return (void *)"both";
	return (void *)(p[0].revents ? "the command's word" : "the timer");
}

/* system("sleep 0.1") while a timer of 30 ms runs: the timer expired at
 * least 3 times meanwhile, and the time taken is at least 100 ms.  Then
 * system() of a command that writes to a pipe after a sleep of 50 ms,
 * while another thread polls the pipe and a timer due in 2 s: the word
 * comes first (time once moved on while the shell was on its way, and
 * the timer could come first).  The 2 s leave a shell started under a
 * sanitizer on a loaded machine its time on real time (at 200 ms, the
 * timer came first there once); the word ends the wait. */
HOST_CASE(system_sleep_beside_a_timer, SHELL_FLAGS)
{
	int fd = h_timer(0, 30, 30), st, pfd[2];
	int64_t t0 = now_ns(CLOCK_MONOTONIC), took;
	char cmd[64];
	pthread_t th;
	void *first;
	long long n;

	st = system("sleep 0.1");
	took = now_ns(CLOCK_MONOTONIC) - t0;
	n = h_count(fd);
	say("system: %s", status_text(st));
	say("took at least 100 ms: %s", took >= 100 * MS ? "yes" : "no");
	say("timer's expirations meanwhile: %s", n >= 3 ? "3 or more" : "fewer");
	T_close(fd);

	if (pipe(pfd) < 0)
		return 1;
	first_pipe = pfd[0];
	first_timer = fd = h_timer(0, 2000, 0);
	if (pthread_create(&th, NULL, which_first, NULL) != 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "sleep 0.05; echo x >&%d", pfd[1]);
	say("system: %s", status_text(system(cmd)));
	pthread_join(th, &first);
	say("first: %s", (const char *)first);
	close(pfd[0]);
	close(pfd[1]);
	return T_close(fd) != 0;
}

/* popen() of a shell that writes a line after a sleep of 50 ms: the line
 * comes after 50 ms, before the parent's timer of 400 ms. */
HOST_CASE(popen_child_writes_after_sleep, SHELL_FLAGS)
{
	int fd = h_timer(0, 400, 0);
	int64_t t0 = now_ns(CLOCK_MONOTONIC), took;
	char line[64] = "";
	FILE *f = popen("sleep 0.05; echo hello", "r");
	long long n;

	if (!f)
		return 1;
	if (!fgets(line, sizeof(line), f))
		strcpy(line, "(none)\n");
	took = now_ns(CLOCK_MONOTONIC) - t0;
	n = h_count(fd);
	say("line: %.*s", (int)strcspn(line, "\n"), line);
	say("after 50 ms: %s", took >= 50 * MS ? "yes" : "no");
	say("the 400 ms timer then: %lld", n);
	say("pclose: %s", status_text(pclose(f)));
	if (n == 0) /* (read already, it would block for ever) */
		say("the timer's read: %lld", h_read(fd));
	return T_close(fd) != 0;
}

/* ---- pthread_exit ---- */

static void *sleep_then_exit(void *arg)
{
	(void)arg;
	h_sleep_ms(10);
	pthread_exit((void *)7);
}

static void *read_timer(void *arg)
{
	return (void *)(intptr_t)h_read(*(int *)arg);
}

static int shared_fd;

static void *read_then_end_process(void *arg)
{
	long long n;

	(void)arg;
	n = h_read(shared_fd);
	say("child: the other thread's read: %lld", n);
	exit(n == 1 ? 5 : 6);
}

/* A thread ends with pthread_exit() after 10 ms while another reads a
 * timer due in 50 ms; then, in a child, the first thread ends with
 * pthread_exit() while another reads a timer and ends the process. */
HOST_CASE(pthread_exit_beside_a_timer_read, 0)
{
	/* t0 before the timer is armed, which its 50 ms count from (taken
	 * after, a read at the deadline came "before 50 ms" once, on a
	 * loaded machine, through the preload). */
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	int fd = h_timer(0, 50, 0);
	pthread_t a, b;
	void *ra, *rb;
	pid_t pid;

	if (pthread_create(&a, NULL, sleep_then_exit, NULL) != 0 ||
	    pthread_create(&b, NULL, read_timer, &fd) != 0)
		return 1;
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	say("pthread_exit value: %ld", (long)(intptr_t)ra);
	say("the other's read: %ld", (long)(intptr_t)rb);
	say("after 50 ms: %s",
	    now_ns(CLOCK_MONOTONIC) - t0 >= 50 * MS ? "yes" : "no");

	h_arm(fd, 30, 0);
	shared_fd = fd;
	pid = fork();
	if (pid == 0) {
		if (pthread_create(&a, NULL, read_then_end_process, NULL) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	say("child: %s", reap_text(pid));
	return T_close(fd) != 0;
}

/* ---- SIGSTOP, SIGCONT ---- */

/* The state letter of a thread (/proc/PID/task/TID/stat), or 0. */
static char task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
	         (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static char proc_state(pid_t pid)
{
	return task_state(pid, pid);
}

/* 1 if every thread of pid is asleep (S), but a first thread that has
 * ended (Z), and one is. */
static int all_asleep(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int asleep = 0, other = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir))) {
		char st;

		if (atoi(e->d_name) <= 0)
			continue;
		st = task_state(pid, atoi(e->d_name));
		asleep += st == 'S';
		other += st != 'S' && st != 'Z';
	}
	closedir(dir);
	return asleep && !other;
}

/*
 * A child sleeps 30 ms, writes a word to a pipe, and waits for its
 * parent to close another; the parent stops it once it is asleep, sleeps
 * 100 ms (the child's sleep ends meanwhile, stopped), finds the pipe
 * empty, continues it, and reads its word.  (Stopped while it was inside
 * a call of the library, the child would hold the lock of the timers it
 * shares with its parent: tfd(7), BUGS.  Hence the wait for its sleep;
 * and it exits only when told, so that the parent's wait sees it
 * continued, not ended.)
 */
HOST_CASE(child_stopped_and_continued, 0)
{
	int word[2], go[2], st, i, fd = h_timer(0, 500, 0);
	int64_t t0;
	char buf[16] = "";
	pid_t pid;

	if (pipe(word) < 0 || pipe(go) < 0)
		return 1;
	t0 = now_ns(CLOCK_MONOTONIC);
	pid = fork();
	if (pid == 0) {
		close(word[0]);
		close(go[1]);
		h_sleep_ms(30);
		dprintf(word[1], now_ns(CLOCK_MONOTONIC) - t0 >= 100 * MS
		                         ? "late"
		                         : "early");
		while (read(go[0], buf, 1) > 0)
			;
		_exit(0);
	}
	close(word[1]);
	close(go[0]);
	/* Asleep: blocked, the parent running (time stands still). */
	for (i = 0; i < 10000000 && !all_asleep(pid); i++)
		sched_yield();
	kill(pid, SIGSTOP);
	if (waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st))
		say("stopped by signal %d", WSTOPSIG(st));
	h_sleep_ms(100);
	say("pipe while stopped: %s", h_poll(word[0], 0) ? "readable" : "empty");
	kill(pid, SIGCONT);
	if (waitpid(pid, &st, WCONTINUED) == pid && WIFCONTINUED(st))
		say("continued");
	if (read(word[0], buf, sizeof(buf) - 1) < 0)
		return 1;
	say("child's word: %s (after it was continued)", buf);
	close(go[1]);
	say("child: %s", reap_text(pid));
	say("the 500 ms timer then: %lld", h_count(fd));
	close(word[0]);
	return T_close(fd) != 0;
}

/* ---- timers at the end of time ---- */

static int far_fd, far_how;
static pid_t far_child;
static pthread_mutex_t far_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t far_cond = PTHREAD_COND_INITIALIZER;
static int far_done;

/* Voluntary context switches: this process's, and on virtual time its
 * mover's (TFD_DOMAIN=pid:fd names it). */
static long wakeups(void)
{
	const char *dom = getenv("TFD_DOMAIN");
	struct rusage ru;
	long n = 0;

	getrusage(RUSAGE_SELF, &ru);
	if (dom) {
		char path[64], buf[4096], *p;
		ssize_t len;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/status", atoi(dom));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[len > 0 ? len : 0] = 0;
		p = strstr(buf, "\nvoluntary_ctxt_switches:");
		if (p)
			n = atol(p + 25);
	}
	return ru.ru_nvcsw + n;
}

static void *far_waiter(void *arg)
{
	struct pollfd p = { far_fd, POLLIN, 0 };
	struct timespec when = { 7258118400, 0 }; /* 2200 */
	int r = 0;

	(void)arg;
	if (far_how == 0) {
		r = h_read(far_fd) == 1;
	} else if (far_how == 1) {
		r = poll(&p, 1, -1) == 1;
	} else if (far_how == 2) {
		pthread_mutex_lock(&far_lock);
		while (!far_done && r != ETIMEDOUT)
			r = pthread_cond_timedwait(&far_cond, &far_lock, &when);
		r = far_done;
		pthread_mutex_unlock(&far_lock);
	} else {
		int st;

		r = waitpid(far_child, &st, 0) == far_child;
	}
	return (void *)(intptr_t)r;
}

/* Forks the child that reads far_fd, and returns once it is asleep in
 * its read: counted from its start, the child's first steps (slow under
 * a sanitizer) would count as the mover's looks. */
static pid_t far_fork(void)
{
	int go[2], i;
	char c;

	if (pipe(go) != 0)
		return -1;
	far_child = fork();
	if (far_child == 0) {
		close(go[0]);
		close(go[1]); /* "I read now" */
		_exit(h_read(far_fd) == 1 ? 0 : 1);
	}
	close(go[1]);
	while (read(go[0], &c, 1) < 0 && errno == EINTR)
		;
	close(go[0]);
	/* (at most 10 s; a child that ended, a zombie, asleep for ever) */
	for (i = 0; i < 10000 && far_child > 0 && !all_asleep(far_child) &&
	            proc_state(far_child) != 'Z';
	     i++)
		h_sleep_ms(1);
	return far_child;
}

/*
 * A thread waits for something due only at the end of time: a read, then
 * a poll, of a CLOCK_REALTIME timer armed TFD_TIMER_ABSTIME |
 * TFD_TIMER_CANCEL_ON_SET at 2200 or at the largest time there is, a
 * condition variable's wait until 2200, a wait for a child that reads
 * such a timer.  Meanwhile the first thread sleeps 150 ms for real (a
 * raw system call: no virtual time): the waiter is woken a few times at
 * most (on Linux, never), then ends when the timer is armed to expire at
 * once, the condition signalled, the child killed.  (On virtual time the
 * wait for a child woke every millisecond, and the condition's wait every
 * millisecond too, with the mover each time: time has no end to move to,
 * and the waits looked again and again.)  "Few" is under 75, half that:
 * the wait for a child looks again by itself (1 ms after it began, then
 * twice as long each time up to 64 ms: iowaits.c), and with the mover's
 * looks that case counts 17-24 wake-ups here on a quiet machine, up to
 * 35 under load or a sanitizer (the others 3-14), once the child is
 * asleep in its read.  Three windows at most: a waiter that wakes every
 * millisecond does so in each, where under ThreadSanitizer, whose
 * signals come late, the mover's pokes and the waits' looks can chase
 * each other for a while (1 run in 40 of the case counted 119).
 */
HOST_CASE(far_timers_wait_quietly, 0)
{
	static const char *const names[] = {
		"read of a timer due in 2200", "poll of a timer due at the end",
		"condition variable until 2200", "waitpid of a child reading one"
	};
	int how;

	for (how = 0; how < 4; how++) {
		struct itimerspec far = { { 0, 0 }, { 7258118400, 0 } };
		pthread_t th;
		void *ended;
		long w0;
		int few, i;

		if (how == 1)
			far.it_value.tv_sec = (time_t)((~0ULL) >> 1);
		far_how = how;
		far_done = 0;
		far_fd = T_create(CLOCK_REALTIME, 0);
		if (far_fd < 0 ||
		    T_settime(far_fd, T_ABSTIME | T_CANCEL_ON_SET, &far, NULL))
			return 1;
		if (how == 3 && far_fork() < 0)
			return 1;
		if (pthread_create(&th, NULL, far_waiter, NULL) != 0)
			return 1;
		h_sleep_ms(10); /* it waits */
		for (few = 0, i = 0; i < 3 && !few; i++) {
			/* (ppoll writes the time left back: the whole
			 * 150 ms, through any signal) */
			struct timespec real = { 0, 150 * MS };

			w0 = wakeups();
			while (syscall(SYS_ppoll, NULL, 0, &real, NULL, 8) < 0 &&
			       errno == EINTR)
				;
			few = wakeups() - w0 < 75;
		}
		say("%s: wake-ups in 150 ms: %s", names[how],
		    few ? "few" : "many");
		if (how < 2) {
			h_arm(far_fd, 1, 0);
		} else if (how == 2) {
			pthread_mutex_lock(&far_lock);
			far_done = 1;
			pthread_cond_signal(&far_cond);
			pthread_mutex_unlock(&far_lock);
		} else {
			kill(far_child, SIGKILL);
		}
		pthread_join(th, &ended);
		say("  then it ended: %s", ended ? "yes" : "no");
		if (T_close(far_fd) != 0)
			return 1;
	}
	return 0;
}

/* ---- a timed wait on a condition, waited in real slices ---- */

static pthread_mutex_t hour_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hour_cond = PTHREAD_COND_INITIALIZER;
static int hour_done;

static void *hour_waiter(void *arg)
{
	struct timespec when;
	int r = 0;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &when);
	when.tv_sec += 3600;
	pthread_mutex_lock(&hour_lock);
	while (!hour_done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&hour_cond, &hour_lock, &when);
	r = hour_done;
	pthread_mutex_unlock(&hour_lock);
	return (void *)(intptr_t)r;
}

/* The real CLOCK_MONOTONIC, past the preload (a raw system call). */
static int64_t real_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * A thread waits on a condition variable for an hour while the first
 * thread computes for 150 ms (on virtual time, time stands, then flows
 * with it: the hour is not reached), then signals it.  The waiter uses
 * little CPU meanwhile, as on Linux.  Virtual time waits in real slices,
 * whose ends the library once read on the virtual clock: once that clock
 * was behind the real one, each slice timed out at once and the waiter
 * spun.  On virtual time, the first thread first sleeps 1.1 s for real
 * (a raw system call, nothing due: time stands), which puts the virtual
 * clock behind (it starts less than a second ahead).
 */
HOST_CASE(condition_wait_uses_no_cpu, 0)
{
	struct timespec c0, c1, behind = { 1, 100 * MS };
	clockid_t cpu;
	pthread_t th;
	void *ended;
	int64_t end;

	if (getenv("TFD_DOMAIN"))
		syscall(SYS_ppoll, NULL, 0, &behind, NULL, 8);
	if (pthread_create(&th, NULL, hour_waiter, NULL) != 0 ||
	    pthread_getcpuclockid(th, &cpu) != 0)
		return 1;
	h_sleep_ms(10); /* it waits */
	clock_gettime(cpu, &c0);
	end = real_ns() + 150 * MS;
	while (real_ns() < end)
		;
	clock_gettime(cpu, &c1);
	say("the waiter's CPU in 150 ms: %s",
	    (c1.tv_sec - c0.tv_sec) * 1000 * MS + c1.tv_nsec - c0.tv_nsec <
	                    30 * MS
	            ? "little"
	            : "much");
	pthread_mutex_lock(&hour_lock);
	hour_done = 1;
	pthread_cond_signal(&hour_cond);
	pthread_mutex_unlock(&hour_lock);
	pthread_join(th, &ended);
	say("then it was signalled: %s", ended ? "yes" : "no");
	return 0;
}

/* ---- a timed wait whose mutex is held past its deadline ---- */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cond = PTHREAD_COND_INITIALIZER;
static int held_signals;

static void *hold_a_second(void *arg)
{
	(void)arg;
	h_sleep_ms(10);
	pthread_mutex_lock(&held_lock);
	if (held_signals)
		pthread_cond_signal(&held_cond);
	h_sleep_ms(1000);
	pthread_mutex_unlock(&held_lock);
	return NULL;
}

/*
 * A condition variable's wait of 100 ms, while another thread takes the
 * mutex at 10 ms (and signals, or not) and holds it for a second: the
 * wait returns (ETIMEDOUT, or 0 when signalled) only once it has the
 * mutex back, after the second, as on Linux.  On virtual time the mover
 * poked the wait at its deadline, then waited for it for ever: the wait,
 * blocked for the mutex, was due and never ran, and time never reached
 * the end of the holder's sleep.
 */
HOST_CASE(condition_timeout_while_mutex_held, 0)
{
	for (held_signals = 0; held_signals < 2; held_signals++) {
		struct timespec until;
		pthread_t th;
		int64_t t0;
		int r;

		pthread_mutex_lock(&held_lock);
		if (pthread_create(&th, NULL, hold_a_second, NULL) != 0)
			return 1;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * MS;
		if (until.tv_nsec >= 1000 * MS) {
			until.tv_sec++;
			until.tv_nsec -= 1000 * MS;
		}
		t0 = now_ns(CLOCK_MONOTONIC);
		r = pthread_cond_timedwait(&held_cond, &held_lock, &until);
		say("%s: %s, once the mutex was let go: %s",
		    held_signals ? "signalled" : "not signalled",
		    r == 0 ? "0" : r == ETIMEDOUT ? "ETIMEDOUT" : "other",
		    now_ns(CLOCK_MONOTONIC) - t0 >= 1010 * MS ? "yes" : "no");
		pthread_mutex_unlock(&held_lock);
		pthread_join(th, NULL);
	}
	return 0;
}

/* ---- a stopped process whose first thread has ended ---- */

static int alone_pipe;
static int64_t alone_t0;

static void *sleep_then_report(void *arg)
{
	(void)arg;
	h_sleep_ms(300);
	dprintf(alone_pipe, "%s", now_ns(CLOCK_MONOTONIC) - alone_t0 >= 600 * MS
	                                  ? "late"
	                                  : "early");
	exit(0);
}

/* The same stop and continue, in a child whose first thread has ended
 * (pthread_exit) while another sleeps 300 ms: its first thread a zombie,
 * the stop is the other's: stopped for 600 ms, its word comes after that
 * ("late"), never while it is stopped.  (With a 30 ms sleep the parent
 * stopped it too late in a ThreadSanitizer build on a loaded machine.) */
HOST_CASE(child_stopped_after_pthread_exit, 0)
{
	int pfd[2], st, i;
	char buf[16] = "";
	pid_t pid;

	if (pipe(pfd) < 0)
		return 1;
	alone_t0 = now_ns(CLOCK_MONOTONIC);
	pid = fork();
	if (pid == 0) {
		pthread_t th;

		close(pfd[0]);
		alone_pipe = pfd[1];
		if (pthread_create(&th, NULL, sleep_then_report, NULL) != 0)
			_exit(1);
		pthread_exit(NULL);
	}
	close(pfd[1]);
	/* Its first thread has ended, the other is asleep. */
	for (i = 0; i < 10000000 && !(proc_state(pid) == 'Z' && all_asleep(pid));
	     i++)
		sched_yield();
	kill(pid, SIGSTOP);
	if (waitpid(pid, &st, WUNTRACED) == pid && WIFSTOPPED(st))
		say("stopped by signal %d", WSTOPSIG(st));
	h_sleep_ms(600);
	say("pipe while stopped: %s", h_poll(pfd[0], 0) ? "readable" : "empty");
	kill(pid, SIGCONT);
	if (read(pfd[0], buf, sizeof(buf) - 1) < 0)
		return 1;
	say("its word: %s", buf);
	say("child: %s", reap_text(pid));
	close(pfd[0]);
	return 0;
}

/* A poll that succeeds leaves errno alone, as the system call does: on
 * virtual time the look at its sockets (is the peer outside the tree?)
 * asked getpeername() of a listening socket and left ENOTCONN there
 * (found by review).  A listening socket, an unconnected one, and a pipe
 * that is ready. */
HOST_CASE(poll_on_sockets_keeps_errno, 0)
{
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int us = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), p[2], r;
	struct pollfd fds[3];

	if (ls < 0 || us < 0 || listen(ls, 1) < 0 || pipe(p) < 0 ||
	    write(p[1], "x", 1) != 1) {
		say("setup: %s", strerror(errno));
		return 1;
	}
	fds[0] = (struct pollfd){ ls, POLLIN, 0 };
	fds[1] = (struct pollfd){ us, POLLIN, 0 };
	fds[2] = (struct pollfd){ p[0], POLLIN, 0 };
	errno = 0;
	r = poll(fds, 3, 1000);
	say("poll: %d ready, errno %s", r, errno ? strerror(errno) : "0");
	errno = 0;
	r = poll(fds, 2, 10);
	say("poll with nothing ready: %d, errno %s", r,
	    errno ? strerror(errno) : "0");
	close(ls);
	close(us);
	close(p[0]);
	close(p[1]);
	return 0;
}
