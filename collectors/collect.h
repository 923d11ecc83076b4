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
 * open() returns NULL, with err saying why and errno set, when the namespace
 * cannot be opened: EMFILE, ENFILE or ENOMEM (also for fds it would take of
 * the reserve, lib/fds.h) fail its targets with cause resource, any other
 * with cause notfound.
 * open() with notify nonzero also subscribes to the namespace's deletion
 * notifications (notify.h), as long as the source is open, asking for a
 * receive buffer of notify bytes (notify_buffer_kib); drain() (may be NULL
 * without notify) then returns the final rows of the filters deleted since
 * the last drain (tcx_notify_drain(), unclassified), NULL when out of
 * memory. With adds nonzero, it subscribes to where filters are added, with
 * a buffer of adds bytes: added()
 * (may be NULL) calls fn for each filter added since the last call, with the
 * kernel's tcm_ifindex and tcm_parent (tcx_notify_adds()), and returns 1 when
 * some may have been lost since then (or it was not opened with adds), else
 * 0. dropped() (may be NULL) adds the datagrams the source dropped since it
 * was opened (enum tcx_nldrop_cause) to counts, and the deletion
 * notifications it lost since then to *lost. gone() (may be NULL) is nonzero
 * when the named namespace the source was opened in is no longer the one of
 * that name (its /run/netns entry was removed, or now holds another one): the
 * collector then closes the source, which releases the namespace, and opens
 * the name afresh. The live one is collectors/nl.h's. */
struct tcx_source_ops {
	void *(*open)(void *opaque, const char *netns, int notify, int adds, char *err,
	              size_t errlen);
	int (*dump)(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
	            size_t errlen);
	void (*close)(void *src);
	void (*dropped)(void *src, uint64_t counts[TCX_NLDROP__MAX], uint64_t *lost);
	int (*gone)(void *src);
	struct tcx_snapshot *(*drain)(void *src);
	int (*added)(void *src, void (*fn)(void *arg, uint32_t ifindex, uint32_t parent),
	             void *arg);
};

struct tcx_collector;

struct tcx_collector *tcx_collector_new(const struct tcx_source_ops *ops, void *opaque);
void tcx_collector_free(struct tcx_collector *c);

/* Make c tcexporter --once's: every pass a liveness pass (by default one
 * is, every `liveness_interval` of cfg, and the first) and a sweep (by
 * default one is at a namespace's first pass, after a lost addition, a
 * reload, and every `sweep_interval`: units.c), with no source opened
 * for additions. */
void tcx_collector_once(struct tcx_collector *c);

/* Run one pass over cfg's targets. Never returns NULL unless out of memory;
 * per-target failures are recorded in the snapshot's targets. A netns glob
 * whose read of TCX_NETNS_DIR fails keeps the namespaces it matched last, as
 * failed targets whose sources stay open and undrained. With
 * `aggregate`, each namespace's deletion notifications are drained before
 * the dumps (drain_finals() says why), and the final rows of the pass's
 * dump units put in the snapshot's finals, for tcx_agg_update() to fold. */
struct tcx_snapshot *tcx_collect(struct tcx_collector *c, struct tcx_config *cfg);

#endif
