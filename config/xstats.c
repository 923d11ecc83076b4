/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-kind statistics of qdiscs and classes (TCA_STATS_APP, or TCA_XSTATS
 * from kernels without TCA_STATS2): one table per kind and object.
 *
 * Naming rule (tests, dashboards and the documentation rely on it):
 *
 *   family  = tc_qdisc_<kind>_<field>   statistics of a qdisc message
 *             tc_class_<kind>_<field>   statistics of a class message
 *   <field> = the member's name in the kernel's uapi struct
 *             (include/uapi/linux/pkt_sched.h: tc_htb_xstats.lends: lends);
 *             for cake's nested attributes, the attribute's name lower-cased
 *             without its TCA_CAKE_STATS_ prefix and a 64 suffix
 *             (TCA_CAKE_STATS_MEMORY_USED: memory_used); cake's per-tin
 *             attributes are tin_<name without TCA_CAKE_TIN_STATS_>, with a
 *             label tin, 0-based (the tin's nest type - 1):
 *             TCA_CAKE_TIN_STATS_SENT_BYTES64: tc_qdisc_cake_tin_sent_bytes_total.
 *   Counters (event counts) end in _total; gauges (a level, a maximum, a
 *   setting, a time, a probability) do not.
 *   Units (Prometheus's rule): a family whose value has a unit ends in it,
 *   before _total for a counter: _bytes, _seconds, _bytes_per_second,
 *   _ratio (0 to 1), and _packets for a gauge of packets (a level or a
 *   length: pie maxq: tc_qdisc_pie_maxq_packets). A counter of packets
 *   counts events and is named by them, as node_exporter's
 *   node_network_receive_drop_total (red early: tc_qdisc_red_early_total),
 *   or ends in _packets_total where the member names what it counts (fq
 *   highprio_packets). Counts of other things (flows, periods) have no
 *   unit. The row's unit is its suffix, or "" (test_qdisc_parse checks
 *   every table against this rule).
 *   Times are in seconds: a unit suffix (_us, _ns) becomes _seconds, and a
 *   member without one gets _seconds appended (htb tokens, in psched ticks
 *   of 64 ns: tc_class_htb_tokens_seconds; codel ldelay, in us:
 *   tc_qdisc_codel_ldelay_seconds; cake PEAK_DELAY_US:
 *   tc_qdisc_cake_tin_peak_delay_seconds).
 *   A probability in fixed point is a ratio from 0 to 1 (pie prob, sfb
 *   maxprob and avgprob, cake p_drop), under the member's name.
 *   A name that would end in _count (which Prometheus keeps for histograms
 *   and summaries) gets its unit: codel count: tc_qdisc_codel_count_packets.
 *   An element of an array member keeps the member's name and gets a label
 *   for its index: fq band_drops[1]: tc_qdisc_fq_band_drops_total{band="1"}.
 *
 * Meanings and units come from each kind's dump_stats (and
 * dump_class_stats) in the kernel's net/sched/sch_<kind>.c; the kinds and
 * fields are those tc -s prints (iproute2 tc/q_<kind>.c). A struct shorter
 * than the table's (an older kernel) yields the fields it holds; a longer
 * one, its known prefix. */
#include <linux/pkt_sched.h>
#include <stddef.h>
#include <string.h>

#include "config/uapi_pkt_sched.h"
#include "config/xstats.h"
#include "lib/buf.h"

/* The system's struct (6.1's, or a newer one) is a prefix of the 6.7 layout
 * that fq's rows read. */
_Static_assert(offsetof(struct tcx_fq_qd_stats, horizon_caps) ==
                       offsetof(struct tc_fq_qd_stats, horizon_caps),
               "struct tc_fq_qd_stats: layout");
_Static_assert(sizeof(struct tc_fq_qd_stats) <= sizeof(struct tcx_fq_qd_stats) &&
                       sizeof(struct tcx_fq_qd_stats) == 152,
               "struct tc_fq_qd_stats: layout");

#define C   TCX_XSTAT_COUNTER
#define G   TCX_XSTAT_GAUGE
#define SGN TCX_XSTAT_SIGNED
#define POS TCX_XSTAT_POSITIVE

/* Divisors: to seconds, and fixed-point probabilities to ratios. */
#define US   1e6
#define NS   1e9
#define TICK 15625000.0             /* psched ticks per second: 1 tick = 64 ns (PSCHED_SHIFT 6) */
#define P64  18446744073709551615.0 /* pie: UINT64_MAX is 1 */
#define P32  4294967295.0           /* cobalt (cake): UINT32_MAX is 1 */
#define PSFB 65535.0                /* SFB_MAX_PROB */

/* A struct member; an element of an array member, with its label. */
#define FIELD(st, m, fam, ty, fl, dv, un, hlp)                                                     \
	{                                                                                          \
		.family = fam, .help = hlp, .unit = un, .div = dv, .src = offsetof(st, m),         \
		.size = sizeof(((st *)0)->m), .type = ty, .flags = fl                              \
	}
