/* SPDX-License-Identifier: MIT */
/*
 * lifetime.c - how processes end and what they unload around their timers:
 * a plugin that uses timers and is dlclose()d, then loaded again; a first
 * thread that ends with pthread_exit() before the others; exit() while a
 * thread reads a timer; atexit handlers and destructors that close timers;
 * quick_exit() and _exit(); 10000 timers that leave nothing behind; a
 * descriptor limit of 4 to 10; a program that closes every descriptor.
 */
#include "host.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifdef HOST_LIB
#define PLUGIN "plugin-lib.so"           /* linked with libtfd.so */
#define PLUGIN_STATIC "plugin-static.so" /* the library's objects in it */
#else
#define PLUGIN "plugin-timerfd.so" /* glibc's timerfd_*: Linux, or the
                                    * preload under tfd exec */
#define PLUGIN_STATIC PLUGIN
#endif

/* ThreadSanitizer's runtime runs a thread of its own, which the C library
 * counts: a process whose other threads have all ended stays, natively
 * too.  The cases of that are skipped under it. */
#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifndef TSAN
#define TSAN 0
#endif

#define SKIP_UNDER_TSAN()                                                   \
	do {                                                                \
		if (TSAN) {                                                 \
			say("skipped: a thread of ThreadSanitizer's");      \
			return 0;                                           \
		}                                                           \
	} while (0)

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- plugins ---- */

/* Plugin name, from the folder this program is in. */
static void *plugin_load(const char *name)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;
	void *h;

	if (n <= 0)
		return NULL;
	path[n] = 0;
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash + 1 - path) + strlen(name) >= sizeof(path))
		return NULL;
	strcpy(slash + 1, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fprintf(stderr, "%s\n", dlerror());
	return h;
}

/* The count of a timer the plugin made (on host-lib, a timer of another
 * copy of the library: plain read(2)). */
static long long plain_read(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return -errno;
	return (long long)n;
}

/* Twice: load the plugin (whose constructor makes, reads and closes a
 * timer), have it make, read and close a timer and leave one open, unload it, let the library's threads outlive the timers they
 * served (they stay 0.2 s: tfd(7)), read the timer it left. */
static void plugin_rounds(const char *name)
{
	int round;

	for (round = 1; round <= 2; round++) {
		void *h = plugin_load(name);
		int (*run)(long, long long *);
		int (*open_one)(long);
		long long (*loaded)(void);
		long long n = 0;
		int r, fd;

		if (!h) {
			say("round %d: dlopen failed", round);
			return;
		}
		*(void **)&run = dlsym(h, "plugin_run");
		*(void **)&open_one = dlsym(h, "plugin_open");
		*(void **)&loaded = dlsym(h, "plugin_loaded");
		say("round %d: its constructor's timer read %lld", round,
		    loaded());
		r = run(5, &n);
		say("round %d: the plugin's timer read %lld (%s)", round, n,
		    r ? h_err(r) : "no error");
		fd = open_one(20);
		say("round %d: it left one open: %s", round,
		    fd >= 0 ? "yes" : h_err(fd));
		say("round %d: dlclose: %d", round, dlclose(h));
		h_sleep_ms(400);
		say("round %d: that one, read after dlclose: %lld", round,
		    plain_read(fd));
		close(fd);
	}
	say("the host lives on");
}

HOST_CASE(plugin_dlclose, 0)
{
	plugin_rounds(PLUGIN);
	return 0;
}

/* host-lib: a plugin with the library linked into itself.  host loads
 * the plugin above: the preload's runs would be plugin_dlclose's. */
HOST_CASE(plugin_static_dlclose, H_NOPRELOAD)
{
	plugin_rounds(PLUGIN_STATIC);
	return 0;
}

/* ---- a first thread that ends first ---- */

static int worker_fd = -1;

static void atexit_says(void)
{
	say("atexit: ran");
}

static void *read_then_return(void *arg)
{
	(void)arg;
	say("worker: read %lld", h_read(worker_fd));
	return NULL;
}

static void *read_close_then_exit(void *arg)
{
	(void)arg;
	say("worker: read %lld", h_read(worker_fd));
	say("worker: close %d", T_close(worker_fd));
	pthread_exit(NULL);
}

static void *make_read_then_return(void *arg)
{
	(void)arg;
	h_sleep_ms(20); /* the first thread has ended */
	worker_fd = h_timer(0, 10, 0);
	say("worker: a first timer, read %lld", h_read(worker_fd));
	return NULL; /* left open */
}

/* The first thread starts a worker running fn, then ends with
 * pthread_exit(); before, when timed, it makes worker_fd, a timer due in
 * 30 ms. */
