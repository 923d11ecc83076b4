/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What qdiscs and classes were configured to do, from TCA_OPTIONS: one table
 * per kind and object (the kernel's <kind>_dump and <kind>_dump_class in
 * net/sched/sch_<kind>.c; what tc -d prints, iproute2 tc/q_<kind>.c).
 *
 * Naming rule, as config/xstats.c's: tc_<object>_<kind>_<field> after
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
#include "config/xstats.h"

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

#define N(a)     ((uint8_t)(sizeof(a) / sizeof((a)[0])))
#define HOPT(m)  offsetof(struct tc_htb_opt, m)
#define HGLOB(m) offsetof(struct tc_htb_glob, m)
#define TOPT(m)  offsetof(struct tc_tbf_qopt, m)
#define US       1e6 /* a time in microseconds */
#define MS       1e3
#define NS       1e9

/* ---- htb (sch_htb.c htb_dump_class, htb_dump) -------------------------------------------- */

static const struct tcx_plan htb_class[] = {
        {.family = "tc_class_htb_rate_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_RATE,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(rate.rate),
         .attr64 = TCA_HTB_RATE64,
         .role = TCX_ROLE_RATE,
         .unit = "bytes_per_second",
         .help = "The rate the class is guaranteed, in bytes per second (tc: rate)"},
        {.family = "tc_class_htb_ceil_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_RATE,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(ceil.rate),
         .attr64 = TCA_HTB_CEIL64,
         .role = TCX_ROLE_CEIL,
         .unit = "bytes_per_second",
         .help = "The most the class may send, borrowing, in bytes per second (tc: ceil)"},
        {.family = "tc_class_htb_burst_bytes",
         .type = G,
         .how = TCX_PLAN_BURST,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(buffer),
         .rate = 0,
         .role = TCX_ROLE_BURST,
         .unit = "bytes",
         .help = "Bytes the class may send at once above its rate (tc -d: burst)"},
        {.family = "tc_class_htb_cburst_bytes",
         .type = G,
         .how = TCX_PLAN_BURST,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(cbuffer),
         .rate = 1,
         .role = TCX_ROLE_CBURST,
         .unit = "bytes",
         .help = "Bytes the class may send at once above its ceil (tc -d: cburst)"},
        {.family = "tc_class_htb_prio",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(prio),
         .role = TCX_ROLE_PRIO,
         .unit = "",
         .help = "Priority of the class for spare bandwidth: 0 first"},
        {.family = "tc_class_htb_quantum_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(quantum),
         .role = TCX_ROLE_QUANTUM,
         .unit = "bytes",
         .help = "Bytes the class sends in its turn when it borrows (tc: quantum)"},
        {.family = "tc_class_htb_level",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_PARMS,
         .off = HOPT(level),
         .role = TCX_ROLE_LEVEL,
         .unit = "",
         .help = "Level of the class in the tree: 0 for a leaf"},
};

static const struct tcx_plan htb_qdisc[] = {
        {.family = "tc_qdisc_htb_default_class",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_INIT,
         .off = HGLOB(defcls),
         .role = TCX_ROLE_DEFAULT_CLASS,
         .unit = "",
         .help = "Minor number of the class unclassified traffic goes to (tc: default; 0: sent "
                 "directly)"},
        {.family = "tc_qdisc_htb_r2q",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_INIT,
         .off = HGLOB(rate2quantum),
         .unit = "",
         .help = "Divisor of a class's rate that gives its quantum when none is set (tc: r2q)"},
        {.family = "tc_qdisc_htb_direct_packets_total",
         .type = C,
         .how = TCX_PLAN_U32,
         .attr = TCA_HTB_INIT,
         .off = HGLOB(direct_pkts),
         .unit = "",
         .help = "Packets sent directly, past every class: unclassified with no default class "
                 "(tc: direct_packets_stat)"},
        {.family = "tc_qdisc_htb_direct_qlen_packets",
         .type = G,
         .how = TCX_PLAN_ATTR,
         .attr = TCA_HTB_DIRECT_QLEN,
         .unit = "packets",
         .help = "Length of the queue of the packets sent directly (tc: direct_qlen)"},
};

/* ---- tbf (sch_tbf.c tbf_dump) ---------------------------------------------------------------- */

