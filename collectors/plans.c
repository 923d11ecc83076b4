/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What qdiscs and classes were configured to do, from TCA_OPTIONS: one table
 * per kind and object (the kernel's <kind>_dump and <kind>_dump_class in
 * net/sched/sch_<kind>.c; what tc -d prints, iproute2 tc/q_<kind>.c).
 *
 * Naming rule, as collectors/xstats.c's: tc_<object>_<kind>_<field> after
 * the uapi member or tc's word for it, ending in its unit: rates in bytes
 * per second (_bytes_per_second, the 64-bit attribute where the kernel
 * sends one), bursts and sizes in bytes (_bytes), counts of packets
 * (_packets), counters in _total.
 *
 * Bursts: the kernel keeps a token bucket's depth as a time (psched ticks
 * of 64 ns in the dump); tc -d prints it in bytes at the bucket's rate,
 * truncating twice (tc_calc_xmitsize: whole microseconds, then whole
 * bytes). tcx_plans_burst() does the same, so that the figures equal what
 * operators read from tc. */
#include <linux/pkt_sched.h>
#include <stddef.h>
#include <string.h>

#include "collectors/nlattr.h"
#include "collectors/plans.h"

#define G TCX_XSTAT_GAUGE
#define C TCX_XSTAT_COUNTER

/* ticks per microsecond: /proc/net/psched's 1000 / 64 (PSCHED_SHIFT 6) */
#define TICKS_PER_US 15.625

uint64_t tcx_plans_burst(uint64_t rate, uint32_t ticks)
{
	unsigned int us = (unsigned int)(ticks / TICKS_PER_US);
	double bytes = (double)rate * us / 1000000.0;

	/* tc truncates to 32 bits, undefined past 4 GB; whole bytes, here in 64 */
	return bytes < 18446744073709549568.0 ? (uint64_t)bytes : UINT64_MAX;
}

#define ROW(fam, ty, hw, fl, at, of, a64, rt, un, hlp)                                             \
	{                                                                                          \
		.family = fam, .help = hlp, .unit = un, .type = ty, .how = hw, .flags = fl,        \
		.rate = rt, .attr = at, .off = of, .attr64 = a64                                   \
	}
#define N(a)     ((uint8_t)(sizeof(a) / sizeof((a)[0])))
#define HOPT(m)  offsetof(struct tc_htb_opt, m)
#define HGLOB(m) offsetof(struct tc_htb_glob, m)
#define TOPT(m)  offsetof(struct tc_tbf_qopt, m)

/* ---- htb (sch_htb.c htb_dump_class, htb_dump) -------------------------------------------- */

static const struct tcx_plan htb_class[] = {
        ROW("tc_class_htb_rate_bytes_per_second", G, TCX_PLAN_RATE, 0, TCA_HTB_PARMS,
            HOPT(rate.rate), TCA_HTB_RATE64, 0, "bytes_per_second",
            "The rate the class is guaranteed, in bytes per second (tc: rate)"),
        ROW("tc_class_htb_ceil_bytes_per_second", G, TCX_PLAN_RATE, 0, TCA_HTB_PARMS,
            HOPT(ceil.rate), TCA_HTB_CEIL64, 0, "bytes_per_second",
            "The most the class may send, borrowing, in bytes per second (tc: ceil)"),
        ROW("tc_class_htb_burst_bytes", G, TCX_PLAN_BURST, 0, TCA_HTB_PARMS, HOPT(buffer), 0, 0,
            "bytes", "Bytes the class may send at once above its rate (tc -d: burst)"),
        ROW("tc_class_htb_cburst_bytes", G, TCX_PLAN_BURST, 0, TCA_HTB_PARMS, HOPT(cbuffer), 0, 1,
            "bytes", "Bytes the class may send at once above its ceil (tc -d: cburst)"),
        ROW("tc_class_htb_prio", G, TCX_PLAN_U32, 0, TCA_HTB_PARMS, HOPT(prio), 0, 0, "",
            "Priority of the class for spare bandwidth: 0 first"),
        ROW("tc_class_htb_quantum_bytes", G, TCX_PLAN_U32, 0, TCA_HTB_PARMS, HOPT(quantum), 0, 0,
            "bytes", "Bytes the class sends in its turn when it borrows (tc: quantum)"),
        ROW("tc_class_htb_level", G, TCX_PLAN_U32, 0, TCA_HTB_PARMS, HOPT(level), 0, 0, "",
            "Level of the class in the tree: 0 for a leaf"),
};

static const struct tcx_plan htb_qdisc[] = {
        ROW("tc_qdisc_htb_default_class", G, TCX_PLAN_U32, 0, TCA_HTB_INIT, HGLOB(defcls), 0, 0, "",
            "Minor number of the class unclassified traffic goes to (tc: default; 0: sent "
            "directly)"),
        ROW("tc_qdisc_htb_r2q", G, TCX_PLAN_U32, 0, TCA_HTB_INIT, HGLOB(rate2quantum), 0, 0, "",
            "Divisor of a class's rate that gives its quantum when none is set (tc: r2q)"),
        ROW("tc_qdisc_htb_direct_packets_total", C, TCX_PLAN_U32, 0, TCA_HTB_INIT,
            HGLOB(direct_pkts), 0, 0, "",
            "Packets sent directly, past every class: unclassified with no default class "
            "(tc: direct_packets_stat)"),
        ROW("tc_qdisc_htb_direct_qlen_packets", G, TCX_PLAN_ATTR, 0, TCA_HTB_DIRECT_QLEN, 0, 0, 0,
            "packets", "Length of the queue of the packets sent directly (tc: direct_qlen)"),
};

