/* SPDX-License-Identifier: MIT */
/*
 * t.h - the test framework.  Each TEST runs in its own process (run.c),
 * with a time limit, and fails if it leaves a descriptor open.
 */
#ifndef TFD_T_H
#define TFD_T_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/time.h" /* TFD_NSEC */

struct t_case {
	const char *name;
	void (*fn)(void);
	int seconds; /* time limit */
	struct t_case *next;
};

void t_register(struct t_case *c);
void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/* The test cannot run here: it ends, counted as skipped, and the runner
 * prints fmt (one line) as the reason. */
#define T_SKIP 77
void t_skip(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
/* The tfd program (TFD_TOOL) and the examples' directory (TFD_EXAMPLES),
 * which make check gives; a test that needs one skips without it (the
 * runner run alone, build/tfd-test). */
const char *t_tool(void);
const char *t_examples(void);

#define TEST_LIMIT(name, secs)                                              \
	static void name(void);                                             \
	__attribute__((constructor)) static void reg_##name(void)           \
	{                                                                   \
		static struct t_case c = { #name, name, secs, NULL };       \
		t_register(&c);                                             \
	}                                                                   \
	static void name(void)
#define TEST(name) TEST_LIMIT(name, 20)

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			t_fail(__FILE__, __LINE__, "%s", #cond);            \
	} while (0)

#define CHECKF(cond, ...)                                                   \
	do {                                                                \
		if (!(cond))                                                \
			t_fail(__FILE__, __LINE__, __VA_ARGS__);            \
	} while (0)

/* a op b; a failure prints both sides' values.  Each side is evaluated
 * once, in its own type, so the comparison is the one the test wrote. */
const char *t_str_i(char *buf, long long v);
const char *t_str_u(char *buf, unsigned long long v);
const char *t_str_d(char *buf, double v);
const char *t_str_p(char *buf, const void *v);
#define T_STR(x, buf)                                                       \
	_Generic((x), float: t_str_d, double: t_str_d,                      \
		 unsigned char: t_str_u, unsigned short: t_str_u,           \
		 unsigned int: t_str_u, unsigned long: t_str_u,             \
		 unsigned long long: t_str_u, char: t_str_i,                \
		 signed char: t_str_i, short: t_str_i, int: t_str_i,        \
		 long: t_str_i, long long: t_str_i, _Bool: t_str_i,         \
		 default: t_str_p)(buf, x)
#define CHECK_CMP(a, op, b)                                                 \
	do {                                                                \
		__typeof__(a) a_ = (a);                                     \
		__typeof__(b) b_ = (b);                                     \
		int ok_;                                                    \
		_Pragma("GCC diagnostic push")                              \
		_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")        \
		_Pragma("GCC diagnostic ignored \"-Wtype-limits\"")         \
		ok_ = a_ op b_; /* as the test wrote it: b a constant */    \
		_Pragma("GCC diagnostic pop")                               \
		if (!ok_) {                                                 \
			char sa_[48], sb_[48];                              \
			t_fail(__FILE__, __LINE__, "%s %s %s: %s vs %s",    \
			       #a, #op, #b, T_STR(a_, sa_),                 \
			       T_STR(b_, sb_));                             \
		}                                                           \
	} while (0)
#define CHECK_EQ(a, b) CHECK_CMP(a, ==, b)
#define CHECK_NE(a, b) CHECK_CMP(a, !=, b)
#define CHECK_LT(a, b) CHECK_CMP(a, <, b)
#define CHECK_LE(a, b) CHECK_CMP(a, <=, b)
#define CHECK_GT(a, b) CHECK_CMP(a, >, b)
#define CHECK_GE(a, b) CHECK_CMP(a, >=, b)

/* tfd_read(fd, np, 8) returns 8 and counts want (*np holds it);
 * CHECK_READ_SYS the same through read(2), the C library's call. */
#define CHECK_READ(fd, np, want) T_CHECK_READ(tfd_read, fd, np, want)
#define CHECK_READ_SYS(fd, np, want) T_CHECK_READ(read, fd, np, want)
#define T_CHECK_READ(rd, fd, np, want)                                      \
	do {                                                                \
		long r_ = (long)rd((fd), (np), 8);                          \
		unsigned long long w_ = (want);                             \
		if (r_ != 8 || *(np) != w_)                                 \
			t_fail(__FILE__, __LINE__,                          \
			       "%s(%s): %ld (%s), count %llu, want 8, "     \
			       "count %llu", #rd, #fd, r_,                  \
			       r_ < 0 ? strerrorname_np(errno) : "-",       \
			       (unsigned long long)*(np), w_);              \
	} while (0)

/* st, a status from waitpid(), is an exit with status code. */
#define CHECK_EXIT(st, code)                                                \
	do {                                                                \
		int s_ = (st), c_ = (code);                                 \
		if (!WIFEXITED(s_) || WEXITSTATUS(s_) != c_)                \
			t_fail(__FILE__, __LINE__,                          \
			       "%s: status %#x, want exit %d", #st, s_,     \
			       c_);                                         \
	} while (0)

/* expr must be -1 with errno == e. */
#define CHECK_ERR(expr, e)                                                  \
	do {                                                                \
		errno = 0;                                                  \
		long r_ = (long)(expr);                                     \
		int e_ = errno;                                             \
		if (r_ != -1 || e_ != (e))                                  \
			t_fail(__FILE__, __LINE__,                          \
			       "%s: got %ld errno %s, want -1 errno %s",    \
			       #expr, r_, strerrorname_np(e_),              \
			       strerrorname_np(e));                         \
	} while (0)

/* expr must not be -1; its value is kept in a long. */
#define CHECK_OK(expr)                                                      \
	({                                                                  \
		errno = 0;                                                  \
		long r_ = (long)(expr);                                     \
		if (r_ == -1)                                               \
			t_fail(__FILE__, __LINE__, "%s failed: %s", #expr, \
			       strerrorname_np(errno));                     \
		r_;                                                         \
	})

/* ThreadSanitizer cannot follow a thread created in a child forked from a
 * threaded process ("dup thread with used id"); fork tests skip that part. */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
/* Under valgrind (its preload is in LD_PRELOAD): it keeps descriptors of
 * its own near the limit, and runs everything many times slower. */
int t_valgrind(void);
#ifndef T_TSAN
#define T_TSAN 0
#endif
/* Built with AddressSanitizer, a forked child's service thread starts at
 * its first call of the library, not in fork() (src/engine/fork.c). */
#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif
#ifndef T_ASAN
#define T_ASAN 0
#endif

/* Helpers shared by the tests (run.c). */
int64_t t_now(clockid_t c);                 /* ns on clock c */
struct itimerspec t_its(int64_t value_ns, int64_t interval_ns);
int64_t t_ns(const struct timespec *ts);
int t_readable(int fd, int timeout_ms);     /* poll POLLIN */
int t_timer(clockid_t c, int flags);        /* tfd_create, checked */
void t_arm(int fd, int flags, int64_t value_ns, int64_t interval_ns);
/* Expirations a model timer armed at e0 with interval i has had by t. */
uint64_t t_due(int64_t e0, int64_t i, int64_t t);
void t_sleep_ns(int64_t ns);
int t_threads(void); /* of this process, as /proc says */
/* Wait until thread tid of this process sleeps and stays asleep for 20 ms
 * (in a wait of the library's, for the caller); 0 if it never does within
 * 10 s.  A fixed sleep is not enough on a loaded machine. */
int t_wait_asleep(pid_t tid);
/* sh -c cmd: its stdout and stderr into out and err (NUL-terminated, cut
 * to their size), its exit status (a signal fails the test). */
int t_sh(const char *cmd, char *out, size_t outn, char *err, size_t errn);

#define MS 1000000LL
#define US 1000LL
#define SEC TFD_NSEC /* core/time.h */

#endif
