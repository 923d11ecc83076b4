/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpus of the netlink harness (tests/fuzz/netlink.c) into
 * DIR: `mkseeds DIR`. Each seed is a configuration byte and the kernel's
 * replies to the requests the collector sends for it, in order, made with
 * tests/unit/nlbuild.c. `make fuzz-seeds` writes them into
 * tests/fuzz/corpus/netlink; tests/fuzz/replay.sh checks that it holds them. */
#include <errno.h>
#include <linux/gen_stats.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/uapi_pkt_sched.h"
#include "config/config.h" /* TCX_PARENT_INGRESS, TCX_PARENT_EGRESS */
#include "tests/unit/nlbuild.h"
#include "tests/unit/nlbuild_qdisc.h"

#define ETH0   2
#define ETH1   3
#define BLOCK  0xFFFFFFFFU /* TCM_IFINDEX_MAGIC_BLOCK */
#define CLSACT 0xFFFFFFF1U
#define ROOT   0xFFFFFFFFU
#define IP     0x0800

/* The configurations of tests/fuzz/netlink.c, by index. */
enum { CFG_ALL = 0, CFG_LABELS = 1, CFG_TARGETS = 2 };

struct seed {
	uint8_t data[65536];
	size_t len;
};

static union {
	char b[8192];
	struct nlmsghdr align;
} scratch;

static void put(struct seed *s, const struct nlmsghdr *nlh)
{
	size_t len = MNL_ALIGN(nlh->nlmsg_len);

	if (s->len + len > sizeof(s->data)) {
		fprintf(stderr, "mkseeds: seed too long\n");
		exit(1);
	}
	memcpy(s->data + s->len, nlh, len);
	s->len += len;
}

static void done(struct seed *s, int status)
{
	put(s, nlb_done(scratch.b, status));
}

/* The reply to the lookup of a link that has no filters: it still exists. */
static void link_ack(struct seed *s)
{
	put(s, nlb_error(scratch.b, 0, RTM_GETLINK, NULL));
}

static void tp_header(struct seed *s, uint32_t ifindex, uint32_t parent, uint16_t pref,
                      const char *kind)
{
	put(s, nlb_filter(scratch.b, ifindex, parent, 0, pref, IP, kind, 0));
}

/* A filter with n actions: gact, mirred, police..., the first with cookie
 * (cookie_len bytes), each with the given counters; full dumps carry the
 * actions' parms (their index). */
static void filter(struct seed *s, uint32_t ifindex, uint32_t parent, uint32_t handle,
                   uint16_t pref, const char *kind, int full, int n, const void *cookie,
                   size_t cookie_len, const struct nlb_stats *st)
{
	static const char *const acts[] = {"gact", "mirred", "police", "skbedit"};
	struct nlmsghdr *nlh = nlb_filter(scratch.b, ifindex, parent, handle, pref, IP, kind, 0);
	uint16_t act_attr = strcmp(kind, "flower") == 0     ? TCA_FLOWER_ACT
	                    : strcmp(kind, "matchall") == 0 ? TCA_MATCHALL_ACT
	                                                    : TCA_U32_ACT;
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *list = mnl_attr_nest_start(nlh, act_attr);

	for (int i = 0; i < n; i++)
		nlb_action(nlh, (uint16_t)(i + 1), acts[i % 4], i ? NULL : cookie,
		           i ? 0 : cookie_len, st, 2, full ? handle * 10 + (uint32_t)i : 0);
	mnl_attr_nest_end(nlh, list);
	mnl_attr_nest_end(nlh, opt);
	put(s, nlh);
}

static void links(struct seed *s, int both)
{
	put(s, nlb_link(scratch.b, 1, "lo"));
	put(s, nlb_link(scratch.b, ETH0, "eth0"));
	if (both)
		put(s, nlb_link(scratch.b, ETH1, "eth1"));
	done(s, 0);
}

