/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The netlink decoder, fed messages built in memory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/gen_stats.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_bpf.h>
#include <linux/tc_act/tc_connmark.h>
#include <linux/tc_act/tc_csum.h>
#include <linux/tc_act/tc_ct.h>
#include <linux/tc_act/tc_ctinfo.h>
#include <linux/tc_act/tc_defact.h>
#include <linux/tc_act/tc_gact.h>
#include <linux/tc_act/tc_gate.h>
#include <linux/tc_act/tc_ife.h>
#include <linux/tc_act/tc_mirred.h>
#include <linux/tc_act/tc_mpls.h>
#include <linux/tc_act/tc_nat.h>
#include <linux/tc_act/tc_pedit.h>
#include <linux/tc_act/tc_sample.h>
#include <linux/tc_act/tc_skbedit.h>
#include <linux/tc_act/tc_skbmod.h>
#include <linux/tc_act/tc_tunnel_key.h>
#include <linux/tc_act/tc_vlan.h>
#ifdef __has_include
#if __has_include(<linux/tc_act/tc_ipt.h>)
#include <linux/tc_act/tc_ipt.h>
#define HAVE_TC_IPT_H 1
#endif
#endif
#ifndef HAVE_TC_IPT_H /* gone from the uapi headers with act_ipt in 6.8 */
enum { TCA_IPT_TABLE = 1, TCA_IPT_HOOK, TCA_IPT_INDEX, TCA_IPT_CNT, TCA_IPT_TM, TCA_IPT_TARG };
#endif
#include <stdlib.h>
#include <string.h>

#include "collectors/names.h"
#include "collectors/tc_parse.h"
#include "tests/unit/nlbuild.h"

#define IFI 7

static const uint8_t cookie16[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                     0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

struct fx {
	char buf[8192];
	struct tcx_snapshot *s;
	struct tcx_tp_key key;
	char err[256];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->s = tcx_snapshot_new(NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tcx_snapshot_unref(f->s);
	free(f);
	return 0;
}

static enum tcx_parse_result parse(struct fx *f, struct nlmsghdr *nlh)
{
	f->err[0] = '\0';
	return tcx_parse_filter(nlh, f->s, 3, &f->key, f->err, sizeof(f->err));
}

static void test_terse_flower(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 1000,
	                       .packets = 10,
	                       .hw_bytes = 400,
	                       .hw_packets = 4,
	                       .drops = 2,
	                       .overlimits = 1};
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 10, 0x0800, "flower", 2);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_FLOWER_FLAGS, TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_NOT_IN_HW);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);
	nlb_action(nlh, 1, "gact", cookie16, 16, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_filters, 1);
	assert_int_equal(f->s->n_actions, 1);
	const struct tcx_filter *fl = &f->s->filters[0];
	assert_int_equal(fl->target, 3);
	assert_int_equal(fl->chain, 2);
	assert_int_equal(fl->pref, 10);
	assert_int_equal(fl->protocol, 0x0800);
	assert_int_equal(fl->handle, 1);
	assert_string_equal(tcx_kind_name(f->s, fl->kind), "flower");
	assert_int_equal(fl->flags, TCX_FLAG_SKIP_HW | TCX_FLAG_NOT_IN_HW);
	assert_int_equal(fl->has_flags, 1);
	assert_int_equal(fl->n_actions, 1);
	const struct tcx_action *a = &f->s->actions[0];
	assert_int_equal(a->filter, 0);
	assert_int_equal(a->order, 1);
	assert_string_equal(tcx_kind_name(f->s, a->kind), "gact");
	assert_int_equal(a->index, 0); /* a terse dump carries no index */
	assert_int_equal(a->cookie_len, 16);
	assert_memory_equal(a->cookie, cookie16, 16);
	assert_int_equal(a->c[TCX_ACT_BYTES], 1000);
	assert_int_equal(a->c[TCX_ACT_PACKETS], 10);
	assert_int_equal(a->c[TCX_ACT_HW_BYTES], 400);
	assert_int_equal(a->c[TCX_ACT_HW_PACKETS], 4);
	assert_int_equal(a->c[TCX_ACT_DROPS], 2);
	assert_int_equal(a->c[TCX_ACT_OVERLIMITS], 1);
	assert_true(tcx_cls_supports_terse("flower"));
	assert_false(tcx_cls_supports_terse("u32"));
	assert_false(tcx_cls_supports_terse("matchall"));
}

static void test_full_u32_several_actions(void **state)
{
	struct fx *f = *state;
	struct nlb_stats s1 = {.bytes = 84, .packets = 1, .no_hw = 1};
	struct nlb_stats s2 = {.bytes = 168, .packets = 2};
	uint8_t c1 = 0xaa;
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 20, 3, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_U32_DIVISOR + 100, 5); /* unknown to us */
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);
	nlb_action(nlh, 1, "mirred", &c1, 1, &s1, TCA_MIRRED_PARMS, 17);
	nlb_action(nlh, 2, "mirred", NULL, 0, &s2, TCA_MIRRED_PARMS, 18);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_put_u32(nlh, TCA_U32_FLAGS, TCA_CLS_FLAGS_NOT_IN_HW);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 2);
	assert_int_equal(f->s->filters[0].n_actions, 2);
	assert_int_equal(f->s->filters[0].flags, TCX_FLAG_NOT_IN_HW);
	assert_int_equal(f->s->actions[0].order, 1);
	assert_int_equal(f->s->actions[0].index, 17);
	assert_int_equal(f->s->actions[0].cookie_len, 1);
	assert_int_equal(f->s->actions[0].cookie[0], 0xaa);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 84);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_HW_BYTES], 0);
	assert_int_equal(f->s->actions[1].order, 2);
	assert_int_equal(f->s->actions[1].index, 18);
	assert_int_equal(f->s->actions[1].cookie_len, 0);
	assert_int_equal(f->s->actions[1].c[TCX_ACT_PACKETS], 2);

	char h[32];
	tcx_format_handle("u32", f->s->filters[0].handle, h, sizeof(h));
	assert_string_equal(h, "800::800");
}

static void test_full_matchall(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 5, .packets = 1};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_EGRESS, 1, 3, 3, "matchall", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_MATCHALL_ACT);

	nlb_action(nlh, 1, "gact", "\x01\x02", 2, &st, TCA_GACT_PARMS, 9);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_put_u32(nlh, TCA_MATCHALL_FLAGS, TCA_CLS_FLAGS_IN_HW);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->filters[0].flags, TCX_FLAG_IN_HW);
	assert_int_equal(f->s->actions[0].index, 9);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 5);
	assert_string_equal(f->key.kind, "matchall");
	char h[32];
	tcx_format_handle("matchall", 1, h, sizeof(h));
	assert_string_equal(h, "0x1");
}

