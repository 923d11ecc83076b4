/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config/families.h"

#define TCX_SW_DEF(id, ...) [TCX_SW_##id] = {__VA_ARGS__},
const struct tcx_family_switch tcx_family_switches[TCX_SW__MAX] = {TCX_FAMILY_SWITCHES(TCX_SW_DEF)};

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
