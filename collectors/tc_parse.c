/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decoding of TC filter, qdisc and link messages.
 *
 * Every attribute is bounds-checked before it is read: a length that runs
 * past its container, a fixed-size attribute that is too short, or a string
 * that is not terminated rejects the whole message with a reason, and nothing
 * from it is kept. Structs are copied with MIN(payload, sizeof) so that
 * kernels with shorter or longer structs do no harm, unknown and pad
 * attributes are skipped, and TCA_STATS_PKT64 is paired with the attribute
 * that precedes it. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/gen_stats.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collectors/nlattr.h"
#include "collectors/tc_parse.h"

#ifndef TCA_INGRESS_BLOCK
#define TCA_INGRESS_BLOCK 13
#define TCA_EGRESS_BLOCK  14
#endif

/* act_ipt ("ipt", "xt") left the kernel in 6.8, and its uapi header with it;
 * older kernels still dump it. */
#ifdef __has_include
#if __has_include(<linux/tc_act/tc_ipt.h>)
#include <linux/tc_act/tc_ipt.h>
#define TCX_HAVE_TC_IPT_H 1
#endif
#endif
#ifndef TCX_HAVE_TC_IPT_H
#define TCA_IPT_INDEX 3
#define TCA_IPT_TM    5
#endif

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* ---- classifier and action tables ------------------------------------------ */

/* Where a classifier's hit counters are: its PCNT attribute holds u64s,
 * lookups first when it has them, then hits, then (u32) one per key. */
enum pcnt_layout {
	PCNT_NONE = 0,
	PCNT_HITS,         /* matchall: struct tc_matchall_pcnt */
	PCNT_LOOKUPS_HITS, /* basic: struct tc_basic_pcnt */
	PCNT_U32,          /* struct tc_u32_pcnt: then kcnts[nkeys] */
};

struct cls_info {
	char kind[TCX_KIND_MAX];
	uint16_t act_attr;    /* the exts action nest */
	uint16_t police_attr; /* the exts legacy policer (TCA_OLD_COMPAT), 0 = none */
	uint16_t flags_attr;  /* TCA_CLS_FLAGS_* u32, 0 = none */
	uint8_t terse;        /* implements .terse_dump */
	uint8_t pcnt_layout;  /* enum pcnt_layout */
	uint16_t pcnt_attr;   /* its hit counters (CONFIG_CLS_U32_PERF for u32) */
	uint16_t mark_attr;   /* struct tc_u32_mark (CONFIG_CLS_U32_MARK) */
};

/* Attribute ids from each cls_*.c (tcf_exts_init's action and police ids;
 * flower and matchall take no legacy policer; the PCNT and MARK of
 * u32_dump(), basic_dump() and mall_dump(): flower, bpf and the others keep
 * no count of their own, and no terse dump carries one). */
static const struct cls_info cls_table[] = {
        {.kind = "flower", .act_attr = TCA_FLOWER_ACT, .flags_attr = TCA_FLOWER_FLAGS, .terse = 1},
        {.kind = "matchall",
         .act_attr = TCA_MATCHALL_ACT,
         .flags_attr = TCA_MATCHALL_FLAGS,
         .pcnt_layout = PCNT_HITS,
         .pcnt_attr = TCA_MATCHALL_PCNT},
        {.kind = "u32",
         .act_attr = TCA_U32_ACT,
         .police_attr = TCA_U32_POLICE,
         .flags_attr = TCA_U32_FLAGS,
         .pcnt_layout = PCNT_U32,
         .pcnt_attr = TCA_U32_PCNT,
         .mark_attr = TCA_U32_MARK},
        {.kind = "bpf",
         .act_attr = TCA_BPF_ACT,
         .police_attr = TCA_BPF_POLICE,
         .flags_attr = TCA_BPF_FLAGS_GEN},
        {.kind = "basic",
         .act_attr = TCA_BASIC_ACT,
         .police_attr = TCA_BASIC_POLICE,
         .pcnt_layout = PCNT_LOOKUPS_HITS,
         .pcnt_attr = TCA_BASIC_PCNT},
        {.kind = "fw", .act_attr = TCA_FW_ACT, .police_attr = TCA_FW_POLICE},
        {.kind = "route", .act_attr = TCA_ROUTE4_ACT, .police_attr = TCA_ROUTE4_POLICE},
        {.kind = "flow", .act_attr = TCA_FLOW_ACT, .police_attr = TCA_FLOW_POLICE},
        {.kind = "cgroup", .act_attr = TCA_CGROUP_ACT, .police_attr = TCA_CGROUP_POLICE},
        /* removed in 6.3: TCA_TCINDEX_ACT, TCA_TCINDEX_POLICE */
        {.kind = "tcindex", .act_attr = 7, .police_attr = 6},
        /* removed in 6.3: TCA_RSVP_ACT, TCA_RSVP_POLICE */
        {.kind = "rsvp", .act_attr = 6, .police_attr = 5},
        {.kind = "rsvp6", .act_attr = 6, .police_attr = 5},
};

