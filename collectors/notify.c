/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Deletion notifications: the final counters of deleted filters (see
 * notify.h for what the kernel sends and when). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <libmnl/libmnl.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "collectors/nlmsg.h"
#include "collectors/notify.h"
#include "collectors/tc_parse.h"

#ifndef TCM_IFINDEX_MAGIC_BLOCK
#define TCM_IFINDEX_MAGIC_BLOCK 0xFFFFFFFFU
#endif

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

#define NOTIFY_BUFSZ (64 * 1024) /* a filter with its actions, 4-8 KiB as a rule */

struct tcx_notify {
	char netns[64];
	struct mnl_socket *sk; /* NULL over a receive function of the caller's */
	tcx_notify_recv_fn recv;
	void *ctx;
	uint64_t overruns;   /* ENOBUFS: one notification lost or more each */
	uint64_t unread;     /* notifications the drain could not read (lost() says which) */
	uint64_t drops;      /* notifications the kernel dropped (SO_MEMINFO) */
	uint32_t last_drops; /* the kernel's count, a u32, when last read */
	uint64_t lost_told;  /* lost() when tcx_notify_adds() last returned */
	uint64_t dropped[TCX_NLDROP__MAX];
	char buf[NOTIFY_BUFSZ];
};

static ssize_t sock_recv(void *ctx, void *buf, size_t len, uint64_t dropped[TCX_NLDROP__MAX])
{
	struct tcx_notify *n = ctx;

	return tcx_nlmsg_recv(mnl_socket_get_fd(n->sk), buf, len, 0, dropped);
}

struct tcx_notify *tcx_notify_new(const char *netns, tcx_notify_recv_fn recv, void *ctx)
{
	struct tcx_notify *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	snprintf(n->netns, sizeof(n->netns), "%s", netns ? netns : "");
	n->recv = recv;
	n->ctx = ctx;
	return n;
}

/* Only messages of one type reach the queue. A socket filter loads a
 * half-word in network order: the host-order nlmsg_type then reads as
 * htons(type), whichever the host's order. */
static int attach_filter(int fd, uint16_t type)
{
	struct sock_filter code[] = {
	        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type)),
	        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(type), 0, 1),
	        BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
	        BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = {.len = sizeof(code) / sizeof(code[0]), .filter = code};

	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static int open_cb(struct tcx_notify *n, uint16_t type, int rcvbuf, char *err, size_t errlen)
{
	int grp = RTNLGRP_TC, fd;

	n->sk = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!n->sk) {
		snprintf(err, errlen, "notification socket: %s", strerror(errno));
		return -1;
	}
	fd = mnl_socket_get_fd(n->sk);
	/* A larger queue where allowed, else what rmem_max allows. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	/* Best effort: without it, other messages are read and skipped. */
	attach_filter(fd, type);
	if (mnl_socket_bind(n->sk, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)) < 0) {
		snprintf(err, errlen, "notification socket: subscribing to RTNLGRP_TC: %s",
		         strerror(errno));
		mnl_socket_close(n->sk);
		n->sk = NULL;
		return -1;
	}
	return 0;
}

static struct tcx_notify *notify_open(const char *netns, uint16_t type, int rcvbuf, char *err,
                                      size_t errlen)
{
	struct tcx_notify *n = tcx_notify_new(netns, sock_recv, NULL);

	if (!n) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	n->ctx = n;
	if (open_cb(n, type, rcvbuf > 0 ? rcvbuf : TCX_NOTIFY_RCVBUF, err, errlen) < 0) {
		free(n);
		return NULL;
	}
	return n;
}

struct tcx_notify *tcx_notify_open(const char *netns, int rcvbuf, char *err, size_t errlen)
{
	return notify_open(netns, RTM_DELTFILTER, rcvbuf, err, errlen);
}

struct tcx_notify *tcx_notify_open_adds(int rcvbuf, char *err, size_t errlen)
{
	return notify_open(NULL, RTM_NEWTFILTER, rcvbuf, err, errlen);
}

int tcx_notify_fd(const struct tcx_notify *n)
{
	return n->sk ? mnl_socket_get_fd(n->sk) : -1;
}

void tcx_notify_close(struct tcx_notify *n)
{
	if (!n)
		return;
	if (n->sk)
		mnl_socket_close(n->sk);
	free(n);
}

/* ---- one drain -------------------------------------------------------------------------- */

struct drain {
	struct tcx_notify *n;
	struct tcx_snapshot *s;
};

/* The target of a notification's filter, found or added: the shared block,
 * or the device (named now, in the socket's namespace) and parent. */
static int target_of(struct drain *d, const struct tcx_tp_key *key)
{
	struct tcx_snapshot *s = d->s;
	uint32_t block = key->ifindex == TCM_IFINDEX_MAGIC_BLOCK ? key->parent : 0;
	uint32_t ifindex = block ? 0 : key->ifindex,
	         parent = block ? 0 : tcx_unit_parent(key->parent);
	struct ifreq ifr = {.ifr_ifindex = (int)ifindex};
	struct tcx_target *t;

	for (size_t i = 0; i < s->n_targets; i++) {
		t = &s->targets[i];
		if (t->block == block && t->ifindex == ifindex && t->parent == parent)
			return (int)i;
	}
	t = tcx_snapshot_add_target(s);
	if (!t)
		return -1;
	if (block)
		ifr.ifr_name[0] = '\0';
	else if (!d->n->sk || ioctl(mnl_socket_get_fd(d->n->sk), SIOCGIFNAME, &ifr) < 0)
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "if%u", ifindex); /* gone by now */
	tcx_target_init(t, d->n->netns, ifr.ifr_name, ifindex, block, parent);
	return (int)(s->n_targets - 1);
}