/* The index of every action kind in a full dump, each in the attribute its
 * net/sched/act_*.c puts it in (6.1 and 6.18). */
static const struct {
	const char *kind;
	uint16_t attr;
} kind_parms[] = {
        {"gact", TCA_GACT_PARMS},
        {"mirred", TCA_MIRRED_PARMS},
        {"police", TCA_POLICE_TBF},
        {"pedit", TCA_PEDIT_PARMS},
        {"pedit", TCA_PEDIT_PARMS_EX}, /* pedit ex munge ... */
        {"skbedit", TCA_SKBEDIT_PARMS},
        {"tunnel_key", TCA_TUNNEL_KEY_PARMS},
        {"vlan", TCA_VLAN_PARMS},
        {"csum", TCA_CSUM_PARMS},
        {"ct", TCA_CT_PARMS},
        {"bpf", TCA_ACT_BPF_PARMS},
        {"nat", TCA_NAT_PARMS},
        {"sample", TCA_SAMPLE_PARMS},
        {"connmark", TCA_CONNMARK_PARMS},
        {"ctinfo", TCA_CTINFO_ACT},
        {"skbmod", TCA_SKBMOD_PARMS},
        {"mpls", TCA_MPLS_PARMS},
        {"gate", TCA_GATE_PARMS},
        {"ife", TCA_IFE_PARMS},
        {"simple", TCA_DEF_PARMS},
};

static void test_full_dump_index_of_every_kind(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 60, .packets = 1};
	size_t n = sizeof(kind_parms) / sizeof(kind_parms[0]), bad = 0;
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 1, 3, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);

	for (size_t i = 0; i < n; i++)
		nlb_action(nlh, (uint16_t)(i + 1), kind_parms[i].kind, NULL, 0, &st,
		           kind_parms[i].attr, (uint32_t)(100 + i));
	/* xt and ipt (act_ipt, up to 6.7), as tcf_ipt_dump() lays them out: the
	 * target (struct xt_entry_target: u16 size, name, revision, data), then
	 * the index alone, a u32, then hook, counters, table. */
	for (size_t i = 0; i < 2; i++) {
		struct nlattr *act = mnl_attr_nest_start(nlh, (uint16_t)(n + i + 1));
		struct nlattr *o;
		uint8_t targ[40] = {40, 0, 'M', 'A', 'R', 'K'};
		uint32_t cnt[2] = {0};

		mnl_attr_put_strz(nlh, TCA_ACT_KIND, i ? "ipt" : "xt");
		nlb_stats(nlh, TCA_ACT_STATS, &st);
		o = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
		mnl_attr_put(nlh, TCA_IPT_TARG, sizeof(targ), targ);
		mnl_attr_put_u32(nlh, TCA_IPT_INDEX, (uint32_t)(100 + n + i));
		mnl_attr_put_u32(nlh, TCA_IPT_HOOK, 1);
		mnl_attr_put(nlh, TCA_IPT_CNT, sizeof(cnt), cnt);
		mnl_attr_put_strz(nlh, TCA_IPT_TABLE, "mangle");
		mnl_attr_nest_end(nlh, o);
		mnl_attr_nest_end(nlh, act);
	}
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, n + 2);
	for (size_t i = 0; i < n + 2; i++) {
		const struct tcx_action *a = &f->s->actions[i];
		const char *kind = i < n ? kind_parms[i].kind : i == n ? "xt" : "ipt";

		assert_string_equal(tcx_kind_name(f->s, a->kind), kind);
		if (a->index != 100 + i) {
			print_error("action %zu (%s): index %u, expected %zu\n", i + 1, kind,
			            a->index, 100 + i);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The times of every action kind, each in the TM attribute its
 * net/sched/act_*.c's dump puts it in (6.1 and 6.18), as ages in USER_HZ
 * ticks before the clock read with the reply: install 1000 + i ticks,
 * last use 10 + i, first use 500 + i (odd i) or never (0: even i). */
static const struct {
	const char *kind;
	uint16_t parms, tm;
} kind_tm[] = {
        {"gact", TCA_GACT_PARMS, TCA_GACT_TM},
        {"mirred", TCA_MIRRED_PARMS, TCA_MIRRED_TM},
        {"police", TCA_POLICE_TBF, TCA_POLICE_TM},
        {"pedit", TCA_PEDIT_PARMS, TCA_PEDIT_TM},
        {"skbedit", TCA_SKBEDIT_PARMS, TCA_SKBEDIT_TM},
        {"tunnel_key", TCA_TUNNEL_KEY_PARMS, TCA_TUNNEL_KEY_TM},
        {"vlan", TCA_VLAN_PARMS, TCA_VLAN_TM},
        {"csum", TCA_CSUM_PARMS, TCA_CSUM_TM},
        {"ct", TCA_CT_PARMS, TCA_CT_TM},
        {"bpf", TCA_ACT_BPF_PARMS, TCA_ACT_BPF_TM},
        {"nat", TCA_NAT_PARMS, TCA_NAT_TM},
        {"sample", TCA_SAMPLE_PARMS, TCA_SAMPLE_TM},
        {"connmark", TCA_CONNMARK_PARMS, TCA_CONNMARK_TM},
        {"ctinfo", TCA_CTINFO_ACT, TCA_CTINFO_TM},
        {"skbmod", TCA_SKBMOD_PARMS, TCA_SKBMOD_TM},
        {"mpls", TCA_MPLS_PARMS, TCA_MPLS_TM},
        {"gate", TCA_GATE_PARMS, TCA_GATE_TM},
        {"ife", TCA_IFE_PARMS, TCA_IFE_TM},
        {"simple", TCA_DEF_PARMS, TCA_DEF_TM},
};

static void set_clocks(struct tcx_snapshot *s)
{
	s->tm_clock_ms = 1700000000000;
	s->tm_boot_ms = 1000000000; /* 11.6 days */
	s->tm_hz = 100;
}

static void test_times_of_every_kind(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {0}; /* no packet: firstuse 0 is never used */
	size_t n = sizeof(kind_tm) / sizeof(kind_tm[0]);
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 1, 3, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);

	set_clocks(f->s);
	for (size_t i = 0; i < n; i++)
		nlb_action_tm(nlh, (uint16_t)(i + 1), kind_tm[i].kind, NULL, 0, &st,
		              kind_tm[i].parms, (uint32_t)(100 + i), kind_tm[i].tm,
		              &(struct tcf_t){.install = 1000 + i,
		                              .lastuse = 10 + i,
		                              .firstuse = i % 2 ? 500 + i : 0});
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, n);
	for (size_t i = 0; i < n; i++) {
		const struct tcx_action *a = &f->s->actions[i];

		print_message("%s\n", kind_tm[i].kind);
		assert_int_equal(a->index, 100 + i);
		assert_int_equal(a->tm_present, i % 2 ? 7 : 3);
		assert_int_equal(a->tm[TCX_TM_INSTALLED], 1700000000000 - (int64_t)(1000 + i) * 10);
		assert_int_equal(a->tm[TCX_TM_LAST_USED], 1700000000000 - (int64_t)(10 + i) * 10);
		if (i % 2)
			assert_int_equal(a->tm[TCX_TM_FIRST_USED],
			                 1700000000000 - (int64_t)(500 + i) * 10);
	}
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 0);
	assert_int_equal(f->s->tm_clamped, 0);
}

