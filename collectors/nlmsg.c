/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Receiving and walking netlink messages (see nlmsg.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "collectors/nlmsg.h"
#include "collectors/tc_parse.h"

const struct nlmsghdr *tcx_nlmsg_next(const void *buf, size_t len, size_t *off)
{
	const struct nlmsghdr *nlh;
	size_t left, step;

	if (*off >= len)
		return NULL;
	left = len - *off;
	nlh = (const void *)((const char *)buf + *off);
	if (left < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > left)
		return NULL;
	/* The last message may lack its alignment padding. */
	step = NLMSG_ALIGN((size_t)nlh->nlmsg_len);
	*off += step < left ? step : left;
	return nlh;
}

static const char *ctl_name(uint16_t type)
{
	return type == NLMSG_DONE ? "NLMSG_DONE" : "NLMSG_ERROR";
}

int tcx_nlmsg_reply(struct tcx_nlreply *r, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off = 0, left;

	while ((nlh = tcx_nlmsg_next(buf, len, &off))) {
		if (nlh->nlmsg_pid && r->portid && nlh->nlmsg_pid != r->portid) {
			snprintf(r->err, r->errlen, "netlink: a message for port %u, not ours (%u)",
			         nlh->nlmsg_pid, r->portid);
			return -ESRCH;
		}
		if (nlh->nlmsg_seq && r->seq && nlh->nlmsg_seq != r->seq) {
			snprintf(r->err, r->errlen,
			         "netlink: a message of sequence %u, not of the request (%u)",
			         nlh->nlmsg_seq, r->seq);
			return -EPROTO;
		}
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			/* Never set by TC dumps today. */
			snprintf(r->err, r->errlen, "netlink: dump interrupted by a change");
			return -EINTR;
		}
		if (nlh->nlmsg_type >= NLMSG_MIN_TYPE) {
			int ret;

			errno = 0;
			ret = r->cb(nlh, r->data);
			if (ret == MNL_CB_ERROR) {
				ret = errno ? -errno : -EPROTO;
				snprintf(r->err, r->errlen, "netlink dump: %s", strerror(-ret));
				return ret;
			}
			if (ret == MNL_CB_STOP)
				return 1;
		} else if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
			r->done = 1;
			if (tcx_parse_status(nlh, &r->status, r->err, r->errlen) < 0) {
				r->status = -EBADMSG;
				snprintf(r->err, r->errlen, "malformed %s",
				         ctl_name(nlh->nlmsg_type));
			}
			return 1;
		}
		/* NLMSG_NOOP, NLMSG_OVERRUN and reserved control types: nothing. */
	}
	if (off == len)
		return 0;
	if (r->dropped)
		r->dropped[TCX_NLDROP_LENGTH]++;
	left = len - off;
	if (left < NLMSG_HDRLEN) {
		snprintf(r->err, r->errlen, "netlink: %zu stray bytes after the last message",
		         left);
	} else {
		uint32_t n = ((const struct nlmsghdr *)((const char *)buf + off))->nlmsg_len;

		snprintf(r->err, r->errlen,
		         "netlink: message length %u at offset %zu %s (%zu bytes left in the "
		         "datagram)",
		         n, off,
		         n < NLMSG_HDRLEN ? "is shorter than a header" : "runs past the end", left);
	}
	return -EBADMSG;
}

ssize_t tcx_nlmsg_recv(int fd, void *buf, size_t len, int flags, uint64_t dropped[TCX_NLDROP__MAX])
{
	struct sockaddr_nl from;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr msg = {
	        .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	for (;;) {
		msg.msg_namelen = sizeof(from);
		n = recvmsg(fd, &msg, flags);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (msg.msg_namelen != sizeof(from) || from.nl_family != AF_NETLINK)
			return -EPROTO;
		if (from.nl_pid == 0)
			break;
		dropped[TCX_NLDROP_SENDER]++;
	}
	if (msg.msg_flags & MSG_TRUNC)
		return -ENOSPC; /* longer than the buffer (as libmnl reports it) */
	return n;
}
