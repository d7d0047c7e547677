/* SPDX-License-Identifier: MIT */
/*
 * Resource failures: allocation (calloc/realloc fail on purpose through
 * the linker's --wrap), descriptors (RLIMIT_NOFILE) and thread creation.
 * Every call fails cleanly with its errno, leaves nothing behind (the
 * runner checks descriptors; valgrind and ASan check bytes), the timers
 * that existed keep working, and the next call after the fault succeeds.
 *
 * The tests at the end do it for every k: a scenario that reaches every
 * allocation, descriptor and thread of the library runs once without a
 * fault, then once per k = 1, 2... until k is past the last call (each run
 * in a child forked from a process that has not used the library, so each
 * starts from the same state) with the k-th allocation, eventfd() or
 * thread creation failing; and once with RLIMIT_NOFILE leaving 0, 1, 2...
 * descriptors to each step until it succeeds.
 */
#include "t.h"

#include "backend.h"
#include "engine/hooks.h"
#include "engine/engine.h"
#include "tfd.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg);
int __real_eventfd(unsigned int count, int flags);
int __wrap_eventfd(unsigned int count, int flags);

static int fail_calloc, fail_realloc, fail_thread, fail_eventfd;
static int eventfd_errno = ENFILE;

/* Every k: the calls of each kind seen, and the one to fail (0: none). */
enum fault { F_ALLOC, F_EVENTFD, F_THREAD, NFAULT };
static unsigned long seen[NFAULT], fail_at[NFAULT];

/* Called from any thread (every test links the wrappers). */
static int inject(enum fault f)
{
	return __atomic_add_fetch(&seen[f], 1, __ATOMIC_RELAXED) ==
	       __atomic_load_n(&fail_at[f], __ATOMIC_RELAXED);
}

/* ENFILE (the system-wide limit) cannot be reached from a test without
 * changing the machine; eventfd() is made to report it instead. */
int __wrap_eventfd(unsigned int count, int flags)
{
	if ((fail_eventfd && --fail_eventfd == 0) || inject(F_EVENTFD)) {
		errno = eventfd_errno;
		return -1;
	}
	return __real_eventfd(count, flags);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if ((fail_calloc && --fail_calloc == 0) || inject(F_ALLOC))
		return NULL;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	if ((fail_realloc && --fail_realloc == 0) || inject(F_ALLOC))
		return NULL;
	return __real_realloc(p, size);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg)
{
	if ((fail_thread && --fail_thread == 0) || inject(F_THREAD))
		return EAGAIN;
	return __real_pthread_create(t, a, fn, arg);
}

static void works(int fd)
{
	struct itimerspec v = t_its(2 * MS, 0);
	uint64_t n;

	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	CHECK_READ(fd, &n, 1);
}

/* Until the pool holds at least 8 non-blocking eventfds (POOL_LOW), for
 * up to 2 s: 1 if it does. */
static int pool_refilled(void)
{
	int tries;

	for (tries = 0; tries < 2000; tries++) {
		if (tfd_engine_pool_ready(1) >= 8)
			return 1;
		t_sleep_ns(MS);
	}
	return 0;
}

/* The service thread keeps eventfds ready ahead of the creates, asked
 * for more as they fall below 8: creates one after another, each once
 * the refill has come, never make their own (the round trip to the
 * service thread).  The pool stopped at 8 before (the wake came at 8,
 * the refill below it).  A timer stays open throughout: the last one's
 * close wakes the thread anyway, which refills. */
TEST(creates_one_after_another_find_an_eventfd_ready)
{
	unsigned long was;
	int i, fd, kept;

	if (!tfd_engine_private_files())
		t_skip("the fallback: every create makes its eventfd");
	kept = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
	was = __atomic_load_n(&seen[F_EVENTFD], __ATOMIC_RELAXED);
	for (i = 0; i < 100; i++) {
		CHECKF(pool_refilled(), "create %d: the pool stays below 8", i);
		fd = t_timer(CLOCK_MONOTONIC, TFD_NONBLOCK);
		CHECK_OK(tfd_close(fd));
	}
	CHECK_EQ(__atomic_load_n(&seen[F_EVENTFD], __ATOMIC_RELAXED) - was,
	         0UL);
	CHECK_OK(tfd_close(kept));
}