#define ELEM(st, m, i, lab, fam, ty, fl, dv, un, hlp)                                              \
	{                                                                                          \
		.family = fam, .help = hlp, .unit = un, .label = lab, .label_value = #i,           \
		.div = dv, .src = offsetof(st, m[i]), .size = sizeof(((st *)0)->m[i]), .type = ty, \
		.flags = fl                                                                        \
	}
/* A nested attribute of sz bytes. */
#define ATTR(at, sz, fam, ty, fl, dv, un, hlp)                                                     \
	{                                                                                          \
		.family = fam, .help = hlp, .unit = un, .div = dv, .src = at, .size = sz,          \
		.type = ty, .flags = fl                                                            \
	}
#define N(a) ((uint8_t)(sizeof(a) / sizeof((a)[0])))

/* ---- htb (classes; sch_htb.c htb_dump_class_stats) ------------------------------------- */

#define HTB struct tc_htb_xstats
static const struct tcx_xstat htb_class[] = {
        FIELD(HTB, lends, "tc_class_htb_lends_total", C, 0, 1, "packets",
              "Packets sent on this class's rate: its own, or for an inner class those it lent "
              "to descendants (tc: lended)"),
        FIELD(HTB, borrows, "tc_class_htb_borrows_total", C, 0, 1, "packets",
              "Packets this class sent over its rate, on tokens of an ancestor (tc: borrowed)"),
        FIELD(HTB, giants, "tc_class_htb_giants_total", C, 0, 1, "packets",
              "Packets too big for the class (unused since HTB supports TSO: 0)"),
        FIELD(HTB, tokens, "tc_class_htb_tokens_seconds", G, SGN, TICK, "seconds",
              "Rate tokens: how long this class may still send at its rate; negative when over "
              "it"),
        FIELD(HTB, ctokens, "tc_class_htb_ctokens_seconds", G, SGN, TICK, "seconds",
              "Ceil tokens: how long this class may still send at its ceil; negative when over "
              "it"),
};

/* ---- hfsc (classes; sch_hfsc.c hfsc_dump_class_stats) ---------------------------------- */

#define HFSC struct tc_hfsc_stats
static const struct tcx_xstat hfsc_class[] = {
        FIELD(HFSC, work, "tc_class_hfsc_work_bytes_total", C, 0, 1, "bytes",
              "Bytes of work done, by every criterion"),
        FIELD(HFSC, rtwork, "tc_class_hfsc_rtwork_bytes_total", C, 0, 1, "bytes",
              "Bytes of work done by the real-time criterion"),
        FIELD(HFSC, period, "tc_class_hfsc_period_total", C, 0, 1, "",
              "Virtual-time periods: times the class went from idle to backlogged"),
        FIELD(HFSC, level, "tc_class_hfsc_level", G, 0, 1, "",
              "Level of the class in the hierarchy (0: a leaf)"),
};

/* ---- fq_codel (sch_fq_codel.c fq_codel_dump_stats, fq_codel_dump_class_stats) ---------- */

#define FQC struct tc_fq_codel_xstats
static const struct tcx_xstat fq_codel_qdisc[] = {
        FIELD(FQC, qdisc_stats.maxpacket, "tc_qdisc_fq_codel_maxpacket_bytes", G, 0, 1, "bytes",
              "Largest packet seen"),
        FIELD(FQC, qdisc_stats.drop_overlimit, "tc_qdisc_fq_codel_drop_overlimit_total", C, 0, 1,
              "packets", "Packets dropped because the qdisc was at its packet limit"),
        FIELD(FQC, qdisc_stats.ecn_mark, "tc_qdisc_fq_codel_ecn_mark_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped"),
        FIELD(FQC, qdisc_stats.new_flow_count, "tc_qdisc_fq_codel_new_flow_count_total", C, 0, 1,
              "", "Times a packet started a new flow"),
        FIELD(FQC, qdisc_stats.new_flows_len, "tc_qdisc_fq_codel_new_flows_len", G, 0, 1, "",
              "Flows in the new-flows list"),
        FIELD(FQC, qdisc_stats.old_flows_len, "tc_qdisc_fq_codel_old_flows_len", G, 0, 1, "",
              "Flows in the old-flows list"),
        FIELD(FQC, qdisc_stats.ce_mark, "tc_qdisc_fq_codel_ce_mark_total", C, 0, 1, "packets",
              "Packets CE-marked for a sojourn time above ce_threshold"),
        FIELD(FQC, qdisc_stats.memory_usage, "tc_qdisc_fq_codel_memory_usage_bytes", G, 0, 1,
              "bytes", "Memory used by queued packets (tc: memory_used)"),
        FIELD(FQC, qdisc_stats.drop_overmemory, "tc_qdisc_fq_codel_drop_overmemory_total", C, 0, 1,
              "packets", "Packets dropped because the qdisc was at its memory limit"),
};