/* firstuse 0 from an action that counted packets: a first use less than a
 * tick ago, or packets counted in hardware alone (which move lastuse only):
 * it has matched, and its first use is taken to be its last one. */
static void test_times_firstuse_zero_with_packets(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 600, .packets = 5, .hw_bytes = 600, .hw_packets = 5};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	set_clocks(f->s);
	nlb_action_tm(nlh, 1, "gact", NULL, 0, &st, TCA_GACT_PARMS, 9, TCA_GACT_TM,
	              &(struct tcf_t){.install = 3000, .lastuse = 200, .firstuse = 0});
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->actions[0].tm_present, 7);
	assert_int_equal(f->s->actions[0].tm[TCX_TM_FIRST_USED], 1700000000000 - 2000);
	assert_int_equal(f->s->actions[0].tm[TCX_TM_LAST_USED], 1700000000000 - 2000);
}

/* Where USER_HZ is not 100 (alpha: 1024), ticks are converted exactly
 * all the same. */
static void test_times_user_hz_1024(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {0};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	set_clocks(f->s);
	f->s->tm_hz = 1024;
	nlb_action_tm(nlh, 1, "gact", NULL, 0, &st, TCA_GACT_PARMS, 9, TCA_GACT_TM,
	              &(struct tcf_t){.install = 3 * 1024 + 512, .lastuse = 1, .firstuse = 0});
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->actions[0].tm_present, 3);
	assert_int_equal(f->s->actions[0].tm[TCX_TM_INSTALLED], 1700000000000 - 3500);
	assert_int_equal(f->s->actions[0].tm[TCX_TM_LAST_USED], 1700000000000); /* 0.98 ms, down */
}

/* A TM attribute too short for install, lastuse and expires loses the row
 * its times alone, counted as malformed; one without firstuse (before
 * 4.10) has no first use; an age longer than the time since boot is
 * clamped to it, and counted. */
static void test_times_malformed(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 60}; /* no packet: firstuse 0 is never used */
	uint64_t tm[4] = {1000, 10, 0, 500};
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 1, 3, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);
	/* lengths 16 (short), 24 (no firstuse), 32 with an age past boot */
	static const size_t len[] = {16, 24, 32};

	set_clocks(f->s);
	for (uint16_t i = 0; i < 3; i++) {
		struct nlattr *act = mnl_attr_nest_start(nlh, (uint16_t)(i + 1));
		struct nlattr *o;
		uint32_t gen[5] = {7u + i, 0, 0, 1, 1};

		mnl_attr_put_strz(nlh, TCA_ACT_KIND, "mirred");
		nlb_stats(nlh, TCA_ACT_STATS, &st);
		o = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
		mnl_attr_put(nlh, TCA_MIRRED_PARMS, sizeof(gen), gen);
		if (i == 2)
			tm[0] = 200000000; /* 23 days of ticks */
		mnl_attr_put(nlh, TCA_MIRRED_TM, len[i], tm);
		mnl_attr_nest_end(nlh, o);
		mnl_attr_nest_end(nlh, act);
	}
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 3);
	assert_int_equal(f->s->actions[0].tm_present, 0);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 60);
	assert_int_equal(f->s->actions[0].index, 7);
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 1);
	assert_int_equal(f->s->actions[1].tm_present, 3);
	assert_int_equal(f->s->actions[1].tm[TCX_TM_INSTALLED], 1700000000000 - 10000);
	assert_int_equal(f->s->actions[2].tm_present, 7);
	assert_int_equal(f->s->actions[2].tm[TCX_TM_INSTALLED], 1700000000000 - 1000000000);
	assert_int_equal(f->s->actions[2].tm[TCX_TM_FIRST_USED], 1700000000000 - 5000);
	assert_int_equal(f->s->tm_clamped, 1);
}

/* pedit with extended keys, laid out as tcf_pedit_dump() does: the keys'
 * header types and commands, then the parameters under TCA_PEDIT_PARMS_EX
 * instead of TCA_PEDIT_PARMS, then the times. */
static void test_pedit_ex_index(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 84, .packets = 1};
	struct {
		struct tc_pedit_sel sel;
		struct tc_pedit_key key;
	} parms;
	uint64_t tm[4] = {0};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 5, 3, "matchall", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_MATCHALL_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 1);

	memset(&parms, 0, sizeof(parms));
	parms.sel.index = 7;
	parms.sel.action = TC_ACT_PIPE;
	parms.sel.nkeys = 1;
	parms.key.mask = 0x00ffffff; /* ip ttl set 10 */
	parms.key.val = 0x0a000000;
	parms.key.off = 8;
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "pedit");
	nlb_stats(nlh, TCA_ACT_STATS, &st);
	struct nlattr *o = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	struct nlattr *keys = mnl_attr_nest_start(nlh, TCA_PEDIT_KEYS_EX);
	struct nlattr *key = mnl_attr_nest_start(nlh, TCA_PEDIT_KEY_EX);
	mnl_attr_put_u16(nlh, TCA_PEDIT_KEY_EX_HTYPE, TCA_PEDIT_KEY_EX_HDR_TYPE_IP4);
	mnl_attr_put_u16(nlh, TCA_PEDIT_KEY_EX_CMD, TCA_PEDIT_KEY_EX_CMD_SET);
	mnl_attr_nest_end(nlh, key);
	mnl_attr_nest_end(nlh, keys);
	mnl_attr_put(nlh, TCA_PEDIT_PARMS_EX, sizeof(parms), &parms);
	mnl_attr_put(nlh, TCA_PEDIT_TM, sizeof(tm), tm);
	mnl_attr_nest_end(nlh, o);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 1);
	assert_string_equal(tcx_kind_name(f->s, f->s->actions[0].kind), "pedit");
	assert_int_equal(f->s->actions[0].index, 7);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 84);
}

/* A parameters attribute too short to hold the index is malformed: the
 * message is rejected and named, as any fixed-size attribute that is. */
static void test_short_parms_rejected(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 5, 3, "matchall", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_MATCHALL_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 2);

	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "pedit");
	struct nlattr *o = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	mnl_attr_put(nlh, TCA_PEDIT_PARMS_EX, 2, "\x07\x00");
	mnl_attr_nest_end(nlh, o);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err,
	                    "action 2: pedit parameters (attribute 4) of 2 bytes, too short "
	                    "for the action index");
	assert_int_equal(f->s->n_filters, 0);
	assert_int_equal(f->s->n_actions, 0);
}