/* Holds come in chunks of HOLD_CHUNK (engine.h): the first create of
 * this process (a test's own) makes the first chunk, the creates that
 * fill it allocate nothing for their holds, and the next needs a chunk. */
TEST(create_enomem_timer)
{
	int old = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0)), fd;
	int more[HOLD_CHUNK - 1], n;

	for (n = 0; n < HOLD_CHUNK - 1; n++)
		more[n] = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	fail_calloc = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), ENOMEM);
	CHECK_EQ(fail_calloc, 0);
	fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	works(old);
	works(fd);
	while (n > 0)
		CHECK_OK(tfd_close(more[--n]));
	CHECK_OK(tfd_close(fd));
	CHECK_OK(tfd_close(old));
}

TEST(create_enomem_table)
{
	int old = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, 0)), fd, i;
	int filler[200];

	/* Push the next descriptor past the table's first 64 slots. */
	for (i = 0; i < 200; i++)
		filler[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fail_calloc = 1;
	CHECK_ERR(tfd_create(CLOCK_REALTIME, 0), ENOMEM);
	CHECK_EQ(fail_calloc, 0);
	fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, 0));
	CHECK_GT(fd, 200);
	works(fd);
	CHECK_OK(tfd_close(fd));
	for (i = 0; i < 200; i++)
		close(filler[i]);
	works(old);
	CHECK_OK(tfd_close(old));
}

TEST(create_enomem_queue)
{
	int fds[17], i;

	/* The queues start with room for 16: the 17th timer grows them. */
	for (i = 0; i < 16; i++)
		fds[i] = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	fail_realloc = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), ENOMEM);
	CHECK_EQ(fail_realloc, 0);
	fds[16] = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	for (i = 0; i < 17; i++)
		works(fds[i]);
	for (i = 0; i < 17; i++)
		CHECK_OK(tfd_close(fds[i]));
}

TEST(create_eagain_when_the_thread_cannot_start)
{
	struct itimerspec v = t_its(SEC, 0);
	int before = dup(0), after;

	close(before);
	fail_thread = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), EAGAIN);
	fail_thread = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), EAGAIN);
	after = dup(0); /* nothing half-made */
	CHECK_EQ(after, before);
	close(after);
	works((int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0)));
	CHECK_OK(tfd_close(before));
}

/* Let only `spare` more descriptors be opened; undo with fds_restore(). */
static struct rlimit saved_limit;

static void fds_restore(void)
{
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &saved_limit), 0);
}

static void fds_left(int spare)
{
	struct rlimit low;
	int top;

	if (saved_limit.rlim_max == 0)
		CHECK_EQ(getrlimit(RLIMIT_NOFILE, &saved_limit), 0);
	fds_restore(); /* a lower limit set before would hide the number */
	top = dup(0);  /* the lowest free number */
	CHECK_GE(top, 0);
	close(top);
	low = saved_limit;
	low.rlim_cur = (rlim_t)(top + spare);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
}


/* Every resource is taken at create, where Linux can fail too: a settime
 * succeeds with no descriptor, no memory, no eventfd and no thread to be
 * had (issue 11: stress-ng aborted on an EMFILE from settime). */
TEST(settime_needs_no_resource)
{
	int fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec v = t_its(2 * MS, 0);
	uint64_t n;

	fds_left(0);
	fail_calloc = fail_realloc = fail_thread = fail_eventfd = 1;
	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	CHECK_READ(fd, &n, 1);
	v = t_its(MS, MS);
	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	fail_calloc = fail_realloc = fail_thread = fail_eventfd = 0;
	fds_restore();
	works(fd);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_create_fails_whole)
{
	struct itimerspec v = t_its(SEC, 0);
	int before = dup(0), after;

	close(before);
	fail_calloc = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), ENOMEM);
	fail_thread = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), EAGAIN);
	/* Nothing half-made: the next number is the same as before. */
	after = dup(0);
	CHECK_EQ(after, before);
	close(after);
}

TEST(enfile_is_passed_through)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	int fd;

	tfd_engine_pool_size(0); /* every create makes its eventfd */
	fail_eventfd = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), ENFILE);
	fail_eventfd = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), ENFILE);
	fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	CHECK_EQ(tfd_gettime(fd, &cur), 0);
	CHECK_EQ(t_ns(&cur.it_value), 0);
	works(fd);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_create_emfile)
{
	struct itimerspec v = t_its(SEC, 0);
	int top;

	fds_left(0);
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), EMFILE);
	fds_left(1); /* one is all a timer takes, as on Linux */
	top = (int)CHECK_OK(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL));
	fds_restore();
	CHECK_OK(tfd_close(top));
}

