/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The `families:` switches of the configuration: which families of
 * collectors/counters.h (and the renderers' other families) are written.
 * Here, below the collectors, because the configuration reads them. */
#ifndef TCX_FAMILIES_H
#define TCX_FAMILIES_H

#include <stdint.h>

/* The value of a `families:` switch. DEFAULT is what a key left out means
 * (the switch's dflt). */
enum tcx_family_mode {
	TCX_FAM_DEFAULT = 0,
	TCX_FAM_ON,
	TCX_FAM_OFF,
	TCX_FAM_AUTO, /* on while some row has a non-zero counter of the switch */
};

/* The `families:` switches, in the order the configuration lists them:
 * S(ID, fields of struct tcx_family_switch). */
#define TCX_FAMILY_SWITCHES(S)                                                                     \
	S(HW, .name = "hw", .dflt = TCX_FAM_AUTO, .auto_in_hw = 1)                                 \
	S(FLAGS, .name = "flags", .dflt = TCX_FAM_ON, .dflt_aggregated = TCX_FAM_OFF)              \
	S(DROPS, .name = "drops", .dflt = TCX_FAM_ON)                                              \
	S(OVERLIMITS, .name = "overlimits", .dflt = TCX_FAM_ON)                                    \
	S(QDISC, .name = "qdisc", .dflt = TCX_FAM_ON)                                              \
	S(CLASS, .name = "class", .dflt = TCX_FAM_ON)                                              \
	S(XSTATS, .name = "xstats", .dflt = TCX_FAM_ON)                                            \
	S(PLANS, .name = "plans", .dflt = TCX_FAM_ON)                                              \
	S(FLOWS, .name = "flows", .dflt = TCX_FAM_OFF)                                             \
	S(HITS, .name = "hits", .dflt = TCX_FAM_ON)                                                \
	S(KEYS, .name = "keys", .dflt = TCX_FAM_OFF)                                               \
	S(LIVENESS, .name = "liveness", .dflt = TCX_FAM_ON)                                        \
	S(CREATED, .name = "created", .dflt = TCX_FAM_OFF)

struct tcx_family_switch {
	const char *name; /* first: the configuration's key table reads it */
	/* What DEFAULT means: ON, or AUTO (and then `auto` may be set too);
	 * with `aggregate`, dflt_aggregated when it is set. */
	enum tcx_family_mode dflt, dflt_aggregated;
	/* AUTO is also on while a filter is in hardware (TCX_FLAG_IN_HW). */
	uint8_t auto_in_hw;
};

#define TCX_SW_ID(id, ...) TCX_SW_##id,
enum tcx_switch_id {
	TCX_SW_NONE = 0, /* a family that is always written */
	TCX_FAMILY_SWITCHES(TCX_SW_ID) TCX_SW__MAX,
};
#undef TCX_SW_ID

/* tcx_family_switches[TCX_SW_x] (the first, TCX_SW_NONE, has no name). */
extern const struct tcx_family_switch tcx_family_switches[TCX_SW__MAX];

/* What mode `set` (as configured) of switch sw means: ON, OFF or AUTO. */
enum tcx_family_mode tcx_switch_mode(enum tcx_switch_id sw, enum tcx_family_mode set,
                                     int aggregated);

#endif
