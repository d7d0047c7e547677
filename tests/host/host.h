/* SPDX-License-Identifier: MIT */
/*
 * host.h - what ordinary programs do around their timers (daemons,
 * prefork servers, plugin hosts, sandboxed services, signal-heavy
 * programs), as cases that print facts, never times.
 *
 * Each case is built twice from the same source: `host` calls glibc's
 * timerfd_* (run as it is, that is Linux; under `tfd exec` it is the
 * preload), `host-lib` calls tfd_* from libtfd.a.  tests/host/run.sh runs
 * every case natively and through tfd and compares the outputs line for
 * line.  A case is a function in one of the files of tests/host:
 *
 *     HOST_CASE(fork_then_create, 0)
 *     {
 *         int fd = T_create(CLOCK_MONOTONIC, 0);
 *         ...
 *         say("child made a timer: %s", fd >= 0 ? "yes" : "no");
 *         return 0;
 *     }
 *
 * The flags say where a case does not apply (H_NOLIB: the preload only,
 * H_NOVIRTUAL: not on virtual time, H_NOPRELOAD: the library only).  A
 * case's exit status is compared too; run.sh gives each run 20 s.
 */
#ifndef TFD_HOST_H
#define TFD_HOST_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HOST_LIB
#include "tfd.h"
#define T_create tfd_create
#define T_settime tfd_settime
#define T_gettime tfd_gettime
#define T_read tfd_read
#define T_close tfd_close
#define T_NONBLOCK TFD_NONBLOCK
#define T_CLOEXEC TFD_CLOEXEC
#define T_ABSTIME TFD_TIMER_ABSTIME
#define T_CANCEL_ON_SET TFD_TIMER_CANCEL_ON_SET
#else
#include <sys/timerfd.h>
#define T_create timerfd_create
#define T_settime timerfd_settime
#define T_gettime timerfd_gettime
#define T_read read
#define T_close close
#define T_NONBLOCK TFD_NONBLOCK
#define T_CLOEXEC TFD_CLOEXEC
#define T_ABSTIME TFD_TIMER_ABSTIME
#define T_CANCEL_ON_SET TFD_TIMER_CANCEL_ON_SET
#endif

/* H_NOTSAN: not in a ThreadSanitizer build (the case says why). */
enum { H_NOLIB = 1, H_NOVIRTUAL = 2, H_NOPRELOAD = 4, H_NOTSAN = 8 };

struct host_case {
	const char *name;
	int flags;
	int (*fn)(void);
	struct host_case *next;
};

void host_register(struct host_case *c);

#define HOST_CASE(name, flags)                                         \
	static int host_##name(void);                                  \
	static struct host_case host_case_##name = { #name, flags,     \
						     host_##name, 0 }; \
	__attribute__((constructor)) static void host_reg_##name(void) \
	{                                                              \
		host_register(&host_case_##name);                      \
	}                                                              \
	static int host_##name(void)

/* A line of output, flushed at once (children print too). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Helpers over the calls above. */
int h_timer(int flags, long first_ms, long every_ms); /* armed, or -1 */
int h_arm(int fd, long first_ms, long every_ms);
/* Expirations read now (nonblocking read), or -errno. */
long long h_count(int fd);
/* poll(fd, POLLIN, ms): 1 readable, 0 timed out, -errno. */
int h_poll(int fd, int ms);
/* A blocking read: the count, or -errno. */
long long h_read(int fd);
void h_sleep_ms(long ms);
const char *h_err(int e); /* "EINTR", ... */
/* A "kB" line of /proc/self/status ("VmSize", "VmLck"...), or -1. */
long h_status_kb(const char *field);

#define MS 1000000L

#endif