static int first_thread_ends(void *(*fn)(void *), int timed)
{
	pthread_t th;

	SKIP_UNDER_TSAN();
	atexit(atexit_says);
	if (timed)
		worker_fd = h_timer(0, 30, 0);
	say("first thread: ends");
	pthread_create(&th, NULL, fn, NULL);
	pthread_exit(NULL);
}

/* The first thread ends with pthread_exit() while a worker reads a timer;
 * the worker's end ends the process, as the last thread's does: exit(0),
 * with the atexit handlers. */
HOST_CASE(first_thread_ends_first, 0)
{
	return first_thread_ends(read_then_return, 1);
}

/* The same, the worker closing the timer and ending with pthread_exit()
 * (the library's threads then stay a moment: tfd(7)). */
HOST_CASE(first_thread_ends_last_closes, 0)
{
	return first_thread_ends(read_close_then_exit, 1);
}

/* The first thread, the only one of the program's, ends with a periodic
 * timer open: the process ends with it.  The read counts 1 or more: the
 * periods that pass before it starts are real time's. */
HOST_CASE(first_thread_ends_alone, 0)
{
	long long n;

	SKIP_UNDER_TSAN();
	atexit(atexit_says);
	worker_fd = h_timer(0, 10, 10);
	n = h_read(worker_fd);
	say("first thread: read %s, ends", n >= 1 ? "1 or more" : h_err(-n));
	pthread_exit(NULL);
}

/* The process's first timer is made after its first thread ended. */
HOST_CASE(first_thread_ends_before_any_timer, 0)
{
	return first_thread_ends(make_read_then_return, 0);
}

static void *fork_child_ends_first(void *arg)
{
	pthread_t th;
	pid_t pid;

	(void)arg;
	pid = fork();
	if (pid == 0) {
		/* Here this thread is the child's first. */
		worker_fd = h_timer(0, 20, 0);
		pthread_create(&th, NULL, read_then_return, NULL);
		pthread_exit(NULL);
	}
	say("child: exit %d", reap(pid));
	return NULL;
}

/* A thread other than the first forks, with a timer open; in the child,
 * it ends first with pthread_exit(), the child's worker after it. */
HOST_CASE(forked_first_thread_ends_first, 0)
{
	pthread_t th;
	int fd;

	SKIP_UNDER_TSAN();
	fd = h_timer(0, 1000, 0);
	pthread_create(&th, NULL, fork_child_ends_first, NULL);
	pthread_join(th, NULL);
	say("parent: close %d", T_close(fd));
	return 0;
}

/* ---- exits ---- */

static void *read_forever(void *arg)
{
	long long n = h_read(*(int *)arg);

	say("reader: woke with %lld (never)", n);
	return NULL;
}

/* exit() while other threads are blocked reading a timer. */
HOST_CASE(exit_while_reading, 0)
{
	static int fd[2];
	pthread_t th;

	fd[0] = h_timer(0, 100000, 0);
	fd[1] = h_timer(0, 100000, 0);
	pthread_create(&th, NULL, read_forever, &fd[0]);
	pthread_create(&th, NULL, read_forever, &fd[1]);
	h_sleep_ms(30);
	say("exit(3) with two readers blocked");
	exit(3);
}

static void *exit_soon(void *arg)
{
	(void)arg;
	h_sleep_ms(30);
	say("worker: exit(4) while the first thread reads");
	exit(4);
}

/* exit() from another thread while the first is blocked reading a timer. */
HOST_CASE(exit_from_thread_while_reading, 0)
{
	pthread_t th;
	int fd = h_timer(0, 100000, 0);

	pthread_create(&th, NULL, exit_soon, NULL);
	say("first thread: read %lld (never)", h_read(fd));
	return 0;
}

static int ax_fd[3] = { -1, -1, -1 };

static void atexit_closes(void)
{
	struct itimerspec its;
	int fd;

	say("atexit: the expired one reads %lld", h_count(ax_fd[0]));
	say("atexit: close %d %d %d", T_close(ax_fd[0]), T_close(ax_fd[1]),
	    T_close(ax_fd[2]));
	say("atexit: gettime on a closed one: %s",
	    T_gettime(ax_fd[1], &its) < 0 ? h_err(errno) : "no error");
	fd = h_timer(0, 5, 0);
	say("atexit: a new timer reads %lld", h_read(fd));
	say("atexit: close %d", T_close(fd));
}

/* atexit handlers that read, close and make timers. */
HOST_CASE(atexit_closes_timers, 0)
{
	ax_fd[0] = h_timer(0, 10, 0);
	ax_fd[1] = h_timer(0, 5, 5);
	ax_fd[2] = T_create(CLOCK_MONOTONIC, 0);
	atexit(atexit_closes);
	h_sleep_ms(40);
	say("main returns 5");
	return 5;
}

static int dtor_fd = -1;