/* ---- every k ---- */

/* A set is made whole or not at all: its memory, its timer's eventfd,
 * the service thread, a descriptor (tfd_set(3), ERRORS). */
TEST(set_create_fails_whole)
{
	struct itimerspec v = t_its(2 * MS, 0);
	struct tfd_expiry rec;
	int before = dup(0), after, sfd;

	close(before);
	fail_calloc = 1;
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, 0), ENOMEM);
	fail_thread = 1;
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, 0), EAGAIN);
	tfd_engine_pool_size(0); /* every create makes its eventfd */
	fail_eventfd = 1;
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, 0), ENFILE);
	fds_left(0);
	CHECK_ERR(tfd_set_create(CLOCK_MONOTONIC, 0), EMFILE);
	fds_restore();
	after = dup(0); /* nothing half-made */
	CHECK_EQ(after, before);
	close(after);
	sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0));
	CHECK_OK(tfd_set_settime(sfd, 1, 0, &v, NULL));
	CHECK_EQ(tfd_set_read(sfd, &rec, sizeof(rec)), (ssize_t)sizeof(rec));
	CHECK_OK(tfd_close(sfd));
}

/* A new key needs memory (a departure: a timer's settime never fails for
 * it); the keys armed before keep running, and the next arm works. */
TEST(set_settime_enomem_keeps_the_set)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	struct tfd_expiry rec;
	int sfd = (int)CHECK_OK(tfd_set_create(CLOCK_MONOTONIC, 0)), k;

	for (k = 0; k < 16; k++) /* the first buckets' worth */
		CHECK_OK(tfd_set_settime(sfd, (uint64_t)k, 0, &v, NULL));
	fail_calloc = 1;
	CHECK_ERR(tfd_set_settime(sfd, 16, 0, &v, NULL), ENOMEM);
	CHECK_EQ(fail_calloc, 0);
	CHECK_ERR(tfd_set_gettime(sfd, 16, &cur), ENOENT);
	CHECK_OK(tfd_set_gettime(sfd, 15, &cur));
	v = t_its(2 * MS, 0);
	CHECK_OK(tfd_set_settime(sfd, 16, 0, &v, NULL));
	CHECK_EQ(tfd_set_read(sfd, &rec, sizeof(rec)), (ssize_t)sizeof(rec));
	CHECK_EQ(rec.key, 16u);
	CHECK_OK(tfd_close(sfd));
}

#define NTIMER 24

struct scenario {
	int fd[NTIMER]; /* timers, -1 when none */
	int filler[80]; /* /dev/null, to push numbers past 64 */
};

/* A step: 0, or -1 with errno (and then nothing may have changed). */
typedef int (*step_fn)(struct scenario *s, int i);

static int add_timer(struct scenario *s, int fd)
{
	int i;

	if (fd < 0)
		return -1;
	for (i = 0; s->fd[i] >= 0; i++)
		CHECK_LT(i + 1, NTIMER);
	s->fd[i] = fd;
	return 0;
}

static int arm_far(int fd, int flags)
{
	struct itimerspec v = t_its(3600 * SEC, 0);

	if (flags & TFD_TIMER_ABSTIME)
		v.it_value.tv_sec = time(NULL) + 3600;
	return tfd_settime(fd, flags, &v, NULL);
}

static int step_create_mono(struct scenario *s, int i)
{
	return i ? add_timer(s, tfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK)) : 0;
}

static int step_create_real(struct scenario *s, int i)
{
	return i ? add_timer(s, tfd_create(CLOCK_REALTIME, TFD_CLOEXEC)) : 0;
}

/* The first arm starts the service thread: two descriptors, a thread. */
static int step_arm_first(struct scenario *s, int i)
{
	return i ? arm_far(s->fd[0], 0) : 0;
}

static int step_arm_cancel(struct scenario *s, int i)
{
	return i ? arm_far(s->fd[1], TFD_TIMER_ABSTIME |
	                                 TFD_TIMER_CANCEL_ON_SET)
	         : 0;
}

