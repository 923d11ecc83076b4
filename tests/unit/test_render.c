/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renderers: a hand-built snapshot in, exact text out. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/http/expo.h"
#include "agent/render/prom.h"
#include "agent/render/render.h"
#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/names.h"
#include "build.h"
#include "revision.h"
#ifdef HAVE_SNMP
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/version.h>
#define NETSNMP_VERSION netsnmp_get_version()
#else
#define NETSNMP_VERSION "none"
#endif
#include <microhttpd.h>
#ifdef HAVE_ISAL
#define GZIP_CODEC "isa-l/" TCX_ISAL_VERSION
#else
#include <zlib.h>
#define GZIP_CODEC "zlib/" ZLIB_VERSION
#endif

static void config_err(void *arg, const char *msg)
{
	fail_msg("config error: %s", msg);
}

static const char *yaml = "labels: [tenant, rule]\n"
                          "cookies:\n"
                          "  \"aa\": {tenant: \"acme \\\"east\\\"\", rule: \"a\\\\b\\nc\"}\n"
                          "  \"0011223344556677\": [globex, \"r\u00e9gle\"]\n";

/* Two targets (a device parent and a shared block), three filters, four
 * actions: mapped, unmapped, no cookie, and one on the block. */
static struct tcx_snapshot *make_snapshot(const char *conf)
{
	struct tcx_config *cfg =
	        tcx_config_load_buffer("r.yaml", conf, strlen(conf), config_err, NULL);
	struct tcx_snapshot *s;
	struct tcx_target *t;
	struct tcx_filter *f;
	struct tcx_action *a;

	assert_non_null(cfg);
	s = tcx_snapshot_new(cfg);
	tcx_config_unref(cfg);

	t = tcx_snapshot_add_target(s);
	snprintf(t->dev, sizeof(t->dev), "v0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	t->mode = TCX_MODE_FULL;
	t->terse_dumps = 1;
	t->full_dumps = 1;
	t->n_filters = 2;
	t->n_actions = 3;
	t = tcx_snapshot_add_target(s);
	t->block = 22;
	snprintf(t->parent_name, sizeof(t->parent_name), "block");
	snprintf(t->netns, sizeof(t->netns), "blue");
	t->ok = 0;
	snprintf(t->error, sizeof(t->error), "shared block 22 not found");

	f = tcx_snapshot_add_filter(s);
	f->target = 0;
	f->chain = 0;
	f->pref = 10;
	f->protocol = 0x0800;
	f->handle = 0x80000800;
	f->kind = (uint8_t)tcx_snapshot_kind(s, "u32");
	f->flags = TCX_FLAG_NOT_IN_HW;
	f->n_actions = 2;
	a = tcx_snapshot_add_action(s);
	a->filter = 0;
	a->order = 1;
	a->index = 5;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "mirred");
	a->cookie_len = 1;
	a->cookie[0] = 0xaa;
	a->c[TCX_ACT_BYTES] = 18446744073709551615ULL;
	a->c[TCX_ACT_PACKETS] = 4294967296ULL;
	a->c[TCX_ACT_DROPS] = 3;
	a->c[TCX_ACT_OVERLIMITS] = 4;
	a->c[TCX_ACT_HW_BYTES] = 7;
	a->c[TCX_ACT_HW_PACKETS] = 1;
	a = tcx_snapshot_add_action(s);
	a->filter = 0;
	a->order = 2;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "mirred");
	a->cookie_len = 2;
	a->cookie[0] = 0xde;
	a->cookie[1] = 0xad;
	a->c[TCX_ACT_BYTES] = 100;
	a->c[TCX_ACT_PACKETS] = 1;

	f = tcx_snapshot_add_filter(s);
	f->target = 0;
	f->chain = 3;
	f->pref = 20;
	f->protocol = 0x0003;
	f->handle = 1;
	f->kind = (uint8_t)tcx_snapshot_kind(s, "flower");
	f->flags = TCX_FLAG_SKIP_SW | TCX_FLAG_IN_HW;
	f->n_actions = 1;
	a = tcx_snapshot_add_action(s);
	a->filter = 1;
	a->order = 1;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	a->cookie_len = 8;
	memcpy(a->cookie, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
	a->c[TCX_ACT_BYTES] = 42;
	a->c[TCX_ACT_PACKETS] = 2;
	tcx_snapshot_classify(s);
	return s;
}

static char *render(const struct tcx_snapshot *s, enum tcx_format fmt)
{
	struct tcx_buf b;
	char *out;

	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_render(s, fmt, NULL, &b), 0);
	out = malloc(b.len + 1);
	memcpy(out, b.p, b.len);
	out[b.len] = '\0';
	tcx_buf_free(&b);
	return out;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("missing from output:\n%s\n--- output began with:\n%.2000s", needle, hay);
}

static void test_prometheus_action_rows(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out = render(s, TCX_FMT_PROMETHEUS);

	assert_contains(out, "# HELP tc_action_bytes_total Bytes that passed through the action "
	                     "(software and hardware).\n"
	                     "# TYPE tc_action_bytes_total counter\n"
	                     "tc_action_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                     "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                     "order=\"1\",action=\"mirred\",cookie=\"aa\",tenant=\"acme "
	                     "\\\"east\\\"\",rule=\"a\\\\b\\nc\"} 18446744073709551615\n"
	                     "tc_action_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                     "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                     "order=\"2\",action=\"mirred\",cookie=\"dead\",tenant=\"\",rule=\"\"} "
	                     "100\n"
	                     "tc_action_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"3\","
	                     "protocol=\"all\",pref=\"20\",kind=\"flower\",handle=\"0x1\","
	                     "order=\"1\",action=\"gact\",cookie=\"0011223344556677\","
	                     "tenant=\"globex\",rule=\"r\u00e9gle\"} 42\n"
	                     "# HELP tc_action_packets_total");
	assert_contains(out, "tc_action_packets_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                     "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                     "order=\"1\",action=\"mirred\",cookie=\"aa\",tenant=\"acme "
	                     "\\\"east\\\"\",rule=\"a\\\\b\\nc\"} 4294967296\n");
	assert_contains(out, "# TYPE tc_action_drops_total counter\n"
	                     "tc_action_drops_total{device=\"v0\",parent=\"ingress\",chain=\"0\"");
	assert_contains(out, "cookie=\"aa\",tenant=\"acme \\\"east\\\"\",rule=\"a\\\\b\\nc\"} 3\n");
	assert_contains(out, "cookie=\"aa\",tenant=\"acme \\\"east\\\"\",rule=\"a\\\\b\\nc\"} 4\n");
	assert_contains(out,
	                "# TYPE tc_action_hw_bytes_total counter\n"
	                "tc_action_hw_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                "order=\"1\",action=\"mirred\",cookie=\"aa\",tenant=\"acme "
	                "\\\"east\\\"\",rule=\"a\\\\b\\nc\"} 7\n");
	assert_contains(out, "# TYPE tc_action_hw_packets_total counter\n");
	free(out);
	tcx_snapshot_unref(s);
}

static void test_prometheus_filters_targets_meta(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out;

	s->netlink_dropped[TCX_NLDROP_SENDER] = 2;
	out = render(s, TCX_FMT_PROMETHEUS);

	assert_contains(out, "# TYPE tc_filter_flags_info gauge\n"
	                     "tc_filter_flags_info{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                     "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                     "skip_hw=\"false\",skip_sw=\"false\",in_hw=\"false\","
	                     "not_in_hw=\"true\"} 1\n"
	                     "tc_filter_flags_info{device=\"v0\",parent=\"ingress\",chain=\"3\","
	                     "protocol=\"all\",pref=\"20\",kind=\"flower\",handle=\"0x1\","
	                     "skip_hw=\"false\",skip_sw=\"true\",in_hw=\"true\","
	                     "not_in_hw=\"false\"} 1\n");
	assert_null(strstr(out, "tc_filter_in_hw"));
	assert_contains(out, "tc_scrape_collector_success{device=\"v0\",parent=\"ingress\"} 1\n"
	                     "tc_scrape_collector_success{block=\"22\",netns=\"blue\"} 0\n");
	assert_contains(out, "tc_scrape_collector_actions{device=\"v0\",parent=\"ingress\"} 3\n");
	assert_contains(out, "tc_scrape_collector_dump_requests{device=\"v0\",parent=\"ingress\","
	                     "type=\"terse\"} 1\n");
	assert_contains(out, "tc_scrape_collector_mode_info{device=\"v0\",parent=\"ingress\","
	                     "mode=\"full\"} 1\n");
	/* The cookie "dead" is mapped by nothing. */
	assert_contains(out, "\ntc_exporter_unmapped_cookies 1\n");
	assert_contains(out, "\ntc_exporter_dropped_actions 0\n");
	assert_contains(out, "# TYPE tc_exporter_netlink_dropped_total counter\n"
	                     "tc_exporter_netlink_dropped_total{cause=\"sender\"} 2\n"
	                     "tc_exporter_netlink_dropped_total{cause=\"length\"} 0\n");
	{
		char want[512];

		snprintf(want, sizeof(want),
		         "tc_exporter_build_info{version=\"%s\",revision=\"%s\",libmnl_version=\"%"
		         "s\","
		         "libmicrohttpd_version=\"%s\",netsnmp_version=\"%s\",gzip=\"%s\"} 1\n",
		         PACKAGE_VERSION, TCX_REVISION, TCX_LIBMNL_VERSION, MHD_get_version(),
		         NETSNMP_VERSION, GZIP_CODEC);
		assert_contains(out, want);
	}
	assert_null(strstr(out, "# EOF"));
	/* Every line is a comment or a sample ending in a number. */
	for (char *line = out; *line;) {
		char *nl = strchr(line, '\n');

		assert_non_null(nl);
		if (line[0] != '#') {
			char *sp = nl;

			while (sp > line && sp[-1] != ' ')
				sp--;
			assert_true(sp > line && sp < nl);
			strtod(sp, &sp);
			assert_ptr_equal(sp, nl);
		}
		line = nl + 1;
	}
	free(out);
	tcx_snapshot_unref(s);
}

