/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/gen_stats.h>
#include <string.h>

#include "collectors/nlattr.h"

#include "collectors/counters.h"

#define TCX_SW_DEF(id, ...) [TCX_SW_##id] = {__VA_ARGS__},
const struct tcx_family_switch tcx_family_switches[TCX_SW__MAX] = {TCX_FAMILY_SWITCHES(TCX_SW_DEF)};

#define TCX_ACT_DEF(id, ...) [TCX_ACT_##id] = {__VA_ARGS__},
static const struct tcx_counter_def action_defs[TCX_ACT_CTR__MAX] = {
        TCX_ACTION_COUNTERS(TCX_ACT_DEF)};

const struct tcx_counter_table tcx_action_counters = {action_defs, TCX_ACT_CTR__MAX};

#define TCX_QSTAT_DEF(id, ...) [TCX_QSTAT_##id] = {__VA_ARGS__},
static const struct tcx_counter_def qdisc_defs[TCX_QSTAT__MAX] = {
        TCX_QUEUE_COUNTERS(TCX_QSTAT_DEF, "qdisc", TCX_SW_QDISC)};
static const struct tcx_counter_def class_defs[TCX_QSTAT__MAX] = {
        TCX_QUEUE_COUNTERS(TCX_QSTAT_DEF, "class", TCX_SW_CLASS)};

const struct tcx_counter_table tcx_qdisc_counters = {qdisc_defs, TCX_QSTAT__MAX};
const struct tcx_counter_table tcx_class_counters = {class_defs, TCX_QSTAT__MAX};

enum tcx_family_mode tcx_switch_mode(enum tcx_switch_id sw, enum tcx_family_mode set,
                                     int aggregated)
{
	const struct tcx_family_switch *s = &tcx_family_switches[sw];

	if (sw == TCX_SW_NONE)
		return TCX_FAM_ON;
	if (set != TCX_FAM_DEFAULT)
		return set;
	return aggregated && s->dflt_aggregated ? s->dflt_aggregated : s->dflt;
}

int tcx_counters_replaced(const struct tcx_counter_table *t, const uint64_t *was,
                          const uint64_t *now)
{
	for (unsigned k = 0; k < t->n; k++)
		if (t->def[k].replace && now[k] < was[k])
			return 1;
	return 0;
}

int tcx_stats_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	struct tcx_stats_ctx *sc = data;
	const struct tcx_counter_table *t = sc->t;
	uint16_t type = tcx_attr_type(a);
	uint8_t st[32]; /* the attribute's struct, zero-filled past a short payload */
	int copied = 0;

	switch (type) {
	case TCA_STATS_PAD:
		return 0; /* nla_put_64bit()'s alignment: transparent to PKT64 */
	case TCA_STATS_APP:
		sc->app = a;
		break;
	case TCA_STATS_PKT64: {
		/* After BASIC (or BASIC_HW) when packets > U32_MAX. */
		uint64_t v = 0;
		int found = 0;

		if (tcx_attr_u64(a, "TCA_STATS_PKT64", &v, pe) < 0)
			return -1;
		for (unsigned k = 0; k < t->n; k++)
			if (t->def[k].src.pkt64 && t->def[k].src.attr == sc->prev) {
				sc->c[k] = v;
				sc->present |= 1u << k;
				found = 1;
			}
		if (!found && sc->prev != TCA_STATS_BASIC && sc->prev != TCA_STATS_BASIC_HW)
			return tcx_perr_fail(
			        pe,
			        "TCA_STATS_PKT64 follows attribute %u, not a basic stats "
			        "attribute",
			        sc->prev);
		break;
	}
	default: /* rate estimators, future attributes: no counter */
		for (unsigned k = 0; k < t->n; k++) {
			const struct tcx_counter_src *src = &t->def[k].src;
			uint32_t v32;

			if (src->attr != type || src->offset + src->size > sizeof(st))
				continue;
			if (!copied++)
				tcx_attr_struct(a, st, sizeof(st));
			if (src->size == 8) {
				memcpy(&sc->c[k], st + src->offset, 8);
			} else {
				memcpy(&v32, st + src->offset, 4);
				sc->c[k] = v32;
			}
			sc->present |= 1u << k;
		}
	}
	sc->prev = type;
	return 0;
}
