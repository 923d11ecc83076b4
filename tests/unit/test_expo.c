/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Content negotiation, variants, gzip and the daemon's own metrics. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zlib.h>

#include "agent/http/expo.h"
#include "agent/render/prom.h"

/* What Prometheus 2.42 sends (snmp-prometheus-http.md, section C). */
#define PROM_ACCEPT                                                                                \
	"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"   \
	"q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

static void test_negotiation(void **state)
{
	assert_int_equal(tcx_negotiate(PROM_ACCEPT, "gzip"), TCX_VAR_OM_GZ);
	assert_int_equal(tcx_negotiate(PROM_ACCEPT, NULL), TCX_VAR_OM);
	assert_int_equal(tcx_negotiate(NULL, NULL), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("", ""), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("*/*", NULL), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("text/plain", "gzip, deflate"), TCX_VAR_TEXT_GZ);
	assert_int_equal(tcx_negotiate("text/plain;version=0.0.4", "identity"), TCX_VAR_TEXT);
	/* Only OpenMetrics 1.0.0 is served; 0.0.1 alone falls back to text. */
	assert_int_equal(tcx_negotiate("application/openmetrics-text;version=0.0.1", NULL),
	                 TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("application/openmetrics-text", NULL), TCX_VAR_OM);
	assert_int_equal(tcx_negotiate("application/openmetrics-text; version=1.0.0; q=0.4, "
	                               "text/plain; q=0.9",
	                               NULL),
	                 TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("Application/OpenMetrics-Text;q=0", NULL), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate("application/json", NULL), TCX_VAR_TEXT);
	/* encodings */
	assert_int_equal(tcx_negotiate(NULL, "gzip;q=0"), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate(NULL, "deflate, gzip;q=0.5"), TCX_VAR_TEXT_GZ);
	assert_int_equal(tcx_negotiate(NULL, "*"), TCX_VAR_TEXT_GZ);
	assert_int_equal(tcx_negotiate(NULL, "*, gzip;q=0"), TCX_VAR_TEXT);
	assert_int_equal(tcx_negotiate(NULL, "br"), TCX_VAR_TEXT);
	assert_string_equal(tcx_variant_content_type(TCX_VAR_OM_GZ),
	                    "application/openmetrics-text; version=1.0.0; charset=utf-8");
	assert_string_equal(tcx_variant_content_type(TCX_VAR_TEXT),
	                    "text/plain; version=0.0.4; charset=utf-8");
	assert_true(tcx_variant_is_gzip(TCX_VAR_TEXT_GZ));
	assert_false(tcx_variant_is_gzip(TCX_VAR_OM));
}

static struct tcx_snapshot *small_snapshot(void)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);
	struct tcx_target *t = tcx_snapshot_add_target(s);
	struct tcx_filter *f = tcx_snapshot_add_filter(s);
	struct tcx_action *a = tcx_snapshot_add_action(s);

	snprintf(t->dev, sizeof(t->dev), "e0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	f->kind = (uint8_t)tcx_snapshot_kind(s, "flower");
	f->handle = 1;
	f->n_actions = 1;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	a->order = 1;
	a->c[TCX_ACT_BYTES] = 1234;
	a->c[TCX_ACT_PACKETS] = 5;
	return s;
}

static char *gunzip(const char *in, size_t len, size_t *outlen)
{
	z_stream z;
	size_t cap = 1 << 26;
	char *out = malloc(cap);

	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap - 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* one gzip member, nothing after it */
	*outlen = z.total_out;
	out[*outlen] = '\0';
	inflateEnd(&z);
	return out;
}

static void test_variants_and_gzip(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_rendered rp, rg, ro;
	char *plain, *gz, *unz, *om;
	size_t plen, glen, ulen, olen;

	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_TEXT, &rp), 0);
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_TEXT_GZ, &rg), 0);
	plain = rp.p;
	plen = rp.len;
	gz = rg.p;
	glen = rg.len;
	assert_true(glen > 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
	unz = gunzip(gz, glen, &ulen);
	/* The snapshot's timestamps and durations do not change between the
	 * two renders, so the texts are identical. */
	assert_int_equal(ulen, plen);
	assert_memory_equal(unz, plain, plen);
	assert_non_null(strstr(plain, "tc_action_bytes_total{device=\"e0\",parent=\"ingress\""));
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_OM, &ro), 0);
	om = ro.p;
	olen = ro.len;
	assert_true(olen > 6);
	assert_memory_equal(om + olen - 6, "# EOF\n", 6);
	assert_null(strstr(plain, "# EOF"));
	free(plain);
	free(gz);
	free(unz);
	free(om);
	tcx_snapshot_unref(s);
}