/* Attribute 0 (TCA_*_UNSPEC) is no kind's parameters, even where the table
 * has no alternative attribute. */
static void test_unspec_not_parms(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 5, 3, "matchall", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_MATCHALL_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 1);
	uint32_t gen[5] = {9, 0, TC_ACT_OK, 1, 1};

	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "gact");
	struct nlattr *o = mnl_attr_nest_start(nlh, TCA_ACT_OPTIONS);
	mnl_attr_put(nlh, 0, 2, "\x05\x00");
	mnl_attr_put(nlh, TCA_GACT_PARMS, sizeof(gen), gen);
	mnl_attr_put_u32(nlh, 0, 77);
	mnl_attr_nest_end(nlh, o);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->actions[0].index, 9);
}

static void test_pkt64_pairs_with_preceding(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 1ULL << 40,
	                       .packets = 5000000000ULL,
	                       .hw_bytes = 1ULL << 39,
	                       .hw_packets = 4300000000ULL};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	nlb_action(nlh, 1, "gact", NULL, 0, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_true(f->s->actions[0].c[TCX_ACT_PACKETS] == 5000000000ULL);
	assert_true(f->s->actions[0].c[TCX_ACT_HW_PACKETS] == 4300000000ULL);
	assert_true(f->s->actions[0].c[TCX_ACT_BYTES] == 1ULL << 40);
	assert_true(f->s->actions[0].c[TCX_ACT_HW_BYTES] == 1ULL << 39);
}

static void test_pkt64_after_basic_only(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 1, .packets = 4294967296ULL, .hw_packets = 7};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	nlb_action(nlh, 1, "gact", NULL, 0, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_true(f->s->actions[0].c[TCX_ACT_PACKETS] == 4294967296ULL);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_HW_PACKETS], 7);
}

static void test_pkt64_orphan_rejected(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 1);
	uint64_t pkt = 1;

	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "gact");
	struct nlattr *st = mnl_attr_nest_start(nlh, TCA_ACT_STATS);
	mnl_attr_put(nlh, TCA_STATS_PKT64, sizeof(pkt), &pkt);
	mnl_attr_nest_end(nlh, st);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err,
	                    "TCA_STATS_PKT64 follows attribute 0, not a basic stats attribute");
	assert_int_equal(f->s->n_filters, 0);
	assert_int_equal(f->s->n_actions, 0);
}

static void test_cookie_sizes(void **state)
{
	struct fx *f = *state;
	uint8_t c17[17] = {0};
	struct nlb_stats st = {0};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	/* every size from 1 to 16 (each copied in its own way by
	 * tcx_cookie_copy()), its bytes and nothing after them */
	for (uint16_t n = 1; n <= 16; n++)
		nlb_action(nlh, n, "gact", cookie16 + 16 - n, n, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 16);
	for (size_t n = 1; n <= 16; n++) {
		const struct tcx_action *a = &f->s->actions[n - 1];
		uint8_t want[TCX_COOKIE_MAX] = {0};

		memcpy(want, cookie16 + 16 - n, n);
		assert_int_equal(a->cookie_len, n);
		assert_memory_equal(a->cookie, want, sizeof(want));
	}

	/* 17 bytes is more than TC_COOKIE_MAX_SIZE: the message is rejected
	 * and nothing of it is kept. */
	nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 2, 1, 3, "flower", 0);
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);
	nlb_action(nlh, 1, "gact", "\x01", 1, &st, 0, 0);
	nlb_action(nlh, 2, "gact", c17, 17, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "action 2: cookie of 17 bytes, more than 16");
	assert_int_equal(f->s->n_filters, 1);
	assert_int_equal(f->s->n_actions, 16);
}

static void test_unknown_and_pad_attributes(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct gnet_stats_basic b = {.bytes = 77, .packets = 7};
	uint64_t pad = 0;

	mnl_attr_put_u32(nlh, 200, 1);       /* unknown top-level */
	mnl_attr_put(nlh, TCA_PAD, 0, NULL); /* pad */
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, 150, 2); /* unknown flower attribute */
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put(nlh, TCA_ACT_PAD, sizeof(pad), &pad);
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "gact");
	mnl_attr_put_u32(nlh, 99, 3); /* unknown action attribute */
	struct nlattr *st = mnl_attr_nest_start(nlh, TCA_ACT_STATS);
	mnl_attr_put(nlh, TCA_STATS_PAD, 0, NULL);
	mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(b), &b);
	mnl_attr_put_u32(nlh, 77, 9); /* unknown stats attribute */
	mnl_attr_nest_end(nlh, st);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 1);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 77);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_PACKETS], 7);
}

static void test_short_and_long_structs(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	uint64_t only_bytes = 4242;
	uint32_t longer[8] = {0};
	struct gnet_stats_queue q = {.drops = 5, .overlimits = 6};

	memcpy(longer, &q, sizeof(q));
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_strz(nlh, TCA_ACT_KIND, "gact");
	struct nlattr *st = mnl_attr_nest_start(nlh, TCA_ACT_STATS);
	/* A BASIC with only the bytes, and a QUEUE longer than ours. */
	mnl_attr_put(nlh, TCA_STATS_BASIC, sizeof(only_bytes), &only_bytes);
	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(longer), longer);
	mnl_attr_nest_end(nlh, st);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_BYTES], 4242);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_PACKETS], 0);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_DROPS], 5);
	assert_int_equal(f->s->actions[0].c[TCX_ACT_OVERLIMITS], 6);
}

static struct nlmsghdr *one_action_msg(struct fx *f)
{
	struct nlb_stats st = {.bytes = 1, .packets = 1};
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

	nlb_action(nlh, 1, "gact", "\x01", 1, &st, 0, 0);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

/* Find the first attribute of a type inside a message, by scanning. */
static struct nlattr *find_attr(struct nlmsghdr *nlh, uint16_t type, uint16_t len_hint)
{
	char *p = (char *)nlh + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct tcmsg));
	char *end = (char *)nlh + nlh->nlmsg_len;

	for (; p + 4 <= end; p += 4) {
		struct nlattr *a = (struct nlattr *)p;

		if ((a->nla_type & NLA_TYPE_MASK) == type && a->nla_len == len_hint)
			return a;
	}
	return NULL;
}