static const struct tcx_plan tbf_qdisc[] = {
        {.family = "tc_qdisc_tbf_rate_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_RATE,
         .attr = TCA_TBF_PARMS,
         .off = TOPT(rate.rate),
         .attr64 = TCA_TBF_RATE64,
         .role = TCX_ROLE_RATE,
         .unit = "bytes_per_second",
         .help = "The rate tokens fill the bucket at, in bytes per second (tc: rate)"},
        {.family = "tc_qdisc_tbf_burst_bytes",
         .type = G,
         .how = TCX_PLAN_BURST,
         .attr = TCA_TBF_PARMS,
         .off = TOPT(buffer),
         .rate = 0,
         .role = TCX_ROLE_BURST,
         .unit = "bytes",
         .help = "Size of the bucket, in bytes (tc -d: burst)"},
        {.family = "tc_qdisc_tbf_limit_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_TBF_PARMS,
         .off = TOPT(limit),
         .role = TCX_ROLE_LIMIT_BYTES,
         .unit = "bytes",
         .help = "Bytes that may wait in the queue for tokens (tc: limit)"},
        {.family = "tc_qdisc_tbf_peakrate_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_RATE,
         .flags = TCX_PLAN_NONZERO,
         .attr = TCA_TBF_PARMS,
         .off = TOPT(peakrate.rate),
         .attr64 = TCA_TBF_PRATE64,
         .unit = "bytes_per_second",
         .help = "The peak rate, in bytes per second, where one is set (tc: peakrate)"},
        {.family = "tc_qdisc_tbf_mtu_bytes",
         .type = G,
         .how = TCX_PLAN_BURST,
         .flags = TCX_PLAN_NONZERO,
         .attr = TCA_TBF_PARMS,
         .off = TOPT(mtu),
         .rate = 3,
         .unit = "bytes",
         .help = "Size of the peak-rate bucket, in bytes, where a peak rate is set (tc -d: mtu)"},
};

/* ---- hfsc (sch_hfsc.c hfsc_dump_class_qopt, hfsc_dump_qdisc) ------------------------------ */

/* A service curve, one of rt (TCA_HFSC_RSC), ls (FSC), ul (USC): sent only
 * where the class has it. m1 and m2 in bytes per second, d in us. */
#define CURVE(c, a, role2, what)                                                                   \
	{.family = "tc_class_hfsc_" c "_m1_bytes_per_second",                                      \
	 .type = G,                                                                                \
	 .how = TCX_PLAN_U32,                                                                      \
	 .attr = a,                                                                                \
	 .off = offsetof(struct tc_service_curve, m1),                                             \
	 .unit = "bytes_per_second",                                                               \
	 .help = "Slope of the first segment of the " what " curve, in bytes per second (tc: " c   \
	         " m1)"},                                                                          \
	        {.family = "tc_class_hfsc_" c "_m1_duration_seconds",                              \
	         .type = G,                                                                        \
	         .how = TCX_PLAN_U32,                                                              \
	         .attr = a,                                                                        \
	         .off = offsetof(struct tc_service_curve, d),                                      \
	         .div = US,                                                                        \
	         .unit = "seconds",                                                                \
	         .help = "Length of the first segment of the " what " curve, in seconds (tc: " c   \
	                 " d)"},                                                                   \
	{                                                                                          \
		.family = "tc_class_hfsc_" c "_m2_bytes_per_second", .type = G,                    \
		.how = TCX_PLAN_U32, .attr = a, .off = offsetof(struct tc_service_curve, m2),      \
		.role = role2, .unit = "bytes_per_second",                                         \
		.help = "Slope of the second segment of the " what " curve, in bytes per second "  \
		        "(tc: " c " m2)"                                                           \
	}

static const struct tcx_plan hfsc_class[] = {
        CURVE("rt", TCA_HFSC_RSC, TCX_ROLE_RATE, "real-time"),
        CURVE("ls", TCA_HFSC_FSC, TCX_ROLE_NONE, "link-sharing"),
        CURVE("ul", TCA_HFSC_USC, TCX_ROLE_CEIL, "upper-limit"),
};

static const struct tcx_plan hfsc_qdisc[] = {
        {.family = "tc_qdisc_hfsc_default_class",
         .type = G,
         .how = TCX_PLAN_U16,
         .attr = 0,
         .off = offsetof(struct tc_hfsc_qopt, defcls),
         .role = TCX_ROLE_DEFAULT_CLASS,
         .unit = "",
         .help = "Minor number of the class unclassified traffic goes to (tc: default; 0: "
                 "dropped)"},
};

/* ---- cake (sch_cake.c cake_dump; its memory limit is in its statistics) ------------------- */

static const char *const cake_diffserv[] = {"diffserv3", "diffserv4", "diffserv8", "besteffort",
                                            "precedence"};
static const char *const cake_flow[] = {"flowblind",    "srchost",       "dsthost",
                                        "hosts",        "flows",         "dual-srchost",
                                        "dual-dsthost", "triple-isolate"};

