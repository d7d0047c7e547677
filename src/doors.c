/* SPDX-License-Identifier: MIT */
/*
 * doors.c - libtfd's public names of the calls api.h lists: each is
 * api.c's, as it is.  Not in the preload library, which has doors of its
 * own (src/preload/exports_api.c).
 */
#include "api.h"

int timerfd(int ufd, int clockid, int flags, const struct itimerspec *utmr,
            struct itimerspec *outmr)
{
	return tfd_api_timerfd(ufd, clockid, flags, utmr, outmr);
}

int tfd_create(clockid_t clockid, int flags)
{
	return tfd_api_create(clockid, flags);
}

int tfd_settime(int fd, int flags, const struct itimerspec *new_value,
                struct itimerspec *old_value)
{
	return tfd_api_settime(fd, flags, new_value, old_value);
}

int tfd_gettime(int fd, struct itimerspec *curr_value)
{
	return tfd_api_gettime(fd, curr_value);
}

ssize_t tfd_read(int fd, void *buf, size_t count)
{
	return tfd_api_read(fd, buf, count);
}

int tfd_close(int fd)
{
	return tfd_api_close(fd);
}

int tfd_set_create(clockid_t clockid, int flags)
{
	return tfd_api_set_create(clockid, flags);
}

int tfd_set_settime(int sfd, uint64_t key, int flags,
                    const struct itimerspec *new_value,
                    struct itimerspec *old_value)
{
	return tfd_api_set_settime(sfd, key, flags, new_value, old_value);
}

int tfd_set_gettime(int sfd, uint64_t key, struct itimerspec *curr_value)
{
	return tfd_api_set_gettime(sfd, key, curr_value);
}

ssize_t tfd_set_read(int sfd, struct tfd_expiry *buf, size_t count)
{
	return tfd_api_set_read(sfd, buf, count);
}