/* Lines of out that start with prefix. */
static int count_lines(const char *out, const char *prefix)
{
	int n = 0;

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/* With `aggregate`: one series per aggregate with the kept labels only,
 * _created in OpenMetrics, no tc_filter_flags_info (per filter) unless asked
 * for; JSON one object per aggregate. */
static void test_aggregates(void **state)
{
	char conf[1024];
	struct tcx_snapshot *s;
	struct tcx_agg *a = tcx_agg_new();
	char *out;

	snprintf(conf, sizeof(conf),
	         "%saggregate: {by: [tenant, device]}\nfamilies: {created: on}\n", yaml);
	s = make_snapshot(conf);
	s->notifications_lost = 5;
	assert_int_equal(tcx_agg_update(a, s), 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out, "# HELP tc_exporter_notifications_lost_total Deletion notifications");
	assert_contains(out, "# TYPE tc_exporter_notifications_lost_total counter\n"
	                     "tc_exporter_notifications_lost_total 5\n");
	assert_contains(out, "# TYPE tc_action_bytes_total counter\n"
	                     "tc_action_bytes_total{device=\"v0\",tenant=\"acme \\\"east\\\"\"} "
	                     "18446744073709551615\n"
	                     "tc_action_bytes_total{device=\"v0\",tenant=\"\"} 100\n"
	                     "tc_action_bytes_total{device=\"v0\",tenant=\"globex\"} 42\n"
	                     "# HELP tc_action_packets_total");
	assert_int_equal(count_lines(out, "tc_action_"), 6 * 3);
	assert_int_equal(count_lines(out, "tc_filter_flags_info"), 0);
	assert_int_equal(count_lines(out, "# TYPE tc_filter_flags_info"), 0);
	assert_contains(out, "\ntc_exporter_series_dropped 0\n");
	free(out);
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_contains(out, "# TYPE tc_exporter_notifications_lost counter\n"
	                     "tc_exporter_notifications_lost_total 5\n");
	assert_contains(out,
	                "# TYPE tc_action_bytes counter\n"
	                "tc_action_bytes_total{device=\"v0\",tenant=\"acme \\\"east\\\"\"} "
	                "18446744073709551615\n"
	                "tc_action_bytes_created{device=\"v0\",tenant=\"acme \\\"east\\\"\"} ");
	assert_int_equal(count_lines(out, "tc_action_packets_created{"), 3);
	free(out);
	out = render(s, TCX_FMT_JSON);
	assert_int_equal(count_lines(out, "{\"type\":\"aggregate\","), 3);
	assert_contains(
	        out,
	        "{\"type\":\"aggregate\",\"labels\":{\"device\":\"v0\",\"tenant\":\"acme "
	        "\\\"east\\\"\"},\"bytes\":18446744073709551615,\"packets\":"
	        "4294967296,\"hw_bytes\":7,\"hw_packets\":1,\"drops\":3,"
	        "\"overlimits\":4,\"installed\":null,\"first_used\":null,\"last_used\":null}\n"
	        "{\"type\":\"aggregate\",\"labels\":{\"device\":\"v0\",\"tenant\":\"\"},"
	        "\"bytes\":100,"
	        "\"packets\":1,\"hw_bytes\":0,\"hw_packets\":0,\"drops\":0,"
	        "\"overlimits\":0,\"installed\":null,\"first_used\":null,\"last_used\":null}\n"
	        "{\"type\":\"aggregate\",\"labels\":{\"device\":\"v0\",\"tenant\":"
	        "\"globex\"},\"bytes\":"
	        "42,\"packets\":2,\"hw_bytes\":0,\"hw_packets\":0,\"drops\":0,"
	        "\"overlimits\":0,\"installed\":null,\"first_used\":null,\"last_used\":null}\n");
	free(out);
	tcx_snapshot_unref(s);

	/* flags asked for: per filter, not aggregated */
	snprintf(conf, sizeof(conf), "%saggregate: {by: [tenant]}\nfamilies: {flags: on}\n", yaml);
	s = make_snapshot(conf);
	assert_int_equal(tcx_agg_update(a, s), 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_filter_flags_info{device=\"v0\""), 2);
	assert_contains(out, "tc_action_bytes_total{tenant=\"globex\"} 42\n");
	free(out);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
}

/* Give action row i of s times (ms): installed, last used, and first used
 * when not 0. */
static void give_times(struct tcx_snapshot *s, size_t i, int64_t installed, int64_t last,
                       int64_t first)
{
	s->actions[i].tm_present = 1u << TCX_TM_INSTALLED | 1u << TCX_TM_LAST_USED;
	s->actions[i].tm[TCX_TM_INSTALLED] = installed;
	s->actions[i].tm[TCX_TM_LAST_USED] = last;
	if (first) {
		s->actions[i].tm_present |= 1u << TCX_TM_FIRST_USED;
		s->actions[i].tm[TCX_TM_FIRST_USED] = first;
	}
}

/* The action times (issue #25): a gauge family each, the rows that have the
 * time (no first use while never used), in seconds to the millisecond; in
 * OpenMetrics with `created: on`, NAME_created after each counter sample of
 * a row with an install time; max_series counts the time series; `liveness:
 * off` leaves them out; aggregates take the earliest install and first
 * use, the latest last use. */
static void test_action_times(void **state)
{
	char conf[1024];
	struct tcx_snapshot *s = make_snapshot(yaml);
	struct tcx_agg *a;
	char *out;

	give_times(s, 0, 1700000000250, 1700000100000, 1700000050120);
	give_times(s, 2, 1600000000000, 1600000000000, 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out,
	                "# TYPE tc_action_installed_timestamp_seconds gauge\n"
	                "tc_action_installed_timestamp_seconds{device=\"v0\",parent=\"ingress\","
	                "chain=\"0\",protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\","
	                "order=\"1\",action=\"mirred\",cookie=\"aa\",tenant=\"acme \\\"east\\\"\","
	                "rule=\"a\\\\b\\nc\"} 1700000000.25\n"
	                "tc_action_installed_timestamp_seconds{device=\"v0\",parent=\"ingress\","
	                "chain=\"3\",");
	assert_contains(out, "\"} 1600000000\n# HELP tc_action_first_used_timestamp_seconds ");
	assert_int_equal(count_lines(out, "tc_action_installed_timestamp_seconds{"), 2);
	assert_int_equal(count_lines(out, "tc_action_first_used_timestamp_seconds{"), 1);
	assert_contains(out, "\"} 1700000050.12\n# HELP tc_action_last_used_timestamp_seconds ");
	assert_int_equal(count_lines(out, "tc_action_last_used_timestamp_seconds{"), 2);
	assert_null(strstr(out, "_created"));
	free(out);
	/* rows in turn with the same whole seconds, then others, then the
	 * same again (put_ms() copies the seconds it wrote last) */
	give_times(s, 0, 1700000000250, 1700000000999, 0);
	give_times(s, 1, 1700000000000, 999, 0);
	give_times(s, 2, 1700000000007, 1700000000007, 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out, "} 1700000000.25\ntc_action_installed_timestamp_seconds{");
	assert_contains(out, "} 1700000000\ntc_action_installed_timestamp_seconds{");
	assert_contains(out, "} 1700000000.007\n# HELP tc_action_last_used_timestamp_seconds ");
	assert_contains(out, "} 1700000000.999\ntc_action_last_used_timestamp_seconds{");
	assert_contains(out, "} 0.999\ntc_action_last_used_timestamp_seconds{");
	assert_int_equal(count_lines(out, "tc_action_last_used_timestamp_seconds{"), 3);
	assert_contains(out, "} 1700000000.007\n# HELP tc_filter_flags_info ");
	free(out);
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_null(strstr(out, "_created")); /* `created` is off unless asked for */
	free(out);
	tcx_snapshot_unref(s);

	snprintf(conf, sizeof(conf), "%sfamilies: {created: on}\n", yaml);
	s = make_snapshot(conf);
	give_times(s, 0, 1700000000250, 1700000100000, 0);
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_contains(out,
	                "cookie=\"aa\",tenant=\"acme \\\"east\\\"\",rule=\"a\\\\b\\nc\"} "
	                "4294967296\n"
	                "tc_action_packets_created{device=\"v0\",parent=\"ingress\",chain=\"0\",");
	assert_contains(out, "cookie=\"aa\",tenant=\"acme \\\"east\\\"\",rule=\"a\\\\b\\nc\"} "
	                     "1700000000.25\n");
	/* one per counter family of the row with times, the others none */
	assert_int_equal(count_lines(out, "tc_action_"), 6 * 3 + 6 + 2);
	assert_int_equal(count_lines(out, "tc_action_bytes_created{"), 1);
	free(out);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_null(strstr(out, "_created")); /* the text format has none */
	free(out);
	tcx_snapshot_unref(s);

	/* max_series: 6 counters + 2 times for row 0, 6 for row 1: 14 fit */
	snprintf(conf, sizeof(conf), "%smax_series: 16\n", yaml);
	s = make_snapshot(conf);
	give_times(s, 0, 1700000000250, 1700000100000, 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_"), 6 * 2 + 2);
	assert_contains(out, "\ntc_exporter_series_dropped 6\n");
	free(out);
	tcx_snapshot_unref(s);

	snprintf(conf, sizeof(conf), "%sfamilies: {liveness: off}\n", yaml);
	s = make_snapshot(conf);
	give_times(s, 0, 1700000000250, 1700000100000, 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_null(strstr(out, "timestamp_seconds{"));
	free(out);
	tcx_snapshot_unref(s);

	/* by device: the three rows in one aggregate */
	snprintf(conf, sizeof(conf), "%saggregate: {by: [device]}\n", yaml);
	s = make_snapshot(conf);
	give_times(s, 0, 1700000000250, 1700000100000, 1700000050000);
	give_times(s, 2, 1600000000000, 1600000000000, 0);
	a = tcx_agg_new();
	assert_int_equal(tcx_agg_update(a, s), 0);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out, "tc_action_installed_timestamp_seconds{device=\"v0\"} 1600000000\n");
	assert_contains(out, "tc_action_first_used_timestamp_seconds{device=\"v0\"} 1700000050\n");
	assert_contains(out, "tc_action_last_used_timestamp_seconds{device=\"v0\"} 1700000100\n");
	free(out);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
}

/* families: hw auto follows the rows (hardware counters, or in_hw); drops
 * and overlimits off. */
static void test_families(void **state)
{
	char conf[1024];
	struct tcx_snapshot *s;
	char *out;

	snprintf(conf, sizeof(conf), "%sfamilies: {hw: auto, drops: off, overlimits: off}\n", yaml);
	s = make_snapshot(conf);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_hw_bytes_total{"), 3);
	assert_int_equal(count_lines(out, "tc_action_drops_total"), 0);
	assert_int_equal(count_lines(out, "# TYPE tc_action_overlimits_total"), 0);
	free(out);
	s->actions[0].c[TCX_ACT_HW_BYTES] = s->actions[0].c[TCX_ACT_HW_PACKETS] = 0;
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_hw_bytes_total{"), 3); /* in_hw */
	free(out);
	s->filters[1].flags = TCX_FLAG_SKIP_SW;
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_hw_"), 0);
	assert_int_equal(count_lines(out, "# HELP tc_action_hw_"), 0);
	assert_int_equal(count_lines(out, "tc_action_bytes_total{"), 3);
	free(out);
	tcx_snapshot_unref(s);
}

/* hw left out of families is auto: the hw_* families only while some row has
 * hardware counters or some filter is in_hw; hw: on exports them anyway. */
static void test_families_hw_default(void **state)
{
	char conf[1024];
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out = render(s, TCX_FMT_PROMETHEUS);

	assert_int_equal(count_lines(out, "tc_action_hw_bytes_total{"), 3);
	assert_int_equal(count_lines(out, "tc_action_hw_packets_total{"), 3);
	free(out);
	s->actions[0].c[TCX_ACT_HW_BYTES] = s->actions[0].c[TCX_ACT_HW_PACKETS] =
	        0; /* filter 1 is in_hw */
	s->filters[1].flags = TCX_FLAG_SKIP_SW;
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_int_equal(count_lines(out, "tc_action_hw_"), 0);
	assert_int_equal(count_lines(out, "tc_action_bytes_total{"), 3);
	free(out);
	s->actions[2].c[TCX_ACT_HW_PACKETS] = 1; /* hardware counters alone */
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_hw_packets_total{"), 3);
	free(out);
	tcx_snapshot_unref(s);

	snprintf(conf, sizeof(conf), "%sfamilies: {hw: on}\n", yaml);
	s = make_snapshot(conf);
	s->actions[0].c[TCX_ACT_HW_BYTES] = s->actions[0].c[TCX_ACT_HW_PACKETS] = 0;
	s->filters[1].flags = TCX_FLAG_SKIP_SW;
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_hw_bytes_total{"), 3);
	free(out);
	tcx_snapshot_unref(s);
}

/* max_series: the first rows whose every series fits, then the first
 * filters' flags, the rest counted. */
static void test_max_series(void **state)
{
	char conf[1024];
	struct tcx_snapshot *s;
	char *out;

	/* 3 rows of 6 series and 2 filters: 13 is 2 rows and 1 filter */
	snprintf(conf, sizeof(conf), "%smax_series: 13\n", yaml);
	s = make_snapshot(conf);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_int_equal(count_lines(out, "tc_action_"), 12);
	assert_int_equal(count_lines(out, "tc_action_bytes_total{"), 2);
	assert_int_equal(count_lines(out, "tc_filter_flags_info{"), 1);
	assert_contains(out, "# TYPE tc_exporter_series_dropped gauge\n"
	                     "tc_exporter_series_dropped 7\n");
	free(out);
	tcx_snapshot_unref(s);
}

static void test_openmetrics(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out = render(s, TCX_FMT_OPENMETRICS);
	size_t n = strlen(out);

	assert_contains(out, "# TYPE tc_action_bytes counter\n"
	                     "tc_action_bytes_total{device=\"v0\"");
	assert_contains(out, "# TYPE tc_filter_flags info\n"
	                     "tc_filter_flags_info{");
	assert_contains(out, "# TYPE tc_exporter_build info\n");
	assert_true(n > 6);
	assert_string_equal(out + n - 6, "# EOF\n");
	free(out);
	tcx_snapshot_unref(s);
}

static void test_drop_policy_hides_rows(void **state)
{
	char conf[512];

	snprintf(conf, sizeof(conf), "%sunmapped: drop\n", yaml);
	struct tcx_snapshot *s = make_snapshot(conf);
	char *out = render(s, TCX_FMT_PROMETHEUS);

	assert_null(strstr(out, "cookie=\"dead\""));
	assert_contains(out, "cookie=\"aa\"");
	assert_contains(out, "cookie=\"0011223344556677\"");
	assert_contains(out, "\ntc_exporter_dropped_actions 1\n");
	free(out);
	out = render(s, TCX_FMT_JSON);
	assert_null(strstr(out, "\"dead\""));
	free(out);
	tcx_snapshot_unref(s);
}

static void test_json_lines(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out;

	/* (the collection line's figures) */
	s->taken = (struct timespec){.tv_sec = 1700000000, .tv_nsec = 250000000};
	s->duration_s = 0.5;
	s->targets[0].duration_s = 0.125;
	s->errors[TCX_ERR_NOTFOUND] = 1;
	/* the first action's times; the others have none */
	s->actions[0].tm_present = 7;
	s->actions[0].tm[TCX_TM_INSTALLED] = 1700000000250;
	s->actions[0].tm[TCX_TM_FIRST_USED] = 1700000050125;
	s->actions[0].tm[TCX_TM_LAST_USED] = 1700000100000;
	out = render(s, TCX_FMT_JSON);
	assert_string_equal(
	        out, "{\"type\":\"action\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"chain\":0,"
	             "\"protocol\":\"ip\",\"pref\":10,\"kind\":\"u32\",\"handle\":\"800::800\","
	             "\"flags\":\"not_in_hw\",\"order\":1,\"action\":\"mirred\",\"index\":5,"
	             "\"cookie\":\"aa\",\"labels\":{\"tenant\":\"acme \\\"east\\\"\","
	             "\"rule\":\"a\\\\b\\u000ac\"},\"bytes\":18446744073709551615,"
	             "\"packets\":4294967296,\"hw_bytes\":7,\"hw_packets\":1,\"drops\":3,"
	             "\"overlimits\":4,\"installed\":1700000000.25,\"first_used\":1700000050.125,"
	             "\"last_used\":1700000100}\n"
	             "{\"type\":\"action\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"chain\":0,"
	             "\"protocol\":\"ip\",\"pref\":10,\"kind\":\"u32\",\"handle\":\"800::800\","
	             "\"flags\":\"not_in_hw\",\"order\":2,\"action\":\"mirred\",\"index\":null,"
	             "\"cookie\":\"dead\",\"labels\":{\"tenant\":\"\",\"rule\":\"\"},\"bytes\":100,"
	             "\"packets\":1,\"hw_bytes\":0,\"hw_packets\":0,\"drops\":0,\"overlimits\":0,"
	             "\"installed\":null,\"first_used\":null,\"last_used\":null}\n"
	             "{\"type\":\"action\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"chain\":3,"
	             "\"protocol\":\"all\",\"pref\":20,\"kind\":\"flower\",\"handle\":\"0x1\","
	             "\"flags\":\"skip_sw,in_hw\",\"order\":1,\"action\":\"gact\",\"index\":null,"
	             "\"cookie\":\"0011223344556677\",\"labels\":{\"tenant\":\"globex\","
	             "\"rule\":\"r\u00e9gle\"},\"bytes\":42,\"packets\":2,\"hw_bytes\":0,"
	             "\"hw_packets\":0,\"drops\":0,\"overlimits\":0,\"installed\":null,"
	             "\"first_used\":null,\"last_used\":null}\n"
	             "{\"type\":\"filter\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"chain\":0,\"protocol\":\"ip\",\"pref\":10,"
	             "\"kind\":\"u32\",\"handle\":\"800::800\",\"flags\":\"not_in_hw\"}\n"
	             "{\"type\":\"filter\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"chain\":3,\"protocol\":\"all\",\"pref\":20,"
	             "\"kind\":\"flower\",\"handle\":\"0x1\",\"flags\":\"skip_sw,in_hw\"}\n"
	             "{\"type\":\"target\",\"netns\":\"\",\"device\":\"v0\",\"block\":null,"
	             "\"parent\":\"ingress\",\"success\":true,\"error\":null,\"mode\":\"full\","
	             "\"dump_requests\":{\"terse\":1,\"full\":1},\"repaired_prefs\":0,"
	             "\"filters\":2,\"actions\":3,\"duration_seconds\":0.125}\n"
	             "{\"type\":\"target\",\"netns\":\"blue\",\"device\":null,\"block\":22,"
	             "\"parent\":\"block\",\"success\":false,"
	             "\"error\":\"shared block 22 not found\",\"mode\":\"none\","
	             "\"dump_requests\":{\"terse\":0,\"full\":0},\"repaired_prefs\":0,"
	             "\"filters\":0,\"actions\":0,\"duration_seconds\":0}\n"
	             "{\"type\":\"collection\",\"timestamp\":1700000000.25,"
	             "\"duration_seconds\":0.5,\"targets\":2,\"devices\":0,\"failed\":1,"
	             "\"complete\":true,\"errors\":{\"malformed\":0,\"kernel\":0,"
	             "\"notfound\":1,\"io\":0,\"nomem\":0,\"resource\":0}}\n");
	free(out);
	tcx_snapshot_unref(s);
}

/* Give filter i hit counters: lookups, hits and mark when not 0, and
 * n_keys keys hit key0, key0 - 1... */
static void give_hits(struct tcx_snapshot *s, size_t i, uint64_t lookups, uint64_t hits,
                      uint64_t mark, unsigned n_keys, uint64_t key0)
{
	struct tcx_filter *f = &s->filters[i];
	uint64_t *v = tcx_snapshot_add_hvals(s, f, n_keys);

	assert_non_null(v);
	v[TCX_FCTR_LOOKUPS] = lookups;
	v[TCX_FCTR_HITS] = hits;
	v[TCX_FCTR_U32_MARK] = mark;
	f->hv_present = (uint8_t)((1u << TCX_FCTR_LOOKUPS) | (1u << TCX_FCTR_HITS) |
	                          (mark ? 1u << TCX_FCTR_U32_MARK : 0));
	for (unsigned k = 0; k < n_keys; k++)
		v[TCX_FCTR__MAX + k] = key0 - k;
}

/* The hit families: a series per filter that has the counter (flower has
 * none: absent, not 0), key hits behind `keys`, none with `hits: off`,
 * OpenMetrics, JSON, and within max_series. */
static void test_filter_hits(void **state)
{
	static const char *const head =
	        "{device=\"v0\",parent=\"ingress\",chain=\"0\","
	        "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::800\"";
	struct tcx_snapshot *s = make_snapshot(yaml);
	char conf[1024], want[512];
	char *out = render(s, TCX_FMT_PROMETHEUS);

	/* no filter has any: no family, not even its HELP */
	assert_null(strstr(out, "tc_filter_hits"));
	assert_null(strstr(out, "tc_filter_lookups"));
	free(out);
	give_hits(s, 0, 12, 7, 3, 2, 9);
	out = render(s, TCX_FMT_PROMETHEUS);
	snprintf(want, sizeof(want),
	         "# HELP tc_filter_lookups_total %s\n# TYPE tc_filter_lookups_total counter\n"
	         "tc_filter_lookups_total%s} 12\n",
	         tcx_filter_counters.def[TCX_FCTR_LOOKUPS].help, head);
	assert_contains(out, want);
	snprintf(want, sizeof(want), "\ntc_filter_hits_total%s} 7\n", head);
	assert_contains(out, want);
	snprintf(want, sizeof(want), "\ntc_filter_u32_mark_success_total%s} 3\n", head);
	assert_contains(out, want);
	assert_int_equal(count_lines(out, "tc_filter_hits_total{"), 1);
	assert_int_equal(count_lines(out, "tc_filter_lookups_total{"), 1);
	assert_int_equal(count_lines(out, "tc_filter_u32_mark_success_total{"), 1);
	assert_null(strstr(out, "tc_filter_u32_key_hits"));
	free(out);
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_contains(out, "# TYPE tc_filter_hits counter\ntc_filter_hits_total{");
	free(out);
	out = render(s, TCX_FMT_JSON);
	assert_contains(out, "\"handle\":\"800::800\",\"flags\":\"not_in_hw\",\"lookups\":12,"
	                     "\"hits\":7,\"u32_mark_success\":3,\"key_hits\":[9,8]}\n");
	assert_contains(out, "\"handle\":\"0x1\",\"flags\":\"skip_sw,in_hw\"}\n");
	assert_int_equal(count_lines(out, "{\"type\":\"filter\","), 2);
	free(out);
	tcx_snapshot_unref(s);

	snprintf(conf, sizeof(conf), "%sfamilies: {keys: on}\n", yaml);
	s = make_snapshot(conf);
	give_hits(s, 0, 12, 7, 0, 2, 9);
	out = render(s, TCX_FMT_PROMETHEUS);
	snprintf(want, sizeof(want),
	         "# TYPE tc_filter_u32_key_hits_total counter\n"
	         "tc_filter_u32_key_hits_total%s,key=\"0\"} 9\n"
	         "tc_filter_u32_key_hits_total%s,key=\"1\"} 8\n",
	         head, head);
	assert_contains(out, want);
	assert_null(strstr(out, "tc_filter_u32_mark_success"));
	free(out);
	tcx_snapshot_unref(s);

	snprintf(conf, sizeof(conf), "%sfamilies: {hits: off, keys: on}\n", yaml);
	s = make_snapshot(conf);
	give_hits(s, 0, 12, 7, 3, 2, 9);
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_null(strstr(out, "tc_filter_hits"));
	assert_null(strstr(out, "tc_filter_lookups"));
	assert_int_equal(count_lines(out, "tc_filter_u32_key_hits_total{"), 2);
	free(out);
	tcx_snapshot_unref(s);

	/* 3 rows of 6 series and 2 filters' flags are 20: the 3 hit series of
	 * the u32 filter fit in 23, not in 22, nor in 20 (none left) */
	for (unsigned max = 20; max <= 23; max++) {
		snprintf(conf, sizeof(conf), "%smax_series: %u\n", yaml, max);
		s = make_snapshot(conf);
		give_hits(s, 0, 12, 7, 3, 0, 0);
		out = render(s, TCX_FMT_PROMETHEUS);
		assert_int_equal(count_lines(out, "tc_filter_hits_total{"), max == 23);
		assert_int_equal(count_lines(out, "tc_filter_flags_info{"), 2);
		snprintf(want, sizeof(want), "\ntc_exporter_series_dropped %u\n",
		         max == 23 ? 0 : 3);
		assert_contains(out, want);
		free(out);
		tcx_snapshot_unref(s);
	}
}

/* A filter of target 0 added to s (no action) with hit counters: lookups
 * unless 0 (a matchall has none), hits and mark unless 0. */
static void add_hit_filter(struct tcx_snapshot *s, const char *kind, uint16_t pref, uint32_t handle,
                           uint64_t lookups, uint64_t hits, uint64_t mark)
{
	struct tcx_filter *f = tcx_snapshot_add_filter(s);
	uint64_t *v;

	assert_non_null(f);
	f->pref = pref;
	f->protocol = 0x0800;
	f->handle = handle;
	f->kind = (uint8_t)tcx_snapshot_kind(s, kind);
	f->first_action = (uint32_t)s->n_actions;
	v = tcx_snapshot_add_hvals(s, f, 2);
	assert_non_null(v);
	v[TCX_FCTR_LOOKUPS] = lookups;
	v[TCX_FCTR_HITS] = hits;
	v[TCX_FCTR_U32_MARK] = mark;
	v[TCX_FCTR__MAX] = hits;
	f->hv_present = (uint8_t)((lookups ? 1u << TCX_FCTR_LOOKUPS : 0) | (1u << TCX_FCTR_HITS) |
	                          (mark ? 1u << TCX_FCTR_U32_MARK : 0));
}

/* With `aggregate`, the hit families are aggregated too (on by default): a
 * series per hit aggregate with its kept labels, only the counters some
 * member of it has (a group of matchall filters has no lookups), no key
 * hits; _created in OpenMetrics; in JSON a filter_aggregate line per hit
 * aggregate after the aggregates; `hits: off` still turns them off; within
 * max_series. */
static void test_aggregated_hits(void **state)
{
	char conf[1024], want[256];
	struct tcx_snapshot *s;
	char *out;

	for (unsigned max = 0; max <= 16; max = max ? max + 1 : 14) {
		struct tcx_agg *a = tcx_agg_new(), *h = tcx_agg_new_hits();

		snprintf(conf, sizeof(conf),
		         "%saggregate: {by: [device, kind]}\nfamilies: {keys: on, created: on}\n",
		         yaml);
		if (max) /* 0: none */
			snprintf(conf + strlen(conf), sizeof(conf) - strlen(conf),
			         "max_series: %u\n", max);
		s = make_snapshot(conf);
		give_hits(s, 0, 12, 7, 3, 2, 9);
		add_hit_filter(s, "u32", 10, 0x80000801, 20, 5, 0);
		add_hit_filter(s, "matchall", 30, 1, 0, 4, 0);
		assert_int_equal(tcx_agg_update(a, s), 0);
		assert_int_equal(tcx_agg_update(h, s), 0);
		out = render(s, TCX_FMT_PROMETHEUS);
		/* 2 aggregates of 6 action series, then the hit series: the u32
		 * group's 3 fit in 15, the matchall group's 1 in 16 */
		snprintf(want, sizeof(want), "\ntc_exporter_series_dropped %u\n",
		         max == 14   ? 4
		         : max == 15 ? 1
		                     : 0);
		assert_contains(out, want);
		assert_int_equal(count_lines(out, "tc_filter_hits_total{"), max == 14   ? 0
		                                                            : max == 15 ? 1
		                                                                        : 2);
		if (max) {
			free(out);
			tcx_snapshot_unref(s);
			tcx_agg_free(h);
			tcx_agg_free(a);
			continue;
		}
		snprintf(want, sizeof(want),
		         "# HELP tc_filter_lookups_total %s\n"
		         "# TYPE tc_filter_lookups_total counter\n"
		         "tc_filter_lookups_total{device=\"v0\",kind=\"u32\"} 32\n"
		         "# HELP tc_filter_hits_total",
		         tcx_filter_counters.def[TCX_FCTR_LOOKUPS].help);
		assert_contains(out, want);
		assert_contains(out, "# TYPE tc_filter_hits_total counter\n"
		                     "tc_filter_hits_total{device=\"v0\",kind=\"u32\"} 12\n"
		                     "tc_filter_hits_total{device=\"v0\",kind=\"matchall\"} 4\n");
		assert_contains(out,
		                "# TYPE tc_filter_u32_mark_success_total counter\n"
		                "tc_filter_u32_mark_success_total{device=\"v0\",kind=\"u32\"} 3\n");
		assert_int_equal(count_lines(out, "tc_filter_lookups_total{"), 1);
		assert_int_equal(count_lines(out, "tc_filter_u32_mark_success_total{"), 1);
		assert_null(strstr(out, "tc_filter_u32_key_hits"));
		assert_null(strstr(out, "handle="));
		free(out);
		out = render(s, TCX_FMT_OPENMETRICS);
		assert_contains(out, "# TYPE tc_filter_hits counter\n"
		                     "tc_filter_hits_total{device=\"v0\",kind=\"u32\"} 12\n"
		                     "tc_filter_hits_created{device=\"v0\",kind=\"u32\"} ");
		assert_int_equal(count_lines(out, "tc_filter_hits_created{"), 2);
		assert_int_equal(count_lines(out, "tc_filter_lookups_created{"), 1);
		free(out);
		out = render(s, TCX_FMT_JSON);
		assert_contains(
		        out,
		        "\"overlimits\":0,\"installed\":null,\"first_used\":null,\"last_used\":"
		        "null}\n"
		        "{\"type\":\"filter_aggregate\",\"labels\":{\"device\":\"v0\",\"kind\":"
		        "\"u32\"},"
		        "\"lookups\":32,\"hits\":12,\"u32_mark_success\":3}\n"
		        "{\"type\":\"filter_aggregate\",\"labels\":{\"device\":\"v0\",\"kind\":"
		        "\"matchall\"},\"hits\":4}\n");
		assert_int_equal(count_lines(out, "{\"type\":\"filter_aggregate\""), 2);
		assert_int_equal(count_lines(out, "{\"type\":\"aggregate\""), 2);
		assert_null(strstr(out, "{\"type\":\"filter\","));
		free(out);
		tcx_snapshot_unref(s);
		tcx_agg_free(h);
		tcx_agg_free(a);
	}

	/* `hits: off`: none */
	{
		struct tcx_agg *a = tcx_agg_new(), *h = tcx_agg_new_hits();

		snprintf(conf, sizeof(conf), "%saggregate: {by: [kind]}\nfamilies: {hits: off}\n",
		         yaml);
		s = make_snapshot(conf);
		give_hits(s, 0, 12, 7, 3, 2, 9);
		assert_int_equal(tcx_agg_update(a, s), 0);
		assert_int_equal(tcx_agg_update(h, s), 0);
		out = render(s, TCX_FMT_PROMETHEUS);
		assert_null(strstr(out, "tc_filter_hits"));
		assert_null(strstr(out, "tc_filter_lookups"));
		free(out);
		tcx_snapshot_unref(s);
		tcx_agg_free(h);
		tcx_agg_free(a);
	}
}

static void test_buf_streams_through_fd(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char path[] = "/tmp/tcx-render-XXXXXX";
	int fd = mkstemp(path);
	struct tcx_buf b;
	char *mem = render(s, TCX_FMT_PROMETHEUS), *file;
	long len;
	FILE *fp;

	assert_true(fd >= 0);
	assert_int_equal(tcx_buf_init_fd(&b, fd), 0);
	assert_int_equal(tcx_render(s, TCX_FMT_PROMETHEUS, NULL, &b), 0);
	assert_int_equal(tcx_buf_flush(&b), 0);
	tcx_buf_free(&b);
	fp = fdopen(fd, "r");
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	file = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(file, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	unlink(path);
	assert_string_equal(file, mem);
	free(file);
	free(mem);
	tcx_snapshot_unref(s);
}

/* Enough rows that every render buffer grows many times over. */
static void test_many_rows(void **state)
{
	enum { N = 3000 };
	struct tcx_snapshot *s = make_snapshot(yaml);
	char want[512], *out, *p;
	size_t lines = 0;

	for (uint32_t i = 0; i < N; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a;

		f->target = 0;
		f->pref = 30;
		f->protocol = 0x0800;
		f->handle = 0x80000800 + i;
		f->kind = (uint8_t)tcx_snapshot_kind(s, "u32");
		f->n_actions = 2;
		for (uint16_t o = 1; o <= 2; o++) {
			a = tcx_snapshot_add_action(s);
			a->filter = (uint32_t)s->n_filters - 1;
			a->order = o;
			a->kind = (uint8_t)tcx_snapshot_kind(s, o == 1 ? "mirred" : "police");
			a->cookie_len = 16;
			memset(a->cookie, (int)(i & 0xff), 16);
			a->c[TCX_ACT_BYTES] = (uint64_t)i * 1000 + o;
		}
	}
	tcx_snapshot_classify(s);
	out = render(s, TCX_FMT_PROMETHEUS);
	for (p = out; (p = strstr(p, "\ntc_action_bytes_total{")); p++)
		lines++;
	assert_int_equal(lines, 3 + 2 * N);
	for (uint32_t i = 0; i < N; i += 997) {
		char cookie[33], handle[32];

		for (int k = 0; k < 16; k++)
			snprintf(cookie + 2 * k, 3, "%02x", i & 0xff);
		tcx_format_handle("u32", 0x80000800 + i, handle, sizeof(handle));
		snprintf(want, sizeof(want),
		         "tc_action_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
		         "protocol=\"ip\",pref=\"30\",kind=\"u32\",handle=\"%s\","
		         "order=\"2\",action=\"police\",cookie=\"%s\",tenant=\"\",rule=\"\"} "
		         "%u\n",
		         handle, cookie, i * 1000 + 2);
		assert_contains(out, want);
	}
	free(out);
	tcx_snapshot_unref(s);
}

/* The example snapshot plus n filters of 0 to 3 actions each, some rows
 * dropped, and one action that does not follow its filter. */
static struct tcx_snapshot *big_snapshot(uint32_t n)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	struct tcx_action *a;

	for (uint32_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);

		f->target = i % 3 == 0 ? 1 : 0;
		f->chain = i % 5;
		f->pref = (uint16_t)(40 + i % 7);
		f->protocol = 0x0800;
		f->handle = 0x80000800 + i;
		f->kind = (uint8_t)tcx_snapshot_kind(s, "u32");
		f->flags = i & 0xf;
		f->n_actions = (uint16_t)(i % 4);
		f->first_action = (uint32_t)s->n_actions;
		for (uint16_t o = 1; o <= f->n_actions; o++) {
			a = tcx_snapshot_add_action(s);
			a->filter = (uint32_t)s->n_filters - 1;
			a->order = o;
			a->kind = (uint8_t)tcx_snapshot_kind(s, o == 2 ? "police" : "mirred");
			a->cookie_len = (uint8_t)(i % 17);
			memset(a->cookie, (int)(i & 0xff), a->cookie_len);
			if (i == 77)
				memcpy(a->cookie, "\x00\x11\x22\x33\x44\x55\x66\x77", 8);
			a->c[TCX_ACT_BYTES] = (uint64_t)i * 1000 + o;
			a->c[TCX_ACT_PACKETS] = i;
			a->c[TCX_ACT_DROPS] = o;
		}
	}
	a = tcx_snapshot_add_action(s); /* belongs to filter 1, far behind it */
	a->filter = 1;
	a->order = 2;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	a->c[TCX_ACT_BYTES] = 5;
	tcx_snapshot_classify(s);
	for (size_t i = 0; i < s->n_actions; i += 11)
		s->actions[i].drop = 1;
	return s;
}

static char *render_labels(const struct tcx_snapshot *s, const struct tcx_rowlabels *l, int om)
{
	struct tcx_buf b;
	char *out;

	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_render_prometheus_ex(s, om, NULL, l, &b), 0);
	out = calloc(1, b.len + 1);
	memcpy(out, b.p, b.len);
	tcx_buf_free(&b);
	return out;
}

/* The label text built once renders, in both text formats and as often as
 * asked, as a render that builds its own, byte for byte: actions whose
 * filter is far behind them, cookies of every length, rows dropped. */
static void test_labels_shared(void **state)
{
	struct tcx_snapshot *s = big_snapshot(701);
	struct tcx_rowlabels *l = tcx_rowlabels_build(s);

	assert_non_null(l);
	for (int round = 0; round < 2; round++) {
		for (int om = 0; om <= 1; om++) {
			char *shared = render_labels(s, l, om), *fresh = render_labels(s, NULL, om);

			assert_true(strlen(fresh) > 1000);
			assert_string_equal(shared, fresh);
			free(shared);
			free(fresh);
		}
	}
	tcx_rowlabels_free(l);
	tcx_snapshot_unref(s);
}

/* A kind the kernel sent empty, with no label configured: the escaped kinds
 * are then no bytes at all (issue #9: memcpy() to and from a NULL buffer,
 * which UBSan reports). */
static void test_empty_kind(void **state)
{
	struct tcx_snapshot *s = make_snapshot("{}\n");
	char *out;

	s->n_kinds = 0;
	s->filters[0].kind = s->filters[1].kind = (uint8_t)tcx_snapshot_kind(s, "");
	for (size_t i = 0; i < s->n_actions; i++)
		s->actions[i].kind = s->filters[0].kind;
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out, "tc_action_bytes_total{device=\"v0\",parent=\"ingress\",chain=\"0\","
	                     "protocol=\"ip\",pref=\"10\",kind=\"\",handle=\"0x80000800\","
	                     "order=\"1\",action=\"\",cookie=\"aa\"} 18446744073709551615\n");
	free(out);
	out = render(s, TCX_FMT_OPENMETRICS);
	assert_contains(out, ",kind=\"\",handle=\"0x1\",order=\"1\",action=\"\",cookie=");
	free(out);
	out = render(s, TCX_FMT_JSON);
	assert_contains(out, "\"kind\":\"\",\"handle\":\"0x80000800\"");
	free(out);
	tcx_snapshot_unref(s);
}

static void test_escape_and_u64(void **state)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	tcx_buf_escape_label(&b, "plain");
	tcx_buf_putc(&b, '|');
	tcx_buf_escape_label(&b, "q\"b\\n\nz\xc3\xa9");
	tcx_buf_putc(&b, '|');
	tcx_buf_u64(&b, 0);
	tcx_buf_putc(&b, '|');
	tcx_buf_u64(&b, 18446744073709551615ULL);
	tcx_buf_putc(&b, '\0');
	assert_string_equal(b.p, "plain|q\\\"b\\\\n\\nz\xc3\xa9|0|18446744073709551615");
	tcx_buf_free(&b);
}

/* Numbers on either side of every change in their count of digits print as
 * printf prints them, and nothing past their digits is written. */
static void test_u64_digit_counts(void **state)
{
	uint64_t p10 = 1;

	for (int k = 0; k < 20; k++, p10 *= 10) {
		uint64_t vs[3] = {p10 - 1, p10, p10 + 7};

		for (int j = 0; j < 3; j++) {
			char got[32], want[32];
			size_t n;

			memset(got, '#', sizeof(got));
			snprintf(want, sizeof(want), "%llu", (unsigned long long)vs[j]);
			n = tcx_fmt_u64(got, vs[j]);
			assert_int_equal(n, strlen(want));
			assert_memory_equal(got, want, n);
			assert_int_equal(got[n], '#');
		}
	}
}

static char *escaped(const char *s, enum tcx_escape how)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	tcx_buf_escape(&b, s, how);
	tcx_buf_putc(&b, '\0');
	assert_int_equal(b.err, 0);
	return b.p;
}

static void assert_escaped(const char *s, enum tcx_escape how, const char *want)
{
	char *got = escaped(s, how);

	assert_string_equal(got, want);
	free(got);
}

/* Bytes that are not UTF-8 are written \xHH, in every format; a backslash
 * that would read as the start of such an escape is written as two, so that
 * a name holding the four characters \xff and a name holding the byte 0xff
 * stay apart. */
static void test_escape_not_utf8(void **state)
{
	static const char *const distinct[] = {
	        "q\"b\\x\xff", "q\"b\\x\\xff", "\xff",       "\\xff",    "\\\xff",
	        "\\\\xff",     "\\\\\xff",     "\\x",        "\\\\x",    "\xc3",
	        "\\xc3",       "\xc3\xa9",     "\\\xc3\xa9", "",         "\\",
	        "\\\\",        "\\\\\\",       "x",          "\xff\xff", "\\xff\\xff",
	        "\\\xff\\"};

	/* valid UTF-8 (1 to 4 bytes) as it is */
	assert_escaped("r\xc3\xa9gle \xe2\x82\xac \xf0\x9f\x98\x80", TCX_ESC_NONE,
	               "r\xc3\xa9gle \xe2\x82\xac \xf0\x9f\x98\x80");
	/* the byte 0xff, a backslash, and the issue's interface name */
	assert_escaped("\xff", TCX_ESC_NONE, "\\xff");
	assert_escaped("\\xff", TCX_ESC_NONE, "\\\\xff");
	assert_escaped("q\"b\\x\xff", TCX_ESC_NONE, "q\"b\\\\x\\xff");
	/* a backslash before anything else stays single */
	assert_escaped("a\\b\\", TCX_ESC_NONE, "a\\b\\");
	assert_escaped("\\\\", TCX_ESC_NONE, "\\\\\\");
	assert_escaped("\\\xff", TCX_ESC_NONE, "\\\\\\xff");
	assert_escaped("\\\xc3\xa9", TCX_ESC_NONE, "\\\xc3\xa9");
	assert_escaped("a\\b", TCX_ESC_LABEL, "a\\\\b");
	assert_escaped("q\"b\\x\xff", TCX_ESC_LABEL, "q\\\"b\\\\\\\\x\\\\xff");
	assert_escaped("q\"b\\x\xff\n\x01", TCX_ESC_JSON, "q\\\"b\\\\\\\\x\\\\xff\\u000a\\u0001");
	/* sequences that are not UTF-8: every byte escaped */
	assert_escaped("a\xc0\xaf", TCX_ESC_NONE, "a\\xc0\\xaf");                 /* overlong / */
	assert_escaped("\xe0\x80\xaf", TCX_ESC_NONE, "\\xe0\\x80\\xaf");          /* overlong */
	assert_escaped("\xed\xa0\x80", TCX_ESC_NONE, "\\xed\\xa0\\x80");          /* surrogate */
	assert_escaped("\xf4\x90\x80\x80", TCX_ESC_NONE, "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
	assert_escaped("\xf5\x80", TCX_ESC_NONE, "\\xf5\\x80");
	assert_escaped("\xe2\x82z", TCX_ESC_NONE, "\\xe2\\x82z"); /* cut short */
	assert_escaped("\xe2\x82", TCX_ESC_NONE, "\\xe2\\x82");   /* cut by the end */
	assert_escaped("\x80\xbf", TCX_ESC_NONE, "\\x80\\xbf");   /* lone continuations */
	assert_escaped("\xf4\x8f\xbf\xbf", TCX_ESC_NONE, "\xf4\x8f\xbf\xbf"); /* U+10FFFF */
	/* distinct strings stay distinct, in every format */
	for (int how = TCX_ESC_NONE; how <= TCX_ESC_JSON; how++) {
		size_t n = sizeof(distinct) / sizeof(distinct[0]);
		char *out[sizeof(distinct) / sizeof(distinct[0])];

		for (size_t i = 0; i < n; i++)
			out[i] = escaped(distinct[i], (enum tcx_escape)how);
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (strcmp(out[i], out[j]) == 0)
					fail_msg("'%s' and '%s' both escape to '%s'", distinct[i],
					         distinct[j], out[i]);
		for (size_t i = 0; i < n; i++)
			free(out[i]);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every string of up to 4 characters from the ones that make the rule's
 * escapes (\ x f f, a lone byte, a valid and a cut sequence) escapes to a
 * different text, and no longer than TCX_ESC_LABEL_GROWTH bytes for each. */
static void test_escape_is_one_to_one(void **state)
{
	static const char alphabet[] = {'\\', 'x', 'f', (char)0xff, (char)0xc3, (char)0xa9};
	enum { K = sizeof(alphabet), N = 1 + K + K * K + K * K * K + K * K * K * K };
	char **out = calloc(N, sizeof(*out));
	size_t n = 0;

	assert_non_null(out);
	for (size_t len = 0; len <= 4; len++) {
		size_t count = 1;

		for (size_t i = 0; i < len; i++)
			count *= K;
		for (size_t c = 0; c < count; c++) {
			char str[5] = {0};
			char *label;

			for (size_t i = 0, v = c; i < len; i++, v /= K)
				str[i] = alphabet[v % K];
			out[n++] = escaped(str, TCX_ESC_NONE);
			/* no byte grows past TCX_ESC_LABEL_GROWTH; 0xff to it */
			label = escaped(str, TCX_ESC_LABEL);
			assert_true(strlen(label) <= TCX_ESC_LABEL_GROWTH * len);
			if (len == 1 && str[0] == (char)0xff)
				assert_int_equal(strlen(label), TCX_ESC_LABEL_GROWTH);
			free(label);
		}
	}
	assert_int_equal(n, N);
	qsort(out, n, sizeof(*out), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (strcmp(out[i - 1], out[i]) == 0)
			fail_msg("two strings escape to '%s'", out[i]);
	for (size_t i = 0; i < n; i++)
		free(out[i]);
	free(out);
}

/* A device, namespace and kind named with bytes that are not UTF-8 give
 * valid UTF-8 in every format. */
static void test_render_not_utf8(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	char *out;

	snprintf(s->targets[0].dev, sizeof(s->targets[0].dev), "q\"b\\x\xff");
	snprintf(s->targets[0].netns, sizeof(s->targets[0].netns), "n\xfe");
	snprintf(s->kinds[s->actions[0].kind], TCX_KIND_MAX, "mi\xc3rred");
	for (int fmt = TCX_FMT_PROMETHEUS; fmt <= TCX_FMT_JSON; fmt++) {
		out = render(s, (enum tcx_format)fmt);
		/* The only bytes above 0x7f left are those of the e-acute (c3 a9)
		 * of the configuration's "r\u00e9gle". */
		for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
			if (p[0] == 0xc3 && p[1] == 0xa9)
				p++;
			else if (*p >= 0x80)
				fail_msg("format %d: byte 0x%02x at %zu is not UTF-8", fmt, *p,
				         (size_t)(p - (const unsigned char *)out));
		}
		if (fmt == TCX_FMT_JSON) {
			assert_contains(out, "{\"type\":\"action\",\"netns\":\"n\\\\xfe\","
			                     "\"device\":\"q\\\"b\\\\\\\\x\\\\xff\"");
			assert_contains(out, "\"action\":\"mi\\\\xc3rred\"");
		} else {
			assert_contains(
			        out,
			        "tc_scrape_collector_success{device=\"q\\\"b\\\\\\\\x\\\\xff\","
			        "parent=\"ingress\",netns=\"n\\\\xfe\"} 1\n");
			assert_contains(out, ",action=\"mi\\\\xc3rred\",cookie=\"aa\"");
		}
		free(out);
	}
	tcx_snapshot_unref(s);
}

/* An action's own labels at their longest: order 65535, a kind of 15 bytes
 * that are not UTF-8 (5 bytes each, escaped), a cookie of 16 bytes; on
 * enough rows that the label text outgrows what was reserved for it, so
 * that rows are written at every distance from the end of its buffer (room
 * too small for a row is then a write past it, which ASan reports). */
static void test_render_longest_action_part(void **state)
{
	enum { N = 400 };
	struct tcx_snapshot *s = make_snapshot("{}\n");
	char want[256], *p = want, *out;
	uint8_t u32, weird;
	size_t rows;

	s->n_kinds = 0;
	u32 = (uint8_t)tcx_snapshot_kind(s, "u32");
	weird = (uint8_t)tcx_snapshot_kind(s, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
	                                      "\xff\xff\xff");
	for (size_t i = 0; i < s->n_filters; i++)
		s->filters[i].kind = u32;
	for (size_t i = 0; i < s->n_actions; i++)
		s->actions[i].kind = weird;
	for (uint32_t i = 0; i < N; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a = tcx_snapshot_add_action(s);

		f->pref = 50;
		f->protocol = 0x0800;
		f->handle = 0x80000800 + i;
		f->kind = u32;
		f->n_actions = 1;
		a->filter = (uint32_t)s->n_filters - 1;
		a->kind = weird;
	}
	for (size_t i = 0; i < s->n_actions; i++) {
		s->actions[i].order = 65535;
		s->actions[i].cookie_len = TCX_COOKIE_MAX;
		memset(s->actions[i].cookie, 0xab, TCX_COOKIE_MAX);
	}
	tcx_snapshot_classify(s);
	p += sprintf(p, ",order=\"65535\",action=\"");
	for (int i = 0; i < TCX_KIND_MAX - 1; i++)
		p += sprintf(p, "\\\\xff");
	p += sprintf(p, "\",cookie=\"");
	for (int i = 0; i < TCX_COOKIE_MAX; i++)
		p += sprintf(p, "ab");
	sprintf(p, "\"} ");
	for (int fmt = TCX_FMT_PROMETHEUS; fmt <= TCX_FMT_OPENMETRICS; fmt++) {
		out = render(s, (enum tcx_format)fmt);
		rows = 0;
		for (p = out; (p = strstr(p, "\ntc_action_bytes_total{")); p++)
			rows += strstr(p, want) && strstr(p, want) < strchr(p + 1, '\n');
		assert_int_equal(rows, s->n_actions);
		free(out);
	}
	tcx_snapshot_unref(s);
}

/* Rows that would be the same series, whatever produced them, are merged
 * into the first: its counters are the sum, the others are shown nowhere. */
static void test_merge_same_identity(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	size_t nf = s->n_filters, na = s->n_actions;
	char *out;

	/* every filter and action again (the same identity), plus one action
	 * that differs only in its cookie */
	for (size_t i = 0; i < nf; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);

		*f = s->filters[i];
		f->first_action = (uint32_t)s->n_actions;
		for (size_t j = 0; j < na; j++) {
			if (s->actions[j].filter != i)
				continue;
			struct tcx_action *a = tcx_snapshot_add_action(s);

			*a = s->actions[j];
			a->filter = (uint32_t)(s->n_filters - 1);
			a->c[TCX_ACT_BYTES] = 1000;
			a->c[TCX_ACT_DROPS] = UINT32_MAX;
			a->index = 99;
		}
	}
	s->actions[s->n_actions - 1].cookie[0] ^= 0x40;
	/* hits of a filter and of its twin add up, key by key, a counter
	 * either has counting */
	give_hits(s, 0, 12, 7, 0, 2, 9);
	give_hits(s, nf, 1, 1, 5, 2, 1);
	give_hits(s, nf + 1, 4, 2, 0, 0, 0);
	assert_int_equal(tcx_snapshot_merge(s), 0);
	{
		const uint64_t *v = s->hvals + s->filters[0].hv;

		assert_int_equal(v[TCX_FCTR_LOOKUPS], 13);
		assert_int_equal(v[TCX_FCTR_HITS], 8);
		assert_int_equal(v[TCX_FCTR_U32_MARK], 5);
		assert_int_equal(s->filters[0].hv_present, 7);
		assert_int_equal(v[TCX_FCTR__MAX], 10);
		assert_int_equal(v[TCX_FCTR__MAX + 1], 8);
		/* the second's values are its twin's */
		v = s->hvals + s->filters[1].hv;
		assert_int_equal(s->filters[1].hv_present, 3);
		assert_int_equal(v[TCX_FCTR_LOOKUPS], 4);
	}
	tcx_snapshot_classify(s);
	assert_int_equal(s->merged_filters, 2);
	assert_int_equal(s->merged_actions, 2);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES],
	                 18446744073709551615ULL + 1000); /* wraps, as counters do */
	assert_int_equal(s->actions[1].c[TCX_ACT_BYTES], 1100);
	/* drops are 32-bit in the kernel: their sum wraps there */
	assert_int_equal(s->actions[0].c[TCX_ACT_DROPS], 2); /* 3 + UINT32_MAX */
	assert_int_equal(s->actions[1].c[TCX_ACT_DROPS], UINT32_MAX);
	assert_int_equal(s->actions[0].index, 5);
	assert_int_equal(s->unmapped_cookies, 2); /* dead, and the changed cookie */
	out = render(s, TCX_FMT_PROMETHEUS);
	assert_contains(out, "cookie=\"dead\",tenant=\"\",rule=\"\"} 1100\n");
	assert_contains(out, "cookie=\"4011223344556677\",tenant=\"\",rule=\"\"} 1000\n");
	assert_contains(out, "\ntc_exporter_merged_rows{row=\"filter\"} 2\n"
	                     "tc_exporter_merged_rows{row=\"action\"} 2\n");
	/* 3 + 1 rows of each of the 6 action families, 2 filters */
	{
		size_t rows = 0, flags = 0;

		for (char *p = out; (p = strstr(p, "\ntc_action_")); p++)
			rows++;
		for (char *p = out; (p = strstr(p, "\ntc_filter_flags_info{")); p++)
			flags++;
		assert_int_equal(rows, 6 * 4);
		assert_int_equal(flags, 2);
	}
	free(out);
	out = render(s, TCX_FMT_JSON);
	{
		size_t lines = 0;

		for (char *p = out; (p = strchr(p, '\n')); p++)
			lines++;
		assert_int_equal(count_lines(out, "{\"type\":\"action\","), 4);
		/* and 2 filter lines (one merged), 2 targets, the collection */
		assert_int_equal(lines, 4 + 2 + 2 + 1);
	}
	free(out);
	tcx_snapshot_unref(s);
}

static const char *fmt_double(double v)
{
	static char out[TCX_FMT_DOUBLE_MAX];

	out[tcx_fmt_double(out, v)] = '\0';
	return out;
}

/* Floats print as the shortest text that reads back as the same double. */
/* ---- merge: each way two rows can share an identity ------------------------------------- */

/* A filter of a merge case, with up to two actions (order 0: none). */
struct mfilter {
	uint32_t target, chain;
	uint16_t pref;
	uint16_t proto;
	uint32_t handle;
	const char *kind;
	struct {
		uint16_t order;
		uint8_t cookie;
	} act[2];
};

#define IP   0x0800
#define IPV6 0x86dd

/* Two targets (v0 ingress and egress) and the filters fs, in that order,
 * each action with its own bytes: 1 << its row number. */
static struct tcx_snapshot *merge_case(const struct mfilter *fs, size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);

	for (int i = 0; i < 2; i++) {
		struct tcx_target *t = tcx_snapshot_add_target(s);

		snprintf(t->dev, sizeof(t->dev), "v0");
		snprintf(t->parent_name, sizeof(t->parent_name), i ? "egress" : "ingress");
		t->ok = 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);

		f->target = fs[i].target;
		f->chain = fs[i].chain;
		f->pref = fs[i].pref;
		f->protocol = fs[i].proto;
		f->handle = fs[i].handle;
		f->kind = (uint8_t)tcx_snapshot_kind(s, fs[i].kind);
		f->first_action = (uint32_t)s->n_actions;
		for (int k = 0; k < 2 && fs[i].act[k].order; k++) {
			struct tcx_action *a = tcx_snapshot_add_action(s);

			a->filter = (uint32_t)i;
			a->order = fs[i].act[k].order;
			a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
			a->cookie_len = 1;
			a->cookie[0] = fs[i].act[k].cookie;
			f->n_actions++;
		}
	}
	return s;
}