/* The program's destructor, at every exit: acts when a case set dtor_fd. */
__attribute__((destructor)) static void destructor_closes(void)
{
	if (dtor_fd < 0)
		return;
	say("destructor: read %lld", h_read(dtor_fd));
	say("destructor: close %d", T_close(dtor_fd));
	say("destructor: read again: %s", h_err((int)h_read(dtor_fd)));
}

HOST_CASE(destructor_closes_timer, 0)
{
	dtor_fd = h_timer(0, 10, 0);
	say("main returns 0");
	return 0;
}

static void quick_says(void)
{
	say("at_quick_exit: ran");
}

static void atexit_never(void)
{
	say("atexit: ran (it must not)");
}

/* Two timers open, a periodic one and one that a thread is blocked
 * reading, and an atexit handler that must not run.  (The reader's timer
 * is disarmed: ThreadSanitizer's _exit() sleeps a second, on virtual time
 * one in which time may move.) */
static void timers_and_a_blocked_reader(void)
{
	static int fd;
	pthread_t th;

	fd = T_create(CLOCK_MONOTONIC, 0);
	h_timer(0, 1, 1);
	atexit(atexit_never);
	pthread_create(&th, NULL, read_forever, &fd);
	h_sleep_ms(30);
}

/* quick_exit() with timers open and a reader blocked: at_quick_exit
 * handlers run, atexit ones do not. */
HOST_CASE(quick_exit_with_timers, 0)
{
	at_quick_exit(quick_says);
	timers_and_a_blocked_reader();
	say("quick_exit(6)");
	quick_exit(6);
}

/* _exit() with timers open and a reader blocked: nothing runs. */
HOST_CASE(underscore_exit_with_timers, 0)
{
	timers_and_a_blocked_reader();
	say("_exit(7)");
	_exit(7);
}

/* ---- what is left ---- */

/* Entries of a folder of /proc (its "." and ".." not counted), or -1. */
static int entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* 10000 timers made and closed, one at a time and 100 at a time: the
 * program's table holds one descriptor per open timer, and none once they
 * are closed. */
HOST_CASE(ten_thousand_timers_leave_no_descriptor, 0)
{
	int before = entries("/proc/self/fd"), fd[100], i, k, bad = 0;

	for (i = 0; i < 5000; i++) {
		int one = h_timer(0, i % 2 ? 1000 : 0, 0);

		if (one < 0 || T_close(one) != 0)
			bad++;
	}
	say("one at a time, 5000: %d failed", bad);
	for (k = 0; k < 50; k++) {
		for (i = 0; i < 100; i++)
			fd[i] = h_timer(0, i % 3 ? 1000 : 0, i % 3 == 1 ? 1000 : 0);
		if (k == 0)
			say("100 open: %d more descriptors",
			    entries("/proc/self/fd") - before);
		for (i = 0; i < 100; i++)
			if (fd[i] < 0 || T_close(fd[i]) != 0)
				bad++;
	}
	say("100 at a time, 5000: %d failed", bad);
	say("descriptors now: %d more than before",
	    entries("/proc/self/fd") - before);
	return 0;
}

/* tfd(7): the library's threads end 0.2 s after the last timer is closed;
 * none is left.  Not on virtual time, where a process's agent, started
 * with its first armed timer, stays (tfd-preload(7)). */
static void *nothing(void *arg)
{
	return arg;
}

HOST_CASE(last_close_ends_our_threads, H_NOVIRTUAL)
{
	int before, fd[10], i, waited;
	pthread_t th;

	/* A sanitizer's runtime starts a thread of its own with the first
	 * other thread: it is there before counting. */
	pthread_create(&th, NULL, nothing, NULL);
	pthread_join(th, NULL);
	before = entries("/proc/self/task");

	for (i = 0; i < 10; i++)
		fd[i] = h_timer(0, 5, 5);
	say("10 timers read %s", h_read(fd[9]) >= 1 ? ">= 1" : "nothing");
	for (i = 0; i < 10; i++)
		T_close(fd[i]);
	for (waited = 0; waited < 3000; waited += 10) {
		if (entries("/proc/self/task") == before)
			break;
		h_sleep_ms(10);
	}
	say("threads: as many as before within 3 s: %s",
	    waited < 3000 ? "yes" : "no");
	return 0;
}

/* RLIMIT_NOFILE of 4 to 10: timers until EMFILE, where Linux says it; a
 * close makes room for one more.  The limit is lowered and raised again
 * in the process itself, which keeps what it made meanwhile. */
