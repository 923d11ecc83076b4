/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The qdisc and class decoder (collectors/qdisc_parse.c) and the per-kind
 * tables (config/xstats.c), fed messages built in memory. Each kind's
 * statistics are built with the kernel's uapi struct, by member name, a
 * distinct value in every member, and read back by family name: a row with
 * a wrong offset, size or sign reads another member's value. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/plans.h"
#include "config/config.h"
#include "collectors/qdisc_parse.h"
#include "config/uapi_pkt_sched.h"
#include "lib/buf.h"
#include "tests/unit/nlbuild_qdisc.h"

#define IFI 5

struct fx {
	union {
		char b[16384];
		struct nlmsghdr align;
	} buf;
	struct tcx_qdisc_msg m;
	char err[256];
	unsigned checked; /* rows looked at by xs_raw(), as a mask */
};

/* The generic counters every TCA_STATS2 carries (not a rate estimator's). */
#define SENT_ALWAYS ((1u << TCX_QSTAT_RATE_BYTES) - 1)

static int setup(void **state)
{
	*state = calloc(1, sizeof(struct fx));
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static int parse(struct fx *f, const struct nlmsghdr *nlh)
{
	f->err[0] = '\0';
	f->checked = 0;
	return tcx_parse_qdisc_msg(nlh, &f->m, f->err, sizeof(f->err));
}

static const struct nlb_qstats st0 = {.bytes = 1000, .packets = 10};

/* A kind's message with its statistics as a struct of len bytes. */
static int parse_struct(struct fx *f, int is_class, const char *kind, const void *xs, size_t len)
{
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, is_class, IFI, 0x10010, 0x10001, kind);

	nlb_qstats(nlh, &st0, xs, len);
	return parse(f, nlh);
}

static int row_index(const struct tcx_xstat *rows, unsigned n, const char *family,
                     const char *label_value)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(rows[i].family, family) == 0 &&
		    (!label_value ||
		     (rows[i].label_value && !strcmp(rows[i].label_value, label_value))))
			return (int)i;
	fail_msg("no row %s%s%s", family, label_value ? " " : "", label_value ? label_value : "");
	return -1;
}

/* The raw value of a family (an array element: its label's value), which
 * must be present. */
static uint64_t xs_raw(struct fx *f, const char *family, const char *label_value)
{
	int i;

	assert_non_null(f->m.xt);
	i = row_index(f->m.xt->fields, f->m.xt->n_fields, family, label_value);
	if (!(f->m.xs_present & (1u << i)))
		fail_msg("%s: not present", family);
	f->checked |= 1u << i;
	return f->m.xs[i];
}

static double xs_value(struct fx *f, const char *family)
{
	uint64_t raw = xs_raw(f, family, NULL);

	return tcx_xstat_value(
	        &f->m.xt->fields[row_index(f->m.xt->fields, f->m.xt->n_fields, family, NULL)], raw);
}

/* The text tcx_xstat_put() writes for family's value. */
static const char *xs_text(struct fx *f, const char *family)
{
	static char out[64];
	const struct tcx_xstat *x =
	        &f->m.xt->fields[row_index(f->m.xt->fields, f->m.xt->n_fields, family, NULL)];
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	tcx_xstat_put(&b, x, xs_raw(f, family, NULL));
	assert_false(b.err);
	assert_true(b.len < sizeof(out));
	memcpy(out, b.p, b.len);
	out[b.len] = '\0';
	tcx_buf_free(&b);
	return out;
}

static int xs_present(const struct fx *f, const char *family)
{
	return (f->m.xs_present >> row_index(f->m.xt->fields, f->m.xt->n_fields, family, NULL)) & 1;
}

static uint32_t all_rows(unsigned n)
{
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Every row of the table was present and checked. */
static void all_checked(const struct fx *f)
{
	assert_int_equal(f->m.xs_present, all_rows(f->m.xt->n_fields));
	assert_int_equal(f->checked, all_rows(f->m.xt->n_fields));
}

/* ---- generic counters ------------------------------------------------------------------ */

static void test_generic_stats2(void **state)
{
	struct fx *f = *state;
	struct nlb_qstats st = {.bytes = 0x123456789abULL,
	                        .packets = 77,
	                        .qlen = 3,
	                        .backlog = 4500,
	                        .drops = 5,
	                        .requeues = 6,
	                        .overlimits = 7};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x20000, 0x10010, "pfifo");
	struct nlattr *nest = nlb_qstats_begin(nlh, &st);
	struct tc_stats old = {.bytes = 1, .packets = 2, .drops = 3, .overlimits = 4};

	/* TCA_STATS2 wins over the old struct, whatever it says. */
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put(nlh, TCA_STATS, sizeof(old), &old);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.is_class, 0);
	assert_int_equal(f->m.ifindex, IFI);
	assert_int_equal(f->m.handle, 0x20000);
	assert_int_equal(f->m.parent, 0x10010);
	assert_string_equal(f->m.kind, "pfifo");
	assert_int_equal(f->m.stats_present, SENT_ALWAYS);
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 0x123456789abULL);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 77);
	assert_int_equal(f->m.stats[TCX_QSTAT_DROPS], 5);
	assert_int_equal(f->m.stats[TCX_QSTAT_OVERLIMITS], 7);
	assert_int_equal(f->m.stats[TCX_QSTAT_REQUEUES], 6);
	assert_int_equal(f->m.stats[TCX_QSTAT_BACKLOG_BYTES], 4500);
	assert_int_equal(f->m.stats[TCX_QSTAT_BACKLOG_PACKETS], 3);
	assert_null(f->m.xt);
	assert_int_equal(f->m.xs_present, 0);
	assert_int_equal(f->m.n_tins, 0);
}

/* A rate estimator: TCA_STATS_RATE_EST's 32-bit values, replaced by
 * TCA_STATS_RATE_EST64's when it follows; a short one is refused. */
static void test_rate_est(void **state)
{
	struct fx *f = *state;
	struct nlb_qstats st = {.bytes = 1000, .packets = 10};
	struct gnet_stats_rate_est est = {.bps = 125000, .pps = 83};
	struct gnet_stats_rate_est64 est64 = {.bps = 5000000000ULL, .pps = 4000000};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	struct nlattr *nest = nlb_qstats_begin(nlh, &st);

	mnl_attr_put(nlh, TCA_STATS_RATE_EST, sizeof(est), &est);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats_present, SENT_ALWAYS | (1u << TCX_QSTAT_RATE_BYTES) |
	                                             (1u << TCX_QSTAT_RATE_PACKETS));
	assert_int_equal(f->m.stats[TCX_QSTAT_RATE_BYTES], 125000);
	assert_int_equal(f->m.stats[TCX_QSTAT_RATE_PACKETS], 83);

	nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	nest = nlb_qstats_begin(nlh, &st);
	est.bps = UINT32_MAX; /* what the kernel puts in the 32-bit one then */
	mnl_attr_put(nlh, TCA_STATS_RATE_EST, sizeof(est), &est);
	mnl_attr_put(nlh, TCA_STATS_RATE_EST64, sizeof(est64), &est64);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats[TCX_QSTAT_RATE_BYTES], 5000000000ULL);
	assert_int_equal(f->m.stats[TCX_QSTAT_RATE_PACKETS], 4000000);

	nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	nest = nlb_qstats_begin(nlh, &st);
	mnl_attr_put(nlh, TCA_STATS_RATE_EST64, 8, &est64);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_STATS_RATE_EST64: payload of 8 bytes, expected 16"));
}

/* ---- plans (collectors/plans.c) ------------------------------------------------------------- */

/* tc's bursts: whole microseconds, then whole bytes (tc -d: "burst 15k" at
 * 100mbit prints 15337b, 5mbit's default 1600b). */
static void test_plans_burst(void **state)
{
	(void)state;
	assert_int_equal(tcx_plans_burst(12500000, 19172), 15337);
	assert_int_equal(tcx_plans_burst(625000, 40000), 1600);
	assert_int_equal(tcx_plans_burst(0, 40000), 0);
	/* past 4 GB: no 32-bit truncation, and no overflow (the fuzzer's
	 * regression tests/fuzz/regressions/netlink/plans-burst-overflow) */
	assert_int_equal(tcx_plans_burst(UINT64_C(1) << 40, 15625000), UINT64_C(1) << 40);
	assert_int_equal(tcx_plans_burst(UINT64_MAX, UINT32_MAX), UINT64_MAX);
}

/* An HTB class's options: the 32-bit rate, the 64-bit ceil attribute, the
 * bursts at their rates; a PARMS too short for its fields drops those rows,
 * counted, never the class; no options, no plans. */
