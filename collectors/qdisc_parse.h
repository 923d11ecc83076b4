/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decoding of qdisc and class messages (RTM_NEWQDISC, RTM_NEWTCLASS and
 * their DEL twins): identity, the generic counters and the per-kind
 * statistics (config/xstats.h). No I/O, nothing allocated. */
#ifndef TCX_QDISC_PARSE_H
#define TCX_QDISC_PARSE_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/counters.h"
#include "collectors/plans.h"
#include "collectors/snapshot.h" /* TCX_KIND_MAX */
#include "config/xstats.h"

/* The generic counters, as tc -s prints them. */

/* One decoded message. Values are defined only where their present bit is
 * set: the decoder clears the masks, not the value arrays. */
struct tcx_qdisc_msg {
	uint8_t is_class;       /* RTM_NEWTCLASS or RTM_DELTCLASS */
	uint8_t n_tins;         /* cake: tins [0, n_tins) may be present */
	uint16_t stats_present; /* bit (1 << enum tcx_qstat) */
	uint32_t ifindex;
	uint32_t handle; /* qdisc 1: = 0x10000, class 1:10 = 0x10010 */
	uint32_t parent; /* TC_H_ROOT, a class, TC_H_INGRESS (ingress, clsact) */
	char kind[TCX_KIND_MAX];
	uint32_t ingress_block, egress_block; /* shared blocks, 0 when none (qdiscs) */
	uint8_t identity; /* 1 once the fields above are read (a -1 may follow) */
	/* The kind's table, NULL when it has none for this object or the
	 * message carries no statistics of it; then xs_present is 0. */
	const struct tcx_xstats_table *xt;
	uint32_t xs_present;                   /* bit i: xs[i], row xt->fields[i] */
	uint32_t tin_present[TCX_XSTATS_TINS]; /* bit i: tin[t][i], xt->tin_fields[i] */
	/* The kind's plans (TCA_OPTIONS), NULL when it has no table; bit i of
	 * pl_present: pl[i], row pt->rows[i]; pl_bad: rows of a malformed
	 * options attribute that could not be read (to be counted). */
	const struct tcx_plans_table *pt;
	uint32_t pl_present;
	uint8_t pl_bad;
	uint64_t stats[TCX_QSTAT__MAX];
	uint64_t pl[TCX_PLANS_MAX];
	uint64_t xs[TCX_XSTATS_MAX]; /* raw: tcx_xstat_value() */
	uint64_t tin[TCX_XSTATS_TINS][TCX_XSTATS_MAX];
};

/* Decode one qdisc or class message into m. Returns 0, or -1 with the
 * reason in err when the message is malformed (its row is to be dropped and
 * counted): a length that runs past its container, no TCA_KIND or an empty
 * one, a TCA_STATS_PKT64 that follows no basic stats, a nested statistic
 * shorter than its type, a cake tin numbered outside 1..8. A kind without a
 * table keeps its generic counters, with no per-kind statistics. */
int tcx_parse_qdisc_msg(const struct nlmsghdr *nlh, struct tcx_qdisc_msg *m, char *err,
                        size_t errlen);

#endif