static void test_truncated_attribute(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = one_action_msg(f);
	/* The BASIC stats attribute: 4 + sizeof(gnet_stats_basic). */
	struct nlattr *basic = find_attr(nlh, TCA_STATS_BASIC, 4 + sizeof(struct gnet_stats_basic));

	assert_non_null(basic);
	basic->nla_len = 400; /* runs past its nest and the message */
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "TCA_ACT_STATS: attribute 1 has length 400, outside 4..64");
	assert_int_equal(f->s->n_filters, 0);
	assert_int_equal(f->s->n_actions, 0);

	nlh = one_action_msg(f);
	basic = find_attr(nlh, TCA_STATS_BASIC, 4 + sizeof(struct gnet_stats_basic));
	basic->nla_len = 2; /* shorter than an attribute header */
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "TCA_ACT_STATS: attribute 1 has length 2, outside 4..64");
}

static void test_truncated_message(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = one_action_msg(f);
	uint32_t full = nlh->nlmsg_len;

	/* Cut the message in the middle of its options: the nest now claims
	 * more than is there. */
	nlh->nlmsg_len = full - 20;
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_non_null(strstr(f->err, "filter: attribute 2 has length"));
	assert_int_equal(f->s->n_filters, 0);

	nlh->nlmsg_len = NLMSG_HDRLEN + 4; /* not even a tcmsg */
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "filter message of 20 bytes, too short for its header");
}

static void test_bad_strings(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(f->buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_NEWTFILTER;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_handle = 1;
	mnl_attr_put(nlh, TCA_KIND, 3, "u32"); /* no NUL */
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "TCA_KIND: string is not NUL-terminated");

	nlh = mnl_nlmsg_put_header(f->buf);
	nlh->nlmsg_type = RTM_NEWTFILTER;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_handle = 1;
	mnl_attr_put_strz(nlh, TCA_KIND, "averyveryverylongkind");
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "TCA_KIND: string of 21 bytes, longer than 15");

	nlh = mnl_nlmsg_put_header(f->buf);
	nlh->nlmsg_type = RTM_NEWTFILTER;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_handle = 1;
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "filter message without TCA_KIND");

	/* A short TCA_CHAIN. */
	nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "flower", 0);
	nlh->nlmsg_len -= 8; /* drop the chain attribute */
	mnl_attr_put(nlh, TCA_CHAIN, 2, "\x01\x00");
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "TCA_CHAIN: payload of 2 bytes, expected 4");
	assert_int_equal(f->s->n_filters, 0);
}

static void test_action_without_kind(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 1, 3, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);
	struct nlattr *act = mnl_attr_nest_start(nlh, 4);

	mnl_attr_put_u32(nlh, TCA_ACT_INDEX, 3);
	mnl_attr_nest_end(nlh, act);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ERROR);
	assert_string_equal(f->err, "action 4: no TCA_ACT_KIND");
}

static void test_header_and_other_messages(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, 0xFFFFFFFF, 22, 0, 49152, 0x86dd, "matchall", 5);

	assert_int_equal(parse(f, nlh), TCX_PARSE_HEADER);
	assert_int_equal(f->key.pref, 49152);
	assert_int_equal(f->key.protocol, 0x86dd);
	assert_int_equal(f->key.chain, 5);
	assert_int_equal(f->key.ifindex, 0xFFFFFFFF);
	assert_string_equal(f->key.kind, "matchall");
	assert_int_equal(f->s->n_filters, 0);

	nlh->nlmsg_type = RTM_NEWQDISC;
	assert_int_equal(parse(f, nlh), TCX_PARSE_SKIP);
}

static void test_unknown_classifier_keeps_filter(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 5, 1, 3, "newcls", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, 1, 1);
	mnl_attr_nest_end(nlh, opt);
	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_filters, 1);
	assert_int_equal(f->s->n_actions, 0);
}

static void test_done_status_and_extack(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_done(f->buf, -EMSGSIZE);
	char msg[128];
	int status = 0;

	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), 0);
	assert_int_equal(status, -EMSGSIZE);
	assert_string_equal(msg, "");

	nlh = nlb_done(f->buf, -EINVAL);
	nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "Attribute failed policy validation");
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), 0);
	assert_int_equal(status, -EINVAL);
	assert_string_equal(msg, "Attribute failed policy validation");

	nlh = nlb_done(f->buf, 0);
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), 0);
	assert_int_equal(status, 0);

	/* NLMSG_ERROR with a capped echo and an extack message. */
	nlh = mnl_nlmsg_put_header(f->buf);
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -ENODEV;
	e->msg.nlmsg_len = 36;
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "Cannot find device");
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), 0);
	assert_int_equal(status, -ENODEV);
	assert_string_equal(msg, "Cannot find device");

	nlh->nlmsg_len = NLMSG_HDRLEN + 2; /* malformed */
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), -1);

	/* A status that is no errno: INT_MIN cannot even be negated. */
	nlh = nlb_done(f->buf, INT_MIN);
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), -1);
	nlh = nlb_done(f->buf, -4096);
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), -1);
	nlh = nlb_done(f->buf, 4095); /* a positive errno is taken as negative */
	assert_int_equal(tcx_parse_status(nlh, &status, msg, sizeof(msg)), 0);
	assert_int_equal(status, -4095);
}

static void test_qdisc_and_link(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(f->buf);
	struct tcmsg *tcm;
	struct tcx_qdisc q;

	nlh->nlmsg_type = RTM_NEWQDISC;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_ifindex = 4;
	tcm->tcm_handle = 0xFFFF0000;
	tcm->tcm_parent = 0xFFFFFFF1;
	mnl_attr_put_strz(nlh, TCA_KIND, "clsact");
	mnl_attr_put_u32(nlh, 13 /* TCA_INGRESS_BLOCK */, 22);
	assert_int_equal(tcx_parse_qdisc(nlh, &q, f->err, sizeof(f->err)), 0);
	assert_int_equal(q.ifindex, 4);
	assert_string_equal(q.kind, "clsact");
	assert_int_equal(q.ingress_block, 22);
	assert_int_equal(q.egress_block, 0);

	nlh = mnl_nlmsg_put_header(f->buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 9;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "veth-a");
	uint32_t idx;
	char name[IFNAMSIZ];
	assert_int_equal(tcx_parse_link(nlh, &idx, name, f->err, sizeof(f->err)), 0);
	assert_int_equal(idx, 9);
	assert_string_equal(name, "veth-a");
}