static void test_plans_htb_class(void **state)
{
	struct fx *f = *state;
	struct tc_htb_opt o = {.rate = {.rate = 625000},
	                       .ceil = {.rate = UINT32_MAX},
	                       .buffer = 40000,
	                       .cbuffer = 16000,
	                       .quantum = 1514,
	                       .level = 0,
	                       .prio = 3};
	uint64_t ceil64 = 750000000;
	const struct tcx_plans_table *t = tcx_plans_lookup("htb", 1);
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put(nlh, TCA_HTB_PARMS, sizeof(o), &o);
	mnl_attr_put(nlh, TCA_HTB_CEIL64, sizeof(ceil64), &ceil64);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_ptr_equal(f->m.pt, t);
	assert_int_equal(f->m.pl_bad, 0);
	assert_int_equal(f->m.pl_present, (1u << t->n) - 1);
	assert_int_equal(f->m.pl[0], 625000);
	assert_int_equal(f->m.pl[1], 750000000);
	assert_int_equal(f->m.pl[2], 1600);                              /* burst */
	assert_int_equal(f->m.pl[3], tcx_plans_burst(750000000, 16000)); /* cburst */
	assert_int_equal(f->m.pl[4], 3);
	assert_int_equal(f->m.pl[5], 1514);
	assert_int_equal(f->m.pl[6], 0);

	nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put(nlh, TCA_HTB_PARMS, 12, &o); /* rate's struct only */
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_present, 1u << 0);
	assert_int_equal(f->m.pl_bad, t->n - 1);
	/* absent rows are 0, not what the message before left (equal plans
	 * are shared by their values: none may be undefined) */
	for (unsigned i = 1; i < t->n; i++)
		assert_int_equal(f->m.pl[i], 0);

	nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_present, 0);
	assert_int_equal(f->m.pl_bad, 0);
}

/* tbf without a peak rate: no peak rate and no mtu (not 0). */
static void test_plans_tbf(void **state)
{
	struct fx *f = *state;
	struct tc_tbf_qopt o = {.rate = {.rate = 125000}, .limit = 30000, .buffer = 1280000};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0xa0000, 0x10010, "tbf");
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);

	mnl_attr_put(nlh, TCA_TBF_PARMS, sizeof(o), &o);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_present, 0x7); /* rate, burst, limit */
	assert_int_equal(f->m.pl[1], 10240);
	assert_int_equal(f->m.pl[2], 30000);
}

/* The plans of the message in f as text, row by row: "family=value" or
 * "family=label:name", one per line. */
static const char *plans_text(struct fx *f, char *out, size_t size)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	for (unsigned i = 0; f->m.pt && i < f->m.pt->n; i++) {
		const struct tcx_plan *r = &f->m.pt->rows[i];

		if (!(f->m.pl_present & (1u << i)))
			continue;
		tcx_buf_puts(&b, r->family);
		tcx_buf_putc(&b, '=');
		if (tcx_plan_label(r, f->m.pl[i])) {
			tcx_buf_puts(&b, r->label);
			tcx_buf_putc(&b, ':');
			tcx_buf_puts(&b, tcx_plan_label(r, f->m.pl[i]));
		} else {
			tcx_plan_put(&b, r, f->m.pl[i]);
		}
		tcx_buf_putc(&b, '\n');
	}
	tcx_buf_putc(&b, '\0');
	assert_false(b.err);
	snprintf(out, size, "%s", b.p);
	tcx_buf_free(&b);
	return out;
}

/* fq_codel (attributes): times in seconds as tc prints them (target 5ms),
 * ce_threshold only where set. */
static void test_plans_fq_codel(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x80010000, 0x10010, "fq_codel");
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	char txt[2048];

	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_TARGET, 4999);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_LIMIT, 10240);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_INTERVAL, 100000);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_ECN, 1);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_FLOWS, 1024);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_QUANTUM, 1514);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_DROP_BATCH_SIZE, 64);
	mnl_attr_put_u32(nlh, TCA_FQ_CODEL_MEMORY_LIMIT, 33554432);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)),
	                    "tc_qdisc_fq_codel_limit_packets=10240\n"
	                    "tc_qdisc_fq_codel_flows=1024\n"
	                    "tc_qdisc_fq_codel_quantum_bytes=1514\n"
	                    "tc_qdisc_fq_codel_target_seconds=0.004999\n"
	                    "tc_qdisc_fq_codel_interval_seconds=0.1\n"
	                    "tc_qdisc_fq_codel_memory_limit_bytes=33554432\n"
	                    "tc_qdisc_fq_codel_drop_batch_packets=64\n"
	                    "tc_qdisc_fq_codel_ecn=1\n");
}

/* Options that are a struct: sfq's v1 (in a v0 one, depth is malformed:
 * counted, not kept), the fifos' limit, hfsc's u16 default class. */
static void test_plans_struct(void **state)
{
	struct fx *f = *state;
	struct tc_sfq_qopt_v1 o = {.v0 = {.quantum = 1514,
	                                  .perturb_period = 10,
	                                  .limit = 127,
	                                  .divisor = 1024,
	                                  .flows = 128},
	                           .depth = 127};
	struct tc_hfsc_qopt h = {.defcls = 0x20};
	struct tc_fifo_qopt fifo = {.limit = 3000};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "sfq");
	char txt[2048];

	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(o), &o);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)), "tc_qdisc_sfq_limit_packets=127\n"
	                                                     "tc_qdisc_sfq_quantum_bytes=1514\n"
	                                                     "tc_qdisc_sfq_perturb_seconds=10\n"
	                                                     "tc_qdisc_sfq_divisor=1024\n"
	                                                     "tc_qdisc_sfq_flows=128\n"
	                                                     "tc_qdisc_sfq_depth_packets=127\n");

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "sfq");
	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(o.v0), &o.v0);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_present, 0x1f); /* the v0 fields */
	assert_int_equal(f->m.pl_bad, 1);        /* depth */

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "bfifo");
	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(fifo), &fifo);
	assert_int_equal(parse(f, nlh), 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)), "tc_qdisc_bfifo_limit_bytes=3000\n");

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "hfsc");
	mnl_attr_put(nlh, TCA_OPTIONS, sizeof(h), &h);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)), "tc_qdisc_hfsc_default_class=32\n");
}

/* netem: a struct, then attributes after it; the 64-bit delays in ns. */
static void test_plans_netem(void **state)
{
	struct fx *f = *state;
	struct tc_netem_qopt o = {.latency = 1562500, .limit = 1000, .loss = UINT32_MAX / 100};
	struct tc_netem_rate rt = {.rate = 125000};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "netem");
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	char txt[2048];

	/* the struct as the attribute's first bytes, as netem_dump puts it */
	memcpy(mnl_nlmsg_get_payload_tail(nlh), &o, sizeof(o));
	nlh->nlmsg_len += MNL_ALIGN(sizeof(o));
	mnl_attr_put_u64(nlh, TCA_NETEM_LATENCY64, 100000000);
	mnl_attr_put_u64(nlh, TCA_NETEM_JITTER64, 0);
	mnl_attr_put(nlh, TCA_NETEM_RATE, sizeof(rt), &rt);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)),
	                    "tc_qdisc_netem_limit_packets=1000\n"
	                    "tc_qdisc_netem_delay_seconds=0.1\n"
	                    "tc_qdisc_netem_jitter_seconds=0\n"
	                    "tc_qdisc_netem_loss_ratio=0.009999999778810888\n"
	                    "tc_qdisc_netem_duplicate_ratio=0\n"
	                    "tc_qdisc_netem_rate_bytes_per_second=125000\n");
}

/* cake's modes as labels (a mode newer than the table: absent, not
 * malformed); fq's maxrate and ce_threshold absent when ~0 (unset). */
static void test_plans_modes(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "cake");
	struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	char txt[2048];

	mnl_attr_put_u64(nlh, TCA_CAKE_BASE_RATE64, 1250000);
	mnl_attr_put_u32(nlh, TCA_CAKE_DIFFSERV_MODE, 3);
	mnl_attr_put_u32(nlh, TCA_CAKE_FLOW_MODE, 99);
	mnl_attr_put_u32(nlh, TCA_CAKE_RTT, 100000);
	mnl_attr_put_u32(nlh, TCA_CAKE_MEMORY, 0);
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 0);
	assert_string_equal(plans_text(f, txt, sizeof(txt)),
	                    "tc_qdisc_cake_bandwidth_bytes_per_second=1250000\n"
	                    "tc_qdisc_cake_rtt_seconds=0.1\n"
	                    "tc_qdisc_cake_diffserv_info=diffserv:besteffort\n");

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "fq");
	opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	mnl_attr_put_u32(nlh, TCA_FQ_PLIMIT, 10000);
	mnl_attr_put_u32(nlh, TCA_FQ_FLOW_MAX_RATE, UINT32_MAX);
	mnl_attr_put_u32(nlh, TCA_FQ_CE_THRESHOLD, UINT32_MAX);
	mnl_attr_put_u32(nlh, TCA_FQ_HORIZON, 10000000);
	mnl_attr_put_u32(nlh, TCA_FQ_BUCKETS_LOG, 10);       /* 1024 buckets, as tc prints */
	mnl_attr_put_u16(nlh, TCA_FQ_LOW_RATE_THRESHOLD, 1); /* too short: counted */
	mnl_attr_nest_end(nlh, opts);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.pl_bad, 1);
	assert_string_equal(plans_text(f, txt, sizeof(txt)), "tc_qdisc_fq_limit_packets=10000\n"
	                                                     "tc_qdisc_fq_buckets=1024\n"
	                                                     "tc_qdisc_fq_horizon_seconds=10\n");
}