/* An action of filter `filter` of s, after the others. */
static void merge_case_action(struct tcx_snapshot *s, uint32_t filter, uint16_t order,
                              uint8_t cookie)
{
	struct tcx_action *a = tcx_snapshot_add_action(s);

	a->filter = filter;
	a->order = order;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	a->cookie_len = 1;
	a->cookie[0] = cookie;
	s->filters[filter].n_actions++;
}

static int same_fid(const struct tcx_filter *a, const struct tcx_filter *b)
{
	return a->target == b->target && a->chain == b->chain && a->pref == b->pref &&
	       a->protocol == b->protocol && a->kind == b->kind && a->handle == b->handle;
}

/* The first filter of filter i's identity in s. */
static size_t first_fid(const struct tcx_snapshot *s, size_t i)
{
	size_t j = 0;

	while (!same_fid(&s->filters[j], &s->filters[i]))
		j++;
	return j;
}

static int same_aid(const struct tcx_snapshot *s, size_t i, size_t j)
{
	const struct tcx_action *a = &s->actions[i], *b = &s->actions[j];

	return first_fid(s, a->filter) == first_fid(s, b->filter) && a->order == b->order &&
	       a->kind == b->kind && a->cookie_len == b->cookie_len &&
	       !memcmp(a->cookie, b->cookie, a->cookie_len);
}

