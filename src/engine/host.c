/* SPDX-License-Identifier: MIT */
/*
 * host.c - the host the engine runs in (host.h): the C library's calls,
 * until a host registers its own.
 */
#include "engine/engine.h"

#include <unistd.h>

static int plain_enter(void)
{
	return 0;
}

static void plain_leave(int was)
{
	(void)was;
}

static int plain_nowait(void)
{
	return 0;
}

struct tfd_host tfd_host = { /* [I] */
	.enter = plain_enter,
	.leave = plain_leave,
	.read = read,
	.poll = poll,
	.nowait = plain_nowait,
	.clock_gettime = clock_gettime,
};

void tfd_host_set(const struct tfd_host *h)
{
	if (h->enter && h->leave) {
		tfd_host.enter = h->enter;
		tfd_host.leave = h->leave;
	}
	if (h->read)
		tfd_host.read = h->read;
	if (h->poll)
		tfd_host.poll = h->poll;
	if (h->nowait)
		tfd_host.nowait = h->nowait;
	if (h->clock_gettime)
		tfd_host.clock_gettime = h->clock_gettime;
}