/* A class is one flow. */
static const struct tcx_xstat fq_codel_class[] = {
        FIELD(FQC, class_stats.deficit, "tc_class_fq_codel_deficit_bytes", G, SGN, 1, "bytes",
              "Bytes the flow may still send in this round (deficit round robin)"),
        FIELD(FQC, class_stats.ldelay, "tc_class_fq_codel_ldelay_seconds", G, 0, US, "seconds",
              "Sojourn time of the flow's last dequeued packet"),
        FIELD(FQC, class_stats.count, "tc_class_fq_codel_count_packets", G, 0, 1, "packets",
              "CoDel drops since the flow entered the dropping state"),
        FIELD(FQC, class_stats.lastcount, "tc_class_fq_codel_lastcount_packets", G, 0, 1, "packets",
              "CoDel count when the flow last entered the dropping state"),
        FIELD(FQC, class_stats.dropping, "tc_class_fq_codel_dropping", G, 0, 1, "",
              "1 while CoDel is in the dropping state for the flow"),
        FIELD(FQC, class_stats.drop_next, "tc_class_fq_codel_drop_next_seconds", G, SGN, US,
              "seconds", "While dropping, time until the next drop (negative: overdue); else 0"),
};

/* ---- fq (sch_fq.c fq_dump_stats) ------------------------------------------------------- */

#define FQ struct tcx_fq_qd_stats
static const struct tcx_xstat fq_qdisc[] = {
        FIELD(FQ, gc_flows, "tc_qdisc_fq_gc_flows_total", C, 0, 1, "",
              "Flows garbage-collected (tc: gc)"),
        FIELD(FQ, highprio_packets, "tc_qdisc_fq_highprio_packets_total", C, 0, 1, "packets",
              "Packets of the internal high-priority flow (tc: highprio; obsolete, 0 in newer "
              "kernels)"),
        FIELD(FQ, tcp_retrans, "tc_qdisc_fq_tcp_retrans_total", C, 0, 1, "packets",
              "TCP retransmits (tc: retrans; obsolete, 0)"),
        FIELD(FQ, throttled, "tc_qdisc_fq_throttled_total", C, 0, 1, "",
              "Times a flow was throttled by pacing"),
        FIELD(FQ, flows_plimit, "tc_qdisc_fq_flows_plimit_total", C, 0, 1, "packets",
              "Packets dropped because their flow was at flow_limit"),
        FIELD(FQ, pkts_too_long, "tc_qdisc_fq_pkts_too_long_total", C, 0, 1, "packets",
              "Packets whose pacing delay was capped at one second"),
        FIELD(FQ, allocation_errors, "tc_qdisc_fq_allocation_errors_total", C, 0, 1, "",
              "Flow allocation failures (tc: alloc_errors)"),
        FIELD(FQ, time_next_delayed_flow, "tc_qdisc_fq_time_next_delayed_flow_seconds", G,
              SGN | POS, NS, "seconds",
              "Time until the next throttled flow may send (tc: next_packet_delay); absent when "
              "none is throttled"),
        FIELD(FQ, flows, "tc_qdisc_fq_flows", G, 0, 1, "", "Flows the qdisc tracks"),
        FIELD(FQ, inactive_flows, "tc_qdisc_fq_inactive_flows", G, 0, 1, "",
              "Flows with no packet queued"),
        FIELD(FQ, throttled_flows, "tc_qdisc_fq_throttled_flows", G, 0, 1, "",
              "Flows throttled by pacing"),
        FIELD(FQ, unthrottle_latency_ns, "tc_qdisc_fq_unthrottle_latency_seconds", G, 0, NS,
              "seconds", "Moving average of how late throttled flows were released (tc: latency)"),
        FIELD(FQ, ce_mark, "tc_qdisc_fq_ce_mark_total", C, 0, 1, "packets",
              "Packets CE-marked for a delay above ce_threshold"),
        FIELD(FQ, horizon_drops, "tc_qdisc_fq_horizon_drops_total", C, 0, 1, "packets",
              "Packets dropped for a departure time beyond the horizon"),
        FIELD(FQ, horizon_caps, "tc_qdisc_fq_horizon_caps_total", C, 0, 1, "packets",
              "Packets whose departure time was capped to the horizon"),
        FIELD(FQ, fastpath_packets, "tc_qdisc_fq_fastpath_packets_total", C, 0, 1, "packets",
              "Packets sent without queueing (tc: fastpath; Linux 6.7)"),
        ELEM(FQ, band_drops, 0, "band", "tc_qdisc_fq_band_drops_total", C, 0, 1, "packets",
             "Packets dropped, per priority band (Linux 6.7)"),
        ELEM(FQ, band_drops, 1, "band", "tc_qdisc_fq_band_drops_total", C, 0, 1, "packets",
             "Packets dropped, per priority band (Linux 6.7)"),
        ELEM(FQ, band_drops, 2, "band", "tc_qdisc_fq_band_drops_total", C, 0, 1, "packets",
             "Packets dropped, per priority band (Linux 6.7)"),
        ELEM(FQ, band_pkt_count, 0, "band", "tc_qdisc_fq_band_pkt_count_packets", G, 0, 1,
             "packets", "Packets queued, per priority band (Linux 6.7)"),
        ELEM(FQ, band_pkt_count, 1, "band", "tc_qdisc_fq_band_pkt_count_packets", G, 0, 1,
             "packets", "Packets queued, per priority band (Linux 6.7)"),
        ELEM(FQ, band_pkt_count, 2, "band", "tc_qdisc_fq_band_pkt_count_packets", G, 0, 1,
             "packets", "Packets queued, per priority band (Linux 6.7)"),
};

