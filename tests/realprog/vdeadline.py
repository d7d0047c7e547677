# SPDX-License-Identifier: MIT
# vdeadline.py - Python's loops that wait until they are past their
# deadline (issue 21): subprocess.run(timeout=) with its output captured
# (a selector's wait, "if now > end: raise"), and concurrent.futures'
# result(timeout=) and as_completed(timeout=) (Event.wait(0) only tries a
# lock), also of a process pool; a vfork child read through select().  On
# virtual time they spun at their deadline for ever.  Prints
# facts, never times: each timeout raised, never early; with TFD_EXACT
# set (virtual time) at its deadline to the microsecond.
#
#   python3 vdeadline.py [SCALE]   (times divided by SCALE)
import concurrent.futures as cf
import os
import select
import subprocess
import sys
import time

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
exact = bool(os.environ.get("TFD_EXACT"))
ok = True


def report(what, got, want):
    global ok
    good = got >= want and (not exact or abs(got - want) < 1e-6)
    ok &= good
    print("%s %s" % ("ok  " if good else "FAIL", what))
    if not good:
        print("     at %.9f s, wanted %.9f s" % (got, want))


t0 = time.monotonic()
try:
    subprocess.run(["sleep", str(30 / scale)], timeout=5 / scale,
                   capture_output=True)
    print("FAIL subprocess.run: no TimeoutExpired")
    ok = False
except subprocess.TimeoutExpired:
    report("subprocess.run(capture_output, timeout=5): TimeoutExpired",
           time.monotonic() - t0, 5 / scale)

with cf.ThreadPoolExecutor(2) as ex:
    t0 = time.monotonic()
    f = ex.submit(time.sleep, 10 / scale)
    try:
        f.result(timeout=3 / scale)
        print("FAIL result(timeout=3): no TimeoutError")
        ok = False
    except cf.TimeoutError:
        report("Future.result(timeout=3): TimeoutError",
               time.monotonic() - t0, 3 / scale)
    try:
        for _ in cf.as_completed([f], timeout=2 / scale):
            pass
        print("FAIL as_completed(timeout=2): no TimeoutError")
        ok = False
    except cf.TimeoutError:
        report("as_completed(timeout=2): TimeoutError",
               time.monotonic() - t0, 5 / scale)
report("the pool's task done after it", time.monotonic() - t0, 10 / scale)

# A child started with vfork (Popen), read through select() on its pipe:
# the child's sleep, not the select's timeout, ends the wait (the child
# had no place in the tree until its program loaded the library, and the
# select ran out first, 4 runs in 5).
t0 = time.monotonic()
p = subprocess.Popen(["sh", "-c", "sleep %s; echo done" % (13 / scale)],
                     stdout=subprocess.PIPE)
r, _, _ = select.select([p.stdout], [], [], 20 / scale)
if r and p.stdout.read().strip() == b"done":
    report("Popen + select(20) on its pipe: the child's output at 13 s",
           time.monotonic() - t0, 13 / scale)
else:
    print("FAIL Popen + select(20): %s" % ("no output" if r else "timeout"))
    ok = False
p.wait()

# A process pool: its manager thread and the result's wait (it livelocked).
with cf.ProcessPoolExecutor(1) as ex:
    ex.submit(int).result()  # the worker started
    t0 = time.monotonic()
    f = ex.submit(time.sleep, 10 / scale)
    try:
        f.result(timeout=5 / scale)
        print("FAIL process pool result(timeout=5): no TimeoutError")
        ok = False
    except cf.TimeoutError:
        report("ProcessPoolExecutor: result(timeout=5): TimeoutError",
               time.monotonic() - t0, 5 / scale)
sys.exit(0 if ok else 1)