static void test_formatting(void **state)
{
	char b[32];

	tcx_format_handle("u32", 0x80000000, b, sizeof(b));
	assert_string_equal(b, "800:");
	tcx_format_handle("u32", 0x80101001, b, sizeof(b));
	assert_string_equal(b, "801:1:1");
	tcx_format_handle("u32", 0, b, sizeof(b));
	assert_string_equal(b, "none");
	tcx_format_handle("flower", 0x2a, b, sizeof(b));
	assert_string_equal(b, "0x2a");
	/* every count of hex digits, as printf writes them; the length returned */
	for (uint64_t v = 0; v <= UINT32_MAX; v = v * 3 + 1) {
		char want[16];

		snprintf(want, sizeof(want), "0x%x", (unsigned)v);
		assert_int_equal(tcx_format_handle("flower", (uint32_t)v, b, sizeof(b)),
		                 strlen(want));
		assert_string_equal(b, want);
	}
	assert_int_equal(tcx_format_handle("flower", UINT32_MAX, b, sizeof(b)), 10);
	assert_string_equal(b, "0xffffffff");
	assert_int_equal(tcx_format_handle("u32", 0x80101001, b, sizeof(b)), 7);
	/* a buffer under 32 bytes: written through a buffer of its own, then
	 * what fits, cut where it must be */
	memset(b, 'X', sizeof(b));
	assert_int_equal(tcx_format_handle("flower", UINT32_MAX, b, 5), 4);
	assert_string_equal(b, "0xff");
	assert_int_equal(b[5], 'X');
	assert_int_equal(tcx_format_handle("u32", 0x80101001, b, 4), 3);
	assert_string_equal(b, "801");
	assert_int_equal(tcx_format_handle("u32", 0x80101001, b, 8), 7);
	assert_string_equal(b, "801:1:1");
	tcx_format_parent(TCX_PARENT_INGRESS, b, sizeof(b));
	assert_string_equal(b, "ingress");
	tcx_format_parent(TCX_PARENT_EGRESS, b, sizeof(b));
	assert_string_equal(b, "egress");
	tcx_format_parent(0, b, sizeof(b));
	assert_string_equal(b, "root");
	tcx_format_parent(0x00010000, b, sizeof(b));
	assert_string_equal(b, "1:");
	tcx_format_parent(0x0001000a, b, sizeof(b));
	assert_string_equal(b, "1:a");
	tcx_format_qhandle(0x00010000, b, sizeof(b));
	assert_string_equal(b, "1:");
	tcx_format_qhandle(0x80010010, b, sizeof(b));
	assert_string_equal(b, "8001:10");
	tcx_format_qhandle(0xffff0000, b, sizeof(b));
	assert_string_equal(b, "ffff:");
	tcx_format_qparent(TC_H_ROOT, "htb", b, sizeof(b));
	assert_string_equal(b, "root");
	tcx_format_qparent(TC_H_INGRESS, "ingress", b, sizeof(b));
	assert_string_equal(b, "ingress");
	tcx_format_qparent(TC_H_INGRESS, "clsact", b, sizeof(b));
	assert_string_equal(b, "clsact");
	tcx_format_qparent(0x00010010, "pfifo", b, sizeof(b));
	assert_string_equal(b, "1:10");
	assert_string_equal(tcx_protocol_name(0x0800, b, sizeof(b)), "ip");
	assert_string_equal(tcx_protocol_name(0x0003, b, sizeof(b)), "all");
	assert_string_equal(tcx_protocol_name(0x86dd, b, sizeof(b)), "ipv6");
	assert_string_equal(tcx_protocol_name(0x8100, b, sizeof(b)), "802.1Q");
	assert_string_equal(tcx_protocol_name(0x1234, b, sizeof(b)), "0x1234");
}

/* One description of a target, for the log lines, the --once report and
 * the landing page; the longest target fits TCX_TARGET_DESC_MAX whole. */
static void test_describe_target(void **state)
{
	struct tcx_target t = {.parent = TCX_PARENT_INGRESS};
	char b[TCX_TARGET_DESC_MAX], small[8], want[TCX_TARGET_DESC_MAX];

	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)), "all");
	strcpy(t.netns, "blue");
	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)), "all netns blue");
	assert_string_equal(tcx_describe_target(&t, 0, b, sizeof(b)), "all");
	strcpy(t.dev, "eth0");
	strcpy(t.parent_name, "ingress");
	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)),
	                    "dev eth0 parent ingress netns blue");
	assert_string_equal(tcx_describe_target(&t, 0, b, sizeof(b)), "dev eth0 parent ingress");
	t.block = 22;
	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)), "block 22 netns blue");
	t.netns[0] = '\0';
	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)), "block 22");
	/* truncated, never overrun */
	assert_ptr_equal(tcx_describe_target(&t, 1, small, sizeof(small)), small);
	assert_string_equal(small, "block 2");
	/* the longest of each field */
	t.block = 0;
	memset(t.dev, 'd', sizeof(t.dev) - 1);
	memset(t.parent_name, 'p', sizeof(t.parent_name) - 1);
	memset(t.netns, 'n', sizeof(t.netns) - 1);
	snprintf(want, sizeof(want), "dev %s parent %s netns %s", t.dev, t.parent_name, t.netns);
	assert_true(strlen(want) < sizeof(want) - 1);
	assert_string_equal(tcx_describe_target(&t, 1, b, sizeof(b)), want);
}

/* ---- legacy policers (`police` without `action`) ------------------------------------ */

/* A u32 filter's policer under TCA_U32_POLICE, its counters in the
 * message's TCA_STATS2: action 1 of kind police. */
static void test_old_police_u32(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 150000, .packets = 100, .drops = 40, .overlimits = 40};
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 50, 0x0800, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_U32_CLASSID, 1);
	nlb_old_police(nlh, TCA_U32_POLICE, 7);
	mnl_attr_nest_end(nlh, opt);
	nlb_stats(nlh, TCA_STATS2, &st);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_filters, 1);
	assert_int_equal(f->s->n_actions, 1);
	assert_int_equal(f->s->filters[0].n_actions, 1);
	assert_int_equal(f->s->filters[0].first_action, 0);
	const struct tcx_action *a = &f->s->actions[0];
	assert_int_equal(a->filter, 0);
	assert_int_equal(a->order, 1);
	assert_string_equal(tcx_kind_name(f->s, a->kind), "police");
	assert_int_equal(a->index, 7);
	assert_int_equal(a->cookie_len, 0);
	assert_int_equal(a->c[TCX_ACT_BYTES], 150000);
	assert_int_equal(a->c[TCX_ACT_PACKETS], 100);
	assert_int_equal(a->c[TCX_ACT_DROPS], 40);
	assert_int_equal(a->c[TCX_ACT_OVERLIMITS], 40);
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 0);
}

/* As 6.1 to 6.18 send it: the old TCA_STATS struct, here for every
 * classifier that takes a policer, each in its own POLICE attribute (and
 * none read from another's, nor from flower's or matchall's). */