/* ---- fq_pie (sch_fq_pie.c fq_pie_dump_stats) ------------------------------------------- */

#define FQP struct tc_fq_pie_xstats
static const struct tcx_xstat fq_pie_qdisc[] = {
        FIELD(FQP, packets_in, "tc_qdisc_fq_pie_packets_in_total", C, 0, 1, "packets",
              "Packets enqueued (tc: pkts_in)"),
        FIELD(FQP, dropped, "tc_qdisc_fq_pie_dropped_total", C, 0, 1, "packets",
              "Packets dropped by the PIE algorithm"),
        FIELD(FQP, overlimit, "tc_qdisc_fq_pie_overlimit_total", C, 0, 1, "packets",
              "Packets dropped because the qdisc was at its packet limit"),
        FIELD(FQP, overmemory, "tc_qdisc_fq_pie_overmemory_total", C, 0, 1, "packets",
              "Packets dropped because the qdisc was at its memory limit"),
        FIELD(FQP, ecn_mark, "tc_qdisc_fq_pie_ecn_mark_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped"),
        FIELD(FQP, new_flow_count, "tc_qdisc_fq_pie_new_flow_count_total", C, 0, 1, "",
              "Times a packet started a new flow"),
        FIELD(FQP, new_flows_len, "tc_qdisc_fq_pie_new_flows_len", G, 0, 1, "",
              "Flows in the new-flows list"),
        FIELD(FQP, old_flows_len, "tc_qdisc_fq_pie_old_flows_len", G, 0, 1, "",
              "Flows in the old-flows list"),
        FIELD(FQP, memory_usage, "tc_qdisc_fq_pie_memory_usage_bytes", G, 0, 1, "bytes",
              "Memory used by queued packets (tc: memory_used)"),
};

/* ---- codel (sch_codel.c codel_dump_stats) ---------------------------------------------- */

#define CODEL struct tc_codel_xstats
static const struct tcx_xstat codel_qdisc[] = {
        FIELD(CODEL, maxpacket, "tc_qdisc_codel_maxpacket_bytes", G, 0, 1, "bytes",
              "Largest packet seen"),
        FIELD(CODEL, count, "tc_qdisc_codel_count_packets", G, 0, 1, "packets",
              "Drops since the qdisc entered the dropping state"),
        FIELD(CODEL, lastcount, "tc_qdisc_codel_lastcount_packets", G, 0, 1, "packets",
              "count when the qdisc last entered the dropping state"),
        FIELD(CODEL, ldelay, "tc_qdisc_codel_ldelay_seconds", G, 0, US, "seconds",
              "Sojourn time of the last dequeued packet"),
        FIELD(CODEL, drop_next, "tc_qdisc_codel_drop_next_seconds", G, SGN, US, "seconds",
              "While dropping, time until the next drop (negative: overdue); else 0"),
        FIELD(CODEL, drop_overlimit, "tc_qdisc_codel_drop_overlimit_total", C, 0, 1, "packets",
              "Packets dropped because the qdisc was at its packet limit"),
        FIELD(CODEL, ecn_mark, "tc_qdisc_codel_ecn_mark_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped"),
        FIELD(CODEL, dropping, "tc_qdisc_codel_dropping", G, 0, 1, "",
              "1 while in the dropping state"),
        FIELD(CODEL, ce_mark, "tc_qdisc_codel_ce_mark_total", C, 0, 1, "packets",
              "Packets CE-marked for a sojourn time above ce_threshold"),
};

/* ---- pie (sch_pie.c pie_dump_stats) ---------------------------------------------------- */

