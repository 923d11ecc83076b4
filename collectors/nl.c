/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The live source: libmnl rtnetlink sockets, one per network namespace.
 *
 * libmnl's default NLMSG_DONE handler ignores the errno that the kernel puts
 * in the DONE payload (an aborted terse dump ends that way), so control
 * messages get their own callbacks here. The receive buffer holds a whole
 * 32 KiB dump chunk, and the socket is kept for the next dump so that the
 * kernel sizes its first chunk from the previous reads.
 *
 * A reply longer than one chunk is received by a reader thread (nlpipe.c)
 * while this thread parses: the kernel builds each chunk inside the recvmsg()
 * that takes the one before, so receiving and parsing on one thread would
 * leave the kernel idle while the parser runs. */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "collectors/collect.h"
#include "collectors/nlpipe.h"
#include "collectors/tc_parse.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define NL_BUFSZ     (64 * 1024) /* > the kernel's 32 KiB dump chunks */
#define NL_RCVBUF    (1024 * 1024)
#define NL_TIMEOUT_S 10
#define NL_SLOTS     4          /* chunks the reader may receive ahead of the parser */
#define NL_PIPE_MIN  (8 * 1024) /* a first chunk this long: more are coming */

struct nl_src {
	struct mnl_socket *sk;
	unsigned int portid;
	unsigned int seq;
	int broken;              /* a dump was cut off: the socket may hold stale replies */
	struct tcx_nlpipe *pipe; /* made for the first reply of several chunks */
	int no_pipe;             /* it could not be made: receive inline */
	char buf[NL_BUFSZ];
};

struct dump_ctx {
	mnl_cb_t cb;
	void *data;
	int status;
	int done;
	char *err;
	size_t errlen;
};

static int data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *d = arg;

	return d->cb(nlh, d->data);
}

static int ctl_done_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct dump_ctx *d = arg;

	if (tcx_parse_status(nlh, &d->status, d->err, d->errlen) < 0) {
		d->status = -EBADMSG;
		snprintf(d->err, d->errlen, "malformed NLMSG_%s",
		         nlh->nlmsg_type == NLMSG_DONE ? "DONE" : "ERROR");
	}
	d->done = 1;
	return MNL_CB_STOP;
}

static int ctl_noop_cb(const struct nlmsghdr *nlh, void *arg)
{
	return MNL_CB_OK;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
        [NLMSG_NOOP] = ctl_noop_cb,
        [NLMSG_ERROR] = ctl_done_cb,
        [NLMSG_DONE] = ctl_done_cb,
        [NLMSG_OVERRUN] = ctl_noop_cb,
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

/* Open the socket inside a named namespace: enter it on this thread, open,
 * and come back. The socket stays bound to the namespace it was made in. */
static int nl_open_in_netns(struct nl_src *s, const char *netns, char *err, size_t errlen)
{
	char path[128];
	int self, target, ret = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	target = open(path, O_RDONLY | O_CLOEXEC);
	if (target < 0) {
		snprintf(err, errlen, "netns '%s': cannot open %s: %s", netns, path,
		         strerror(errno));
		return -1;
	}
	self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		snprintf(err, errlen, "netns '%s': cannot open own namespace: %s", netns,
		         strerror(errno));
		close(target);
		return -1;
	}
	if (setns(target, CLONE_NEWNET) < 0) {
		snprintf(err, errlen, "netns '%s': setns: %s", netns, strerror(errno));
		goto out;
	}
	ret = nl_open_sock(s, err, errlen);
	if (setns(self, CLONE_NEWNET) < 0) {
		/* Staying in the wrong namespace would silently mislabel every
		 * later dump: there is no safe way on. */
		perror("tcexporter: cannot return to own network namespace");
		abort();
	}
out:
	close(self);
	close(target);
	return ret;
}

static void *nl_open(void *opaque, const char *netns, char *err, size_t errlen)
{
	struct nl_src *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((netns && netns[0] ? nl_open_in_netns(s, netns, err, errlen)
	                       : nl_open_sock(s, err, errlen)) < 0) {
		free(s);
		return NULL;
	}
	s->no_pipe = tcx_nlpipe_cpus() < 2; /* one CPU: receive and parse in turn */
	return s;
}

