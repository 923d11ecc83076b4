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

#include "config/xstats.h" /* enum tcx_xstat_type */

#define TCX_PLANS_MAX 16 /* rows of the longest table */

/* How a row's value is read. attr is an attribute in TCA_OPTIONS, or 0 for
 * the struct the options open with (the table's head: sfq, fifos, netem,
 * hfsc's qdisc). */
enum tcx_plan_how {
	TCX_PLAN_U32,    /* a u32 at off in attr's struct */
	TCX_PLAN_U16,    /* a u16 at off */
	TCX_PLAN_U8,     /* a u8 at off */
	TCX_PLAN_ATTR,   /* attr is a u32 attribute itself */
	TCX_PLAN_ATTR64, /* attr is a u64 attribute itself */
	TCX_PLAN_RATE,   /* a struct tc_ratespec's rate at off, or the u64 attribute attr64 */
	TCX_PLAN_BURST,  /* psched ticks at off, in bytes at the rate of row `rate`, as tc */
	TCX_PLAN_ENUM,   /* a u32 attribute naming a mode: value 1, its name in label `label` */
};

/* Row flags. */
#define TCX_PLAN_NONZERO    0x1 /* absent when 0 (tbf's peak rate, when none is set) */
#define TCX_PLAN_NOTALLONES 0x2 /* absent when ~0 (fq's maxrate, when unlimited) */
#define TCX_PLAN_POW2       0x4 /* the kernel sends log2 of it (fq's buckets) */

/* What a row means across kinds, for the views that show one figure of
 * each kind (the MIB's class and qdisc columns, the landing page): the
 * rate a class is guaranteed, the most it may send, a qdisc's limit. At
 * most one row of a table has each role. */
enum tcx_plan_role {
	TCX_ROLE_NONE,
	TCX_ROLE_RATE,    /* bytes per second: HTB rate, hfsc rt m2, tbf rate, cake bandwidth */
	TCX_ROLE_CEIL,    /* bytes per second: HTB ceil, hfsc ul m2 */
	TCX_ROLE_BURST,   /* bytes: HTB burst, tbf burst */
	TCX_ROLE_CBURST,  /* bytes: HTB cburst */
	TCX_ROLE_PRIO,    /* HTB prio */
	TCX_ROLE_QUANTUM, /* bytes */
	TCX_ROLE_LEVEL,   /* HTB level: 0 for a leaf */
	TCX_ROLE_LIMIT_PACKETS, /* a queue's limit in packets */
	TCX_ROLE_LIMIT_BYTES,   /* a queue's limit in bytes */
	TCX_ROLE_DEFAULT_CLASS, /* the minor of the default class (HTB, hfsc) */
	TCX_ROLE__MAX
};

struct tcx_plan {
	const char *family; /* tc_class_htb_rate_bytes_per_second */
	const char *help;
	const char *unit;  /* its suffix: "bytes", "bytes_per_second", "seconds", ... or "" */
	double div;        /* the value is raw / div (a time in seconds); 0: raw exactly */
	const char *label; /* TCX_PLAN_ENUM: the label, its values names[raw] */
	const char *const *names;
	uint8_t n_names;
	uint8_t type;    /* enum tcx_xstat_type */
	uint8_t how;     /* enum tcx_plan_how */
	uint8_t flags;   /* TCX_PLAN_* */
	uint8_t rate;    /* TCX_PLAN_BURST: the row of its rate */
	uint8_t role;    /* enum tcx_plan_role */
	uint16_t attr;   /* the attribute in TCA_OPTIONS; 0: the head struct */
	uint16_t off;    /* of the field in attr's struct */
	uint16_t attr64; /* TCX_PLAN_RATE: the u64 attribute that holds it, when sent */
};

struct tcx_plans_table {
	const char *kind;
	uint8_t is_class;
	/* Size of the struct TCA_OPTIONS opens with (rows of attr 0), its
	 * attributes after it (NLA_ALIGN); 0: attributes only. */
	uint16_t head;
	const struct tcx_plan *rows;
	uint8_t n;
};

/* The table of a kind's qdisc (is_class 0) or class (1) options, or NULL. */
const struct tcx_plans_table *tcx_plans_lookup(const char *kind, int is_class);

extern const struct tcx_plans_table *const tcx_plans_tables[];
extern const size_t tcx_plans_n_tables;
/* A table's place in tcx_plans_tables[]. */
unsigned tcx_plans_id(const struct tcx_plans_table *t);

/* Decode TCA_OPTIONS (opts) with table t: the rows read into v, bit i of
 * *present for row i. A row whose attribute is too short, or absent, is
 * absent, its value 0 (v[0..t->n) are all written). Returns how many rows
 * could not be read from an attribute that was there but malformed (to be
 * counted), never fails. */
unsigned tcx_plans_decode(const struct tcx_plans_table *t, const struct nlattr *opts, uint64_t *v,
                          uint32_t *present);

/* tc's burst in bytes of `ticks` psched ticks at `rate` bytes per second
 * (iproute2's tc_calc_xmitsize() with 15.625 ticks per microsecond; past
 * 4 GB, where tc's 32-bit result is undefined, the whole bytes in 64 bits,
 * at most UINT64_MAX). */
uint64_t tcx_plans_burst(uint64_t rate, uint32_t ticks);

/* The value of the row of table t with role `role` (v and present as
 * tcx_plans_decode() left them) into *out, in the role's unit. Returns 0
 * when t has no such row or it is absent. */
int tcx_plans_role(const struct tcx_plans_table *t, const uint64_t *v, uint32_t present,
                   enum tcx_plan_role role, uint64_t *out);

/* Write row r's value raw as text: exactly, the integer or a time in
 * seconds with the digits of its unit; for TCX_PLAN_ENUM rows, 1. */
struct tcx_buf;
void tcx_plan_put(struct tcx_buf *b, const struct tcx_plan *r, uint64_t raw);

/* Row r's label value for raw (TCX_PLAN_ENUM): its name, or NULL when raw
 * names nothing we know (the row is then absent). */
const char *tcx_plan_label(const struct tcx_plan *r, uint64_t raw);

#endif
