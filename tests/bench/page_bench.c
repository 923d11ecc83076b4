/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The landing page's render cost (agent/render/page.c) on one device with
 * an HTB qdisc and N classes (1:1, its N - 1 children, each with its rate,
 * ceil, counters and rates), against a baseline from the same run: the
 * /metrics text body of the same snapshot, as the daemon makes it (label
 * text included). Each the median of RUNS, in the process's CPU time (with
 * WALL=1 in the environment, wall time).
 *
 *   page_bench [N [RUNS]]     (defaults: 10000 classes, 15 runs) */
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent/http/expo.h"
#include "agent/render/page.h"
#include "agent/render/prom.h"
#include "collectors/plans.h"
#include "lib/clock.h"

static double now(void)
{
	return tcx_clock_s(getenv("WALL") ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *t, int runs)
{
	qsort(t, (size_t)runs, sizeof(double), cmp);
	return t[runs / 2];
}

static struct tcx_snapshot *htb_snapshot(uint32_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);
	const struct tcx_plans_table *pt = tcx_plans_lookup("htb", 1);
	struct tcx_qdev *d;
	struct tcx_qrow *q;

	if (!s || !pt || n < 1 || n > 0xfff0)
		exit(1);
	s->qdevs = calloc(1, sizeof(*s->qdevs));
	s->qdiscs = calloc(1, sizeof(*s->qdiscs));
	s->classes = calloc(n, sizeof(*s->classes));
	s->xvals = calloc((size_t)n * pt->n, sizeof(*s->xvals));
	if (!s->qdevs || !s->qdiscs || !s->classes || !s->xvals)
		exit(1);
	s->cap_qdevs = s->cap_qdiscs = 1;
	s->cap_classes = n;
	s->cap_xvals = (size_t)n * pt->n;
	s->rates_interval_s = 15;
	d = &s->qdevs[s->n_qdevs++];
	snprintf(d->dev, sizeof(d->dev), "eth0");
	d->ok = 1;
	d->n_qdiscs = 1;
	d->n_classes = n;
	q = &s->qdiscs[s->n_qdiscs++];
	q->handle = 0x10000;
	q->parent = TC_H_ROOT;
	q->kind = (uint8_t)tcx_snapshot_kind(s, "htb");
	q->stats_present = (1u << TCX_QSTAT_RATE_BYTES) - 1;
	for (uint32_t i = 0; i < n; i++) {
		struct tcx_qrow *c = &s->classes[s->n_classes++];

		c->handle = 0x10001 + i;
		c->parent = i ? 0x10001 : TC_H_ROOT;
		c->kind = q->kind;
		c->stats_present = (1u << TCX_QSTAT_RATE_BYTES) - 1;
		c->c[TCX_QSTAT_BYTES] = 1000003ULL * i;
		c->c[TCX_QSTAT_PACKETS] = 1003ULL * i;
		c->c[TCX_QSTAT_DROPS] = i % 7;
		c->c[TCX_QSTAT_BACKLOG_BYTES] = i % 3000;
		c->c[TCX_QSTAT_BACKLOG_PACKETS] = i % 3;
		c->rates[TCX_QRATE_BYTES] = (float)(i * 37 % 125000);
		c->rates[TCX_QRATE_PACKETS] = (float)(i % 1000);
		c->rates[TCX_QRATE_DROPS] = (float)(i % 5);
		c->rates_present = (1u << TCX_QRATE__MAX) - 1;
		c->pt_id = (uint8_t)(tcx_plans_id(pt) + 1);
		c->pl = (uint32_t)s->n_xvals;
		c->pl_present = (1u << pt->n) - 1;
		for (unsigned f = 0; f < pt->n; f++)
			s->xvals[s->n_xvals++] = pt->rows[f].role == TCX_ROLE_CEIL
			                                 ? 1250000
			                                 : 125000 + (uint64_t)i * 8 + f;
	}
	return s;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
	int runs = argc > 2 ? atoi(argv[2]) : 15;
	struct tcx_snapshot *s = htb_snapshot(n);
	struct tcx_page_info pi = {.version = "bench",
	                           .now = tcx_clock_s(CLOCK_REALTIME),
	                           .interval_s = 15,
	                           .reload_ok = 1,
	                           .loaded_ts = tcx_clock_s(CLOCK_REALTIME)};
	double *page = calloc((size_t)runs, sizeof(double));
	double *text = calloc((size_t)runs, sizeof(double));
	size_t page_len = 0, text_len = 0;
	double mp, mt;

	if (runs < 1 || !page || !text)
		return 1;
	for (int r = 0; r < runs; r++) {
		struct tcx_rowlabels *labels;
		struct tcx_rendered out;
		struct tcx_buf b;
		double t0 = now();

		/* the daemon's landing page: a body in memory, per request */
		tcx_buf_init_mem(&b);
		if (tcx_page_render(&b, s, &pi) < 0) {
			fprintf(stderr, "page: out of memory\n");
			return 1;
		}
		page[r] = now() - t0;
		page_len = b.len;
		tcx_buf_free(&b);
		/* the baseline: the /metrics text body, its label text made too */
		t0 = now();
		labels = tcx_rowlabels_build(s);
		if (!labels || tcx_expo_render(s, labels, NULL, TCX_VAR_TEXT, &out) < 0) {
			fprintf(stderr, "metrics: render failed\n");
			return 1;
		}
		text[r] = now() - t0;
		text_len = out.len;
		free(out.p);
		tcx_rowlabels_free(labels);
	}
	mp = median(page, runs);
	mt = median(text, runs);
	printf("classes=%u runs=%d\n", n, runs);
	printf("landing page   median_ms=%.2f bytes=%zu\n", mp * 1e3, page_len);
	printf("metrics text   median_ms=%.2f bytes=%zu (baseline)\n", mt * 1e3, text_len);
	printf("page/metrics   ratio=%.2f\n", mp / mt);
	free(page);
	free(text);
	tcx_snapshot_unref(s);
	return 0;
}