static const struct nlb_stats st_small = {.bytes = 1500, .packets = 1};
static const struct nlb_stats st_big = {.bytes = UINT64_MAX - 1,
                                        .packets = 0x100000001ULL,
                                        .hw_bytes = 1ULL << 40,
                                        .hw_packets = 0x200000000ULL,
                                        .drops = UINT32_MAX,
                                        .overlimits = 7};
static const struct nlb_stats st_old = {.bytes = 64, .packets = 1, .no_hw = 1};

/* Every qdisc kind of the `all` expansion: clsact, a root qdisc and its
 * handle-less child; flower rows, an empty parent, and u32 aborting the
 * terse dump (EMSGSIZE) so that it is dumped again in full. */
static void seed_all(struct seed *s)
{
	static const uint8_t c2[2] = {0x0a, 0x0b};
	static const uint8_t c16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0x10000, ROOT, "htb", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0, 0x10001, "pfifo", 0, 0));
	done(s, 0);
	/* eth0 ingress: flower, terse */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c2, sizeof(c2), &st_small);
	filter(s, ETH0, TCX_PARENT_INGRESS, 2, 1, "flower", 0, 2, c16, sizeof(c16), &st_big);
	filter(s, ETH0, TCX_PARENT_INGRESS, 3, 1, "flower", 0, 1, NULL, 0, &st_old);
	done(s, 0);
	/* eth0 egress: nothing, and the link is still there */
	done(s, 0);
	link_ack(s);
	/* eth1 1: u32 aborts the terse dump, then the full one */
	tp_header(s, ETH1, 0x10000, 10, "u32");
	done(s, -EMSGSIZE);
	tp_header(s, ETH1, 0x10000, 10, "u32");
	filter(s, ETH1, 0x10000, 0x80000800U, 10, "u32", 1, 3, c2, sizeof(c2), &st_small);
	done(s, 0);
}

/* matchall left out of a terse dump (Linux 5.8 to 6.1): its pref is dumped
 * again in full. */
static void seed_repair(struct seed *s)
{
	static const uint8_t c4[4] = {0xff, 0x07, 0x01, 0x02};

	s->data[s->len++] = CFG_ALL;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "ingress", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 5, "matchall");
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 6, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 6, "flower", 0, 1, c4, sizeof(c4), &st_small);
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 5, "matchall");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 5, "matchall", 1, 2, c4, sizeof(c4), &st_big);
	done(s, 0);
}

/* A filter whose one action is a legacy policer (`police` without
 * `action`): its parameters under the classifier's police attribute, its
 * counters in the message's TCA_STATS (old) or TCA_STATS2. */
static void police_filter(struct seed *s, uint32_t handle, uint16_t pref, const char *kind,
                          uint16_t police_attr, int stats2, const struct nlb_stats *st)
{
	struct nlmsghdr *nlh =
	        nlb_filter(scratch.b, ETH0, TCX_PARENT_INGRESS, handle, pref, IP, kind, 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_U32_CLASSID, 1); /* flowid :1 (classid in basic and fw too) */
	nlb_old_police(nlh, police_attr, handle);
	mnl_attr_nest_end(nlh, opt);
	if (stats2)
		nlb_stats(nlh, TCA_STATS2, st);
	else
		nlb_old_stats(nlh, st);
	put(s, nlh);
}

/* Legacy policers on ingress (u32 aborts the terse dump): u32's with the
 * old TCA_STATS, as the kernel sends it, basic's with TCA_STATS2, fw's
 * without statistics. */
static void seed_police(struct seed *s)
{
	s->data[s->len++] = CFG_ALL;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "ingress", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 50, "u32");
	done(s, -EMSGSIZE);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 50, "u32");
	police_filter(s, 0x80000800U, 50, "u32", TCA_U32_POLICE, 0, &st_small);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 51, "basic");
	police_filter(s, 1, 51, "basic", TCA_BASIC_POLICE, 1, &st_big);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 52, "fw");
	{
		struct nlmsghdr *nlh =
		        nlb_filter(scratch.b, ETH0, TCX_PARENT_INGRESS, 2, 52, IP, "fw", 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

		nlb_old_police(nlh, TCA_FW_POLICE, 3);
		mnl_attr_nest_end(nlh, opt);
		put(s, nlh);
	}
	done(s, 0);
}

