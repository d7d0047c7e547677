/* SPDX-License-Identifier: MIT */
/*
 * cases.c - the conformance table.  Each row is a rule of SPEC.md or
 * timerfd_create(2) (its source), as a short sequence of operations with
 * their expected results on Linux; see conform.h for the vocabulary.
 *
 * Tolerances: a remaining time (it_value) is expected in [V - TOL, V],
 * TOL = 250 ms of time already elapsed, never above V; a count read after
 * time has passed is checked against the timer model over the interval
 * the read took (late by at most 20 ms, 50 ms for a plain read(2), never
 * early).  On the virtual clock both are exact.
 *
 * A row marked as a departure names the manual page section that
 * documents how the library differs from Linux there; its engine override
 * (.eng) is what the engine and the virtual backend do instead.
 */
#define _GNU_SOURCE
#include "conform.h"

#include "tfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/epoll.h>

#define MONO CLOCK_MONOTONIC
#define REAL CLOCK_REALTIME
#define BOOT CLOCK_BOOTTIME
#define NB TFD_NONBLOCK
#define CX TFD_CLOEXEC
#define AB TFD_TIMER_ABSTIME
#define COS TFD_TIMER_CANCEL_ON_SET
#define TOL (250 * MS_)
#define HUGE_NS (1L << 62) /* more than 146 years */
#define SAT INT64_MAX      /* Linux's saturated time: 2^63 - 1 ns */

const struct conf_case conf_cases[] = {

/* ---- tfd_create: SPEC 2 create, timerfd_create(2) ---- */

{ "create.einval_flag_bits", "SPEC 2 create 1", NULL, 0, {
	CREATE(T0, MONO, 1, ERR(EINVAL)),
	CREATE(T0, MONO, ~0, ERR(EINVAL)),
	CREATE(T0, MONO, O_APPEND, ERR(EINVAL)),
	CREATE(T0, MONO, NB | 4, ERR(EINVAL)) } },
{ "create.einval_clocks", "SPEC 2 create 1", NULL, 0, {
	CREATE(T0, -1, 0, ERR(EINVAL)),
	CREATE(T0, 99, 0, ERR(EINVAL)),
	CREATE(T0, CLOCK_PROCESS_CPUTIME_ID, 0, ERR(EINVAL)),
	CREATE(T0, CLOCK_THREAD_CPUTIME_ID, 0, ERR(EINVAL)),
	CREATE(T0, CLOCK_MONOTONIC_RAW, 0, ERR(EINVAL)),
	CREATE(T0, CLOCK_REALTIME_COARSE, 0, ERR(EINVAL)),
	CREATE(T0, CLOCK_TAI, 0, ERR(EINVAL)) } },
{ "create.einval_before_eperm", "SPEC 2 create 1-2", NULL, 0, {
	CREATE(T0, CLOCK_BOOTTIME_ALARM, 1, ERR(EINVAL)),
	CREATE(T0, CLOCK_REALTIME_ALARM, ~0, ERR(EINVAL)) } },
{ "create.alarm_realtime", "SPEC 2 create 2", "tfd.7 NOTES 11", 0, {
	CREATE(T0, CLOCK_REALTIME_ALARM, 0, ALARM, .eng = ERR(EPERM)) } },
{ "create.alarm_boottime", "SPEC 2 create 2", "tfd.7 NOTES 11", 0, {
	CREATE(T0, CLOCK_BOOTTIME_ALARM, NB | CX, ALARM, .eng = ERR(EPERM)) } },
{ "create.disarmed_realtime", "SPEC 2 create", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	GETTIME(T0, 0, 0, 0),
	CLOSE(T0, OK) } },
{ "create.disarmed_monotonic", "SPEC 2 create", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	GETTIME(T0, 0, 0, 0),
	CLOSE(T0, OK) } },
{ "create.disarmed_boottime", "SPEC 2 create", NULL, 0, {
	CREATE(T0, BOOT, 0, NEWFD),
	GETTIME(T0, 0, 0, 0),
	CLOSE(T0, OK) } },
{ "create.flags_none", "SPEC 2 fcntl", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	GETFL(T0, O_RDWR),
	GETFD(T0, 0) } },
{ "create.flags_nonblock", "SPEC 2 fcntl", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	GETFL(T0, O_RDWR | O_NONBLOCK),
	GETFD(T0, 0) } },
{ "create.flags_cloexec", "SPEC 2 fcntl", NULL, 0, {
	CREATE(T0, REAL, CX, NEWFD),
	GETFL(T0, O_RDWR),
	GETFD(T0, FD_CLOEXEC) } },
{ "create.flags_both", "SPEC 2 fcntl", NULL, 0, {
	CREATE(T0, BOOT, NB | CX, NEWFD),
	GETFL(T0, O_RDWR | O_NONBLOCK),
	GETFD(T0, FD_CLOEXEC) } },
{ "create.emfile_no_descriptor_left", "SPEC 2 create 3", NULL, 0, {
	LIMIT(0),
	CREATE(T0, MONO, 0, ERR(EMFILE)),
	UNLIMIT,
	CREATE(T0, MONO, 0, NEWFD) } },
{ "create.emfile_one_descriptor_left", "SPEC 2 create 3", NULL, 0, {
	LIMIT(1),
	CREATE(T0, MONO, 0, NEWFD),
	UNLIMIT } },

/* ---- tfd_settime: errors, SPEC 2 settime ---- */

