/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counters tcexporter exports, each defined once: one table per object
 * type (struct tcx_counter_table), one row per counter. A row says what
 * every stage needs: where the kernel gives the counter (the decoder), its
 * width (the merge of rows of one identity), whether it going down means
 * another object (aggregation, SNMP discontinuities), its JSON key, its
 * family, HELP and type (the text formats), its `families:` switch (the
 * configuration and the renderers) and its SNMP column and type. Rows keep
 * their counters in an array indexed by the table (struct tcx_action's
 * c[]), and each stage walks the table, so a new counter is one entry of
 * the list below (and a new switch one of config/families.h's), plus its object in
 * mibs/TCEXPORTER-MIB.txt and its lines in tcexporter(8).
 *
 * The lists are X-macros, C(ID, fields...): ID makes the enumerator
 * (TCX_ACT_<ID>), the fields are the designated initializers of its struct
 * tcx_counter_def. */
#ifndef TCX_COUNTERS_H
#define TCX_COUNTERS_H

#include <linux/gen_stats.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collectors/nlattr.h"
#include "config/families.h"

enum tcx_metric_type {
	TCX_METRIC_COUNTER = 0, /* its family ends in _total */
	TCX_METRIC_GAUGE,
};

enum tcx_snmp_type {
	TCX_SNMP_NONE = 0, /* not in the object's SNMP table */
	TCX_SNMP_COUNTER64,
	TCX_SNMP_COUNTER32,
	TCX_SNMP_GAUGE32,
};

/* Where the kernel gives a counter: a field of an attribute of the
 * object's statistics (TCA_STATS_BASIC: struct gnet_stats_basic, ...). */
struct tcx_counter_src {
	uint16_t attr;  /* TCA_STATS_* */
	uint8_t offset; /* of the field in the attribute's struct */
	uint8_t size;   /* of the field: 4 or 8 bytes */
};

/* Field FIELD of struct TYPE, the payload of attribute ATTR. */
#define TCX_SRC(ATTR, TYPE, FIELD)                                                                 \
	{                                                                                          \
		.attr = (ATTR), .offset = offsetof(struct TYPE, FIELD),                            \
		.size = sizeof(((struct TYPE *)0)->FIELD)                                          \
	}

struct tcx_counter_def {
	const char *key;    /* JSON key */
	const char *family; /* the Prometheus family */
	const char *help;
	enum tcx_metric_type type;
	uint8_t width;         /* bits the kernel counts in: sums wrap there */
	uint8_t replace;       /* lower than last seen: another object, same identity */
	uint8_t expo;          /* the family's place among the table's in the exposition */
	enum tcx_switch_id sw; /* TCX_SW_NONE: always written */
	uint16_t snmp_col;     /* its column in the object's SNMP table */
	enum tcx_snmp_type snmp;
	struct tcx_counter_src src;
	uint8_t pkt64; /* a TCA_STATS_PKT64 right after src.attr holds it in 64 bits */
	/* The kernel sends it for some objects only (a rate estimator): a row
	 * without it has no sample and no JSON key, never a 0. */
	uint8_t optional;
};

struct tcx_counter_table {
	const struct tcx_counter_def *def;
	unsigned n;
};

/* ---- the counters of a TC action, in the order of the JSON keys ---------------- */

#define TCX_ACTION_COUNTERS(C)                                                                     \
	C(BYTES, .key = "bytes", .family = "tc_action_bytes_total",                                \
	  .help = "Bytes that passed through the action (software and hardware).", .width = 64,    \
	  .replace = 1, .expo = 0, .snmp_col = 15, .snmp = TCX_SNMP_COUNTER64,                     \
	  .src = TCX_SRC(TCA_STATS_BASIC, gnet_stats_basic, bytes))                                \
	C(PACKETS, .key = "packets", .family = "tc_action_packets_total",                          \
	  .help = "Packets that passed through the action (software and hardware).", .width = 64,  \
	  .replace = 1, .expo = 1, .snmp_col = 16, .snmp = TCX_SNMP_COUNTER64,                     \
	  .src = TCX_SRC(TCA_STATS_BASIC, gnet_stats_basic, packets), .pkt64 = 1)                  \
	C(HW_BYTES, .key = "hw_bytes", .family = "tc_action_hw_bytes_total",                       \
	  .help = "Bytes counted by hardware offload (a subset of tc_action_bytes_total).",        \
	  .width = 64, .expo = 4, .sw = TCX_SW_HW, .snmp_col = 17, .snmp = TCX_SNMP_COUNTER64,     \
	  .src = TCX_SRC(TCA_STATS_BASIC_HW, gnet_stats_basic, bytes))                             \
	C(HW_PACKETS, .key = "hw_packets", .family = "tc_action_hw_packets_total",                 \
	  .help = "Packets counted by hardware offload (a subset of tc_action_packets_total).",    \
	  .width = 64, .expo = 5, .sw = TCX_SW_HW, .snmp_col = 18, .snmp = TCX_SNMP_COUNTER64,     \
	  .src = TCX_SRC(TCA_STATS_BASIC_HW, gnet_stats_basic, packets), .pkt64 = 1)               \
	C(DROPS, .key = "drops", .family = "tc_action_drops_total",                                \
	  .help = "Packets the action dropped.", .width = 32, .expo = 2, .sw = TCX_SW_DROPS,       \
	  .snmp_col = 19, .snmp = TCX_SNMP_COUNTER32,                                              \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, drops))                                \
	C(OVERLIMITS, .key = "overlimits", .family = "tc_action_overlimits_total",                 \
	  .help = "Overlimit events of the action.", .width = 32, .expo = 3,                       \
	  .sw = TCX_SW_OVERLIMITS, .snmp_col = 20, .snmp = TCX_SNMP_COUNTER32,                     \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, overlimits))

