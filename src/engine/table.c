/* SPDX-License-Identifier: MIT */
/*
 * table.c - which descriptor names which timer in this process, and how
 * long this process holds a timer: create, dup, release, close, and the
 * holds kept after their last descriptor for a thread still waiting on
 * them.  A timer itself goes when no process of the family holds it
 * (family.c).  The backend tables.
 */
#define _GNU_SOURCE
#include "engine/engine.h"
#include "engine/notify.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct tfd_engine tfd_eng = {
	.self = -1,
	.pool_max = POOL_MAX,
};

/* The hold fd names: 0, or EBADF (not open) / EINVAL (not a timer). */
int tfd_engine_find(int fd, struct tfd_hold **h)
{
	if (fd >= 0 && (size_t)fd < tfd_eng.nslot && tfd_eng.slot[fd]) {
		*h = tfd_eng.slot[fd];
		return 0;
	}
	if (fd < 0 || (fcntl(fd, F_GETFD) < 0 && errno == EBADF))
		return EBADF;
	return EINVAL;
}

/* A post to h's timer is being written without the lock: wait until it
 * landed, so that a drain after this sees it.  The lock is dropped
 * meanwhile, so the wait holds h (as a waiter); 1 if another thread
 * closed h meanwhile (the caller lets it go if no one else waits). */
int tfd_engine_wait_inflight(struct tfd_hold *h)
{
	int was = h->closed, n;

	if (!__atomic_load_n(&h->t->inflight, __ATOMIC_ACQUIRE))
		return 0;
	h->waiters++;
	/* A post takes a system call: look again after a yield, and sleep
	 * only if it takes longer (the service thread wakes sleepers once
	 * its whole batch is written). */
	for (n = 0; __atomic_load_n(&h->t->inflight, __ATOMIC_ACQUIRE); n++)
		if (n < 16)
			tfd_family_yield();
		else
			tfd_family_wait();
	h->waiters--;
	return h->closed && !was;
}

/* ---- holds ---- */

/* Holds are taken from chunks of their own (engine.h, struct tfd_chunk),
 * those with a free hold first; a hold is listed in place.  A create
 * takes its hold before it may drop the lock (open_timer), so there is no
 * room to reserve for creates under way. */

static void chunk_unlink(struct tfd_chunk **list, struct tfd_chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*list = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

static void chunk_push(struct tfd_chunk **list, struct tfd_chunk *c)
{
	c->prev = NULL;
	c->next = *list;
	if (c->next)
		c->next->prev = c;
	*list = c;
}

/* A free hold, zeroed and not listed, or NULL (no memory).  Lock held, not
 * inside fork() (it may allocate). */
struct tfd_hold *tfd_hold_new(void)
{
	struct tfd_chunk *c = tfd_eng.room;
	struct tfd_hold *h;
	unsigned i;

	TFD_ASSERT_LOCKED();
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		for (i = HOLD_CHUNK; i-- > 0;) {
			c->h[i].ix = (unsigned char)i;
			c->h[i].next = c->free;
			c->free = &c->h[i];
		}
		chunk_push(&tfd_eng.room, c);
	}
	h = c->free;
	c->free = h->next;
	c->used++;
	if (!c->free) {
		chunk_unlink(&tfd_eng.room, c);
		chunk_push(&tfd_eng.full, c);
	}
	i = h->ix;
	memset(h, 0, sizeof(*h));
	h->ix = (unsigned char)i;
	return h;
}

/* h back to its chunk; the chunk goes if that leaves it empty, unless it
 * is the only one with room (a program that makes and closes one timer at
 * a time keeps it) or a thread is looking at holds without the lock (it
 * goes with the next hold freed in it).  Lock held, not inside fork() (it
 * may free). */
void tfd_hold_free(struct tfd_hold *h)
{
	struct tfd_chunk *c = tfd_chunk_of(h);

	TFD_ASSERT_LOCKED();
	if (!c->free) {
		chunk_unlink(&tfd_eng.full, c);
		chunk_push(&tfd_eng.room, c);
	}
	h->listed = 0;
	h->next = c->free;
	c->free = h;
	if (--c->used == 0 && (tfd_eng.room != c || c->next) &&
	    !tfd_engine_looked_at()) {
		chunk_unlink(&tfd_eng.room, c);
		free(c);
	}
}