/* Merge s and check it against the identities, compared row by row: the
 * first row of each identity is shown, with the bytes of them all; the
 * others are merged, want_f filters and want_a actions. */
static void merge_and_check(struct tcx_snapshot *s, uint64_t want_f, uint64_t want_a)
{
	assert_true(s->n_actions < 64);
	for (size_t i = 0; i < s->n_actions; i++)
		s->actions[i].c[TCX_ACT_BYTES] = 1ULL << i;
	assert_int_equal(tcx_snapshot_merge(s), 0);
	for (size_t i = 0; i < s->n_filters; i++)
		if (s->filters[i].merged != (first_fid(s, i) != i))
			fail_msg("filter %zu: merged %d, expected %d", i, s->filters[i].merged,
			         first_fid(s, i) != i);
	for (size_t i = 0; i < s->n_actions; i++) {
		uint64_t bytes = 0;
		size_t first = i;

		for (size_t j = 0; j < s->n_actions; j++)
			if (same_aid(s, i, j)) {
				bytes |= 1ULL << j;
				if (j < first)
					first = j;
			}
		if (s->actions[i].merged != (first != i))
			fail_msg("action %zu: merged %d, expected %d", i, s->actions[i].merged,
			         first != i);
		if (first == i && s->actions[i].c[TCX_ACT_BYTES] != bytes)
			fail_msg("action %zu: bytes %#" PRIx64 ", expected %#" PRIx64, i,
			         s->actions[i].c[TCX_ACT_BYTES], bytes);
	}
	assert_int_equal(s->merged_filters, want_f);
	assert_int_equal(s->merged_actions, want_a);
	tcx_snapshot_unref(s);
}