#define TCX_ACT_ID(id, ...) TCX_ACT_##id,
enum tcx_action_counter { TCX_ACTION_COUNTERS(TCX_ACT_ID) TCX_ACT_CTR__MAX };
#undef TCX_ACT_ID

/* The tables are in the header: the compiler sees them whole, and unrolls
 * and folds a walk of one (tcx_counters_replaced(), the decoder's). */
#define TCX_ACT_DEF(id, ...) [TCX_ACT_##id] = {__VA_ARGS__},
static const struct tcx_counter_def tcx_action_defs[TCX_ACT_CTR__MAX] = {
        TCX_ACTION_COUNTERS(TCX_ACT_DEF)};
#undef TCX_ACT_DEF
static const struct tcx_counter_table tcx_action_counters = {tcx_action_defs, TCX_ACT_CTR__MAX};

/* ---- the counters of a qdisc or a class (obj: "qdisc" or "class") ------------- */

#define TCX_QUEUE_COUNTERS(C, obj, sw_, sum_)                                                      \
	C(BYTES, .key = "bytes", .family = "tc_" obj "_bytes_total",                               \
	  .help = "Bytes the " obj " sent." sum_, .width = 64, .replace = 1, .expo = 0, .sw = sw_, \
	  .snmp_col = 8, .snmp = TCX_SNMP_COUNTER64,                                               \
	  .src = TCX_SRC(TCA_STATS_BASIC, gnet_stats_basic, bytes))                                \
	C(PACKETS, .key = "packets", .family = "tc_" obj "_packets_total",                         \
	  .help = "Packets the " obj " sent." sum_, .width = 64, .replace = 1, .expo = 1,          \
	  .sw = sw_, .snmp_col = 9, .snmp = TCX_SNMP_COUNTER64,                                    \
	  .src = TCX_SRC(TCA_STATS_BASIC, gnet_stats_basic, packets), .pkt64 = 1)                  \
	C(DROPS, .key = "drops", .family = "tc_" obj "_drops_total",                               \
	  .help = "Packets the " obj " dropped.", .width = 32, .expo = 2, .sw = sw_,               \
	  .snmp_col = 10, .snmp = TCX_SNMP_COUNTER32,                                              \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, drops))                                \
	C(OVERLIMITS, .key = "overlimits", .family = "tc_" obj "_overlimits_total",                \
	  .help = "Overlimit events of the " obj " (a packet held back or dropped over its "       \
	          "limit).",                                                                       \
	  .width = 32, .expo = 3, .sw = sw_, .snmp_col = 11, .snmp = TCX_SNMP_COUNTER32,           \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, overlimits))                           \
	C(REQUEUES, .key = "requeues", .family = "tc_" obj "_requeues_total",                      \
	  .help = "Packets the " obj " put back in its queue (the device was busy).", .width = 32, \
	  .expo = 4, .sw = sw_, .snmp_col = 12, .snmp = TCX_SNMP_COUNTER32,                        \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, requeues))                             \
	C(BACKLOG_BYTES, .key = "backlog_bytes", .family = "tc_" obj "_backlog_bytes",             \
	  .help = "Bytes in the " obj "'s queue now.", .type = TCX_METRIC_GAUGE, .width = 32,      \
	  .expo = 5, .sw = sw_, .snmp_col = 13, .snmp = TCX_SNMP_GAUGE32,                          \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, backlog))                              \
	C(BACKLOG_PACKETS, .key = "backlog_packets", .family = "tc_" obj "_backlog_packets",       \
	  .help = "Packets in the " obj "'s queue now.", .type = TCX_METRIC_GAUGE, .width = 32,    \
	  .expo = 6, .sw = sw_, .snmp_col = 14, .snmp = TCX_SNMP_GAUGE32,                          \
	  .src = TCX_SRC(TCA_STATS_QUEUE, gnet_stats_queue, qlen))                                 \
	C(RATE_BYTES, .key = "rate_bytes_per_second",                                              \
	  .family = "tc_" obj "_rate_bytes_per_second",                                            \
	  .help = "The kernel's rate estimate of the " obj ", in bytes per second (only where it " \
	          "keeps one: `estimator`, or a module parameter such as htb_rate_est).",          \
	  .type = TCX_METRIC_GAUGE, .width = 64, .expo = 7, .sw = sw_, .optional = 1,              \
	  .src = TCX_SRC(TCA_STATS_RATE_EST, gnet_stats_rate_est, bps))                            \
	C(RATE_PACKETS, .key = "rate_packets_per_second",                                          \
	  .family = "tc_" obj "_rate_packets_per_second",                                          \
	  .help = "The kernel's rate estimate of the " obj ", in packets per second (only where "  \
	          "it keeps one).",                                                                \
	  .type = TCX_METRIC_GAUGE, .width = 64, .expo = 8, .sw = sw_, .optional = 1,              \
	  .src = TCX_SRC(TCA_STATS_RATE_EST, gnet_stats_rate_est, pps))

