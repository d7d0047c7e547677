/* SPDX-License-Identifier: MIT */
/*
 * outside.c - which descriptors the world outside the tree can make
 * ready: a wait for input on one is a wait on the outside (waits.c), over
 * which time does not jump (mover.c).
 *
 * A descriptor is outside when its other end may be held by a process
 * outside the tree:
 *   - one the tree inherited from outside (tfd_dom_inherit: its stdin, a
 *     socket systemd passes...), found by its identity;
 *   - a terminal, wherever it is found;
 *   - a FIFO opened by its name (anybody may open its other end);
 *   - a connected socket whose peer is not a process of the tree: for a
 *     UNIX socket, the peer's process as the kernel tells it
 *     (SO_PEERCRED: the process that connected, listened or made the
 *     pair), or, that one gone or none told, the holders of the peer
 *     socket (its inode from sock_diag) or of the sockets at the peer's
 *     path (/proc/net/unix); for TCP or UDP, a peer on
 *     another host, or one on this host at a port no process of the tree
 *     bound, listened or connected at (the ports the tree told, below,
 *     or /proc/net and the tree's descriptors).
 * A socket that is not connected (listening, or datagrams from anyone)
 * is the tree's, unless it was inherited: who will connect to it or send
 * to it is not known until they do.  A descriptor is looked at each time
 * a wait on it begins: descriptors are the program's, and change under
 * us.
 */
#define _GNU_SOURCE
#include "vtime/domain.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#define PIPEFS_MAGIC_ 0x50495045

/* A character device of a terminal's major: the consoles and serial
 * lines (4), /dev/tty and /dev/ptmx (5), BSD ptys (2, 3), UNIX 98 ptys
 * (128-143). */
static int tty_major(unsigned m)
{
	return m == 2 || m == 3 || m == 4 || m == 5 || (m >= 128 && m <= 143);
}

static int inherited(const struct tfd_dom *d, const struct stat *st)
{
	uint32_t i, n = __atomic_load_n(&d->ninherited, __ATOMIC_ACQUIRE);

	if (n > DOM_INHERITED)
		n = DOM_INHERITED;
	for (i = 0; i < n; i++)
		if (d->inherited[i].dev == (uint64_t)st->st_dev &&
		    d->inherited[i].ino == (uint64_t)st->st_ino)
			return 1;
	return 0;
}

/* ---- the ports of the tree ---- */

/* An IP socket's address (IPv4 as IPv4-mapped), its port and whether
 * it is this host (a loopback address); 0, or -1 for another family. */
struct ep {
	int port, loop;
	unsigned char addr[16];
};

static int ep_of(const struct sockaddr_storage *ss, struct ep *e)
{
	memset(e, 0, sizeof(*e));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)ss;

		e->port = ntohs(a->sin_port);
		memcpy(e->addr + 12, &a->sin_addr, 4);
		e->loop = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)ss;

		e->port = ntohs(a->sin6_port);
		memcpy(e->addr, &a->sin6_addr, 16);
		e->loop = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
		          (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) &&
		           e->addr[12] == 127);
		if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr))
			memset(e->addr, 0, 12); /* compared as IPv4 */
	} else {
		return -1;
	}
	return 0;
}

static int sock_type(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return -1;
	return type;
}

/* A port of the tree's, for a socket of this type, told by pid, with
 * the port it is connected to (0: any, a socket bound or listening): one
 * word, written and read atomically (a reader never sees half an entry
 * of a writer's).  A pid fits in 22 bits (PID_MAX_LIMIT). */
#define PID_BITS 30
static uint64_t port_word(int type, int port, int rport, int32_t pid)
{
	uint64_t key = (uint64_t)(type == SOCK_STREAM) << 32 |
	               (uint64_t)(uint16_t)port << 16 | (uint16_t)rport;

	return key << PID_BITS | ((uint32_t)pid & ((1u << PID_BITS) - 1));
}

static void tell_port(struct tfd_dom *d, int type, int port, int rport,
                      int32_t pid)
{
	uint64_t w = port_word(type, port, rport, pid);
	uint32_t i, n = __atomic_load_n(&d->nports, __ATOMIC_ACQUIRE);

	for (i = 0; i < n && i < DOM_PORTS; i++)
		if (__atomic_load_n(&d->port[i], __ATOMIC_RELAXED) == w)
			return; /* told already */
	i = __atomic_fetch_add(&d->nports, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&d->port[i % DOM_PORTS], w, __ATOMIC_RELEASE);
}