#define PIE struct tc_pie_xstats
static const struct tcx_xstat pie_qdisc[] = {
        FIELD(PIE, prob, "tc_qdisc_pie_prob_ratio", G, 0, P64, "ratio",
              "Drop or mark probability, 0 to 1"),
        FIELD(PIE, delay, "tc_qdisc_pie_delay_seconds", G, 0, US, "seconds",
              "Current queueing delay"),
        FIELD(PIE, avg_dq_rate, "tc_qdisc_pie_avg_dq_rate_bytes_per_second", G, 0, 1,
              "bytes_per_second", "Average dequeue rate, when dq_rate_estimating"),
        FIELD(PIE, dq_rate_estimating, "tc_qdisc_pie_dq_rate_estimating", G, 0, 1, "",
              "1 when the delay is estimated from the dequeue rate (dq_rate_estimator)"),
        FIELD(PIE, packets_in, "tc_qdisc_pie_packets_in_total", C, 0, 1, "packets",
              "Packets enqueued (tc: pkts_in)"),
        FIELD(PIE, dropped, "tc_qdisc_pie_dropped_total", C, 0, 1, "packets",
              "Packets dropped by the PIE algorithm"),
        FIELD(PIE, overlimit, "tc_qdisc_pie_overlimit_total", C, 0, 1, "packets",
              "Packets dropped because the qdisc was at its packet limit"),
        FIELD(PIE, maxq, "tc_qdisc_pie_maxq_packets", G, 0, 1, "packets", "Longest queue seen"),
        FIELD(PIE, ecn_mark, "tc_qdisc_pie_ecn_mark_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped"),
};

/* ---- red, choke, sfb (sch_red.c, sch_choke.c, sch_sfb.c *_dump_stats) ------------------ */

#define RED struct tc_red_xstats
static const struct tcx_xstat red_qdisc[] = {
        FIELD(RED, early, "tc_qdisc_red_early_total", C, 0, 1, "packets",
              "Packets dropped early, the average queue above the min threshold"),
        FIELD(RED, pdrop, "tc_qdisc_red_pdrop_total", C, 0, 1, "packets",
              "Packets dropped because the queue was at its byte limit"),
        FIELD(RED, other, "tc_qdisc_red_other_total", C, 0, 1, "packets",
              "Packets dropped for other reasons"),
        FIELD(RED, marked, "tc_qdisc_red_marked_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped early"),
};

#define CHOKE struct tc_choke_xstats
static const struct tcx_xstat choke_qdisc[] = {
        FIELD(CHOKE, early, "tc_qdisc_choke_early_total", C, 0, 1, "packets",
              "Packets dropped early, the average queue above the min threshold"),
        FIELD(CHOKE, pdrop, "tc_qdisc_choke_pdrop_total", C, 0, 1, "packets",
              "Packets dropped because the queue was at its limit"),
        FIELD(CHOKE, other, "tc_qdisc_choke_other_total", C, 0, 1, "packets",
              "Packets dropped by other causes"),
        FIELD(CHOKE, marked, "tc_qdisc_choke_marked_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped early"),
        FIELD(CHOKE, matched, "tc_qdisc_choke_matched_total", C, 0, 1, "packets",
              "Packets dropped with a queued packet of the same flow"),
};

#define SFB struct tc_sfb_xstats
static const struct tcx_xstat sfb_qdisc[] = {
        FIELD(SFB, earlydrop, "tc_qdisc_sfb_earlydrop_total", C, 0, 1, "packets",
              "Packets dropped early, by the marking probability"),
        FIELD(SFB, penaltydrop, "tc_qdisc_sfb_penaltydrop_total", C, 0, 1, "packets",
              "Packets of inelastic flows dropped over the penalty rate"),
        FIELD(SFB, bucketdrop, "tc_qdisc_sfb_bucketdrop_total", C, 0, 1, "packets",
              "Packets dropped because a bucket was full"),
        FIELD(SFB, queuedrop, "tc_qdisc_sfb_queuedrop_total", C, 0, 1, "packets",
              "Packets dropped because the queue was at its limit"),
        FIELD(SFB, childdrop, "tc_qdisc_sfb_childdrop_total", C, 0, 1, "packets",
              "Packets dropped by the child qdisc"),
        FIELD(SFB, marked, "tc_qdisc_sfb_marked_total", C, 0, 1, "packets",
              "Packets ECN-marked instead of dropped"),
        FIELD(SFB, maxqlen, "tc_qdisc_sfb_maxqlen_packets", G, 0, 1, "packets",
              "Longest bucket queue now"),
        FIELD(SFB, maxprob, "tc_qdisc_sfb_maxprob_ratio", G, 0, PSFB, "ratio",
              "Highest bucket marking probability now, 0 to 1"),
        FIELD(SFB, avgprob, "tc_qdisc_sfb_avgprob_ratio", G, 0, PSFB, "ratio",
              "Average bucket marking probability now, 0 to 1"),
};

/* ---- sfq (classes, one per flow; sch_sfq.c sfq_dump_class_stats) ----------------------- */

