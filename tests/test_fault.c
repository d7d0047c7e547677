/*
 * Resource failures: allocation (calloc/realloc fail on purpose through
 * the linker's --wrap), descriptors (RLIMIT_NOFILE) and thread creation.
 * Every call fails cleanly with its errno, leaves nothing behind (the
 * runner checks descriptors), the timers that existed keep working, and
 * the next call after the fault succeeds.
 */
#include "t.h"

#include "tfd.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
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

/* ENFILE (the system-wide limit) cannot be reached from a test without
 * changing the machine; eventfd() is made to report it instead. */
int __wrap_eventfd(unsigned int count, int flags)
{
	if (fail_eventfd && --fail_eventfd == 0) {
		errno = eventfd_errno;
		return -1;
	}
	return __real_eventfd(count, flags);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (fail_calloc && --fail_calloc == 0)
		return NULL;
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	if (fail_realloc && --fail_realloc == 0)
		return NULL;
	return __real_realloc(p, size);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
                          void *(*fn)(void *), void *arg)
{
	if (fail_thread && --fail_thread == 0)
		return EAGAIN;
	return __real_pthread_create(t, a, fn, arg);
}

static void works(int fd)
{
	struct itimerspec v = t_its(2 * MS, 0);
	uint64_t n;

	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	CHECK(tfd_read(fd, &n, 8) == 8 && n == 1);
}

TEST(create_enomem_timer)
{
	int old = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0)), fd;

	fail_calloc = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), ENOMEM);
	fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	works(old);
	works(fd);
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
	fail_realloc = 1;
	CHECK_ERR(tfd_create(CLOCK_REALTIME, 0), ENOMEM);
	CHECK(fail_realloc == 0);
	fd = (int)CHECK_OK(tfd_create(CLOCK_REALTIME, 0));
	CHECK(fd > 200);
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
	CHECK(fail_realloc == 0);
	fds[16] = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	for (i = 0; i < 17; i++)
		works(fds[i]);
	for (i = 0; i < 17; i++)
		CHECK_OK(tfd_close(fds[i]));
}

TEST(settime_eagain_when_the_thread_cannot_start)
{
	int fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec v = t_its(SEC, 0), cur;

	fail_thread = 1;
	CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EAGAIN);
	CHECK(tfd_gettime(fd, &cur) == 0 && t_ns(&cur.it_value) == 0);
	fail_thread = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), EAGAIN);
	/* Disarming needs no thread. */
	v = t_its(0, 0);
	CHECK_OK(tfd_settime(fd, 0, &v, NULL));
	works(fd);
	CHECK_OK(tfd_close(fd));
}

TEST(settime_emfile_when_the_thread_has_no_descriptors)
{
	int fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	struct itimerspec v = t_its(SEC, 0), cur;
	struct rlimit old, low;
	int top = dup(0);

	/* No descriptor left for the service thread's two. */
	CHECK(top >= 0);
	close(top);
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = (rlim_t)top;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EMFILE);
	low.rlim_cur = (rlim_t)top + 1; /* one: still not enough */
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	CHECK_ERR(tfd_settime(fd, 0, &v, NULL), EMFILE);
	CHECK(tfd_gettime(fd, &cur) == 0 && t_ns(&cur.it_value) == 0);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
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
	CHECK(after == before);
	close(after);
}

TEST(enfile_is_passed_through)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	int fd;

	fail_eventfd = 1;
	CHECK_ERR(tfd_create(CLOCK_MONOTONIC, 0), ENFILE);
	fail_eventfd = 1;
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), ENFILE);
	/* The service thread's own eventfd. */
	fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));
	fail_eventfd = 1;
	CHECK_ERR(tfd_settime(fd, 0, &v, NULL), ENFILE);
	CHECK(tfd_gettime(fd, &cur) == 0 && t_ns(&cur.it_value) == 0);
	works(fd);
	CHECK_OK(tfd_close(fd));
}

TEST(settime_enomem_when_the_thread_cannot_get_memory)
{
	struct itimerspec v = t_its(SEC, 0), cur;
	int fd = (int)CHECK_OK(tfd_create(CLOCK_MONOTONIC, 0));

	eventfd_errno = ENOMEM; /* the kernel's answer without memory */
	fail_eventfd = 1;
	CHECK_ERR(tfd_settime(fd, 0, &v, NULL), ENOMEM);
	CHECK(tfd_gettime(fd, &cur) == 0 && t_ns(&cur.it_value) == 0);
	works(fd);
	CHECK_OK(tfd_close(fd));
}

TEST(revised_create_emfile)
{
	struct itimerspec v = t_its(SEC, 0);
	struct rlimit old, low;
	int top = dup(0);

	CHECK(top >= 0);
	close(top);
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = (rlim_t)top + 1; /* room for the eventfd only */
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	CHECK_ERR(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL), EMFILE);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	top = (int)CHECK_OK(timerfd(-1, CLOCK_MONOTONIC, 0, &v, NULL));
	CHECK_OK(tfd_close(top));
}