/* h, taken with tfd_hold_new(), is one of this process's holds now. */
void tfd_engine_hold_add(struct tfd_hold *h)
{
	h->listed = 1;
	tfd_eng.nholds++;
}

static void hold_remove(struct tfd_hold *h)
{
	h->listed = 0;
	tfd_eng.nholds--;
}

/* No descriptor and no waiter is left here: this process lets go of the
 * timer.  It goes if no other process holds it; if we delivered it,
 * another that holds it takes over.  Our copy of its file is closed by
 * the service thread, which alone can reach it. */
void tfd_engine_let_hold_go(struct tfd_hold *h)
{
	struct tfd_timer *t = h->t;

	TFD_ASSERT_LOCKED();
	hold_remove(h);
	tfd_engine_unreserve(tfd_clock_queues(t->clockid));
	if ((t->flags & T_USED) && t->gen == h->gen) {
		t->holders &= ~tfd_proc_bit(tfd_eng.self);
		if (t->deliverer == tfd_eng.self) {
			tfd_engine_unqueue(t);
			tfd_engine_inbox_unlink(t);
			t->deliverer = NO_PROC;
		}
		if (!t->holders)
			tfd_family_free_timer(t);
		else if (t->deliverer == NO_PROC)
			tfd_family_orphan(t);
	}
	if (!h->direct && h->file >= 0) {
		tfd_engine_free_later(h);
	} else if (tfd_eng.in_fork) {
		h->file = -1; /* inside fork(): freed later (fork.c) */
		tfd_engine_free_later(h);
	} else {
		tfd_hold_free(h);
	}
	if (tfd_eng.nholds == 0 && tfd_eng.state == STOPPED &&
	    tfd_eng.self >= 0 && !tfd_eng.freed && !tfd_eng.creating) {
		tfd_family_free_proc(tfd_eng.self); /* no thread owns it */
		tfd_eng.self = -1;
	}
}

/* This process's file for h's timer, to post to.  A forked child's holds
 * have copies its service thread took of the inherited numbers as fork()
 * returned (fork.c), each compared, the first time it is needed, with the
 * id of the timer's eventfd (the parent may have closed the number plainly
 * and reused it; as long as the copy is held, no new eventfd can take the
 * id).  Where the thread starts later (fork.c, START_IN_FORK), the copy is
 * taken then, from the lowest number naming the timer.  On the fallback
 * the file is that number itself.  Comparing needs the service thread's
 * table (service).  -1 if there is none. */
int tfd_engine_hold_file(struct tfd_hold *h, int service)
{
	size_t i;
	int k;

	if ((h->file >= 0 && !h->unchecked) || h->closed)
		return h->file;
	if (!service && !h->direct)
		return -1;
	k = h->file;
	if (k < 0) {
		for (i = 0; i < tfd_eng.nslot && tfd_eng.slot[i] != h; i++)
			;
		if (i == tfd_eng.nslot)
			return -1;
		if (h->direct)
			return h->file = (int)i;
		k = h->efd_id ? tfd_files_fetch(getpid(), (int)i) : -1;
		if (k < 0)
			return -1;
	}
	h->unchecked = 0;
	if (!h->efd_id || tfd_files_id(k) != h->efd_id) {
		tfd_files_close(k); /* not the timer's */
		h->efd_id = 0;      /* never again */
		return h->file = -1;
	}
	return h->file = k;
}

/* Holds a forked child dropped inside fork(), with no file to close: with
 * no service thread to free them, the next create does. */
static void free_dropped(void)
{
	struct tfd_hold **link = &tfd_eng.freed, *h;

	while ((h = *link)) {
		if (h->file < 0) {
			*link = h->next;
			tfd_eng.nfreed--;
			tfd_hold_free(h);
		} else {
			link = &h->next;
		}
	}
}

/* ---- the timer's file for the service thread (files.c) ---- */

