/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a qdisc or a class was configured to do (its TCA_OPTIONS): rates,
 * bursts, limits, priorities. One table per kind and object, each row one
 * gauge (or counter) family; collectors/plans.c holds the tables and their
 * decoder. No I/O, nothing allocated. */
#ifndef TCX_PLANS_H
#define TCX_PLANS_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/xstats.h" /* enum tcx_xstat_type */

#define TCX_PLANS_MAX 16 /* rows of the longest table */

/* How a row's value is read from the options' nested attribute attr. */
enum tcx_plan_how {
	TCX_PLAN_U32,   /* a u32 at off in attr's struct */
	TCX_PLAN_ATTR,  /* attr is a u32 attribute itself */
	TCX_PLAN_RATE,  /* a struct tc_ratespec's rate at off, or the u64 attribute attr64 */
	TCX_PLAN_BURST, /* psched ticks at off, in bytes at the rate of row `rate`, as tc */
};

/* Row flags. */
#define TCX_PLAN_NONZERO 0x1 /* absent when 0 (tbf's peak rate, when none is set) */

struct tcx_plan {
	const char *family; /* tc_class_htb_rate_bytes_per_second */
	const char *help;
	const char *unit; /* its suffix: "bytes", "bytes_per_second", or "" */
	uint8_t type;     /* enum tcx_xstat_type */
	uint8_t how;      /* enum tcx_plan_how */
	uint8_t flags;    /* TCX_PLAN_* */
	uint8_t rate;     /* TCX_PLAN_BURST: the row of its rate */
	uint16_t attr;    /* the attribute in TCA_OPTIONS */
	uint16_t off;     /* of the field in attr's struct */
	uint16_t attr64;  /* TCX_PLAN_RATE: the u64 attribute that holds it, when sent */
};

struct tcx_plans_table {
	const char *kind;
	uint8_t is_class;
	const struct tcx_plan *rows;
	uint8_t n;
};

/* The table of a kind's qdisc (is_class 0) or class (1) options, or NULL. */
const struct tcx_plans_table *tcx_plans_lookup(const char *kind, int is_class);

extern const struct tcx_plans_table *const tcx_plans_tables[];
extern const size_t tcx_plans_n_tables;

/* Decode TCA_OPTIONS (opts) with table t: the rows read into v, bit i of
 * *present for row i. A row whose attribute is too short, or absent, is
 * absent. Returns how many rows could not be read from an attribute that
 * was there but malformed (to be counted), never fails. */
unsigned tcx_plans_decode(const struct tcx_plans_table *t, const struct nlattr *opts, uint64_t *v,
                          uint32_t *present);

/* tc's burst in bytes of `ticks` psched ticks at `rate` bytes per second
 * (iproute2's tc_calc_xmitsize() with 15.625 ticks per microsecond; past
 * 4 GB, where tc's 32-bit result is undefined, the whole bytes in 64 bits,
 * at most UINT64_MAX). */
uint64_t tcx_plans_burst(uint64_t rate, uint32_t ticks);

#endif
