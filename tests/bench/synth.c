/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/synth.h"

static void config_err(void *arg, const char *msg)
{
	fprintf(stderr, "config: %s\n", msg);
	exit(1);
}

/* TCX_BENCH_AGG: the cookies' last 4 bytes are a tenant (10) and a rule
 * (100) a decoder reads: 1000 label sets of 100 rows each, aggregated
 * (`by`) or not (`none`). */
static const char agg_yaml[] =
        "labels: [tenant, rule]\n"
        "decoders:\n"
        "  - {type: fields, prefix: \"74637862656e6368\", length: 16,\n"
        "     fields: [{bytes: 8}, {bytes: 4}, {label: tenant, bytes: 2}, {label: rule, "
        "bytes: 2}]}\n";

struct tcx_snapshot *tcx_bench_snapshot(size_t n, struct tcx_config **cfg)
{
	const char *labels = getenv("TCX_BENCH_LABELS"), *agg = getenv("TCX_BENCH_AGG");
	char buf[1024];
	const char *yaml = labels && strcmp(labels, "0") == 0
	                           ? "targets: [{all: true}]\n"
	                           : "labels: [tenant, rule]\ncookies:\n"
	                             "  \"74637862656e63680000000000000000\": [acme, first]\n";

	if (agg && *agg) {
		snprintf(buf, sizeof(buf), "%s%s", agg_yaml,
		         strcmp(agg, "by") == 0 ? "aggregate: {by: [tenant, rule]}\n" : "");
		yaml = buf;
	}
	struct tcx_snapshot *s;
	struct tcx_target *t;

	*cfg = tcx_config_load_buffer("bench.yaml", yaml, strlen(yaml), config_err, NULL);
	s = tcx_snapshot_new(*cfg);
	t = tcx_snapshot_add_target(s);
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
		if (agg && *agg) {
			a->cookie[12] = 0;
			a->cookie[13] = (uint8_t)(i % 1000 / 100);
			a->cookie[14] = 0;
			a->cookie[15] = (uint8_t)(i % 100);
		}
		a->c[TCX_ACT_BYTES] = i * 1500;
		a->c[TCX_ACT_PACKETS] = i;
	}
	tcx_snapshot_classify(s);
	return s;
}