#define SFQ struct tc_sfq_xstats
static const struct tcx_xstat sfq_class[] = {
        FIELD(SFQ, allot, "tc_class_sfq_allot_bytes", G, SGN, 1, "bytes",
              "Bytes the flow may still send in this round"),
};

/* ---- cake (sch_cake.c cake_dump_stats, cake_dump_class_stats) ----------------------------
 * Linux up to 6.19 never sends TCA_CAKE_TIN_STATS_DROPPED_BYTES64,
 * ACKS_DROPPED_BYTES64, ECN_MARKED_BYTES64 nor BACKLOG_PACKETS: no rows. */

static const struct tcx_xstat cake_qdisc[] = {
        ATTR(TCA_CAKE_STATS_CAPACITY_ESTIMATE64, 8,
             "tc_qdisc_cake_capacity_estimate_bytes_per_second", G, 0, 1, "bytes_per_second",
             "Estimated link capacity (autorate-ingress), else the set rate"),
        ATTR(TCA_CAKE_STATS_MEMORY_LIMIT, 4, "tc_qdisc_cake_memory_limit_bytes", G, 0, 1, "bytes",
             "Memory limit for queued packets"),
        ATTR(TCA_CAKE_STATS_MEMORY_USED, 4, "tc_qdisc_cake_memory_used_bytes", G, 0, 1, "bytes",
             "Most memory queued packets have used"),
        ATTR(TCA_CAKE_STATS_AVG_NETOFF, 4, "tc_qdisc_cake_avg_netoff_bytes", G, 0, 1, "bytes",
             "Average offset of the network header (tc: average network hdr offset)"),
        ATTR(TCA_CAKE_STATS_MIN_NETLEN, 4, "tc_qdisc_cake_min_netlen_bytes", G, 0, 1, "bytes",
             "Smallest network-layer packet seen"),
        ATTR(TCA_CAKE_STATS_MAX_NETLEN, 4, "tc_qdisc_cake_max_netlen_bytes", G, 0, 1, "bytes",
             "Largest network-layer packet seen"),
        ATTR(TCA_CAKE_STATS_MIN_ADJLEN, 4, "tc_qdisc_cake_min_adjlen_bytes", G, 0, 1, "bytes",
             "Smallest packet seen, overhead-adjusted"),
        ATTR(TCA_CAKE_STATS_MAX_ADJLEN, 4, "tc_qdisc_cake_max_adjlen_bytes", G, 0, 1, "bytes",
             "Largest packet seen, overhead-adjusted"),
};

static const struct tcx_xstat cake_tin[] = {
        ATTR(TCA_CAKE_TIN_STATS_THRESHOLD_RATE64, 8,
             "tc_qdisc_cake_tin_threshold_rate_bytes_per_second", G, 0, 1, "bytes_per_second",
             "Rate above which the tin loses its priority (tc: thresh)"),
        ATTR(TCA_CAKE_TIN_STATS_SENT_BYTES64, 8, "tc_qdisc_cake_tin_sent_bytes_total", C, 0, 1,
             "bytes", "Bytes sent by the tin"),
        ATTR(TCA_CAKE_TIN_STATS_BACKLOG_BYTES, 4, "tc_qdisc_cake_tin_backlog_bytes", G, 0, 1,
             "bytes", "Bytes queued in the tin"),
        ATTR(TCA_CAKE_TIN_STATS_TARGET_US, 4, "tc_qdisc_cake_tin_target_seconds", G, 0, US,
             "seconds", "CoDel target delay of the tin"),
        ATTR(TCA_CAKE_TIN_STATS_INTERVAL_US, 4, "tc_qdisc_cake_tin_interval_seconds", G, 0, US,
             "seconds", "CoDel interval of the tin"),
        ATTR(TCA_CAKE_TIN_STATS_SENT_PACKETS, 4, "tc_qdisc_cake_tin_sent_packets_total", C, 0, 1,
             "packets", "Packets sent by the tin"),
        ATTR(TCA_CAKE_TIN_STATS_DROPPED_PACKETS, 4, "tc_qdisc_cake_tin_dropped_packets_total", C, 0,
             1, "packets", "Packets dropped by the tin"),
        ATTR(TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS, 4, "tc_qdisc_cake_tin_ecn_marked_packets_total",
             C, 0, 1, "packets", "Packets ECN-marked by the tin"),
        ATTR(TCA_CAKE_TIN_STATS_ACKS_DROPPED_PACKETS, 4,
             "tc_qdisc_cake_tin_acks_dropped_packets_total", C, 0, 1, "packets",
             "TCP ACKs dropped by the ACK filter"),
        ATTR(TCA_CAKE_TIN_STATS_PEAK_DELAY_US, 4, "tc_qdisc_cake_tin_peak_delay_seconds", G, 0, US,
             "seconds", "Peak sojourn time (tc: pk_delay)"),
        ATTR(TCA_CAKE_TIN_STATS_AVG_DELAY_US, 4, "tc_qdisc_cake_tin_avg_delay_seconds", G, 0, US,
             "seconds", "Average sojourn time (tc: av_delay)"),
        ATTR(TCA_CAKE_TIN_STATS_BASE_DELAY_US, 4, "tc_qdisc_cake_tin_base_delay_seconds", G, 0, US,
             "seconds", "Sojourn time of sparse flows (tc: sp_delay)"),
        ATTR(TCA_CAKE_TIN_STATS_WAY_INDIRECT_HITS, 4, "tc_qdisc_cake_tin_way_indirect_hits_total",
             C, 0, 1, "", "Flow hash lookups that found their queue in another way of the set"),
        ATTR(TCA_CAKE_TIN_STATS_WAY_MISSES, 4, "tc_qdisc_cake_tin_way_misses_total", C, 0, 1, "",
             "Flow hash lookups that took a free queue"),
        ATTR(TCA_CAKE_TIN_STATS_WAY_COLLISIONS, 4, "tc_qdisc_cake_tin_way_collisions_total", C, 0,
             1, "", "Flow hash lookups that found every queue of the set taken"),
        ATTR(TCA_CAKE_TIN_STATS_SPARSE_FLOWS, 4, "tc_qdisc_cake_tin_sparse_flows", G, 0, 1, "",
             "Sparse flows (with decaying ones)"),
        ATTR(TCA_CAKE_TIN_STATS_BULK_FLOWS, 4, "tc_qdisc_cake_tin_bulk_flows", G, 0, 1, "",
             "Bulk flows of the tin"),
        ATTR(TCA_CAKE_TIN_STATS_UNRESPONSIVE_FLOWS, 4, "tc_qdisc_cake_tin_unresponsive_flows", G, 0,
             1, "", "Flows that do not respond to congestion signals"),
        ATTR(TCA_CAKE_TIN_STATS_MAX_SKBLEN, 4, "tc_qdisc_cake_tin_max_skblen_bytes", G, 0, 1,
             "bytes", "Largest packet seen (tc: max_len)"),
        ATTR(TCA_CAKE_TIN_STATS_FLOW_QUANTUM, 4, "tc_qdisc_cake_tin_flow_quantum_bytes", G, 0, 1,
             "bytes", "Deficit round robin quantum of the tin's flows"),
};

