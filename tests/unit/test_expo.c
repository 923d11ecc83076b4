/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Content negotiation, variants, gzip and the daemon's own metrics. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <zlib.h>

#include "agent/http/expo.h"
#include "agent/render/prom.h"
#include "collectors/plans.h"
#include "config/xstats.h"
#include "config/config.h"

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
	st.http_responses_cut_total[TCX_CUT_RENDER] = 6;
	st.http_responses_cut_total[TCX_CUT_MEMORY] = 5;
	st.http_requests_refused_total[TCX_REFUSE_RENDER] = 8;
	st.http_requests_refused_total[TCX_REFUSE_PASSWORD_RATE] = 3;
	st.http_requests_refused_total[TCX_REFUSE_BYTES] = 4;
	st.http_accept_errors_total[0] = 9; /* resource */
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
	assert_non_null(strstr(out, "# TYPE tc_exporter_http_responses_cut_total counter\n"
	                            "tc_exporter_http_responses_cut_total{reason=\"render\"} 6\n"
	                            "tc_exporter_http_responses_cut_total{reason=\"memory\"} 5\n"));
	assert_non_null(
	        strstr(out, "# TYPE tc_exporter_http_requests_refused_total counter\n"
	                    "tc_exporter_http_requests_refused_total{reason=\"render\"} 8\n"
	                    "tc_exporter_http_requests_refused_total{reason=\"password_queue\"} 0\n"
	                    "tc_exporter_http_requests_refused_total{reason=\"password_rate\"} 3\n"
	                    "tc_exporter_http_requests_refused_total{reason=\"bytes\"} 4\n"));
	assert_non_null(strstr(out, "# TYPE tc_exporter_http_accept_errors_total counter\n"
	                            "tc_exporter_http_accept_errors_total{cause=\"resource\"} 9\n"
	                            "tc_exporter_http_accept_errors_total{cause=\"other\"} 0\n"));
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

/* The whole body of a stream, read step bytes at a time (step 0: sizes
 * that vary, from 1 byte to 1 MiB); the read after its end reads nothing. */
static void read_stream(struct tcx_expo_stream *x, size_t step, struct tcx_rendered *body)
{
	size_t cap = 1 << 20, k = 0;
	ssize_t n;

	body->p = malloc(cap + 1);
	body->len = 0;
	assert_non_null(body->p);
	do {
		size_t want = step ? step : (size_t)1 << (k++ % 21);

		if (body->len + want > cap) {
			cap = 2 * (body->len + want);
			body->p = realloc(body->p, cap + 1);
			assert_non_null(body->p);
		}
		n = tcx_expo_stream_read(x, body->p + body->len, want);
		assert_true(n >= 0 && (size_t)n <= want);
		body->len += (size_t)n;
	} while (n > 0);
	assert_int_equal(tcx_expo_stream_read(x, body->p, 16), 0);
	body->p[body->len] = '\0';
}

/* A server stand-in: its "response" is the body, rendered whole or read
 * from a stream; it counts what it makes and what is freed. */
static unsigned made[TCX_VAR__MAX], streamed[TCX_VAR__MAX], freed[TCX_VAR__MAX];

struct fake_resp {
	enum tcx_variant v;
	struct tcx_rendered body;
};

