/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The socket helpers of the live source (nl.c), shared with the deletion
 * notifications (notify.c): every datagram is received through the same
 * sender check. */
#ifndef TCX_NL_H
#define TCX_NL_H

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
ssize_t tcx_nl_recv(int fd, void *buf, size_t len, int flags, uint64_t dropped[TCX_NLDROP__MAX]);

#endif