/* A class is one flow of one tin. */
static const struct tcx_xstat cake_class[] = {
        ATTR(TCA_CAKE_STATS_DEFICIT, 4, "tc_class_cake_deficit_bytes", G, SGN, 1, "bytes",
             "Bytes the flow may still send in this round (deficit round robin)"),
        ATTR(TCA_CAKE_STATS_COBALT_COUNT, 4, "tc_class_cake_cobalt_count_packets", G, 0, 1,
             "packets", "CoDel drops since the flow entered the dropping state (tc: count)"),
        ATTR(TCA_CAKE_STATS_DROPPING, 4, "tc_class_cake_dropping", G, 0, 1, "",
             "1 while CoDel is in the dropping state for the flow"),
        ATTR(TCA_CAKE_STATS_DROP_NEXT_US, 4, "tc_class_cake_drop_next_seconds", G, SGN, US,
             "seconds", "While dropping, now minus the time of the next drop (negative: to come)"),
        ATTR(TCA_CAKE_STATS_P_DROP, 4, "tc_class_cake_p_drop_ratio", G, 0, P32, "ratio",
             "BLUE drop probability of the flow, 0 to 1 (tc: blue_prob)"),
        ATTR(TCA_CAKE_STATS_BLUE_TIMER_US, 4, "tc_class_cake_blue_timer_seconds", G, SGN, US,
             "seconds", "While p_drop is not 0, time since BLUE last changed it"),
};

/* ---- the tables ------------------------------------------------------------------------ */

#define STRUCT(k, cls, rows)                                                                       \
	{                                                                                          \
		.kind = k, .is_class = cls, .layout = TCX_XSTATS_STRUCT, .fields = rows,           \
		.n_fields = N(rows)                                                                \
	}
#define TYPED(k, cls, t, rows)                                                                     \
	{                                                                                          \
		.kind = k, .is_class = cls, .layout = TCX_XSTATS_STRUCT, .has_type = 1, .type = t, \
		.fields = rows, .n_fields = N(rows)                                                \
	}