/* u32 gives every filter past the 4095th of a hash table bucket the handle
 * htid::fff, and keeps them at the bucket's end: the same filter identity,
 * one after the other; their actions are the same series where their
 * cookies are the same too. */
static void test_merge_u32_reused_handle(void **state)
{
	static const struct mfilter fs[] = {
	        {0, 0, 10, IP, 0x80000000, "u32", {{0, 0}}}, /* the table 800: */
	        {0, 0, 10, IP, 0x80000800, "u32", {{1, 1}}},
	        {0, 0, 10, IP, 0x80000ffe, "u32", {{1, 2}}},
	        {0, 0, 10, IP, 0x80000fff, "u32", {{1, 3}}},
	        {0, 0, 10, IP, 0x80000fff, "u32", {{1, 3}}},
	        {0, 0, 10, IP, 0x80000fff, "u32", {{1, 4}}},
	        {0, 0, 10, IP, 0x80000fff, "u32", {{1, 3}, {2, 3}}},
	        {0, 0, 10, IP, 0x80001fff, "u32", {{1, 3}}}, /* bucket 1 */
	        {0, 0, 11, IP, 0x80100000, "u32", {{0, 0}}},
	        {0, 0, 11, IP, 0x80100fff, "u32", {{1, 3}}},
	        {1, 0, 10, IP, 0x80200fff, "u32", {{1, 3}}},
	        {1, 0, 10, IP, 0x80200fff, "u32", {{1, 3}}},
	};

	(void)state;
	merge_and_check(merge_case(fs, sizeof(fs) / sizeof(fs[0])), 4, 3);
}

