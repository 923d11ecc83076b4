/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Render cost: a synthetic snapshot of N action rows (one action per filter,
 * a 16-byte cookie each, two user labels from a cookie map) rendered in each
 * format several times; prints the median in ns per row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/expo.h"
#include "agent/render.h"

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

static void config_err(void *arg, const char *msg)
{
	fprintf(stderr, "config: %s\n", msg);
	exit(1);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	static const char *const names[] = {"text", "openmetrics", "text+gzip", "openmetrics+gzip"};
	static const enum tcx_variant vars[] = {TCX_VAR_TEXT, TCX_VAR_OM, TCX_VAR_TEXT_GZ,
	                                        TCX_VAR_OM_GZ};
	/* With two user labels from a cookie map, or (TCX_BENCH_LABELS=0) none. */
	const char *labels = getenv("TCX_BENCH_LABELS");
	const char *yaml = labels && strcmp(labels, "0") == 0
	                           ? "targets: [{all: true}]\n"
	                           : "labels: [tenant, rule]\ncookies:\n"
	                             "  \"74637862656e63680000000000000000\": [acme, first]\n";
	struct tcx_config *cfg =
	        tcx_config_load_buffer("bench.yaml", yaml, strlen(yaml), config_err, NULL);
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct tcx_target *t = tcx_snapshot_add_target(s);
	double *times = calloc((size_t)runs, sizeof(double));
	struct tcx_bufpool pool;

	snprintf(t->dev, sizeof(t->dev), "eth0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a = tcx_snapshot_add_action(s);

		f->pref = (uint16_t)(1 + i / 5000);
		f->protocol = 0x0800;
		f->handle = (uint32_t)(0x80000800 + (i % 5000));
		f->kind = (uint8_t)tcx_snapshot_kind(s, "u32");
		f->flags = TCX_FLAG_NOT_IN_HW;
		f->n_actions = 1;
		f->first_action = (uint32_t)i;
		a->filter = (uint32_t)i;
		a->order = 1;
		a->kind = (uint8_t)tcx_snapshot_kind(s, "mirred");
		a->cookie_len = 16;
		memcpy(a->cookie, "tcxbench", 8);
		for (int k = 0; k < 8; k++)
			a->cookie[8 + k] = (uint8_t)(i >> (8 * (7 - k)));
		a->bytes = i * 1500;
		a->packets = i;
	}
	tcx_snapshot_classify(s);
	tcx_bufpool_init(&pool);
	printf("rows=%zu runs=%d (buffers reused through the pool, as the daemon does)\n", n, runs);
	unsigned nv = argc > 3 ? (unsigned)atoi(argv[3]) : 4;

	for (unsigned v = 0; v < nv; v++) {
		size_t len = 0;

		for (int r = 0; r < runs; r++) {
			struct tcx_rendered out;
			double t0 = now();

			if (tcx_expo_render(s, NULL, vars[v], &pool, &out) < 0) {
				fprintf(stderr, "render failed\n");
				return 1;
			}
			times[r] = now() - t0;
			len = out.len;
			tcx_bufpool_put(&pool, out.p, out.cap);
		}
		qsort(times, (size_t)runs, sizeof(double), cmp);
		printf("%-17s median_ms=%.2f ns_per_row=%.0f bytes=%zu\n", names[v],
		       times[runs / 2] * 1e3, times[runs / 2] * 1e9 / (double)n, len);
	}
	free(times);
	tcx_bufpool_destroy(&pool);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
	return 0;
}