/* Filters that only classify, with the hit counters of their classifier:
 * u32's PCNT (two keys) and MARK, basic's and matchall's PCNT, and a u32
 * filter without them (a kernel without CONFIG_CLS_U32_PERF). */
static void hits_filter(struct seed *s, uint32_t handle, uint16_t pref, const char *kind,
                        uint16_t pcnt_attr, const uint64_t *pcnt, size_t n, int mark)
{
	struct nlmsghdr *nlh =
	        nlb_filter(scratch.b, ETH0, TCX_PARENT_INGRESS, handle, pref, IP, kind, 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_U32_CLASSID, 0x10010); /* classid in basic and matchall too */
	if (mark) {
		const struct tc_u32_mark m = {.val = 1, .mask = 0xff, .success = 5};

		mnl_attr_put(nlh, TCA_U32_MARK, sizeof(m), &m);
	}
	if (n)
		mnl_attr_put(nlh, pcnt_attr, n * sizeof(*pcnt), pcnt);
	mnl_attr_nest_end(nlh, opt);
	put(s, nlh);
}

static void seed_hits(struct seed *s)
{
	static const uint64_t u32[] = {12, 7, 9, 7}, basic[] = {5, 4}, mall[] = {6};

	s->data[s->len++] = CFG_ALL;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "ingress", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 10, "u32");
	done(s, -EMSGSIZE);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 10, "u32");
	hits_filter(s, 0x80000800U, 10, "u32", TCA_U32_PCNT, u32, 4, 1);
	hits_filter(s, 0x80000801U, 10, "u32", TCA_U32_PCNT, NULL, 0, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 11, "basic");
	hits_filter(s, 1, 11, "basic", TCA_BASIC_PCNT, basic, 2, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 12, "matchall");
	hits_filter(s, 1, 12, "matchall", TCA_MATCHALL_PCNT, mall, 1, 0);
	done(s, 0);
}

/* Shared blocks: one with flower rows, one the kernel says is gone (an
 * extended ack). */
static void seed_blocks(struct seed *s)
{
	static const uint8_t c3[3] = {'a', 'b', 'c'};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 22, 23));
	put(s, nlb_qdisc(scratch.b, ETH1, 0xFFFF0000U, CLSACT, "ingress", 22, 0));
	done(s, 0);
	tp_header(s, BLOCK, 22, 1, "flower");
	filter(s, BLOCK, 22, 1, 1, "flower", 0, 1, c3, sizeof(c3), &st_small);
	done(s, 0);
	put(s, nlb_error(scratch.b, -ENOENT, RTM_GETTFILTER, "Block does not exist"));
}

/* The qdisc dump fails: every target of the namespace fails with it. */
static void seed_list_error(struct seed *s)
{
	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_error(scratch.b, -EPERM, RTM_GETQDISC, "Operation not permitted"));
}

/* Cookies for each way the labels configuration maps them: exact (both
 * forms), the fields decoder, both uuid layouts, ascii, and none. */
static void seed_labels(struct seed *s)
{
	static const struct {
		uint8_t len, b[16];
	} cookies[] = {
	        {2, {0x0a, 0x0b}},
	        {2, {0x0a, 0x0c}},
	        {4, {0xff, 0x07, 0x01, 0x02}},
	        {16, {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}},
	        {16, {0x00, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}},
	        {8, {'R', 'w', 'e', 'b', '0', '0', '0', '1'}},
	        {4, {0xde, 0xad, 0xbe, 0xef}},
	        {0, {0}},
	};

	s->data[s->len++] = CFG_LABELS;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	for (size_t i = 0; i < sizeof(cookies) / sizeof(cookies[0]); i++)
		filter(s, ETH0, TCX_PARENT_INGRESS, (uint32_t)i + 1, 1, "flower", 0, 1,
		       cookies[i].b, cookies[i].len, i % 2 ? &st_big : &st_small);
	done(s, 0);
	done(s, 0);
	link_ack(s);
}