{ "settime.efault_null_value", "SPEC 2 settime 1", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, NUL, ERR(EFAULT)),
	SETTIME(T0, AB, NUL, ERR(EFAULT)) } },
{ "settime.efault_before_everything", "SPEC 2 settime 1", NULL, 0, {
	SETTIME(FD_BAD, 0, NUL, ERR(EFAULT)),
	SETTIME(FD_M1, ~0, NUL, ERR(EFAULT)) } },
{ "settime.einval_flag_bits", "SPEC 2 settime 2", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 4, REL(SEC_, 0), ERR(EINVAL)),
	SETTIME(T0, NB, REL(SEC_, 0), ERR(EINVAL)),
	SETTIME(T0, ~0, REL(SEC_, 0), ERR(EINVAL)),
	GETTIME(T0, 0, 0, 0) } },
{ "settime.einval_flags_before_ebadf", "SPEC 2 settime 2, 4", NULL, 0, {
	SETTIME(FD_BAD, 4, REL(SEC_, 0), ERR(EINVAL)),
	SETTIME(FD_M1, ~0, REL(SEC_, 0), ERR(EINVAL)) } },
{ "settime.einval_value_sec_negative", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(-1, 0, 0, 0), ERR(EINVAL)),
	SETTIME(T0, AB, RAW(-5, 999999999, 0, 0), ERR(EINVAL)) } },
{ "settime.einval_value_nsec_negative", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(0, -1, 0, 0), ERR(EINVAL)) } },
{ "settime.einval_value_nsec_1000000000", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(0, 1000000000, 0, 0), ERR(EINVAL)),
	SETTIME(T0, 0, RAW(1, 2000000000, 0, 0), ERR(EINVAL)),
	GETTIME(T0, 0, 0, 0) } },
{ "settime.value_nsec_999999999", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(0, 999999999, 0, 0), OK),
	GETTIME(T0, 999999999 - TOL, 999999999, 0) } },
{ "settime.einval_interval_nsec_1000000000", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(1, 0, 0, 1000000000), ERR(EINVAL)),
	SETTIME(T0, 0, RAW(1, 0, 0, -1), ERR(EINVAL)) } },
{ "settime.einval_interval_sec_negative", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(1, 0, -1, 0), ERR(EINVAL)) } },
{ "settime.interval_nsec_999999999", "SPEC 2 settime 3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(10, 0, 0, 999999999), OK),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 999999999) } },
{ "settime.einval_interval_checked_when_disarming", "SPEC 2 settime 3",
  NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, RAW(0, 0, 0, 1000000000), ERR(EINVAL)),
	SETTIME(T0, AB, RAW(0, 0, -1, 0), ERR(EINVAL)) } },
{ "settime.einval_timespec_before_ebadf", "SPEC 2 settime 3, 4", NULL, 0, {
	SETTIME(FD_BAD, 0, RAW(-1, 0, 0, 0), ERR(EINVAL)),
	SETTIME(FD_M1, 0, RAW(0, 0, 0, 1000000000), ERR(EINVAL)) } },
{ "settime.ebadf", "SPEC 2 settime 4", NULL, 0, {
	SETTIME(FD_BAD, 0, REL(SEC_, 0), ERR(EBADF)),
	SETTIME(FD_M1, 0, REL(SEC_, 0), ERR(EBADF)),
	SETTIME(FD_M5, AB, REL(SEC_, 0), ERR(EBADF)),
	SETTIME(FD_BAD, 0, REL(0, 0), ERR(EBADF)) } },
{ "settime.ebadf_closed_timer", "SPEC 2 settime 4", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	CLOSE(T0, OK),
	SETTIME(T0, 0, REL(SEC_, 0), ERR(EBADF)) } },
{ "settime.einval_not_a_timer", "SPEC 2 settime 4", NULL, 0, {
	PIPE(0),
	SETTIME(PIPE_R, 0, REL(SEC_, 0), ERR(EINVAL)),
	SETTIME(PIPE_W, AB, REL(SEC_, 0), ERR(EINVAL)) } },
{ "settime.no_descriptor_needed", "SPEC 2 settime", NULL, ON_REAL, {
	CREATE(T0, MONO, 0, NEWFD),
	LIMIT(0),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	UNLIMIT,
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 0) } },

/* ---- tfd_settime: the model, SPEC 1 ---- */

{ "settime.old_value_of_a_new_timer", "SPEC 2 settime old", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME_OLD(T0, 0, REL(10 * SEC_, 3 * SEC_), 0, 0, 0) } },
{ "settime.old_value_armed", "SPEC 2 settime old", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 3 * SEC_), OK),
	SETTIME_OLD(T0, 0, REL(0, 0), 10 * SEC_ - TOL, 10 * SEC_, 3 * SEC_),
	SETTIME_OLD(T0, 0, REL(0, 0), 0, 0, 0) } },
{ "settime.old_value_absolute_is_relative", "SPEC 2 settime old", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, AB, ABS(10 * SEC_, 0), OK),
	SETTIME_OLD(T0, 0, REL(SEC_, 0), 10 * SEC_ - TOL, 10 * SEC_, 0) } },
{ "settime.old_value_keeps_the_disarmed_interval", "SPEC 1 disarm", NULL,
  0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(0, 3 * SEC_), OK),
	SETTIME_OLD(T0, 0, REL(SEC_, 0), 0, 0, 3 * SEC_) } },
{ "settime.old_value_of_a_fired_one_shot", "SPEC 1 one-shot", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(20),
	SETTIME_OLD(T0, 0, REL(0, 0), 0, 0, 0) } },
{ "settime.disarm_keeps_interval", "SPEC 1 disarm", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(SEC_, SEC_), OK),
	SETTIME(T0, 0, REL(0, 2 * SEC_), OK),
	GETTIME(T0, 0, 0, 2 * SEC_) } },
{ "settime.disarm_abstime_keeps_interval", "SPEC 1 disarm", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, AB, ABS(SEC_, 0), OK),
	SETTIME(T0, AB, RAW(0, 0, 5, 0), OK),
	GETTIME(T0, 0, 0, 5 * SEC_) } },
{ "settime.zero_value_with_interval_is_disarmed", "SPEC 1 disarm", NULL,
  0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(0, MS_), OK),
	SLEEP(10),
	POLL(T0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	GETTIME(T0, 0, 0, MS_) } },
{ "settime.disarm_clears_count", "SPEC 1 setting discards", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, MS_), OK),
	SLEEP(20),
	POLL(T0, 2000, POLLIN),
	SETTIME(T0, 0, REL(0, 0), OK),
	POLL(T0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "settime.disarm_abstime_clears_count", "SPEC 1 setting discards", NULL,
  0, {
	CREATE(T0, BOOT, NB, NEWFD),
	SETTIME(T0, AB, ABS(-SEC_, MS_), OK),
	POLL(T0, 2000, POLLIN),
	SETTIME(T0, AB, RAW(0, 0, 0, 0), OK),
	EPOLL(T0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "settime.rearm_clears_count_and_readiness", "SPEC 1 setting discards",
  NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, MS_), OK),
	SLEEP(20),
	POLL(T0, 2000, POLLIN),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	POLL(T0, 0, 0),
	SELECT(T0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 0) } },
{ "settime.rearm_replaces_the_setting", "SPEC 1", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	SETTIME(T0, 0, REL(30 * MS_, 0), OK),
	GETTIME(T0, 0, 30 * MS_, 0),
	LATER(30),
	READ_N(T0, 8, 1) } },
{ "settime.abstime_past_one_shot", "SPEC 1 absolute past", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, AB, ABS(-SEC_, 0), OK),
	POLL(T0, 2000, POLLIN),
	GETTIME(T0, 0, 0, 0),
	READ_N(T0, 8, 1),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "settime.abstime_past_periodic_counts", "SPEC 1 absolute past", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, AB, ABS(-20 * SEC_, SEC_), OK),
	READ_N(T0, 8, 21),
	GETTIME(T0, 0, SEC_, SEC_) } },
{ "settime.abstime_past_periodic_realtime", "SPEC 1 absolute past", NULL,
  0, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB, ABS(-20 * SEC_, SEC_), OK),
	READ_N(T0, 8, 21) } },
{ "settime.abstime_past_periodic_boottime", "SPEC 1 absolute past", NULL,
  0, {
	CREATE(T0, BOOT, NB, NEWFD),
	SETTIME(T0, AB, ABS(-20 * SEC_, SEC_), OK),
	READ_N(T0, 8, 21) } },
{ "settime.abstime_one_ns_after_the_epoch", "SPEC 1 absolute past", NULL,
  0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, AB, RAW(0, 1, 0, 0), OK),
	POLL(T0, 2000, POLLIN),
	READ_N(T0, 8, 1) } },
{ "settime.abstime_future", "SPEC 1", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, AB, ABS(30 * MS_, 0), OK),
	GETTIME(T0, 0, 30 * MS_, 0),
	LATER(30),
	READ_N(T0, 8, 1) } },
{ "settime.huge_value_relative", "SPEC 1 very large values", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, RAW(LONG_MAX, 999999999, 0, 0), OK),
	GETTIME(T0, HUGE_NS, SAT, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "settime.huge_value_absolute", "SPEC 1 very large values", NULL, 0, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB, RAW(LONG_MAX, 0, 0, 0), OK),
	GETTIME(T0, HUGE_NS, SAT, 0),
	POLL(T0, 0, 0) } },
{ "settime.huge_interval_saturates", "SPEC 1 very large values", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, RAW(0, 1, LONG_MAX, 999999999), OK),
	SLEEP(5),
	POLL(T0, 2000, POLLIN),
	READ_N(T0, 8, 1),
	GETTIME(T0, HUGE_NS, SAT, SAT) } },
{ "settime.periodic_counts_every_interval", "SPEC 1 count", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * MS_, 10 * MS_), OK),
	SLEEP(55),
	READ_M(T0),
	SLEEP(30),
	READ_M(T0) } },
{ "settime.interval_one_ns", "SPEC 1 count", NULL, 0, {
	CREATE(T0, BOOT, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 1), OK),
	SLEEP(10),
	READ_M(T0) } },
{ "settime.one_shot_is_disarmed_after_firing", "SPEC 1 one-shot", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(20),
	POLL(T0, 2000, POLLIN),
	READ_N(T0, 8, 1),
	GETTIME(T0, 0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "settime.cancel_on_set_relative_realtime", "SPEC 2 CANCEL_ON_SET", NULL,
  0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, COS, REL(20 * MS_, 0), OK),
	LATER(20),
	READ_N(T0, 8, 1) } },
{ "settime.cancel_on_set_absolute_realtime", "SPEC 2 CANCEL_ON_SET", NULL,
  0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, AB | COS, ABS(20 * MS_, 0), OK),
	GETTIME(T0, 0, 20 * MS_, 0),
	LATER(20),
	READ_N(T0, 8, 1) } },
{ "settime.cancel_on_set_monotonic", "SPEC 2 CANCEL_ON_SET", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, COS, REL(20 * MS_, 0), OK),
	SETTIME(T0, AB | COS, ABS(20 * MS_, 0), OK),
	LATER(20),
	READ_N(T0, 8, 1) } },
{ "settime.cancel_on_set_boottime", "SPEC 2 CANCEL_ON_SET", NULL, 0, {
	CREATE(T0, BOOT, 0, NEWFD),
	SETTIME(T0, AB | COS, ABS(20 * MS_, 0), OK),
	SETTIME(T0, COS, REL(20 * MS_, 0), OK),
	LATER(20),
	READ_N(T0, 8, 1) } },