/* Have the service thread copy fd's file into its table, and wait until
 * it has: the number is the program's until create returns, so what is
 * copied is the timer's file.  r->result: the copy's number, or -errno. */
static void fetch(struct tfd_fetch *r, int fd)
{
	r->fd = fd;
	r->tid = gettid();
	r->result = r->done = 0;
	r->id = 0;
	while (tfd_eng.nfetch == FETCH_MAX)
		tfd_family_wait();
	tfd_eng.fetch[tfd_eng.nfetch++] = r;
	tfd_engine_poke();
	while (!r->done)
		tfd_family_wait();
}

/* Another number naming h here, or -1. */
static int other_number(const struct tfd_hold *h)
{
	size_t i;

	for (i = 0; i < tfd_eng.nslot; i++)
		if (tfd_eng.slot[i] == h)
			return (int)i;
	return -1;
}

/* From now on this process posts to the program's own numbers (the
 * fallback, files.c): a forked child whose thread could not take a table
 * of its own, or a process whose mechanism was refused once timers ran.
 * Each hold's file is the lowest number naming it here, unless the kernel
 * says that number is another eventfd now (closed plainly and reused); a
 * timer we deliver with no file left here is left to another process
 * that holds it, as when it is closed on the fallback (drop_fd).  The
 * kernel is asked only by a thread with a table of its own (own: the
 * service thread that leaves for the fallback, service.c), where the
 * fdinfo's descriptor takes none of the program's numbers; a thread that
 * shares the program's table takes the numbers as they are.  Lock held,
 * no post of ours being written. */
void tfd_engine_holds_direct(int own)
{
	struct tfd_hold *h;

	TFD_HOLDS_EACH(h) {
		struct tfd_timer *t = h->t;
		uint32_t id;
		int k;

		if (h->direct)
			continue;
		h->direct = 1;
		h->unchecked = 0;
		k = h->closed ? -1 : other_number(h);
		if (k >= 0 && own && h->efd_id &&
		    (id = tfd_files_id_program(k)) != 0 && id != h->efd_id)
			k = -1;
		h->file = k;
		if (!(t->flags & T_USED) || t->gen != h->gen ||
		    t->deliverer != tfd_eng.self)
			continue;
		t->file = k;
		if (k < 0 && t->holders != tfd_proc_bit(tfd_eng.self)) {
			tfd_engine_unqueue(t);
			tfd_family_orphan(t);
		}
	}
}

/* ---- lifetimes ---- */

/* The user's descriptor fd no longer names its timer; with the last one
 * here the hold goes, unless a thread here still waits on it: then the
 * timer keeps running until that wait ends (SPEC 2, closing). */
static void drop_fd(int fd)
{
	struct tfd_hold *h = tfd_eng.slot[fd];
	struct tfd_timer *t = h->t;

	tfd_eng.slot[fd] = NULL;
	tfd_engine_number_gone(fd);
	h->nfds--;
	if (h->direct && h->file == fd) {
		/* Posts go to fd: none after this, and one being written
		 * lands before the caller closes fd. */
		h->file = -1;
		if (t->deliverer == tfd_eng.self)
			t->file = -1;
		if (tfd_engine_wait_inflight(h)) {
			if (!h->waiters) /* another thread closed the rest */
				tfd_engine_let_hold_go(h);
			return;
		}
		h->file = h->nfds ? other_number(h) : -1;
		if (t->deliverer == tfd_eng.self)
			t->file = h->file;
	}
	if (h->nfds)
		return;
	tfd_eng.ntimers--;
	tfd_engine_wait_inflight(h); /* no other can close it: no number */
	/* Never readable again through this file, unless another process
	 * still holds it: what was posted is theirs to read. */
	if (t->holders == tfd_proc_bit(tfd_eng.self))
		tfd_engine_drain(t, fd);
	if (h->waiters) {
		h->closed = 1;
		if (h->file < 0 && t->deliverer == tfd_eng.self &&
		    t->holders != tfd_proc_bit(tfd_eng.self)) {
			/* We cannot post any more: let another process. */
			tfd_engine_unqueue(t);
			tfd_family_orphan(t);
		}
		return;
	}
	tfd_engine_let_hold_go(h);
}

