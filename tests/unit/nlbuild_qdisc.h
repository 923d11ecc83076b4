/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Build qdisc and class messages in memory, laid out as the kernel's
 * tc_fill_qdisc() and tc_fill_tclass() lay them out (gnet_stats_*: the
 * TCA_STATS2 nest, then the old TCA_STATS and TCA_XSTATS), for the decoder's
 * tests and the fuzz seeds. The filter half is tests/unit/nlbuild.h. */
#ifndef TCX_NLBUILD_QDISC_H
#define TCX_NLBUILD_QDISC_H

#include <libmnl/libmnl.h>
#include <stddef.h>
#include <stdint.h>

struct nlb_qstats {
	uint64_t bytes, packets; /* TCA_STATS_PKT64 follows BASIC when packets > U32_MAX */
	uint32_t qlen, backlog, drops, requeues, overlimits;
};

/* An RTM_NEWQDISC (is_class 0) or RTM_NEWTCLASS message with its TCA_KIND. */
struct nlmsghdr *nlb_tcobj(void *buf, int is_class, uint32_t ifindex, uint32_t handle,
                           uint32_t parent, const char *kind);
/* Opens TCA_STATS2 and puts BASIC, PKT64 (when needed) and QUEUE in it: the
 * caller may add a TCA_STATS_APP nest, then calls nlb_qstats_end(). */
struct nlattr *nlb_qstats_begin(struct nlmsghdr *nlh, const struct nlb_qstats *st);
/* Closes TCA_STATS2, then puts TCA_STATS (struct tc_stats) and, when xs is
 * not NULL, TCA_XSTATS (xs_len bytes), as gnet_stats_finish_copy() does. */
void nlb_qstats_end(struct nlmsghdr *nlh, struct nlattr *stats2, const struct nlb_qstats *st,
                    const void *xs, size_t xs_len);
/* The whole of it, for a kind whose statistics are a struct (xs NULL: a kind
 * without them): TCA_STATS2 with TCA_STATS_APP, TCA_STATS, TCA_XSTATS. */
void nlb_qstats(struct nlmsghdr *nlh, const struct nlb_qstats *st, const void *xs, size_t xs_len);

#endif