static int ends_in(const char *name, const char *suffix);

/* Every table: names by the units rule, a burst after its rate. */
static void test_plans_tables(void **state)
{
	(void)state;
	for (size_t k = 0; k < tcx_plans_n_tables; k++) {
		const struct tcx_plans_table *t = tcx_plans_tables[k];
		char prefix[64], suffix[64];

		assert_ptr_equal(tcx_plans_lookup(t->kind, t->is_class), t);
		assert_true(t->n > 0 && t->n <= TCX_PLANS_MAX);
		snprintf(prefix, sizeof(prefix), "tc_%s_%s_", t->is_class ? "class" : "qdisc",
		         t->kind);
		for (unsigned i = 0; i < t->n; i++) {
			const struct tcx_plan *r = &t->rows[i];
			int counter = r->type == TCX_XSTAT_COUNTER;

			assert_int_equal(strncmp(r->family, prefix, strlen(prefix)), 0);
			assert_int_equal(ends_in(r->family, "_total"), counter);
			snprintf(suffix, sizeof(suffix), "%s%s%s", r->unit[0] ? "_" : "", r->unit,
			         counter ? "_total" : "");
			if (suffix[0] && !ends_in(r->family, suffix))
				fail_msg("%s: its unit is '%s'", r->family, r->unit);
			if (r->how == TCX_PLAN_RATE)
				assert_string_equal(r->unit, "bytes_per_second");
			if (r->how == TCX_PLAN_BURST) {
				assert_true(r->rate < i);
				assert_int_equal(t->rows[r->rate].how, TCX_PLAN_RATE);
				assert_string_equal(r->unit, "bytes");
			}
			if (!strcmp(r->unit, "seconds") && r->how != TCX_PLAN_U32)
				assert_true(r->div > 1); /* sfq's perturb is whole seconds */
			if (r->div)
				assert_true(!strcmp(r->unit, "seconds") ||
				            !strcmp(r->unit, "ratio"));
			if (r->how == TCX_PLAN_ENUM) { /* an info family, its modes a label */
				assert_true(ends_in(r->family, "_info") && r->n_names > 0);
				assert_true(tcx_label_name_reserved(r->label));
			} else {
				assert_null(r->label);
				assert_true(!r->unit[0] || !strcmp(r->unit, "bytes") ||
				            !strcmp(r->unit, "seconds") ||
				            !strcmp(r->unit, "ratio") ||
				            !strcmp(r->unit, "packets") ||
				            !strcmp(r->unit, "bytes_per_second") ||
				            !strcmp(r->unit, "packets_per_second"));
			}
			assert_true(r->attr || t->head); /* the head struct, where there is one */
			for (unsigned j = 0; j < i; j++) {
				assert_string_not_equal(t->rows[j].family, r->family);
				assert_true(!r->role || t->rows[j].role != r->role);
			}
			/* one family, one table: none shared with another's or xstats */
			for (size_t k2 = 0; k2 < k; k2++)
				for (unsigned j = 0; j < tcx_plans_tables[k2]->n; j++)
					assert_string_not_equal(
					        tcx_plans_tables[k2]->rows[j].family, r->family);
			for (size_t x = 0; x < tcx_xstats_n_tables; x++)
				for (unsigned j = 0; j < tcx_xstats_tables[x]->n_fields; j++)
					assert_string_not_equal(
					        tcx_xstats_tables[x]->fields[j].family, r->family);
		}
	}
}

static void test_pkt64(void **state)
{
	struct fx *f = *state;
	struct nlb_qstats st = {.bytes = 1ULL << 42, .packets = 0x100000005ULL};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");

	nlb_qstats(nlh, &st, NULL, 0);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.is_class, 1);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 0x100000005ULL);
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 1ULL << 42);
}

/* PKT64 twice, after BASIC and after BASIC_HW, in either order, with a pad
 * before one of them: each pairs with the basic stats before it. */
static void test_pkt64_twice(void **state)
{
	struct fx *f = *state;
	const uint64_t sw = 0x300000001ULL, hw = 0x200000002ULL;
	struct gnet_stats_basic b;

	for (int order = 0; order < 2; order++) {
		struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "mq");
		struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_STATS2);

		for (int i = 0; i < 2; i++) {
			int is_hw = (i == 0) == (order == 0) ? 0 : 1;

			memset(&b, 0, sizeof(b));
			b.bytes = is_hw ? 50 : 100;
			b.packets = (uint32_t)(is_hw ? hw : sw);
			mnl_attr_put(nlh, is_hw ? TCA_STATS_BASIC_HW : TCA_STATS_BASIC, sizeof(b),
			             &b);
			if (!is_hw)
				mnl_attr_put(nlh, TCA_STATS_PAD, 0, NULL);
			mnl_attr_put_u64(nlh, TCA_STATS_PKT64, is_hw ? hw : sw);
		}
		mnl_attr_nest_end(nlh, nest);
		assert_int_equal(parse(f, nlh), 0);
		assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], sw);
		assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 100);
		/* No TCA_STATS_QUEUE: those counters are absent. */
		assert_int_equal(f->m.stats_present,
		                 (1u << TCX_QSTAT_BYTES) | (1u << TCX_QSTAT_PACKETS));
	}
}

static void test_pkt64_stray(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "pfifo");
	struct nlattr *nest = mnl_attr_nest_start(nlh, TCA_STATS2);
	struct gnet_stats_queue q = {0};

	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	mnl_attr_put_u64(nlh, TCA_STATS_PKT64, 5);
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_STATS_PKT64 follows attribute 3"));

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "pfifo");
	nest = mnl_attr_nest_start(nlh, TCA_STATS2);
	mnl_attr_put_u32(nlh, TCA_STATS_PKT64, 5); /* 4 bytes */
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_STATS_PKT64: payload of 4 bytes"));
}

/* A kernel without TCA_STATS2: the old struct, and the statistics in
 * TCA_XSTATS. No requeues there. */
static void test_stats_compat_only(void **state)
{
	struct fx *f = *state;
	struct tc_stats old = {.bytes = 1ULL << 33,
	                       .packets = 9,
	                       .drops = 8,
	                       .overlimits = 7,
	                       .bps = 6,
	                       .pps = 5,
	                       .qlen = 4,
	                       .backlog = 3};
	struct tc_htb_xstats x = {
	        .lends = 21, .borrows = 22, .giants = 23, .tokens = 24, .ctokens = 25};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x10010, 0x10001, "htb");

	mnl_attr_put(nlh, TCA_STATS, sizeof(old), &old);
	mnl_attr_put(nlh, TCA_XSTATS, sizeof(x), &x);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats_present, SENT_ALWAYS & ~(1u << TCX_QSTAT_REQUEUES));
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 1ULL << 33);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 9);
	assert_int_equal(f->m.stats[TCX_QSTAT_DROPS], 8);
	assert_int_equal(f->m.stats[TCX_QSTAT_OVERLIMITS], 7);
	assert_int_equal(f->m.stats[TCX_QSTAT_BACKLOG_PACKETS], 4);
	assert_int_equal(f->m.stats[TCX_QSTAT_BACKLOG_BYTES], 3);
	assert_int_equal(xs_raw(f, "tc_class_htb_lends_total", NULL), 21);
	assert_int_equal(xs_raw(f, "tc_class_htb_ctokens_seconds", NULL), 25);

	/* A short old struct (bytes and packets only): the rest reads 0, as
	 * tc copies it. No statistics at all: nothing present. */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "pfifo");
	mnl_attr_put(nlh, TCA_STATS, 12, &old);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 9);
	assert_int_equal(f->m.stats[TCX_QSTAT_DROPS], 0);
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "pfifo");
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats_present, 0);
	assert_null(f->m.xt);
}

/* TCA_STATS_APP wins over the compat TCA_XSTATS. */
static void test_app_preferred(void **state)
{
	struct fx *f = *state;
	struct tc_sfq_xstats app = {.allot = 1514}, old = {.allot = 1};
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x80000001U, 0x80000000U, "sfq");
	struct nlattr *nest = nlb_qstats_begin(nlh, &st0);

	mnl_attr_put(nlh, TCA_STATS_APP, sizeof(app), &app);
	nlb_qstats_end(nlh, nest, &st0, &old, sizeof(old));
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(xs_raw(f, "tc_class_sfq_allot_bytes", NULL), 1514);
}

/* ---- each kind's table ------------------------------------------------------------------- */

