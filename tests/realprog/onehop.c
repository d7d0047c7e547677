/* SPDX-License-Identifier: MIT */
/*
 * onehop - what the delivery in one hop guarantees, counted (tfd(7),
 * Delivery): an event loop that re-arms one timer 0.1-0.6 ms ahead, waits
 * in epoll_wait (level-triggered) and reads it, 1,000 times, as a program
 * using glibc's timerfd does.  Run through libtfd-preload.so on the
 * engine (tests/realprog/run.sh), it must be exact (every read counts 1,
 * none comes before its deadline) and cost what the design says, whatever
 * the machine's load: the program's thread makes no more system calls
 * than iterations plus a few (its epoll waits: settime and read touch
 * memory only), it waits once an iteration, and no other thread of the
 * process wakes.  Then a burst: 2,000 timers in one epoll set, armed at
 * one deadline, read as epoll_wait reports them, 256 at a time: each read
 * once and not early, in fewer system calls than a tenth of the timers
 * (arm and read touch memory only, a wait reports dozens), whatever the
 * number of timers in the set.  Last, a non-blocking timer polled by
 * read(2): no system call while nothing is due, and the read that counts
 * not before the deadline.  Each line is
 * "ok" or "FAIL"; the exit status is the count of FAILs.  System calls
 * are counted with perf_event_open(2) on the raw_syscalls:sys_enter
 * tracepoint, where the kernel lets it be read (else that line says
 * "skip"); switches from /proc/self/task.
 *
 *   onehop [ITERATIONS [TIMERS]]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int fails;

static void judge(int good, const char *what)
{
	printf("%s %s\n", good ? "ok  " : "FAIL", what);
	fails += !good;
}

/* The context switches of the thread tid: voluntary ones (it waited),
 * and with all, the others too (it was preempted: on a loaded machine,
 * not its doing). */
static long switches(const char *tid, int all)
{
	char path[64], line[128];
	long n = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    (all &&
		     sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1))
			n += v;
	fclose(f);
	return n;
}

/* Of the threads other than this one (the library's, under the preload). */
static long others(void)
{
	char me[16];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	long n = 0;

	snprintf(me, sizeof(me), "%d", (int)gettid());
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, me) != 0)
			n += switches(e->d_name, 1);
	if (d)
		closedir(d);
	return n;
}

/* A counter of this thread's system calls, or -1. */
static int syscall_counter(void)
{
	static const char *const ids[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	struct perf_event_attr a;
	unsigned long long id = 0;
	unsigned i;

	for (i = 0; i < 2 && !id; i++) {
		FILE *f = fopen(ids[i], "r");

		if (f && fscanf(f, "%llu", &id) != 1)
			id = 0;
		if (f)
			fclose(f);
	}
	if (!id)
		return -1;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = id;
	a.disabled = 1;
	a.exclude_kernel = 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0UL);
}

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The library's threads switched no more than a few times, and the
 * calls counted (-1: not counted) were at most most. */
static void judge_quiet(const char *prefix, long switched, long long calls,
                        long long most, const char *calls_what)
{
	char what[128];

	snprintf(what, sizeof(what), "%sthe library's threads switched %ld "
	         "times", prefix, switched);
	judge(switched <= 4, what);
	if (calls < 0)
		printf("skip %ssystem calls not counted (no tracepoint to "
		       "read)\n", prefix);
	else
		judge(calls <= most, calls_what);
}

static void counting(int pc, int on)
{
	if (pc < 0)
		return;
	if (on)
		ioctl(pc, PERF_EVENT_IOC_RESET, 0);
	ioctl(pc, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static long long counted(int pc)
{
	uint64_t n;

	return pc >= 0 && read(pc, &n, sizeof(n)) == sizeof(n) ? (long long)n
	                                                       : -1;
}

/* n timers in one set, armed at one deadline 50 ms ahead, read as the
 * waits report them. */
static void burst(int n, int pc)
{
	struct rlimit rl;
	struct epoll_event ev[256];
	int *fd = calloc((size_t)n, sizeof(int)), ep, i, r, got = 0, early = 0;
	int64_t due;
	long sw0;
	long long calls;
	char what[128];

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)n + 64 ? rl.rlim_max
		                                           : (rlim_t)n + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; fd && ep >= 0 && i < n; i++) {
		struct epoll_event e = { EPOLLIN, { .u32 = (uint32_t)i } };

		fd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (fd[i] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e) < 0)
			break;
	}
	if (!fd || ep < 0 || i < n) {
		printf("skip burst: %d timers not made (%s)\n", n,
		       strerror(errno));
		return;
	}
	epoll_wait(ep, ev, 1, 0); /* (a first look) */
	sw0 = others();
	counting(pc, 1);
	due = mono() + 50000000;
	for (i = 0; i < n; i++) {
		struct itimerspec its = {
			.it_value = { due / 1000000000, due % 1000000000 }
		};

		timerfd_settime(fd[i], TFD_TIMER_ABSTIME, &its, NULL);
	}
	while (got < n && (r = epoll_wait(ep, ev, 256, 5000)) > 0)
		for (i = 0; i < r; i++) {
			uint64_t c;

			if (read(fd[ev[i].data.u32], &c, sizeof(c)) ==
			    sizeof(c)) {
				got += c == 1;
				early += mono() < due;
			}
		}
	counting(pc, 0);
	calls = counted(pc);
	snprintf(what, sizeof(what), "burst: %d of %d timers read, counted 1",
	         got, n);
	judge(got == n, what);
	snprintf(what, sizeof(what), "burst: reads before the deadline: %d",
	         early);
	judge(early == 0, what);
	snprintf(what, sizeof(what),
	         "burst: %lld system calls to arm, wait for and read %d timers",
	         calls, n);
	judge_quiet("burst: ", others() - sw0, calls, n / 10 + 20, what);
	for (i = 0; i < n; i++)
		close(fd[i]);
	close(ep);
	free(fd);
}