/* ---- tfd_gettime: SPEC 2 gettime ---- */

{ "gettime.ebadf", "SPEC 2 gettime", NULL, 0, {
	GETTIME_E(FD_BAD, 1, ERR(EBADF)),
	GETTIME_E(FD_M1, 1, ERR(EBADF)) } },
{ "gettime.ebadf_before_efault", "SPEC 2 gettime", NULL, 0, {
	GETTIME_E(FD_BAD, 0, ERR(EBADF)),
	GETTIME_E(FD_M1, 0, ERR(EBADF)) } },
{ "gettime.einval_not_a_timer", "SPEC 2 gettime", NULL, 0, {
	PIPE(0),
	GETTIME_E(PIPE_R, 1, ERR(EINVAL)),
	GETTIME_E(PIPE_W, 0, ERR(EINVAL)) } },
{ "gettime.efault_null", "SPEC 2 gettime", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	GETTIME_E(T0, 0, ERR(EFAULT)) } },
{ "gettime.remaining_relative", "SPEC 2 gettime", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(SEC_, 0), OK),
	GETTIME(T0, SEC_ - TOL, SEC_, 0) } },
{ "gettime.remaining_absolute_is_relative", "SPEC 2 gettime", NULL, 0, {
	CREATE(T0, BOOT, 0, NEWFD),
	SETTIME(T0, AB, ABS(2 * SEC_, 0), OK),
	GETTIME(T0, 2 * SEC_ - TOL, 2 * SEC_, 0) } },
{ "gettime.periodic_reports_interval", "SPEC 2 gettime", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * MS_, 250 * MS_), OK),
	SLEEP(30),
	GETTIME(T0, 0, 250 * MS_, 250 * MS_) } },
{ "gettime.fired_one_shot_is_zero", "SPEC 2 gettime", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(20),
	GETTIME(T0, 0, 0, 0),
	READ_N(T0, 8, 1) } },
{ "gettime.does_not_change_the_next_read", "SPEC 1 query", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(5 * MS_, 5 * MS_), OK),
	SLEEP(30),
	GETTIME(T0, 0, 5 * MS_, 5 * MS_),
	GETTIME(T0, 0, 5 * MS_, 5 * MS_),
	SLEEP(7),
	GETTIME(T0, 0, 5 * MS_, 5 * MS_),
	READ_M(T0) } },

/* ---- tfd_read: SPEC 2 read ---- */