static void test_htb(void **state)
{
	struct fx *f = *state;
	struct tc_htb_xstats x = {
	        .lends = 101, .borrows = 102, .giants = 103, .tokens = -104, .ctokens = 105};

	assert_int_equal(parse_struct(f, 1, "htb", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_class_htb_lends_total", NULL), 101);
	assert_int_equal(xs_raw(f, "tc_class_htb_borrows_total", NULL), 102);
	assert_int_equal(xs_raw(f, "tc_class_htb_giants_total", NULL), 103);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_htb_tokens_seconds", NULL), -104);
	assert_int_equal(xs_raw(f, "tc_class_htb_ctokens_seconds", NULL), 105);
	all_checked(f);
	/* psched ticks of 64 ns, signed */
	assert_true(xs_value(f, "tc_class_htb_tokens_seconds") == -104 * 64e-9);
	assert_true(xs_value(f, "tc_class_htb_ctokens_seconds") == 105 * 64 / 1e9);
	/* written exactly, in seconds */
	assert_string_equal(xs_text(f, "tc_class_htb_tokens_seconds"), "-0.000006656");
	assert_string_equal(xs_text(f, "tc_class_htb_ctokens_seconds"), "0.00000672");
	/* an htb qdisc has no table: generic counters only */
	assert_int_equal(parse_struct(f, 0, "htb", &x, sizeof(x)), 0);
	assert_null(f->m.xt);
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 1000);

	x.tokens = INT_MIN;
	x.ctokens = INT_MAX;
	assert_int_equal(parse_struct(f, 1, "htb", &x, sizeof(x)), 0);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_htb_tokens_seconds", NULL), INT_MIN);
	assert_int_equal(xs_raw(f, "tc_class_htb_ctokens_seconds", NULL), INT_MAX);
	assert_string_equal(xs_text(f, "tc_class_htb_tokens_seconds"), "-137.438953472");
	assert_string_equal(xs_text(f, "tc_class_htb_ctokens_seconds"), "137.438953408");
	x.tokens = 0;
	x.ctokens = 15625000; /* one second */
	assert_int_equal(parse_struct(f, 1, "htb", &x, sizeof(x)), 0);
	assert_string_equal(xs_text(f, "tc_class_htb_tokens_seconds"), "0");
	assert_string_equal(xs_text(f, "tc_class_htb_ctokens_seconds"), "1");
}

static void test_hfsc(void **state)
{
	struct fx *f = *state;
	struct tc_hfsc_stats x = {
	        .work = 0x1000000001ULL, .rtwork = 0x2000000002ULL, .period = 203, .level = 204};

	assert_int_equal(parse_struct(f, 1, "hfsc", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_class_hfsc_work_bytes_total", NULL), 0x1000000001ULL);
	assert_int_equal(xs_raw(f, "tc_class_hfsc_rtwork_bytes_total", NULL), 0x2000000002ULL);
	assert_int_equal(xs_raw(f, "tc_class_hfsc_period_total", NULL), 203);
	assert_int_equal(xs_raw(f, "tc_class_hfsc_level", NULL), 204);
	all_checked(f);
}

static void test_fq_codel_qdisc(void **state)
{
	struct fx *f = *state;
	struct tc_fq_codel_xstats x = {.type = TCA_FQ_CODEL_XSTATS_QDISC,
	                               .qdisc_stats = {.maxpacket = 301,
	                                               .drop_overlimit = 302,
	                                               .ecn_mark = 303,
	                                               .new_flow_count = 304,
	                                               .new_flows_len = 305,
	                                               .old_flows_len = 306,
	                                               .ce_mark = 307,
	                                               .memory_usage = 308,
	                                               .drop_overmemory = 309}};

	assert_int_equal(parse_struct(f, 0, "fq_codel", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_maxpacket_bytes", NULL), 301);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_drop_overlimit_total", NULL), 302);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_ecn_mark_total", NULL), 303);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_new_flow_count_total", NULL), 304);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_new_flows_len", NULL), 305);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_old_flows_len", NULL), 306);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_ce_mark_total", NULL), 307);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_memory_usage_bytes", NULL), 308);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_drop_overmemory_total", NULL), 309);
	all_checked(f);
	assert_false(f->m.xt->is_class);
}

static void test_fq_codel_class(void **state)
{
	struct fx *f = *state;
	struct tc_fq_codel_xstats x = {.type = TCA_FQ_CODEL_XSTATS_CLASS,
	                               .class_stats = {.deficit = -401,
	                                               .ldelay = 402,
	                                               .count = 403,
	                                               .lastcount = 404,
	                                               .dropping = 1,
	                                               .drop_next = -406}};

	assert_int_equal(parse_struct(f, 1, "fq_codel", &x, sizeof(x)), 0);
	assert_true(f->m.xt->is_class);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_fq_codel_deficit_bytes", NULL), -401);
	assert_int_equal(xs_raw(f, "tc_class_fq_codel_ldelay_seconds", NULL), 402);
	assert_int_equal(xs_raw(f, "tc_class_fq_codel_count_packets", NULL), 403);
	assert_int_equal(xs_raw(f, "tc_class_fq_codel_lastcount_packets", NULL), 404);
	assert_int_equal(xs_raw(f, "tc_class_fq_codel_dropping", NULL), 1);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_fq_codel_drop_next_seconds", NULL), -406);
	all_checked(f);
	assert_true(xs_value(f, "tc_class_fq_codel_ldelay_seconds") == 402 / 1e6);
	assert_true(xs_value(f, "tc_class_fq_codel_drop_next_seconds") == -406 / 1e6);
}

/* The type discriminator: the other variant, an unknown one, or too short
 * for it, and the message keeps its counters without statistics. */
static void test_fq_codel_variant(void **state)
{
	struct fx *f = *state;
	struct tc_fq_codel_xstats x = {.type = TCA_FQ_CODEL_XSTATS_CLASS};

	assert_int_equal(parse_struct(f, 0, "fq_codel", &x, sizeof(x)), 0);
	assert_null(f->m.xt);
	assert_int_equal(f->m.xs_present, 0);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 10);
	x.type = TCA_FQ_CODEL_XSTATS_QDISC;
	assert_int_equal(parse_struct(f, 1, "fq_codel", &x, sizeof(x)), 0);
	assert_null(f->m.xt);
	x.type = 7;
	assert_int_equal(parse_struct(f, 0, "fq_codel", &x, sizeof(x)), 0);
	assert_null(f->m.xt);
	x.type = TCA_FQ_CODEL_XSTATS_QDISC;
	assert_int_equal(parse_struct(f, 0, "fq_codel", &x, 3), 0);
	assert_null(f->m.xt);
	/* type and maxpacket only */
	x.qdisc_stats.maxpacket = 1514;
	assert_int_equal(parse_struct(f, 0, "fq_codel", &x, 8), 0);
	assert_non_null(f->m.xt);
	assert_int_equal(f->m.xs_present, 1);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_codel_maxpacket_bytes", NULL), 1514);
}

/* struct tc_fq_qd_stats as Linux 6.7 to 6.19 lay it out, written at the
 * offsets of that layout (independently of uapi_pkt_sched.h). */
static size_t fq_put(uint8_t *b, size_t off, uint64_t v, size_t size)
{
	uint32_t v32 = (uint32_t)v;

	if (size == 4)
		memcpy(b + off, &v32, 4);
	else
		memcpy(b + off, &v, 8);
	return off + size;
}

