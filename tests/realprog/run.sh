#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the tests of libtfd-preload.so with real programs.
#
# Each program prints events, not times.  Its output on Linux's timerfd
# (run as it is) must equal its output under `tfd exec --backend B` for
# each backend B (engine, kernel, virtual): same events, same order, same
# counts.  Then `tfd exec` itself: its errors and exit status, --trace,
# and that the preload follows the program into the programs it runs.
# One line per test, then "realprog: N passed, N failed, N skipped"; exit
# status 1 if any failed.  A program that was not built (its package is
# missing) is skipped with a message.  TFD_TESTS (make check TESTS=...)
# picks groups by the names in their `selected` line (tests/select.sh).
#
# The helpers are in lib.sh, each group in groups/NAME.sh; this runs the
# groups in their order.
#
#   TFD_TOOL=build/tfd sh tests/realprog/run.sh build/realprog
set -u
dir=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
tool=${TFD_TOOL:?TFD_TOOL names the tfd program}
case $tool in /*) ;; *) tool=$(pwd)/$tool ;; esac
out=$(mktemp -d "${TMPDIR:-/tmp}/tfd-realprog.XXXXXX")
# The programs read nothing of the caller's: a wait of theirs on a
# terminal or a pipe from outside would flow in real time on virtual
# time (tfd-preload(7), When time moves), as `make check` run from a
# terminal gives them.
exec </dev/null
trap 'rm -rf "$out"' EXIT
# A sanitizer build: its runtime is linked into the programs, and the
# preload comes first in the list.
ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export ASAN_OPTIONS
# --raw-syscalls emulates a timerfd system call in its SIGSYS handler.
# That signal is synchronous, raised by the program's own system-call
# instruction, so calling the library there is a function call at that
# point of the program, not an interruption: ThreadSanitizer's report of
# signal-unsafe calls does not apply.  A forked child of a program that
# holds timers starts the library's service thread (tfd(7), FORK AND
# EXEC), which ThreadSanitizer refuses by default after a fork of a
# threaded process: die_after_fork=0, as `make check` gives the suite.
tsan="report_signal_unsafe=0 die_after_fork=0"
TSAN_OPTIONS="$tsan${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export TSAN_OPTIONS
. "$src/../select.sh"
. "$src/lib.sh"
for g in "$src"/groups/*.sh; do
	. "$g"
done

# Programs compared with Linux on each backend, and their other modes.
compare timerfd_glibc
compare dropin
compare deliver
deliver_modes
onehop
clockjump
sanitized
dropin_modes
rawsys
nowork
noalloc
setclose
apierrs
compare wl_timers
compare sd_timers

conform engine
conform engine post

# Virtual time, not under ThreadSanitizer: it defers signals inside its
# own interceptors, which can hold back a signal that virtual time sends
# at once (vthreads.sh).
case ${TFD_SAN:-} in
*thread*)
	selected conform &&
	    skip "conformance through the preload (virtual): ThreadSanitizer"
	selected vthreads && skip "vthreads: ThreadSanitizer"
	selected vclock && skip "vclock: ThreadSanitizer"
	names="vwaits domain loop wl_timers sd_timers tree vtree targets apivirt"
	msg="virtual-time domain (vwaits, determinism, targets, apivirt,"
	msg="$msg deadlines,"
	selected "$names deadlines outside" &&
	    skip "$msg outside): ThreadSanitizer"
	;;
*)
	conform virtual
	vthreads
	vclock
	vwaits
	domain
	targets
	deadlines
	outside
	apivirt
	;;
esac

# Real suites and runtimes.
stressng
glib
pysuites
golang

vscale
vpark
vctor
vnagle
vuring

exec_trace
finish