static const struct cls_info *cls_lookup(const char kind[TCX_KIND_MAX])
{
	for (size_t i = 0; i < sizeof(cls_table) / sizeof(cls_table[0]); i++)
		if (tcx_kind_eq(cls_table[i].kind, kind))
			return &cls_table[i];
	return NULL;
}

int tcx_cls_supports_terse(const char *kind)
{
	char padded[TCX_KIND_MAX] = {0};
	const struct cls_info *c;

	strncpy(padded, kind, TCX_KIND_MAX - 1);
	c = cls_lookup(padded);

	return c && c->terse;
}

/* Where each action kind keeps its index in a full dump. A filter dump
 * carries no TCA_ACT_INDEX (only the action table's dump does, and a terse
 * filter dump has no options at all), so it comes from the kind's parameters
 * in TCA_ACT_OPTIONS: a struct that starts with struct tc_gen, whose first
 * member is the index; xt and ipt put the index alone in a u32.
 *
 * From the .dump of each net/sched/act_*.c, the same on 6.1 and 6.18 (ipt
 * and xt: 6.1 only, act_ipt was removed in 6.8):
 *   pedit       TCA_PEDIT_PARMS, or TCA_PEDIT_PARMS_EX instead when the
 *               action has extended keys (`pedit ex munge ...`)
 *   police      TCA_POLICE_TBF (struct tc_police)
 *   ctinfo      TCA_CTINFO_ACT (struct tc_ctinfo)
 *   simple      TCA_DEF_PARMS (struct tc_defact)
 *   xt, ipt     TCA_IPT_INDEX (u32)
 *   the others  TCA_<KIND>_PARMS (bpf: TCA_ACT_BPF_PARMS), always.
 * A kind not listed here (none is known) has no index in a full dump. */
struct act_info {
	char kind[TCX_KIND_MAX];
	uint16_t parms[2]; /* the attributes that can carry it; 0: none */
	/* Its times (struct tcf_t, tcf_tm_dump()): TCA_<KIND>_TM, in every
	 * kind's full dump. */
	uint16_t tm;
};

static const struct act_info act_table[] = {
        {"gact", {TCA_GACT_PARMS}, TCA_GACT_TM},
        {"mirred", {TCA_MIRRED_PARMS}, TCA_MIRRED_TM},
        {"police", {TCA_POLICE_TBF}, TCA_POLICE_TM},
        {"pedit", {TCA_PEDIT_PARMS, TCA_PEDIT_PARMS_EX}, TCA_PEDIT_TM},
        {"skbedit", {TCA_SKBEDIT_PARMS}, TCA_SKBEDIT_TM},
        {"tunnel_key", {TCA_TUNNEL_KEY_PARMS}, TCA_TUNNEL_KEY_TM},
        {"vlan", {TCA_VLAN_PARMS}, TCA_VLAN_TM},
        {"csum", {TCA_CSUM_PARMS}, TCA_CSUM_TM},
        {"ct", {TCA_CT_PARMS}, TCA_CT_TM},
        {"bpf", {TCA_ACT_BPF_PARMS}, TCA_ACT_BPF_TM},
        {"nat", {TCA_NAT_PARMS}, TCA_NAT_TM},
        {"sample", {TCA_SAMPLE_PARMS}, TCA_SAMPLE_TM},
        {"connmark", {TCA_CONNMARK_PARMS}, TCA_CONNMARK_TM},
        {"ctinfo", {TCA_CTINFO_ACT}, TCA_CTINFO_TM},
        {"skbmod", {TCA_SKBMOD_PARMS}, TCA_SKBMOD_TM},
        {"mpls", {TCA_MPLS_PARMS}, TCA_MPLS_TM},
        {"gate", {TCA_GATE_PARMS}, TCA_GATE_TM},
        {"ife", {TCA_IFE_PARMS}, TCA_IFE_TM},
        {"simple", {TCA_DEF_PARMS}, TCA_DEF_TM},
        {"xt", {TCA_IPT_INDEX}, TCA_IPT_TM},
        {"ipt", {TCA_IPT_INDEX}, TCA_IPT_TM},
};

