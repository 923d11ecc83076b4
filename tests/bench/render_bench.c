/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Render cost: a synthetic snapshot of N action rows (tests/bench/synth.h)
 * rendered in each format several times; prints the median in ns per row. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "agent/expo.h"
#include "agent/render.h"
#include "tests/bench/synth.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	static const char *const names[] = {"text", "openmetrics", "text+gzip", "openmetrics+gzip"};
	static const enum tcx_variant vars[] = {TCX_VAR_TEXT, TCX_VAR_OM, TCX_VAR_TEXT_GZ,
	                                        TCX_VAR_OM_GZ};
	struct tcx_config *cfg;
	struct tcx_snapshot *s = tcx_bench_snapshot(n, &cfg);
	double *times = calloc((size_t)runs, sizeof(double));

	printf("rows=%zu runs=%d\n", n, runs);
	unsigned nv = argc > 3 ? (unsigned)atoi(argv[3]) : 4;

	for (unsigned v = 0; v < nv; v++) {
		size_t len = 0;

		for (int r = 0; r < runs; r++) {
			struct tcx_rendered out;
			double t0 = now();

			if (tcx_expo_render(s, NULL, vars[v], &out) < 0) {
				fprintf(stderr, "render failed\n");
				return 1;
			}
			times[r] = now() - t0;
			len = out.len;
			free(out.p);
		}
		qsort(times, (size_t)runs, sizeof(double), cmp);
		printf("%-17s median_ms=%.2f ns_per_row=%.0f bytes=%zu\n", names[v],
		       times[runs / 2] * 1e3, times[runs / 2] * 1e9 / (double)n, len);
	}
	free(times);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
	return 0;
}