static int msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct drain *d = arg;
	struct tcx_tp_key key;
	char err[256];
	int t;

	if (nlh->nlmsg_type != RTM_DELTFILTER)
		return MNL_CB_OK;
	/* The ages of a deleted action's times are as of the deletion; the
	 * notification waited for the drain up to a collection interval: its
	 * times read as late as that (the kernel stamps no netlink message). */
	tcx_snapshot_clock(d->s);
	switch (tcx_parse_filter(nlh, d->s, 0, &key, err, sizeof(err))) {
	case TCX_PARSE_ROW:
		t = target_of(d, &key);
		if (t < 0) {
			errno = ENOMEM;
			return MNL_CB_ERROR;
		}
		d->s->filters[d->s->n_filters - 1].target = (uint32_t)t;
		break;
	case TCX_PARSE_ERROR:
		d->s->errors[TCX_ERR_MALFORMED]++;
		d->n->unread++;
		break;
	default: /* a pref or chain deleted whole: no counters in it */
		break;
	}
	return MNL_CB_OK;
}

/* The kernel counts every notification it could not queue (sk_drops, in a
 * u32); ENOBUFS says only that some were. Those the drain could not read
 * are added: longer than the buffer, malformed, cut short (a length that
 * does not fit) or read when out of memory (one each). */
static uint64_t lost(struct tcx_notify *n)
{
	uint32_t mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (n->sk && getsockopt(mnl_socket_get_fd(n->sk), SOL_SOCKET, SO_MEMINFO, mi, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(mi[0])) {
		n->drops += (uint32_t)(mi[SK_MEMINFO_DROPS] - n->last_drops);
		n->last_drops = mi[SK_MEMINFO_DROPS];
	}
	return (n->drops > n->overruns ? n->drops : n->overruns) + n->unread +
	       n->dropped[TCX_NLDROP_LENGTH];
}

/* Read what is queued, without blocking (at most max datagrams), walking
 * each datagram's messages with cb. Returns 0 when the queue is read, 1
 * when max datagrams were (the rest waits), -ENOMEM when cb ran out of memory (the datagram counted
 * unread), or the receive error that ended it (what is queued stays). A
 * queue overrun (ENOBUFS) and a datagram longer than the buffer (ENOSPC) are
 * counted, for lost(), and the reading goes on. */
static int read_queued(struct tcx_notify *n, mnl_cb_t cb, void *data, unsigned max)
{
	char err[256];

	for (unsigned i = 0; i < max; i++) {
		struct tcx_nlreply r = {.cb = cb,
		                        .data = data,
		                        .dropped = n->dropped,
		                        .err = err,
		                        .errlen = sizeof(err)};
		ssize_t len = n->recv(n->ctx, n->buf, sizeof(n->buf), n->dropped);

		if (len == -EAGAIN || len == -EWOULDBLOCK)
			return 0;
		if (len == -ENOBUFS || len == -ENOSPC) {
			if (len == -ENOBUFS)
				n->overruns++;
			else
				n->unread++;
			continue;
		}
		if (len <= 0)
			return len ? (int)len : -EIO;
		/* Notifications carry the requester's port and sequence: seq and
		 * portid 0 check neither. A length that does not fit is counted
		 * in dropped; the callback fails only when out of memory. */
		if (tcx_nlmsg_reply(&r, n->buf, (size_t)len) == -ENOMEM) {
			n->unread++;
			return -ENOMEM;
		}
	}
	return 1;
}

struct tcx_snapshot *tcx_notify_drain(struct tcx_notify *n, struct tcx_config *cfg)
{
	struct drain d = {.n = n, .s = tcx_snapshot_new(cfg)};
	int ret;

	if (!d.s)
		return NULL;
	ret = read_queued(n, msg_cb, &d, TCX_NOTIFY_MAX_READS);
	if (ret == -ENOMEM) {
		d.s->errors[TCX_ERR_NOMEM]++;
		d.s->incomplete = 1;
	} else if (ret < 0) {
		d.s->errors[TCX_ERR_IO]++; /* what is queued stays: not lost */
	}
	memcpy(d.s->netlink_dropped, n->dropped, sizeof(n->dropped));
	d.s->notifications_lost = lost(n);
	if (cfg)
		tcx_snapshot_classify(d.s);
	return d.s;
}

uint64_t tcx_notify_counts(struct tcx_notify *n, uint64_t dropped[TCX_NLDROP__MAX])
{
	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++)
		dropped[i] += n->dropped[i];
	return lost(n);
}

/* ---- additions ---------------------------------------------------------------------------- */

struct adds {
	tcx_notify_add_fn fn;
	void *arg;
};

static int add_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct adds *a = arg;
	const struct tcmsg *t = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type == RTM_NEWTFILTER && nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(*t))
		a->fn(a->arg, (uint32_t)t->tcm_ifindex, t->tcm_parent);
	return MNL_CB_OK;
}

int tcx_notify_adds(struct tcx_notify *n, tcx_notify_add_fn fn, void *arg)
{
	struct adds a = {.fn = fn, .arg = arg};
	uint64_t now;

	/* A receive error leaves the rest queued, and so does a queue longer
	 * than TCX_NOTIFY_MAX_READS datagrams (a producer as fast as us):
	 * what it kept from us may have been an addition, as good as lost (a
	 * sweep). */
	if (read_queued(n, add_cb, &a, TCX_NOTIFY_MAX_READS) != 0)
		n->unread++;
	now = lost(n);
	if (now == n->lost_told)
		return 0;
	n->lost_told = now;
	return 1;
}
