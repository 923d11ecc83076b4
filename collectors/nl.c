/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The live source: libmnl rtnetlink sockets, one per network namespace.
 *
 * Only what the kernel sends is read (nl_read()), and the messages of each
 * datagram are walked by tcx_nlmsg_reply() (nlmsg.c), which checks every
 * length and takes the errno that the kernel puts in NLMSG_DONE (an aborted
 * terse dump ends that way). The receive buffer holds a whole 32 KiB dump
 * chunk, and the socket is kept for the next dump so that the
 * kernel sizes its first chunk from the previous reads.
 *
 * Chunks are received and parsed in turn, on the calling thread. A reader
 * thread that received the next chunks while this one parsed (nlpipe.c,
 * until issue #10) did not make `--once` at 100k rows any faster, measured
 * side by side on 2 cores (README.md). */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "collectors/nl.h"
#include "collectors/nlmsg.h"
#include "collectors/notify.h"
#include "lib/fds.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define NL_BUFSZ     (64 * 1024) /* > the kernel's 32 KiB dump chunks */
#define NL_RCVBUF    (1024 * 1024)
#define NL_TIMEOUT_S 10

struct nl_src {
	struct mnl_socket *sk;
	char netns[64]; /* the named namespace it was opened in, "" for our own */
	int ns_fd;      /* that namespace (its /run/netns entry as opened), or -1 */
	unsigned int portid;
	unsigned int seq;
	int broken; /* a dump was cut off: the socket may hold stale replies */
	/* Its namespace's deletion notifications (notify.h), NULL when not
	 * asked for: made with sk, in the same namespace, closed with it;
	 * want_notify is the receive buffer asked for (0: none). */
	int want_notify;
	struct tcx_notify *notify;
	/* Its namespace's additions (want_adds: their buffer), likewise. */
	int want_adds;
	struct tcx_notify *adds;
	uint64_t dropped[TCX_NLDROP__MAX]; /* datagrams dropped (enum tcx_nldrop_cause) */
	char buf[NL_BUFSZ];
};

static void nl_close_sock(struct nl_src *s)
{
	if (s->sk)
		mnl_socket_close(s->sk);
	s->sk = NULL;
}

static int nl_open_sock(struct nl_src *s, char *err, size_t errlen)
{
	int one = 1, rcvbuf = NL_RCVBUF;
	struct timeval tv = {.tv_sec = NL_TIMEOUT_S};
	int fd;

	s->sk = mnl_socket_open(NETLINK_ROUTE);
	if (!s->sk) {
		snprintf(err, errlen, "netlink socket: %s", strerror(errno));
		return -1;
	}
	fd = mnl_socket_get_fd(s->sk);
	/* Best effort: older kernels lack these options. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(s->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		snprintf(err, errlen, "netlink bind: %s", strerror(errno));
		nl_close_sock(s);
		return -1;
	}
	s->portid = mnl_socket_get_portid(s->sk);
	s->broken = 0;
	return 0;
}

/* The dump socket, and the notification sockets asked for: all made in the
 * namespace the calling thread is in. */
static int nl_open_socks(struct nl_src *s, char *err, size_t errlen)
{
	if (nl_open_sock(s, err, errlen) < 0)
		return -1;
	if (s->want_notify && !(s->notify = tcx_notify_open(s->netns, s->want_notify, err, errlen)))
		goto fail;
	if (s->want_adds && !(s->adds = tcx_notify_open_adds(s->want_adds, err, errlen)))
		goto fail;
	return 0;
fail:
	tcx_notify_close(s->notify);
	s->notify = NULL;
	nl_close_sock(s);
	return -1;
}

/* Call fn in s's namespace: for a named one, enter it on this thread, call,
 * and come back. A socket stays bound to the namespace it was made in; the
 * sockets and ns_fd keep that namespace alive until the source is closed
 * (nl_gone()). */
static int nl_in_ns(struct nl_src *s, int (*fn)(struct nl_src *s, char *err, size_t errlen),
                    char *err, size_t errlen)
{
	int self, ret = -1;

	if (s->ns_fd < 0)
		return fn(s, err, errlen);
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		snprintf(err, errlen, "netns '%s': cannot open own namespace: %s", s->netns,
		         strerror(errno));
		return -1;
	}
	if (setns(s->ns_fd, CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "netns '%s': setns: %s", s->netns, strerror(errno));
		goto out;
	}
	ret = fn(s, err, errlen);
	if (setns(self, CLONE_NEWNET) < 0) {
		/* Staying in the wrong namespace would silently mislabel every
		 * later dump: there is no safe way on. */
		perror("tcexporter: cannot return to own network namespace");
		abort();
	}
out:
	close(self);
	return ret;
}

static void nl_close(void *src)
{
	struct nl_src *s = src;

	if (!s)
		return;
	nl_close_sock(s);
	tcx_notify_close(s->notify);
	tcx_notify_close(s->adds);
	if (s->ns_fd >= 0)
		close(s->ns_fd);
	free(s);
}

/* Do s's fds leave the reserve (lib/fds.h) free? Else err says why. */
static int nl_fds_fit(const struct nl_src *s, char *err, size_t errlen)
{
	int fd = s->ns_fd;
	rlim_t soft = 0;

	if (s->sk && mnl_socket_get_fd(s->sk) > fd)
		fd = mnl_socket_get_fd(s->sk);
	if (s->notify && tcx_notify_fd(s->notify) > fd)
		fd = tcx_notify_fd(s->notify);
	if (s->adds && tcx_notify_fd(s->adds) > fd)
		fd = tcx_notify_fd(s->adds);
	if (fd < 0 || !tcx_fd_in_reserve(fd, &soft))
		return 0;
	snprintf(err, errlen,
	         "not opened: its sockets would leave fewer than %ju of the %ju open files "
	         "(the soft limit) free, and those are kept for HTTP and reading " TCX_NETNS_DIR,
	         (uintmax_t)tcx_fd_reserve(soft), (uintmax_t)soft);
	return -1;
}

/* s closed, as it failed with errno e: errno is e again. */
static void *nl_open_failed(struct nl_src *s, int e)
{
	nl_close(s);
	errno = e;
	return NULL;
}

static void *nl_open(void *opaque, const char *netns, int notify, int adds, char *err,
                     size_t errlen)
{
	struct nl_src *s = calloc(1, sizeof(*s));
	char path[128];

	if (!s) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->ns_fd = -1;
	s->want_notify = notify;
	s->want_adds = adds;
	if (netns && netns[0]) {
		snprintf(s->netns, sizeof(s->netns), "%s", netns);
		snprintf(path, sizeof(path), TCX_NETNS_DIR "/%s", netns);
		s->ns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->ns_fd < 0) {
			int e = errno;

			snprintf(err, errlen, "netns '%s': cannot open %s: %s", netns, path,
			         strerror(e));
			return nl_open_failed(s, e);
		}
		if (nl_fds_fit(s, err, errlen) < 0)
			return nl_open_failed(s, EMFILE);
	}
	if (nl_in_ns(s, nl_open_socks, err, errlen) < 0)
		return nl_open_failed(s, errno);
	if (nl_fds_fit(s, err, errlen) < 0)
		return nl_open_failed(s, EMFILE);
	return s;
}