static const struct act_info *act_lookup(const char kind[TCX_KIND_MAX])
{
	for (size_t i = 0; i < sizeof(act_table) / sizeof(act_table[0]); i++)
		if (tcx_kind_eq(act_table[i].kind, kind))
			return &act_table[i];
	return NULL;
}

/* ---- action statistics (TCA_ACT_STATS) -------------------------------------- */

static int stats_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	return tcx_stats_attr(&tcx_action_counters, data, a, pe);
}

/* ---- one action (a nest whose type is the action's order) -------------------- */

struct parms_ctx {
	const struct act_info *info;
	struct tcx_action *act;
	struct tcx_snapshot *snap; /* its clocks, its counts */
	int has_index;             /* from TCA_ACT_INDEX: the parameters' is not read */
};

/* An age of `ticks` USER_HZ ticks as of the reply: the time it goes back
 * to, in ms of Unix time. An age longer than the time since boot cannot
 * be (jiffies start at boot): clamped to it, and counted. */
static int64_t tm_time(struct tcx_snapshot *s, uint64_t ticks)
{
	uint64_t hz = (uint64_t)s->tm_hz;
	/* USER_HZ is 100 but on alpha (and ia64 before Linux 6.7): 1024, two divisions */
	uint64_t ms = hz == 100 ? ticks * 10 : ticks / hz * 1000 + ticks % hz * 1000 / hz;

	if (ticks > (uint64_t)INT64_MAX / 1000 || ms > (uint64_t)s->tm_boot_ms) {
		ms = (uint64_t)s->tm_boot_ms;
		s->tm_clamped++;
	}
	return s->tm_clock_ms - (int64_t)ms;
}

/* The action's times (struct tcf_t: install, lastuse, expires, then
 * firstuse since 4.10). One that is too short loses the row its times
 * alone, counted as malformed: its counters stay. expires is 0 for every
 * kind (no action sets it, 6.1 to 6.18): not kept. */
static void action_times(struct parms_ctx *pc, const struct nlattr *a)
{
	struct tcx_snapshot *s = pc->snap;
	struct tcx_action *act = pc->act;
	struct tcf_t tm = {0};

	if (tcx_attr_len(a) < offsetof(struct tcf_t, firstuse)) {
		s->errors[TCX_ERR_MALFORMED]++;
		return;
	}
	if (!s->tm_clock_ms)
		tcx_snapshot_clock(s);
	tcx_attr_struct(a, &tm, sizeof(tm));
	act->tm[TCX_TM_INSTALLED] = tm_time(s, tm.install);
	act->tm[TCX_TM_LAST_USED] = tm_time(s, tm.lastuse);
	act->tm_present = 1u << TCX_TM_INSTALLED | 1u << TCX_TM_LAST_USED;
	if (tm.firstuse && tcx_attr_len(a) >= sizeof(tm)) {
		act->tm[TCX_TM_FIRST_USED] = tm_time(s, tm.firstuse);
		act->tm_present |= 1u << TCX_TM_FIRST_USED;
	}
}

