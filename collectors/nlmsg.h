/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Receiving netlink datagrams from the kernel, and walking their messages.
 * Every socket (the live source's, the notifications') receives through
 * tcx_nlmsg_recv(), with its sender check; the rest is no I/O: pure
 * functions on (buf, len), so that a fuzz harness can call them too.
 *
 * Every loop over received messages goes through tcx_nlmsg_next(), which
 * checks each length as an unsigned number against the bytes left. libmnl
 * 1.0.4's mnl_nlmsg_ok() compares it as a signed int, so a forged
 * nlmsg_len of 0xffff0062 passes there and the walk goes 4 GB past the
 * buffer: libmnl's walkers (mnl_nlmsg_ok/next, mnl_cb_run) are not used on
 * received bytes. */
#ifndef TCX_NLMSG_H
#define TCX_NLMSG_H

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collectors/snapshot.h"

/* One datagram from the kernel on netlink socket fd into buf: its length,
 * or -errno (-EAGAIN with MSG_DONTWAIT in flags when none is queued,
 * -ENOSPC when it is longer than len). Any process with CAP_NET_ADMIN over
 * the namespace (in a namespace made with `unshare -Urn`, an unprivileged
 * user) can send to our port: what does not come from the kernel (port 0)
 * is dropped unread and counted in dropped[TCX_NLDROP_SENDER]. */
ssize_t tcx_nlmsg_recv(int fd, void *buf, size_t len, int flags, uint64_t dropped[TCX_NLDROP__MAX]);

/* The message at *off in buf[0, len), with *off moved past it (to the next
 * aligned message, or to len). NULL when no message starts there: at the
 * end (*off == len), or when the bytes left are no message (*off < len:
 * fewer than a header, or a length below a header's or beyond the bytes
 * left). *off must be 4-aligned (0 to start). */
const struct nlmsghdr *tcx_nlmsg_next(const void *buf, size_t len, size_t *off);

/* One reply (to a dump or a request with NLM_F_ACK) being walked, datagram
 * after datagram. */
struct tcx_nlreply {
	uint32_t seq, portid; /* of the request: messages must carry these or 0 */
	mnl_cb_t cb;          /* called for each data message */
	void *data;
	uint64_t *dropped; /* TCX_NLDROP__MAX counts to add to, or NULL */
	char *err;         /* why the walk failed, or the kernel's extended ack */
	size_t errlen;
	int done;   /* NLMSG_DONE or NLMSG_ERROR was seen */
	int status; /* then its status: 0 or a negative errno */
};

/* Walk one datagram of the reply: 1 when the reply is complete (NLMSG_DONE
 * or NLMSG_ERROR, or cb returned MNL_CB_STOP), 0 when more datagrams are to
 * come, or -errno with r->err set: -EBADMSG for a message whose length does
 * not fit (the rest of the datagram is dropped, counted as
 * TCX_NLDROP_LENGTH) or a malformed NLMSG_DONE/NLMSG_ERROR, -ESRCH or
 * -EPROTO for a message of another port or sequence, -EINTR for a dump the
 * kernel marked interrupted, or what cb failed with (errno, else -EPROTO). */
int tcx_nlmsg_reply(struct tcx_nlreply *r, const void *buf, size_t len);

#endif