#define TCX_QSTAT_ID(id, ...) TCX_QSTAT_##id,
enum tcx_qstat { TCX_QUEUE_COUNTERS(TCX_QSTAT_ID, "", 0, "") TCX_QSTAT__MAX };
#undef TCX_QSTAT_ID

#define TCX_QSTAT_DEF(id, ...) [TCX_QSTAT_##id] = {__VA_ARGS__},
static const struct tcx_counter_def tcx_qdisc_defs[TCX_QSTAT__MAX] = {TCX_QUEUE_COUNTERS(
        TCX_QSTAT_DEF, "qdisc", TCX_SW_QDISC,
        " An mq or mqprio root's is the sum of its children's: a device's total is its root's.")};
static const struct tcx_counter_def tcx_class_defs[TCX_QSTAT__MAX] = {
        TCX_QUEUE_COUNTERS(TCX_QSTAT_DEF, "class", TCX_SW_CLASS, "")};
#undef TCX_QSTAT_DEF
static const struct tcx_counter_table tcx_qdisc_counters = {tcx_qdisc_defs, TCX_QSTAT__MAX};
static const struct tcx_counter_table tcx_class_counters = {tcx_class_defs, TCX_QSTAT__MAX};

/* ---- the hit counters of a filter, kept by its classifier -------------------- */