static const struct tcx_plan cake_qdisc[] = {
        {.family = "tc_qdisc_cake_bandwidth_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_ATTR64,
         .flags = TCX_PLAN_NONZERO,
         .attr = TCA_CAKE_BASE_RATE64,
         .role = TCX_ROLE_RATE,
         .unit = "bytes_per_second",
         .help = "The rate cake shapes to, in bytes per second, where one is set (tc: "
                 "bandwidth)"},
        {.family = "tc_qdisc_cake_rtt_seconds",
         .type = G,
         .how = TCX_PLAN_ATTR,
         .attr = TCA_CAKE_RTT,
         .div = US,
         .unit = "seconds",
         .help = "The round-trip time cake's queues are tuned for, in seconds (tc: rtt)"},
        {.family = "tc_qdisc_cake_diffserv_info",
         .type = G,
         .how = TCX_PLAN_ENUM,
         .attr = TCA_CAKE_DIFFSERV_MODE,
         .label = "diffserv",
         .names = cake_diffserv,
         .n_names = N(cake_diffserv),
         .unit = "",
         .help = "The way cake sorts packets into tins, in label diffserv (tc: diffserv3, "
                 "besteffort, ...); 1"},
        {.family = "tc_qdisc_cake_flow_mode_info",
         .type = G,
         .how = TCX_PLAN_ENUM,
         .attr = TCA_CAKE_FLOW_MODE,
         .label = "flow_mode",
         .names = cake_flow,
         .n_names = N(cake_flow),
         .unit = "",
         .help = "The way cake isolates flows, in label flow_mode (tc: triple-isolate, "
                 "flows, ...); 1"},
};

/* ---- the AQMs and fair queues: limits, targets, intervals ------------------------------------- */

#define U32ATTR(fam, a, dv, un, rl, fl, hlp)                                                       \
	{                                                                                          \
		.family = fam, .type = G, .how = TCX_PLAN_ATTR, .attr = a, .div = dv, .unit = un,  \
		.role = rl, .flags = fl, .help = hlp                                               \
	}

static const struct tcx_plan fq_codel_qdisc[] = {
        U32ATTR("tc_qdisc_fq_codel_limit_packets", TCA_FQ_CODEL_LIMIT, 0, "packets",
                TCX_ROLE_LIMIT_PACKETS, 0, "Packets the qdisc may hold (tc: limit)"),
        U32ATTR("tc_qdisc_fq_codel_flows", TCA_FQ_CODEL_FLOWS, 0, "", 0, 0,
                "Number of flow queues (tc: flows)"),
        U32ATTR("tc_qdisc_fq_codel_quantum_bytes", TCA_FQ_CODEL_QUANTUM, 0, "bytes",
                TCX_ROLE_QUANTUM, 0, "Bytes a flow sends in its turn (tc: quantum)"),
        U32ATTR("tc_qdisc_fq_codel_target_seconds", TCA_FQ_CODEL_TARGET, US, "seconds", 0, 0,
                "The queueing delay CoDel aims for, in seconds (tc: target)"),
        U32ATTR("tc_qdisc_fq_codel_interval_seconds", TCA_FQ_CODEL_INTERVAL, US, "seconds", 0, 0,
                "The window the delay is judged over, in seconds (tc: interval)"),
        U32ATTR("tc_qdisc_fq_codel_ce_threshold_seconds", TCA_FQ_CODEL_CE_THRESHOLD, US, "seconds",
                0, 0,
                "The delay above which packets are marked CE, in seconds, where one is set "
                "(tc: ce_threshold)"),
        U32ATTR("tc_qdisc_fq_codel_memory_limit_bytes", TCA_FQ_CODEL_MEMORY_LIMIT, 0, "bytes",
                TCX_ROLE_LIMIT_BYTES, 0, "Bytes the qdisc may hold (tc: memory_limit)"),
        U32ATTR("tc_qdisc_fq_codel_drop_batch_packets", TCA_FQ_CODEL_DROP_BATCH_SIZE, 0, "packets",
                0, 0,
                "Packets dropped at once when the qdisc is full (tc: "
                "drop_batch)"),
        U32ATTR("tc_qdisc_fq_codel_ecn", TCA_FQ_CODEL_ECN, 0, "", 0, 0,
                "1 when packets are marked ECN rather than dropped (tc: ecn)"),
};