/* Once an action's counters are read: one that counted packets has
 * matched, even with no first use. The kernel reports a first use of less
 * than a tick ago as 0, and keeps none for packets counted in hardware
 * alone (tcf_exts_hw_stats_update() moves lastuse only): its first use is
 * then taken to be its last one, exact in the first case, the latest it
 * can be in the second. */
static void times_used(struct tcx_action *act)
{
	if ((act->tm_present & (1u << TCX_TM_LAST_USED)) &&
	    !(act->tm_present & (1u << TCX_TM_FIRST_USED)) && act->c[TCX_ACT_PACKETS]) {
		act->tm[TCX_TM_FIRST_USED] = act->tm[TCX_TM_LAST_USED];
		act->tm_present |= 1u << TCX_TM_FIRST_USED;
	}
}

static int parms_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct parms_ctx *pc = data;
	uint16_t t = tcx_attr_type(a);

	if (t && t == pc->info->tm) {
		action_times(pc, a);
		return 0;
	}
	if (!t || pc->has_index || (t != pc->info->parms[0] && t != pc->info->parms[1]))
		return 0;
	if (tcx_attr_len(a) < sizeof(pc->act->index))
		return tcx_perr_fail(
		        pe,
		        "action %u: %s parameters (attribute %u) of %zu bytes, too short for "
		        "the action index",
		        pc->act->order, pc->info->kind, t, tcx_attr_len(a));
	memcpy(&pc->act->index, tcx_attr_data(a), sizeof(pc->act->index));
	return 0;
}

struct acts_ctx {
	struct tcx_snapshot *snap;
	uint32_t filter;
	uint32_t n;
};

static int action_cb(const struct nlattr *nest, void *data, struct tcx_perr *pe)
{
	struct acts_ctx *ac = data;
	const struct nlattr *tb[TCA_ACT_MAX + 1] = {NULL};
	const struct nlattr *cookie, *index, *options, *stats;
	struct tcx_action *act;
	char kind[TCX_KIND_MAX] = {0};
	int k;

	if (tcx_attr_nested(nest, "action", tcx_attr_tb_cb,
	                    &(struct tcx_attr_tb){tb, TCA_ACT_MAX + 1}, pe) < 0)
		return -1;
	cookie = tb[TCA_ACT_COOKIE];
	index = tb[TCA_ACT_INDEX];
	options = tb[TCA_ACT_OPTIONS];
	stats = tb[TCA_ACT_STATS];
	if (!tb[TCA_ACT_KIND])
		return tcx_perr_fail(pe, "action %u: no TCA_ACT_KIND", tcx_attr_type(nest));
	if (tcx_attr_str(tb[TCA_ACT_KIND], "TCA_ACT_KIND", kind, sizeof(kind), pe) < 0)
		return -1;
	if (cookie && tcx_attr_len(cookie) > TCX_COOKIE_MAX)
		return tcx_perr_fail(pe, "action %u: cookie of %zu bytes, more than %d",
		                     tcx_attr_type(nest), tcx_attr_len(cookie), TCX_COOKIE_MAX);
	k = tcx_snapshot_kind_padded(ac->snap, kind);
	if (k < 0)
		return tcx_perr_fail(pe, "more than %d distinct classifier and action kinds",
		                     TCX_MAX_KINDS);
	act = tcx_snapshot_add_action(ac->snap);
	if (!act)
		return tcx_perr_fail(pe, "out of memory");
	act->filter = ac->filter;
	act->order = tcx_attr_type(nest);
	act->kind = (uint8_t)k;
	ac->n++;
	if (cookie) {
		act->cookie_len = (uint8_t)tcx_attr_len(cookie);
		tcx_cookie_copy(act->cookie, tcx_attr_data(cookie), act->cookie_len);
	}
	if (index && tcx_attr_u32(index, "TCA_ACT_INDEX", &act->index, pe) < 0)
		return -1;
	if (options) {
		struct parms_ctx pc = {.info = act_lookup(kind),
		                       .act = act,
		                       .snap = ac->snap,
		                       .has_index = !!index};

		if (pc.info && tcx_attr_nested(options, "TCA_ACT_OPTIONS", parms_cb, &pc, pe) < 0)
			return -1;
	}
	if (stats) {
		struct tcx_stats_ctx sc = {.c = act->c};

		if (tcx_attr_nested(stats, "TCA_ACT_STATS", stats_cb, &sc, pe) < 0)
			return -1;
	}
	times_used(act);
	return 0;
}

