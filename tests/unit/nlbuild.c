/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <arpa/inet.h>
#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "tests/unit/nlbuild.h"

struct nlmsghdr *nlb_filter(void *buf, uint32_t ifindex, uint32_t parent, uint32_t handle,
                            uint16_t pref, uint16_t proto, const char *kind, uint32_t chain)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_NEWTFILTER;
	nlh->nlmsg_flags = NLM_F_MULTI;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = parent;
	tcm->tcm_handle = handle;
	tcm->tcm_info = TC_H_MAKE((uint32_t)pref << 16, htons(proto));
	mnl_attr_put_strz(nlh, TCA_KIND, kind);
	mnl_attr_put_u32(nlh, TCA_CHAIN, chain);
	return nlh;
}

void nlb_stats(struct nlmsghdr *nlh, uint16_t type, const struct nlb_stats *st)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, type);
	struct gnet_stats_basic b;
	struct gnet_stats_queue q = {0};
	uint64_t pkt;

	memset(&b, 0, sizeof(b));
	b.bytes = st->bytes;
	b.packets = (uint32_t)st->packets;
	mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(b), &b);
	if (st->packets > UINT32_MAX) {
		pkt = st->packets;
		mnl_attr_put(nlh, TCA_STATS_PKT64, sizeof(pkt), &pkt);
	}
	if (!st->no_hw) {
		memset(&b, 0, sizeof(b));
		b.bytes = st->hw_bytes;
		b.packets = (uint32_t)st->hw_packets;
		mnl_attr_put(nlh, TCA_STATS_BASIC_HW, sizeof(b), &b);
		if (st->hw_packets > UINT32_MAX) {
			pkt = st->hw_packets;
			mnl_attr_put(nlh, TCA_STATS_PKT64, sizeof(pkt), &pkt);
		}
	}
	q.drops = st->drops;
	q.overlimits = st->overlimits;
	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	mnl_attr_nest_end(nlh, nest);
}

void nlb_action_tm(struct nlmsghdr *nlh, uint16_t order, const char *kind, const void *cookie,
                   size_t cookie_len, const struct nlb_stats *st, uint16_t parms_attr,
                   uint32_t parms_index, uint16_t tm_attr, const struct tcf_t *tm)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, order);

	mnl_attr_put_strz(nlh, TCA_ACT_KIND, kind);
	if (st)
		nlb_stats(nlh, TCA_ACT_STATS, st);
	if (cookie_len)
		mnl_attr_put(nlh, TCA_ACT_COOKIE, cookie_len, cookie);
	if (parms_index) {
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
		uint32_t gen[5] = {parms_index, 0, 0, 1, 1}; /* index capab action ref bind */

		mnl_attr_put(nlh, parms_attr, sizeof(gen), gen);
		if (tm_attr)
			mnl_attr_put(nlh, tm_attr, sizeof(*tm), tm);
		mnl_attr_nest_end(nlh, opt);
	}
	mnl_attr_nest_end(nlh, nest);
}

void nlb_action(struct nlmsghdr *nlh, uint16_t order, const char *kind, const void *cookie,
                size_t cookie_len, const struct nlb_stats *st, uint16_t parms_attr,
                uint32_t parms_index)
{
	nlb_action_tm(nlh, order, kind, cookie, cookie_len, st, parms_attr, parms_index, 0, NULL);
}

void nlb_old_police(struct nlmsghdr *nlh, uint16_t police_attr, uint32_t index)
{
	struct nlattr *nest = mnl_attr_nest_start(nlh, police_attr);
	struct tc_police p;
	struct tcf_t tm = {0};

	memset(&p, 0, sizeof(p));
	p.index = index;
	p.action = TC_ACT_SHOT;
	p.burst = 10240;
	p.refcnt = 1;
	p.bindcnt = 1;
	p.rate.rate = 250000; /* 2000kbit */
	mnl_attr_put(nlh, TCA_POLICE_TBF, sizeof(p), &p);
	mnl_attr_put_u32(nlh, TCA_POLICE_RESULT, TC_ACT_OK);
	mnl_attr_put(nlh, TCA_POLICE_TM, sizeof(tm), &tm);
	mnl_attr_nest_end(nlh, nest);
}

void nlb_old_stats(struct nlmsghdr *nlh, const struct nlb_stats *st)
{
	struct tc_stats old;

	memset(&old, 0, sizeof(old));
	old.bytes = st->bytes;
	old.packets = (uint32_t)st->packets;
	old.drops = st->drops;
	old.overlimits = st->overlimits;
	mnl_attr_put(nlh, TCA_STATS, sizeof(old), &old);
}

struct nlmsghdr *nlb_done(void *buf, int status)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	int *p;

	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	p = mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	*p = status;
	return nlh;
}

struct nlmsghdr *nlb_error(void *buf, int status, uint16_t req_type, const char *ext_ack)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e;

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = status;
	e->msg.nlmsg_len = NLMSG_HDRLEN;
	e->msg.nlmsg_type = req_type;
	e->msg.nlmsg_flags = NLM_F_REQUEST;
	if (ext_ack) {
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, ext_ack);
	}
	return nlh;
}

struct nlmsghdr *nlb_link(void *buf, uint32_t ifindex, const char *name)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_MULTI;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = (int)ifindex;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	return nlh;
}

struct nlmsghdr *nlb_qdisc(void *buf, uint32_t ifindex, uint32_t handle, uint32_t parent,
                           const char *kind, uint32_t ingress_block, uint32_t egress_block)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_NEWQDISC;
	nlh->nlmsg_flags = NLM_F_MULTI;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_handle = handle;
	tcm->tcm_parent = parent;
	mnl_attr_put_strz(nlh, TCA_KIND, kind);
	if (ingress_block)
		mnl_attr_put_u32(nlh, TCA_INGRESS_BLOCK, ingress_block);
	if (egress_block)
		mnl_attr_put_u32(nlh, TCA_EGRESS_BLOCK, egress_block);
	return nlh;
}