{ "read.ebadf", "SPEC 2 read", NULL, 0, {
	READ_E(FD_BAD, 8, 1, ERR(EBADF)),
	READ_E(FD_M1, 8, 1, ERR(EBADF)) } },
{ "read.ebadf_before_einval_and_efault", "SPEC 2 read", NULL, 0, {
	READ_E(FD_BAD, 7, 1, ERR(EBADF)),
	READ_E(FD_BAD, 8, 0, ERR(EBADF)) } },
{ "read.einval_len_7_and_0", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	READ_E(T0, 7, 1, ERR(EINVAL)),
	READ_E(T0, 0, 1, ERR(EINVAL)) } },
{ "read.einval_len_7_keeps_the_count", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(20),
	POLL(T0, 2000, POLLIN),
	READ_E(T0, 7, 1, ERR(EINVAL)),
	READ_N(T0, 8, 1) } },
{ "read.len_8", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	READ_N(T0, 8, 1) } },
{ "read.len_16_writes_8", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	READ_N(T0, 16, 1) } },
{ "read.einval_not_a_timer", "SPEC 2 settime 4", NULL, 0, {
	PIPE(1),
	READ_E(PIPE_R, 8, 1, ERR(EINVAL)),
	READ_E(PIPE_W, 8, 1, ERR(EINVAL)) } },
{ "read.efault_null_buffer_before_waiting", "SPEC 2 read", "tfd.7 NOTES 10",
  0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(200 * MS_, 0), OK),
	READ_E(T0, 8, 0, ERR(EFAULT), .check = C_QUICK),
	LATER(200),
	READ_RAW(T0, 8, 0, ERR(EFAULT)) } },
{ "read.plain_read_null_buffer_efault", "read(2)", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	READ_RAW(T0, 8, 0, ERR(EAGAIN)),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	POLL(T0, 2000, POLLIN),
	READ_RAW(T0, 8, 0, ERR(EFAULT)) } },
{ "read.plain_read_len_7", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	POLL(T0, 2000, POLLIN),
	READ_RAW(T0, 7, 1, ERR(EINVAL)),
	READ_RAW(T0, 8, 1, RET(8)) } },
{ "read.plain_read_counts_every_interval", "SPEC 2 read, tfd.7 NOTES 3",
  NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(10 * MS_, 10 * MS_), OK),
	SLEEP(100),
	POLL(T0, 2000, POLLIN),
	READ_RAW_M(T0),
	SLEEP(60),
	POLL(T0, 2000, POLLIN),
	READ_RAW_M(T0) } },
{ "read.eagain_disarmed", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	READ_RAW(T0, 8, 1, ERR(EAGAIN)) } },
{ "read.eagain_armed_not_expired", "SPEC 2 read", NULL, 0, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "read.eagain_after_fcntl_nonblock", "tfd_create.3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETFL(T0, O_NONBLOCK),
	GETFL(T0, O_RDWR | O_NONBLOCK),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "read.blocking_woken_by_expiry", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(30 * MS_, 0), OK),
	LATER(30),
	READ_N(T0, 8, 1) } },
{ "read.blocking_periodic", "SPEC 2 read", NULL, 0, {
	CREATE(T0, BOOT, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * MS_, 10 * MS_), OK),
	LATER(10),
	READ_M(T0),
	LATER(10),
	READ_M(T0) } },
{ "read.resets_the_count", "SPEC 1 read", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	READ_N(T0, 8, 1),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	POLL(T0, 0, 0) } },
{ "read.eintr_disarmed", "SPEC 2 read", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SIGNAL(50),
	READ_E(T0, 8, 1, ERR(EINTR)) } },
{ "read.eintr_armed", "SPEC 2 read", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	SIGNAL(50),
	READ_E(T0, 8, 1, ERR(EINTR)),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 0) } },

/* ---- readiness: SPEC 2 readiness ---- */

{ "poll.new_timer_not_readable", "SPEC 2 readiness", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	POLL(T0, 0, 0),
	EPOLL(T0, 0, 0),
	SELECT(T0, 0, 0) } },
{ "poll.armed_not_readable_before_expiry", "SPEC 2 readiness", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	POLL(T0, 0, 0),
	EPOLL(T0, 0, 0),
	SELECT(T0, 0, 0) } },
{ "poll.readable_after_expiry", "SPEC 2 readiness", NULL, 0, {
	CREATE(T0, REAL, 0, NEWFD),
	SETTIME(T0, 0, REL(5 * MS_, 0), OK),
	SLEEP(10),
	POLL(T0, 2000, POLLIN),
	EPOLL(T0, 2000, EPOLLIN),
	SELECT(T0, 2000, 1),
	READ_N(T0, 8, 1),
	POLL(T0, 0, 0),
	EPOLL(T0, 0, 0),
	SELECT(T0, 0, 0) } },
{ "poll.readable_until_rearmed", "SPEC 1 setting discards", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	EPOLL(T0, 2000, EPOLLIN),
	EPOLL(T0, 0, EPOLLIN),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	EPOLL(T0, 0, 0),
	POLL(T0, 0, 0) } },
{ "poll.never_writable", "SPEC 2 readiness", "tfd.7 NOTES 2", 0, {
	CREATE(T0, MONO, 0, NEWFD),
	POLLOUT_(T0, 0, .eng = RET(POLLOUT)) } },
{ "poll.write_fails_einval", "SPEC 2 readiness", "tfd.7 NOTES 2", 0, {
	CREATE(T0, MONO, NB, NEWFD),
	WRITE(T0, ERR(EINVAL), .eng = RET(8)) } },

/* ---- the descriptor: fdinfo, ioctl, fork ---- */

{ "fd.fdinfo_shows_the_timer", "SPEC 2 fdinfo", "tfd.7 NOTES 4", 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	FDINFO(T0, RET(1), .eng = RET(0)) } },
{ "fd.ioctl_set_ticks", "SPEC 2 TFD_IOC_SET_TICKS", "tfd.7 NOTES 4", 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTICKS(T0, 0, ERR(EINVAL), .eng = ERR(ENOTTY)),
	SETTICKS(T0, 5, OK, .eng = ERR(ENOTTY)),
	POLL(T0, 0, POLLIN, .eng = RET(0)) } },
{ "fd.fork_child_queries_the_timer", "SPEC 2 fork", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	CHILD_GETTIME(T0, OK) } },
{ "fd.fork_child_arms_the_shared_timer", "SPEC 2 fork", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	CHILD_SETTIME(T0, 1, OK),
	SLEEP(10),
	POLL(T0, 2000, POLLIN),
	READ_E(T0, 8, 1, RET(8)),
	GETTIME(T0, 0, 0, 0) } },
{ "fd.fork_child_reads_the_shared_count", "SPEC 2 fork", NULL, 0, {
	CREATE(T0, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(MS_, 0), OK),
	SLEEP(10),
	POLL(T0, 2000, POLLIN),
	CHILD_READ(T0, RET(8)),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },

{ "fd.plain_close_leaves_the_timer_addressable", "close(2)", "tfd.7 NOTES 5",
  ON_ENGINES, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	CLOSE_RAW(T0),
	GETTIME_E(T0, 1, ERR(EBADF), .eng = OK),
	CLOSE(T0, ERR(EBADF)),
	GETTIME_E(T0, 1, ERR(EBADF)) } },

/* ---- tfd_close ---- */

{ "close.ebadf", "close(2)", NULL, 0, {
	CLOSE(FD_BAD, ERR(EBADF)),
	CLOSE(FD_M1, ERR(EBADF)) } },
{ "close.twice", "close(2)", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	CLOSE(T0, OK),
	CLOSE(T0, ERR(EBADF)),
	GETTIME_E(T0, 1, ERR(EBADF)),
	READ_E(T0, 8, 1, ERR(EBADF)) } },
{ "close.not_a_timer", "tfd_close.3", NULL, 0, {
	PIPE(0),
	CLOSE(PIPE_R, OK),
	CLOSE(PIPE_W, OK) } },

/* ---- timerfd(): the revised interface, SPEC 3 ---- */