/* ---- a legacy policer ------------------------------------------------------------ */

/* A `police` given to a classifier without `action` (tc's old syntax) is
 * kept as the filter's one action, of type TCA_OLD_COMPAT. tcf_exts_dump()
 * puts its parameters alone under the classifier's POLICE attribute (no
 * kind, cookie or stats nest), tcf_exts_dump_stats() its counters in the
 * message's top-level statistics: TCA_STATS (struct tc_stats) on 6.1 to
 * 6.18, TCA_STATS2 read first as tc does. Its row is action 1, kind police.
 * Returns -1 when the message cannot be kept (out of memory, too many
 * kinds); a policer that cannot be read loses its row alone, counted in
 * errors[TCX_ERR_MALFORMED], with the reason in pe. */
static int old_police(struct acts_ctx *ac, const struct nlattr *police,
                      const struct nlattr *const tb[], struct tcx_perr *pe)
{
	static const char kind[TCX_KIND_MAX] = "police";
	int k = tcx_snapshot_kind_padded(ac->snap, kind);
	struct parms_ctx pc = {.info = act_lookup(kind), .snap = ac->snap};
	struct tc_stats old;

	if (k < 0)
		return tcx_perr_fail(pe, "more than %d distinct classifier and action kinds",
		                     TCX_MAX_KINDS);
	pc.act = tcx_snapshot_add_action(ac->snap);
	if (!pc.act)
		return tcx_perr_fail(pe, "out of memory");
	pc.act->filter = ac->filter;
	pc.act->order = 1;
	pc.act->kind = (uint8_t)k;
	if (tcx_attr_nested(police, "legacy police", parms_cb, &pc, pe) < 0)
		goto malformed;
	if (tb[TCA_STATS2]) {
		struct tcx_stats_ctx sc = {.c = pc.act->c};

		if (tcx_attr_nested(tb[TCA_STATS2], "TCA_STATS2", stats_cb, &sc, pe) < 0)
			goto malformed;
	} else if (tb[TCA_STATS]) {
		if (tcx_attr_len(tb[TCA_STATS]) < offsetof(struct tc_stats, bps)) {
			tcx_perr_fail(
			        pe, "TCA_STATS of %zu bytes, too short for the policer's counters",
			        tcx_attr_len(tb[TCA_STATS]));
			goto malformed;
		}
		tcx_attr_struct(tb[TCA_STATS], &old, sizeof(old));
		pc.act->c[TCX_ACT_BYTES] = old.bytes;
		pc.act->c[TCX_ACT_PACKETS] = old.packets;
		pc.act->c[TCX_ACT_DROPS] = old.drops;
		pc.act->c[TCX_ACT_OVERLIMITS] = old.overlimits;
	}
	times_used(pc.act);
	ac->n++;
	return 0;
malformed:
	tcx_snapshot_truncate(ac->snap, ac->snap->n_filters, ac->snap->n_actions - 1);
	ac->snap->errors[TCX_ERR_MALFORMED]++;
	return 0;
}

/* ---- filter options (TCA_OPTIONS of the classifier) ------------------------- */

struct opts_ctx {
	const struct cls_info *cls;
	struct tcx_filter *f;
	struct acts_ctx acts;
	const struct nlattr *police; /* the legacy policer, if any */
	const struct nlattr *pcnt, *mark;
};

static int options_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct opts_ctx *oc = data;
	uint16_t t = tcx_attr_type(a);
	uint32_t flags;

	if (t == oc->cls->act_attr)
		return tcx_attr_nested(a, "actions", action_cb, &oc->acts, pe);
	if (oc->cls->police_attr && t == oc->cls->police_attr)
		oc->police = a;
	if (oc->cls->pcnt_attr && t == oc->cls->pcnt_attr)
		oc->pcnt = a;
	if (oc->cls->mark_attr && t == oc->cls->mark_attr)
		oc->mark = a;
	if (oc->cls->flags_attr && t == oc->cls->flags_attr) {
		if (tcx_attr_u32(a, "classifier flags", &flags, pe) < 0)
			return -1;
		oc->f->flags = (uint8_t)(flags & 0xf); /* TCX_FLAG_* */
		oc->f->has_flags = 1;
	}
	return 0;
}