/* Named devices, parents, a block and a second namespace. */
static void seed_targets(struct seed *s)
{
	static const uint8_t c5[5] = {'d', 'r', 'o', 'p', '!'};
	static const uint8_t cx[2] = {0x01, 0x80};

	s->data[s->len++] = CFG_TARGETS;
	/* the collector's own namespace */
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0x10000, ROOT, "prio", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0xFFFF0000U, CLSACT, "ingress", 22, 0));
	done(s, 0);
	/* blue */
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	done(s, 0);
	/* eth0 ingress, eth0 egress */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	filter(s, ETH0, TCX_PARENT_INGRESS, 2, 1, "flower", 0, 1, cx, sizeof(cx), &st_small);
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_EGRESS, 3, "u32");
	done(s, -EOPNOTSUPP);
	tp_header(s, ETH0, TCX_PARENT_EGRESS, 3, "u32");
	filter(s, ETH0, TCX_PARENT_EGRESS, 1, 3, "u32", 1, 1, c5, sizeof(c5), &st_big);
	done(s, 0);
	/* eth1 1:, block 22, eth1 root */
	tp_header(s, ETH1, 0x10000, 2, "u32");
	done(s, -EMSGSIZE);
	done(s, 0);
	link_ack(s);
	tp_header(s, BLOCK, 22, 1, "flower");
	filter(s, BLOCK, 22, 7, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	done(s, 0);
	done(s, 0);
	put(s, nlb_error(scratch.b, -ENODEV, RTM_GETLINK, NULL));
	/* blue: eth0 ingress, eth0 egress */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	done(s, 0);
	done(s, 0);
	link_ack(s);
}

/* A qdisc or class (is_class) of kind with generic counters and, when xs
 * is not NULL, its statistics struct. */
static void tcobj(struct seed *s, int is_class, uint32_t ifindex, uint32_t handle, uint32_t parent,
                  const char *kind, const struct nlb_qstats *st, const void *xs, size_t xs_len)
{
	struct nlmsghdr *nlh = nlb_tcobj(scratch.b, is_class, ifindex, handle, parent, kind);

	nlb_qstats(nlh, st, xs, xs_len);
	put(s, nlh);
}

/* cake's nested statistics: a qdisc with tins tins, or a class (a flow). */
static void cake(struct seed *s, int is_class, uint32_t ifindex, uint32_t handle, uint32_t parent,
                 int tins, const struct nlb_qstats *st)
{
	struct nlmsghdr *nlh = nlb_tcobj(scratch.b, is_class, ifindex, handle, parent, "cake");
	struct nlattr *s2 = nlb_qstats_begin(nlh, st);
	struct nlattr *app = mnl_attr_nest_start(nlh, TCA_STATS_APP), *nest;

	if (is_class) {
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DEFICIT, (uint32_t)-300);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DROPPING, 1);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_COBALT_COUNT, 3);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_P_DROP, 1u << 30);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_BLUE_TIMER_US, 2000);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DROP_NEXT_US, (uint32_t)-150);
	} else {
		mnl_attr_put_u64(nlh, TCA_CAKE_STATS_CAPACITY_ESTIMATE64, 125000000);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MEMORY_LIMIT, 4 << 20);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MEMORY_USED, 9000);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_AVG_NETOFF, 14);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MAX_NETLEN, 1500);
		mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MIN_NETLEN, 60);
		nest = mnl_attr_nest_start(nlh, TCA_CAKE_STATS_TIN_STATS);
		for (int t = 1; t <= tins; t++) {
			struct nlattr *tin = mnl_attr_nest_start(nlh, (uint16_t)t);

			mnl_attr_put_u64(nlh, TCA_CAKE_TIN_STATS_THRESHOLD_RATE64, 100000u * t);
			mnl_attr_put_u64(nlh, TCA_CAKE_TIN_STATS_SENT_BYTES64, 1ULL << (30 + t));
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_BACKLOG_BYTES, 1514u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_TARGET_US, 5000);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_SENT_PACKETS, 1000u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_DROPPED_PACKETS, 7u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS, 3u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_PEAK_DELAY_US, 900u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_WAY_MISSES, 11u * t);
			mnl_attr_put_u32(nlh, TCA_CAKE_TIN_STATS_BULK_FLOWS, (uint32_t)t);
			mnl_attr_nest_end(nlh, tin);
		}
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_nest_end(nlh, app);
	nlb_qstats_end(nlh, s2, st, NULL, 0);
	put(s, nlh);
}

