/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "tests/unit/nlbuild_qdisc.h"

struct nlmsghdr *nlb_tcobj(void *buf, int is_class, uint32_t ifindex, uint32_t handle,
                           uint32_t parent, const char *kind)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = is_class ? RTM_NEWTCLASS : RTM_NEWQDISC;
	nlh->nlmsg_flags = NLM_F_MULTI;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_handle = handle;
	tcm->tcm_parent = parent;
	mnl_attr_put_strz(nlh, TCA_KIND, kind);
	return nlh;
}

struct nlattr *nlb_qstats_begin(struct nlmsghdr *nlh, const struct nlb_qstats *st)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_STATS2);
	struct gnet_stats_basic b;
	struct gnet_stats_queue q;

	memset(&b, 0, sizeof(b));
	b.bytes = st->bytes;
	b.packets = (uint32_t)st->packets;
	mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(b), &b);
	if (st->packets > UINT32_MAX)
		mnl_attr_put(nlh, TCA_STATS_PKT64, sizeof(st->packets), &st->packets);
	q.qlen = st->qlen;
	q.backlog = st->backlog;
	q.drops = st->drops;
	q.requeues = st->requeues;
	q.overlimits = st->overlimits;
	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	return nest;
}

void nlb_qstats_end(struct nlmsghdr *nlh, struct nlattr *stats2, const struct nlb_qstats *st,
                    const void *xs, size_t xs_len)
{
	struct tc_stats old;

	mnl_attr_nest_end(nlh, stats2);
	memset(&old, 0, sizeof(old));
	old.bytes = st->bytes;
	old.packets = (uint32_t)st->packets;
	old.drops = st->drops;
	old.overlimits = st->overlimits;
	old.qlen = st->qlen;
	old.backlog = st->backlog;
	mnl_attr_put(nlh, TCA_STATS, sizeof(old), &old);
	if (xs)
		mnl_attr_put(nlh, TCA_XSTATS, xs_len, xs);
}

void nlb_qstats(struct nlmsghdr *nlh, const struct nlb_qstats *st, const void *xs, size_t xs_len)
{
	struct nlattr *nest = nlb_qstats_begin(nlh, st);

	if (xs)
		mnl_attr_put(nlh, TCA_STATS_APP, xs_len, xs);
	nlb_qstats_end(nlh, nest, st, xs, xs_len);
}
