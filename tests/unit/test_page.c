/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The landing page (agent/render/page.c) of hand-built snapshots: the tree of
 * each device in order and depth, every row with its figures, HTML escaping,
 * folding and the row limit, a loop of parents; and the rates between two
 * collections (collectors/qrates.c) that it shows. */
#include <linux/pkt_sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/render/page.h"
#include "collectors/plans.h"
#include "collectors/qrates.h"

/* Room for this many rows of each kind and their plans. */
#define CAP 512

static struct tcx_snapshot *new_snapshot(void)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);

	assert_non_null(s);
	s->qdevs = calloc(8, sizeof(*s->qdevs));
	s->qdiscs = calloc(CAP, sizeof(*s->qdiscs));
	s->classes = calloc(CAP, sizeof(*s->classes));
	s->xvals = calloc((size_t)CAP * TCX_PLANS_MAX, sizeof(*s->xvals));
	assert_true(s->qdevs && s->qdiscs && s->classes && s->xvals);
	s->cap_qdevs = 8;
	s->cap_qdiscs = s->cap_classes = CAP;
	s->cap_xvals = (size_t)CAP * TCX_PLANS_MAX;
	s->taken.tv_sec = 1800000000; /* 2027-01-15 08:00:00 UTC */
	s->taken.tv_nsec = 0;
	s->rates_interval_s = 2;
	return s;
}

static struct tcx_qdev *add_dev(struct tcx_snapshot *s, const char *netns, const char *dev)
{
	struct tcx_qdev *d = &s->qdevs[s->n_qdevs++];

	snprintf(d->netns, sizeof(d->netns), "%s", netns);
	snprintf(d->dev, sizeof(d->dev), "%s", dev);
	d->ok = 1;
	d->first_qdisc = (uint32_t)s->n_qdiscs;
	d->first_class = (uint32_t)s->n_classes;
	return d;
}

/* A row of the last device; rate and ceil in bytes per second (0: none),
 * bytes_s its bytes per second. */
static struct tcx_qrow *add_row(struct tcx_snapshot *s, int is_class, const char *kind,
                                uint32_t handle, uint32_t parent, float bytes_s, uint64_t rate,
                                uint64_t ceil)
{
	struct tcx_qdev *d = &s->qdevs[s->n_qdevs - 1];
	struct tcx_qrow *r = is_class ? &s->classes[s->n_classes++] : &s->qdiscs[s->n_qdiscs++];

	assert_true(s->n_classes <= CAP && s->n_qdiscs <= CAP);
	memset(r, 0, sizeof(*r));
	r->qdev = (uint32_t)(s->n_qdevs - 1);
	r->handle = handle;
	r->parent = parent;
	r->kind = (uint8_t)tcx_snapshot_kind(s, kind);
	r->stats_present = (1u << TCX_QSTAT__MAX) - 1;
	r->c[TCX_QSTAT_BACKLOG_BYTES] = 3000;
	r->c[TCX_QSTAT_BACKLOG_PACKETS] = 2;
	r->rates[TCX_QRATE_BYTES] = bytes_s;
	r->rates[TCX_QRATE_PACKETS] = bytes_s / 1000;
	r->rates[TCX_QRATE_DROPS] = 0.5f;
	r->rates_present = (1u << TCX_QRATE__MAX) - 1;
	if (rate || ceil) {
		const struct tcx_plans_table *pt = tcx_plans_lookup("htb", 1);

		assert_non_null(pt);
		r->pt_id = (uint8_t)(tcx_plans_id(pt) + 1);
		r->pl = (uint32_t)s->n_xvals;
		for (unsigned i = 0; i < pt->n; i++) {
			uint64_t v = pt->rows[i].role == TCX_ROLE_RATE   ? rate
			             : pt->rows[i].role == TCX_ROLE_CEIL ? ceil
			                                                 : 0;

			s->xvals[s->n_xvals++] = v;
			if (v)
				r->pl_present |= 1u << i;
		}
	}
	if (is_class)
		d->n_classes++;
	else
		d->n_qdiscs++;
	return r;
}

static const struct tcx_page_info info = {
        .version = "9.9<b>",
        .now = 1800000003.5,
        .interval_s = 2.5,
        .reload_ok = 0,
        .loaded_ts = 1799999000,
};

static char *render(const struct tcx_snapshot *s, const struct tcx_page_info *pi)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_page_render(&b, s, pi), 0);
	tcx_buf_putc(&b, '\0');
	assert_int_equal(b.err, 0);
	return b.p;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The row of handle h in page p (from the first device shown on). */