/* Qdiscs and classes with their statistics, one of each kind with a table
 * (in the qdisc dump's reply, where the collector skips the classes), an
 * old kernel's clsact (TCA_STATS only) and a kind with no table. The
 * qdiscs with a handle get empty filter dumps. */
static void seed_qdiscs(struct seed *s)
{
	static const struct nlb_qstats big = {.bytes = 1ULL << 40,
	                                      .packets = 0x100000007ULL,
	                                      .qlen = 12,
	                                      .backlog = 18000,
	                                      .drops = 5,
	                                      .requeues = 2,
	                                      .overlimits = 9};
	static const struct nlb_qstats small = {.bytes = 3000, .packets = 2, .qlen = 1};
	const struct tc_htb_xstats htb = {
	        .lends = 10, .borrows = 20, .giants = 0, .tokens = -2000, .ctokens = 1500};
	const struct tc_hfsc_stats hfsc = {
	        .work = 1 << 20, .rtwork = 1 << 19, .period = 4, .level = 1};
	const struct tc_fq_codel_xstats fqc_q = {.type = TCA_FQ_CODEL_XSTATS_QDISC,
	                                         .qdisc_stats = {.maxpacket = 1514,
	                                                         .drop_overlimit = 3,
	                                                         .ecn_mark = 4,
	                                                         .new_flow_count = 50,
	                                                         .new_flows_len = 1,
	                                                         .old_flows_len = 2,
	                                                         .ce_mark = 0,
	                                                         .memory_usage = 4096,
	                                                         .drop_overmemory = 0}};
	const struct tc_fq_codel_xstats fqc_c = {.type = TCA_FQ_CODEL_XSTATS_CLASS,
	                                         .class_stats = {.deficit = -20,
	                                                         .ldelay = 3000,
	                                                         .count = 2,
	                                                         .lastcount = 1,
	                                                         .dropping = 1,
	                                                         .drop_next = -100}};
	const struct tcx_fq_qd_stats fq = {.gc_flows = 8,
	                                   .throttled = 30,
	                                   .time_next_delayed_flow = 4000000,
	                                   .flows = 6,
	                                   .inactive_flows = 2,
	                                   .unthrottle_latency_ns = 20000,
	                                   .fastpath_packets = 1000,
	                                   .band_drops = {1, 2, 3},
	                                   .band_pkt_count = {0, 4, 0}};
	const struct tc_fq_pie_xstats fqp = {
	        .packets_in = 100, .dropped = 2, .new_flow_count = 9, .memory_usage = 3000};
	const struct tc_codel_xstats codel = {
	        .maxpacket = 1514, .count = 1, .ldelay = 4500, .drop_next = 2000, .dropping = 1};
	const struct tc_pie_xstats pie = {
	        .prob = UINT64_MAX / 10, .delay = 12000, .packets_in = 77, .maxq = 40};
	const struct tc_red_xstats red = {.early = 5, .pdrop = 1, .marked = 3};
	const struct tc_choke_xstats choke = {.early = 5, .pdrop = 1, .matched = 2};
	const struct tc_sfb_xstats sfb = {
	        .earlydrop = 1, .maxqlen = 4, .maxprob = 900, .avgprob = 30};
	const struct tc_sfq_xstats sfq = {.allot = -1514};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	/* eth0: htb 1: with an fq_codel leaf and handle-less children of each kind */
	tcobj(s, 0, ETH0, 0x10000, ROOT, "htb", &big, NULL, 0);
	tcobj(s, 0, ETH0, 0, 0x10010, "fq_codel", &small, &fqc_q, sizeof(fqc_q));
	tcobj(s, 0, ETH0, 0, 0x10011, "fq", &small, &fq, sizeof(fq));
	tcobj(s, 0, ETH0, 0, 0x10012, "fq", &small, &fq, 104); /* Linux 6.1's */
	tcobj(s, 0, ETH0, 0, 0x10013, "fq_pie", &small, &fqp, sizeof(fqp));
	tcobj(s, 0, ETH0, 0, 0x10014, "codel", &small, &codel, sizeof(codel));
	tcobj(s, 0, ETH0, 0, 0x10015, "pie", &small, &pie, sizeof(pie));
	tcobj(s, 0, ETH0, 0, 0x10016, "red", &small, &red, sizeof(red));
	tcobj(s, 0, ETH0, 0, 0x10017, "choke", &small, &choke, sizeof(choke));
	tcobj(s, 0, ETH0, 0, 0x10018, "sfb", &small, &sfb, sizeof(sfb));
	tcobj(s, 0, ETH0, 0, 0x10019, "sfq", &small, NULL, 0);
	cake(s, 0, ETH0, 0, 0x1001a, 4, &big);
	tcobj(s, 0, ETH0, 0, 0x1001b, "newkind", &small, &red, sizeof(red));
	/* eth1: an old kernel's clsact, with TCA_STATS alone */
	{
		struct nlmsghdr *nlh =
		        nlb_qdisc(scratch.b, ETH1, 0xFFFF0000U, CLSACT, "clsact", 0, 0);
		struct tc_stats old = {.bytes = 640, .packets = 10, .drops = 1};

		mnl_attr_put(nlh, TCA_STATS, sizeof(old), &old);
		put(s, nlh);
	}
	/* classes */
	tcobj(s, 1, ETH0, 0x10001, ROOT, "htb", &big, &htb, sizeof(htb));
	tcobj(s, 1, ETH0, 0x10010, 0x10001, "htb", &small, &htb, sizeof(htb));
	tcobj(s, 1, ETH0, 0x20001, 0x20000, "hfsc", &small, &hfsc, sizeof(hfsc));
	tcobj(s, 1, ETH0, 0x30001, 0x30000, "fq_codel", &small, &fqc_c, sizeof(fqc_c));
	tcobj(s, 1, ETH0, 0x40001, 0x40000, "sfq", &small, &sfq, sizeof(sfq));
	cake(s, 1, ETH0, 0x50123, 0x50000, 0, &small);
	done(s, 0);
	/* the filter dumps: eth0 1:, eth1 ingress and egress, all empty */
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
}