{ "timerfd.create_armed", "SPEC 3", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, SEC_), NEWFD),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, SEC_) } },
{ "timerfd.create_disarmed", "SPEC 3", NULL, 0, {
	TIMERFD_NEW(T0, BOOT, 0, REL(0, 0), NEWFD),
	GETTIME(T0, 0, 0, 0) } },
{ "timerfd.create_flags", "SPEC 3 departures", NULL, 0, {
	TIMERFD_NEW(T0, REAL, NB | CX, REL(10 * SEC_, 0), NEWFD),
	GETFL(T0, O_RDWR | O_NONBLOCK),
	GETFD(T0, FD_CLOEXEC),
	TIMERFD_NEW(T1, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	GETFL(T1, O_RDWR),
	GETFD(T1, 0) } },
{ "timerfd.change_returns_the_descriptor", "SPEC 3", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, -1, 0, REL(20 * SEC_, 0), 0, SAMEFD),
	GETTIME(T0, 20 * SEC_ - TOL, 20 * SEC_, 0) } },
{ "timerfd.change_with_old", "SPEC 3", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 2 * SEC_), NEWFD),
	TIMERFD(T0, -1, 0, REL(0, 0), 1, SAMEFD, .check = C_VALUE,
	        .lo = 10 * SEC_ - TOL, .hi = 10 * SEC_, .iv = 2 * SEC_),
	GETTIME(T0, 0, 0, 0) } },
{ "timerfd.query", "SPEC 3", NULL, 0, {
	TIMERFD_NEW(T0, REAL, 0, REL(10 * SEC_, 3 * SEC_), NEWFD),
	TIMERFD(T0, -1, 0, NUL, 1, SAMEFD, .check = C_VALUE,
	        .lo = 10 * SEC_ - TOL, .hi = 10 * SEC_, .iv = 3 * SEC_) } },
{ "timerfd.query_disarmed_is_zero", "SPEC 3 departures", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(0, 0), NEWFD),
	TIMERFD(T0, -1, 0, NUL, 1, SAMEFD, .check = C_VALUE) } },
{ "timerfd.query_loses_no_expiration", "SPEC 3 departures", NULL, 0, {
	TIMERFD_NEW(T0, MONO, NB, REL(MS_, 0), NEWFD),
	SLEEP(20),
	TIMERFD(T0, -1, 0, NUL, 1, SAMEFD, .check = C_VALUE),
	TIMERFD(T0, -1, 0, NUL, 1, SAMEFD, .check = C_VALUE),
	READ_N(T0, 8, 1) } },
{ "timerfd.abstime_past_counts", "SPEC 3, SPEC 1", NULL, 0, {
	TIMERFD_NEW(T0, MONO, AB | NB, ABS(-20 * SEC_, SEC_), NEWFD),
	READ_N(T0, 8, 21) } },
{ "timerfd.check1_clock_of_an_existing_timer", "SPEC 3 check 1", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, REAL, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(T0, MONO, 0, NUL, 1, ERR(EINVAL)),
	TIMERFD(FD_BAD, MONO, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 0) } },
{ "timerfd.check1_unsupported_clock", "SPEC 3 check 1", NULL, 0, {
	TIMERFD(FD_M1, -1, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_M1, 99, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_M1, CLOCK_PROCESS_CPUTIME_ID, 0, REL(SEC_, 0), 0,
	        ERR(EINVAL)),
	TIMERFD(FD_M5, -1, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_M1, 99, 0xff, REL(SEC_, 0), 0, ERR(EINVAL)) } },
{ "timerfd.check2_flags", "SPEC 3 check 2", NULL, 0, {
	TIMERFD(FD_M1, MONO, 0xff, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, -1, NB, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(T0, -1, CX, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_BAD, -1, 0xff, REL(SEC_, 0), 0, ERR(EINVAL)) } },
{ "timerfd.check3_query_takes_no_flags", "SPEC 3 check 3", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, -1, AB, NUL, 1, ERR(EINVAL)),
	TIMERFD(FD_BAD, -1, AB, NUL, 1, ERR(EINVAL)) } },
{ "timerfd.check4_creation_needs_value_not_old", "SPEC 3 check 4", NULL,
  0, {
	TIMERFD(FD_M1, MONO, 0, NUL, 0, ERR(EINVAL)),
	TIMERFD(FD_M1, MONO, 0, REL(SEC_, 0), 1, ERR(EINVAL)),
	TIMERFD(FD_M1, MONO, 0, NUL, 1, ERR(EINVAL)) } },
{ "timerfd.check5_nothing_asked", "SPEC 3 check 5", NULL, 0, {
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, -1, 0, NUL, 0, ERR(EINVAL)),
	TIMERFD(FD_BAD, -1, 0, NUL, 0, ERR(EINVAL)) } },
{ "timerfd.check6_timespec", "SPEC 3 check 6", NULL, 0, {
	TIMERFD(FD_M1, MONO, 0, RAW(0, 1000000000, 0, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_M1, MONO, 0, RAW(-1, 0, 0, 0), 0, ERR(EINVAL)),
	TIMERFD(FD_M1, MONO, 0, RAW(1, 0, 0, -1), 0, ERR(EINVAL)),
	TIMERFD(FD_BAD, -1, 0, RAW(1, 0, -1, 0), 0, ERR(EINVAL)) } },
{ "timerfd.check7_ebadf", "SPEC 3 check 7", NULL, 0, {
	TIMERFD(FD_BAD, -1, 0, REL(SEC_, 0), 0, ERR(EBADF)),
	TIMERFD(FD_BAD, -1, 0, NUL, 1, ERR(EBADF)),
	TIMERFD(FD_M5, MONO, 0, REL(SEC_, 0), 0, ERR(EBADF)) } },
{ "timerfd.check7_not_a_timer", "SPEC 3 check 7", NULL, 0, {
	PIPE(0),
	TIMERFD(PIPE_R, -1, 0, REL(SEC_, 0), 0, ERR(EINVAL)),
	TIMERFD(PIPE_W, -1, 0, NUL, 1, ERR(EINVAL)) } },
{ "timerfd.eperm_alarm_clock", "SPEC 2 create 2", "tfd.7 NOTES 11", 0, {
	TIMERFD_NEW(T0, CLOCK_REALTIME_ALARM, 0, REL(10 * SEC_, 0), ALARM,
	            .eng = ERR(EPERM)) } },
{ "timerfd.emfile_no_descriptor_left", "SPEC 2 create 3", NULL, 0, {
	LIMIT(0),
	TIMERFD_NEW(T0, MONO, 0, REL(SEC_, 0), ERR(EMFILE)),
	UNLIMIT } },
{ "timerfd.emfile_one_descriptor_left", "SPEC 2 create 3", NULL, 0, {
	LIMIT(1),
	TIMERFD_NEW(T0, MONO, 0, REL(10 * SEC_, 0), NEWFD),
	UNLIMIT } },
{ "timerfd.cancel_on_set_accepted", "SPEC 3 departures", NULL, 0, {
	TIMERFD_NEW(T0, REAL, AB | COS, ABS(10 * SEC_, 0), NEWFD),
	TIMERFD(T0, -1, COS, REL(10 * SEC_, 0), 0, SAMEFD),
	TIMERFD(T0, -1, AB | COS, ABS(10 * SEC_, 0), 0, SAMEFD),
	GETTIME(T0, 10 * SEC_ - TOL, 10 * SEC_, 0) } },

/* ---- backends: tfd_use_backend(3) ---- */

{ "backend.name", "tfd_use_backend.3", NULL, 0, {
	NAME } },
{ "backend.einval_unknown_name", "tfd_use_backend.3", NULL, 0, {
	USE(USE_UNKNOWN, ERR(EINVAL)),
	USE(USE_NULL, ERR(EINVAL)),
	NAME } },
{ "backend.ebusy_while_a_timer_is_open", "tfd_use_backend.3", NULL, 0, {
	CREATE(T0, MONO, 0, NEWFD),
	USE(USE_OTHER, ERR(EBUSY)),
	USE(USE_UNKNOWN, ERR(EINVAL)),
	USE(USE_SELF, OK),
	NAME,
	CLOSE(T0, OK),
	USE(USE_OTHER, OK),
	USE(USE_SELF, OK),
	NAME } },

/* ---- the virtual clock's calls: tfd_virtual(3) ---- */

{ "vclock.enotsup_without_the_virtual_backend", "tfd_virtual.3", NULL,
  ON_REAL, {
	VNOW(MONO, 1, ERR(ENOTSUP)),
	VMOVE(0, RAW(1, 0, 0, 0), ERR(ENOTSUP)),
	VMOVE(1, RAW(1, 0, 0, 0), ERR(ENOTSUP)),
	VMOVE(2, RAW(1, 0, 0, 0), ERR(ENOTSUP)) } },
{ "vclock.efault_null", "tfd_virtual.3", NULL, 0, {
	VNOW(MONO, 0, ERR(EFAULT)),
	VMOVE(0, NUL, ERR(EFAULT)),
	VMOVE(1, NUL, ERR(EFAULT)),
	VMOVE(2, NUL, ERR(EFAULT)) } },
{ "vclock.einval_arguments", "tfd_virtual.3", NULL, 0, {
	VNOW(CLOCK_TAI, 1, ERR(EINVAL)),
	VMOVE(0, RAW(0, 1000000000, 0, 0), ERR(EINVAL)),
	VMOVE(1, RAW(-1, 0, 0, 0), ERR(EINVAL)),
	VMOVE(2, RAW(0, -1, 0, 0), ERR(EINVAL)) } },
{ "vclock.now_on_the_virtual_backend", "tfd_virtual.3", NULL, ON_VIRTUAL, {
	VNOW(MONO, 1, OK),
	VNOW(REAL, 1, OK),
	VNOW(BOOT, 1, OK),
	VMOVE(0, RAW(0, 0, 0, 0), OK) } },

/* ---- clock steps and suspend: only the virtual clock can make them
 * without setting the machine's clock (SPEC 1 clocks, SPEC 2
 * CANCEL_ON_SET) ---- */

{ "clockset.read_ecanceled_once", "SPEC 2 CANCEL_ON_SET", NULL, ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(-5),
	POLL(T0, 0, POLLIN),
	READ_E(T0, 8, 1, ERR(ECANCELED)),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	POLL(T0, 0, 0) } },
{ "clockset.settime_ecanceled_arms_anyway", "SPEC 2 CANCEL_ON_SET", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(5),
	SETTIME(T0, AB | COS, ABS(SEC_, 0), ERR(ECANCELED)),
	GETTIME(T0, SEC_ - TOL, SEC_, 0),
	POLL(T0, 0, 0),
	SLEEP(1000),
	READ_N(T0, 8, 1) } },
{ "clockset.timerfd_change_ecanceled", "SPEC 2 CANCEL_ON_SET", NULL,
  ON_VIRTUAL, {
	TIMERFD_NEW(T0, REAL, AB | COS | NB, ABS(3600 * SEC_, 0), NEWFD),
	SET_REALTIME(60),
	TIMERFD(T0, -1, AB | COS, ABS(SEC_, 0), 0, ERR(ECANCELED)),
	GETTIME(T0, SEC_ - TOL, SEC_, 0) } },
{ "clockset.ignored_without_abstime", "SPEC 2 CANCEL_ON_SET", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, COS, REL(3600 * SEC_, 0), OK),
	SET_REALTIME(-5),
	POLL(T0, 0, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "clockset.ignored_on_monotonic_and_boottime", "SPEC 2 CANCEL_ON_SET",
  NULL, ON_VIRTUAL, {
	CREATE(T0, MONO, NB, NEWFD),
	CREATE(T1, BOOT, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SETTIME(T1, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(5),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	READ_E(T1, 8, 1, ERR(EAGAIN)) } },
{ "clockset.time_passing_never_cancels", "SPEC 2 CANCEL_ON_SET", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SLEEP(10000),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "clockset.absolute_realtime_fires_after_a_step", "SPEC 1 clocks", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(7200),
	READ_N(T0, 8, 1) } },
{ "clockset.backward_step_delays_absolute_realtime", "SPEC 1 clocks", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB, ABS(10 * SEC_, 0), OK),
	SET_REALTIME(-100),
	GETTIME(T0, 110 * SEC_ - TOL, 110 * SEC_, 0),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "clockset.backward_step_reads_zero_and_fires_again", "SPEC 2 clock set "
  "backwards", NULL, ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB, ABS(SEC_, 10 * SEC_), OK),
	SLEEP(1500),
	SET_REALTIME(-1),
	READ_E(T0, 8, 1, RET(0)),
	GETTIME(T0, 500 * MS_ - TOL, 500 * MS_, 10 * SEC_),
	SLEEP(600),
	READ_E(T0, 8, 1, RET(8)) } },
{ "clockset.relative_realtime_not_moved_by_a_step", "SPEC 1 clocks", NULL,
  ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, 0, REL(3600 * SEC_, 0), OK),
	SET_REALTIME(7200),
	READ_E(T0, 8, 1, ERR(EAGAIN)),
	GETTIME(T0, 3600 * SEC_ - TOL, 3600 * SEC_, 0) } },
{ "clockset.suspend_moves_boottime_not_monotonic", "SPEC 1 clocks", NULL,
  ON_VIRTUAL, {
	CREATE(T0, BOOT, NB, NEWFD),
	CREATE(T1, MONO, NB, NEWFD),
	SETTIME(T0, 0, REL(10 * SEC_, 0), OK),
	SETTIME(T1, 0, REL(10 * SEC_, 0), OK),
	SUSPEND(20),
	READ_N(T0, 8, 1),
	READ_E(T1, 8, 1, ERR(EAGAIN)),
	GETTIME(T1, 10 * SEC_ - TOL, 10 * SEC_, 0) } },
{ "clockset.plain_read_counts_the_cancel", "SPEC 2 CANCEL_ON_SET",
  "tfd.7 NOTES 1", ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(-5),
	READ_RAW(T0, 8, 1, ERR(ECANCELED), .eng = RET(8)),
	READ_E(T0, 8, 1, ERR(EAGAIN), .eng = ERR(ECANCELED)),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "clockset.plain_read_leaves_the_cancel_to_settime", "SPEC 2 CANCEL_ON_SET",
  "tfd.7 NOTES 1", ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(-5),
	READ_RAW(T0, 8, 1, ERR(ECANCELED), .eng = RET(8)),
	SETTIME(T0, AB | COS, ABS(3600 * SEC_, 0), OK, .eng = ERR(ECANCELED)),
	READ_E(T0, 8, 1, ERR(EAGAIN)) } },
{ "clockset.ecanceled_stops_an_expired_periodic_timer",
  "fs/timerfd.c timerfd_read", "tfd.7 NOTES 14", ON_VIRTUAL, {
	CREATE(T0, REAL, NB, NEWFD),
	SETTIME(T0, AB | COS, ABS(-SEC_, 5 * SEC_), OK),
	POLL(T0, 0, POLLIN),
	SET_REALTIME(-5),
	READ_E(T0, 8, 1, ERR(ECANCELED)),
	SLEEP(10000),
	READ_E(T0, 8, 1, ERR(EAGAIN), .eng = RET(8)) } },