static const char *row_of(const char *p, const char *h)
{
	char key[64];
	const char *r;

	snprintf(key, sizeof(key), "data-handle=\"%s\">", h);
	r = strstr(p, key);
	if (!r)
		fail_msg("no row of %s", h);
	return r;
}

/* Row h of page p holds what. */
static void row_has(const char *p, const char *h, const char *what)
{
	const char *r = row_of(p, h), *end = strstr(r, "</tr>");
	size_t n = strlen(what);

	assert_non_null(end);
	end += strlen("</tr>");
	for (const char *q = r; q + n <= end; q++)
		if (!memcmp(q, what, n))
			return;
	fail_msg("row %s has no %s: %.*s", h, what, (int)(end - r), r);
}

static void test_tree(void **state)
{
	struct tcx_snapshot *s = new_snapshot();
	struct tcx_target *t;
	char *p;
	const char *order[] = {"1:", "1:1", "1:10", "10:", "1:20", "ffff:"};
	const char *at = NULL;

	(void)state;
	add_dev(s, "", "eth0");
	/* out of order, as a dump may list them: classes before their parent */
	add_row(s, 0, "htb", 0x10000, TC_H_ROOT, 1e6f, 0, 0);
	add_row(s, 0, "pfifo", 0x100000, 0x10010, 125000, 0, 0);
	add_row(s, 0, "ingress", 0xffff0000, TC_H_INGRESS, 10, 0, 0);
	add_row(s, 1, "htb", 0x10010, 0x10001, 125000, 125000, 250000);
	add_row(s, 1, "htb", 0x10001, TC_H_ROOT, 1e6f, 1250000, 1250000);
	add_row(s, 1, "htb", 0x10020, 0x10001, 0, 62500, 1250000);
	t = tcx_snapshot_add_target(s);
	snprintf(t->dev, sizeof(t->dev), "eth0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	snprintf(t->error, sizeof(t->error), "<script>alert('x')</script> & more");
	p = render(s, &info);

	/* every row once, in the tree's order */
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		char key[64];
		const char *r;

		snprintf(key, sizeof(key), "data-handle=\"%s\">", order[i]);
		assert_int_equal(count(p, key), 1);
		r = strstr(p, key);
		assert_true(!at || r > at);
		at = r;
	}
	/* depth: the root qdisc, its class, their children, the leaf qdisc */
	row_has(p, "1:", "padding-left:0.3em\">qdisc 1:<");
	row_has(p, "1:1", "padding-left:1.5em\">class 1:1<");
	row_has(p, "1:10", "padding-left:2.7em\">class 1:10<");
	row_has(p, "10:", "padding-left:3.9em\">qdisc 10:<");
	row_has(p, "1:20", "padding-left:2.7em\">class 1:20<");
	row_has(p, "ffff:", "padding-left:0.3em\">qdisc ffff:<");
	row_has(p, "ffff:", "<td>ingress</td><td>ingress</td>");
	/* figures: bytes, packets and drops per second, backlog, rate, ceil, use */
	row_has(p, "1:10", "<td title=\"125000 B/s\">125 kB/s</td>");
	row_has(p, "1:10", "<td title=\"125 pkt/s\">125 pkt/s</td>");
	row_has(p, "1:10", "<td title=\"0.5 pkt/s\">0.5 pkt/s</td>");
	row_has(p, "1:10", "<td>3000 B, 2 pkt</td>");
	row_has(p, "1:10", "<td title=\"1000000 bit/s\">1 Mbit/s</td>");
	row_has(p, "1:10", "<td title=\"2000000 bit/s\">2 Mbit/s</td>");
	row_has(p, "1:10",
	        "<td title=\"50 %\"><span class=\"bar\" style=\"width:30px\"></span> "
	        "50 %</td>");
	row_has(p, "1:1",
	        "<td title=\"10000000 bit/s\">10 Mbit/s</td><td title=\"10000000 "
	        "bit/s\">10 Mbit/s</td><td title=\"80 %\">");
	row_has(p, "1:20", "<td title=\"500000 bit/s\">500 kbit/s</td>");
	row_has(p, "1:20", "<td title=\"0 %\">");
	row_has(p, "1:", "<td title=\"1000000 B/s\">1 MB/s</td>");
	/* a qdisc without a ceil: no rate, ceil or use */
	row_has(p, "10:", "<td></td><td></td><td></td></tr>");
	/* the page: not folded, the age, the reload, the refresh, escaped text */
	assert_non_null(strstr(p, "<details open data-dev=\"eth0\" data-netns=\"\">"));
	assert_non_null(strstr(p, "<meta http-equiv=\"refresh\" content=\"3\">"));
	assert_non_null(strstr(p, "Collected at 2027-01-15 08:00:00 UTC, 3.5 s ago"));
	assert_non_null(strstr(p, "over the 2.00 s between the last two collections"));
	assert_non_null(strstr(p, "the last reload was rejected"));
	assert_non_null(strstr(p, "loaded at 2027-01-15 07:43:20 UTC"));
	assert_non_null(strstr(p, "<h1>tcexporter 9.9&lt;b&gt;</h1>"));
	assert_non_null(strstr(p, "failed: &lt;script&gt;alert('x')&lt;/script&gt; &amp; "
	                          "more"));
	assert_null(strstr(p, "<script"));
	free(p);
	tcx_snapshot_unref(s);
}