void tfd_dom_sock_bound(int fd, const struct sockaddr *to, socklen_t tolen)
{
	struct tfd_dom *d = tfd_dom;
	struct sockaddr_storage ss, peer;
	socklen_t len = sizeof(ss);
	struct ep e, p;
	int type, e0 = errno;

	/* Connected (to: in progress too): told with its peer's port, which
	 * an outside client that gets this port again later does not
	 * share. */
	memset(&peer, 0, sizeof(peer));
	if (to && tolen <= sizeof(peer))
		memcpy(&peer, to, tolen);
	if (d && getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    ep_of(&ss, &e) == 0 && e.port && (type = sock_type(fd)) >= 0) {
		if (!to || ep_of(&peer, &p) < 0)
			p.port = 0;
		tell_port(d, type, e.port, p.port, getpid());
	}
	errno = e0;
}

/* 1 if a process of the tree told port for a socket of this type, bound
 * or connected to rport. */
static int tree_port(const struct tfd_dom *d, int type, int port, int rport)
{
	uint32_t i, n = __atomic_load_n(&d->nports, __ATOMIC_ACQUIRE);
	uint64_t any = port_word(type, port, 0, 0) >> PID_BITS;
	uint64_t to = port_word(type, port, rport, 0) >> PID_BITS;

	for (i = 0; i < n && i < DOM_PORTS; i++) {
		uint64_t w = __atomic_load_n(&d->port[i], __ATOMIC_ACQUIRE);

		if ((w >> PID_BITS == any || w >> PID_BITS == to) &&
		    tfd_dom_pid_in_tree((int32_t)(w & ((1u << PID_BITS) - 1))))
			return 1;
	}
	return 0;
}

/* ---- ports told by nobody: /proc ---- */

/* A program that makes its system calls itself (Go's runtime) tells no
 * port.  A peer on this host at a port nobody told is looked for in
 * /proc: the sockets at that port (the one connected to ours, and the
 * one that listens there or is bound there without a peer, which holds
 * a connection not accepted yet) in /proc/net, and their inodes among
 * the descriptors of the tree's processes.  Found, the port is told for
 * the process that holds it, and the next look is the quick one. */

#define PROC_INODES 32

/* What may run on a small stack (a Go program's signal stack: gosys.c)
 * and in a handler of the program's: raw calls, small buffers, no
 * allocation. */
static int open_raw(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC);
}

/* What is looked for in /proc/net: the sockets at a TCP or UDP port, or
 * (path set) the UNIX sockets bound to a path or accepted there. */
struct net_look {
	int type, port, rport, n;
	const char *path;
	unsigned long ino[PROC_INODES];
};

/* The n-th field of a line of /proc/net (0: "sl"), by spaces. */
static const char *field(const char *p, int n)
{
	for (; *p == ' '; p++)
		;
	while (n-- > 0) {
		for (; *p && *p != ' '; p++)
			;
		for (; *p == ' '; p++)
			;
	}
	return p;
}

/* Its port: "ADDR:PORT", in hex. */
static unsigned long port_in(const char *p)
{
	const char *c = strchr(p, ':');

	return c ? strtoul(c + 1, NULL, 16) : 0;
}

static void net_line(const char *line, struct net_look *k)
{
	unsigned long lp, rp, st, i;

	if (k->n == PROC_INODES)
		return;
	if (k->path) { /* "Num RefCount Protocol Flags Type St Inode Path" */
		i = strtoul(field(line, 6), NULL, 10);
		if (i && !strcmp(field(line, 7), k->path))
			k->ino[k->n++] = i;
		return;
	}
	lp = port_in(field(line, 1));
	rp = port_in(field(line, 2));
	st = strtoul(field(line, 3), NULL, 16);
	i = strtoul(field(line, 9), NULL, 10);
	if ((int)lp != k->port || !i)
		return;
	/* Ours' peer, or the one that listens (TCP_LISTEN) or receives
	 * from anyone at the port. */
	if ((int)rp == k->rport ||
	    (k->type == SOCK_STREAM ? st == 0x0a : rp == 0))
		k->ino[k->n++] = i;
}

