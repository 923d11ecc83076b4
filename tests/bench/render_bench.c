/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Render cost: a synthetic snapshot of N action rows (tests/bench/synth.h).
 * The rows' label text is formatted once per snapshot (build), then each
 * variant is rendered from it several times (render). For each, the median
 * in ns per row: "text" renders into a window that is thrown away as it
 * fills (the rendering alone, as the gzip variants feed their codec), "body" as the
 * daemon makes a variant's body (whole in memory, or compressed). Times are
 * the process's CPU time (user + system: page faults count), which other
 * work on a shared machine does not inflate as it does wall time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent/http/expo.h"
#include "agent/render/prom.h"
#include "collectors/agg.h"
#include "lib/clock.h"
#include "tests/bench/synth.h"

static double now(void)
{
	return tcx_clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int discard(void *arg, const char *p, size_t len)
{
	*(size_t *)arg += len;
	return 0;
}

static double median(double *t, int runs)
{
	qsort(t, (size_t)runs, sizeof(double), cmp);
	return t[runs / 2];
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	unsigned nv = argc > 3 ? (unsigned)atoi(argv[3]) : 4;
	static const char *const names[] = {"text", "openmetrics", "text+gzip", "openmetrics+gzip"};
	static const enum tcx_variant vars[] = {TCX_VAR_TEXT, TCX_VAR_OM, TCX_VAR_TEXT_GZ,
	                                        TCX_VAR_OM_GZ};
	struct tcx_config *cfg;
	struct tcx_snapshot *s = tcx_bench_snapshot(n, &cfg);
	struct tcx_rowlabels *labels = NULL;
	double *times = calloc((size_t)runs, sizeof(double));

	if (runs < 1 || !times)
		return 1;
	printf("rows=%zu runs=%d\n", n, runs);
	if (cfg->aggregate.mode != TCX_AGG_NONE) {
		/* The aggregation state's pass over the rows, as the daemon's
		 * collector runs it after each collection: the first pass
		 * makes the members, the next ones find them. */
		struct tcx_agg *agg = tcx_agg_new();
		double first = now();

		if (!agg || tcx_agg_update(agg, s) < 0)
			return 1;
		first = now() - first;
		for (int r = 0; r < runs; r++) {
			double t0 = now();

			if (tcx_agg_update(agg, s) < 0)
				return 1;
			times[r] = now() - t0;
		}
		printf("%-17s first_ms=%.2f median_ms=%.2f ns_per_row=%.0f aggregates=%zu\n",
		       "aggregate update", first * 1e3, median(times, runs) * 1e3,
		       median(times, runs) * 1e9 / (double)n, s->aggs->n);
		tcx_agg_free(agg);
	}
	for (int r = 0; r < runs; r++) {
		double t0 = now();

		tcx_rowlabels_free(labels);
		labels = tcx_rowlabels_build(s);
		times[r] = now() - t0;
		if (!labels) {
			fprintf(stderr, "label text: out of memory\n");
			return 1;
		}
	}
	printf("%-17s median_ms=%.2f ns_per_row=%.0f (once per snapshot)\n", "label text build",
	       median(times, runs) * 1e3, median(times, runs) * 1e9 / (double)n);
	for (unsigned v = 0; v < nv && v < 4; v++) {
		size_t len = 0, text = 0;
		double body;

		for (int r = 0; r < runs; r++) {
			struct tcx_buf b;
			double t0;

			text = 0;
			if (tcx_buf_init_sink(&b, discard, &text) < 0)
				return 1;
			t0 = now();
			if (tcx_render_prometheus_ex(
			            s, vars[v] == TCX_VAR_OM || vars[v] == TCX_VAR_OM_GZ, NULL,
			            labels, &b) < 0 ||
			    tcx_buf_flush(&b) < 0) {
				fprintf(stderr, "render failed\n");
				return 1;
			}
			times[r] = now() - t0;
			tcx_buf_free(&b);
		}
		if (vars[v] == TCX_VAR_TEXT || vars[v] == TCX_VAR_OM)
			printf("%-17s render ns_per_row=%.0f bytes=%zu\n", names[v],
			       median(times, runs) * 1e9 / (double)n, text);
		for (int r = 0; r < runs; r++) {
			struct tcx_rendered out;
			double t0 = now();

			if (tcx_expo_render(s, labels, NULL, vars[v], &out) < 0) {
				fprintf(stderr, "render failed\n");
				return 1;
			}
			times[r] = now() - t0;
			len = out.len;
			free(out.p);
		}
		body = median(times, runs);
		printf("%-17s body   ns_per_row=%.0f median_ms=%.2f bytes=%zu\n", names[v],
		       body * 1e9 / (double)n, body * 1e3, len);
	}
	tcx_rowlabels_free(labels);
	free(times);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
	return 0;
}