/* A number we just opened cannot belong to a timer the user closed with
 * plain close(): forget such a stale entry. */
static void forget_stale(int fd)
{
	if (fd >= 0 && (size_t)fd < tfd_eng.nslot && tfd_eng.slot[fd])
		drop_fd(fd);
}

/* The slot table grows into a new one: the old is freed at once, or, if
 * a thread may be looking at it without the lock (tfd_engine_quiet), at
 * the next growth that nobody looks at.  The new table is in place before
 * its size says so: a look that sees the new size sees the new table. */
static int grow_table(int fd)
{
	size_t n = tfd_eng.nslot;
	struct tfd_hold **s, **was = tfd_eng.slot;
	unsigned i;

	if ((size_t)fd < tfd_eng.nslot)
		return 0;
	if (tfd_eng.nold_slot == sizeof(tfd_eng.old_slot) /
	                                sizeof(*tfd_eng.old_slot)) {
		if (tfd_engine_looked_at()) /* (40 growths reach 2^30) */
			return ENOMEM;
		for (i = 0; i < tfd_eng.nold_slot; i++)
			free(tfd_eng.old_slot[i]);
		tfd_eng.nold_slot = 0;
	}
	while (n <= (size_t)fd) /* grow by half: it is 8 bytes an fd */
		n += n / 2 + 64;
	s = calloc(n, sizeof(*s));
	if (!s)
		return ENOMEM;
	if (tfd_eng.nslot)
		memcpy(s, was, tfd_eng.nslot * sizeof(*s));
	__atomic_store_n(&tfd_eng.slot, s, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tfd_eng.nslot, n, __ATOMIC_RELEASE);
	if (was)
		tfd_eng.old_slot[tfd_eng.nold_slot++] = was;
	if (!tfd_engine_looked_at()) {
		for (i = 0; i < tfd_eng.nold_slot; i++)
			free(tfd_eng.old_slot[i]);
		tfd_eng.nold_slot = 0;
	}
	return 0;
}

/* A ready eventfd of the service thread's of the kind flags ask, or -1,
 * and its id; asks for more as that kind runs low. */
static int pool_take(int flags, uint32_t *id)
{
	int nb = !!(flags & TFD_NONBLOCK), k;
	unsigned i;

	if (!tfd_eng.pool_max)
		return -1;
	for (i = tfd_eng.npool; i-- > 0;) {
		if (tfd_eng.pool_nb[i] != nb)
			continue;
		k = tfd_eng.pool[i];
		*id = tfd_eng.pool_id[i];
		tfd_engine_pool_drop(i);
		if (tfd_engine_pool_count(nb) == POOL_LOW - 1)
			tfd_engine_poke(); /* once, as it falls below */
		return k;
	}
	return -1;
}

/* The user's descriptor for a new timer, and the number posts go to:
 * the same on the virtual clocks and the fallback; else a copy in the
 * service thread's table (files.c).  If the copy is refused (a sandbox
 * installed since the thread started), the fallback from now on, as if
 * from the start (Linux's create succeeds): *direct is set. */
static int open_timer(int flags, unsigned char *direct, int *fd, int *file,
                      uint32_t *id)
{
	struct tfd_fetch r;
	int e, k;

	*id = 0;
	if (*direct) {
		e = tfd_notify_open(flags, fd);
		*file = *fd;
		return e;
	}
	k = pool_take(flags, id);
	if (k >= 0) {
		e = tfd_files_take(tfd_eng.tid, k, flags, fd);
		if (e == 0) {
			*file = k;
			return 0;
		}
		tfd_eng.pool_nb[tfd_eng.npool] = !!(flags & TFD_NONBLOCK); /* still fresh */
		tfd_eng.pool_id[tfd_eng.npool] = *id;
		tfd_eng.pool[tfd_eng.npool++] = k;
	}
	e = tfd_notify_open(flags, fd);
	if (e)
		return e;
	fetch(&r, *fd);
	if (r.result < 0 && tfd_files_refused(-r.result)) {
		e = tfd_engine_go_direct();
		if (e == 0) {
			*direct = 1;
			*file = *fd;
			return 0;
		}
		r.result = -e;
	}
	if (r.result < 0) {
		close(*fd);
		return -r.result;
	}
	*file = r.result;
	*id = r.id;
	return 0;
}