static void net_file(const char *path, struct net_look *k)
{
	char buf[512], *p, *nl;
	size_t have = 0;
	ssize_t n;
	int fd = open_raw(path, O_RDONLY);

	if (fd < 0)
		return;
	while ((n = syscall(SYS_read, fd, buf + have,
	                    sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = 0;
		for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
			*nl = 0;
			net_line(p, k);
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer */
	}
	syscall(SYS_close, fd);
}

static int holds_inode(int32_t pid, const struct net_look *k)
{
	char path[64], link[64], ents[512];
	long n, off;
	int dir, found = 0, j;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((dir = open_raw(path, O_RDONLY | O_DIRECTORY)) < 0)
		return 0;
	while (!found && (n = syscall(SYS_getdents64, dir, ents,
	                              sizeof(ents))) > 0)
		for (off = 0; off < n; off += ((struct dirent64 *)
		                               (ents + off))->d_reclen) {
			const struct dirent64 *e = (const void *)(ents + off);
			unsigned long i;
			long len = syscall(SYS_readlinkat, dir, e->d_name, link,
			                   sizeof(link) - 1);

			if (len <= 0)
				continue;
			link[len] = 0;
			if (strncmp(link, "socket:[", 8) != 0)
				continue;
			i = strtoul(link + 8, NULL, 10);
			for (j = 0; j < k->n; j++)
				found |= k->ino[j] == i;
		}
	syscall(SYS_close, dir);
	return found;
}

/* The process of the tree that holds one of k's sockets, or 0. */
static int32_t tree_holder(struct tfd_dom *d, const struct net_look *k)
{
	uint32_t i, j, hw = __atomic_load_n(&d->hiwater, __ATOMIC_ACQUIRE);
	int32_t pid;

	if (hw > DOM_SLOTS)
		hw = DOM_SLOTS;
	for (i = 0; k->n && i < hw; i++) {
		if (!(pid = tfd_dom_slot_pid(d, i)))
			continue;
		for (j = 0; j < i && tfd_dom_slot_pid(d, j) != pid; j++)
			; /* each process once (a thread's slot seen before) */
		if (j == i && holds_inode(pid, k))
			return pid;
	}
	return 0;
}

/* The process of the tree that holds a socket at port (connected to
 * rport, or listening), or 0. */
static int32_t port_holder(struct tfd_dom *d, int type, int port, int rport)
{
	struct net_look k = { type, port, rport, 0, NULL, { 0 } };

	net_file(type == SOCK_STREAM ? "/proc/net/tcp" : "/proc/net/udp", &k);
	net_file(type == SOCK_STREAM ? "/proc/net/tcp6" : "/proc/net/udp6", &k);
	return tree_holder(d, &k);
}

/* ---- sockets ---- */

/* Bytes written to this TCP socket that its kernel has not sent yet,
 * while its peer has room for them: Nagle's algorithm keeps the last
 * small segment until the peer's delayed ACK, 40 ms of real time, and
 * no thread of the tree runs meanwhile.  Work in progress that only real
 * time ends: a wait for an answer on it lets time flow, as a wait on the
 * outside does.  Not bytes sent and not acknowledged yet (the peer has
 * them: a delayed ACK rides on its answer), nor unsent ones the peer has
 * no room for (it reads when it runs, or never). */
static int in_flight(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int queued = 0; /* sent and not acknowledged, or not sent */
	int64_t room;

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_snd_wnd) +
	                  sizeof(ti.tcpi_snd_wnd) ||
	    !ti.tcpi_notsent_bytes || ioctl(fd, SIOCOUTQ, &queued) != 0)
		return 0;
	/* Room in the peer's window past what it has not acknowledged: for
	 * a whole segment, or for all that waits (the sender sends no less,
	 * avoiding silly windows). */
	room = (int64_t)ti.tcpi_snd_wnd - ((int64_t)queued -
	                                    ti.tcpi_notsent_bytes);
	return room >= ti.tcpi_snd_mss || room >= ti.tcpi_notsent_bytes;
}

static int ip_peer_outside(struct tfd_dom *d, int fd,
                           const struct sockaddr_storage *peer)
{
	struct sockaddr_storage self;
	socklen_t len = sizeof(self);
	struct ep p, s;
	int32_t pid;
	int type;

	if (ep_of(peer, &p) < 0)
		return 0;
	if (getsockname(fd, (struct sockaddr *)&self, &len) < 0 ||
	    ep_of(&self, &s) < 0)
		return 1;
	/* Another host, unless it is one of this host's addresses (the
	 * socket's own). */
	if (!p.loop && memcmp(p.addr, s.addr, 16) != 0)
		return 1;
	type = sock_type(fd);
	if (type != SOCK_STREAM && type != SOCK_DGRAM)
		return 1;
	if (type == SOCK_STREAM && in_flight(fd))
		return 1;
	if (tree_port(d, type, p.port, s.port))
		return 0;
	if (!(pid = port_holder(d, type, p.port, s.port)))
		return 1;
	tell_port(d, type, p.port, s.port, pid);
	return 0;
}

