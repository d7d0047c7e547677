// SPDX-License-Identifier: MIT
// VTimers.java - a Java program's timers on virtual time (issue 21):
// Thread.sleep, a ScheduledExecutorService at a fixed rate, Future.get
// with a timeout, Object.wait and LockSupport.parkNanos with timeouts.
// Prints facts, never times: each wait ends, never early; with TFD_EXACT
// set (virtual time) at its deadline to the microsecond.
//
//   java VTimers [SCALE]   (times divided by SCALE)
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

public class VTimers {
    static final boolean exact = System.getenv("TFD_EXACT") != null;
    static boolean ok = true;
    static long scale = 1;

    static long ms(long n) {
        return n * 1000000L / scale;
    }

    static void report(String what, long got, long want) {
        boolean good = got >= want && (!exact || Math.abs(got - want) < 1000);
        ok &= good;
        System.out.println((good ? "ok   " : "FAIL ") + what);
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0)
            scale = Long.parseLong(args[0]);
        long t0 = System.nanoTime();
        Thread.sleep(ms(2000) / 1000000L);
        report("Thread.sleep(2 s)", System.nanoTime() - t0, ms(2000));

        ScheduledExecutorService ex = Executors.newScheduledThreadPool(2);
        AtomicInteger ticks = new AtomicInteger();
        t0 = System.nanoTime();
        ScheduledFuture<?> f = ex.scheduleAtFixedRate(
            ticks::incrementAndGet, 0, ms(1000), TimeUnit.NANOSECONDS);
        Thread.sleep(ms(5500) / 1000000L);
        f.cancel(false);
        System.out.println((ticks.get() == 6 ? "ok   " : "FAIL ") +
                           "scheduleAtFixedRate(1 s) for 5.5 s: 6 runs");
        ok &= ticks.get() == 6;

        t0 = System.nanoTime();
        Future<String> late = ex.schedule(() -> "late", ms(4000),
                                          TimeUnit.NANOSECONDS);
        try {
            late.get(ms(2000), TimeUnit.NANOSECONDS);
            System.out.println("FAIL Future.get(2 s): no TimeoutException");
            ok = false;
        } catch (TimeoutException e) {
            report("Future.get(2 s) of a task due at 4 s: TimeoutException",
                   System.nanoTime() - t0, ms(2000));
        }
        report("Future.get() of it: \"" + late.get() + "\" at 4 s",
               System.nanoTime() - t0, ms(4000));

        Object lock = new Object();
        t0 = System.nanoTime();
        synchronized (lock) {
            lock.wait(ms(1500) / 1000000L);
        }
        report("Object.wait(1.5 s)", System.nanoTime() - t0, ms(1500));

        t0 = System.nanoTime();
        long left = ms(700);
        for (long end = t0 + left; left > 0; left = end - System.nanoTime())
            LockSupport.parkNanos(left);
        report("LockSupport.parkNanos(0.7 s)", System.nanoTime() - t0,
               ms(700));

        ex.shutdown();
        System.out.println((ex.awaitTermination(10, TimeUnit.SECONDS) ?
                            "ok   " : "FAIL ") + "the executor ends");
        System.out.println(ok ? "all ok" : "FAILED");
    }
}
