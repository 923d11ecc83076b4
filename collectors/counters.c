/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/gen_stats.h>

#include "collectors/counters.h"

#define TCX_SW_DEF(id, ...) [TCX_SW_##id] = {__VA_ARGS__},
const struct tcx_family_switch tcx_family_switches[TCX_SW__MAX] = {TCX_FAMILY_SWITCHES(TCX_SW_DEF)};

#define TCX_ACT_DEF(id, ...) [TCX_ACT_##id] = {__VA_ARGS__},
static const struct tcx_counter_def action_defs[TCX_ACT_CTR__MAX] = {
        TCX_ACTION_COUNTERS(TCX_ACT_DEF)};

const struct tcx_counter_table tcx_action_counters = {action_defs, TCX_ACT_CTR__MAX};

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