/* The inode of the peer of the UNIX socket of inode ino, as the kernel
 * tells it (sock_diag(7), UNIX_DIAG_PEER); 0 where it cannot (a peer not
 * accepted yet; no unix_diag in the kernel, netlink refused by a
 * sandbox, the socket gone meanwhile: then never asked again). */
static int no_sock_diag; /* netlink refused, or no unix_diag: not again */

static unsigned long unix_peer_inode(unsigned long ino)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req;
	union {
		struct nlmsghdr nh;
		char buf[256];
	} ans;
	struct sockaddr_nl kernel;
	struct nlmsghdr *h = &ans.nh;
	struct unix_diag_msg *m;
	struct rtattr *a;
	unsigned long peer = 0;
	uint32_t p;
	long n;
	int len, s;

	if (__atomic_load_n(&no_sock_diag, __ATOMIC_RELAXED))
		return 0;
	s = (int)syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
	                 NETLINK_SOCK_DIAG);
	if (s < 0) {
		__atomic_store_n(&no_sock_diag, 1, __ATOMIC_RELAXED);
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0U;
	req.r.udiag_ino = (uint32_t)ino;
	req.r.udiag_show = UDIAG_SHOW_PEER;
	req.r.udiag_cookie[0] = req.r.udiag_cookie[1] = ~0U; /* none */
	memset(&kernel, 0, sizeof(kernel));
	kernel.nl_family = AF_NETLINK;
	if (syscall(SYS_sendto, s, &req, sizeof(req), 0, &kernel,
	            sizeof(kernel)) == (long)sizeof(req) &&
	    /* the answer is queued before sendto() returns */
	    (n = syscall(SYS_recvfrom, s, ans.buf, sizeof(ans.buf),
	                 MSG_DONTWAIT, NULL, NULL)) > 0 &&
	    NLMSG_OK(h, (unsigned long)n)) {
		if (h->nlmsg_type == NLMSG_ERROR) /* no unix_diag (ENOENT) */
			__atomic_store_n(&no_sock_diag, 1, __ATOMIC_RELAXED);
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m))) {
			m = NLMSG_DATA(h);
			len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
			for (a = (struct rtattr *)(m + 1);
			     m->udiag_ino == ino && RTA_OK(a, len);
			     a = RTA_NEXT(a, len))
				if (a->rta_type == UNIX_DIAG_PEER &&
				    RTA_PAYLOAD(a) >= sizeof(p)) {
					memcpy(&p, RTA_DATA(a), sizeof(p));
					peer = p;
				}
		}
	}
	syscall(SYS_close, s);
	return peer;
}

/* A UNIX socket's peer: the process the kernel names (SO_PEERCRED) if
 * it is in the tree and has not ended (a slot names a process until the
 * mover reclaims it: a pair's maker that had just ended, its ends in two
 * children, was taken for the tree's); else whoever holds the peer
 * socket itself (its inode from sock_diag: a pair whose maker is gone,
 * its two ends in its children), or, that inode unknown, a socket bound
 * to the peer's path or accepted there (/proc/net/unix: a daemon that
 * listened and then forked, the kernel naming its parent, its child not
 * accepted yet).  A peer the tree does not hold is outside. */
static int unix_peer_outside(struct tfd_dom *d, int fd, unsigned long ino,
                             const struct sockaddr_storage *peer,
                             socklen_t len)
{
	const struct sockaddr_un *u = (const void *)peer;
	size_t off = offsetof(struct sockaddr_un, sun_path), n, i;
	struct net_look k = { 0, 0, 0, 0, NULL, { 0 } };
	char name[sizeof(u->sun_path) + 1];
	struct ucred c;
	socklen_t clen = sizeof(c);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &clen) == 0 &&
	    c.pid > 0 &&
	    (c.pid == getpid() ||
	     (tfd_dom_pid_in_tree(c.pid) && !tfd_dom_proc_ended(c.pid))))
		return 0;
	if ((k.ino[0] = unix_peer_inode(ino)) != 0) {
		k.n = 1;
		return !tree_holder(d, &k);
	}
	if (len <= off || len > sizeof(*u))
		return 1;
	n = len - off;
	memcpy(name, u->sun_path, n);
	name[n] = 0;
	if (name[0]) {
		name[strnlen(name, n)] = 0; /* a path */
	} else {
		for (i = 0; i < n; i++) /* abstract: shown with @ for NUL */
			if (!name[i])
				name[i] = '@';
	}
	k.path = name;
	net_file("/proc/net/unix", &k);
	return !tree_holder(d, &k);
}

