# SPDX-License-Identifier: MIT
# vpython.py - Python's three ways to wait a time (issue 13): time.sleep
# (clock_nanosleep), threading.Timer (a semaphore's timed wait), and
# asyncio.sleep (epoll_wait).  Prints each length in ms, rounded: on
# virtual time exact, natively (SCALE=1000) a thousandth, never early.
import asyncio
import sys
import threading
import time

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def report(what, got, want):
    ok = want <= got < want + max(0.5 / scale, 0.001)
    exact = abs(got - want) <= 0.001
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what,
                         "exact to 1 ms" if exact else "within 0.5 s"))
    return ok


ok = True
t0 = time.monotonic()
time.sleep(30 / scale)
ok &= report("time.sleep(30)", time.monotonic() - t0, 30 / scale)

done = threading.Event()
t0 = time.monotonic()
timer = threading.Timer(20 / scale, done.set)
timer.start()
done.wait()
ok &= report("threading.Timer(20)", time.monotonic() - t0, 20 / scale)
timer.join()


async def main():
    t = time.monotonic()
    await asyncio.sleep(15 / scale)
    return time.monotonic() - t


ok &= report("asyncio.sleep(15)", asyncio.run(main()), 15 / scale)
print("all passed" if ok else "some failed")
sys.exit(0 if ok else 1)