/* A qdisc or class with options (TCA_OPTIONS: the attributes in opts, each
 * {type, payload, len}), for the plans (collectors/plans.c). */
struct opt {
	uint16_t type;
	const void *p;
	size_t len;
};

static void with_opts(struct seed *s, int is_class, uint32_t ifindex, uint32_t handle,
                      uint32_t parent, const char *kind, const struct opt *o, size_t n)
{
	static const struct nlb_qstats st = {.bytes = 1000, .packets = 10};
	struct nlmsghdr *nlh = nlb_tcobj(scratch.b, is_class, ifindex, handle, parent, kind);
	struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	for (size_t i = 0; i < n; i++)
		mnl_attr_put(nlh, o[i].type, o[i].len, o[i].p);
	mnl_attr_nest_end(nlh, nest);
	nlb_qstats(nlh, &st, NULL, 0);
	put(s, nlh);
}

/* The plans of HTB and tbf: 32- and 64-bit rates, bursts, a tbf with and
 * one without a peak rate, and a PARMS cut short. */
static void seed_plans(struct seed *s)
{
	static const struct tc_htb_glob glob = {
	        .version = 3, .rate2quantum = 10, .defcls = 0x10, .direct_pkts = 7};
	static const struct tc_htb_opt inner = {.rate = {.rate = 12500000},
	                                        .ceil = {.rate = 25000000},
	                                        .buffer = 19172,
	                                        .cbuffer = 1875,
	                                        .quantum = 1514,
	                                        .level = 7,
	                                        .prio = 2};
	static const struct tc_htb_opt leaf = {.rate = {.rate = 625000},
	                                       .ceil = {.rate = UINT32_MAX},
	                                       .buffer = 40000,
	                                       .cbuffer = 16,
	                                       .quantum = 62500};
	static const struct tc_tbf_qopt tbf = {.rate = {.rate = 125000},
	                                       .peakrate = {.rate = 250000},
	                                       .limit = 30000,
	                                       .buffer = 1280000,
	                                       .mtu = 100000};
	static const struct tc_tbf_qopt tbf2 = {
	        .rate = {.rate = 1000000}, .limit = 50000, .buffer = 320000};
	static const uint32_t qlen = 1000;
	static const uint64_t ceil64 = 750000000;
	const struct opt htb_q[] = {{TCA_HTB_INIT, &glob, sizeof(glob)},
	                            {TCA_HTB_DIRECT_QLEN, &qlen, sizeof(qlen)}};
	const struct opt htb_1[] = {{TCA_HTB_PARMS, &inner, sizeof(inner)}};
	const struct opt htb_10[] = {{TCA_HTB_PARMS, &leaf, sizeof(leaf)},
	                             {TCA_HTB_CEIL64, &ceil64, sizeof(ceil64)}};
	const struct opt htb_20[] = {{TCA_HTB_PARMS, &leaf, 12}}; /* cut short */
	const struct opt tbf_10[] = {{TCA_TBF_PARMS, &tbf, sizeof(tbf)}};
	const struct opt tbf_20[] = {{TCA_TBF_PARMS, &tbf2, sizeof(tbf2)}};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	with_opts(s, 0, ETH0, 0x10000, ROOT, "htb", htb_q, 2);
	with_opts(s, 0, ETH0, 0xa0000, 0x10010, "tbf", tbf_10, 1);
	with_opts(s, 0, ETH0, 0x140000, 0x10020, "tbf", tbf_20, 1);
	with_opts(s, 1, ETH0, 0x10001, ROOT, "htb", htb_1, 1);
	with_opts(s, 1, ETH0, 0x10010, 0x10001, "htb", htb_10, 2);
	with_opts(s, 1, ETH0, 0x10020, 0x10001, "htb", htb_20, 1);
	done(s, 0);
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
}