static void test_fq(void **state)
{
	struct fx *f = *state;
	uint8_t b[152] = {0};
	size_t o = 0;
	struct tc_fq_qd_stats old;

	for (int i = 0; i < 7; i++) /* gc_flows .. allocation_errors */
		o = fq_put(b, o, 0x500000000ULL + 501 + (uint64_t)i, 8);
	o = fq_put(b, o, 2500000000ULL, 8); /* time_next_delayed_flow: 2.5 s */
	for (int i = 0; i < 4; i++)         /* flows .. unthrottle_latency_ns */
		o = fq_put(b, o, 509 + (uint64_t)i, 4);
	for (int i = 0; i < 4; i++) /* ce_mark .. fastpath_packets */
		o = fq_put(b, o, 0x600000000ULL + 513 + (uint64_t)i, 8);
	assert_int_equal(o, 112);
	for (int i = 0; i < 3; i++)
		o = fq_put(b, o, 0x700000000ULL + 517 + (uint64_t)i, 8);
	for (int i = 0; i < 3; i++)
		o = fq_put(b, o, 520 + (uint64_t)i, 4);
	assert_int_equal(o, 148);

	assert_int_equal(parse_struct(f, 0, "fq", b, sizeof(b)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_gc_flows_total", NULL), 0x500000000ULL + 501);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_highprio_packets_total", NULL),
	                 0x500000000ULL + 502);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_tcp_retrans_total", NULL), 0x500000000ULL + 503);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_throttled_total", NULL), 0x500000000ULL + 504);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_flows_plimit_total", NULL), 0x500000000ULL + 505);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pkts_too_long_total", NULL), 0x500000000ULL + 506);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_allocation_errors_total", NULL),
	                 0x500000000ULL + 507);
	assert_true(xs_value(f, "tc_qdisc_fq_time_next_delayed_flow_seconds") == 2.5);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_flows", NULL), 509);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_inactive_flows", NULL), 510);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_throttled_flows", NULL), 511);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_unthrottle_latency_seconds", NULL), 512);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_ce_mark_total", NULL), 0x600000000ULL + 513);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_horizon_drops_total", NULL), 0x600000000ULL + 514);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_horizon_caps_total", NULL), 0x600000000ULL + 515);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_fastpath_packets_total", NULL),
	                 0x600000000ULL + 516);
	for (int i = 0; i < 3; i++) {
		char band[2] = {(char)('0' + i), 0};

		assert_int_equal(xs_raw(f, "tc_qdisc_fq_band_drops_total", band),
		                 0x700000000ULL + 517 + (uint64_t)i);
		assert_int_equal(xs_raw(f, "tc_qdisc_fq_band_pkt_count_packets", band),
		                 520 + (uint64_t)i);
	}
	all_checked(f);

	/* No flow throttled: the kernel sends a time in the past, which tc
	 * leaves out, and so do we. */
	fq_put(b, 56, (uint64_t)-12345, 8);
	assert_int_equal(parse_struct(f, 0, "fq", b, sizeof(b)), 0);
	assert_false(xs_present(f, "tc_qdisc_fq_time_next_delayed_flow_seconds"));
	fq_put(b, 56, 0, 8);
	assert_int_equal(parse_struct(f, 0, "fq", b, sizeof(b)), 0);
	assert_false(xs_present(f, "tc_qdisc_fq_time_next_delayed_flow_seconds"));

	/* A 6.1 kernel's shorter struct: all but the 6.7 fields. */
	assert_int_equal(sizeof(old), 104);
	assert_int_equal(parse_struct(f, 0, "fq", b, sizeof(old)), 0);
	assert_int_equal(f->m.xs_present,
	                 all_rows(f->m.xt->n_fields) & ~(0x7fu << 15) & ~(1u << 7));
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_horizon_caps_total", NULL), 0x600000000ULL + 515);
	assert_false(xs_present(f, "tc_qdisc_fq_fastpath_packets_total"));
}

static void test_fq_pie(void **state)
{
	struct fx *f = *state;
	struct tc_fq_pie_xstats x = {.packets_in = 601,
	                             .dropped = 602,
	                             .overlimit = 603,
	                             .overmemory = 604,
	                             .ecn_mark = 605,
	                             .new_flow_count = 606,
	                             .new_flows_len = 607,
	                             .old_flows_len = 608,
	                             .memory_usage = 609};

	assert_int_equal(parse_struct(f, 0, "fq_pie", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_packets_in_total", NULL), 601);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_dropped_total", NULL), 602);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_overlimit_total", NULL), 603);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_overmemory_total", NULL), 604);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_ecn_mark_total", NULL), 605);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_new_flow_count_total", NULL), 606);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_new_flows_len", NULL), 607);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_old_flows_len", NULL), 608);
	assert_int_equal(xs_raw(f, "tc_qdisc_fq_pie_memory_usage_bytes", NULL), 609);
	all_checked(f);
}

static void test_codel(void **state)
{
	struct fx *f = *state;
	struct tc_codel_xstats x = {.maxpacket = 701,
	                            .count = 702,
	                            .lastcount = 703,
	                            .ldelay = 704,
	                            .drop_next = -705,
	                            .drop_overlimit = 706,
	                            .ecn_mark = 707,
	                            .dropping = 1,
	                            .ce_mark = 709};

	assert_int_equal(parse_struct(f, 0, "codel", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_maxpacket_bytes", NULL), 701);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_count_packets", NULL), 702);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_lastcount_packets", NULL), 703);
	assert_true(xs_value(f, "tc_qdisc_codel_ldelay_seconds") == 704 / 1e6);
	assert_true(xs_value(f, "tc_qdisc_codel_drop_next_seconds") == -705 / 1e6);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_drop_overlimit_total", NULL), 706);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_ecn_mark_total", NULL), 707);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_dropping", NULL), 1);
	assert_int_equal(xs_raw(f, "tc_qdisc_codel_ce_mark_total", NULL), 709);
	all_checked(f);
}

static void test_pie(void **state)
{
	struct fx *f = *state;
	struct tc_pie_xstats x = {.prob = UINT64_MAX / 4,
	                          .delay = 802,
	                          .avg_dq_rate = 803,
	                          .dq_rate_estimating = 1,
	                          .packets_in = 805,
	                          .dropped = 806,
	                          .overlimit = 807,
	                          .maxq = 808,
	                          .ecn_mark = 809};

	assert_int_equal(parse_struct(f, 0, "pie", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_prob_ratio", NULL), UINT64_MAX / 4);
	assert_true(fabs(xs_value(f, "tc_qdisc_pie_prob_ratio") - 0.25) < 1e-15);
	assert_true(xs_value(f, "tc_qdisc_pie_delay_seconds") == 802 / 1e6);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_avg_dq_rate_bytes_per_second", NULL), 803);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_dq_rate_estimating", NULL), 1);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_packets_in_total", NULL), 805);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_dropped_total", NULL), 806);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_overlimit_total", NULL), 807);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_maxq_packets", NULL), 808);
	assert_int_equal(xs_raw(f, "tc_qdisc_pie_ecn_mark_total", NULL), 809);
	all_checked(f);
}

static void test_red_choke(void **state)
{
	struct fx *f = *state;
	struct tc_red_xstats r = {.early = 901, .pdrop = 902, .other = 903, .marked = 904};
	struct tc_choke_xstats c = {
	        .early = 911, .pdrop = 912, .other = 913, .marked = 914, .matched = 915};

	assert_int_equal(parse_struct(f, 0, "red", &r, sizeof(r)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_red_early_total", NULL), 901);
	assert_int_equal(xs_raw(f, "tc_qdisc_red_pdrop_total", NULL), 902);
	assert_int_equal(xs_raw(f, "tc_qdisc_red_other_total", NULL), 903);
	assert_int_equal(xs_raw(f, "tc_qdisc_red_marked_total", NULL), 904);
	all_checked(f);
	assert_int_equal(parse_struct(f, 0, "choke", &c, sizeof(c)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_choke_early_total", NULL), 911);
	assert_int_equal(xs_raw(f, "tc_qdisc_choke_pdrop_total", NULL), 912);
	assert_int_equal(xs_raw(f, "tc_qdisc_choke_other_total", NULL), 913);
	assert_int_equal(xs_raw(f, "tc_qdisc_choke_marked_total", NULL), 914);
	assert_int_equal(xs_raw(f, "tc_qdisc_choke_matched_total", NULL), 915);
	all_checked(f);
}

static void test_sfb(void **state)
{
	struct fx *f = *state;
	struct tc_sfb_xstats x = {.earlydrop = 1001,
	                          .penaltydrop = 1002,
	                          .bucketdrop = 1003,
	                          .queuedrop = 1004,
	                          .childdrop = 1005,
	                          .marked = 1006,
	                          .maxqlen = 1007,
	                          .maxprob = SFB_MAX_PROB,
	                          .avgprob = 13107}; /* 0.2 */

	assert_int_equal(parse_struct(f, 0, "sfb", &x, sizeof(x)), 0);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_earlydrop_total", NULL), 1001);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_penaltydrop_total", NULL), 1002);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_bucketdrop_total", NULL), 1003);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_queuedrop_total", NULL), 1004);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_childdrop_total", NULL), 1005);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_marked_total", NULL), 1006);
	assert_int_equal(xs_raw(f, "tc_qdisc_sfb_maxqlen_packets", NULL), 1007);
	assert_true(xs_value(f, "tc_qdisc_sfb_maxprob_ratio") == 1.0);
	assert_true(xs_value(f, "tc_qdisc_sfb_avgprob_ratio") == 0.2);
	all_checked(f);
}

static void test_sfq(void **state)
{
	struct fx *f = *state;
	struct tc_sfq_xstats x = {.allot = -1100};

	assert_int_equal(parse_struct(f, 1, "sfq", &x, sizeof(x)), 0);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_sfq_allot_bytes", NULL), -1100);
	all_checked(f);
	/* an sfq qdisc has no table */
	assert_int_equal(parse_struct(f, 0, "sfq", &x, sizeof(x)), 0);
	assert_null(f->m.xt);
}