static void test_selfstats(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_selfstats st = {.collections_total = 42,
	                           .snapshot_age_s = 1.5,
	                           .last_reload_ok = 1,
	                           .last_reload_ts = 1700000000.75};
	struct tcx_rendered r;
	char *out;

	st.collection_errors_total[TCX_ERR_NOTFOUND] = 3;
	st.http_requests_total[tcx_http_code_slot(200)] = 7;
	st.http_requests_total[tcx_http_code_slot(401)] = 2;
	st.http_requests_total[tcx_http_code_slot(599)] = 1;
	st.http_requests_total[tcx_http_code_slot(505)] = 4; /* libmicrohttpd's own */
	assert_int_equal(tcx_expo_render(s, NULL, &st, TCX_VAR_TEXT, &r), 0);
	out = r.p;
	assert_non_null(strstr(out, "# TYPE tc_exporter_collections_total counter\n"
	                            "tc_exporter_collections_total 42\n"));
	assert_non_null(strstr(out, "tc_exporter_collection_errors_total{cause=\"notfound\"} 3\n"));
	assert_non_null(strstr(out, "tc_exporter_http_requests_total{code=\"200\"} 7\n"));
	assert_non_null(strstr(out, "tc_exporter_http_requests_total{code=\"401\"} 2\n"));
	assert_non_null(strstr(out, "tc_exporter_http_requests_total{code=\"other\"} 1\n"));
	assert_non_null(strstr(out, "tc_exporter_http_requests_total{code=\"505\"} 4\n"));
	assert_null(strstr(out, "code=\"304\"")); /* never answered: not exported */
	assert_non_null(strstr(out, "tc_exporter_snapshot_age_seconds 1.5\n"));
	assert_non_null(strstr(out, "tc_exporter_config_last_reload_successful 1\n"));
	assert_non_null(strstr(out, "tc_exporter_config_last_reload_success_timestamp_seconds "
	                            "1700000000.75\n"));
	free(out);
	/* --once output has no daemon counters. */
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_TEXT, &r), 0);
	out = r.p;
	assert_null(strstr(out, "tc_exporter_http_requests_total"));
	free(out);
	tcx_snapshot_unref(s);
}

/* process_*: parsed from /proc/self/stat as the official clients do, read
 * from this process, and rendered in both formats only when read. */
static void test_process_stats(void **state)
{
	/* a name with spaces and parentheses; priority and nice negative */
	static const char stat[] =
	        "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 75 0 0 -20 -20 3 0 "
	        "1234500 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_selfstats st = {.last_reload_ok = 1};
	struct tcx_process_stats *p = &st.process;
	struct rlimit rl;
	struct tcx_rendered r;
	double now = (double)time(NULL);

	assert_int_equal(tcx_process_parse_stat(stat, 100, 4096, 1700000000, p), 0);
	assert_true(p->cpu_seconds == 3.25);                /* (250 + 75) / 100 */
	assert_true(p->start_time_seconds == 1700012345.0); /* btime + 1234500 / 100 */
	assert_int_equal(p->virtual_bytes, 104857600);
	assert_int_equal(p->resident_bytes, 2560 * 4096);
	assert_int_equal(tcx_process_parse_stat("4242 (a) S 1 2", 100, 4096, 0, p), -1);
	assert_int_equal(tcx_process_parse_stat("4242 a S 1 2 3", 100, 4096, 0, p), -1);

	p->ok = 1;
	p->open_fds = 9;
	p->max_fds = 1024;
	assert_int_equal(tcx_expo_render(s, NULL, &st, TCX_VAR_TEXT, &r), 0);
	assert_non_null(strstr(r.p, "# HELP process_cpu_seconds_total Total user and system CPU "
	                            "time spent in seconds.\n"
	                            "# TYPE process_cpu_seconds_total counter\n"
	                            "process_cpu_seconds_total 3.25\n"));
	assert_non_null(strstr(r.p, "# TYPE process_open_fds gauge\nprocess_open_fds 9\n"));
	assert_non_null(strstr(r.p, "# TYPE process_max_fds gauge\nprocess_max_fds 1024\n"));
	assert_non_null(strstr(r.p, "\nprocess_virtual_memory_bytes 104857600\n"));
	assert_non_null(strstr(r.p, "\nprocess_resident_memory_bytes 10485760\n"));
	assert_non_null(strstr(r.p, "\nprocess_start_time_seconds 1700012345\n"));
	free(r.p);
	assert_int_equal(tcx_expo_render(s, NULL, &st, TCX_VAR_OM, &r), 0);
	assert_non_null(strstr(r.p, "# TYPE process_cpu_seconds counter\n"
	                            "process_cpu_seconds_total 3.25\n"));
	assert_non_null(strstr(r.p, "\nprocess_start_time_seconds 1700012345\n"));
	free(r.p);
	p->ok = 0;
	assert_int_equal(tcx_expo_render(s, NULL, &st, TCX_VAR_TEXT, &r), 0);
	assert_null(strstr(r.p, "process_"));
	free(r.p);

	/* this process */
	tcx_process_stats_read(p);
	assert_true(p->ok);
	assert_true(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	assert_int_equal(p->max_fds, rl.rlim_cur);
	assert_true(p->open_fds >= 3 && p->open_fds < rl.rlim_cur);
	assert_true(p->resident_bytes > 0 && p->virtual_bytes >= p->resident_bytes);
	assert_true(p->start_time_seconds > now - 600 && p->start_time_seconds <= now + 1);
	assert_true(p->cpu_seconds >= 0 && p->cpu_seconds < 600);
	tcx_snapshot_unref(s);
}

static void add_rows(struct tcx_snapshot *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a = tcx_snapshot_add_action(s);

		f->kind = 0;
		f->handle = i + 2;
		f->n_actions = 1;
		a->filter = (uint32_t)s->n_filters - 1;
		a->kind = 1;
		a->order = 1;
		a->c[TCX_ACT_BYTES] = (uint64_t)i * 7919;
	}
}

