/* SPDX-License-Identifier: MIT */
/*
 * waits.c - what a thread of the program leaves registered while it blocks
 * on timers: a tfd_read() blocked in read(2) (its transit record: the
 * timer keeps running for it if another thread closes it, and so does one
 * made at its number before its read(2) starts; ops.c), and the timers
 * that a wait of the preload library's holds while it blocks in poll(2)
 * or the like (backend.h, hold).
 *
 * A signal handler may end such a wait by jumping out of it (siglongjmp
 * out of a read an alarm interrupts: the timeout idiom), and
 * pthread_cancel() ends it by unwinding the thread.  Neither comes back
 * through our code.  So nothing of a wait is on the thread's stack, and no
 * cleanup handler is pushed for it (glibc would keep pointing at it after
 * a jump, and a later pthread_exit() of the thread would jump into the
 * abandoned frame): the records are in the thread's own memory, and they
 * are undone
 *   - when the wait returns;
 *   - when the thread ends (a key's destructor: a cancelled wait, or a
 *     thread that jumped out of one and then ended);
 *   - at the thread's next call of the library that cannot come from a
 *     handler interrupting the wait (tfd_waits_check, at every lock).
 * A handler that interrupts a wait runs on a signal frame the kernel
 * pushes below the stack pointer of the blocked system call: whatever it
 * calls runs lower on the stack than the wait by more than that frame
 * (over 900 bytes on x86-64, over 4 KiB on arm64), unless it runs on an
 * alternate signal stack, which sigaltstack() tells.  A call made after a
 * jump out of the wait runs from the frames of the program's that remain,
 * the one it jumped to and the calls that follow: near the wait's own
 * depth, or above.  So a wait is taken as abandoned by a call of its
 * thread that runs above the wait's stack pointer less FRAME_MIN, off
 * the alternate stack.  A call made after a jump from much deeper in the
 * program leaves the record to a later call or to the thread's end
 * (tfd(7), BUGS).
 *
 * The holds of a preload wait are registered by the thread while it gets
 * ready to block (its own calls then: tfd_waits_check passes them over),
 * and marked as blocking, with the stack pointer, just before the system
 * call (tfd_engine_waits_block); only a handler of the same thread could
 * look at them meanwhile, and it only reads them.
 */
#define _GNU_SOURCE
#include "engine/engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define unlikely(x) __builtin_expect(!!(x), 0)
#define READS_MAX 4   /* reads of one thread under way at once: one, and
                       * those of handlers that interrupt it */
#define HELD_SMALL 8  /* holds kept without an allocation */
#define FRAME_MIN 512 /* bytes: less than any signal frame */

struct held {
	struct tfd_hold *h; /* NULL: a free entry */
	uintptr_t sp;       /* 0 while its wait gets ready, then where it
	                     * blocks */
};

/* This thread's waits.  [T]: this thread's alone (and, under the lock, a
 * handler's of this thread).  The holds and transit records they name
 * are [L] as ever. */
struct mine {
	struct tfd_transit read[READS_MAX];
	struct held small[HELD_SMALL];
	struct held *held;   /* small, or allocated; NULL: small */
	unsigned nheld, cap; /* entries in use (the last one's h set) */
	int keyed;           /* the key's destructor will run */
};

static __thread struct mine mine;
/* Reads under way and holds marked blocking: the one word every call
 * looks at (tfd_engine_lock), in the static TLS block (a few bytes of
 * the surplus the C library keeps for libraries loaded later, when
 * libtfd.so is). */
__thread unsigned tfd_waits_blocked __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static int have_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_ends(void *arg);

static void make_key(void)
{
	int ok = pthread_key_create(&key, thread_ends) == 0;

	__atomic_store_n(&have_key, ok, __ATOMIC_RELEASE);
}

/* dlclose() of libtfd.so: the destructor's code goes with it.  Run by
 * whichever thread unloads or exits, which did not make the key: its
 * [A] flag tells that the key is made. */
__attribute__((destructor)) static void unload(void)
{
	if (__atomic_load_n(&have_key, __ATOMIC_ACQUIRE))
		pthread_key_delete(key);
}

/* The thread's end will undo what is left (without it a record would be
 * left linked in memory that goes with the thread: nothing is
 * registered then). */
static int keyed(void)
{
	if (mine.keyed)
		return 1;
	pthread_once(&key_once, make_key);
	if (!have_key || pthread_setspecific(key, &mine) != 0)
		return 0;
	mine.keyed = 1;
	return 1;
}

static struct held *held(void)
{
	return mine.held ? mine.held : mine.small;
}

/* ---- blocked reads ---- */

struct tfd_transit *tfd_waits_read_begin(int fd, struct tfd_hold *h,
                                         uintptr_t sp)
{
	struct tfd_transit *r = NULL;
	unsigned i;

	TFD_ASSERT_LOCKED();
	h->waiters++;
	if (unlikely(!mine.keyed) && !keyed())
		return NULL;
	r = mine.read;
	for (i = 0; r->busy; r++)
		if (++i == READS_MAX)
			return NULL;
	r->fd = fd;
	r->closed = 0;
	r->also[0] = h;
	r->nalso = 1;
	r->next = tfd_eng.transit;
	tfd_eng.transit = r;
	r->sp = sp;
	r->busy = 1;
	tfd_waits_blocked++;
	return r;
}

/* r's read(2) returned, or was abandoned: it waits on none of its timers
 * any more. */
