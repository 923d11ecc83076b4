/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The final counters of deleted filters, from the kernel's deletion
 * notifications (RTM_DELTFILTER on the multicast group RTNLGRP_TC).
 *
 * Between two collections a deleted filter's last packets would be lost;
 * the kernel sends them when the filter is deleted by handle, and only
 * then. What net/sched/cls_api.c sends (the same in 6.1 and 6.18; each case
 * checked on 6.18 with u32 and mirred, and on Debian's 6.1 and 6.12 with u32
 * and gact; README "Kernels"):
 *   - a filter deleted by handle (`tc filter del ... pref P handle H KIND`):
 *     tfilter_del_notify() fills the message with the filter, its actions
 *     and their stats just before it deletes the filter: its final counters.
 *     A filter of a shared block can only be deleted through the block, and
 *     its message names the block.
 *   - a whole pref deleted (`tc filter del ... pref P`, no handle), a chain
 *     flushed (`tc filter del dev X ingress`, tfilter_notify_chain()) or
 *     deleted (RTM_DELCHAIN): one message per pref, handle 0, with no
 *     filter, action or counter in it (tcf_fill_node() with fh NULL).
 *   - `tc filter replace`: only an RTM_NEWTFILTER of the new filter; the
 *     old one's counters are not sent.
 *   - a qdisc deleted, a device deleted, a shared block unbound from its
 *     last qdisc: the chains are flushed (tcf_chain_flush()) without any
 *     filter notification (only RTM_DELQDISC and RTM_DELCHAIN).
 * So only by-handle deletions are exact; in every other case the packets
 * since the last collection are lost, as without notifications.
 *
 * One socket per collected namespace, made by the live source (nl.c) with
 * its dump socket, in the same namespace, and closed with it, when the
 * configuration aggregates; non-blocking. A socket filter lets only
 * RTM_DELTFILTER messages into its queue, so that new filters, qdiscs and
 * actions cost neither queue room nor reads; the rest is walked as every
 * reply is (tcx_nlmsg_recv()'s sender check, tcx_nlmsg_reply()) and parsed by
 * tcx_parse_filter(). The queue holds what the kernel sends between two
 * drains: 4 MiB are asked for by default (notify_buffer_kib), which the
 * kernel doubles (8 MiB: 6553
 * deletions of u32 filters with one action, 1280 bytes each on 6.18),
 * forced with CAP_NET_ADMIN, else cut to net.core.rmem_max (212992 by
 * default: about 330 deletions). Past it the kernel drops notifications,
 * counts each, and says so once (ENOBUFS): the socket goes on, and the
 * notifications lost are the kernel's count (SO_MEMINFO), or the ENOBUFS
 * seen where it has none, plus those the drain could not read. The
 * collector (collect.c) drains every namespace before its dumps, and
 * tcx_agg_update() folds the final rows (agg.c says why in that order). */
#ifndef TCX_NOTIFY_H
#define TCX_NOTIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collectors/snapshot.h"
#include "config/config.h"

struct tcx_notify;

/* Subscribe to the deletion notifications of the namespace the calling
 * thread is in, whose name (NULL or "" for the collector's own) labels the
 * rows, asking for a receive buffer of rcvbuf bytes (the configuration's
 * notify_buffer_kib; 0: TCX_NOTIFY_RCVBUF). NULL, with err set, when the
 * socket cannot be made. */
#define TCX_NOTIFY_RCVBUF ((int)TCX_NOTIFY_BUFFER_KIB_DEFAULT * 1024)
struct tcx_notify *tcx_notify_open(const char *netns, int rcvbuf, char *err, size_t errlen);

/* The same over a receive function of one's own (the tests): recv puts one
 * datagram from the kernel into buf and returns its length, -EAGAIN when
 * none is queued, -ENOBUFS when the kernel dropped notifications, or
 * another -errno; it counts what it drops unread in dropped (as
 * tcx_nlmsg_recv() does). Device names are then not looked up ("if7"). */
typedef ssize_t (*tcx_notify_recv_fn)(void *ctx, void *buf, size_t len,
                                      uint64_t dropped[TCX_NLDROP__MAX]);
struct tcx_notify *tcx_notify_new(const char *netns, tcx_notify_recv_fn recv, void *ctx);

/* The socket, to poll() (-1 over a receive function). */
int tcx_notify_fd(const struct tcx_notify *n);

void tcx_notify_close(struct tcx_notify *n);

/* Add the datagrams dropped unread since the socket was opened to dropped;
 * return the notifications lost since then (what tcx_notify_drain() puts in
 * notifications_lost, counted up to now). */
uint64_t tcx_notify_counts(struct tcx_notify *n, uint64_t dropped[TCX_NLDROP__MAX]);

/* Read the notifications queued, without blocking (at most
 * TCX_NOTIFY_MAX_READS datagrams a call: the rest waits for the next), into
 * a new snapshot (made with cfg as by tcx_snapshot_new(), and classified
 * when cfg is not NULL) that holds:
 *   - the final rows of each filter deleted by handle since the last drain,
 *     in the order of deletion, with the identity the collector gives them
 *     (target: netns, the device by name and ifindex and the parent, or the
 *     shared block; chain, protocol, pref, kind, handle; each action's
 *     order, kind, cookie) and the counters the kernel sent. Rows are not
 *     merged: a filter deleted, made again and deleted again before one
 *     drain gives two rows of one identity, each a final count. A device
 *     that is gone by the drain is named "ifN", as the collector names it.
 *     The targets' row counts (first_filter, n_filters, n_actions) are
 *     left 0: the rows come in the order of deletion, not by target.
 *   - errors[TCX_ERR_MALFORMED]: messages that did not parse (nothing of
 *     them is kept); errors[TCX_ERR_IO]: a receive error that ended the
 *     drain early.
 *   - netlink_dropped and notifications_lost: datagrams dropped unread
 *     and notifications lost (the kernel's count, or one for each ENOBUFS
 *     where it has none; plus one for each that was longer than the
 *     receive buffer, malformed, cut short, or read when out of memory)
 *     since the socket was opened.
 * NULL when out of memory (then nothing was read). */
#define TCX_NOTIFY_MAX_READS 65536
struct tcx_snapshot *tcx_notify_drain(struct tcx_notify *n, struct tcx_config *cfg);

/* Where filters are added: a socket of the namespace the calling thread is
 * in that lets only RTM_NEWTFILTER into its queue, of rcvbuf bytes as the
 * deletions' (notify_buffer_kib; 4 MiB by default, doubled by the kernel:
 * about 6,000 additions of a u32 filter with an action; without
 * CAP_NET_ADMIN, twice net.core.rmem_max at most), for the collector to
 * know which parents came to hold filters (units.c, "sweeps"). */
struct tcx_notify *tcx_notify_open_adds(int rcvbuf, char *err, size_t errlen);

/* Read the additions queued, without blocking: fn(arg, ifindex, parent) for
 * each, as the kernel names where the filter went (tcm_ifindex
 * TCM_IFINDEX_MAGIC_BLOCK and the block's index for a shared block). Returns
 * 1 when any may have been lost since the last call (the queue overran, or a
 * datagram could not be read), else 0. */
typedef void (*tcx_notify_add_fn)(void *arg, uint32_t ifindex, uint32_t parent);
int tcx_notify_adds(struct tcx_notify *n, tcx_notify_add_fn fn, void *arg);

#endif