/* A body of several megabytes, compressed whole, decompresses to the text. */
static void test_gzip_large(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_rendered plain, om, gz;
	char *unz;
	size_t ulen;

	add_rows(s, 20000);
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_TEXT, &plain), 0);
	assert_true(plain.len > 20000 * 6 * 100);
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_OM_GZ, &gz), 0);
	assert_true(gz.len < plain.len / 10);
	unz = gunzip(gz.p, gz.len, &ulen);
	assert_int_equal(tcx_expo_render(s, NULL, NULL, TCX_VAR_OM, &om), 0);
	assert_int_equal(ulen, om.len);
	assert_memory_equal(unz, om.p, om.len);
	assert_memory_equal(unz + ulen - 6, "# EOF\n", 6);
	free(unz);
	free(om.p);
	free(plain.p);
	free(gz.p);
	tcx_snapshot_unref(s);
}

/* ---- the variant lifetime rule (struct tcx_expo) ---- */

/* Every build of a snapshot's label text, counted (the test is linked with
 * -Wl,--wrap=tcx_rowlabels_build). */
static unsigned label_builds;
struct tcx_rowlabels *__real_tcx_rowlabels_build(const struct tcx_snapshot *s);
struct tcx_rowlabels *__wrap_tcx_rowlabels_build(const struct tcx_snapshot *s);
struct tcx_rowlabels *__wrap_tcx_rowlabels_build(const struct tcx_snapshot *s)
{
	label_builds++;
	return __real_tcx_rowlabels_build(s);
}

/* A server stand-in: its "response" is the rendered body; it counts what
 * it makes and what is freed. */
static unsigned made[TCX_VAR__MAX], freed[TCX_VAR__MAX];

struct fake_resp {
	enum tcx_variant v;
	struct tcx_rendered body;
};

static int fake_make(void *arg, struct tcx_expo *e, enum tcx_variant v, void **resp)
{
	struct fake_resp *r = malloc(sizeof(*r));

	assert_ptr_equal(arg, made);
	assert_non_null(r);
	assert_non_null(e->labels); /* made once, before the first variant */
	r->v = v;
	assert_int_equal(tcx_expo_render(e->snap, e->labels, NULL, v, &r->body), 0);
	made[v]++;
	*resp = r;
	return 0;
}

static void fake_free(void *resp)
{
	struct fake_resp *r = resp;

	freed[r->v]++;
	free(r->body.p);
	free(r);
}

/* One request for v: the body is the snapshot's, as tcx_expo_render()
 * makes it (decompressed for gzip), and it stays the exposition's. */
static void request(struct tcx_expo *e, enum tcx_variant v)
{
	struct tcx_rendered want;
	struct fake_resp *r = NULL;
	enum tcx_variant plain = v == TCX_VAR_OM_GZ     ? TCX_VAR_OM
	                         : v == TCX_VAR_TEXT_GZ ? TCX_VAR_TEXT
	                                                : v;
	const struct tcx_rowlabels *labels = e->labels;
	unsigned builds = label_builds;

	assert_int_equal(tcx_expo_response(e, v, fake_make, made, (void **)&r), 0);
	/* the label text is built once per exposition, for every variant: by
	 * the first response that needs it, never again */
	assert_int_equal(label_builds - builds, labels ? 0 : 1);
	if (labels)
		assert_ptr_equal(e->labels, labels);
	assert_non_null(r);
	assert_int_equal(r->v, v);
	assert_ptr_equal(e->resp[v], r);
	assert_int_equal(tcx_expo_render(e->snap, NULL, NULL, plain, &want), 0);
	if (tcx_variant_is_gzip(v)) {
		size_t ulen;
		char *unz = gunzip(r->body.p, r->body.len, &ulen);

		assert_int_equal(ulen, want.len);
		assert_memory_equal(unz, want.p, want.len);
		free(unz);
	} else {
		assert_int_equal(r->body.len, want.len);
		assert_memory_equal(r->body.p, want.p, want.len);
	}
	free(want.p);
}