/* ---- timer sets: tfd_set(3), the same on every backend ----
 *
 * Deadlines are absolute from the time the case began (BASE), so that
 * the keys come due in the order a case says however late each call is;
 * a read comes well after every deadline it expects and well before the
 * next.  A case with REFERENCE also makes every set call on a set of one
 * kernel timerfd per key (setref.c) and compares: the same records, keys
 * and counts, and the same settings (time left within a second); on the
 * virtual column the reference runs on real time, as far from its now. */

{ "sets.cancel_on_set_read_ecanceled_once", "tfd_set.3 Cancel on set",
  NULL, ON_VIRTUAL, {
	SET_CREATE(T0, REAL, NB, NEWFD),
	SET_ARM(T0, 1, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_ARM(T0, 2, AB, ABS(3600 * SEC_, 0), OK),
	SET_REALTIME(-5),
	POLL(T0, 0, POLLIN),
	SET_READ_E(T0, 32, 1, ERR(ECANCELED)),
	SET_READ_E(T0, 32, 1, ERR(EAGAIN)),
	POLL(T0, 0, 0) } },
{ "sets.cancel_on_set_only_while_a_key_asks", "tfd_set.3 Cancel on set",
  NULL, ON_VIRTUAL, {
	SET_CREATE(T0, REAL, NB, NEWFD),
	SET_ARM(T0, 1, AB | COS, ABS(3600 * SEC_, 0), OK),
	SET_ARM(T0, 1, AB, ABS(3600 * SEC_, 0), OK), /* none asks now */
	SET_REALTIME(5),
	POLL(T0, 0, 0),
	SET_READ_E(T0, 32, 1, ERR(EAGAIN)),
	SET_ARM(T0, 2, COS, REL(3600 * SEC_, 0), OK), /* (not absolute) */
	SET_REALTIME(-5),
	SET_READ_E(T0, 32, 1, ERR(EAGAIN)) } },
{ "sets.create_errors", "tfd_set.3 ERRORS", NULL, 0, {
	SET_CREATE(T0, -1, 0, ERR(EINVAL)),
	SET_CREATE(T0, CLOCK_REALTIME_ALARM, 0, ERR(EINVAL)),
	SET_CREATE(T0, CLOCK_BOOTTIME_ALARM, 0, ERR(EINVAL)),
	SET_CREATE(T0, CLOCK_PROCESS_CPUTIME_ID, 0, ERR(EINVAL)),
	SET_CREATE(T0, MONO, 1, ERR(EINVAL)),
	SET_CREATE(T0, MONO, ~0, ERR(EINVAL)),
	SET_CREATE(T0, BOOT, NB | CX, NEWFD),
	GETFL(T0, O_RDWR | O_NONBLOCK),
	GETFD(T0, FD_CLOEXEC) } },
{ "sets.settime_errors", "tfd_set.3 ERRORS", NULL, 0, {
	SET_CREATE(T0, MONO, 0, NEWFD),
	SET_ARM(T0, 1, 0, NUL, ERR(EFAULT)),
	SET_ARM(FD_BAD, 1, ~0, NUL, ERR(EFAULT)),
	/* (cancel-on-set of a set of another clock than CLOCK_REALTIME:
	 * accepted and ignored, as a timerfd's) */
	SET_ARM(T0, 2, COS, REL(SEC_, 0), OK),
	SET_ARM(T0, 3, AB | COS, REL(SEC_, 0), OK),
	SET_ARM(T0, 1, 4, REL(SEC_, 0), ERR(EINVAL)),
	SET_ARM(T0, 1, 0, RAW(-1, 0, 0, 0), ERR(EINVAL)),
	SET_ARM(T0, 1, 0, RAW(0, SEC_, 0, 0), ERR(EINVAL)),
	SET_ARM(T0, 1, 0, RAW(1, 0, 0, -1), ERR(EINVAL)),
	SET_GET_E(T0, 1, 1, ERR(ENOENT)) } },
{ "sets.settime_not_a_set", "tfd_set.3 ERRORS", NULL, 0, {
	SET_ARM(FD_BAD, 1, 0, REL(SEC_, 0), ERR(EBADF)),
	SET_ARM(FD_M1, 1, 0, REL(SEC_, 0), ERR(EBADF)),
	PIPE(0),
	SET_ARM(PIPE_R, 1, 0, REL(SEC_, 0), ERR(EINVAL)),
	CREATE(T1, MONO, 0, NEWFD),
	SET_ARM(T1, 1, 0, REL(SEC_, 0), ERR(EINVAL)),
	GETTIME(T1, 0, 0, 0) } },
{ "sets.gettime_errors", "tfd_set.3 ERRORS", NULL, 0, {
	SET_CREATE(T0, MONO, 0, NEWFD),
	SET_GET_E(FD_BAD, 1, 1, ERR(EBADF)),
	PIPE(0),
	SET_GET_E(PIPE_R, 1, 1, ERR(EINVAL)),
	SET_GET_E(T0, 1, 1, ERR(ENOENT)),
	SET_GET_E(T0, 1, 0, ERR(ENOENT)),
	SET_ARM(T0, 1, 0, REL(3600 * SEC_, 0), OK),
	SET_GET_E(T0, 1, 0, ERR(EFAULT)),
	SET_GET_E(T0, 2, 1, ERR(ENOENT)) } },
{ "sets.read_errors", "tfd_set.3 ERRORS", NULL, 0, {
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_READ_E(FD_BAD, 16, 1, ERR(EBADF)),
	PIPE(0),
	SET_READ_E(PIPE_R, 16, 1, ERR(EINVAL)),
	SET_READ_E(T0, 15, 1, ERR(EINVAL)),
	SET_READ_E(T0, 0, 1, ERR(EINVAL)),
	SET_READ_E(T0, 16, 0, ERR(EFAULT)),
	SET_READ_E(T0, 16, 1, ERR(EAGAIN)),
	SET_ARM(T0, 1, 0, REL(3600 * SEC_, 0), OK),
	SET_READ_E(T0, 64, 1, ERR(EAGAIN)) } },
{ "sets.timer_calls_fail_on_a_set", "tfd_set.3 BUGS 4", NULL, 0, {
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 1, AB, BASE(0, 0), OK),
	SETTIME(T0, 0, REL(SEC_, 0), ERR(EINVAL)),
	GETTIME_E(T0, 1, ERR(EINVAL)),
	READ_E(T0, 8, 1, ERR(EINVAL)),
	READ_E(T0, 8, 0, ERR(EINVAL)),
	SET_READ(T0, 4, 1, "1:1") } },
{ "sets.close_ends_the_set", "tfd_set.3 Readiness and the end of a set",
  NULL, 0, {
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 1, AB, BASE(0, 0), OK),
	CLOSE(T0, OK),
	SET_READ_E(T0, 16, 1, ERR(EBADF)),
	SET_GET_E(T0, 1, 1, ERR(EBADF)),
	CLOSE(T0, ERR(EBADF)) } },
{ "sets.records_in_deadline_order", "tfd_set.3 tfd_set_read()", NULL, 0, {
	REFERENCE,
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 30, AB, BASE(30 * MS_, 0), OK),
	SET_ARM(T0, 10, AB, BASE(10 * MS_, 0), OK),
	SET_ARM(T0, 20, AB, BASE(20 * MS_, 0), OK),
	SET_ARM(T0, 40, 0, REL(3600 * SEC_, 0), OK),
	SLEEP(100),
	SET_READ(T0, 8, 3, "10:1 20:1 30:1"),
	SET_READ_E(T0, 128, 1, ERR(EAGAIN)),
	SET_GET_E(T0, 10, 1, ERR(ENOENT)),
	SET_GET(T0, 40, 3600 * SEC_ - 100 * MS_ - TOL, 3600 * SEC_ - 100 * MS_,
	        0) } },
{ "sets.read_keeps_the_records_that_do_not_fit", "tfd_set.3 tfd_set_read()",
  NULL, 0, {
	REFERENCE,
	SET_CREATE(T0, BOOT, NB, NEWFD),
	SET_ARM(T0, 3, AB, BASE(3 * MS_, 0), OK),
	SET_ARM(T0, 1, AB, BASE(MS_, 0), OK),
	SET_ARM(T0, 2, AB, BASE(2 * MS_, 0), OK),
	SLEEP(50),
	SET_READ(T0, 2, 2, "1:1 2:1"),
	POLL(T0, 1000, POLLIN),
	SET_READ(T0, 2, 1, "3:1"),
	POLL(T0, 0, 0),
	SET_READ_E(T0, 16, 1, ERR(EAGAIN)) } },
{ "sets.periodic_key_counts_every_period", "tfd_set.3 tfd_set_read()",
  NULL, 0, {
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 5, AB, BASE(10 * MS_, 20 * MS_), OK),
	SLEEP(100),
	SET_READ(T0, 4, 1, "5:5+"),
	SET_GET(T0, 5, 1, 20 * MS_, 20 * MS_),
	SLEEP(40),
	SET_READ(T0, 4, 1, "5:2+"),
	SET_ARM_OLD(T0, 5, 0, REL(0, 0), 1, 20 * MS_, 20 * MS_),
	SET_GET_E(T0, 5, 1, ERR(ENOENT)) } },
{ "sets.periodic_counts_as_the_reference", "tfd_set.3 tfd_set_read()",
  NULL, 0, {
	REFERENCE,
	SET_CREATE(T0, REAL, NB, NEWFD),
	SET_ARM(T0, 1, AB, BASE(-250 * SEC_, 100 * SEC_), OK),
	SET_ARM(T0, 2, AB, BASE(-SEC_, 0), OK),
	SET_ARM(T0, 3, AB, BASE(-95 * SEC_, 30 * SEC_), OK),
	SET_ARM(T0, 4, 0, REL(3600 * SEC_, 60 * SEC_), OK),
	SET_READ(T0, 8, 3, "1:3 3:4 2:1"),
	SET_GET(T0, 1, 50 * SEC_ - TOL, 50 * SEC_, 100 * SEC_),
	SET_GET_E(T0, 2, 1, ERR(ENOENT)),
	SET_GET(T0, 3, 25 * SEC_ - TOL, 25 * SEC_, 30 * SEC_),
	SET_READ_E(T0, 128, 1, ERR(EAGAIN)) } },
{ "sets.settings_as_the_reference", "tfd_set.3 tfd_set_settime()", NULL, 0, {
	REFERENCE,
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 7, 0, REL(10 * SEC_, 2 * SEC_), OK),
	SET_GET(T0, 7, 10 * SEC_ - TOL, 10 * SEC_, 2 * SEC_),
	SET_ARM_OLD(T0, 7, 0, REL(5 * SEC_, 0), 10 * SEC_ - TOL, 10 * SEC_,
	            2 * SEC_),
	SET_GET(T0, 7, 5 * SEC_ - TOL, 5 * SEC_, 0),
	SET_ARM_OLD(T0, 7, AB, RAW(0, 0, 0, 0), 5 * SEC_ - TOL, 5 * SEC_, 0),
	SET_GET_E(T0, 7, 1, ERR(ENOENT)),
	SET_ARM_OLD(T0, 7, 0, RAW(0, 0, 3, 0), 0, 0, 0),
	SET_GET_E(T0, 7, 0, ERR(ENOENT)) } },
{ "sets.rearm_discards_what_was_not_read", "tfd_set.3 tfd_set_settime()",
  NULL, 0, {
	REFERENCE,
	SET_CREATE(T0, MONO, NB, NEWFD),
	SET_ARM(T0, 1, AB, BASE(0, 0), OK),
	POLL(T0, 1000, POLLIN),
	SET_ARM_OLD(T0, 1, 0, REL(3600 * SEC_, 0), 0, 0, 0),
	SET_READ_E(T0, 16, 1, ERR(EAGAIN)),
	POLL(T0, 0, 0),
	SET_GET(T0, 1, 3600 * SEC_ - TOL, 3600 * SEC_, 0) } },
{ "sets.readable_while_a_key_is_due", "tfd_set.3 Readiness", NULL, 0, {
	SET_CREATE(T0, MONO, 0, NEWFD),
	SET_ARM(T0, 9, 0, REL(3600 * SEC_, 0), OK),
	POLL(T0, 0, 0),
	SET_ARM(T0, 8, AB, BASE(20 * MS_, 0), OK),
	SLEEP(50),
	POLL(T0, 1000, POLLIN),
	EPOLL(T0, 0, EPOLLIN),
	SET_READ(T0, 1, 1, "8:1"),
	POLL(T0, 0, 0),
	SELECT(T0, 0, 0) } },
};

const size_t conf_ncases = sizeof(conf_cases) / sizeof(*conf_cases);
