/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decoding of qdisc and class messages, the way tc -s reads them
 * (iproute2 tc/tc_util.c print_tcstats_attr):
 *
 * - the generic counters from TCA_STATS2 when present (TCA_STATS_BASIC,
 *   TCA_STATS_PKT64 paired with the attribute before it, walked in order
 *   because it can appear twice, TCA_STATS_QUEUE), else from the old
 *   TCA_STATS struct;
 * - the per-kind statistics from TCA_STATS2's TCA_STATS_APP, else from
 *   TCA_XSTATS, decoded with the kind's table (config/xstats.c);
 * - structs copied as MIN(payload, sizeof): a short one gives what it
 *   holds, a long one its known prefix; unknown attributes skipped.
 *
 * The message is refused, with the reason, only when it cannot be read: a
 * bad length, no TCA_KIND or an empty one, a stray TCA_STATS_PKT64, a nested statistic
 * shorter than its type, a cake tin outside 1..8. */
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "collectors/nlattr.h"
#include "collectors/qdisc_parse.h"

#define BIT(i) (1u << (i))

/* ---- generic counters ----------------------------------------------------------------- */

/* The generic counters of a qdisc and a class have the same sources. A rate
 * estimator's TCA_STATS_RATE_EST64 (sent after TCA_STATS_RATE_EST when the
 * rate does not fit in 32 bits) replaces its values. */
static int stats_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct tcx_stats_ctx *sc = data;
	struct gnet_stats_rate_est64 est;

	if (tcx_attr_type(a) != TCA_STATS_RATE_EST64)
		return tcx_stats_attr(&tcx_qdisc_counters, data, a, pe);
	if (tcx_attr_len(a) < sizeof(est))
		return tcx_perr_fail(pe, "TCA_STATS_RATE_EST64: payload of %zu bytes, expected %zu",
		                     (size_t)tcx_attr_len(a), sizeof(est));
	memcpy(&est, tcx_attr_data(a), sizeof(est));
	sc->c[TCX_QSTAT_RATE_BYTES] = est.bps;
	sc->c[TCX_QSTAT_RATE_PACKETS] = est.pps;
	sc->present |= BIT(TCX_QSTAT_RATE_BYTES) | BIT(TCX_QSTAT_RATE_PACKETS);
	sc->prev = TCA_STATS_RATE_EST64;
	return 0;
}

/* The old struct, from kernels without TCA_STATS2: no requeues. */
static void stats_compat(struct tcx_qdisc_msg *m, const struct nlattr *a)
{
	struct tc_stats st;

	tcx_attr_struct(a, &st, sizeof(st));
	m->stats[TCX_QSTAT_BYTES] = st.bytes;
	m->stats[TCX_QSTAT_PACKETS] = st.packets;
	m->stats[TCX_QSTAT_DROPS] = st.drops;
	m->stats[TCX_QSTAT_OVERLIMITS] = st.overlimits;
	m->stats[TCX_QSTAT_BACKLOG_BYTES] = st.backlog;
	m->stats[TCX_QSTAT_BACKLOG_PACKETS] = st.qlen;
	m->stats_present = BIT(TCX_QSTAT_BYTES) | BIT(TCX_QSTAT_PACKETS) | BIT(TCX_QSTAT_DROPS) |
	                   BIT(TCX_QSTAT_OVERLIMITS) | BIT(TCX_QSTAT_BACKLOG_BYTES) |
	                   BIT(TCX_QSTAT_BACKLOG_PACKETS);
}

/* ---- per-kind statistics ---------------------------------------------------------------- */

/* The host-order integer of f->size bytes at p, into *raw (sign-extended
 * when signed): 1, or 0 when the row's flags make this value absent. */
static int read_field(const struct tcx_xstat *f, const void *p, uint64_t *raw)
{
	uint32_t v32;
	uint64_t v;

	if (f->size == 4) {
		memcpy(&v32, p, sizeof(v32));
		v = (f->flags & TCX_XSTAT_SIGNED) ? (uint64_t)(int64_t)(int32_t)v32 : v32;
	} else {
		memcpy(&v, p, sizeof(v));
	}
	if ((f->flags & TCX_XSTAT_POSITIVE) &&
	    ((f->flags & TCX_XSTAT_SIGNED) ? (int64_t)v <= 0 : v == 0))
		return 0;
	*raw = v;
	return 1;
}

/* A struct: each field that the payload holds whole. */
static void xstats_struct(struct tcx_qdisc_msg *m, const struct tcx_xstats_table *t,
                          const struct nlattr *a)
{
	const char *p = tcx_attr_data(a);
	size_t len = tcx_attr_len(a);
	uint32_t type;

	if (t->has_type) {
		if (len < sizeof(type))
			return;
		memcpy(&type, p, sizeof(type));
		if (type != t->type)
			return; /* the other variant, or one from a newer kernel */
	}
	m->xt = t;
	for (unsigned i = 0; i < t->n_fields; i++) {
		const struct tcx_xstat *f = &t->fields[i];

		if ((size_t)f->src + f->size <= len && read_field(f, p + f->src, &m->xs[i]))
			m->xs_present |= BIT(i);
	}
}

/* Nested attributes: rows by attribute type, into vals and *present. */
struct nest_ctx {
	struct tcx_qdisc_msg *m;
	const struct tcx_xstats_table *t;
	const struct tcx_xstat *rows;
	unsigned n;
	uint64_t *vals;
	uint32_t *present;
	int top; /* the outer nest, which may hold the tins */
};

static int tin_cb(const struct nlattr *a, void *data, struct tcx_perr *pe);