static const struct tcx_plan codel_qdisc[] = {
        U32ATTR("tc_qdisc_codel_limit_packets", TCA_CODEL_LIMIT, 0, "packets",
                TCX_ROLE_LIMIT_PACKETS, 0, "Packets the qdisc may hold (tc: limit)"),
        U32ATTR("tc_qdisc_codel_target_seconds", TCA_CODEL_TARGET, US, "seconds", 0, 0,
                "The queueing delay CoDel aims for, in seconds (tc: target)"),
        U32ATTR("tc_qdisc_codel_interval_seconds", TCA_CODEL_INTERVAL, US, "seconds", 0, 0,
                "The window the delay is judged over, in seconds (tc: interval)"),
        U32ATTR("tc_qdisc_codel_ce_threshold_seconds", TCA_CODEL_CE_THRESHOLD, US, "seconds", 0, 0,
                "The delay above which packets are marked CE, in seconds, where one is set "
                "(tc: ce_threshold)"),
        U32ATTR("tc_qdisc_codel_ecn", TCA_CODEL_ECN, 0, "", 0, 0,
                "1 when packets are marked ECN rather than dropped (tc: ecn)"),
};

static const struct tcx_plan fq_qdisc[] = {
        U32ATTR("tc_qdisc_fq_limit_packets", TCA_FQ_PLIMIT, 0, "packets", TCX_ROLE_LIMIT_PACKETS, 0,
                "Packets the qdisc may hold (tc: limit)"),
        U32ATTR("tc_qdisc_fq_flow_limit_packets", TCA_FQ_FLOW_PLIMIT, 0, "packets", 0, 0,
                "Packets one flow may hold (tc: flow_limit)"),
        U32ATTR("tc_qdisc_fq_quantum_bytes", TCA_FQ_QUANTUM, 0, "bytes", TCX_ROLE_QUANTUM, 0,
                "Bytes a flow sends in its turn (tc: quantum)"),
        U32ATTR("tc_qdisc_fq_initial_quantum_bytes", TCA_FQ_INITIAL_QUANTUM, 0, "bytes", 0, 0,
                "Bytes a new flow sends in its first turn (tc: initial_quantum)"),
        U32ATTR("tc_qdisc_fq_maxrate_bytes_per_second", TCA_FQ_FLOW_MAX_RATE, 0, "bytes_per_second",
                0, TCX_PLAN_NOTALLONES,
                "The most one flow may send, in bytes per second, where one is set (tc: "
                "maxrate)"),
        U32ATTR("tc_qdisc_fq_buckets", TCA_FQ_BUCKETS_LOG, 0, "", 0, TCX_PLAN_POW2,
                "Number of hash buckets of flows (tc: buckets)"),
        U32ATTR("tc_qdisc_fq_refill_delay_seconds", TCA_FQ_FLOW_REFILL_DELAY, US, "seconds", 0, 0,
                "Delay before a flow's credit is refilled, in seconds (tc: refill_delay)"),
        U32ATTR("tc_qdisc_fq_low_rate_threshold_bytes_per_second", TCA_FQ_LOW_RATE_THRESHOLD, 0,
                "bytes_per_second", 0, 0,
                "Below this rate a flow's packets are paced one by one, in bytes per second "
                "(tc: low_rate_threshold)"),
        U32ATTR("tc_qdisc_fq_ce_threshold_seconds", TCA_FQ_CE_THRESHOLD, US, "seconds", 0,
                TCX_PLAN_NOTALLONES,
                "The delay above which packets are marked CE, in seconds, where one is set "
                "(tc: ce_threshold)"),
        U32ATTR("tc_qdisc_fq_horizon_seconds", TCA_FQ_HORIZON, US, "seconds", 0, 0,
                "How far in the future a packet's departure time may be, in seconds (tc: "
                "horizon)"),
};

static const struct tcx_plan fq_pie_qdisc[] = {
        U32ATTR("tc_qdisc_fq_pie_limit_packets", TCA_FQ_PIE_LIMIT, 0, "packets",
                TCX_ROLE_LIMIT_PACKETS, 0, "Packets the qdisc may hold (tc: limit)"),
        U32ATTR("tc_qdisc_fq_pie_flows", TCA_FQ_PIE_FLOWS, 0, "", 0, 0,
                "Number of flow queues (tc: flows)"),
        U32ATTR("tc_qdisc_fq_pie_quantum_bytes", TCA_FQ_PIE_QUANTUM, 0, "bytes", TCX_ROLE_QUANTUM,
                0, "Bytes a flow sends in its turn (tc: quantum)"),
        U32ATTR("tc_qdisc_fq_pie_target_seconds", TCA_FQ_PIE_TARGET, US, "seconds", 0, 0,
                "The queueing delay PIE aims for, in seconds (tc: target)"),
        U32ATTR("tc_qdisc_fq_pie_tupdate_seconds", TCA_FQ_PIE_TUPDATE, US, "seconds", 0, 0,
                "How often the drop probability is updated, in seconds (tc: tupdate)"),
        U32ATTR("tc_qdisc_fq_pie_memory_limit_bytes", TCA_FQ_PIE_MEMORY_LIMIT, 0, "bytes",
                TCX_ROLE_LIMIT_BYTES, 0, "Bytes the qdisc may hold (tc: memory_limit)"),
        U32ATTR("tc_qdisc_fq_pie_ecn", TCA_FQ_PIE_ECN, 0, "", 0, 0,
                "1 when packets are marked ECN rather than dropped (tc: ecn)"),
};