static void test_old_police_every_classifier(void **state)
{
	static const struct {
		const char *kind;
		uint16_t attr;
		int row;
	} cls[] = {
	        {"u32", TCA_U32_POLICE, 1},
	        {"basic", TCA_BASIC_POLICE, 1},
	        {"fw", TCA_FW_POLICE, 1},
	        {"route", TCA_ROUTE4_POLICE, 1},
	        {"flow", TCA_FLOW_POLICE, 1},
	        {"cgroup", TCA_CGROUP_POLICE, 1},
	        {"bpf", TCA_BPF_POLICE, 1},
	        {"tcindex", 6, 1},
	        {"rsvp", 5, 1},
	        {"rsvp6", 5, 1},
	        {"basic", TCA_BASIC_EMATCHES, 0},
	        {"flower", TCA_FLOWER_KEY_ETH_DST, 0}, /* flower takes no policer */
	};
	struct fx *f = *state;
	struct nlb_stats st = {
	        .bytes = (uint64_t)1 << 33, .packets = 3, .drops = 2, .overlimits = 1};

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, (uint32_t)i + 1,
		                                  (uint16_t)(i + 1), 0x0800, cls[i].kind, 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

		nlb_old_police(nlh, cls[i].attr, (uint32_t)i + 1);
		mnl_attr_nest_end(nlh, opt);
		nlb_old_stats(nlh, &st);
		size_t before = f->s->n_actions;
		assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
		assert_int_equal(f->s->filters[f->s->n_filters - 1].n_actions, cls[i].row);
		assert_int_equal(f->s->n_actions, before + (size_t)cls[i].row);
		if (!cls[i].row)
			continue;
		const struct tcx_action *a = &f->s->actions[before];
		assert_int_equal(a->filter, f->s->n_filters - 1);
		assert_string_equal(tcx_kind_name(f->s, a->kind), "police");
		assert_int_equal(a->order, 1);
		assert_int_equal(a->index, i + 1);
		assert_int_equal(a->c[TCX_ACT_BYTES], (uint64_t)1 << 33);
		assert_int_equal(a->c[TCX_ACT_PACKETS], 3);
		assert_int_equal(a->c[TCX_ACT_DROPS], 2);
		assert_int_equal(a->c[TCX_ACT_OVERLIMITS], 1);
		assert_int_equal(a->c[TCX_ACT_HW_BYTES], 0);
	}
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 0);
}

/* A policer or statistics that cannot be read lose the policer's row
 * alone: the filter is kept, the row counted as malformed. */
static void test_old_police_malformed(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 10, .packets = 1};
	struct tc_stats old = {.bytes = 10};
	enum { SHORT_TBF, BAD_NEST, SHORT_STATS, BAD_STATS2, N_CASES };
	static const char *const why[N_CASES] = {
	        "action 1: police parameters (attribute 1) of 2 bytes, too short for the "
	        "action index",
	        "legacy police: attribute 5 has length 200, outside 4..8",
	        "TCA_STATS of 16 bytes, too short for the policer's counters",
	        "TCA_STATS_PKT64 follows attribute 0, not a basic stats attribute",
	};

	for (int c = 0; c < N_CASES; c++) {
		struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, (uint32_t)c + 1,
		                                  50, 0x0800, c % 2 ? "fw" : "u32", 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		uint16_t attr = c % 2 ? TCA_FW_POLICE : TCA_U32_POLICE;

		if (c == SHORT_TBF) {
			struct nlattr *p = mnl_attr_nest_start(nlh, attr);
			mnl_attr_put(nlh, TCA_POLICE_TBF, 2, "\x07\x00");
			mnl_attr_nest_end(nlh, p);
		} else if (c == BAD_NEST) {
			struct nlattr *p = mnl_attr_nest_start(nlh, attr);
			struct nlattr *bad = mnl_nlmsg_get_payload_tail(nlh);
			mnl_attr_put_u32(nlh, TCA_POLICE_RESULT, 0);
			bad->nla_len = 200; /* runs past the nest */
			mnl_attr_nest_end(nlh, p);
		} else {
			nlb_old_police(nlh, attr, 9);
		}
		mnl_attr_put_u32(nlh, TCA_U32_CLASSID, 1);
		mnl_attr_nest_end(nlh, opt);
		if (c == SHORT_STATS) {
			mnl_attr_put(nlh, TCA_STATS, 16, &old);
		} else if (c == BAD_STATS2) {
			struct nlattr *s2 = mnl_attr_nest_start(nlh, TCA_STATS2);
			uint64_t pkt = 5;
			mnl_attr_put(nlh, TCA_STATS_PKT64, sizeof(pkt), &pkt);
			mnl_attr_nest_end(nlh, s2);
		} else {
			nlb_stats(nlh, TCA_STATS2, &st);
		}

		assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
		assert_string_equal(f->err, why[c]);
		assert_int_equal(f->s->n_filters, c + 1);
		assert_int_equal(f->s->filters[c].handle, c + 1);
		assert_int_equal(f->s->filters[c].n_actions, 0);
		assert_int_equal(f->s->n_actions, 0);
		assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], c + 1);
	}
}

/* ---- filter hit counters (PCNT, MARK) ----------------------------------------------- */

/* u32's TCA_U32_PCNT (lookups, hits, one per key) and TCA_U32_MARK. */
static void test_hits_u32(void **state)
{
	struct fx *f = *state;
	const uint64_t pcnt[] = {12, 7, 9, 7};
	const struct tc_u32_mark mark = {.val = 1, .mask = 0xff, .success = 3};
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 0x80000800, 10, 0x0800, "u32", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put_u32(nlh, TCA_U32_CLASSID, 0x10010);
	mnl_attr_put(nlh, TCA_U32_MARK, sizeof(mark), &mark);
	mnl_attr_put(nlh, TCA_U32_PCNT, sizeof(pcnt), pcnt);
	mnl_attr_nest_end(nlh, opt);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	const struct tcx_filter *flt = &f->s->filters[0];
	const uint64_t *v = f->s->hvals + flt->hv;
	assert_int_equal(flt->hv_present, (1u << TCX_FCTR_LOOKUPS) | (1u << TCX_FCTR_HITS) |
	                                          (1u << TCX_FCTR_U32_MARK));
	assert_int_equal(flt->n_keys, 2);
	assert_int_equal(v[TCX_FCTR_LOOKUPS], 12);
	assert_int_equal(v[TCX_FCTR_HITS], 7);
	assert_int_equal(v[TCX_FCTR_U32_MARK], 3);
	assert_int_equal(v[TCX_FCTR__MAX], 9);
	assert_int_equal(v[TCX_FCTR__MAX + 1], 7);
	assert_int_equal(f->s->n_actions, 0);
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 0);
}

/* basic's lookups and hits, matchall's hits alone; a classifier that
 * keeps none (flower) reads nothing from an attribute of the same id, nor
 * does a u32 filter without PCNT (a kernel without CONFIG_CLS_U32_PERF):
 * absent, not 0. */