/* The tables, in the order of tcx_xstats_tables[] (a table's id). */
static const struct tcx_xstats_table tables[] = {
        STRUCT("htb", 1, htb_class),
        STRUCT("hfsc", 1, hfsc_class),
        TYPED("fq_codel", 0, TCA_FQ_CODEL_XSTATS_QDISC, fq_codel_qdisc),
        TYPED("fq_codel", 1, TCA_FQ_CODEL_XSTATS_CLASS, fq_codel_class),
        STRUCT("fq", 0, fq_qdisc),
        STRUCT("fq_pie", 0, fq_pie_qdisc),
        STRUCT("codel", 0, codel_qdisc),
        STRUCT("pie", 0, pie_qdisc),
        STRUCT("red", 0, red_qdisc),
        STRUCT("choke", 0, choke_qdisc),
        STRUCT("sfb", 0, sfb_qdisc),
        STRUCT("sfq", 1, sfq_class),
        {
                .kind = "cake",
                .layout = TCX_XSTATS_NESTED,
                .fields = cake_qdisc,
                .n_fields = N(cake_qdisc),
                .tins_attr = TCA_CAKE_STATS_TIN_STATS,
                .tin_label = "tin",
                .tin_fields = cake_tin,
                .n_tin_fields = N(cake_tin),
        },
        {
                .kind = "cake",
                .is_class = 1,
                .layout = TCX_XSTATS_NESTED,
                .fields = cake_class,
                .n_fields = N(cake_class),
        },
};
_Static_assert(N(tables) == TCX_XSTATS_N_TABLES, "TCX_XSTATS_N_TABLES: the tables");

const struct tcx_xstats_table *const tcx_xstats_tables[] = {
        &tables[0], &tables[1], &tables[2], &tables[3],  &tables[4],  &tables[5],  &tables[6],
        &tables[7], &tables[8], &tables[9], &tables[10], &tables[11], &tables[12], &tables[13],
};
_Static_assert(N(tcx_xstats_tables) == TCX_XSTATS_N_TABLES, "tcx_xstats_tables: every table");
const size_t tcx_xstats_n_tables = TCX_XSTATS_N_TABLES;

unsigned tcx_xstats_id(const struct tcx_xstats_table *t)
{
	return (unsigned)(t - tables);
}

const char *tcx_xstat_name(const struct tcx_xstats_table *t, const struct tcx_xstat *f, size_t *len)
{
	/* "tc_qdisc_" and "tc_class_" are as long */
	const char *k = f->family + strlen("tc_qdisc_") + strlen(t->kind) + 1;
	size_t n = strlen(k);

	if (f->type == TCX_XSTAT_COUNTER && n > 6 && strcmp(k + n - 6, "_total") == 0)
		n -= 6;
	*len = n;
	return k;
}

/* Bits [0, n) set. */
static uint32_t all_of(unsigned n)
{
	return n >= 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1;
}

int tcx_xstats_none(const struct tcx_xstats_table *t, const struct tcx_xstats_choice *ch)
{
	unsigned id = tcx_xstats_id(t);

	return (ch->off[id] & all_of(t->n_fields)) == all_of(t->n_fields) &&
	       (ch->tin_off[id] & all_of(t->n_tin_fields)) == all_of(t->n_tin_fields);
}

const struct tcx_xstats_table *tcx_xstats_lookup(const char *kind, int is_class)
{
	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[i];

		if (t->is_class == !!is_class && t->kind[0] == kind[0] &&
		    strcmp(t->kind, kind) == 0)
			return t;
	}
	return NULL;
}

double tcx_xstat_value(const struct tcx_xstat *f, uint64_t raw)
{
	double v = (f->flags & TCX_XSTAT_SIGNED) ? (double)(int64_t)raw : (double)raw;

	return f->div == 1 ? v : v / f->div;
}

/* A time counted in a unit that is a whole number of nanoseconds: how many
 * nanoseconds, and the decimal digits of a second that it needs. */
static int time_unit(double div, uint64_t *ns, unsigned *digits)
{
	if (div == US || div == NS) {
		*ns = 1;
		*digits = div == US ? 6 : 9;
		return 1;
	}
	if (div == TICK) {
		*ns = 64;
		*digits = 9;
		return 1;
	}
	return 0;
}

void tcx_xstat_put(struct tcx_buf *b, const struct tcx_xstat *f, uint64_t raw)
{
	int neg = (f->flags & TCX_XSTAT_SIGNED) && (int64_t)raw < 0;
	uint64_t mag = neg ? (uint64_t)0 - raw : raw, ns;
	unsigned digits;

	/* A time, exactly: seconds with the unit's digits (the shortest float
	 * text costs ten times as much, and a class has two). */
	if (f->div != 1 && time_unit(f->div, &ns, &digits) && mag <= UINT64_MAX / ns) {
		if (neg && mag)
			tcx_buf_putc(b, '-');
		tcx_buf_fixed(b, mag * ns, digits);
	} else if (f->div != 1) {
		tcx_buf_double(b, tcx_xstat_value(f, raw));
	} else if ((f->flags & TCX_XSTAT_SIGNED) && (int64_t)raw < 0) {
		tcx_buf_putc(b, '-');
		tcx_buf_u64(b, (uint64_t)0 - raw);
	} else {
		tcx_buf_u64(b, raw);
	}
}