/* Short and long structs: the fields the payload holds whole. */
static void test_short_long(void **state)
{
	struct fx *f = *state;
	struct {
		struct tc_htb_xstats x;
		uint32_t future[3];
	} big = {{.lends = 1, .borrows = 2, .giants = 3, .tokens = 4, .ctokens = 5}, {6, 7, 8}};

	assert_int_equal(parse_struct(f, 1, "htb", &big, 11), 0);
	assert_int_equal(f->m.xs_present, 0x3); /* lends, borrows; giants is cut */
	assert_int_equal(xs_raw(f, "tc_class_htb_borrows_total", NULL), 2);
	assert_int_equal(parse_struct(f, 1, "htb", &big, 0), 0);
	assert_non_null(f->m.xt);
	assert_int_equal(f->m.xs_present, 0);
	assert_int_equal(parse_struct(f, 1, "htb", &big, sizeof(big)), 0);
	assert_int_equal(f->m.xs_present, 0x1f);
	assert_int_equal(xs_raw(f, "tc_class_htb_ctokens_seconds", NULL), 5);
}

/* ---- cake ------------------------------------------------------------------------------ */

/* A tin's attribute a, of tin t: distinct in every tin and attribute. */
static uint64_t tin_val(int t, int a)
{
	return (uint64_t)(t + 1) * 1000 + (uint64_t)a;
}

static const struct {
	uint16_t attr;
	int is64;
	const char *family;
} cake_tin_attrs[] = {
        {TCA_CAKE_TIN_STATS_THRESHOLD_RATE64, 1,
         "tc_qdisc_cake_tin_threshold_rate_bytes_per_second"},
        {TCA_CAKE_TIN_STATS_SENT_BYTES64, 1, "tc_qdisc_cake_tin_sent_bytes_total"},
        {TCA_CAKE_TIN_STATS_BACKLOG_BYTES, 0, "tc_qdisc_cake_tin_backlog_bytes"},
        {TCA_CAKE_TIN_STATS_TARGET_US, 0, "tc_qdisc_cake_tin_target_seconds"},
        {TCA_CAKE_TIN_STATS_INTERVAL_US, 0, "tc_qdisc_cake_tin_interval_seconds"},
        {TCA_CAKE_TIN_STATS_SENT_PACKETS, 0, "tc_qdisc_cake_tin_sent_packets_total"},
        {TCA_CAKE_TIN_STATS_DROPPED_PACKETS, 0, "tc_qdisc_cake_tin_dropped_packets_total"},
        {TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS, 0, "tc_qdisc_cake_tin_ecn_marked_packets_total"},
        {TCA_CAKE_TIN_STATS_ACKS_DROPPED_PACKETS, 0,
         "tc_qdisc_cake_tin_acks_dropped_packets_total"},
        {TCA_CAKE_TIN_STATS_PEAK_DELAY_US, 0, "tc_qdisc_cake_tin_peak_delay_seconds"},
        {TCA_CAKE_TIN_STATS_AVG_DELAY_US, 0, "tc_qdisc_cake_tin_avg_delay_seconds"},
        {TCA_CAKE_TIN_STATS_BASE_DELAY_US, 0, "tc_qdisc_cake_tin_base_delay_seconds"},
        {TCA_CAKE_TIN_STATS_WAY_INDIRECT_HITS, 0, "tc_qdisc_cake_tin_way_indirect_hits_total"},
        {TCA_CAKE_TIN_STATS_WAY_MISSES, 0, "tc_qdisc_cake_tin_way_misses_total"},
        {TCA_CAKE_TIN_STATS_WAY_COLLISIONS, 0, "tc_qdisc_cake_tin_way_collisions_total"},
        {TCA_CAKE_TIN_STATS_SPARSE_FLOWS, 0, "tc_qdisc_cake_tin_sparse_flows"},
        {TCA_CAKE_TIN_STATS_BULK_FLOWS, 0, "tc_qdisc_cake_tin_bulk_flows"},
        {TCA_CAKE_TIN_STATS_UNRESPONSIVE_FLOWS, 0, "tc_qdisc_cake_tin_unresponsive_flows"},
        {TCA_CAKE_TIN_STATS_MAX_SKBLEN, 0, "tc_qdisc_cake_tin_max_skblen_bytes"},
        {TCA_CAKE_TIN_STATS_FLOW_QUANTUM, 0, "tc_qdisc_cake_tin_flow_quantum_bytes"},
};
#define N_TIN_ATTRS (sizeof(cake_tin_attrs) / sizeof(cake_tin_attrs[0]))

/* cake_dump_stats()'s layout: the qdisc's attributes, then the tins' nest
 * with n tins, attributes in the kernel's order, pads where 64-bit ones
 * need them, and an attribute of a newer kernel in each. */
static struct nlmsghdr *cake_msg(struct fx *f, int n)
{
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x80010000U, TC_H_ROOT, "cake");
	struct nlattr *s2 = nlb_qstats_begin(nlh, &st0);
	struct nlattr *app = mnl_attr_nest_start(nlh, TCA_STATS_APP), *tins;

	mnl_attr_put(nlh, TCA_CAKE_STATS_PAD, 0, NULL);
	mnl_attr_put_u64(nlh, TCA_CAKE_STATS_CAPACITY_ESTIMATE64, 12500000000ULL);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MEMORY_LIMIT, 4194304);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MEMORY_USED, 65536);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_AVG_NETOFF, 14);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MAX_NETLEN, 1500);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MAX_ADJLEN, 1538);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MIN_NETLEN, 28);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_MIN_ADJLEN, 66);
	mnl_attr_put_u32(nlh, 40, 0xdead); /* a newer kernel's */
	tins = mnl_attr_nest_start(nlh, TCA_CAKE_STATS_TIN_STATS);
	for (int t = 0; t < n; t++) {
		struct nlattr *tin = mnl_attr_nest_start(nlh, (uint16_t)(t + 1));

		for (size_t a = 0; a < N_TIN_ATTRS; a++) {
			if (cake_tin_attrs[a].is64) {
				mnl_attr_put(nlh, TCA_CAKE_TIN_STATS_PAD, 0, NULL);
				mnl_attr_put_u64(nlh, cake_tin_attrs[a].attr, tin_val(t, (int)a));
			} else {
				mnl_attr_put_u32(nlh, cake_tin_attrs[a].attr,
				                 (uint32_t)tin_val(t, (int)a));
			}
		}
		mnl_attr_put_u32(nlh, 60, 0xbeef);
		mnl_attr_nest_end(nlh, tin);
	}
	mnl_attr_nest_end(nlh, tins);
	mnl_attr_nest_end(nlh, app);
	nlb_qstats_end(nlh, s2, &st0, NULL, 0);
	return nlh;
}

static void test_cake_qdisc(void **state)
{
	struct fx *f = *state;
	const struct tcx_xstats_table *t;

	assert_int_equal(parse(f, cake_msg(f, 4)), 0);
	t = f->m.xt;
	assert_non_null(t);
	assert_string_equal(t->tin_label, "tin");
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_capacity_estimate_bytes_per_second", NULL),
	                 12500000000ULL);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_memory_limit_bytes", NULL), 4194304);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_memory_used_bytes", NULL), 65536);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_avg_netoff_bytes", NULL), 14);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_max_netlen_bytes", NULL), 1500);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_max_adjlen_bytes", NULL), 1538);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_min_netlen_bytes", NULL), 28);
	assert_int_equal(xs_raw(f, "tc_qdisc_cake_min_adjlen_bytes", NULL), 66);
	all_checked(f);
	assert_int_equal(f->m.n_tins, 4);
	assert_int_equal(t->n_tin_fields, N_TIN_ATTRS);
	for (int tin = 0; tin < 4; tin++) {
		assert_int_equal(f->m.tin_present[tin], all_rows(t->n_tin_fields));
		for (size_t a = 0; a < N_TIN_ATTRS; a++) {
			int i = row_index(t->tin_fields, t->n_tin_fields, cake_tin_attrs[a].family,
			                  NULL);

			assert_int_equal(f->m.tin[tin][i], tin_val(tin, (int)a));
		}
	}
	/* microseconds to seconds */
	int pk = row_index(t->tin_fields, t->n_tin_fields, "tc_qdisc_cake_tin_peak_delay_seconds",
	                   NULL);
	assert_true(tcx_xstat_value(&t->tin_fields[pk], f->m.tin[2][pk]) == tin_val(2, 9) / 1e6);
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 1000);

	/* diffserv8, and besteffort */
	assert_int_equal(parse(f, cake_msg(f, 8)), 0);
	assert_int_equal(f->m.n_tins, 8);
	assert_int_equal(f->m.tin_present[7], all_rows(t->n_tin_fields));
	assert_int_equal(parse(f, cake_msg(f, 1)), 0);
	assert_int_equal(f->m.n_tins, 1);
	assert_int_equal(f->m.tin_present[1], 0);
}