static int step_revised_create(struct scenario *s, int i)
{
	struct itimerspec v = t_its(3600 * SEC, SEC);

	if (!i)
		return 0;
	return add_timer(s, timerfd(-1, CLOCK_BOOTTIME, TFD_CLOEXEC, &v, NULL));
}

/* Numbers past 64 grow the table (set up outside the fault). */
static int step_create_high(struct scenario *s, int i)
{
	int k;

	for (k = 0; i == 0 && k < 80; k++)
		s->filler[k] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return i == 0 ? 0 : step_create_mono(s, 0);
}

/* After the last close the thread is gone: the next arm starts it again,
 * here through the revised call (create, arm, roll back on failure). */
static int step_restart(struct scenario *s, int i)
{
	struct itimerspec v = t_its(MS, 0);
	int k;

	for (k = 0; i == 0 && k < NTIMER; k++) {
		if (s->fd[k] >= 0)
			CHECK_OK(tfd_close(s->fd[k]));
		s->fd[k] = -1;
	}
	return i == 0 ? 0 : add_timer(s, timerfd(-1, CLOCK_MONOTONIC, 0, &v,
	                                         NULL));
}

/* Each step runs twice: i = 0 sets up (no fault) if it needs to, i = 1
 * is the call that may fail. */
static const struct {
	const char *name;
	step_fn fn;
	int repeat;
} steps[] = {
	{ "tfd_create", step_create_mono, 1 },
	{ "tfd_create", step_create_real, 1 },
	{ "tfd_settime (starts the thread)", step_arm_first, 1 },
	{ "tfd_settime (cancel on set)", step_arm_cancel, 1 },
	{ "timerfd (create)", step_revised_create, 1 },
	{ "tfd_create (descriptor > 64)", step_create_high, 1 },
	{ "tfd_create (queue > 16)", step_create_mono, 14 },
	{ "timerfd (create, thread again)", step_restart, 1 },
};

static void open_map(unsigned char *map, int n)
{
	int fd;

	for (fd = 0; fd < n; fd++)
		map[fd] = fcntl(fd, F_GETFD) >= 0;
}

/* A failed step left everything as it was: the same descriptors, and
 * every timer answers. */
static void unchanged(const struct scenario *s, const unsigned char *before)
{
	unsigned char now[256];
	struct itimerspec cur;
	int k;

	open_map(now, 256);
	CHECKF(!memcmp(now, before, sizeof(now)), "descriptors changed");
	for (k = 0; k < NTIMER; k++)
		if (s->fd[k] >= 0)
			CHECK_OK(tfd_gettime(s->fd[k], &cur));
}

/* Run step n's call with fault f armed: if the fault fires in it, the
 * call fails with want and changes nothing, and the next call succeeds;
 * else it succeeds.  1 if the fault fired. */
static int faulted_step(struct scenario *s, size_t n, enum fault f, int want)
{
	unsigned char before[256];
	unsigned long calls = seen[f];
	int r, fired;

	open_map(before, 256);
	r = steps[n].fn(s, 1);
	fired = fail_at[f] > calls && fail_at[f] <= seen[f];
	if (!fired) {
		CHECKF(r == 0, "%s: %s", steps[n].name, strerrorname_np(errno));
		return 0;
	}
	CHECKF(r == -1 && errno == want, "%s: got %d (%s), want %s",
	       steps[n].name, r, strerrorname_np(errno), strerrorname_np(want));
	unchanged(s, before);
	CHECKF(steps[n].fn(s, 1) == 0, "%s after the fault: %s", steps[n].name,
	       strerrorname_np(errno));
	return 1;
}

/* The timers left work; close them; the descriptors are as at the start. */
static void finish(struct scenario *s, const unsigned char *start)
{
	unsigned char end[256];
	uint64_t n;
	int k;

	for (k = 0; k < 80; k++)
		if (s->filler[k] >= 0)
			close(s->filler[k]);
	for (k = 0; k < NTIMER; k++) {
		if (s->fd[k] < 0)
			continue;
		if (k == 0)
			CHECK_READ(s->fd[k], &n, 1);
		else
			works(s->fd[k]);
		CHECK_OK(tfd_close(s->fd[k]));
	}
	open_map(end, 256);
	for (k = 0; k < 256; k++)
		CHECKF(end[k] == start[k], "descriptor %d %s", k,
		       end[k] ? "left open" : "closed");
}