/* A qdisc whose options open with a struct (head, len bytes), then the
 * attributes in o (netem; sfq, the fifos and hfsc's qdisc have none). */
static void with_head(struct seed *s, uint32_t handle, const char *kind, const void *head,
                      size_t len, const struct opt *o, size_t n)
{
	static const struct nlb_qstats st = {.bytes = 1000, .packets = 10};
	struct nlmsghdr *nlh =
	        nlb_tcobj(scratch.b, 0, ETH0, handle, handle == 0x10000 ? ROOT : 0x10010, kind);
	struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	memcpy(mnl_nlmsg_get_payload_tail(nlh), head, len);
	nlh->nlmsg_len += MNL_ALIGN(len);
	for (size_t i = 0; i < n; i++)
		mnl_attr_put(nlh, o[i].type, o[i].len, o[i].p);
	mnl_attr_nest_end(nlh, nest);
	nlb_qstats(nlh, &st, NULL, 0);
	put(s, nlh);
}

/* The plans of the other kinds: options that open with a struct (sfq v1,
 * a v0 one cut short, bfifo, netem with its 64-bit delays and a rate,
 * hfsc's u16 default), attributes in us (fq_codel), ~0 for unset and a log2
 * (fq), modes by name (cake, one unknown), and hfsc's curves. */