/* Everything a timer needs is taken at create, where Linux can fail too:
 * its hold (the caller's), a record in the family, room on our queues,
 * the service thread (and for CLOCK_REALTIME the clock watcher), the
 * timer's record, its file, the table entry.
 * Holding it, arming it or taking it over later needs nothing more.  On
 * failure h is disposed of. */
static int make_timer(int clockid, int flags, struct tfd_hold *h, int *fd)
{
	unsigned mask = tfd_clock_queues(clockid);
	struct tfd_timer *t = NULL;
	uint32_t id = 0;
	int e, file = -1;

	if (tfd_eng.self < 0 &&
	    (tfd_eng.self = tfd_family_new_proc(NO_PROC, P_LIVE)) < 0 &&
	    (tfd_eng.nholds || tfd_family_start_anew() ||
	     (tfd_eng.self = tfd_family_new_proc(NO_PROC, P_LIVE)) < 0))
		goto fail; /* PROC_MAX processes hold timers; we hold none */
	if (tfd_engine_reserve(mask))
		goto fail;
	e = tfd_eng.virtual ? 0 : tfd_engine_start();
	if (!e && clockid == CLOCK_REALTIME && !tfd_eng.virtual)
		e = tfd_clock_watch_ensure(); /* may drop the lock too */
	if (!e && !(t = tfd_family_new_timer()))
		e = ENOMEM;
	h->direct = (unsigned char)(tfd_eng.virtual || !tfd_eng.private_files);
	if (!e)
		e = open_timer(flags, &h->direct, fd, &file, &id);
	if (!e && (e = grow_table(*fd)) != 0)
		close(*fd);
	if (e) {
		if (t)
			tfd_family_free_timer(t);
		tfd_engine_unreserve(mask);
		if (file >= 0 && !h->direct) { /* its copy: the service's */
			h->file = file;
			tfd_engine_free_later(h);
			h = NULL;
		}
		goto out;
	}
	t->clockid = (unsigned char)clockid;
	t->base = t->qbase = (unsigned char)tfd_clock_base(clockid, 0);
	t->holders = tfd_proc_bit(tfd_eng.self);
	t->deliverer = (signed char)tfd_eng.self;
	t->file = file;
	h->efd_id = id;
	h->t = t;
	h->gen = t->gen;
	h->file = file;
	h->nfds = 1;
	return 0;
fail:
	e = ENOMEM;
out:
	if (h)
		tfd_hold_free(h);
	if (tfd_eng.self >= 0 && tfd_eng.nholds == 0 &&
	    tfd_eng.state == STOPPED && !tfd_eng.freed) {
		tfd_family_free_proc(tfd_eng.self);
		tfd_eng.self = -1;
	}
	return e;
}

static int e_create(int clockid, int flags, int *out)
{
	struct tfd_hold *h;
	int e, fd = -1, cs;

	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return EPERM; /* the engine cannot wake a suspended system */
	tfd_engine_fork_init();
	if (tfd_family_open())
		return ENOMEM;
	tfd_engine_lock(&cs);
	if (tfd_eng.state == STOPPED)
		free_dropped();
	h = tfd_hold_new();
	if (!h) {
		tfd_engine_unlock(cs);
		return ENOMEM;
	}
	tfd_eng.creating++;
	e = make_timer(clockid, flags, h, &fd);
	tfd_eng.creating--;
	if (!e) {
		forget_stale(fd);
		tfd_engine_hold_add(h);
		tfd_eng.slot[fd] = h;
		tfd_eng.ntimers++;
		tfd_engine_number_named(fd, h);
		*out = fd;
	}
	tfd_engine_unlock(cs);
	return e;
}

enum { FD_LOOK, FD_RELEASE, FD_CLOSE };

/* fd looked up under the engine's lock: FD_LOOK, its error; FD_RELEASE,
 * the number let go of too; FD_CLOSE, let go of if ours and closed,
 * close's error. */