/* A classifier's own counters of its rules (not its actions'): u32 keeps
 * lookups and hits with CONFIG_CLS_U32_PERF (TCA_U32_PCNT) and a mark's
 * matches with CONFIG_CLS_U32_MARK (TCA_U32_MARK, 32 bits), basic lookups
 * and hits (TCA_BASIC_PCNT), matchall hits (TCA_MATCHALL_PCNT). A filter
 * has those its kernel sends (tcx_filter.hv_present): a counter not kept is
 * absent, never 0 (in SNMP, the column has no instance for that filter).
 * u32 also counts each key's hits (tcx_filter.n_keys), the family
 * TCX_KEY_HITS_FAMILY, behind the switch `keys` (not in SNMP). */
#define TCX_FILTER_COUNTERS(C)                                                                     \
	C(LOOKUPS, .key = "lookups", .family = "tc_filter_lookups_total",                          \
	  .help = "Packets the filter was tried on (u32 with CONFIG_CLS_U32_PERF, basic).",        \
	  .width = 64, .replace = 1, .expo = 0, .sw = TCX_SW_HITS, .snmp_col = 12,                 \
	  .snmp = TCX_SNMP_COUNTER64)                                                              \
	C(HITS, .key = "hits", .family = "tc_filter_hits_total",                                   \
	  .help = "Packets the filter matched (u32 with CONFIG_CLS_U32_PERF, basic, matchall).",   \
	  .width = 64, .replace = 1, .expo = 1, .sw = TCX_SW_HITS, .snmp_col = 13,                 \
	  .snmp = TCX_SNMP_COUNTER64)                                                              \
	C(U32_MARK, .key = "u32_mark_success", .family = "tc_filter_u32_mark_success_total",       \
	  .help = "Packets whose mark matched the u32 filter's `mark` (CONFIG_CLS_U32_MARK; the "  \
	          "kernel counts in 32 bits).",                                                    \
	  .width = 32, .expo = 2, .sw = TCX_SW_HITS, .snmp_col = 14, .snmp = TCX_SNMP_COUNTER32)

#define TCX_FCTR_ID(id, ...) TCX_FCTR_##id,
enum tcx_filter_counter { TCX_FILTER_COUNTERS(TCX_FCTR_ID) TCX_FCTR__MAX };
#undef TCX_FCTR_ID

#define TCX_FCTR_DEF(id, ...) [TCX_FCTR_##id] = {__VA_ARGS__},
static const struct tcx_counter_def tcx_filter_defs[TCX_FCTR__MAX] = {
        TCX_FILTER_COUNTERS(TCX_FCTR_DEF)};
#undef TCX_FCTR_DEF
static const struct tcx_counter_table tcx_filter_counters = {tcx_filter_defs, TCX_FCTR__MAX};

/* A u32 filter's hits per key, label key="0", "1"...: its JSON key,
 * family and HELP (width 64, switch `keys`). */
#define TCX_KEY_HITS_KEY    "key_hits"
#define TCX_KEY_HITS_FAMILY "tc_filter_u32_key_hits_total"
#define TCX_KEY_HITS_HELP                                                                          \
	"Packets that matched each key of the u32 filter (its match lines, from 0; "               \
	"CONFIG_CLS_U32_PERF)."

/* ---- using a table ------------------------------------------------------------- */

/* a + b in the counter's width (the kernel's counter wraps there). */
static inline uint64_t tcx_counter_add(const struct tcx_counter_def *d, uint64_t a, uint64_t b)
{
	return d->width < 64 ? (a + b) & ((UINT64_C(1) << d->width) - 1) : a + b;
}