/* A class is a flow: its statistics are nested attributes too. */
static void test_cake_class(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 1, IFI, 0x80010123U, 0x80010000U, "cake");
	struct nlattr *s2 = mnl_attr_nest_start(nlh, TCA_STATS2);
	struct gnet_stats_queue q = {.qlen = 2, .backlog = 3000, .drops = 4};
	struct nlattr *app;

	mnl_attr_put(nlh, TCA_STATS_QUEUE, sizeof(q), &q);
	app = mnl_attr_nest_start(nlh, TCA_STATS_APP);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DEFICIT, (uint32_t)-1201);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DROPPING, 1);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_COBALT_COUNT, 1203);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_P_DROP, UINT32_MAX / 2 + 1);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_BLUE_TIMER_US, 1205);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_DROP_NEXT_US, (uint32_t)-1206);
	mnl_attr_nest_end(nlh, app);
	mnl_attr_nest_end(nlh, s2);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.stats_present,
	                 SENT_ALWAYS & ~((1u << TCX_QSTAT_BYTES) | (1u << TCX_QSTAT_PACKETS)));
	assert_int_equal(f->m.stats[TCX_QSTAT_BACKLOG_PACKETS], 2);
	assert_true(f->m.xt->is_class);
	assert_int_equal((int64_t)xs_raw(f, "tc_class_cake_deficit_bytes", NULL), -1201);
	assert_int_equal(xs_raw(f, "tc_class_cake_dropping", NULL), 1);
	assert_int_equal(xs_raw(f, "tc_class_cake_cobalt_count_packets", NULL), 1203);
	assert_true(fabs(xs_value(f, "tc_class_cake_p_drop_ratio") - 0.5) < 1e-9);
	assert_true(xs_value(f, "tc_class_cake_blue_timer_seconds") == 1205 / 1e6);
	assert_true(xs_value(f, "tc_class_cake_drop_next_seconds") == -1206 / 1e6);
	all_checked(f);
	assert_int_equal(f->m.n_tins, 0);
}

static void test_cake_malformed(void **state)
{
	struct fx *f = *state;
	static const struct {
		uint16_t tin;  /* the tin nest's type */
		uint16_t attr; /* an attribute in it */
		uint16_t len;  /* of that many bytes */
		const char *why;
	} cases[] = {
	        {0, TCA_CAKE_TIN_STATS_SENT_PACKETS, 4, "tin 0, outside 1..8"},
	        {9, TCA_CAKE_TIN_STATS_SENT_PACKETS, 4, "tin 9, outside 1..8"},
	        {1, TCA_CAKE_TIN_STATS_SENT_PACKETS, 2,
	         "tc_qdisc_cake_tin_sent_packets_total (attribute 2): payload of 2 bytes, expected "
	         "4"},
	        {2, TCA_CAKE_TIN_STATS_SENT_BYTES64, 4,
	         "tc_qdisc_cake_tin_sent_bytes_total (attribute 3): payload of 4 bytes, expected "
	         "8"},
	};
	static const uint8_t zero[8];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "cake");
		struct nlattr *s2 = nlb_qstats_begin(nlh, &st0);
		struct nlattr *app = mnl_attr_nest_start(nlh, TCA_STATS_APP);
		struct nlattr *tins = mnl_attr_nest_start(nlh, TCA_CAKE_STATS_TIN_STATS);
		struct nlattr *tin = mnl_attr_nest_start(nlh, cases[c].tin);

		mnl_attr_put(nlh, cases[c].attr, cases[c].len, zero);
		mnl_attr_nest_end(nlh, tin);
		mnl_attr_nest_end(nlh, tins);
		mnl_attr_nest_end(nlh, app);
		nlb_qstats_end(nlh, s2, &st0, NULL, 0);
		assert_int_equal(parse(f, nlh), -1);
		if (!strstr(f->err, cases[c].why))
			fail_msg("case %zu: \"%s\", not \"%s\"", c, f->err, cases[c].why);
	}

	/* A qdisc statistic too short, and a tins attribute that is no nest. */
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "cake");
	struct nlattr *s2 = nlb_qstats_begin(nlh, &st0);
	struct nlattr *app = mnl_attr_nest_start(nlh, TCA_STATS_APP);

	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_CAPACITY_ESTIMATE64, 5);
	mnl_attr_nest_end(nlh, app);
	nlb_qstats_end(nlh, s2, &st0, NULL, 0);
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(
	        f->err,
	        "tc_qdisc_cake_capacity_estimate_bytes_per_second (attribute 2): payload of 4"));

	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "cake");
	s2 = nlb_qstats_begin(nlh, &st0);
	app = mnl_attr_nest_start(nlh, TCA_STATS_APP);
	mnl_attr_put_u32(nlh, TCA_CAKE_STATS_TIN_STATS, 0x00ff0000); /* a length of 0 */
	mnl_attr_nest_end(nlh, app);
	nlb_qstats_end(nlh, s2, &st0, NULL, 0);
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "cake tin statistics: attribute"));

	/* A struct where cake expects attributes: not a nest. */
	struct tc_htb_xstats x = {.lends = 0xffff};
	assert_int_equal(parse_struct(f, 0, "cake", &x, sizeof(x)), -1);
	assert_non_null(strstr(f->err, "TCA_STATS_APP: attribute"));
}

/* ---- malformed messages ----------------------------------------------------------------- */

static void test_malformed(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh;
	struct nlattr *a;

	/* no TCA_KIND */
	nlh = mnl_nlmsg_put_header(f->buf.b);
	nlh->nlmsg_type = RTM_NEWQDISC;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct tcmsg));
	assert_int_equal(parse(f, nlh), -1);
	assert_string_equal(f->err, "qdisc message without TCA_KIND");
	nlh->nlmsg_type = RTM_NEWTCLASS;
	assert_int_equal(parse(f, nlh), -1);
	assert_string_equal(f->err, "class message without TCA_KIND");

	/* too short for struct tcmsg */
	nlh->nlmsg_len = NLMSG_HDRLEN + 8;
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "too short for its header"));

	/* not a qdisc message */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "htb");
	nlh->nlmsg_type = RTM_NEWTFILTER;
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "message type 44 is no qdisc or class"));

	/* a kind without its NUL, and one too long */
	nlh = mnl_nlmsg_put_header(f->buf.b);
	nlh->nlmsg_type = RTM_NEWQDISC;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct tcmsg));
	mnl_attr_put(nlh, TCA_KIND, 3, "htb");
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_KIND: string is not NUL-terminated"));
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, ""); /* fuzzing found it */
	assert_int_equal(parse(f, nlh), -1);
	assert_string_equal(f->err, "TCA_KIND is empty");
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "a_kind_of_16_chars");
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_KIND: string of 18 bytes"));

	/* an attribute running past the message */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "htb");
	a = mnl_nlmsg_get_payload_tail(nlh);
	mnl_attr_put_u32(nlh, TCA_STATS2, 0);
	a->nla_len = 200;
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "qdisc: attribute 7 has length 200"));

	/* one running past its nest, inside TCA_STATS2 */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "htb");
	a = mnl_attr_nest_start(nlh, TCA_STATS2);
	mnl_attr_put_u32(nlh, TCA_STATS_QUEUE, 0);
	mnl_attr_nest_end(nlh, a);
	((struct nlattr *)mnl_attr_get_payload(a))->nla_len = 9;
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_STATS2: attribute 3 has length 9, outside 4..8"));

	/* trailing bytes inside TCA_STATS2 */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0x10000, TC_H_ROOT, "htb");
	mnl_attr_put(nlh, TCA_STATS2, 2, "xy");
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_STATS2: 2 trailing bytes"));

	/* a short shared block index */
	nlh = nlb_tcobj(f->buf.b, 0, IFI, 0xffff0000U, TC_H_CLSACT, "clsact");
	mnl_attr_put(nlh, TCA_INGRESS_BLOCK, 2, "xy");
	assert_int_equal(parse(f, nlh), -1);
	assert_non_null(strstr(f->err, "TCA_INGRESS_BLOCK: payload of 2 bytes"));
}

/* An unknown kind keeps its generic counters; its statistics are unread. */
static void test_unknown_kind(void **state)
{
	struct fx *f = *state;
	uint8_t junk[7] = {1, 2, 3, 4, 5, 6, 7};

	assert_int_equal(parse_struct(f, 0, "newkind", junk, sizeof(junk)), 0);
	assert_string_equal(f->m.kind, "newkind");
	assert_null(f->m.xt);
	assert_int_equal(f->m.xs_present, 0);
	assert_int_equal(f->m.stats[TCX_QSTAT_BYTES], 1000);
	assert_int_equal(f->m.stats[TCX_QSTAT_PACKETS], 10);
	assert_int_equal(parse_struct(f, 1, "newkind", junk, sizeof(junk)), 0);
	assert_null(f->m.xt);
}

/* ingress and clsact, their shared blocks, and deletions. */
static void test_identity(void **state)
{
	struct fx *f = *state;
	struct nlmsghdr *nlh = nlb_tcobj(f->buf.b, 0, IFI, 0xffff0000U, TC_H_CLSACT, "clsact");

	mnl_attr_put_u32(nlh, TCA_INGRESS_BLOCK, 22);
	mnl_attr_put_u32(nlh, TCA_EGRESS_BLOCK, 23);
	nlb_qstats(nlh, &st0, NULL, 0);
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.parent, TC_H_CLSACT);
	assert_int_equal(f->m.handle, 0xffff0000U);
	assert_int_equal(f->m.ingress_block, 22);
	assert_int_equal(f->m.egress_block, 23);
	nlh->nlmsg_type = RTM_DELQDISC;
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.is_class, 0);
	nlh->nlmsg_type = RTM_DELTCLASS;
	assert_int_equal(parse(f, nlh), 0);
	assert_int_equal(f->m.is_class, 1);
	assert_int_equal(f->m.ingress_block, 22);
}