static const struct tcx_plan pie_qdisc[] = {
        U32ATTR("tc_qdisc_pie_limit_packets", TCA_PIE_LIMIT, 0, "packets", TCX_ROLE_LIMIT_PACKETS,
                0, "Packets the qdisc may hold (tc: limit)"),
        U32ATTR("tc_qdisc_pie_target_seconds", TCA_PIE_TARGET, US, "seconds", 0, 0,
                "The queueing delay PIE aims for, in seconds (tc: target)"),
        U32ATTR("tc_qdisc_pie_tupdate_seconds", TCA_PIE_TUPDATE, US, "seconds", 0, 0,
                "How often the drop probability is updated, in seconds (tc: tupdate)"),
        U32ATTR("tc_qdisc_pie_ecn", TCA_PIE_ECN, 0, "", 0, 0,
                "1 when packets are marked ECN rather than dropped (tc: ecn)"),
        U32ATTR("tc_qdisc_pie_bytemode", TCA_PIE_BYTEMODE, 0, "", 0, 0,
                "1 when the drop probability scales with packet size (tc: bytemode)"),
};

/* red and choke: struct tc_red_qopt, in bytes for red, in packets for choke */
#define ROPT(m) offsetof(struct tc_red_qopt, m)

static const struct tcx_plan red_qdisc[] = {
        {.family = "tc_qdisc_red_limit_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_RED_PARMS,
         .off = ROPT(limit),
         .role = TCX_ROLE_LIMIT_BYTES,
         .unit = "bytes",
         .help = "Bytes the queue may hold (tc: limit)"},
        {.family = "tc_qdisc_red_min_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_RED_PARMS,
         .off = ROPT(qth_min),
         .unit = "bytes",
         .help = "Average queue size where marking may start, in bytes (tc: min)"},
        {.family = "tc_qdisc_red_max_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_RED_PARMS,
         .off = ROPT(qth_max),
         .unit = "bytes",
         .help = "Average queue size where the probability is highest, in bytes (tc: max)"},
        {.family = "tc_qdisc_red_probability_ratio",
         .type = G,
         .how = TCX_PLAN_ATTR,
         .attr = TCA_RED_MAX_P,
         .div = 4294967296.0,
         .unit = "ratio",
         .help = "The highest probability of marking, from 0 to 1 (tc: probability)"},
};