/* now - was in the counter's width: what it counted between the two reads,
 * across one wrap of the kernel's counter. */
static inline uint64_t tcx_counter_sub(const struct tcx_counter_def *d, uint64_t now, uint64_t was)
{
	return d->width < 64 ? (now - was) & ((UINT64_C(1) << d->width) - 1) : now - was;
}

/* Per row, a table's walks are unrolled: the table is known, the walk of a
 * row folds to what its counters need. */

/* Is `now` another object than `was` under the same identity: a counter
 * marked `replace` (bytes, packets) went down? Both hold t->n counters. */
static inline int tcx_counters_replaced(const struct tcx_counter_table *t, const uint64_t *was,
                                        const uint64_t *now)
{
	int lower = 0;

#pragma GCC unroll 32
	for (unsigned k = 0; k < t->n; k++)
		lower |= t->def[k].replace && now[k] < was[k];
	return lower;
}

/* Bit k set: c[k] is not 0 (c holds t->n counters). */
static inline uint32_t tcx_counters_nonzero(const struct tcx_counter_table *t, const uint64_t *c)
{
	uint32_t bits = 0;

#pragma GCC unroll 32
	for (unsigned k = 0; k < t->n; k++)
		bits |= (uint32_t)(c[k] != 0) << k;
	return bits;
}

/* Reading a statistics nest (TCA_STATS2, TCA_ACT_STATS) into the counters
 * of a table: tcx_stats_attr() takes one attribute of the nest. present gets
 * bit k for each counter k read; app, the TCA_STATS_APP attribute if any.
 * Inlined with a table known at compile time (a decoder's nest callback),
 * the walk of the table folds to the few counters of each attribute type. */
struct tcx_stats_ctx {
	uint64_t *c; /* indexed as the table */
	uint32_t present;
	const struct nlattr *app;
	uint16_t prev; /* the previous attribute's type, for PKT64 (pads skipped) */
};

static inline int tcx_stats_attr(const struct tcx_counter_table *t, struct tcx_stats_ctx *sc,
                                 const struct nlattr *a, struct tcx_perr *pe)
{
	uint16_t type = tcx_attr_type(a);
	uint8_t st[32]; /* the attribute's struct, zero-filled past a short payload */
	int found = 0, copied = 0;

	switch (type) {
	case TCA_STATS_PAD:
		return 0; /* nla_put_64bit()'s alignment: transparent to PKT64 */
	case TCA_STATS_APP:
		sc->app = a;
		break;
	case TCA_STATS_PKT64: {
		/* After BASIC (or BASIC_HW) when packets > U32_MAX. */
		uint64_t v = 0;

		if (tcx_attr_u64(a, "TCA_STATS_PKT64", &v, pe) < 0)
			return -1;
#pragma GCC unroll 32
		for (unsigned k = 0; k < t->n; k++)
			if (t->def[k].pkt64 && t->def[k].src.attr == sc->prev) {
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
#pragma GCC unroll 32
		for (unsigned k = 0; k < t->n; k++) {
			const struct tcx_counter_src *src = &t->def[k].src;
			const uint8_t *from;
			uint32_t v32;

			if (src->attr != type || src->offset + src->size > sizeof(st))
				continue;
			/* read in place when the payload holds the field (always,
			 * but from a kernel with a shorter struct) */
			if (src->offset + src->size <= tcx_attr_len(a)) {
				from = (const uint8_t *)tcx_attr_data(a) + src->offset;
			} else {
				if (!copied++)
					tcx_attr_struct(a, st, sizeof(st));
				from = st + src->offset;
			}
			if (src->size == 8) {
				memcpy(&sc->c[k], from, 8);
			} else {
				memcpy(&v32, from, 4);
				sc->c[k] = v32;
			}
			sc->present |= 1u << k;
		}
	}
	sc->prev = type;
	return 0;
}

#endif