static void nl_close(void *src)
{
	struct nl_src *s = src;

	if (!s)
		return;
	tcx_nlpipe_free(s->pipe);
	nl_close_sock(s);
	free(s);
}

/* One read of the socket: the chunk's length, or -errno. */
static ssize_t nl_read(void *arg, void *buf, size_t len)
{
	struct nl_src *s = arg;
	ssize_t n = mnl_socket_recvfrom(s->sk, buf, len);

	return n < 0 ? -errno : n;
}

/* Parse one chunk: 1 when the reply is complete, 0 for more, or -errno. */
static int nl_chunk(struct nl_src *s, struct dump_ctx *d, const void *buf, ssize_t n)
{
	int ret;

	if (n <= 0) {
		if (n == 0)
			n = -EPROTO; /* a netlink socket has no end of file */
		snprintf(d->err, d->errlen, "netlink receive: %s",
		         n == -EAGAIN ? "timed out" : strerror((int)-n));
		return (int)n;
	}
	ret = mnl_cb_run2(buf, (size_t)n, s->seq, s->portid, data_cb, d, ctl_cbs, NLMSG_MIN_TYPE);
	if (ret == MNL_CB_ERROR) {
		/* EINTR: NLM_F_DUMP_INTR (never set by TC dumps today);
		 * ESRCH/EPROTO: a reply that is not ours. */
		ret = errno ? -errno : -EPROTO;
		if (!d->err[0])
			snprintf(d->err, d->errlen, "netlink dump: %s", strerror(-ret));
		return ret;
	}
	return d->done || ret == MNL_CB_STOP;
}

static int nl_dump(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
                   size_t errlen)
{
	struct nl_src *s = src;
	struct dump_ctx d = {.cb = cb, .data = data, .err = err, .errlen = errlen};
	const void *chunk;
	ssize_t n;
	int ret;

	if (errlen)
		err[0] = '\0';
	if (s->broken) {
		/* Replies of a cut-off dump may still be queued: start afresh. */
		nl_close_sock(s);
		if (nl_open_sock(s, err, errlen) < 0)
			return -EIO;
	}
	req->nlmsg_seq = ++s->seq;
	req->nlmsg_pid = 0;
	if (mnl_socket_sendto(s->sk, req, req->nlmsg_len) < 0) {
		ret = -errno;
		snprintf(err, errlen, "netlink send: %s", strerror(errno));
		return ret;
	}
	/* Chunks are received here until one is long and does not end the
	 * reply: then more are coming, and the reader takes over. A reply that
	 * fits in one chunk, or that ends with a short one (NLMSG_DONE often
	 * comes on its own), never wakes the reader. */
	for (;;) {
		int piped = 0;

		do
			n = nl_read(s, s->buf, sizeof(s->buf));
		while (n == -EINTR);
		if (n >= NL_PIPE_MIN && !s->no_pipe && !tcx_nlpipe_chunk_ends(s->buf, (size_t)n)) {
			if (!s->pipe) {
				s->pipe = tcx_nlpipe_new(nl_read, s, NL_BUFSZ, NL_SLOTS);
				s->no_pipe = !s->pipe;
			}
			if (s->pipe) {
				tcx_nlpipe_start(s->pipe);
				piped = 1;
			}
		}
		ret = nl_chunk(s, &d, s->buf, n);
		if (piped)
			break;
		if (ret < 0) {
			s->broken = 1;
			return ret;
		}
		if (ret)
			return d.status;
	}
	while (!ret) {
		n = tcx_nlpipe_next(s->pipe, &chunk);
		if (n == 0) {
			/* The reader saw the end in a chunk the parser did not
			 * take as one (a reply that is not ours). */
			ret = -EPROTO;
			snprintf(err, errlen, "netlink dump: reply ended without NLMSG_DONE");
			break;
		}
		ret = nl_chunk(s, &d, chunk, n);
	}
	/* Stopped early: take the rest of the reply off the socket. */
	if (tcx_nlpipe_drain(s->pipe) < 0 || ret < 0)
		s->broken = 1;
	return ret < 0 ? ret : d.status;
}

const struct tcx_source_ops tcx_netlink_source = {
        .open = nl_open,
        .dump = nl_dump,
        .close = nl_close,
};