/* ---- a filter's hit counters ------------------------------------------------------ */

/* The counters of the classifier's PCNT and MARK attributes (oc->pcnt,
 * oc->mark) into f's hit counters. Returns -1 when out of memory; counters
 * that cannot be read are left out, all of the filter's, counted in
 * errors[TCX_ERR_MALFORMED] with the reason in pe (the filter row stays). */
static int filter_hits(struct tcx_snapshot *snap, struct tcx_filter *f, const struct opts_ctx *oc,
                       struct tcx_perr *pe)
{
	size_t len = oc->pcnt ? tcx_attr_len(oc->pcnt) : 0, n_keys = 0, need = 8;
	uint8_t present = 0;
	uint64_t *v;

	if (oc->pcnt) {
		if (oc->cls->pcnt_layout != PCNT_HITS)
			need = 16;
		if (oc->cls->pcnt_layout == PCNT_U32 && len >= need) {
			/* exactly the keys' counters follow */
			n_keys = (len - need) / 8;
			if ((len - need) % 8 || n_keys > UINT8_MAX) {
				tcx_perr_fail(pe, "TCA_U32_PCNT of %zu bytes, not 16 and 8 per key",
				              len);
				goto malformed;
			}
		}
		if (len < need) {
			tcx_perr_fail(pe,
			              "%s hit counters (attribute %u) of %zu bytes, less than %zu",
			              oc->cls->kind, oc->cls->pcnt_attr, len, need);
			goto malformed;
		}
		present |= 1u << TCX_FCTR_HITS;
		if (oc->cls->pcnt_layout != PCNT_HITS)
			present |= 1u << TCX_FCTR_LOOKUPS;
	}
	if (oc->mark) {
		if (tcx_attr_len(oc->mark) < sizeof(struct tc_u32_mark)) {
			tcx_perr_fail(pe, "TCA_U32_MARK of %zu bytes, less than %zu",
			              tcx_attr_len(oc->mark), sizeof(struct tc_u32_mark));
			goto malformed;
		}
		present |= 1u << TCX_FCTR_U32_MARK;
	}
	if (!present)
		return 0;
	if (!(v = tcx_snapshot_add_hvals(snap, f, (unsigned)n_keys)))
		return tcx_perr_fail(pe, "out of memory");
	if (oc->pcnt) {
		const uint8_t *p = tcx_attr_data(oc->pcnt);

		if (oc->cls->pcnt_layout != PCNT_HITS) {
			memcpy(&v[TCX_FCTR_LOOKUPS], p, 8);
			p += 8;
		}
		memcpy(&v[TCX_FCTR_HITS], p, 8);
		memcpy(v + TCX_FCTR__MAX, p + 8, n_keys * 8);
	}
	if (oc->mark) {
		struct tc_u32_mark m;

		memcpy(&m, tcx_attr_data(oc->mark), sizeof(m));
		v[TCX_FCTR_U32_MARK] = m.success;
	}
	f->hv_present = present;
	return 0;
malformed:
	snap->errors[TCX_ERR_MALFORMED]++;
	return 0;
}

/* ---- filter message ------------------------------------------------------------ */

