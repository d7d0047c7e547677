// SPDX-License-Identifier: MIT
// vguest.go - what a Go program does around its timers, on virtual time
// (issue 21; libtfd-preload's gosys.c takes the runtime's own system
// calls with SIGILL, which must never come blocked): goroutines that
// end while locked to their thread (the runtime blocks every signal as
// such a thread ends), C threads calling into Go (it blocks them as it
// takes such a thread in), signal.Notify of a signal sent while the
// receiver sleeps, a C thread in sigsuspend() with every other signal
// blocked, SIGILL itself sent and caught, a C handler for SIGILL
// with SA_RESETHAND, a child killed by its context's deadline.  Prints
// facts (vfacts.go), the same natively and on virtual time.
//
//   vguest [SCALE]   (times divided by SCALE)
package main

/*
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void goCallback(int);

static void *run(void *a) { goCallback((int)(long)a); return 0; }

// The same, from a thread that blocks every signal first.
static void *run_blocked(void *a)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, 0);
	goCallback((int)(long)a);
	return 0;
}

static int start(int n, int blocked)
{
	pthread_t t[64];
	int i, made = 0;

	for (i = 0; i < n && i < 64; i++)
		if (pthread_create(&t[i], 0, blocked ? run_blocked : run,
		                   (void *)(long)i) == 0)
			made++;
	for (i = 0; i < made; i++)
		pthread_join(t[i], 0);
	return made;
}

// sigsuspend() with every signal blocked but SIGUSR1, on a thread of
// its own: its tid first, then what sigsuspend() returned.
static volatile int susp_tid;

static int susp(void)
{
	sigset_t m;

	susp_tid = (int)syscall(SYS_gettid);
	sigfillset(&m);
	sigdelset(&m, SIGUSR1);
	return sigsuspend(&m);
}

static int susp_thread(void) { return susp_tid; }

static volatile sig_atomic_t seen;
static void once(int s) { (void)s; seen++; }

// A one-shot SIGILL handler of C's, sent once: the count it saw, and
// whether SIGILL's action is the default again.
static int one_shot(void)
{
	struct sigaction sa, now;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = once;
	sa.sa_flags = SA_RESETHAND;
	if (sigaction(SIGILL, &sa, 0))
		return -1;
	raise(SIGILL);
	sigaction(SIGILL, 0, &now);
	return seen * 10 + (now.sa_handler == SIG_DFL);
}
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var calls int32

//export goCallback
func goCallback(i C.int) { atomic.AddInt32(&calls, 1) }

func main() {
	setScale()

	// Threads that end with their goroutine (LockOSThread).
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			time.Sleep(ms(100))
		}()
	}
	wg.Wait()
	report("20 goroutines locked to their threads sleep 0.1 s and end", time.Since(t0), ms(100))

	// C threads calling Go, then from threads that block every signal.
	made := C.start(32, 0)
	fact("32 C threads call into Go", made == 32 && atomic.LoadInt32(&calls) == 32)
	made = C.start(16, 1)
	fact("16 C threads that block every signal call into Go",
		made == 16 && atomic.LoadInt32(&calls) == 48)

	// A signal sent while the receiver sleeps on a channel.
	c := make(chan os.Signal, 2)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGILL)
	t0 = time.Now()
	go func() {
		time.Sleep(ms(2000))
		syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	}()
	s := <-c
	fact("signal.Notify: SIGUSR1 sent at 2 s", s == syscall.SIGUSR1)
	report("signal.Notify: SIGUSR1 at 2 s", time.Since(t0), ms(2000))
	syscall.Kill(os.Getpid(), syscall.SIGILL)
	select {
	case s = <-c:
		fact("signal.Notify: SIGILL sent", s == syscall.SIGILL)
	case <-time.After(ms(3000)):
		fact("signal.Notify: SIGILL sent", false)
	}

	// A C thread in sigsuspend() with every other signal blocked, sent
	// SIGUSR1: Go's handler runs there.
	res := make(chan int)
	go func() {
		runtime.LockOSThread()
		res <- int(C.susp())
	}()
	for C.susp_thread() == 0 {
		time.Sleep(ms(10))
	}
	time.Sleep(ms(100))
	syscall.Tgkill(os.Getpid(), int(C.susp_thread()), syscall.SIGUSR1)
	fact("sigsuspend() with all but SIGUSR1 blocked, sent SIGUSR1: -1", <-res == -1)
	fact("and signal.Notify has it", <-c == syscall.SIGUSR1)
	signal.Reset(syscall.SIGUSR1, syscall.SIGILL)

	// A child killed at its context's deadline.
	t0 = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), ms(3000))
	err := exec.CommandContext(ctx, "sleep", fmt.Sprintf("%g", float64(ms(10000))/1e9)).Run()
	cancel()
	fact("exec.CommandContext(3 s) of sleep 10: killed", err != nil)
	report("exec.CommandContext(3 s) of sleep 10: at 3 s", time.Since(t0), ms(3000))

	// C's one-shot SIGILL handler, raised once.
	fact("a C handler of SIGILL with SA_RESETHAND: runs once, then the default", C.one_shot() == 11)
	time.Sleep(ms(10))
	fact("and time.Sleep after it", true)

	finish()
}