static void test_escape(void **state)
{
	struct tcx_snapshot *s = new_snapshot();
	struct tcx_qdev *d;
	char *p;

	(void)state;
	d = add_dev(s, "ns&<\"'>", "x<&\"'>");
	d->ok = 0;
	snprintf(d->error, sizeof(d->error), "a <b> & \"c\"");
	add_row(s, 0, "k<i>nd", 0x10000, TC_H_ROOT, 1, 0, 0);
	p = render(s, &info);
	assert_non_null(strstr(p, "<summary><b>x&lt;&amp;&quot;'&gt;</b> (netns "
	                          "ns&amp;&lt;&quot;'&gt;)"));
	assert_non_null(strstr(p, "data-dev=\"x&lt;&amp;&quot;'&gt;\""));
	assert_non_null(strstr(p, "classes failed: a &lt;b&gt; &amp; &quot;c&quot;"));
	assert_non_null(strstr(p, "<td>k&lt;i&gt;nd</td>"));
	assert_null(strstr(p, "x<&"));
	assert_null(strstr(p, "k<i>"));
	assert_null(strstr(p, "<b> &"));
	free(p);
	tcx_snapshot_unref(s);
	/* the escaper alone, every special character */
	{
		struct tcx_buf b;

		tcx_buf_init_mem(&b);
		tcx_html_escape(&b, "a<b>c&d\"e'f");
		tcx_buf_putc(&b, '\0');
		assert_string_equal(b.p, "a&lt;b&gt;c&amp;d&quot;e'f");
		tcx_buf_free(&b);
	}
}

/* Beyond the threshold, a device's tree is folded; every class still is on
 * the page, up to the row limit, then the count of the others. */
static void test_fold(void **state)
{
	struct tcx_snapshot *s = new_snapshot();
	struct tcx_page_info pi = info;
	char *p, key[64];

	(void)state;
	add_dev(s, "", "small");
	add_row(s, 0, "htb", 0x10000, TC_H_ROOT, 0, 0, 0);
	for (uint32_t i = 1; i <= TCX_PAGE_FOLD_CLASSES; i++)
		add_row(s, 1, "htb", 0x10000 + i, TC_H_ROOT, 0, 1000, 2000);
	add_dev(s, "", "big");
	add_row(s, 0, "htb", 0x20000, TC_H_ROOT, 0, 0, 0);
	for (uint32_t i = 1; i <= TCX_PAGE_FOLD_CLASSES + 1; i++)
		add_row(s, 1, "htb", 0x20000 + i, TC_H_ROOT, (float)i, 1000 * i, 2000 * i);
	p = render(s, &info);
	assert_non_null(strstr(p, "<details open data-dev=\"small\""));
	assert_non_null(strstr(p, "<details data-dev=\"big\""));
	assert_non_null(strstr(p, "(folded: more than 100 classes)"));
	assert_int_equal(count(p, "(folded:"), 1);
	for (uint32_t i = 1; i <= TCX_PAGE_FOLD_CLASSES + 1; i++) {
		char want[96];

		snprintf(key, sizeof(key), "2:%x", i);
		snprintf(want, sizeof(want), "<td title=\"%u bit/s\">", 8000 * i);
		row_has(p, key, want);
		snprintf(want, sizeof(want), "<td title=\"%u bit/s\">", 16000 * i);
		row_has(p, key, want);
		if (i > TCX_PAGE_FOLD_CLASSES)
			continue;
		snprintf(key, sizeof(key), "1:%x", i);
		row_has(p, key, "<td title=\"8000 bit/s\">");
	}
	assert_int_equal(count(p, "<tr class=\"c\""), 2 * TCX_PAGE_FOLD_CLASSES + 1);
	assert_null(strstr(p, "more rows of this device"));
	free(p);
	/* a lower threshold and a row limit */
	pi.fold_classes = 10;
	pi.max_rows = 25;
	p = render(s, &pi);
	assert_non_null(strstr(p, "<details data-dev=\"small\""));
	assert_non_null(strstr(p, "(folded: more than 10 classes)"));
	assert_int_equal(count(p, "<tr class="), 50);
	assert_non_null(strstr(p, "<p>76 more rows of this device are not shown"));
	assert_non_null(strstr(p, "<p>77 more rows of this device are not shown"));
	free(p);
	tcx_snapshot_unref(s);
}