/* The kernel resumes a filter dump by count (but flower's filters, by
 * handle): a filter or a tp added before the resume point between two
 * chunks has the dump list rows again. A filter again is listed right
 * after itself (target 1); a tp added before the tp being dumped has the
 * dump list the tp before again from the same count, then the next one from
 * the start (target 0). */
static void test_merge_dump_resumed(void **state)
{
	static const struct mfilter fs[] = {
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 2, "basic", {{1, 2}}},
	        {0, 0, 2, IP, 1, "basic", {{1, 3}}},
	        {0, 0, 1, IP, 2, "basic", {{1, 2}}}, /* resumed */
	        {0, 0, 2, IP, 1, "basic", {{1, 3}}},
	        {0, 0, 2, IP, 2, "basic", {{1, 4}}},
	        {1, 0, 1, IP, 1, "basic", {{1, 5}}},
	        {1, 0, 1, IP, 2, "basic", {{1, 6}}},
	        {1, 0, 1, IP, 2, "basic", {{1, 6}}}, /* resumed */
	        {1, 0, 1, IP, 3, "basic", {{1, 7}}},
	};

	(void)state;
	merge_and_check(merge_case(fs, sizeof(fs) / sizeof(fs[0])), 3, 3);
}

/* The filters of a target anywhere in the rows, not together. */
static void test_merge_targets_interleaved(void **state)
{
	static const struct mfilter fs[] = {
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {1, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 2, "basic", {{1, 2}}},
	};

	(void)state;
	merge_and_check(merge_case(fs, sizeof(fs) / sizeof(fs[0])), 1, 1);
}