void tfd_waits_transit_end(struct tfd_transit *r)
{
	struct tfd_transit **link = &tfd_eng.transit;
	unsigned i;

	while (*link && *link != r)
		link = &(*link)->next;
	if (*link)
		*link = r->next;
	for (i = 0; i < r->nalso; i++) {
		struct tfd_hold *h = r->also[i];

		if (--h->waiters == 0 && h->closed)
			tfd_engine_let_hold_go(h);
	}
	tfd_engine_stop_if_idle();
}

void tfd_waits_read_end(struct tfd_transit *r)
{
	TFD_ASSERT_LOCKED();
	if (!r->busy)
		return; /* undone already */
	r->busy = 0;
	tfd_waits_blocked--;
	tfd_waits_transit_end(r);
}

/* ---- holds of the preload's waits ---- */

int tfd_waits_hold(struct tfd_hold *h)
{
	struct held *a = held();
	unsigned cap = mine.held ? mine.cap : HELD_SMALL;

	TFD_ASSERT_LOCKED();
	if (!keyed())
		return ENOMEM;
	if (mine.nheld == cap) {
		struct held *n = malloc(2 * cap * sizeof(*n));

		if (!n)
			return ENOMEM;
		memcpy(n, a, mine.nheld * sizeof(*n));
		if (mine.held)
			free(mine.held);
		mine.held = a = n;
		mine.cap = 2 * cap;
	}
	a[mine.nheld].h = h;
	a[mine.nheld].sp = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mine.nheld++;
	h->waiters++;
	return 0;
}

static void let_go(struct tfd_hold *h)
{
	if (--h->waiters == 0 && h->closed)
		tfd_engine_let_hold_go(h);
}

static void drop(unsigned i)
{
	struct held *a = held();

	a[i].h = NULL;
	while (mine.nheld && !a[mine.nheld - 1].h)
		mine.nheld--;
}

/* The wait that is getting ready, or has just blocked, lets h go: its
 * latest entry for h that is not marked blocking. */
int tfd_waits_unhold(struct tfd_hold *h)
{
	struct held *a = held();
	unsigned i;

	TFD_ASSERT_LOCKED();
	for (i = mine.nheld; i-- > 0;)
		if (a[i].h == h && !a[i].sp) {
			drop(i);
			let_go(h);
			return 1;
		}
	return 0; /* undone already */
}

void tfd_engine_waits_end(void)
{
	struct held *a;
	unsigned i;
	int cs;

	if (!mine.nheld)
		return;
	tfd_engine_lock(&cs);
	a = held();
	for (i = mine.nheld; i-- > 0;)
		if (a[i].h && !a[i].sp) {
			struct tfd_hold *h = a[i].h;

			drop(i);
			let_go(h);
		}
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
}

/* The preload's wait blocks now: its holds, registered since, are marked
 * with where it blocks.  Returns the mark, for tfd_engine_waits_unblock
 * when the system call returns (0: nothing held). */
uintptr_t tfd_engine_waits_block(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct held *a = held();
	unsigned i, n = 0;

	tfd_may_not_return();
	for (i = 0; i < mine.nheld; i++)
		if (a[i].h && !a[i].sp) {
			a[i].sp = sp;
			n++;
		}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	tfd_waits_blocked += n;
	return n ? sp : 0;
}

void tfd_engine_waits_unblock(uintptr_t sp)
{
	struct held *a = held();
	unsigned i;

	if (!sp)
		return;
	for (i = 0; i < mine.nheld; i++)
		if (a[i].h && a[i].sp == sp) {
			a[i].sp = 0;
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			tfd_waits_blocked--;
		}
}

/* ---- abandoned waits ---- */

static int on_alt_stack(void)
{
	stack_t ss;

	return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

/* A wait that blocked at sp, seen from a call running at here. */
static int left(uintptr_t sp, uintptr_t here)
{
	return sp > FRAME_MIN && here > sp - FRAME_MIN;
}

void tfd_waits_check(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	struct held *a;
	unsigned i;
	int alt = -1;

	TFD_ASSERT_LOCKED();
	for (i = 0; i < READS_MAX; i++) {
		struct tfd_transit *r = &mine.read[i];

		if (!r->busy || !left(r->sp, here))
			continue;
		if (alt < 0)
			alt = on_alt_stack();
		if (alt)
			return; /* a handler's, on its own stack */
		tfd_waits_read_end(r);
	}
	a = held();
	for (i = mine.nheld; i-- > 0;) {
		struct tfd_hold *h = a[i].h;

		if (!h || !a[i].sp || !left(a[i].sp, here))
			continue;
		if (alt < 0)
			alt = on_alt_stack();
		if (alt)
			return;
		tfd_waits_blocked--;
		drop(i);
		let_go(h);
	}
	tfd_engine_stop_if_idle();
}

/* The thread ends (also cancelled, or after a jump out of a wait): what it
 * left registered goes. */
static void thread_ends(void *arg)
{
	struct held *a = held();
	unsigned i;
	int cs;

	(void)arg;
	tfd_engine_relock(&cs);
	for (i = 0; i < READS_MAX; i++)
		tfd_waits_read_end(&mine.read[i]);
	for (i = mine.nheld; i-- > 0;)
		if (a[i].h) {
			struct tfd_hold *h = a[i].h;

			drop(i);
			let_go(h);
		}
	mine.nheld = 0;
	tfd_waits_blocked = 0;
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
	free(mine.held);
	mine.held = NULL;
	mine.keyed = 0;
}

/* In a forked child: the parent's records are gone (fork.c forgets the
 * transit list and every waiter count); so are this thread's. */
void tfd_waits_forget(void)
{
	memset(mine.read, 0, sizeof(mine.read));
	mine.nheld = 0;
	tfd_waits_blocked = 0;
}