enum tcx_parse_result tcx_parse_filter(const struct nlmsghdr *nlh, struct tcx_snapshot *snap,
                                       uint32_t target, struct tcx_tp_key *key, char *err,
                                       size_t errlen)
{
	struct tcx_perr pe = {err, errlen};
	const struct nlattr *tb[TCA_MAX + 1] = {NULL};
	const struct tcmsg *tcm;
	size_t mark_f, mark_a;
	struct tcx_filter *f;
	int k;

	if (nlh->nlmsg_type != RTM_NEWTFILTER && nlh->nlmsg_type != RTM_DELTFILTER)
		return TCX_PARSE_SKIP;
	tcm = tcx_msg_walk(nlh, sizeof(*tcm), "filter", tcx_attr_tb_cb,
	                   &(struct tcx_attr_tb){tb, TCA_MAX + 1}, &pe);
	if (!tcm)
		return TCX_PARSE_ERROR;
	memset(key, 0, sizeof(*key));
	if (!tb[TCA_KIND]) {
		tcx_perr_fail(&pe, "filter message without TCA_KIND");
		return TCX_PARSE_ERROR;
	}
	if (tcx_attr_str(tb[TCA_KIND], "TCA_KIND", key->kind, sizeof(key->kind), &pe) < 0)
		return TCX_PARSE_ERROR;
	if (tb[TCA_CHAIN] && tcx_attr_u32(tb[TCA_CHAIN], "TCA_CHAIN", &key->chain, &pe) < 0)
		return TCX_PARSE_ERROR;
	key->pref = (uint16_t)(TC_H_MAJ(tcm->tcm_info) >> 16);
	key->protocol = ntohs((uint16_t)TC_H_MIN(tcm->tcm_info));
	key->ifindex = (uint32_t)tcm->tcm_ifindex;
	key->parent = tcm->tcm_parent;
	key->handle = tcm->tcm_handle;
	if (tcm->tcm_handle == 0)
		return TCX_PARSE_HEADER;

	k = tcx_snapshot_kind_padded(snap, key->kind);
	if (k < 0) {
		tcx_perr_fail(&pe, "more than %d distinct classifier and action kinds",
		              TCX_MAX_KINDS);
		return TCX_PARSE_ERROR;
	}
	mark_f = snap->n_filters;
	mark_a = snap->n_actions;
	f = tcx_snapshot_add_filter(snap);
	if (!f) {
		tcx_perr_fail(&pe, "out of memory");
		return TCX_PARSE_ERROR;
	}
	f->target = target;
	f->chain = key->chain;
	f->handle = key->handle;
	f->pref = key->pref;
	f->protocol = key->protocol;
	f->kind = (uint8_t)k;
	f->first_action = (uint32_t)snap->n_actions;
	if (tb[TCA_OPTIONS]) {
		const struct cls_info *cls = cls_lookup(key->kind);
		struct opts_ctx oc = {
		        .cls = cls, .f = f, .acts = {.snap = snap, .filter = (uint32_t)mark_f}};

		/* An unknown classifier keeps its filter row; where its actions
		 * live is not known, so it has none. */
		if (cls &&
		    tcx_attr_nested(tb[TCA_OPTIONS], "TCA_OPTIONS", options_cb, &oc, &pe) < 0) {
			tcx_snapshot_truncate(snap, mark_f, mark_a);
			return TCX_PARSE_ERROR;
		}
		/* The kernel dumps either the actions or the policer. */
		if ((oc.police && !oc.acts.n && old_police(&oc.acts, oc.police, tb, &pe) < 0) ||
		    (cls && filter_hits(snap, f, &oc, &pe) < 0)) {
			tcx_snapshot_truncate(snap, mark_f, mark_a);
			return TCX_PARSE_ERROR;
		}
		/* f may have moved if actions grew the filters array: it did not,
		 * actions live in their own array. */
		f->n_actions = (uint16_t)oc.acts.n;
	}
	return TCX_PARSE_ROW;
}

/* ---- qdiscs and links ----------------------------------------------------------- */

static int qdisc_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct tcx_qdisc *q = data;

	switch (tcx_attr_type(a)) {
	case TCA_KIND:
		return tcx_attr_str(a, "TCA_KIND", q->kind, sizeof(q->kind), pe);
	case TCA_INGRESS_BLOCK:
		return tcx_attr_u32(a, "TCA_INGRESS_BLOCK", &q->ingress_block, pe);
	case TCA_EGRESS_BLOCK:
		return tcx_attr_u32(a, "TCA_EGRESS_BLOCK", &q->egress_block, pe);
	default:
		return 0;
	}
}