/* The whole scenario with fault f failing its k-th call (0: none); in a
 * child.  Exits 0 if every check passed, 3 if the fault never fired (k is
 * past the last call of its kind). */
static void scenario_child(enum fault f, unsigned long k, int want)
{
	struct scenario s;
	unsigned char start[256];
	int fired = 0, r;

	tfd_engine_pool_size(0); /* each create's own eventfd can fail */	size_t n;

	memset(&s, -1, sizeof(s));
	memset(seen, 0, sizeof(seen)); /* the runner allocated before */
	open_map(start, 256);
	fail_at[f] = k;
	for (n = 0; n < sizeof(steps) / sizeof(*steps); n++) {
		for (r = 0; r < steps[n].repeat; r++) {
			CHECK_EQ(steps[n].fn(&s, 0), 0);
			fired += faulted_step(&s, n, f, want);
		}
	}
	fail_at[f] = 0;
	finish(&s, start);
	exit(k && !fired ? 3 : 0);
}

static int run_child(enum fault f, unsigned long k, int want)
{
	int st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	CHECK_GE(pid, 0);
	if (pid == 0)
		scenario_child(f, k, want);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECKF(WIFEXITED(st), "k = %lu: %s", k, strsignal(WTERMSIG(st)));
	return WEXITSTATUS(st);
}

static void every_k(enum fault f, int want, const char *what)
{
	unsigned long k, n = 0;
	int st;

	CHECK_EQ(run_child(f, 0, want), 0); /* no fault: the scenario works */
	for (k = 1;; k++) {
		st = run_child(f, k, want);
		if (st == 3)
			break; /* k is past the last call */
		CHECKF(st == 0, "%s: failing call %lu: exit %d", what, k, st);
		n++;
	}
	printf("%s: failed each of %lu calls in turn, all cleanly\n", what, n);
	CHECK_GE(n, 1);
}

TEST_LIMIT(fault_every_allocation_fails_cleanly, 120)
{
	every_k(F_ALLOC, ENOMEM, "calloc/realloc (ENOMEM)");
}

TEST_LIMIT(fault_every_eventfd_fails_cleanly, 120)
{
	eventfd_errno = ENFILE;
	every_k(F_EVENTFD, ENFILE, "eventfd (ENFILE)");
}

TEST_LIMIT(fault_every_thread_creation_fails_cleanly, 120)
{
	every_k(F_THREAD, EAGAIN, "pthread_create (EAGAIN)");
}

/* The k-th free descriptor number: a soft RLIMIT_NOFILE there leaves
 * exactly k descriptors. */
static rlim_t limit_for(int k)
{
	int fd, free_below = 0;

	for (fd = 0;; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		if (free_below++ == k)
			return (rlim_t)fd;
	}
}

/* One step with 0, 1, 2... descriptors left until it succeeds; the number
 * of EMFILE failures. */
static int emfile_step(struct scenario *s, size_t n, const struct rlimit *old)
{
	unsigned char before[256];
	struct rlimit low = *old;
	int k, r;

	for (k = 0;; k++) {
		open_map(before, 256);
		low.rlim_cur = limit_for(k);
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
		r = steps[n].fn(s, 1);
		CHECK_EQ(setrlimit(RLIMIT_NOFILE, old), 0);
		if (r == 0)
			return k;
		CHECKF(errno == EMFILE, "%s with %d descriptors: %s",
		       steps[n].name, k, strerrorname_np(errno));
		unchanged(s, before);
	}
}

TEST_LIMIT(fault_emfile_at_every_descriptor_of_every_step, 60)
{
	struct scenario s;
	struct rlimit old;
	unsigned char start[256];
	unsigned long injected = 0;
	size_t n;
	int r;

	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	memset(&s, -1, sizeof(s));
	open_map(start, 256);
	for (n = 0; n < sizeof(steps) / sizeof(*steps); n++) {
		for (r = 0; r < steps[n].repeat; r++) {
			CHECK_EQ(steps[n].fn(&s, 0), 0);
			injected += (unsigned long)emfile_step(&s, n, &old);
		}
	}
	finish(&s, start);
	printf("RLIMIT_NOFILE (EMFILE): %lu failures injected, all clean\n",
	       injected);
	CHECK_GE(injected, 15); /* 18 in 2026-12: one descriptor a timer */
}
