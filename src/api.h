/* SPDX-License-Identifier: MIT */
/*
 * api.h - the calls of the API that make, arm, read and close timers and
 * sets, under the names api.c gives them.  The public names (tfd.h) are
 * doors to these: in libtfd, doors.c, one line each; in the preload
 * library, its own (src/preload/exports_api.c), which take a program's
 * calls in as they take its timerfd_create(2) and read(2), and call these
 * for the work.  Every other function of tfd.h is api.c's under its
 * public name.
 */
#ifndef TFD_API_H
#define TFD_API_H

#include "tfd.h"

int tfd_api_create(clockid_t clockid, int flags);
int tfd_api_settime(int fd, int flags, const struct itimerspec *new_value,
                    struct itimerspec *old_value);
int tfd_api_gettime(int fd, struct itimerspec *curr_value);
ssize_t tfd_api_read(int fd, void *buf, size_t count);
int tfd_api_close(int fd);
int tfd_api_timerfd(int ufd, int clockid, int flags,
                    const struct itimerspec *utmr, struct itimerspec *outmr);
int tfd_api_set_create(clockid_t clockid, int flags);
int tfd_api_set_settime(int sfd, uint64_t key, int flags,
                        const struct itimerspec *new_value,
                        struct itimerspec *old_value);
int tfd_api_set_gettime(int sfd, uint64_t key,
                        struct itimerspec *curr_value);
ssize_t tfd_api_set_read(int sfd, struct tfd_expiry *buf, size_t count);

#endif