/* Parents in a loop (which the kernel does not make) and a handle listed
 * twice: every row still shown, once. */
static void test_loop(void **state)
{
	struct tcx_snapshot *s = new_snapshot();
	char *p;

	(void)state;
	add_dev(s, "", "odd");
	add_row(s, 1, "htb", 0x10001, 0x10002, 0, 0, 0);
	add_row(s, 1, "htb", 0x10002, 0x10001, 0, 0, 0);
	add_row(s, 1, "htb", 0x10003, 0x10003, 0, 0, 0);
	add_row(s, 0, "pfifo", 0x50000, 0x10003, 0, 0, 0);
	add_row(s, 0, "pfifo", 0x50000, 0x10003, 0, 0, 0);
	p = render(s, &info);
	assert_int_equal(count(p, "data-handle=\"1:1\">"), 1);
	assert_int_equal(count(p, "data-handle=\"1:2\">"), 1);
	assert_int_equal(count(p, "data-handle=\"1:3\">"), 1);
	assert_int_equal(count(p, "data-handle=\"5:\">"), 2);
	row_has(p, "1:1", "padding-left:0.3em");
	row_has(p, "1:2", "padding-left:1.5em");
	row_has(p, "5:", "padding-left:1.5em");
	free(p);
	/* a wall clock stepped back since the collection: no negative age */
	{
		struct tcx_page_info pi = info;

		pi.now = 1799999990;
		p = render(s, &pi);
		assert_non_null(strstr(p, "UTC, 0.0 s ago"));
		free(p);
	}
	tcx_snapshot_unref(s);
}

static void test_empty(void **state)
{
	struct tcx_page_info pi = info;
	char *p;

	(void)state;
	pi.reload_ok = 1;
	pi.interval_s = 0.5;
	p = render(NULL, &pi);
	assert_non_null(strstr(p, "No collection has completed yet."));
	assert_non_null(strstr(p, "content=\"1\""));
	assert_non_null(strstr(p, "the last load (start or reload) succeeded"));
	assert_null(strstr(p, "rejected"));
	free(p);
}

/* ---- collectors/qrates.c ---- */

static struct tcx_snapshot *counters(uint64_t bytes, uint64_t packets, uint64_t drops,
                                     uint32_t extra)
{
	struct tcx_snapshot *s = new_snapshot();
	struct tcx_qrow *r;

	add_dev(s, "", "eth0");
	r = add_row(s, 0, "htb", 0x10000, TC_H_ROOT, 0, 0, 0);
	r->c[TCX_QSTAT_BYTES] = bytes;
	r->c[TCX_QSTAT_PACKETS] = packets;
	r->c[TCX_QSTAT_DROPS] = drops;
	r = add_row(s, 1, "htb", 0x10000 + extra, TC_H_ROOT, 0, 0, 0);
	r->c[TCX_QSTAT_BYTES] = bytes * 2;
	r->stats_present = 1u << TCX_QSTAT_BYTES; /* its packets and drops absent */
	return s;
}