static int e_fd(int fd, int how)
{
	struct tfd_hold *h;
	int e, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(fd, &h);
	if (!e && how != FD_LOOK)
		drop_fd(fd);
	if (how == FD_CLOSE)
		e = close(fd) < 0 ? errno : 0;
	if (how != FD_LOOK)
		tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
	return e;
}

static int e_check(int fd)
{
	return e_fd(fd, FD_LOOK);
}

static int e_release(int fd)
{
	return e_fd(fd, FD_RELEASE);
}

static int e_close(int fd)
{
	return e_fd(fd, FD_CLOSE);
}

/* newfd is now a duplicate of oldfd (dup(2) done by the caller): it names
 * the same timer, as on Linux.  A timer newfd named before is dropped. */
static int e_dup(int oldfd, int newfd)
{
	struct tfd_hold *h;
	int e, cs;

	tfd_engine_lock(&cs);
	e = tfd_engine_find(oldfd, &h);
	if (!e && oldfd != newfd)
		e = grow_table(newfd);
	if (!e && oldfd != newfd) {
		forget_stale(newfd);
		tfd_eng.slot[newfd] = h;
		h->nfds++;
		tfd_engine_uncover(h->t); /* covered through one number */
		tfd_engine_number_named(newfd, h);
	}
	tfd_engine_unlock(cs);
	return e;
}

/* A wait outside the library: see backend.h. */
static void *e_hold(int fd)
{
	struct tfd_hold *h = NULL;
	int cs;

	tfd_engine_lock(&cs);
	if (tfd_engine_find(fd, &h) != 0 || tfd_waits_hold(h) != 0)
		h = NULL; /* not a timer, or no room: not held */
	tfd_engine_unlock(cs);
	return h;
}

static void e_unhold(void *held)
{
	struct tfd_hold *h = held;
	int cs;

	if (!h)
		return;
	tfd_engine_lock(&cs);
	tfd_waits_unhold(h);
	tfd_engine_stop_if_idle();
	tfd_engine_unlock(cs);
}

static size_t e_count(void)
{
	size_t n;
	int cs;

	tfd_engine_lock(&cs);
	n = tfd_eng.ntimers;
	tfd_engine_unlock(cs);
	return n;
}

size_t tfd_engine_holds(void)
{
	size_t n;
	int cs;

	tfd_engine_lock(&cs);
	n = tfd_eng.nholds;
	tfd_engine_unlock(cs);
	return n;
}

static int e_activate(void)
{
	return tfd_engine_virtual_use(0);
}

static int v_activate(void)
{
	return tfd_engine_virtual_use(1);
}

/* What the engine is on either clock. */
#define ENGINE_OPS                                                          \
	.pin = tfd_own_pin, .create = e_create, .check = e_check,          \
	.settime = tfd_engine_settime, .gettime = tfd_engine_gettime,       \
	.read = tfd_engine_read, .close = e_close, .dup = e_dup,            \
	.release = e_release, .hold = e_hold, .unhold = e_unhold,           \
	.count = e_count, .next_due = tfd_engine_next_due

const struct tfd_backend tfd_engine_backend = {
	.name = "engine",
	ENGINE_OPS,
	.activate = e_activate,
	.ready_begin = tfd_engine_ready_begin,
	.ready = tfd_engine_ready,
	.ready_end = tfd_engine_unlock,
	.defer = tfd_engine_defer,
	.cover = tfd_engine_cover,
	.asleep = tfd_engine_asleep,
	.mode = tfd_engine_mode,
	.post = tfd_engine_post_due,
	.quiet = tfd_engine_quiet,
};

/* The same engine, on clocks that move only when told. */
const struct tfd_backend tfd_virtual_backend = {
	.name = "virtual",
	ENGINE_OPS,
	.activate = v_activate,
	.virtual_move = tfd_engine_virtual_move,
	.virtual_now = tfd_engine_virtual_now,
	.virtual_start = tfd_engine_virtual_start,
	.virtual_move_to = tfd_engine_virtual_move_to,
	.virtual_unread = tfd_engine_virtual_unread,
};