static const struct tcx_plan choke_qdisc[] = {
        {.family = "tc_qdisc_choke_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_CHOKE_PARMS,
         .off = ROPT(limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the queue may hold (tc: limit)"},
        {.family = "tc_qdisc_choke_min_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_CHOKE_PARMS,
         .off = ROPT(qth_min),
         .unit = "packets",
         .help = "Average queue length where marking may start, in packets (tc: min)"},
        {.family = "tc_qdisc_choke_max_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_CHOKE_PARMS,
         .off = ROPT(qth_max),
         .unit = "packets",
         .help = "Average queue length where the probability is highest, in packets (tc: max)"},
        {.family = "tc_qdisc_choke_probability_ratio",
         .type = G,
         .how = TCX_PLAN_ATTR,
         .attr = TCA_CHOKE_MAX_P,
         .div = 4294967296.0,
         .unit = "ratio",
         .help = "The highest probability of marking, from 0 to 1 (tc: probability)"},
};

#define SFBOPT(m) offsetof(struct tc_sfb_qopt, m)

static const struct tcx_plan sfb_qdisc[] = {
        {.family = "tc_qdisc_sfb_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the qdisc may hold (tc: limit)"},
        {.family = "tc_qdisc_sfb_max_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(max),
         .unit = "packets",
         .help = "Packets one bin may hold (tc: max)"},
        {.family = "tc_qdisc_sfb_target_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(bin_size),
         .unit = "packets",
         .help = "The length of a bin's queue SFB aims for, in packets (tc: target)"},
        {.family = "tc_qdisc_sfb_rehash_seconds",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(rehash_interval),
         .div = MS,
         .unit = "seconds",
         .help = "How often the hash is changed, in seconds (tc: rehash)"},
        {.family = "tc_qdisc_sfb_db_seconds",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(warmup_time),
         .div = MS,
         .unit = "seconds",
         .help = "How long the new hash warms up before it is used, in seconds (tc: db)"},
        {.family = "tc_qdisc_sfb_penalty_rate_packets_per_second",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(penalty_rate),
         .unit = "packets_per_second",
         .help = "The rate inelastic flows are limited to, in packets per second (tc: "
                 "penalty_rate)"},
        {.family = "tc_qdisc_sfb_penalty_burst_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = TCA_SFB_PARMS,
         .off = SFBOPT(penalty_burst),
         .unit = "packets",
         .help = "The burst inelastic flows may send, in packets (tc: penalty_burst)"},
};

/* ---- options that are a struct (sfq, the fifos, netem's head) ----------------------------- */

#define SFQ(m) offsetof(struct tc_sfq_qopt_v1, m)

static const struct tcx_plan sfq_qdisc[] = {
        {.family = "tc_qdisc_sfq_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(v0.limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the qdisc may hold (tc: limit)"},
        {.family = "tc_qdisc_sfq_quantum_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(v0.quantum),
         .role = TCX_ROLE_QUANTUM,
         .unit = "bytes",
         .help = "Bytes a flow sends in its turn (tc: quantum)"},
        {.family = "tc_qdisc_sfq_perturb_seconds",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(v0.perturb_period),
         .unit = "seconds",
         .help = "How often the hash is changed, in seconds; 0: never (tc: perturb)"},
        {.family = "tc_qdisc_sfq_divisor",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(v0.divisor),
         .unit = "",
         .help = "Number of hash buckets (tc: divisor)"},
        {.family = "tc_qdisc_sfq_flows",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(v0.flows),
         .unit = "",
         .help = "Most flows at once (tc: flows)"},
        {.family = "tc_qdisc_sfq_depth_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = SFQ(depth),
         .unit = "packets",
         .help = "Packets one flow may hold (tc: depth)"},
};

static const struct tcx_plan pfifo_qdisc[] = {
        {.family = "tc_qdisc_pfifo_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = offsetof(struct tc_fifo_qopt, limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the queue may hold (tc: limit)"},
};

static const struct tcx_plan pfifo_head_drop_qdisc[] = {
        {.family = "tc_qdisc_pfifo_head_drop_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = offsetof(struct tc_fifo_qopt, limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the queue may hold (tc: limit)"},
};

static const struct tcx_plan bfifo_qdisc[] = {
        {.family = "tc_qdisc_bfifo_limit_bytes",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = offsetof(struct tc_fifo_qopt, limit),
         .role = TCX_ROLE_LIMIT_BYTES,
         .unit = "bytes",
         .help = "Bytes the queue may hold (tc: limit)"},
};

#define NOPT(m) offsetof(struct tc_netem_qopt, m)

/* sch_netem.c netem_dump: struct tc_netem_qopt, then attributes; the
 * delays in ns in the 64-bit attributes (the struct's are in ticks,
 * capped) */
static const struct tcx_plan netem_qdisc[] = {
        {.family = "tc_qdisc_netem_limit_packets",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = NOPT(limit),
         .role = TCX_ROLE_LIMIT_PACKETS,
         .unit = "packets",
         .help = "Packets the queue may hold (tc: limit)"},
        {.family = "tc_qdisc_netem_delay_seconds",
         .type = G,
         .how = TCX_PLAN_ATTR64,
         .attr = TCA_NETEM_LATENCY64,
         .div = NS,
         .unit = "seconds",
         .help = "The delay added to each packet, in seconds (tc: delay)"},
        {.family = "tc_qdisc_netem_jitter_seconds",
         .type = G,
         .how = TCX_PLAN_ATTR64,
         .attr = TCA_NETEM_JITTER64,
         .div = NS,
         .unit = "seconds",
         .help = "The random variation of the delay, in seconds (tc: delay's second figure)"},
        {.family = "tc_qdisc_netem_loss_ratio",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = NOPT(loss),
         .div = 4294967295.0,
         .unit = "ratio",
         .help = "The chance a packet is lost, from 0 to 1 (tc: loss random)"},
        {.family = "tc_qdisc_netem_duplicate_ratio",
         .type = G,
         .how = TCX_PLAN_U32,
         .attr = 0,
         .off = NOPT(duplicate),
         .div = 4294967295.0,
         .unit = "ratio",
         .help = "The chance a packet is duplicated, from 0 to 1 (tc: duplicate)"},
        {.family = "tc_qdisc_netem_rate_bytes_per_second",
         .type = G,
         .how = TCX_PLAN_RATE,
         .flags = TCX_PLAN_NONZERO,
         .attr = TCA_NETEM_RATE,
         .off = offsetof(struct tc_netem_rate, rate),
         .attr64 = TCA_NETEM_RATE64,
         .role = TCX_ROLE_RATE,
         .unit = "bytes_per_second",
         .help = "The rate the queue is sent at, in bytes per second, where one is set (tc: "
                 "rate)"},
};

static const struct tcx_plans_table tables[] = {
        {"htb", 1, 0, htb_class, N(htb_class)},
        {"htb", 0, 0, htb_qdisc, N(htb_qdisc)},
        {"tbf", 0, 0, tbf_qdisc, N(tbf_qdisc)},
        {"hfsc", 1, 0, hfsc_class, N(hfsc_class)},
        {"hfsc", 0, sizeof(struct tc_hfsc_qopt), hfsc_qdisc, N(hfsc_qdisc)},
        {"cake", 0, 0, cake_qdisc, N(cake_qdisc)},
        {"fq_codel", 0, 0, fq_codel_qdisc, N(fq_codel_qdisc)},
        {"codel", 0, 0, codel_qdisc, N(codel_qdisc)},
        {"fq", 0, 0, fq_qdisc, N(fq_qdisc)},
        {"fq_pie", 0, 0, fq_pie_qdisc, N(fq_pie_qdisc)},
        {"pie", 0, 0, pie_qdisc, N(pie_qdisc)},
        {"red", 0, 0, red_qdisc, N(red_qdisc)},
        {"choke", 0, 0, choke_qdisc, N(choke_qdisc)},
        {"sfb", 0, 0, sfb_qdisc, N(sfb_qdisc)},
        /* sfq sends the v1 struct since Linux 3.3; a shorter one is malformed */
        {"sfq", 0, sizeof(struct tc_sfq_qopt_v1), sfq_qdisc, N(sfq_qdisc)},
        {"pfifo", 0, sizeof(struct tc_fifo_qopt), pfifo_qdisc, N(pfifo_qdisc)},
        {"pfifo_head_drop", 0, sizeof(struct tc_fifo_qopt), pfifo_head_drop_qdisc,
         N(pfifo_head_drop_qdisc)},
        {"bfifo", 0, sizeof(struct tc_fifo_qopt), bfifo_qdisc, N(bfifo_qdisc)},
        {"netem", 0, sizeof(struct tc_netem_qopt), netem_qdisc, N(netem_qdisc)},
};

#define NT (sizeof(tables) / sizeof(tables[0]))

const struct tcx_plans_table *const tcx_plans_tables[] = {
        &tables[0],  &tables[1],  &tables[2],  &tables[3],  &tables[4],  &tables[5],  &tables[6],
        &tables[7],  &tables[8],  &tables[9],  &tables[10], &tables[11], &tables[12], &tables[13],
        &tables[14], &tables[15], &tables[16], &tables[17], &tables[18]};
const size_t tcx_plans_n_tables = NT;

_Static_assert(NT == sizeof(tcx_plans_tables) / sizeof(tcx_plans_tables[0]),
               "every table is listed");
_Static_assert(NT < UINT8_MAX, "tcx_qrow.pt_id: a table's place + 1 in a byte");

unsigned tcx_plans_id(const struct tcx_plans_table *t)
{
	return (unsigned)(t - tables);
}

const struct tcx_plans_table *tcx_plans_lookup(const char *kind, int is_class)
{
	for (size_t i = 0; i < NT; i++)
		if (tables[i].is_class == !!is_class && strcmp(tables[i].kind, kind) == 0)
			return &tables[i];
	return NULL;
}

int tcx_plans_role(const struct tcx_plans_table *t, const uint64_t *v, uint32_t present,
                   enum tcx_plan_role role, uint64_t *out)
{
	if (!t || role == TCX_ROLE_NONE)
		return 0;
	for (unsigned i = 0; i < t->n; i++)
		if (t->rows[i].role == role) {
			if (!(present & (1u << i)))
				return 0;
			*out = v[i];
			return 1;
		}
	return 0;
}

void tcx_plan_put(struct tcx_buf *b, const struct tcx_plan *r, uint64_t raw)
{
	struct tcx_xstat f = {.div = r->div ? r->div : 1};

	tcx_xstat_put(b, &f, r->how == TCX_PLAN_ENUM ? 1 : raw);
}

const char *tcx_plan_label(const struct tcx_plan *r, uint64_t raw)
{
	return r->how == TCX_PLAN_ENUM && raw < r->n_names ? r->names[raw] : NULL;
}

/* ---- decoding -------------------------------------------------------------------------------- */

#define MAX_ATTR 32 /* above every attribute type the tables read */

/* A field of `size` bytes at off in (p, len), into *v. */
static int field_at(const void *p, size_t len, uint16_t off, unsigned size, uint64_t *v)
{
	if (!p || len < (size_t)off + size)
		return 0;
	if (size == 8) {
		memcpy(v, (const char *)p + off, 8);
	} else if (size == 4) {
		uint32_t x;

		memcpy(&x, (const char *)p + off, 4);
		*v = x;
	} else if (size == 2) {
		uint16_t x;

		memcpy(&x, (const char *)p + off, 2);
		*v = x;
	} else {
		*v = *((const uint8_t *)p + off);
	}
	return 1;
}

unsigned tcx_plans_decode(const struct tcx_plans_table *t, const struct nlattr *opts, uint64_t *v,
                          uint32_t *present)
{
	const struct nlattr *tb[MAX_ATTR] = {NULL};
	const char *head;
	size_t len, head_len, skip;
	int attrs_ok = 1;
	unsigned bad = 0;

	*present = 0;
	if (!t || !opts)
		return 0;
	head = tcx_attr_data(opts);
	len = tcx_attr_len(opts);
	head_len = len < t->head ? len : t->head;
	/* attributes, after the head struct where the kind has one */
	skip = t->head ? NLA_ALIGN(t->head) : 0;
	if (len > skip &&
	    tcx_attr_walk(head + skip, len - skip, "TCA_OPTIONS", tcx_attr_tb_cb,
	                  &(struct tcx_attr_tb){tb, MAX_ATTR}, &(struct tcx_perr){NULL, 0}) < 0)
		attrs_ok = 0; /* lengths that run past the nest: no attribute can be read */
	for (unsigned i = 0; i < t->n; i++) {
		const struct tcx_plan *r = &t->rows[i];
		const struct nlattr *a = r->attr && r->attr < MAX_ATTR ? tb[r->attr] : NULL;
		const void *p = r->attr ? (a ? tcx_attr_data(a) : NULL) : head;
		size_t n = r->attr ? (a ? tcx_attr_len(a) : 0) : head_len;
		uint64_t x = 0;
		int ok;

		v[i] = 0; /* absent: 0, so that equal plans compare and hash equal */
		if (r->attr && !attrs_ok) {
			bad++;
			continue;
		}
		if (r->attr && !a)
			continue; /* not sent: absent */
		switch (r->how) {
		case TCX_PLAN_ATTR:
		case TCX_PLAN_ENUM:
			ok = field_at(p, n, 0, 4, &x);
			break;
		case TCX_PLAN_ATTR64:
			ok = field_at(p, n, 0, 8, &x);
			break;
		case TCX_PLAN_U16:
			ok = field_at(p, n, r->off, 2, &x);
			break;
		case TCX_PLAN_U8:
			ok = field_at(p, n, r->off, 1, &x);
			break;
		case TCX_PLAN_RATE:
			ok = field_at(p, n, r->off, 4, &x);
			if (ok && r->attr64 < MAX_ATTR && tb[r->attr64])
				ok = field_at(tcx_attr_data(tb[r->attr64]),
				              tcx_attr_len(tb[r->attr64]), 0, 8, &x);
			break;
		case TCX_PLAN_BURST:
			ok = field_at(p, n, r->off, 4, &x);
			if (ok && !(*present & (1u << r->rate)))
				continue; /* its rate is absent (none set): so is it */
			if (ok)
				x = tcx_plans_burst(v[r->rate], (uint32_t)x);
			break;
		default:
			ok = field_at(p, n, r->off, 4, &x);
		}
		if (!ok) {
			bad++;
			continue;
		}
		if ((r->flags & TCX_PLAN_NONZERO) && !x)
			continue;
		if ((r->flags & TCX_PLAN_NOTALLONES) && x == UINT32_MAX)
			continue;
		if (r->flags & TCX_PLAN_POW2) {
			if (x > 63) {
				bad++;
				continue;
			}
			x = UINT64_C(1) << x;
		}
		if (r->how == TCX_PLAN_ENUM && !tcx_plan_label(r, x))
			continue; /* a mode newer than this table: not malformed, unknown */
		v[i] = x;
		*present |= 1u << i;
	}
	return bad;
}