static void test_rates(void **state)
{
	struct tcx_qrates *q = tcx_qrates_new();
	struct tcx_snapshot *a = counters(1000, 10, 0xfffffff0u, 1);
	struct tcx_snapshot *b = counters(5000, 30, 0x10, 1);
	struct tcx_snapshot *c = counters(100, 40, 0x20, 2);

	(void)state;
	assert_non_null(q);
	/* the first collection: no rates */
	assert_int_equal(tcx_qrates_update(q, a, 100.0), 0);
	assert_int_equal(a->qdiscs[0].rates_present, 0);
	assert_int_equal(a->classes[0].rates_present, 0);
	assert_true(a->rates_interval_s == 0);
	/* 2 s later: bytes and packets per second; drops wrapped at 32 bits */
	assert_int_equal(tcx_qrates_update(q, b, 102.0), 0);
	assert_true(b->rates_interval_s == 2.0);
	assert_int_equal(b->qdiscs[0].rates_present, 7);
	assert_true(b->qdiscs[0].rates[TCX_QRATE_BYTES] == 2000.0f);
	assert_true(b->qdiscs[0].rates[TCX_QRATE_PACKETS] == 10.0f);
	assert_true(b->qdiscs[0].rates[TCX_QRATE_DROPS] == 16.0f);
	/* the class: bytes only, what it has */
	assert_int_equal(b->classes[0].rates_present, 1u << TCX_QRATE_BYTES);
	assert_true(b->classes[0].rates[TCX_QRATE_BYTES] == 4000.0f);
	/* then the qdisc's bytes went down (replaced): no rate at all; the
	 * class 1:2 is new: none either */
	assert_int_equal(tcx_qrates_update(q, c, 103.0), 0);
	assert_int_equal(c->qdiscs[0].rates_present, 0);
	assert_int_equal(c->classes[0].rates_present, 0);
	tcx_snapshot_unref(a);
	tcx_snapshot_unref(b);
	tcx_snapshot_unref(c);
	tcx_qrates_free(q);
}

/* Rows matched by identity, not position: the same rows in another order
 * keep their own rates, and a row whose identity came twice has the first
 * one's counters. */
static void test_rates_order(void **state)
{
	struct tcx_qrates *q = tcx_qrates_new();
	struct tcx_snapshot *a = new_snapshot(), *b = new_snapshot();
	struct tcx_qrow *r;

	(void)state;
	assert_non_null(q);
	add_dev(a, "", "eth0");
	add_dev(b, "", "eth0");
	for (uint32_t k = 1; k <= 3; k++) {
		r = add_row(a, 1, "htb", 0x10000 + k, 0x10000, 0, 0, 0);
		r->c[TCX_QSTAT_BYTES] = 1000 * k;
		r->stats_present = 1u << TCX_QSTAT_BYTES;
	}
	/* 1:3, 1:2, 1:1, then 1:2 again (its second row ignored) */
	for (uint32_t k = 3; k >= 1; k--) {
		r = add_row(b, 1, "htb", 0x10000 + k, 0x10000, 0, 0, 0);
		r->c[TCX_QSTAT_BYTES] = 1000 * k + 100 * k;
		r->stats_present = 1u << TCX_QSTAT_BYTES;
	}
	r = add_row(b, 1, "htb", 0x10002, 0x10000, 0, 0, 0);
	r->c[TCX_QSTAT_BYTES] = 5000;
	r->stats_present = 1u << TCX_QSTAT_BYTES;
	assert_int_equal(tcx_qrates_update(q, a, 10.0), 0);
	assert_int_equal(tcx_qrates_update(q, b, 11.0), 0);
	for (size_t i = 0; i < 3; i++) {
		uint32_t k = b->classes[i].handle & 0xffff;

		assert_int_equal(b->classes[i].rates_present, 1u << TCX_QRATE_BYTES);
		assert_true(b->classes[i].rates[TCX_QRATE_BYTES] == (float)(100 * k));
	}
	/* the duplicate's rate is against 1:2 of a (2000 -> 5000) */
	assert_true(b->classes[3].rates[TCX_QRATE_BYTES] == 3000.0f);
	/* and the next collection finds 1:2 as its first row of b (2200) */
	tcx_snapshot_unref(a);
	a = new_snapshot();
	add_dev(a, "", "eth0");
	r = add_row(a, 1, "htb", 0x10002, 0x10000, 0, 0, 0);
	r->c[TCX_QSTAT_BYTES] = 2300;
	r->stats_present = 1u << TCX_QSTAT_BYTES;
	assert_int_equal(tcx_qrates_update(q, a, 12.0), 0);
	assert_true(a->classes[0].rates[TCX_QRATE_BYTES] == 100.0f);
	tcx_snapshot_unref(a);
	tcx_snapshot_unref(b);
	tcx_qrates_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tree),        cmocka_unit_test(test_escape),
	        cmocka_unit_test(test_fold),        cmocka_unit_test(test_loop),
	        cmocka_unit_test(test_empty),       cmocka_unit_test(test_rates),
	        cmocka_unit_test(test_rates_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
