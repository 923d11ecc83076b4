/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Build rtnetlink TC messages in memory, laid out as the kernel lays them
 * out, for the parser and collector tests. */
#ifndef TCX_NLBUILD_H
#define TCX_NLBUILD_H

#include <libmnl/libmnl.h>
#include <linux/pkt_cls.h>
#include <stddef.h>
#include <stdint.h>

struct nlb_stats {
	uint64_t bytes, packets;
	uint64_t hw_bytes, hw_packets;
	uint32_t drops, overlimits;
	int no_hw; /* leave BASIC_HW out (old kernels) */
};

/* Start an RTM_NEWTFILTER message in buf. */
struct nlmsghdr *nlb_filter(void *buf, uint32_t ifindex, uint32_t parent, uint32_t handle,
                            uint16_t pref, uint16_t proto, const char *kind, uint32_t chain);
/* One action nest (type = order) with KIND, STATS, COOKIE and, when
 * parms_index is non-zero, OPTIONS carrying a tc_gen-style parms struct
 * under attribute parms_attr. */
void nlb_action(struct nlmsghdr *nlh, uint16_t order, const char *kind, const void *cookie,
                size_t cookie_len, const struct nlb_stats *st, uint16_t parms_attr,
                uint32_t parms_index);
/* The same, with the action's times (struct tcf_t) at tm_attr among its
 * options (those of a full dump: parms_index not 0). */
void nlb_action_tm(struct nlmsghdr *nlh, uint16_t order, const char *kind, const void *cookie,
                   size_t cookie_len, const struct nlb_stats *st, uint16_t parms_attr,
                   uint32_t parms_index, uint16_t tm_attr, const struct tcf_t *tm);
/* The stats nest alone, as the kernel writes it. */
void nlb_stats(struct nlmsghdr *nlh, uint16_t type, const struct nlb_stats *st);

/* A legacy policer (`police` without `action`) as tcf_exts_dump() writes
 * it: its parameters alone (TCA_POLICE_TBF with index, RESULT, TM) under
 * the classifier's attribute police_attr. */
void nlb_old_police(struct nlmsghdr *nlh, uint16_t police_attr, uint32_t index);
/* Its counters as tcf_exts_dump_stats() adds them to the message: the old
 * TCA_STATS struct (hardware counters left out). */
void nlb_old_stats(struct nlmsghdr *nlh, const struct nlb_stats *st);

/* NLMSG_DONE carrying status (0 or -errno). */
struct nlmsghdr *nlb_done(void *buf, int status);
/* NLMSG_ERROR carrying status (0: an ack) for a request of type req_type,
 * with the request header only (NLM_F_CAPPED) and, when ext_ack is not
 * NULL, that extended ack message. */
struct nlmsghdr *nlb_error(void *buf, int status, uint16_t req_type, const char *ext_ack);

/* An RTM_NEWLINK message: the link's index and IFLA_IFNAME. */
struct nlmsghdr *nlb_link(void *buf, uint32_t ifindex, const char *name);
/* An RTM_NEWQDISC message; the shared blocks are left out when 0. */
struct nlmsghdr *nlb_qdisc(void *buf, uint32_t ifindex, uint32_t handle, uint32_t parent,
                           const char *kind, uint32_t ingress_block, uint32_t egress_block);

#endif