HOST_CASE(nofile_limit_4_to_10, 0)
{
	struct rlimit rl, low;
	int lim, fd[16], n, i, e, again;

	getrlimit(RLIMIT_NOFILE, &rl);
	for (lim = 4; lim <= 10; lim++) {
		low = rl;
		low.rlim_cur = lim;
		if (setrlimit(RLIMIT_NOFILE, &low) != 0)
			return 2;
		for (n = 0; n < 16 && (fd[n] = h_timer(0, 5, 0)) >= 0; n++)
			;
		e = errno;
		if (n == 0) {
			say("limit %d: no timer: %s", lim, h_err(e));
			setrlimit(RLIMIT_NOFILE, &rl);
			continue;
		}
		say("limit %d: %d timers, then %s; the first reads %lld", lim,
		    n, h_err(e), h_read(fd[0]));
		T_close(fd[--n]);
		again = h_timer(0, 5, 0);
		say("limit %d: after a close, one more: %s, reads %lld", lim,
		    again >= 0 ? "yes" : h_err(errno),
		    again >= 0 ? h_read(again) : 0);
		if (again >= 0)
			T_close(again);
		for (i = 0; i < n; i++)
			T_close(fd[i]);
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	return 0;
}

/* A program that closes every descriptor from 3 to 1023 (as a daemon
 * does), with T_close, which on host-lib is tfd_close (close(2) on what
 * is not a timer): its timers are gone, EBADF, and a new one takes 3. */
HOST_CASE(close_loop_then_timers, 0)
{
	struct itimerspec its;
	uint64_t n;
	int fd[3], i, nfd;

	for (i = 0; i < 3; i++)
		fd[i] = h_timer(0, 5, i == 1 ? 5 : 0);
	h_sleep_ms(20);
	for (i = 3; i < 1024; i++)
		T_close(i);
	for (i = 0; i < 3; i++) {
		say("timer %d: settime %s", i,
		    h_arm(fd[i], 5, 0) < 0 ? h_err(errno) : "no error");
		say("timer %d: gettime %s", i,
		    T_gettime(fd[i], &its) < 0 ? h_err(errno) : "no error");
		say("timer %d: read %s", i,
		    T_read(fd[i], &n, sizeof(n)) < 0 ? h_err(errno) : "a count");
	}
	nfd = h_timer(0, 5, 0);
	say("a new timer takes 3: %s, reads %lld", nfd == 3 ? "yes" : "no",
	    h_read(nfd));
	return T_close(nfd) != 0;
}

/* The same with close(2) and closefrom(3) themselves.  Not on host-lib:
 * the library does not see a plain close of its numbers (tfd(7),
 * NOTES 5). */
HOST_CASE(closefrom_then_timers, H_NOLIB)
{
	struct itimerspec its;
	int fd[2], i, nfd;

	for (i = 0; i < 2; i++)
		fd[i] = h_timer(0, 5, 5);
	for (i = 3; i < 1024; i++)
		close(i);
	say("after close(): settime %s, gettime %s",
	    h_arm(fd[0], 5, 0) < 0 ? h_err(errno) : "no error",
	    T_gettime(fd[1], &its) < 0 ? h_err(errno) : "no error");
	for (i = 0; i < 2; i++)
		fd[i] = h_timer(0, 5, 5);
	closefrom(3);
	say("after closefrom(): read %s", h_err((int)h_read(fd[0])));
	say("after closefrom(): gettime %s",
	    T_gettime(fd[1], &its) < 0 ? h_err(errno) : "no error");
	nfd = h_timer(0, 5, 0);
	say("a new timer takes 3: %s, reads %lld", nfd == 3 ? "yes" : "no",
	    h_read(nfd));
	return T_close(nfd) != 0;
}

/* Fork handlers the program registers before its first timer, that use
 * the timer: in the prepare handler, the parent's, and the child's. */
static int atfork_fd = -1;

static void atfork_use(const char *who)
{
	struct itimerspec cur;

	if (atfork_fd >= 0 && T_gettime(atfork_fd, &cur) == 0)
		say("%s handler: gettime ok, armed: %s", who,
		    cur.it_value.tv_sec || cur.it_value.tv_nsec ? "yes" : "no");
}

static void atfork_prepare(void)
{
	atfork_use("prepare");
}

static int atfork_parent_ok;

static void atfork_parent(void) /* said after the child's */
{
	struct itimerspec cur;

	atfork_parent_ok = atfork_fd >= 0 && T_gettime(atfork_fd, &cur) == 0;
}

static void atfork_child(void)
{
	atfork_use("child");
}

/* Not in a ThreadSanitizer build, where the library registers its fork
 * handlers at the first timer (src/engine/fork.c). */
HOST_CASE(atfork_handlers_before_the_first_timer_use_it, H_NOTSAN)
{
	pid_t pid;
	int st;

	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	atfork_fd = h_timer(0, 3600 * 1000, 0);
	pid = fork();
	if (pid == 0) {
		say("child read after fork: %s", h_err(-h_count(atfork_fd)));
		_exit(0);
	}
	waitpid(pid, &st, 0);
	say("child exit: %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	say("parent handler: gettime %s", atfork_parent_ok ? "ok" : "failed");
	atfork_fd = -1;
	return 0;
}
