# SPDX-License-Identifier: MIT
# vpreempt.py - a busy Python thread and a thread that waits on time
# (issue 21): CPython preempts the busy thread from the waiting one with a
# 5 ms timed wait on its lock's condition.  On virtual time that wait
# never ended while the busy thread ran, so the main thread's sleep never
# got the lock back: it hung.  Now the busy thread lets time flow at the
# real rate (tfd-preload(7), Busy programs).  Prints facts, never times.
import threading
import time

stop = False


def spin():
    n = 0
    while not stop:
        n += 1


t = threading.Thread(target=spin)
t.start()
t0 = time.monotonic()
time.sleep(0.5)
stop = True
t.join()
print("a busy thread was preempted; sleep(0.5) not early:",
      time.monotonic() - t0 >= 0.5)