static int sock_outside(struct tfd_dom *d, int fd, unsigned long ino)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0)
		return 0; /* not connected: the tree's (above) */
	if (peer.ss_family == AF_UNIX)
		return unix_peer_outside(d, fd, ino, &peer, len);
	return ip_peer_outside(d, fd, &peer);
}

/* Input that epoll reports (EPOLLIN, EPOLLPRI, EPOLLRDNORM, EPOLLRDBAND:
 * poll's bits). */
#define EPOLL_READ 0xc3ul

int tfd_dom_epoll_each(int ep, int (*fn)(int, void *), void *arg)
{
	char path[48], buf[1024], *p, *nl; /* small: it may run on a Go
	                                    * signal stack (gosys.c), for
	                                    * each of 5 sets nested (about
	                                    * 7 KiB in all) */
	size_t have = 0;
	ssize_t n;
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Line by line: a large set is longer than the buffer. */
	while (!r && (n = syscall(SYS_read, fd, buf + have,
	                              sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = 0;
		for (p = buf; !r && (nl = strchr(p, '\n')); p = nl + 1) {
			char *q;
			long t;
			unsigned long evs = 0;

			*nl = 0;
			if (strncmp(p, "tfd:", 4))
				continue;
			t = strtol(p + 4, &q, 10);
			q = strstr(q, "events:");
			if (q)
				evs = strtoul(q + 7, NULL, 16);
			if ((evs & EPOLL_READ) && t >= 0 && t <= INT_MAX)
				r = fn((int)t, arg);
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer */
	}
	syscall(SYS_close, fd);
	return r ? r : n == 0 ? 0 : -1;
}

/* An epoll set (its link "anon_inode:[eventpoll]"), depth levels down
 * from the wait, of at most EPOLL_NESTS (Linux's limit). */
#define EPOLL_NESTS 5
static int is_epoll(int fd)
{
	char path[40], link[32];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = syscall(SYS_readlinkat, AT_FDCWD, path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = 0;
	return strcmp(link, "anon_inode:[eventpoll]") == 0;
}

static int fd_outside_in(struct tfd_dom *d, int fd, int depth);

struct nest {
	struct tfd_dom *d;
	int depth;
};

static int nested_outside(int fd, void *arg)
{
	struct nest *n = arg;

	return fd_outside_in(n->d, fd, n->depth);
}

/* An epoll set is outside if one of the descriptors it holds for input
 * is (a poll of the set, or a set in another, waits on them). */
static int fd_outside_in(struct tfd_dom *d, int fd, int depth)
{
	struct statfs sf;
	struct stat st;

	if (!d || fd < 0 || fstat(fd, &st) < 0)
		return 0;
	if (S_ISCHR(st.st_mode) && tty_major(major(st.st_rdev)))
		return 1;
	if (!(st.st_mode & S_IFMT) && depth < EPOLL_NESTS && is_epoll(fd)) {
		struct nest n = { d, depth + 1 };

		return tfd_dom_epoll_each(fd, nested_outside, &n) > 0;
	}
	if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode))
		return 0;
	if (inherited(d, &st))
		return 1;
	if (S_ISSOCK(st.st_mode))
		return sock_outside(d, fd, (unsigned long)st.st_ino);
	/* A FIFO opened by its name (a pipe is on pipefs). */
	return fstatfs(fd, &sf) == 0 && sf.f_type != PIPEFS_MAGIC_;
}

/* The program's errno is left as it was (a wait that succeeds leaves
 * it alone, as the system call does). */
static int outside_from(int fd, int depth)
{
	int e = errno, r = fd_outside_in(tfd_dom, fd, depth);

	errno = e;
	return r;
}

int tfd_dom_fd_outside(int fd)
{
	return outside_from(fd, 0);
}

int tfd_dom_fd_outside_flat(int fd)
{
	return outside_from(fd, EPOLL_NESTS);
}

void tfd_dom_fds_changed(void)
{
	if (tfd_dom)
		__atomic_add_fetch(&tfd_dom->fdgen, 1, __ATOMIC_SEQ_CST);
}

uint32_t tfd_dom_fds_gen(void)
{
	return tfd_dom ? __atomic_load_n(&tfd_dom->fdgen, __ATOMIC_SEQ_CST)
	               : 0;
}
