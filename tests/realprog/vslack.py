# SPDX-License-Identifier: MIT
# vslack.py - timer slack on virtual time (tfd-preload(7), When time
# moves): waits due within 50 us of the earliest end together, at the
# latest of their deadlines; a wait alone ends exactly; no wait ends past
# a timer's expiry, and the timer is exact.  Prints when each thread's
# sleep ended, in us after the start (time stands while threads run, so
# every sleep starts at 0).
import signal
import threading
import time

t0 = time.monotonic()
ended = {}


def sleeper(name, s):
    time.sleep(s)
    ended[name] = time.monotonic() - t0


# SIGALRM (an interval timer: exact) is taken by the main thread alone,
# with sigtimedwait: the other threads start with it blocked.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
signal.setitimer(signal.ITIMER_REAL, 3.0)
waits = [("sleep 1 s", 1.0), ("sleep 1.00003 s", 1.00003),
         ("sleep 2 s, alone", 2.0), ("sleep 2.99997 s", 2.99997),
         ("sleep 3.00002 s", 3.00002),
         ("sleep 4 s", 4.0), ("sleep 4.0001 s", 4.0001)]
threads = [threading.Thread(target=sleeper, args=w) for w in waits]
for t in threads:
    t.start()
if signal.sigtimedwait({signal.SIGALRM}, 10):
    ended["SIGALRM at 3 s"] = time.monotonic() - t0
for t in threads:
    t.join()
for name in sorted(ended, key=lambda n: (ended[n], n)):
    print("%-18s ended at %.0f us" % (name, ended[name] * 1e6))
