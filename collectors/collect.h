/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The collector: expands the configured targets into dump units and dumps
 * each one into a snapshot, choosing terse or full dumps per classifier. */
#ifndef TCX_COLLECT_H
#define TCX_COLLECT_H

#include <linux/netlink.h>
#include <libmnl/libmnl.h>
#include <stddef.h>

#include "collectors/snapshot.h"
#include "config/config.h"

/* The seam in front of the kernel: one open source per network namespace.
 * dump() sends req, calls cb for every data message of the reply, and returns
 * 0 or the negative errno the kernel ended the dump with (NLMSG_DONE or
 * NLMSG_ERROR), with the kernel's extended ack text, if any, in err.
 * dropped() (may be NULL) adds the datagrams the source dropped since it was
 * opened (enum tcx_nldrop_cause) to counts. gone() (may be NULL) is nonzero
 * when the named namespace the source was opened in is no longer the one of
 * that name (its /run/netns entry was removed, or now holds another one): the
 * collector then closes the source, which releases the namespace, and opens
 * the name afresh. */
struct tcx_source_ops {
	void *(*open)(void *opaque, const char *netns, char *err, size_t errlen);
	int (*dump)(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
	            size_t errlen);
	void (*close)(void *src);
	void (*dropped)(void *src, uint64_t counts[TCX_NLDROP__MAX]);
	int (*gone)(void *src);
};

/* The live implementation: libmnl rtnetlink sockets, setns() for netns. */
extern const struct tcx_source_ops tcx_netlink_source;

struct tcx_collector;

struct tcx_collector *tcx_collector_new(const struct tcx_source_ops *ops, void *opaque);
void tcx_collector_free(struct tcx_collector *c);

/* Run one pass over cfg's targets. Never returns NULL unless out of memory;
 * per-target failures are recorded in the snapshot's targets. */
struct tcx_snapshot *tcx_collect(struct tcx_collector *c, struct tcx_config *cfg);

#endif