/* ---- the tables themselves -------------------------------------------------------------- */

/* Does name end in suffix? */
static int ends_in(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && strcmp(name + n - k, suffix) == 0;
}

/* The units rule of config/xstats.c: a family with a unit ends in it
 * (before _total for a counter), but a counter of packets (events, named by
 * them); no family ends in a unit other than its own. */
static void check_unit(const struct tcx_xstat *r)
{
	static const char *const units[] = {"bytes", "seconds", "bytes_per_second", "ratio",
	                                    "packets"};
	int counter = r->type == TCX_XSTAT_COUNTER, known = !r->unit[0];
	char suffix[64];

	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		snprintf(suffix, sizeof(suffix), "_%s%s", units[u], counter ? "_total" : "");
		if (strcmp(r->unit, units[u]) == 0) {
			known = 1;
			if (!ends_in(r->family, suffix) &&
			    !(counter && strcmp(units[u], "packets") == 0))
				fail_msg("%s: its unit is %s, its name does not end in %s",
				         r->family, r->unit, suffix);
		} else if (ends_in(r->family, suffix)) {
			fail_msg("%s: ends in %s, its unit is '%s'", r->family, suffix, r->unit);
		}
	}
	if (!known)
		fail_msg("%s: unit '%s' is none of the rule's", r->family, r->unit);
}

static void check_rows(const struct tcx_xstats_table *t, const struct tcx_xstat *rows, unsigned n,
                       const char *prefix)
{
	char pat[128];
	regex_t re;

	snprintf(pat, sizeof(pat), "^%s[a-z][a-z0-9_]*[a-z0-9]$", prefix);
	assert_int_equal(regcomp(&re, pat, REG_EXTENDED | REG_NOSUB), 0);
	assert_true(n > 0 && n <= TCX_XSTATS_MAX);
	for (unsigned i = 0; i < n; i++) {
		const struct tcx_xstat *r = &rows[i];
		size_t len = strlen(r->family);
		int total = len > 6 && strcmp(r->family + len - 6, "_total") == 0;
		int seconds = strstr(r->family, "_seconds") != NULL;

		if (regexec(&re, r->family, 0, NULL, 0) != 0)
			fail_msg("%s: not %s", r->family, pat);
		assert_true(r->size == 4 || r->size == 8);
		assert_non_null(r->help);
		assert_true(strlen(r->help) > 8);
		assert_non_null(r->unit);
		assert_true(r->div >= 1);
		if ((r->type == TCX_XSTAT_COUNTER) != total)
			fail_msg("%s: a %s", r->family, total ? "gauge" : "counter");
		/* promtool: _count is for histograms and summaries */
		if (len > 6 && strcmp(r->family + len - 6, "_count") == 0)
			fail_msg("%s: ends in _count", r->family);
		/* times in seconds, and only they */
		if (seconds != (r->div == 1e6 || r->div == 1e9 || r->div == 15625000.0) ||
		    seconds != !strcmp(r->unit, "seconds"))
			fail_msg("%s: a time must be in seconds, named so", r->family);
		check_unit(r);
		if ((r->flags & TCX_XSTAT_SIGNED) && r->type == TCX_XSTAT_COUNTER)
			fail_msg("%s: a signed counter", r->family);
		assert_true(!r->label == !r->label_value);
		if (t->layout == TCX_XSTATS_STRUCT)
			assert_true(r->src + r->size <= 256);
		/* one row per family and label value */
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(rows[j].family, r->family)) {
				assert_non_null(r->label);
				assert_string_not_equal(rows[j].label_value, r->label_value);
				assert_int_equal(rows[j].type, r->type);
				assert_string_equal(rows[j].help, r->help);
			} else if (t->layout == TCX_XSTATS_NESTED) {
				assert_int_not_equal(rows[j].src, r->src);
			}
	}
	regfree(&re);
}

static void test_tables(void **state)
{
	static const char *const kinds[] = {"htb",   "hfsc", "fq_codel", "fq",    "fq_pie", "cake",
	                                    "codel", "pie",  "red",      "choke", "sfb",    "sfq"};
	unsigned n_families = 0;

	(void)state;
	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[i];
		char prefix[64];

		assert_ptr_equal(tcx_xstats_lookup(t->kind, t->is_class), t);
		snprintf(prefix, sizeof(prefix), "tc_%s_%s_", t->is_class ? "class" : "qdisc",
		         t->kind);
		check_rows(t, t->fields, t->n_fields, prefix);
		n_families += t->n_fields;
		if (t->tins_attr) {
			assert_int_equal(t->layout, TCX_XSTATS_NESTED);
			assert_non_null(t->tin_label);
			strncat(prefix, "tin_", sizeof(prefix) - strlen(prefix) - 1);
			check_rows(t, t->tin_fields, t->n_tin_fields, prefix);
			n_families += t->n_tin_fields;
		}
		/* no family in two tables */
		for (size_t j = 0; j < i; j++)
			for (unsigned a = 0; a < t->n_fields; a++)
				for (unsigned b = 0; b < tcx_xstats_tables[j]->n_fields; b++)
					assert_string_not_equal(
					        t->fields[a].family,
					        tcx_xstats_tables[j]->fields[b].family);
	}
	/* every kind whose statistics tc -s prints */
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!tcx_xstats_lookup(kinds[k], 0) && !tcx_xstats_lookup(kinds[k], 1))
			fail_msg("no table for %s", kinds[k]);
	assert_null(tcx_xstats_lookup("pfifo", 0));
	assert_null(tcx_xstats_lookup("htb", 0));
	assert_true(n_families > 100);
}

/* The names `families: xstats:` takes (tcx_xstat_name()): the family
 * without tc_<object>_<kind>_ and a counter's _total, tin_ kept; one name
 * is one field of its kind (an array member's elements share it), across
 * the kind's qdisc, tin and class rows. tcx_xstats_id() is the place. */
static void test_field_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[i];

		assert_int_equal(tcx_xstats_id(t), i);
		for (unsigned tin = 0; tin < 2; tin++) {
			const struct tcx_xstat *rows = tin ? t->tin_fields : t->fields;
			unsigned n = tin ? t->n_tin_fields : t->n_fields;

			for (unsigned f = 0; f < n; f++) {
				char want[128];
				size_t len;
				const char *name = tcx_xstat_name(t, &rows[f], &len);

				snprintf(want, sizeof(want), "tc_%s_%s_%.*s%s",
				         t->is_class ? "class" : "qdisc", t->kind, (int)len, name,
				         rows[f].type == TCX_XSTAT_COUNTER ? "_total" : "");
				assert_string_equal(want, rows[f].family);
				assert_true(len > 0);
				assert_int_equal(tin, strncmp(name, "tin_", 4) == 0);
				/* no other field of the kind has the name */
				for (size_t j = 0; j < tcx_xstats_n_tables; j++) {
					const struct tcx_xstats_table *u = tcx_xstats_tables[j];

					for (unsigned utin = 0;
					     utin < 2 && !strcmp(u->kind, t->kind); utin++) {
						const struct tcx_xstat *ur =
						        utin ? u->tin_fields : u->fields;
						unsigned un = utin ? u->n_tin_fields : u->n_fields;

						for (unsigned g = 0; g < un; g++) {
							size_t ul;
							const char *uname =
							        tcx_xstat_name(u, &ur[g], &ul);

							if (ul == len && !strncmp(uname, name, len))
								assert_string_equal(ur[g].family,
								                    rows[f].family);
						}
					}
				}
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_generic_stats2, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_rate_est, setup, teardown),
	        cmocka_unit_test(test_plans_burst),
	        cmocka_unit_test_setup_teardown(test_plans_htb_class, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_plans_tbf, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_plans_fq_codel, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_plans_struct, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_plans_netem, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_plans_modes, setup, teardown),
	        cmocka_unit_test(test_plans_tables),
	        cmocka_unit_test_setup_teardown(test_pkt64, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pkt64_twice, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pkt64_stray, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_stats_compat_only, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_app_preferred, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_htb, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_hfsc, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_fq_codel_qdisc, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_fq_codel_class, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_fq_codel_variant, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_fq, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_fq_pie, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_codel, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_pie, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_red_choke, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_sfb, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_sfq, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_short_long, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cake_qdisc, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cake_class, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cake_malformed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_unknown_kind, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_identity, setup, teardown),
	        cmocka_unit_test(test_tables),
	        cmocka_unit_test(test_field_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