static void test_variant_lifetime(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e[7];

	memset(made, 0, sizeof(made));
	memset(freed, 0, sizeof(freed));
	/* Prometheus scrapes every interval: its variant is rendered on its
	 * request until it has been asked for during two intervals, then
	 * ahead of it. */
	e[0] = tcx_expo_new(s, fake_free, NULL);
	assert_int_equal(tcx_expo_prerender(e[0], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 0);
	request(e[0], TCX_VAR_OM_GZ);
	e[1] = tcx_expo_new(s, fake_free, e[0]);
	assert_int_equal(tcx_expo_prerender(e[1], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 1);
	request(e[1], TCX_VAR_OM_GZ);
	assert_int_equal(made[TCX_VAR_OM_GZ], 2);
	e[2] = tcx_expo_new(s, fake_free, e[1]);
	assert_int_equal(tcx_expo_prerender(e[2], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 3); /* rendered ahead */
	assert_non_null(e[2]->resp[TCX_VAR_OM_GZ]);
	/* Once per snapshot: every request of it is answered from those bytes. */
	request(e[2], TCX_VAR_OM_GZ);
	request(e[2], TCX_VAR_OM_GZ);
	assert_int_equal(made[TCX_VAR_OM_GZ], 3);
	/* A plain-text scrape: answered, rendered once for this snapshot. */
	request(e[2], TCX_VAR_TEXT);
	request(e[2], TCX_VAR_TEXT);
	assert_int_equal(made[TCX_VAR_TEXT], 1);
	/* It was asked for during one interval only: the next snapshot does
	 * not render it, Prometheus's variant it does. */
	e[3] = tcx_expo_new(s, fake_free, e[2]);
	assert_int_equal(tcx_expo_prerender(e[3], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_TEXT], 1);
	assert_null(e[3]->resp[TCX_VAR_TEXT]);
	assert_int_equal(made[TCX_VAR_OM_GZ], 4);
	/* The snapshots replaced go with their bodies, the plain text too:
	 * nothing of it is kept. */
	for (int i = 0; i < 3; i++)
		tcx_expo_unref(e[i]);
	assert_int_equal(freed[TCX_VAR_TEXT], 1);
	assert_int_equal(freed[TCX_VAR_OM_GZ], 3);
	/* Nobody asks any more (no request of e[3]): a variant must have been
	 * asked for during each of the two intervals before a snapshot to be
	 * rendered ahead, so from e[4] on nothing is rendered or kept. */
	e[4] = tcx_expo_new(s, fake_free, e[3]);
	assert_int_equal(tcx_expo_prerender(e[4], fake_make, made), 0);
	e[5] = tcx_expo_new(s, fake_free, e[4]);
	assert_int_equal(tcx_expo_prerender(e[5], fake_make, made), 0);
	e[6] = tcx_expo_new(s, fake_free, e[5]);
	assert_int_equal(tcx_expo_prerender(e[6], fake_make, made), 0);
	for (int i = 4; i < 7; i++)
		for (unsigned v = 0; v < TCX_VAR__MAX; v++)
			assert_null(e[i]->resp[v]);
	assert_int_equal(made[TCX_VAR_OM_GZ], 4);
	assert_int_equal(made[TCX_VAR_TEXT], 1);
	assert_int_equal(made[TCX_VAR_OM] + made[TCX_VAR_TEXT_GZ], 0);
	for (int i = 3; i < 7; i++)
		tcx_expo_unref(e[i]);
	assert_int_equal(freed[TCX_VAR_OM_GZ], 4); /* everything made is freed */
	tcx_snapshot_unref(s);
}

static void test_expo_refcount(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e = tcx_expo_new(s, free, NULL);

	tcx_snapshot_unref(s); /* the exposition holds its own reference */
	e->resp[TCX_VAR_TEXT] = malloc(16);
	assert_ptr_equal(tcx_expo_ref(e), e);
	tcx_expo_unref(e);
	assert_int_equal(e->snap->n_actions, 1);
	tcx_expo_unref(e); /* frees the response through resp_free: valgrind checks */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_negotiation),   cmocka_unit_test(test_variants_and_gzip),
	        cmocka_unit_test(test_selfstats),     cmocka_unit_test(test_process_stats),
	        cmocka_unit_test(test_gzip_large),    cmocka_unit_test(test_variant_lifetime),
	        cmocka_unit_test(test_expo_refcount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