static void seed_plans_kinds(struct seed *s)
{
	static const struct tc_sfq_qopt_v1 sfq = {.v0 = {.quantum = 1514,
	                                                 .perturb_period = 10,
	                                                 .limit = 127,
	                                                 .divisor = 1024,
	                                                 .flows = 128},
	                                          .depth = 127};
	static const struct tc_fifo_qopt fifo = {.limit = 3000};
	static const struct tc_netem_qopt netem = {
	        .latency = 1562500, .limit = 1000, .loss = 42949673};
	static const struct tc_netem_rate nrate = {.rate = 125000};
	static const struct tc_hfsc_qopt hq = {.defcls = 0x20};
	static const struct tc_service_curve rt = {.m1 = 2500000, .d = 5000, .m2 = 1250000};
	static const uint64_t lat = 100000000, jit = 10000000, bw = 2500000;
	static const uint32_t target = 4999, limit = 10240, ecn = 1, allones = UINT32_MAX,
	                      blog = 10, diffserv = 2, flow = 99;
	const struct opt netem_a[] = {{TCA_NETEM_LATENCY64, &lat, sizeof(lat)},
	                              {TCA_NETEM_JITTER64, &jit, sizeof(jit)},
	                              {TCA_NETEM_RATE, &nrate, sizeof(nrate)}};
	const struct opt codel[] = {{TCA_FQ_CODEL_TARGET, &target, 4},
	                            {TCA_FQ_CODEL_LIMIT, &limit, 4},
	                            {TCA_FQ_CODEL_ECN, &ecn, 4}};
	const struct opt fq[] = {{TCA_FQ_PLIMIT, &limit, 4},
	                         {TCA_FQ_FLOW_MAX_RATE, &allones, 4},
	                         {TCA_FQ_BUCKETS_LOG, &blog, 4},
	                         {TCA_FQ_CE_THRESHOLD, &allones, 2}}; /* cut short */
	const struct opt cake[] = {{TCA_CAKE_BASE_RATE64, &bw, sizeof(bw)},
	                           {TCA_CAKE_DIFFSERV_MODE, &diffserv, 4},
	                           {TCA_CAKE_FLOW_MODE, &flow, 4}};
	const struct opt curves[] = {{TCA_HFSC_RSC, &rt, sizeof(rt)}, {TCA_HFSC_USC, &rt, 8}};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	with_head(s, 0x10000, "hfsc", &hq, sizeof(hq), NULL, 0);
	with_head(s, 0x20000, "sfq", &sfq, sizeof(sfq), NULL, 0);
	with_head(s, 0x30000, "sfq", &sfq, sizeof(sfq.v0), NULL, 0);
	with_head(s, 0x40000, "bfifo", &fifo, sizeof(fifo), NULL, 0);
	with_head(s, 0x50000, "netem", &netem, sizeof(netem), netem_a, 3);
	with_opts(s, 0, ETH0, 0x60000, 0x10020, "fq_codel", codel, 3);
	with_opts(s, 0, ETH0, 0x70000, 0x10020, "fq", fq, 4);
	with_opts(s, 0, ETH0, 0x80000, 0x10020, "cake", cake, 3);
	with_opts(s, 1, ETH0, 0x10010, 0x10000, "hfsc", curves, 2);
	done(s, 0);
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
	done(s, 0);
	link_ack(s);
}

static const struct {
	const char *name;
	void (*make)(struct seed *s);
} seeds[] = {
        {"all", seed_all},
        {"repair", seed_repair},
        {"blocks", seed_blocks},
        {"list-error", seed_list_error},
        {"labels", seed_labels},
        {"targets", seed_targets},
        {"qdiscs", seed_qdiscs},
        {"police", seed_police},
        {"hits", seed_hits},
        {"plans", seed_plans},
        {"plans-kinds", seed_plans_kinds},
};

int main(int argc, char **argv)
{
	static struct seed s;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[4096];
		FILE *f;

		s.len = 0;
		seeds[i].make(&s);
		snprintf(path, sizeof(path), "%s/%s", argv[1], seeds[i].name);
		f = fopen(path, "wb");
		if (!f || fwrite(s.data, 1, s.len, f) != s.len || fclose(f) != 0) {
			fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}