/* Rows of the same chain, pref and handle that differ in protocol or kind
 * are other filters, and the first one can come again after them. */
static void test_merge_same_handle_other_tp(void **state)
{
	static const struct mfilter fs[] = {
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},  {0, 0, 1, IPV6, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},  {0, 0, 2, IP, 1, "basic", {{1, 2}}},
	        {0, 0, 2, IP, 1, "flower", {{1, 2}}}, {0, 0, 2, IP, 1, "basic", {{1, 2}}},
	        {0, 0, 2, IP, 1, "flower", {{1, 2}}},
	};

	(void)state;
	merge_and_check(merge_case(fs, sizeof(fs) / sizeof(fs[0])), 3, 3);
}

/* A filter's actions with an order twice, or after another filter's. */
static void test_merge_actions_out_of_order(void **state)
{
	static const struct mfilter twice[] = {
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 2, "basic", {{1, 2}, {1, 2}}},
	        {0, 0, 1, IP, 3, "basic", {{1, 3}, {2, 3}}},
	};
	static const struct mfilter after[] = {
	        {0, 0, 1, IP, 1, "basic", {{1, 1}}},
	        {0, 0, 1, IP, 2, "basic", {{1, 2}}},
	};
	struct tcx_snapshot *s;

	(void)state;
	merge_and_check(merge_case(twice, sizeof(twice) / sizeof(twice[0])), 0, 1);
	s = merge_case(after, sizeof(after) / sizeof(after[0]));
	merge_case_action(s, 0, 1, 1);
	merge_and_check(s, 0, 1);
}

