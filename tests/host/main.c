/* SPDX-License-Identifier: MIT */
/*
 * main.c - the cases' runner: `host --list` names them with the backends
 * they skip; `host NAME` runs one and exits with its status.
 */
#include "host.h"

#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>

static struct host_case *cases;

void host_register(struct host_case *c)
{
	struct host_case **p = &cases;

	while (*p && strcmp((*p)->name, c->name) < 0)
		p = &(*p)->next;
	c->next = *p;
	*p = c;
}

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int h_arm(int fd, long first_ms, long every_ms)
{
	struct itimerspec its = {
		{ every_ms / 1000, every_ms % 1000 * MS },
		{ first_ms / 1000, first_ms % 1000 * MS },
	};

	return T_settime(fd, 0, &its, NULL);
}

int h_timer(int flags, long first_ms, long every_ms)
{
	int fd = T_create(CLOCK_MONOTONIC, flags);

	if (fd >= 0 && h_arm(fd, first_ms, every_ms) < 0) {
		T_close(fd);
		return -1;
	}
	return fd;
}

long long h_read(int fd)
{
	uint64_t n;

	if (T_read(fd, &n, sizeof n) != (ssize_t)sizeof n)
		return -errno;
	return (long long)n;
}

long long h_count(int fd)
{
	int r = h_poll(fd, 0);

	return r <= 0 ? r : h_read(fd);
}

int h_poll(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int r = poll(&p, 1, ms);

	if (r < 0)
		return -errno;
	return r > 0 && (p.revents & POLLIN);
}

void h_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * MS };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long h_status_kb(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':' &&
		    sscanf(line + n + 1, "%ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

const char *h_err(int e)
{
	const char *s = strerrorname_np(e < 0 ? -e : e);

	return s ? s : "E?";
}

#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifndef TSAN_BUILD
#define TSAN_BUILD 0
#endif

int main(int argc, char **argv)
{
	struct host_case *c;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (c = cases; c; c = c->next)
			printf("%s %s%s%s%s\n", c->name,
			       c->flags & H_NOLIB ? "nolib," : "",
			       c->flags & H_NOVIRTUAL ? "novirtual," : "",
			       c->flags & H_NOPRELOAD ? "nopreload," : "",
			       c->flags & H_NOTSAN && TSAN_BUILD ? "notsan," : "");
		return 0;
	}
	for (c = cases; argc == 2 && c; c = c->next)
		if (!strcmp(c->name, argv[1]))
			return c->fn();
	fprintf(stderr, "usage: host --list | host CASE\n");
	return 2;
}