/* ---- tbf (sch_tbf.c tbf_dump) ---------------------------------------------------------------- */

static const struct tcx_plan tbf_qdisc[] = {
        ROW("tc_qdisc_tbf_rate_bytes_per_second", G, TCX_PLAN_RATE, 0, TCA_TBF_PARMS,
            TOPT(rate.rate), TCA_TBF_RATE64, 0, "bytes_per_second",
            "The rate tokens fill the bucket at, in bytes per second (tc: rate)"),
        ROW("tc_qdisc_tbf_burst_bytes", G, TCX_PLAN_BURST, 0, TCA_TBF_PARMS, TOPT(buffer), 0, 0,
            "bytes", "Size of the bucket, in bytes (tc -d: burst)"),
        ROW("tc_qdisc_tbf_limit_bytes", G, TCX_PLAN_U32, 0, TCA_TBF_PARMS, TOPT(limit), 0, 0,
            "bytes", "Bytes that may wait in the queue for tokens (tc: limit)"),
        ROW("tc_qdisc_tbf_peakrate_bytes_per_second", G, TCX_PLAN_RATE, TCX_PLAN_NONZERO,
            TCA_TBF_PARMS, TOPT(peakrate.rate), TCA_TBF_PRATE64, 0, "bytes_per_second",
            "The peak rate, in bytes per second, where one is set (tc: peakrate)"),
        ROW("tc_qdisc_tbf_mtu_bytes", G, TCX_PLAN_BURST, TCX_PLAN_NONZERO, TCA_TBF_PARMS, TOPT(mtu),
            0, 3, "bytes",
            "Size of the peak-rate bucket, in bytes, where a peak rate is set (tc -d: mtu)"),
};

static const struct tcx_plans_table tables[] = {
        {"htb", 1, htb_class, N(htb_class)},
        {"htb", 0, htb_qdisc, N(htb_qdisc)},
        {"tbf", 0, tbf_qdisc, N(tbf_qdisc)},
};

const struct tcx_plans_table *const tcx_plans_tables[] = {&tables[0], &tables[1], &tables[2]};
const size_t tcx_plans_n_tables = sizeof(tables) / sizeof(tables[0]);

_Static_assert(sizeof(tables) / sizeof(tables[0]) ==
                       sizeof(tcx_plans_tables) / sizeof(tcx_plans_tables[0]),
               "every table is listed");

const struct tcx_plans_table *tcx_plans_lookup(const char *kind, int is_class)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (tables[i].is_class == !!is_class && strcmp(tables[i].kind, kind) == 0)
			return &tables[i];
	return NULL;
}

/* ---- decoding -------------------------------------------------------------------------------- */

#define MAX_ATTR 16 /* above every attribute type the tables read */

static int u32_at(const struct nlattr *a, uint16_t off, uint64_t *v)
{
	uint32_t x;

	if (!a || tcx_attr_len(a) < (size_t)off + sizeof(x))
		return 0;
	memcpy(&x, (const char *)tcx_attr_data(a) + off, sizeof(x));
	*v = x;
	return 1;
}

unsigned tcx_plans_decode(const struct tcx_plans_table *t, const struct nlattr *opts, uint64_t *v,
                          uint32_t *present)
{
	const struct nlattr *tb[MAX_ATTR] = {NULL};
	unsigned bad = 0;

	*present = 0;
	if (!t || !opts)
		return 0;
	if (tcx_attr_nested(opts, "TCA_OPTIONS", tcx_attr_tb_cb,
	                    &(struct tcx_attr_tb){tb, MAX_ATTR}, &(struct tcx_perr){NULL, 0}) < 0)
		return t->n; /* lengths that run past the nest: nothing can be read */
	for (unsigned i = 0; i < t->n; i++) {
		const struct tcx_plan *r = &t->rows[i];
		const struct nlattr *a = r->attr < MAX_ATTR ? tb[r->attr] : NULL;
		uint64_t x = 0;
		int ok;

		if (!a)
			continue; /* not sent: absent */
		switch (r->how) {
		case TCX_PLAN_ATTR:
			ok = u32_at(a, 0, &x);
			break;
		case TCX_PLAN_RATE:
			ok = u32_at(a, r->off, &x);
			if (ok && r->attr64 < MAX_ATTR && tb[r->attr64]) {
				if (tcx_attr_len(tb[r->attr64]) < sizeof(x))
					ok = 0;
				else
					memcpy(&x, tcx_attr_data(tb[r->attr64]), sizeof(x));
			}
			break;
		case TCX_PLAN_BURST:
			ok = u32_at(a, r->off, &x) && (*present & (1u << r->rate));
			if (ok)
				x = tcx_plans_burst(v[r->rate], (uint32_t)x);
			else if (!(*present & (1u << r->rate)) && u32_at(a, r->off, &x))
				continue; /* its rate is absent (none set): so is it */
			break;
		default:
			ok = u32_at(a, r->off, &x);
		}
		if (!ok) {
			bad++;
			continue;
		}
		if ((r->flags & TCX_PLAN_NONZERO) && !x)
			continue;
		v[i] = x;
		*present |= 1u << i;
	}
	return bad;
}