/* Rows in the dump's order, each its own identity, are left as they are,
 * the same handle in other targets, chains and prefs included. */
static void test_merge_distinct_rows_untouched(void **state)
{
	static const struct mfilter fs[] = {
	        {0, 0, 1, IP, 0x80000000, "u32", {{0, 0}}},
	        {0, 0, 1, IP, 0x80000800, "u32", {{1, 1}, {2, 1}}},
	        {0, 0, 1, IP, 0x80000801, "u32", {{1, 1}}},
	        {0, 0, 2, IP, 0x80000800, "u32", {{1, 1}}},
	        {0, 1, 1, IP, 0x80000800, "u32", {{1, 1}}},
	        {1, 0, 1, IP, 0x80000800, "u32", {{1, 1}}},
	        {1, 0, 1, IP, 0x80000801, "u32", {{1, 2}}},
	};
	struct tcx_snapshot *s = merge_case(fs, sizeof(fs) / sizeof(fs[0]));

	(void)state;
	merge_and_check(s, 0, 0);
}

static void test_fmt_double(void **state)
{
	static const double samples[] = {
	        1796034030.123456,    0.000123, 1e-300, 5e-324,   1.7976931348623157e308,
	        123456789012345678.0, -2.5,     0.3,    2.0 / 3.0};

	assert_string_equal(fmt_double(1796034030.123), "1796034030.123");
	assert_string_equal(fmt_double(1796034030.0), "1796034030");
	assert_string_equal(fmt_double(9007199254740993.0), "9007199254740992");
	assert_string_equal(fmt_double(0.1), "0.1");
	assert_string_equal(fmt_double(0), "0");
	assert_string_equal(fmt_double(1), "1");
	assert_string_equal(fmt_double(1e-7), "1e-07");
	assert_string_equal(fmt_double(1e9), "1000000000");
	assert_string_equal(fmt_double(1e300), "1e+300");
	assert_string_equal(fmt_double(-0.25), "-0.25");
	assert_string_equal(fmt_double(NAN), "NaN");
	assert_string_equal(fmt_double(INFINITY), "+Inf");
	assert_string_equal(fmt_double(-INFINITY), "-Inf");
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const char *t = fmt_double(samples[i]);

		assert_true(strtod(t, NULL) == samples[i]);
		assert_true(strlen(t) <= 24);
	}
}

/* The fewest significant digits (1 to 17) that read back as v: what
 * tcx_fmt_double() must print, found the slow way. */
static const char *shortest_by_search(double v)
{
	static char out[TCX_FMT_DOUBLE_MAX];

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, sizeof(out), "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			break;
	}
	return out;
}

/* tcx_fmt_double() starts at 15 digits: the same text as the search from 1,
 * on doubles of every exponent (random bit patterns), on times made of
 * psched ticks and microseconds, and on short decimals. */
static void test_fmt_double_shortest(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t checked = 0;

	for (int i = 0; i < 200000; i++) {
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v) || (v == floor(v) && fabs(v) <= 9007199254740992.0))
			continue;
		assert_string_equal(fmt_double(v), shortest_by_search(v));
		checked++;
	}
	assert_true(checked > 190000);
	for (int k = -70000; k <= 70000; k += 7) {
		double samples[] = {k * 64 / 1e9, k / 1e6, k / 1e3, k * 0.1, k / 3.0};

		for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
			if (samples[i] == floor(samples[i]))
				continue;
			assert_string_equal(fmt_double(samples[i]), shortest_by_search(samples[i]));
		}
	}
}

/* The snapshot's time is printed to the nanosecond a double can hold. */
static void test_timestamps_in_full(void **state)
{
	struct tcx_snapshot *s = make_snapshot(yaml);
	struct tcx_selfstats st = {.last_reload_ok = 1, .last_reload_ts = 1796034031.5};
	struct tcx_buf b;

	s->taken.tv_sec = 1796034030;
	s->taken.tv_nsec = 250000000;
	s->duration_s = 0.000123;
	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_render_prometheus_ex(s, 0, &st, NULL, &b), 0);
	tcx_buf_putc(&b, '\0');
	assert_contains(b.p, "\ntc_exporter_snapshot_timestamp_seconds 1796034030.25\n");
	assert_contains(b.p, "\ntc_exporter_snapshot_duration_seconds 0.000123\n");
	assert_contains(
	        b.p, "\ntc_exporter_config_last_reload_success_timestamp_seconds 1796034031.5\n");
	tcx_buf_free(&b);
	tcx_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_prometheus_action_rows),
	        cmocka_unit_test(test_prometheus_filters_targets_meta),
	        cmocka_unit_test(test_openmetrics),
	        cmocka_unit_test(test_drop_policy_hides_rows),
	        cmocka_unit_test(test_json_lines),
	        cmocka_unit_test(test_buf_streams_through_fd),
	        cmocka_unit_test(test_many_rows),
	        cmocka_unit_test(test_labels_shared),
	        cmocka_unit_test(test_empty_kind),
	        cmocka_unit_test(test_escape_and_u64),
	        cmocka_unit_test(test_u64_digit_counts),
	        cmocka_unit_test(test_escape_not_utf8),
	        cmocka_unit_test(test_escape_is_one_to_one),
	        cmocka_unit_test(test_render_not_utf8),
	        cmocka_unit_test(test_render_longest_action_part),
	        cmocka_unit_test(test_merge_same_identity),
	        cmocka_unit_test(test_filter_hits),
	        cmocka_unit_test(test_aggregated_hits),
	        cmocka_unit_test(test_merge_u32_reused_handle),
	        cmocka_unit_test(test_merge_dump_resumed),
	        cmocka_unit_test(test_merge_targets_interleaved),
	        cmocka_unit_test(test_merge_same_handle_other_tp),
	        cmocka_unit_test(test_merge_actions_out_of_order),
	        cmocka_unit_test(test_merge_distinct_rows_untouched),
	        cmocka_unit_test(test_fmt_double),
	        cmocka_unit_test(test_fmt_double_shortest),
	        cmocka_unit_test(test_timestamps_in_full),
	        cmocka_unit_test(test_aggregates),
	        cmocka_unit_test(test_families),
	        cmocka_unit_test(test_action_times),
	        cmocka_unit_test(test_families_hw_default),
	        cmocka_unit_test(test_max_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
