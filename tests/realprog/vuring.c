/* SPDX-License-Identifier: MIT */
/*
 * vuring - an io_uring write done by the kernel's worker while every
 * thread of the program waits: the main thread for its completion (in
 * io_uring_enter, a wait no library call shows), another in a 5 s
 * nanosleep, the test runner's timeout.  On Linux the write ends first;
 * on virtual time too, as long as time does not jump while the worker
 * runs (tfd-preload(7), VIRTUAL TIME).  Prints "done" and exits 0, or
 * "timeout" and exits 1.  Raw system calls through syscall(), as libuv
 * makes them; with "raw", the ring is made as liburing makes it, by a
 * system call instruction of its own that no library sees (on x86-64;
 * elsewhere through syscall() too).
 *
 *   vuring FILE [MIB [raw]]
 */
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *runner_timeout(void *arg)
{
	struct timespec ts = { 5, 0 };

	(void)arg;
	nanosleep(&ts, NULL);
	printf("timeout\n");
	fflush(stdout);
	_exit(1);
}

static int setup(unsigned entries, struct io_uring_params *p, int raw)
{
#if defined(__x86_64__)
	long r;

	if (raw) {
		__asm__ volatile("syscall"
		                 : "=a"(r)
		                 : "0"((long)SYS_io_uring_setup),
		                   "D"((long)entries), "S"(p)
		                 : "rcx", "r11", "memory");
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
		return (int)r;
	}
#endif
	(void)raw;
	return (int)syscall(SYS_io_uring_setup, entries, p);
}

static void *ring_map(int fd, size_t len, off_t what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
	               MAP_SHARED | MAP_POPULATE, fd, what);

	if (p == MAP_FAILED) {
		perror("vuring: mmap");
		exit(2);
	}
	return p;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 2 ? atol(argv[2]) : 256) << 20;
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	unsigned *tail, *mask, *array, *chead, *cmask, t;
	char *sq, *cq, *buf;
	pthread_t th;
	int ring, file;
	long r;

	if (argc < 2) {
		fprintf(stderr, "usage: vuring FILE [MIB [raw]]\n");
		return 2;
	}
	buf = malloc(len);
	file = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	memset(&p, 0, sizeof(p));
	ring = setup(4, &p, argc > 3 && strcmp(argv[3], "raw") == 0);
	if (!buf || file < 0 || ring < 0) {
		perror("vuring: setup");
		return 2;
	}
	memset(buf, 'x', len);
	sq = ring_map(ring, p.sq_off.array + p.sq_entries * sizeof(unsigned),
	              IORING_OFF_SQ_RING);
	cq = ring_map(ring, p.cq_off.cqes +
	                            p.cq_entries * sizeof(struct io_uring_cqe),
	              IORING_OFF_CQ_RING);
	sqe = ring_map(ring, p.sq_entries * sizeof(*sqe), IORING_OFF_SQES);
	tail = (unsigned *)(void *)(sq + p.sq_off.tail);
	mask = (unsigned *)(void *)(sq + p.sq_off.ring_mask);
	array = (unsigned *)(void *)(sq + p.sq_off.array);
	t = *tail;
	memset(&sqe[t & *mask], 0, sizeof(*sqe));
	sqe[t & *mask].opcode = IORING_OP_WRITE;
	sqe[t & *mask].fd = file;
	sqe[t & *mask].addr = (unsigned long)buf;
	sqe[t & *mask].len = (unsigned)len;
	sqe[t & *mask].flags = IOSQE_ASYNC; /* the worker does it */
	array[t & *mask] = t & *mask;
	__atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
	pthread_create(&th, NULL, runner_timeout, NULL);
	do
		r = syscall(SYS_io_uring_enter, ring, 1, 1,
		            IORING_ENTER_GETEVENTS, NULL, 0);
	while (r < 0);
	chead = (unsigned *)(void *)(cq + p.cq_off.head);
	cmask = (unsigned *)(void *)(cq + p.cq_off.ring_mask);
	cqe = (struct io_uring_cqe *)(void *)(cq + p.cq_off.cqes);
	if (cqe[*chead & *cmask].res != (int)len) {
		fprintf(stderr, "vuring: wrote %d of %zu\n",
		        cqe[*chead & *cmask].res, len);
		return 2;
	}
	unlink(argv[1]);
	printf("done\n");
	return 0;
}