/* Is the namespace s was opened in no longer the one of its name (the name
 * deleted, or deleted and made again: another nsfs inode)? */
static int nl_gone(void *src)
{
	struct nl_src *s = src;
	char path[128];
	struct stat now, ours;

	if (s->ns_fd < 0)
		return 0;
	snprintf(path, sizeof(path), TCX_NETNS_DIR "/%s", s->netns);
	/* Only a name that is not there is gone: a stat that fails otherwise
	 * (out of memory, ...) releases nothing. */
	if (stat(path, &now) < 0)
		return errno == ENOENT || errno == ENOTDIR;
	return fstat(s->ns_fd, &ours) == 0 &&
	       (now.st_dev != ours.st_dev || now.st_ino != ours.st_ino);
}

/* One datagram of a reply into s->buf: its length, or -errno. */
static ssize_t nl_read(struct nl_src *s)
{
	return tcx_nlmsg_recv(mnl_socket_get_fd(s->sk), s->buf, sizeof(s->buf), 0, s->dropped);
}

/* Parse one chunk: 1 when the reply is complete, 0 for more, or -errno. */
static int nl_chunk(struct tcx_nlreply *r, const void *buf, ssize_t n)
{
	if (n <= 0) {
		if (n == 0)
			n = -EPROTO; /* a netlink socket has no end of file */
		snprintf(r->err, r->errlen, "netlink receive: %s",
		         n == -EAGAIN ? "timed out" : strerror((int)-n));
		return (int)n;
	}
	return tcx_nlmsg_reply(r, buf, (size_t)n);
}

static int nl_dump(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
                   size_t errlen)
{
	struct nl_src *s = src;
	struct tcx_nlreply r = {
	        .cb = cb, .data = data, .dropped = s->dropped, .err = err, .errlen = errlen};
	int ret;

	if (errlen)
		err[0] = '\0';
	if (s->broken) {
		/* Replies of a cut-off dump may still be queued: start afresh,
		 * in the same namespace. */
		nl_close_sock(s);
		if (nl_in_ns(s, nl_open_sock, err, errlen) < 0)
			return -EIO;
	}
	req->nlmsg_seq = r.seq = ++s->seq;
	req->nlmsg_pid = 0;
	r.portid = s->portid;
	if (mnl_socket_sendto(s->sk, req, req->nlmsg_len) < 0) {
		ret = -errno;
		snprintf(err, errlen, "netlink send: %s", strerror(errno));
		return ret;
	}
	do
		ret = nl_chunk(&r, s->buf, nl_read(s));
	while (!ret);
	/* A walk that failed, or that the callback stopped before NLMSG_DONE,
	 * leaves the rest of the reply on the socket. */
	if (ret < 0 || !r.done)
		s->broken = 1;
	return ret < 0 ? ret : r.status;
}

static void nl_dropped(void *src, uint64_t dropped[TCX_NLDROP__MAX], uint64_t *lost)
{
	struct nl_src *s = src;

	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++)
		dropped[i] += s->dropped[i];
	if (s->notify)
		*lost += tcx_notify_counts(s->notify, dropped);
	if (s->adds) /* its losses cost a sweep (units.c), not a final */
		tcx_notify_counts(s->adds, dropped);
}

static struct tcx_snapshot *nl_drain(void *src)
{
	struct nl_src *s = src;

	return tcx_notify_drain(s->notify, NULL);
}

static int nl_added(void *src, tcx_notify_add_fn fn, void *arg)
{
	struct nl_src *s = src;

	return s->adds ? tcx_notify_adds(s->adds, fn, arg) : 1;
}

const struct tcx_source_ops tcx_netlink_source = {
        .open = nl_open,
        .dump = nl_dump,
        .close = nl_close,
        .dropped = nl_dropped,
        .gone = nl_gone,
        .drain = nl_drain,
        .added = nl_added,
};