int tcx_parse_qdisc(const struct nlmsghdr *nlh, struct tcx_qdisc *q, char *err, size_t errlen)
{
	struct tcx_perr pe = {err, errlen};
	const struct tcmsg *tcm;

	memset(q, 0, sizeof(*q));
	tcm = tcx_msg_walk(nlh, sizeof(*tcm), "qdisc", qdisc_cb, q, &pe);
	if (!tcm)
		return -1;
	q->ifindex = (uint32_t)tcm->tcm_ifindex;
	q->handle = tcm->tcm_handle;
	q->parent = tcm->tcm_parent;
	if (!q->kind[0])
		return tcx_perr_fail(&pe, "qdisc message without TCA_KIND");
	return 0;
}

static int link_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	if (tcx_attr_type(a) == IFLA_IFNAME)
		return tcx_attr_str(a, "IFLA_IFNAME", data, IFNAMSIZ, pe);
	return 0;
}

int tcx_parse_link(const struct nlmsghdr *nlh, uint32_t *ifindex, char name[IFNAMSIZ], char *err,
                   size_t errlen)
{
	struct tcx_perr pe = {err, errlen};
	const struct ifinfomsg *ifi;

	name[0] = '\0';
	ifi = tcx_msg_walk(nlh, sizeof(*ifi), "link", link_cb, name, &pe);
	if (!ifi)
		return -1;
	*ifindex = (uint32_t)ifi->ifi_index;
	if (!name[0])
		return tcx_perr_fail(&pe, "link %u without IFLA_IFNAME", *ifindex);
	return 0;
}

/* ---- NLMSG_DONE / NLMSG_ERROR ------------------------------------------------------ */

static int extack_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct tcx_perr *msg = data;

	if (tcx_attr_type(a) == NLMSGERR_ATTR_MSG) {
		const char *s = tcx_attr_data(a);
		size_t n = strnlen(s, tcx_attr_len(a));

		if (msg->len) {
			n = MIN(n, msg->len - 1);
			memcpy(msg->buf, s, n);
			msg->buf[n] = '\0';
		}
	}
	return 0;
}

int tcx_parse_status(const struct nlmsghdr *nlh, int *status, char *msg, size_t msglen)
{
	struct tcx_perr out = {msg, msglen}, pe = {NULL, 0};
	size_t off, hdr;

	if (msglen)
		msg[0] = '\0';
	if (nlh->nlmsg_type == NLMSG_DONE) {
		/* An old kernel may send a DONE with no payload: a clean end. */
		if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(int)) {
			*status = 0;
			return 0;
		}
		memcpy(status, (const char *)nlh + NLMSG_HDRLEN, sizeof(int));
		hdr = sizeof(int);
	} else if (nlh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;

		if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(int))
			return -1;
		memcpy(&e.error, (const char *)nlh + NLMSG_HDRLEN, sizeof(int));
		*status = e.error;
		/* With NETLINK_CAP_ACK only the request header is echoed. */
		hdr = sizeof(struct nlmsgerr);
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
		    nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(struct nlmsgerr)) {
			const struct nlmsgerr *pe_ =
			        (const void *)((const char *)nlh + NLMSG_HDRLEN);
			uint32_t inner;

			memcpy(&inner, &pe_->msg.nlmsg_len, sizeof(inner));
			if (inner > sizeof(struct nlmsghdr))
				hdr += inner - sizeof(struct nlmsghdr);
		}
	} else {
		return -1;
	}
	/* An errno, whichever its sign (INT_MIN has no positive twin). */
	if (*status < -TCX_MAX_ERRNO || *status > TCX_MAX_ERRNO)
		return -1;
	if (*status > 0)
		*status = -*status;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return 0;
	off = NLMSG_HDRLEN + NLMSG_ALIGN(hdr);
	if (nlh->nlmsg_len <= off)
		return 0;
	/* A malformed ack TLV list loses only the message text. */
	tcx_attr_walk((const char *)nlh + off, nlh->nlmsg_len - off, "ext ack", extack_cb, &out,
	              &pe);
	return 0;
}