static int fake_make(void *arg, struct tcx_expo *e, enum tcx_variant v, int stream, void **resp,
                     size_t *bytes)
{
	struct fake_resp *r = malloc(sizeof(*r));

	assert_ptr_equal(arg, made);
	assert_non_null(r);
	r->v = v;
	if (stream) {
		struct tcx_expo_stream *x = tcx_expo_stream_new(e, v, NULL);

		assert_non_null(x);
		read_stream(x, 0, &r->body);
		tcx_expo_stream_free(x);
		streamed[v]++;
	} else {
		assert_non_null(e->labels); /* made once, before the first variant */
		assert_int_equal(tcx_expo_render(e->snap, e->labels, NULL, v, &r->body), 0);
		*bytes = r->body.len;
		made[v]++;
	}
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
 * makes it (decompressed for gzip); it stays the exposition's when v is
 * rendered ahead, else it was streamed for this request alone. */
static void request(struct tcx_expo *e, enum tcx_variant v)
{
	struct tcx_rendered want;
	struct fake_resp *r = NULL;
	enum tcx_variant plain = v == TCX_VAR_OM_GZ     ? TCX_VAR_OM
	                         : v == TCX_VAR_TEXT_GZ ? TCX_VAR_TEXT
	                                                : v;
	const struct tcx_rowlabels *labels = e->labels;
	int shared = e->resp[v] != NULL; /* a body rendered ahead answers */
	unsigned builds = label_builds;
	int own = -1;

	tcx_expo_ask(e, v);
	assert_int_equal(tcx_expo_response(e, v, 0, fake_make, made, (void **)&r, &own), 0);
	/* the label text is built by the first response that renders, and
	 * kept for the others (after the prerendering freed it, once again) */
	assert_int_equal(label_builds - builds, labels || shared ? 0 : 1);
	if (labels)
		assert_ptr_equal(e->labels, labels);
	if (!shared)
		assert_non_null(e->labels);
	assert_non_null(r);
	assert_int_equal(r->v, v);
	assert_int_equal(own, !(e->ahead & (1u << v)));
	if (own)
		assert_ptr_not_equal(e->resp[v], r);
	else
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
	if (own)
		fake_free(r);
}

/* The prerendering frees the label text it made, unless a request of
 * another variant that holds the exposition reads it meanwhile. */
static void test_prerender_frees_labels(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e = tcx_expo_new(s, fake_free, NULL);
	struct tcx_expo_stream *x;
	struct tcx_rendered body;
	char piece[16];
	size_t bytes = tcx_expo_bytes(e);

	(void)state;
	memset(made, 0, sizeof(made));
	e->ahead = 1u << TCX_VAR_OM_GZ;
	x = tcx_expo_stream_new(e, TCX_VAR_TEXT, NULL);
	assert_non_null(x);
	assert_true(tcx_expo_stream_read(x, piece, sizeof(piece)) > 0);
	assert_non_null(e->labels);
	assert_int_equal(tcx_expo_prerender(e, fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 1);
	assert_non_null(e->labels); /* the stream reads them */
	read_stream(x, 0, &body);
	free(body.p);
	tcx_expo_stream_free(x);
	assert_int_equal(tcx_expo_prerender(e, fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 1); /* made once */
	assert_null(e->labels);
	assert_true(tcx_expo_bytes(e) ==
	            bytes + ((struct fake_resp *)e->resp[TCX_VAR_OM_GZ])->body.len);
	tcx_expo_unref(e);
	tcx_snapshot_unref(s);
}

static void test_variant_lifetime(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e[7];
	size_t bytes;

	memset(made, 0, sizeof(made));
	memset(streamed, 0, sizeof(streamed));
	memset(freed, 0, sizeof(freed));
	/* Prometheus scrapes every interval: its variant is streamed to each
	 * request until it has been asked for during two intervals, then
	 * rendered ahead of it. */
	e[0] = tcx_expo_new(s, fake_free, NULL);
	assert_int_equal(tcx_expo_prerender(e[0], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 0);
	request(e[0], TCX_VAR_OM_GZ);
	assert_int_equal(streamed[TCX_VAR_OM_GZ], 1);
	e[1] = tcx_expo_new(s, fake_free, e[0]);
	assert_int_equal(tcx_expo_prerender(e[1], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 0);
	request(e[1], TCX_VAR_OM_GZ);
	assert_int_equal(streamed[TCX_VAR_OM_GZ], 2);
	assert_null(e[1]->resp[TCX_VAR_OM_GZ]);
	e[2] = tcx_expo_new(s, fake_free, e[1]);
	/* In order; the memory each holds: its snapshot's, then the label
	 * text's and the bodies rendered ahead as they are made (a streamed
	 * body is its response's, not the exposition's). */
	assert_true(e[0]->seq == 1 && e[1]->seq == 2 && e[2]->seq == 3);
	bytes = tcx_expo_bytes(e[2]);
	assert_true(bytes > tcx_snapshot_bytes(s) && bytes < tcx_snapshot_bytes(s) + 1024);
	assert_true(tcx_snapshot_bytes(s) >= s->cap_actions * sizeof(*s->actions));
	assert_true(tcx_expo_bytes(e[1]) == bytes + tcx_rowlabels_bytes(e[1]->labels));
	assert_int_equal(tcx_expo_prerender(e[2], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_OM_GZ], 1); /* rendered ahead */
	assert_non_null(e[2]->resp[TCX_VAR_OM_GZ]);
	/* the label text made for it is gone once it is made: the body is
	 * what is served */
	assert_null(e[2]->labels);
	assert_true(tcx_expo_bytes(e[2]) ==
	            bytes + ((struct fake_resp *)e[2]->resp[TCX_VAR_OM_GZ])->body.len);
	/* The size of each body rendered ahead, and the largest: what bounds
	 * the bytes one address is sent of them. None for a streamed one. */
	{
		size_t largest = 1, len;

		len = tcx_expo_body_size(e[1], TCX_VAR_OM_GZ, &largest);
		assert_true(len == 0 && largest == 0);
		len = tcx_expo_body_size(e[2], TCX_VAR_OM_GZ, &largest);
		assert_int_equal(len, ((struct fake_resp *)e[2]->resp[TCX_VAR_OM_GZ])->body.len);
		assert_true(len > 0 && largest == len);
		assert_int_equal(tcx_expo_body_size(e[2], TCX_VAR_TEXT, &largest), 0);
		assert_int_equal(largest, len);
	}
	/* Once per snapshot: every request of it is answered from those bytes. */
	request(e[2], TCX_VAR_OM_GZ);
	request(e[2], TCX_VAR_OM_GZ);
	assert_int_equal(made[TCX_VAR_OM_GZ], 1);
	assert_int_equal(streamed[TCX_VAR_OM_GZ], 2);
	/* A plain-text scrape: answered, streamed to each request, kept by
	 * none. */
	request(e[2], TCX_VAR_TEXT);
	request(e[2], TCX_VAR_TEXT);
	assert_int_equal(streamed[TCX_VAR_TEXT], 2);
	assert_int_equal(made[TCX_VAR_TEXT], 0);
	assert_null(e[2]->resp[TCX_VAR_TEXT]);
	/* It was asked for during one interval only: the next snapshot does
	 * not render it, Prometheus's variant it does. */
	e[3] = tcx_expo_new(s, fake_free, e[2]);
	assert_int_equal(tcx_expo_prerender(e[3], fake_make, made), 0);
	assert_int_equal(made[TCX_VAR_TEXT], 0);
	assert_null(e[3]->resp[TCX_VAR_TEXT]);
	assert_int_equal(made[TCX_VAR_OM_GZ], 2);
	/* The snapshots replaced go with their bodies. */
	assert_int_equal(freed[TCX_VAR_TEXT], 2); /* with their requests */
	for (int i = 0; i < 3; i++)
		tcx_expo_unref(e[i]);
	assert_int_equal(freed[TCX_VAR_TEXT], 2);
	assert_int_equal(freed[TCX_VAR_OM_GZ], 3);
	/* Nobody asks any more (no request of e[3]): a variant rendered
	 * ahead stays so while it was asked of one of the two expositions
	 * before (e[4]: of e[2]), then from e[5] on nothing is rendered or
	 * kept. */
	e[4] = tcx_expo_new(s, fake_free, e[3]);
	assert_int_equal(tcx_expo_prerender(e[4], fake_make, made), 0);
	assert_non_null(e[4]->resp[TCX_VAR_OM_GZ]);
	e[5] = tcx_expo_new(s, fake_free, e[4]);
	assert_int_equal(tcx_expo_prerender(e[5], fake_make, made), 0);
	e[6] = tcx_expo_new(s, fake_free, e[5]);
	assert_int_equal(tcx_expo_prerender(e[6], fake_make, made), 0);
	for (int i = 5; i < 7; i++)
		for (unsigned v = 0; v < TCX_VAR__MAX; v++)
			assert_null(e[i]->resp[v]);
	assert_int_equal(made[TCX_VAR_OM_GZ], 3);
	assert_int_equal(made[TCX_VAR_TEXT], 0);
	assert_int_equal(made[TCX_VAR_OM] + made[TCX_VAR_TEXT_GZ], 0);
	for (int i = 3; i < 7; i++)
		tcx_expo_unref(e[i]);
	assert_int_equal(freed[TCX_VAR_OM_GZ], 5); /* everything made is freed */
	tcx_snapshot_unref(s);
}

/* A reload makes a collection at once, while the HTTP server restarts:
 * nobody asks of that exposition. Prometheus's variant, rendered ahead,
 * stays so, and its next scrapes are not streamed (nor, past the render
 * budget, refused). */
static void test_ahead_through_reload(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e[5];

	memset(made, 0, sizeof(made));
	memset(streamed, 0, sizeof(streamed));
	memset(freed, 0, sizeof(freed));
	for (int i = 0; i < 5; i++) {
		e[i] = tcx_expo_new(s, fake_free, i ? e[i - 1] : NULL);
		assert_int_equal(tcx_expo_prerender(e[i], fake_make, made), 0);
		if (i != 2) /* e[2]: the reload's collection, not scraped */
			request(e[i], TCX_VAR_OM_GZ);
	}
	assert_null(e[1]->resp[TCX_VAR_OM_GZ]);
	for (int i = 2; i < 5; i++)
		assert_non_null(e[i]->resp[TCX_VAR_OM_GZ]);
	assert_int_equal(streamed[TCX_VAR_OM_GZ], 2); /* e[0] and e[1] only */
	for (int i = 0; i < 5; i++)
		tcx_expo_unref(e[i]);
	assert_int_equal(freed[TCX_VAR_OM_GZ], 3 + 2);
	tcx_snapshot_unref(s);
	(void)state;
}

/* ---- streamed bodies (struct tcx_expo_stream) ---- */

/* Every part of an exposition, several pieces long each: n action rows and
 * their filters' flags; n_tg targets; n_dev devices, each with a cake qdisc
 * (statistics per tin; plans with its modes as labels) and n_cl htb classes
 * (statistics and plans of their own). */
static struct tcx_snapshot *rich_snapshot(uint32_t n, uint32_t n_tg, uint32_t n_dev, uint32_t n_cl)
{
	struct tcx_snapshot *s = small_snapshot();
	const struct tcx_xstats_table *cake = tcx_xstats_lookup("cake", 0);
	const struct tcx_xstats_table *htb = tcx_xstats_lookup("htb", 1);
	const struct tcx_plans_table *plans = tcx_plans_lookup("htb", 1);
	const struct tcx_plans_table *cake_plans = tcx_plans_lookup("cake", 0);
	size_t nx = (size_t)n_dev * (cake->n_fields + 4 * (1 + cake->n_tin_fields) + cake_plans->n +
	                             (size_t)n_cl * (htb->n_fields + plans->n));

	assert_non_null(cake);
	assert_non_null(htb);
	add_rows(s, n);
	for (uint32_t i = 0; i < n_tg; i++) {
		struct tcx_target *t = tcx_snapshot_add_target(s);

		snprintf(t->dev, sizeof(t->dev), "d%u", i);
		snprintf(t->parent_name, sizeof(t->parent_name), "egress");
		t->ok = i % 3 != 0;
		t->n_filters = i;
	}
	s->qdevs = calloc(n_dev, sizeof(*s->qdevs));
	s->qdiscs = calloc(n_dev, sizeof(*s->qdiscs));
	s->classes = calloc((size_t)n_dev * n_cl, sizeof(*s->classes));
	s->xvals = calloc(nx, sizeof(*s->xvals));
	assert_true(s->qdevs && s->qdiscs && s->classes && s->xvals);
	for (uint32_t d = 0; d < n_dev; d++) {
		struct tcx_qdev *qd = &s->qdevs[s->n_qdevs++];
		struct tcx_qrow *q = &s->qdiscs[s->n_qdiscs++];

		snprintf(qd->dev, sizeof(qd->dev), "q%u", d);
		qd->ok = 1;
		qd->first_qdisc = d;
		qd->n_qdiscs = 1;
		qd->first_class = (uint32_t)s->n_classes;
		qd->n_classes = n_cl;
		q->qdev = d;
		q->handle = 0x10000;
		q->parent = 0xFFFFFFFF;
		q->kind = (uint8_t)tcx_snapshot_kind(s, "cake");
		q->c[TCX_QSTAT_BYTES] = d;
		q->xt_id = (uint8_t)(tcx_xstats_id(cake) + 1);
		q->xs = (uint32_t)s->n_xvals;
		q->xs_present = (1u << cake->n_fields) - 1;
		q->n_tins = 4;
		for (unsigned f = 0; f < cake->n_fields; f++)
			s->xvals[s->n_xvals++] = d + f;
		for (unsigned tin = 0; tin < 4; tin++) {
			s->xvals[s->n_xvals++] = (1u << cake->n_tin_fields) - 1; /* present */
			for (unsigned f = 0; f < cake->n_tin_fields; f++)
				s->xvals[s->n_xvals++] = tin * 1000 + f;
		}
		/* its plans: every row, the modes' values the last names */
		q->pt_id = (uint8_t)(tcx_plans_id(cake_plans) + 1);
		q->pl = (uint32_t)s->n_xvals;
		q->pl_present = (1u << cake_plans->n) - 1;
		for (unsigned f = 0; f < cake_plans->n; f++)
			s->xvals[s->n_xvals++] = cake_plans->rows[f].how == TCX_PLAN_ENUM
			                                 ? cake_plans->rows[f].n_names - 1u
			                                 : 125000u * (d + 1) + f;
		for (uint32_t c = 0; c < n_cl; c++) {
			struct tcx_qrow *k = &s->classes[s->n_classes++];

			k->qdev = d;
			k->handle = 0x10000 + c + 1;
			k->parent = 0x10000;
			k->kind = (uint8_t)tcx_snapshot_kind(s, "htb");
			k->c[TCX_QSTAT_BYTES] = c;
			k->xt_id = (uint8_t)(tcx_xstats_id(htb) + 1);
			k->xs = (uint32_t)s->n_xvals;
			k->xs_present = (1u << htb->n_fields) - 1;
			for (unsigned f = 0; f < htb->n_fields; f++)
				s->xvals[s->n_xvals++] = c * 7 + f;
			/* its plans, one row in 3 without its last */
			k->pt_id = (uint8_t)(tcx_plans_id(plans) + 1);
			k->pl = (uint32_t)s->n_xvals;
			k->pl_present = (1u << plans->n) - 1 - (c % 3 ? 0 : 1u << (plans->n - 1));
			for (unsigned f = 0; f < plans->n; f++)
				s->xvals[s->n_xvals++] = c * 11 + f;
		}
	}
	assert_int_equal(s->n_xvals, nx);
	return s;
}

static void config_err(void *arg, const char *msg)
{
	fail_msg("config error: %s", msg);
}

static int has(const struct tcx_buf *b, const char *what)
{
	return memmem(b->p, b->len, what, strlen(what)) != NULL;
}

/* The pieces of s, rendered with a limit each: they make the body rendered
 * in one go, byte for byte, each at most a little more than the limit. */
static void assert_pieces(const struct tcx_snapshot *s, int om, const struct tcx_selfstats *st,
                          const struct tcx_buf *whole, size_t limit)
{
	struct tcx_prom_render *r = tcx_prom_render_new(s, om, st, NULL);
	struct tcx_buf piece;
	size_t off = 0, pieces = 0;
	int more;

	assert_non_null(r);
	tcx_buf_init_mem(&piece);
	do {
		piece.len = 0;
		more = tcx_prom_render_next(r, &piece, limit);
		assert_true(more >= 0);
		assert_true(piece.len > 0);
		/* the limit, plus at most the samples of one row (a cake
		 * qdisc's per-tin families: well under 8 KiB) or the sections
		 * that do not pause (the snapshot's and the daemon's own
		 * families: under 16 KiB) */
		assert_true(piece.len < limit + (more ? 8192 : 16384));
		assert_true(off + piece.len <= whole->len);
		assert_memory_equal(piece.p, whole->p + off, piece.len);
		off += piece.len;
		pieces++;
	} while (more);
	assert_int_equal(off, whole->len);
	assert_true(pieces > whole->len / (limit + 8192));
	tcx_prom_render_free(r);
	tcx_buf_free(&piece);
}

/* The renderer paused and resumed, anywhere: every section is long enough
 * to pause in, some rows are not shown, and max_series stops the action
 * rows, or the filters' flags, part of the way. */
static void test_render_in_pieces(void **state)
{
	struct tcx_selfstats st = {.collections_total = 3};
	static const size_t limits[] = {1, 100, 4096, TCX_EXPO_PIECE};
	/* 4286 rows shown of 4 families (hw is off), 5001 filters */
	static const char *const confs[] = {"interval: 5s\n", "max_series: 10000\n",
	                                    "max_series: 19644\n"};

	for (size_t c = 0; c < sizeof(confs) / sizeof(confs[0]); c++) {
		struct tcx_snapshot *s = rich_snapshot(5000, 2000, 40, 100);

		s->cfg = tcx_config_load_buffer("c.yaml", confs[c], strlen(confs[c]), config_err,
		                                NULL);
		assert_non_null(s->cfg);
		for (size_t i = 0; i < s->n_actions; i += 7)
			s->actions[i].drop = 1;
		for (int om = 0; om < 2; om++) {
			struct tcx_buf whole;

			tcx_buf_init_mem(&whole);
			assert_int_equal(tcx_render_prometheus_ex(s, om, &st, NULL, &whole), 0);
			assert_true(whole.len > 4 * TCX_EXPO_PIECE);
			assert_true(has(&whole, "tc_class_htb_"));
			assert_true(has(&whole, "\ntc_class_htb_ceil_bytes_per_second{"));
			assert_true(has(&whole, "tin=\"3\""));
			assert_true(has(&whole, "{device=\"q39\"} 100\n"));
			assert_true(has(&whole, "{device=\"d1999\""));
			if (c == 1)
				assert_true(has(&whole, "\ntc_exporter_series_dropped 12145\n"));
			if (c == 2)
				assert_true(has(&whole, "\ntc_exporter_series_dropped 2501\n"));
			for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++)
				assert_pieces(s, om, &st, &whole, limits[k]);
			tcx_buf_free(&whole);
		}
		tcx_snapshot_unref(s);
	}
}

/* A streamed body is the body rendered whole, byte for byte, in every
 * variant (gzip too: compressed in the same pieces), however it is read. */
static void test_stream_same_bytes(void **state)
{
	struct tcx_snapshot *s = rich_snapshot(20000, 300, 20, 50);
	struct tcx_selfstats st = {.collections_total = 9, .snapshot_age_s = 0.25};
	struct tcx_expo *e = tcx_expo_new(s, free, NULL);
	static const size_t steps[] = {0, 1000, 32768};

	st.http_responses_cut_total[TCX_CUT_MEMORY] = 2;
	for (unsigned v = 0; v < TCX_VAR__MAX; v++) {
		struct tcx_rendered whole;

		assert_int_equal(tcx_expo_render(s, NULL, &st, v, &whole), 0);
		for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
			struct tcx_expo_stream *x = tcx_expo_stream_new(e, v, &st);
			struct tcx_rendered body;

			assert_non_null(x);
			read_stream(x, steps[k], &body);
			tcx_expo_stream_free(x);
			assert_int_equal(body.len, whole.len);
			assert_memory_equal(body.p, whole.p, whole.len);
			free(body.p);
		}
		if (tcx_variant_is_gzip(v)) {
			struct tcx_rendered plain;
			size_t ulen;
			char *unz = gunzip(whole.p, whole.len, &ulen);

			assert_int_equal(tcx_expo_render(s, NULL, &st, v - 1, &plain), 0);
			assert_int_equal(ulen, plain.len);
			assert_memory_equal(unz, plain.p, plain.len);
			assert_non_null(strstr(
			        plain.p,
			        "tc_exporter_http_responses_cut_total{reason=\"memory\"} 2\n"));
			free(unz);
			free(plain.p);
		}
		free(whole.p);
	}
	tcx_expo_unref(e);
	tcx_snapshot_unref(s);
}

/* A stream holds its exposition until it is freed, and renders nothing
 * until it is read: a HEAD request's response makes no label text. */
static void test_stream_holds_expo(void **state)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_expo *e = tcx_expo_new(s, free, NULL);
	struct tcx_expo_stream *x = tcx_expo_stream_new(e, TCX_VAR_TEXT_GZ, NULL);
	struct tcx_expo_stream *y = tcx_expo_stream_new(e, TCX_VAR_OM, NULL);
	unsigned builds = label_builds;
	struct tcx_rendered body;

	assert_non_null(x);
	assert_non_null(y);
	tcx_snapshot_unref(s);
	tcx_expo_unref(e); /* the streams' references keep it */
	assert_int_equal(atomic_load(&e->refcnt), 2);
	tcx_expo_stream_free(y); /* never read: nothing rendered */
	assert_int_equal(label_builds, builds);
	assert_null(e->labels);
	read_stream(x, 4096, &body);
	assert_int_equal(label_builds, builds + 1);
	assert_non_null(e->labels);
	free(body.p);
	tcx_expo_stream_free(x); /* the last reference: valgrind and ASan check */
}

/* ---- out of memory while streaming ---- */

/* Allocation number fail_at (counted from 0 once armed) fails: every
 * malloc(), calloc() and realloc() of the code under test (the test is
 * linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc). */
static long alloc_count, fail_at = -1;
void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

static int alloc_fails(void)
{
	return fail_at >= 0 && alloc_count++ == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return alloc_fails() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : __real_realloc(p, n);
}

/* Each allocation a streamed body makes, failed in turn: the body read is
 * then the whole body, byte for byte (a failure it could do without), or
 * the read fails and stays failed; nothing leaks (ASan, valgrind). */
static void test_stream_out_of_memory(void **state)
{
	struct tcx_snapshot *s = rich_snapshot(3000, 10, 2, 10);

	for (unsigned v = 0; v < TCX_VAR__MAX; v++) {
		struct tcx_rendered whole;
		long k, failed = 0;

		assert_int_equal(tcx_expo_render(s, NULL, NULL, v, &whole), 0);
		for (k = 0;; k++) {
			struct tcx_expo *e = tcx_expo_new(s, free, NULL);
			struct tcx_expo_stream *x = tcx_expo_stream_new(e, v, NULL);
			char *body = malloc(whole.len + 1);
			size_t len = 0;
			ssize_t n;

			assert_non_null(x);
			assert_non_null(body);
			alloc_count = 0;
			fail_at = k;
			while ((n = tcx_expo_stream_read(x, body + len, 4096)) > 0) {
				assert_true(len + (size_t)n <= whole.len);
				len += (size_t)n;
			}
			fail_at = -1;
			if (n < 0) {
				assert_int_equal(n, -ENOMEM);
				assert_int_equal(tcx_expo_stream_read(x, body, 4096), -ENOMEM);
				failed++;
			} else {
				assert_int_equal(len, whole.len);
				assert_memory_equal(body, whole.p, len);
			}
			tcx_expo_stream_free(x);
			tcx_expo_unref(e);
			free(body);
			if (alloc_count <= k) /* no allocation left to fail */
				break;
		}
		assert_true(failed > 0);
		free(whole.p);
	}
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

/* ---- the label names of the exposition ---- */

/* Every family of the exposition: small_snapshot()'s action row, a target of
 * a shared block in a namespace, and a device in a namespace with one qdisc
 * or class of each per-kind statistics table, every field present (cake's
 * per tin too). */
static struct tcx_snapshot *every_family_snapshot(void)
{
	struct tcx_snapshot *s = small_snapshot();
	struct tcx_target *t = tcx_snapshot_add_target(s);
	size_t n = tcx_xstats_n_tables, nx = 0;
	struct tcx_qdev *qd;

	t->block = 5;
	snprintf(t->netns, sizeof(t->netns), "blue");
	for (size_t i = 0; i < n; i++)
		nx += tcx_xstats_tables[i]->n_fields +
		      (size_t)TCX_XSTATS_TINS * (1 + tcx_xstats_tables[i]->n_tin_fields);
	for (size_t i = 0; i < tcx_plans_n_tables; i++)
		nx += tcx_plans_tables[i]->n;
	s->qdevs = calloc(1, sizeof(*s->qdevs));
	s->qdiscs = calloc(n + tcx_plans_n_tables, sizeof(*s->qdiscs));
	s->classes = calloc(n + tcx_plans_n_tables, sizeof(*s->classes));
	s->xvals = calloc(nx, sizeof(*s->xvals));
	assert_true(s->qdevs && s->qdiscs && s->classes && s->xvals);
	qd = &s->qdevs[s->n_qdevs++];
	snprintf(qd->dev, sizeof(qd->dev), "q0");
	snprintf(qd->netns, sizeof(qd->netns), "blue");
	qd->ok = 1;
	for (size_t i = 0; i < n; i++) {
		const struct tcx_xstats_table *xt = tcx_xstats_tables[i];
		struct tcx_qrow *q =
		        xt->is_class ? &s->classes[s->n_classes++] : &s->qdiscs[s->n_qdiscs++];

		q->handle = 0x10000 + (xt->is_class ? (uint32_t)i + 1 : 0);
		q->parent = xt->is_class ? 0x10000 : 0xFFFFFFFF;
		q->labels = TCX_LABELSET_NONE;
		q->kind = (uint8_t)tcx_snapshot_kind(s, xt->kind);
		q->xt_id = (uint8_t)(tcx_xstats_id(xt) + 1);
		q->xs = (uint32_t)s->n_xvals;
		q->xs_present = (uint32_t)((UINT64_C(1) << xt->n_fields) - 1);
		s->n_xvals += xt->n_fields;
		if (xt->tins_attr) {
			q->n_tins = TCX_XSTATS_TINS;
			for (unsigned tin = 0; tin < TCX_XSTATS_TINS; tin++) {
				s->xvals[s->n_xvals] = (UINT64_C(1) << xt->n_tin_fields) - 1;
				s->n_xvals += 1 + xt->n_tin_fields;
			}
		}
	}
	/* and one of each plans table's kind, with every plan */
	for (size_t i = 0; i < tcx_plans_n_tables; i++) {
		const struct tcx_plans_table *pt = tcx_plans_tables[i];
		struct tcx_qrow *q =
		        pt->is_class ? &s->classes[s->n_classes++] : &s->qdiscs[s->n_qdiscs++];

		q->handle = 0x20000 + (pt->is_class ? (uint32_t)i + 1 : 0) + ((uint32_t)i << 16);
		q->parent = pt->is_class ? q->handle & 0xFFFF0000 : 0xFFFFFFFF;
		q->labels = TCX_LABELSET_NONE;
		q->kind = (uint8_t)tcx_snapshot_kind(s, pt->kind);
		q->pt_id = (uint8_t)(tcx_plans_id(pt) + 1);
		q->pl = (uint32_t)s->n_xvals;
		q->pl_present = (1u << pt->n) - 1;
		for (unsigned f = 0; f < pt->n; f++)
			s->xvals[s->n_xvals++] = pt->rows[f].how == TCX_PLAN_ENUM ? 0 : 1000u + f;
	}
	qd->n_qdiscs = (uint32_t)s->n_qdiscs;
	qd->n_classes = (uint32_t)s->n_classes;
	return s;
}

/* The label names of the samples of a text exposition, each once, in
 * names[] (at most max). Returns how many. */
static size_t label_names(const char *text, char names[][64], size_t max)
{
	size_t n = 0;

	for (const char *p = text; *p; p = strchr(p, '\n') + 1) {
		const char *q = p;

		if (*p == '#' || !(q = strpbrk(p, "{\n")) || *q != '{')
			continue;
		while (*q != '}') {
			const char *name = q + 1, *eq = strchr(name, '=');
			size_t k, len = (size_t)(eq - name);

			assert_non_null(eq);
			assert_true(len > 0 && len < 64 && eq[1] == '"');
			for (q = eq + 2; *q != '"'; q++)
				if (*q == '\\')
					q++;
			q++;
			assert_true(*q == ',' || *q == '}');
			for (k = 0; k < n; k++)
				if (strlen(names[k]) == len && !memcmp(names[k], name, len))
					break;
			if (k == n) {
				assert_true(n < max);
				memcpy(names[n], name, len);
				names[n++][len] = '\0';
			}
		}
	}
	return n;
}

/* A label name the exposition writes is one a configuration cannot declare
 * (config/labels.c), and the reserved names are exactly those written, and
 * le and quantile. */
static void test_label_names_reserved(void **state)
{
	static const char conf[] = "families: {hw: on, flows: on}\n";
	struct tcx_snapshot *s = every_family_snapshot();
	struct tcx_selfstats st = {.collections_total = 1};
	char names[64][64];
	struct tcx_rendered r;
	size_t n, i, k;

	s->cfg = tcx_config_load_buffer("c.yaml", conf, strlen(conf), config_err, NULL);
	assert_non_null(s->cfg);
	assert_int_equal(tcx_expo_render(s, NULL, &st, TCX_VAR_TEXT, &r), 0);
	n = label_names(r.p, names, 64);
	for (i = 0; i < n; i++) {
		if (!tcx_label_name_reserved(names[i]))
			fail_msg("label '%s' of the exposition is not reserved", names[i]);
	}
	for (i = 0; i < TCX_BL__MAX + tcx_n_reserved_labels; i++) {
		const char *name = i < TCX_BL__MAX ? tcx_builtin_labels[i]
		                                   : tcx_reserved_labels[i - TCX_BL__MAX];

		for (k = 0; k < n && strcmp(names[k], name); k++)
			;
		if (k == n && strcmp(name, "le") && strcmp(name, "quantile"))
			fail_msg("reserved label '%s' is not in the exposition", name);
	}
	free(r.p);
	tcx_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_negotiation),
	        cmocka_unit_test(test_variants_and_gzip),
	        cmocka_unit_test(test_selfstats),
	        cmocka_unit_test(test_process_stats),
	        cmocka_unit_test(test_gzip_large),
	        cmocka_unit_test(test_variant_lifetime),
	        cmocka_unit_test(test_prerender_frees_labels),
	        cmocka_unit_test(test_ahead_through_reload),
	        cmocka_unit_test(test_expo_refcount),
	        cmocka_unit_test(test_label_names_reserved),
	        cmocka_unit_test(test_render_in_pieces),
	        cmocka_unit_test(test_stream_same_bytes),
	        cmocka_unit_test(test_stream_holds_expo),
	        cmocka_unit_test(test_stream_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