static void test_hits_other_classifiers(void **state)
{
	struct fx *f = *state;
	static const uint64_t basic[] = {5, 4}, mall[] = {6};
	static const struct {
		const char *kind;
		uint16_t attr;
		const uint64_t *v;
		size_t len;
		uint8_t present;
	} cls[] = {
	        {"basic", TCA_BASIC_PCNT, basic, sizeof(basic),
	         (1u << TCX_FCTR_LOOKUPS) | (1u << TCX_FCTR_HITS)},
	        {"matchall", TCA_MATCHALL_PCNT, mall, sizeof(mall), 1u << TCX_FCTR_HITS},
	        {"flower", TCA_U32_PCNT, basic, sizeof(basic), 0},
	        {"u32", TCA_U32_CLASSID, NULL, 0, 0},
	};

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, (uint32_t)i + 1,
		                                  10, 0x0800, cls[i].kind, 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

		if (cls[i].v)
			mnl_attr_put(nlh, cls[i].attr, cls[i].len, cls[i].v);
		else
			mnl_attr_put_u32(nlh, cls[i].attr, 1);
		mnl_attr_nest_end(nlh, opt);
		assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
		const struct tcx_filter *flt = &f->s->filters[i];
		assert_int_equal(flt->hv_present, cls[i].present);
		assert_int_equal(flt->n_keys, 0);
		if (!cls[i].present)
			continue;
		const uint64_t *v = f->s->hvals + flt->hv;
		if (cls[i].present & (1u << TCX_FCTR_LOOKUPS))
			assert_int_equal(v[TCX_FCTR_LOOKUPS], cls[i].v[0]);
		assert_int_equal(v[TCX_FCTR_HITS], cls[i].v[cls[i].len / 8 - 1]);
	}
	assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], 0);
}

/* Hit counters that cannot be read are left out, all of the filter's: the
 * filter and its actions stay, counted as malformed, with the reason. */
static void test_hits_malformed(void **state)
{
	struct fx *f = *state;
	const uint64_t v[4] = {1, 2, 3, 4};
	struct nlb_stats st = {.bytes = 10, .packets = 1};
	static const struct {
		const char *kind;
		uint16_t attr;
		size_t len;
		const char *why;
	} cls[] = {
	        {"u32", TCA_U32_PCNT, 20, "TCA_U32_PCNT of 20 bytes, not 16 and 8 per key"},
	        {"u32", TCA_U32_PCNT, 8, "u32 hit counters (attribute 9) of 8 bytes, less than 16"},
	        {"u32", TCA_U32_MARK, 8, "TCA_U32_MARK of 8 bytes, less than 12"},
	        {"basic", TCA_BASIC_PCNT, 12,
	         "basic hit counters (attribute 5) of 12 bytes, less than 16"},
	        {"matchall", TCA_MATCHALL_PCNT, 4,
	         "matchall hit counters (attribute 4) of 4 bytes, less than 8"},
	};

	for (size_t i = 0; i < sizeof(cls) / sizeof(cls[0]); i++) {
		struct nlmsghdr *nlh = nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, (uint32_t)i + 1,
		                                  10, 0x0800, cls[i].kind, 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		uint16_t act_attr = strcmp(cls[i].kind, "u32") == 0     ? TCA_U32_ACT
		                    : strcmp(cls[i].kind, "basic") == 0 ? TCA_BASIC_ACT
		                                                        : TCA_MATCHALL_ACT;
		struct nlattr *acts = mnl_attr_nest_start(nlh, act_attr);

		nlb_action(nlh, 1, "gact", NULL, 0, &st, TCA_GACT_PARMS, 3);
		mnl_attr_nest_end(nlh, acts);
		mnl_attr_put(nlh, cls[i].attr, cls[i].len, v);
		mnl_attr_nest_end(nlh, opt);
		assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
		assert_string_equal(f->err, cls[i].why);
		assert_int_equal(f->s->n_filters, i + 1);
		assert_int_equal(f->s->filters[i].hv_present, 0);
		assert_int_equal(f->s->filters[i].n_actions, 1);
		assert_int_equal(f->s->n_hvals, 0);
		assert_int_equal(f->s->errors[TCX_ERR_MALFORMED], i + 1);
	}
}

/* Truncating a filter gives its hit counters back. */
static void test_hits_truncated(void **state)
{
	struct fx *f = *state;
	const uint64_t pcnt[] = {1, 1, 1};

	for (uint32_t h = 1; h <= 2; h++) {
		struct nlmsghdr *nlh =
		        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, h, 10, 0x0800, "u32", 0);
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);

		mnl_attr_put(nlh, TCA_U32_PCNT, sizeof(pcnt), pcnt);
		mnl_attr_nest_end(nlh, opt);
		assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	}
	assert_int_equal(f->s->n_hvals, 2 * (TCX_FCTR__MAX + 1));
	tcx_snapshot_truncate(f->s, 1, 0);
	assert_int_equal(f->s->n_hvals, TCX_FCTR__MAX + 1);
	tcx_snapshot_truncate(f->s, 0, 0);
	assert_int_equal(f->s->n_hvals, 0);
}

/* A policer beside actions (no kernel sends both): the actions win. */
static void test_old_police_beside_actions(void **state)
{
	struct fx *f = *state;
	struct nlb_stats st = {.bytes = 10, .packets = 1};
	struct nlmsghdr *nlh =
	        nlb_filter(f->buf, IFI, TCX_PARENT_INGRESS, 1, 50, 0x0800, "basic", 0);
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_BASIC_ACT);

	nlb_action(nlh, 1, "gact", NULL, 0, &st, TCA_GACT_PARMS, 3);
	mnl_attr_nest_end(nlh, acts);
	nlb_old_police(nlh, TCA_BASIC_POLICE, 4);
	mnl_attr_nest_end(nlh, opt);
	nlb_old_stats(nlh, &st);

	assert_int_equal(parse(f, nlh), TCX_PARSE_ROW);
	assert_int_equal(f->s->n_actions, 1);
	assert_string_equal(tcx_kind_name(f->s, f->s->actions[0].kind), "gact");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_terse_flower, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_full_u32_several_actions, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_full_matchall, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_full_dump_index_of_every_kind, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_times_of_every_kind, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_times_malformed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_times_user_hz_1024, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_times_firstuse_zero_with_packets, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_pedit_ex_index, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_short_parms_rejected, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_old_police_u32, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_old_police_every_classifier, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_old_police_malformed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_old_police_beside_actions, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hits_u32, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hits_other_classifiers, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hits_malformed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hits_truncated, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_unspec_not_parms, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pkt64_pairs_with_preceding, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pkt64_after_basic_only, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pkt64_orphan_rejected, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cookie_sizes, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_unknown_and_pad_attributes, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_short_and_long_structs, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_truncated_attribute, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_truncated_message, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_bad_strings, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_action_without_kind, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_header_and_other_messages, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_unknown_classifier_keeps_filter, setup,
	                                        teardown),
	        cmocka_unit_test_setup_teardown(test_done_status_and_extack, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_qdisc_and_link, setup, teardown),
	        cmocka_unit_test(test_formatting),
	        cmocka_unit_test(test_describe_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