static int nest_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	const struct nest_ctx *nc = data;
	uint16_t type = tcx_attr_type(a);

	if (nc->top && nc->t->tins_attr && type == nc->t->tins_attr)
		return tcx_attr_nested(a, "cake tin statistics", tin_cb, nc->m, pe);
	for (unsigned i = 0; i < nc->n; i++) {
		const struct tcx_xstat *f = &nc->rows[i];

		if (f->src != type)
			continue;
		if (tcx_attr_len(a) < f->size)
			return tcx_perr_fail(pe,
			                     "%s (attribute %u): payload of %zu bytes, expected %u",
			                     f->family, type, tcx_attr_len(a), f->size);
		if (read_field(f, tcx_attr_data(a), &nc->vals[i]))
			*nc->present |= BIT(i);
		else
			*nc->present &= ~BIT(i);
		return 0;
	}
	return 0; /* pad, or a statistic of a newer kernel */
}

/* One tin's nest, typed by its place: 1..TCX_XSTATS_TINS. */
static int tin_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct tcx_qdisc_msg *m = data;
	uint16_t type = tcx_attr_type(a);
	struct nest_ctx nc = {
	        .m = m, .t = m->xt, .rows = m->xt->tin_fields, .n = m->xt->n_tin_fields};

	if (type < 1 || type > TCX_XSTATS_TINS)
		return tcx_perr_fail(pe, "cake tin statistics: tin %u, outside 1..%d", type,
		                     TCX_XSTATS_TINS);
	nc.vals = m->tin[type - 1];
	nc.present = &m->tin_present[type - 1];
	if (type > m->n_tins)
		m->n_tins = (uint8_t)type;
	return tcx_attr_nested(a, "cake tin", nest_cb, &nc, pe);
}

static int xstats(struct tcx_qdisc_msg *m, const struct nlattr *a, struct tcx_perr *pe)
{
	const struct tcx_xstats_table *t = tcx_xstats_lookup(m->kind, m->is_class);
	struct nest_ctx nc = {.m = m, .t = t};

	if (!t)
		return 0;
	if (t->layout == TCX_XSTATS_STRUCT) {
		xstats_struct(m, t, a);
		return 0;
	}
	m->xt = t;
	nc.rows = t->fields;
	nc.n = t->n_fields;
	nc.vals = m->xs;
	nc.present = &m->xs_present;
	nc.top = 1;
	return tcx_attr_nested(a, "TCA_STATS_APP", nest_cb, &nc, pe);
}

/* ---- the message ------------------------------------------------------------------------ */

int tcx_parse_qdisc_msg(const struct nlmsghdr *nlh, struct tcx_qdisc_msg *m, char *err,
                        size_t errlen)
{
	struct tcx_perr pe = {err, errlen};
	const struct nlattr *tb[TCA_MAX + 1] = {NULL};
	struct tcx_stats_ctx sc = {.c = m->stats};
	const struct nlattr *app;
	const struct tcmsg *tcm;

	/* The value arrays are read only under their present bits. */
	memset(m, 0, offsetof(struct tcx_qdisc_msg, stats));
	switch (nlh->nlmsg_type) {
	case RTM_NEWQDISC:
	case RTM_DELQDISC:
		break;
	case RTM_NEWTCLASS:
	case RTM_DELTCLASS:
		m->is_class = 1;
		break;
	default:
		return tcx_perr_fail(&pe, "message type %u is no qdisc or class", nlh->nlmsg_type);
	}
	tcm = tcx_msg_walk(nlh, sizeof(*tcm), m->is_class ? "class" : "qdisc", tcx_attr_tb_cb,
	                   &(struct tcx_attr_tb){tb, TCA_MAX + 1}, &pe);
	if (!tcm)
		return -1;
	m->ifindex = (uint32_t)tcm->tcm_ifindex;
	m->handle = tcm->tcm_handle;
	m->parent = tcm->tcm_parent;
	if (!tb[TCA_KIND])
		return tcx_perr_fail(&pe, "%s message without TCA_KIND",
		                     m->is_class ? "class" : "qdisc");
	if (tcx_attr_str(tb[TCA_KIND], "TCA_KIND", m->kind, sizeof(m->kind), &pe) < 0)
		return -1;
	if (!m->kind[0])
		return tcx_perr_fail(&pe, "TCA_KIND is empty");
	if (tb[TCA_INGRESS_BLOCK] &&
	    tcx_attr_u32(tb[TCA_INGRESS_BLOCK], "TCA_INGRESS_BLOCK", &m->ingress_block, &pe) < 0)
		return -1;
	if (tb[TCA_EGRESS_BLOCK] &&
	    tcx_attr_u32(tb[TCA_EGRESS_BLOCK], "TCA_EGRESS_BLOCK", &m->egress_block, &pe) < 0)
		return -1;
	m->identity = 1;
	if (tb[TCA_STATS2]) {
		if (tcx_attr_nested(tb[TCA_STATS2], "TCA_STATS2", stats_cb, &sc, &pe) < 0)
			return -1;
		m->stats_present = (uint16_t)sc.present;
	} else if (tb[TCA_STATS]) {
		stats_compat(m, tb[TCA_STATS]);
	}
	app = sc.app ? sc.app : tb[TCA_XSTATS];
	if (app && xstats(m, app, &pe) < 0)
		return -1;
	if (tb[TCA_OPTIONS] && (m->pt = tcx_plans_lookup(m->kind, m->is_class)))
		m->pl_bad =
		        (uint8_t)tcx_plans_decode(m->pt, tb[TCA_OPTIONS], m->pl, &m->pl_present);
	return 0;
}
