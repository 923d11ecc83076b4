/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* What config/xstats.c needs of include/uapi/linux/pkt_sched.h and is
 * newer than the 6.1 headers of Debian 12 (linux-libc-dev): the layout of
 * struct tc_fq_qd_stats since Linux 6.7, which appended fastpath_packets
 * and the per-band counters. Layout facts of the kernel's user API, under
 * its syscall note; xstats.c checks them against the system's header. */
#ifndef TCX_UAPI_PKT_SCHED_H
#define TCX_UAPI_PKT_SCHED_H

#include <linux/types.h>

#define TCX_FQ_BANDS 3 /* FQ_BANDS */

struct tcx_fq_qd_stats {
	__u64 gc_flows;
	__u64 highprio_packets; /* obsolete since 6.7 (0) */
	__u64 tcp_retrans;      /* obsolete (0) */
	__u64 throttled;
	__u64 flows_plimit;
	__u64 pkts_too_long;
	__u64 allocation_errors;
	__s64 time_next_delayed_flow;
	__u32 flows;
	__u32 inactive_flows;
	__u32 throttled_flows;
	__u32 unthrottle_latency_ns;
	__u64 ce_mark; /* packets above ce_threshold */
	__u64 horizon_drops;
	__u64 horizon_caps;
	/* Linux 6.7 */
	__u64 fastpath_packets;
	__u64 band_drops[TCX_FQ_BANDS];
	__u32 band_pkt_count[TCX_FQ_BANDS];
	__u32 pad;
};

#endif