/* A non-blocking timer polled by read(2) (stress-ng's stressor, loops
 * that read before they wait): n reads with nothing due fail EAGAIN with
 * no system call; then, armed 2 ms ahead, the read that first counts
 * comes at the deadline, not before, and counts 1. */
static void polled(int n, int pc)
{
	struct itimerspec its = { .it_value = { 3600, 0 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK), i, again = 0;
	long long calls;
	int64_t due;
	uint64_t c = 0;
	ssize_t r;
	char what[128];

	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0)
		return (void)judge(0, "polled: a timer");
	counting(pc, 1);
	for (i = 0; i < n; i++)
		again += read(fd, &c, sizeof(c)) == -1 && errno == EAGAIN;
	counting(pc, 0);
	calls = counted(pc);
	snprintf(what, sizeof(what), "polled: %d of %d reads with nothing due "
	         "failed EAGAIN", again, n);
	judge(again == n, what);
	snprintf(what, sizeof(what), "polled: %lld system calls for %d reads "
	         "with nothing due", calls, n);
	judge_quiet("polled: ", 0, calls, 5, what);
	its.it_value.tv_sec = 0;
	its.it_value.tv_nsec = 2000000;
	due = mono() + its.it_value.tv_nsec;
	timerfd_settime(fd, 0, &its, NULL);
	while ((r = read(fd, &c, sizeof(c))) == -1 && errno == EAGAIN)
		;
	snprintf(what, sizeof(what), "polled: the read that counts is %s the "
	         "deadline and counts %llu", mono() < due ? "before" : "at",
	         (unsigned long long)c);
	judge(r == sizeof(c) && c == 1 && mono() >= due, what);
	close(fd);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, i, early = 0, ones = 0;
	int nburst = argc > 2 ? atoi(argv[2]) : 2000;
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC), pc = syscall_counter();
	struct epoll_event ev = { .events = EPOLLIN };
	long sw0 = 0, me0 = 0;
	uint64_t calls = 0, c;
	char what[128], tid[16];

	if (fd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return perror("timer"), 99;
	snprintf(tid, sizeof(tid), "%d", (int)gettid());
	srand(1);
	/* A first round: what starts once (the library's threads) starts. */
	for (i = 0; i < 2 * n; i++) {
		struct itimerspec its = { .it_value = { 0, 100000 +
		                                           rand() % 500000 } };
		int64_t due;

		if (i == n) {
			sw0 = others();
			me0 = switches(tid, 0);
			if (pc >= 0) {
				ioctl(pc, PERF_EVENT_IOC_RESET, 0);
				ioctl(pc, PERF_EVENT_IOC_ENABLE, 0);
			}
		}
		due = mono() + its.it_value.tv_nsec;
		timerfd_settime(fd, 0, &its, NULL);
		while (epoll_wait(ep, &ev, 1, -1) != 1)
			;
		if (read(fd, &c, sizeof(c)) != sizeof(c))
			return perror("read"), 99;
		if (i >= n) {
			early += mono() < due;
			ones += c == 1;
		}
	}
	if (pc >= 0) {
		ioctl(pc, PERF_EVENT_IOC_DISABLE, 0);
		if (read(pc, &calls, sizeof(calls)) != sizeof(calls))
			pc = -1;
	}
	snprintf(what, sizeof(what), "%d reads counted 1 each: %d", n, ones);
	judge(ones == n, what);
	snprintf(what, sizeof(what), "reads before the deadline: %d", early);
	judge(early == 0, what);
	snprintf(what, sizeof(what),
	         "the program's thread waited %ld times in %d iterations",
	         switches(tid, 0) - me0, n);
	judge(switches(tid, 0) - me0 <= n + n / 10 + 10, what);
	snprintf(what, sizeof(what),
	         "the program's thread made %llu system calls in %d iterations",
	         (unsigned long long)calls, n);
	judge_quiet("", others() - sw0, pc < 0 ? -1 : (long long)calls, n + 20,
	            what);
	burst(nburst, pc);
	polled(n, pc);
	return fails;
}
