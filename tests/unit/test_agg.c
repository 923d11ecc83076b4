/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The aggregation state (collectors/agg.c): hand-built snapshots, pass after
 * pass, and the aggregates they leave. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agg.h"
#include "collectors/snapshot.h"

static void config_err(void *arg, const char *msg)
{
	fail_msg("config error: %s", msg);
}

static struct tcx_config *config(const char *yaml)
{
	struct tcx_config *cfg =
	        tcx_config_load_buffer("a.yaml", yaml, strlen(yaml), config_err, NULL);

	assert_non_null(cfg);
	return cfg;
}

/* 01 and 02 are rule r1 of tenant a, 03 rule r2 of tenant b. */
static const char *yaml_by = "labels: [tenant, rule]\n"
                             "aggregate: {by: [tenant, rule]}\n"
                             "cookies:\n"
                             "  \"01\": [a, r1]\n"
                             "  \"02\": [a, r1]\n"
                             "  \"03\": [b, r2]\n";

/* A filter of device v0 (ingress) with one gact action. */
struct row {
	uint16_t pref;
	uint8_t cookie;
	uint64_t bytes;
	uint32_t drops;
	uint32_t index; /* the action's index, 0: none (a terse dump) */
};

static struct tcx_snapshot *snap(struct tcx_config *cfg, const struct row *rows, size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct tcx_target *t = tcx_snapshot_add_target(s);

	assert_non_null(t);
	snprintf(t->dev, sizeof(t->dev), "v0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a;

		assert_non_null(f);
		f->pref = rows[i].pref;
		f->protocol = 0x0800;
		f->handle = 0x80000800;
		f->kind = (uint8_t)tcx_snapshot_kind(s, "u32");
		f->n_actions = 1;
		f->first_action = (uint32_t)i;
		a = tcx_snapshot_add_action(s);
		assert_non_null(a);
		a->filter = (uint32_t)i;
		a->order = 1;
		a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
		a->cookie_len = 1;
		a->cookie[0] = rows[i].cookie;
		a->c[TCX_ACT_BYTES] = rows[i].bytes;
		a->c[TCX_ACT_PACKETS] = rows[i].bytes / 10;
		a->c[TCX_ACT_DROPS] = rows[i].drops;
		a->index = rows[i].index;
	}
	assert_int_equal(tcx_snapshot_merge(s), 0);
	tcx_snapshot_classify(s);
	return s;
}

/* One pass: the snapshot of rows folded into a; returns it (with its
 * aggregates). */
static struct tcx_snapshot *pass(struct tcx_agg *a, struct tcx_config *cfg, const struct row *rows,
                                 size_t n)
{
	struct tcx_snapshot *s = snap(cfg, rows, n);

	assert_int_equal(tcx_agg_update(a, s), 0);
	assert_non_null(s->aggs);
	return s;
}

/* The aggregate whose kept values are v0, v1 (n_labels of them); -1 if none. */
static long find(const struct tcx_aggregates *g, const char *v0, const char *v1)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(tcx_aggregate_value(g, i, 0), v0) &&
		    (g->n_labels < 2 || !strcmp(tcx_aggregate_value(g, i, 1), v1)))
			return (long)i;
	return -1;
}

/* Counter c of aggregate (v0, v1) in s, which must exist. */
static uint64_t value(const struct tcx_snapshot *s, const char *v0, const char *v1,
                      enum tcx_action_counter c)
{
	long i = find(s->aggs, v0, v1);

	assert_true(i >= 0);
	return s->aggs->c[i].v[c];
}

#define N(rows) (sizeof(rows) / sizeof(rows[0]))

/* Bytes of (v0, v1) after a pass over rows; the snapshot is released. */
static uint64_t bytes_after(struct tcx_agg *a, struct tcx_config *cfg, const struct row *rows,
                            size_t n, const char *v0, const char *v1)
{
	struct tcx_snapshot *s = pass(a, cfg, rows, n);
	uint64_t v = value(s, v0, v1, TCX_ACT_BYTES);

	tcx_snapshot_unref(s);
	return v;
}

static void fold(struct tcx_agg *a, struct tcx_config *cfg, const struct row *r, uint64_t bytes)
{
	struct tcx_snapshot *s = snap(cfg, r, 1);
	struct tcx_finals *fs = NULL;

	assert_int_equal(tcx_finals_add(&fs, s, 0), 0);
	fs->f[0].c.v[TCX_ACT_BYTES] = bytes;
	assert_int_equal(tcx_agg_fold_final(a, &fs->f[0]), 0);
	tcx_finals_free(fs);
	tcx_snapshot_unref(s);
}

/* The first pass: the sums of the current rows, with their kept labels
 * only, and when each aggregate appeared. */
static void test_sums_and_labels(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row rows[] = {{10, 1, 100, 1, 0}, {20, 2, 50, 2, 0}, {30, 3, 7, 0, 0}};
	struct tcx_snapshot *s = pass(a, cfg, rows, N(rows));
	const struct tcx_aggregates *g = s->aggs;
	double created;

	assert_int_equal(g->n, 2);
	assert_int_equal(g->n_labels, 2);
	assert_string_equal(g->names[0], "tenant");
	assert_string_equal(g->names[1], "rule");
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 150);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_PACKETS), 15);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_DROPS), 3);
	assert_int_equal(value(s, "b", "r2", TCX_ACT_BYTES), 7);
	/* no hardware counters, no overlimits */
	assert_int_equal(g->nonzero,
	                 1u << TCX_ACT_BYTES | 1u << TCX_ACT_PACKETS | 1u << TCX_ACT_DROPS);
	created = g->created[find(g, "a", "r1")];
	assert_true(created > 1e9);
	tcx_snapshot_unref(s);

	s = pass(a, cfg, rows, N(rows));
	assert_true(s->aggs->created[find(s->aggs, "a", "r1")] == created);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* No row yet: no aggregate (and nothing copied from nowhere, which UBSan
 * reports). */
static void test_no_rows(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	struct tcx_snapshot *s = pass(a, cfg, NULL, 0);

	assert_int_equal(s->aggs->n, 0);
	assert_int_equal(s->aggs->n_labels, 2);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* tcx_agg_sum() (--once): the same aggregates as a first pass. */
static void test_sum(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	const struct row rows[] = {{10, 1, 100, 1, 7}, {20, 2, 50, 2, 8}, {30, 3, 7, 0, 9}};
	struct tcx_snapshot *s = snap(cfg, rows, N(rows));

	assert_int_equal(tcx_agg_sum(s), 0);
	assert_int_equal(s->aggs->n, 2);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 150);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_DROPS), 3);
	assert_int_equal(value(s, "b", "r2", TCX_ACT_PACKETS), 0);
	assert_int_equal(value(s, "b", "r2", TCX_ACT_BYTES), 7);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
}

/* `by: []`: one aggregate, every row, no label. */
static void test_by_nothing(void **state)
{
	struct tcx_config *cfg = config("aggregate: {by: []}\n");
	struct tcx_agg *a = tcx_agg_new();
	const struct row rows[] = {{10, 1, 100, 0, 0}, {20, 2, 50, 0, 0}};
	struct tcx_snapshot *s = pass(a, cfg, rows, N(rows));

	assert_int_equal(s->aggs->n, 1);
	assert_int_equal(s->aggs->n_labels, 0);
	assert_int_equal(s->aggs->c[0].v[TCX_ACT_BYTES], 150);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A member that disappears leaves its last values. */
static void test_member_vanishes(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row both[] = {{10, 1, 100, 0, 0}, {20, 2, 50, 0, 0}};
	const struct row one[] = {{10, 1, 120, 0, 0}};

	assert_int_equal(bytes_after(a, cfg, both, 2, "a", "r1"), 150);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 170);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 170);
	/* an aggregate whose every member is gone stays, with its sum */
	assert_int_equal(bytes_after(a, cfg, NULL, 0, "a", "r1"), 120 + 50);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A target that fails for a pass keeps its rows: when it comes back, they
 * are not counted again from 0. */
static void test_target_fails(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row r100[] = {{10, 1, 100, 0, 0}}, r120[] = {{10, 1, 120, 0, 0}};
	struct tcx_snapshot *s = snap(cfg, NULL, 0);

	assert_int_equal(bytes_after(a, cfg, r100, 1, "a", "r1"), 100);
	s->targets[0].ok = 0;
	assert_int_equal(tcx_agg_update(a, s), 0);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 100);
	tcx_snapshot_unref(s);
	assert_int_equal(bytes_after(a, cfg, r120, 1, "a", "r1"), 120);
	/* an incomplete pass (out of memory) the same */
	s = snap(cfg, NULL, 0);
	s->incomplete = 1;
	assert_int_equal(tcx_agg_update(a, s), 0);
	tcx_snapshot_unref(s);
	assert_int_equal(bytes_after(a, cfg, r120, 1, "a", "r1"), 120);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A member whose bytes or packets go down (a replace: another action under
 * its identity): every counter of the old action stays. Another counter
 * going down alone is a reset of that counter: the value before it stays. */
static void test_member_resets(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row r100[] = {{10, 1, 100, 5, 0}}, r10[] = {{10, 1, 10, 9, 0}},
	                 r30[] = {{10, 1, 30, 1, 0}};
	struct tcx_snapshot *s;

	assert_int_equal(bytes_after(a, cfg, r100, 1, "a", "r1"), 100);
	assert_int_equal(bytes_after(a, cfg, r10, 1, "a", "r1"), 110);
	s = pass(a, cfg, r30, 1);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 130);
	/* drops: 5 of the replaced action, then 9 and (reset) 1 */
	assert_int_equal(value(s, "a", "r1", TCX_ACT_DROPS), 5 + 9 + 1);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A replaced action (a new action index under the same identity) is a
 * reset even when its counters passed the old ones before the next pass;
 * without an index (terse dumps), only a counter that goes down is. */
static void test_member_replaced(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row r1[] = {{10, 1, 100, 0, 1}}, r2[] = {{10, 1, 150, 0, 2}},
	                 r2b[] = {{10, 1, 160, 0, 2}}, r0[] = {{10, 1, 170, 0, 0}};

	assert_int_equal(bytes_after(a, cfg, r1, 1, "a", "r1"), 100);
	assert_int_equal(bytes_after(a, cfg, r2, 1, "a", "r1"), 250);
	assert_int_equal(bytes_after(a, cfg, r2b, 1, "a", "r1"), 260);
	assert_int_equal(bytes_after(a, cfg, r0, 1, "a", "r1"), 270);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A member that moves to another aggregate (a reloaded cookie map): what it
 * counted so far stays in the old one; the new one counts from its current
 * value. */
static void test_member_moves(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_config *cfg2 = config("labels: [tenant, rule]\n"
	                                 "aggregate: {by: [tenant, rule]}\n"
	                                 "cookies:\n"
	                                 "  \"01\": [b, r2]\n");
	struct tcx_agg *a = tcx_agg_new();
	const struct row r100[] = {{10, 1, 100, 0, 0}}, r130[] = {{10, 1, 130, 0, 0}},
	                 r150[] = {{10, 1, 150, 0, 0}};
	struct tcx_snapshot *s;

	assert_int_equal(bytes_after(a, cfg, r100, 1, "a", "r1"), 100);
	s = pass(a, cfg2, r130, 1);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 130);
	assert_int_equal(value(s, "b", "r2", TCX_ACT_BYTES), 0);
	tcx_snapshot_unref(s);
	s = pass(a, cfg2, r150, 1);
	assert_int_equal(value(s, "a", "r1", TCX_ACT_BYTES), 130);
	assert_int_equal(value(s, "b", "r2", TCX_ACT_BYTES), 20);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg2);
	tcx_config_unref(cfg);
}

/* A deleted filter's final counters count once: the next dump no longer has
 * the row. */
static void test_fold_then_gone(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row both[] = {{10, 1, 100, 0, 0}, {20, 2, 50, 0, 0}};
	const struct row one[] = {{10, 1, 100, 0, 0}};

	assert_int_equal(bytes_after(a, cfg, both, 2, "a", "r1"), 150);
	fold(a, cfg, &both[1], 70); /* 20 more bytes before it was deleted */
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 170);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 170);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* The collector drains the finals before it dumps, so a dump after a final
 * shows another action under that identity (the kernel reuses a deleted
 * filter's handle and action index): it counts whole. A final takes the
 * place of the last values seen of its row. */
static void test_fold_then_same_identity(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row both[] = {{10, 1, 100, 0, 0}, {20, 2, 50, 0, 0}};
	const struct row again[] = {{10, 1, 100, 0, 0}, {20, 2, 60, 0, 0}};
	const struct row one[] = {{10, 1, 100, 0, 0}};

	assert_int_equal(bytes_after(a, cfg, both, 2, "a", "r1"), 150);
	fold(a, cfg, &both[1], 70);
	assert_int_equal(bytes_after(a, cfg, again, 2, "a", "r1"), 100 + 70 + 60);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 230);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 230);
	/* a final equal to the last values seen: nothing more */
	fold(a, cfg, &both[0], 100);
	assert_int_equal(bytes_after(a, cfg, NULL, 0, "a", "r1"), 230);
	assert_int_equal(bytes_after(a, cfg, NULL, 0, "a", "r1"), 230);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* Filters made and deleted between two passes: only their notifications
 * saw them. Two finals of one identity are two filters (the kernel sends
 * one per deletion): each counts. */
static void test_fold_unseen(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row one[] = {{10, 1, 100, 0, 0}};
	const struct row brief = {40, 2, 0, 0, 0};

	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 100);
	fold(a, cfg, &brief, 40);
	fold(a, cfg, &brief, 40);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 180);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 180);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A final carries its action's index. A filter made and deleted between two
 * passes, then made again under the same identity (a new action) before the
 * next: the new one counts from 0, not from past the final. A final of
 * another action than the one last seen (replaced, then deleted) counts
 * whole, and what the member counted stays. */
static void test_fold_index(void **state)
{
	struct tcx_config *cfg = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new();
	const struct row one[] = {{10, 1, 100, 0, 5}};
	const struct row brief = {40, 2, 0, 0, 7};
	const struct row again[] = {{10, 1, 100, 0, 5}, {40, 2, 30, 0, 9}};
	const struct row replaced = {40, 2, 0, 0, 11};

	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 100);
	fold(a, cfg, &brief, 40);
	assert_int_equal(bytes_after(a, cfg, again, 2, "a", "r1"), 170);
	fold(a, cfg, &replaced, 25);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 195);
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 195);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* Built-in labels kept: device (left out of a block's aggregate, as it is of
 * its rows), pref; a configuration with other kept labels starts over. */
static void test_builtin_labels(void **state)
{
	struct tcx_config *cfg = config("aggregate: {by: [device, pref]}\n");
	struct tcx_config *cfg2 = config("aggregate: {without: [pref]}\n");
	struct tcx_agg *a = tcx_agg_new();
	const struct row rows[] = {{10, 1, 100, 0, 0}, {10, 2, 50, 0, 0}, {20, 3, 1, 0, 0}};
	struct tcx_snapshot *s = pass(a, cfg, rows, N(rows));

	assert_int_equal(s->aggs->n, 2);
	assert_string_equal(s->aggs->names[0], "device");
	assert_string_equal(s->aggs->names[1], "pref");
	assert_int_equal(s->aggs->optional[0], 1);
	assert_int_equal(s->aggs->optional[1], 0);
	assert_int_equal(value(s, "v0", "10", TCX_ACT_BYTES), 150);
	assert_int_equal(value(s, "v0", "20", TCX_ACT_BYTES), 1);
	tcx_snapshot_unref(s);
	s = pass(a, cfg2, rows, N(rows));
	/* every built-in label but pref (block and netns empty here) */
	assert_int_equal(s->aggs->n_labels, TCX_BL__MAX - 1);
	assert_int_equal(s->aggs->n, 3);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg2);
	tcx_config_unref(cfg);
}

/* Without `aggregate`, no aggregates, and the state is emptied. */
static void test_no_aggregate(void **state)
{
	struct tcx_config *cfg = config(yaml_by), *plain = config("labels: [tenant]\n");
	struct tcx_agg *a = tcx_agg_new();
	const struct row one[] = {{10, 1, 100, 0, 0}};
	struct tcx_snapshot *s = snap(plain, one, 1);

	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 100);
	assert_int_equal(tcx_agg_update(a, s), 0);
	assert_null(s->aggs);
	tcx_snapshot_unref(s);
	/* started over: the row counts from its value, once */
	assert_int_equal(bytes_after(a, cfg, one, 1, "a", "r1"), 100);
	tcx_agg_free(a);
	tcx_config_unref(plain);
	tcx_config_unref(cfg);
}

/* ---- the filters' hit counters (tcx_agg_new_hits()) ------------------------------------- */

#define LK (1u << TCX_FCTR_LOOKUPS)
#define HT (1u << TCX_FCTR_HITS)
#define MK (1u << TCX_FCTR_U32_MARK)

/* A filter of device v0 (ingress) with hit counters (those in present; a
 * flower has none), and no action. */
struct frow {
	const char *kind;
	uint16_t pref;
	uint32_t handle;
	uint8_t present;
	uint64_t lookups, hits, mark;
};

static struct tcx_snapshot *fsnap(struct tcx_config *cfg, const struct frow *rows, size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct tcx_target *t = tcx_snapshot_add_target(s);

	assert_non_null(t);
	snprintf(t->dev, sizeof(t->dev), "v0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		uint64_t *v;

		assert_non_null(f);
		f->pref = rows[i].pref;
		f->protocol = 0x0800;
		f->handle = rows[i].handle;
		f->kind = (uint8_t)tcx_snapshot_kind(s, rows[i].kind);
		if (!rows[i].present)
			continue;
		v = tcx_snapshot_add_hvals(s, f, 0);
		assert_non_null(v);
		f->hv_present = rows[i].present;
		v[TCX_FCTR_LOOKUPS] = rows[i].present & LK ? rows[i].lookups : 0;
		v[TCX_FCTR_HITS] = rows[i].present & HT ? rows[i].hits : 0;
		v[TCX_FCTR_U32_MARK] = rows[i].present & MK ? rows[i].mark : 0;
	}
	assert_int_equal(tcx_snapshot_merge(s), 0);
	tcx_snapshot_classify(s);
	return s;
}

/* One pass of the hits state over rows, with the final hit counters of
 * the filters of `deleted` (as drained from their deletion notifications);
 * returns the snapshot, with its hit aggregates. */
static struct tcx_snapshot *hpass(struct tcx_agg *a, struct tcx_config *cfg,
                                  const struct frow *rows, size_t n, const struct frow *deleted,
                                  size_t n_deleted)
{
	struct tcx_snapshot *s = fsnap(cfg, rows, n);

	if (n_deleted) {
		struct tcx_snapshot *d = fsnap(cfg, deleted, n_deleted);

		for (size_t i = 0; i < n_deleted; i++)
			assert_int_equal(tcx_hit_finals_add(&s->hit_finals, d, i), 0);
		tcx_snapshot_unref(d);
	}
	assert_int_equal(tcx_agg_update(a, s), 0);
	assert_null(s->hit_finals);
	assert_null(s->aggs); /* a hits state makes the hit aggregates only */
	assert_non_null(s->hit_aggs);
	return s;
}

/* Counter c of hit aggregate v0 (its kept label; both, when two are kept)
 * in s, which must exist; ~0 when the aggregate does not have it. */
static uint64_t hvalue(const struct tcx_snapshot *s, const char *v0, enum tcx_filter_counter c)
{
	long i = find(s->hit_aggs, v0, v0);

	assert_true(i >= 0);
	if (!(s->hit_aggs->present[i] & (1u << c)))
		return ~UINT64_C(0);
	return s->hit_aggs->c[i].v[c];
}

/* Hits of aggregate v0 after a pass; the snapshot is released. */
static uint64_t hits_after(struct tcx_agg *a, struct tcx_config *cfg, const struct frow *rows,
                           size_t n, const struct frow *deleted, size_t n_deleted, const char *v0)
{
	struct tcx_snapshot *s = hpass(a, cfg, rows, n, deleted, n_deleted);
	uint64_t v = hvalue(s, v0, TCX_FCTR_HITS);

	tcx_snapshot_unref(s);
	return v;
}

static const char *yaml_kind = "aggregate: {by: [kind]}\n";

/* A group of u32 filters: each counter the sum of its members', pass after
 * pass; a flower (no hit counters) is no member; the user labels kept are
 * empty (a filter has no cookie). */
static void test_hits_sum(void **state)
{
	struct tcx_config *cfg = config(yaml_kind), *cfg2 = config(yaml_by);
	struct tcx_agg *a = tcx_agg_new_hits(), *b = tcx_agg_new_hits();
	const struct frow p1[] = {{"u32", 10, 0x80000800, LK | HT | MK, 1000, 100, 7},
	                          {"u32", 10, 0x80000801, LK | HT | MK, 900, 50, 0},
	                          {"u32", 20, 0x80000800, LK | HT, 500, 5, 0},
	                          {"flower", 30, 1, 0, 0, 0, 0}};
	const struct frow p2[] = {{"u32", 10, 0x80000800, LK | HT | MK, 1300, 160, 9},
	                          {"u32", 10, 0x80000801, LK | HT | MK, 1200, 90, 2},
	                          {"u32", 20, 0x80000800, LK | HT, 800, 8, 0},
	                          {"flower", 30, 1, 0, 0, 0, 0}};
	struct tcx_snapshot *s = hpass(a, cfg, p1, N(p1), NULL, 0);

	assert_int_equal(s->hit_aggs->n, 1);
	assert_string_equal(s->hit_aggs->names[0], "kind");
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_LOOKUPS), 2400);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 155);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_U32_MARK), 7);
	tcx_snapshot_unref(s);
	s = hpass(a, cfg, p2, N(p2), NULL, 0);
	assert_int_equal(s->hit_aggs->n, 1);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_LOOKUPS), 3300);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 258);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_U32_MARK), 11);
	tcx_snapshot_unref(s);
	/* by user labels only: one aggregate, every value empty */
	s = hpass(b, cfg2, p2, N(p2), NULL, 0);
	assert_int_equal(s->hit_aggs->n, 1);
	assert_int_equal(s->hit_aggs->n_labels, 2);
	assert_int_equal(hvalue(s, "", TCX_FCTR_HITS), 258);
	tcx_snapshot_unref(s);
	/* --once: the same sums, actions' and hits' */
	s = fsnap(cfg, p2, N(p2));
	assert_int_equal(tcx_agg_sum(s), 0);
	assert_non_null(s->aggs);
	assert_int_equal(s->aggs->n, 0);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 258);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_LOOKUPS), 3300);
	tcx_snapshot_unref(s);
	tcx_agg_free(b);
	tcx_agg_free(a);
	tcx_config_unref(cfg2);
	tcx_config_unref(cfg);
}

/* Make-before-break: a new filter under another handle, then the old one
 * deleted by handle; its final counters (what it counted after the last
 * dump included) count once, and the group's hits stay exact. */
static void test_hits_replaced_with_final(void **state)
{
	struct tcx_config *cfg = config(yaml_kind);
	struct tcx_agg *a = tcx_agg_new_hits();
	const struct frow old[] = {{"u32", 10, 0x80000800, LK | HT, 1000, 100, 0},
	                           {"u32", 20, 0x80000800, LK | HT, 10, 1, 0}};
	const struct frow old_final[] = {{"u32", 10, 0x80000800, LK | HT, 1300, 130, 0}};
	const struct frow now[] = {{"u32", 10, 0x80000801, LK | HT, 200, 20, 0},
	                           {"u32", 20, 0x80000800, LK | HT, 10, 1, 0}};
	const struct frow later[] = {{"u32", 10, 0x80000801, LK | HT, 500, 60, 0},
	                             {"u32", 20, 0x80000800, LK | HT, 10, 1, 0}};
	struct tcx_snapshot *s;

	assert_int_equal(hits_after(a, cfg, old, N(old), NULL, 0, "u32"), 101);
	s = hpass(a, cfg, now, N(now), old_final, N(old_final));
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 130 + 20 + 1);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_LOOKUPS), 1300 + 200 + 10);
	tcx_snapshot_unref(s);
	assert_int_equal(hits_after(a, cfg, later, N(later), NULL, 0, "u32"), 130 + 60 + 1);
	assert_int_equal(hits_after(a, cfg, later, N(later), NULL, 0, "u32"), 130 + 60 + 1);
	/* the kernel gives the next filter at that pref the freed handle: a
	 * final then a new filter under the old identity, counted whole */
	{
		const struct frow again[] = {{"u32", 10, 0x80000801, LK | HT, 500, 60, 0},
		                             {"u32", 20, 0x80000800, LK | HT, 10, 1, 0},
		                             {"u32", 10, 0x80000800, LK | HT, 40, 4, 0}};

		assert_int_equal(hits_after(a, cfg, again, N(again), NULL, 0, "u32"),
		                 130 + 60 + 1 + 4);
	}
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* A filter deleted with no final (a whole pref deleted): its last values
 * stay in its group. */
static void test_hits_gone_without_final(void **state)
{
	struct tcx_config *cfg = config(yaml_kind);
	struct tcx_agg *a = tcx_agg_new_hits();
	const struct frow both[] = {{"u32", 10, 0x80000800, LK | HT, 1000, 100, 0},
	                            {"u32", 20, 0x80000800, LK | HT, 600, 50, 0}};
	const struct frow one[] = {{"u32", 10, 0x80000800, LK | HT, 1100, 110, 0}};
	struct tcx_snapshot *s;

	assert_int_equal(hits_after(a, cfg, both, N(both), NULL, 0, "u32"), 150);
	assert_int_equal(hits_after(a, cfg, one, N(one), NULL, 0, "u32"), 160);
	s = hpass(a, cfg, one, N(one), NULL, 0);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 160);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_LOOKUPS), 1700);
	tcx_snapshot_unref(s);
	/* what the filter left stays as the other one counts on */
	{
		const struct frow more[] = {{"u32", 10, 0x80000800, LK | HT, 1200, 140, 0}};

		assert_int_equal(hits_after(a, cfg, more, N(more), NULL, 0, "u32"), 190);
	}
	assert_int_equal(hits_after(a, cfg, NULL, 0, NULL, 0, "u32"), 190);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* An aggregate has the counters its members have: a group of matchall
 * filters has hits and no lookups (absent, not 0), nor a mark; a u32
 * group's mark is there when one of its members (or finals) has it. */
static void test_hits_present(void **state)
{
	struct tcx_config *cfg = config(yaml_kind);
	struct tcx_agg *a = tcx_agg_new_hits();
	const struct frow rows[] = {{"matchall", 10, 1, HT, 0, 30, 0},
	                            {"matchall", 20, 1, HT, 0, 12, 0},
	                            {"u32", 30, 0x80000800, LK | HT, 100, 10, 0},
	                            {"basic", 40, 1, LK | HT, 80, 8, 0}};
	const struct frow marked[] = {{"u32", 50, 0x80000800, LK | HT | MK, 5, 2, 1}};
	struct tcx_snapshot *s = hpass(a, cfg, rows, N(rows), NULL, 0);
	long m = find(s->hit_aggs, "matchall", NULL), u = find(s->hit_aggs, "u32", NULL);

	assert_int_equal(s->hit_aggs->n, 3);
	assert_int_equal(s->hit_aggs->present[m], HT);
	assert_int_equal(hvalue(s, "matchall", TCX_FCTR_HITS), 42);
	assert_int_equal(hvalue(s, "matchall", TCX_FCTR_LOOKUPS), ~UINT64_C(0));
	assert_int_equal(s->hit_aggs->present[u], LK | HT);
	assert_int_equal(s->hit_aggs->present[find(s->hit_aggs, "basic", NULL)], LK | HT);
	tcx_snapshot_unref(s);
	/* a marked u32 filter made and deleted between two passes */
	s = hpass(a, cfg, rows, N(rows), marked, N(marked));
	assert_int_equal(s->hit_aggs->present[find(s->hit_aggs, "u32", NULL)], LK | HT | MK);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_U32_MARK), 1);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 12);
	assert_int_equal(s->hit_aggs->present[find(s->hit_aggs, "matchall", NULL)], HT);
	tcx_snapshot_unref(s);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

/* Hits never go down: a filter replaced under its handle (its hits lower)
 * leaves what the old one counted; a final lower than the last values seen
 * (not the filter the dump saw) does not take the sum back. */
static void test_hits_never_down(void **state)
{
	struct tcx_config *cfg = config(yaml_kind);
	struct tcx_agg *a = tcx_agg_new_hits();
	const struct frow r100[] = {{"u32", 10, 0x80000800, LK | HT | MK, 1000, 100, 7}};
	const struct frow r10[] = {{"u32", 10, 0x80000800, LK | HT | MK, 50, 10, 9}};
	const struct frow f5[] = {{"u32", 10, 0x80000800, LK | HT, 20, 5, 0}};
	struct tcx_snapshot *s;

	assert_int_equal(hits_after(a, cfg, r100, 1, NULL, 0, "u32"), 100);
	s = hpass(a, cfg, r10, 1, NULL, 0);
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_HITS), 110);
	/* replaced: the old filter's mark stays, though the new one's is higher */
	assert_int_equal(hvalue(s, "u32", TCX_FCTR_U32_MARK), 7 + 9);
	tcx_snapshot_unref(s);
	s = hpass(a, cfg, NULL, 0, f5, 1);
	assert_true(hvalue(s, "u32", TCX_FCTR_HITS) >= 110);
	assert_true(hvalue(s, "u32", TCX_FCTR_LOOKUPS) >= 1050);
	tcx_snapshot_unref(s);
	assert_true(hits_after(a, cfg, NULL, 0, NULL, 0, "u32") >= 110);
	tcx_agg_free(a);
	tcx_config_unref(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sums_and_labels),
	        cmocka_unit_test(test_no_rows),
	        cmocka_unit_test(test_sum),
	        cmocka_unit_test(test_by_nothing),
	        cmocka_unit_test(test_member_vanishes),
	        cmocka_unit_test(test_member_resets),
	        cmocka_unit_test(test_member_replaced),
	        cmocka_unit_test(test_target_fails),
	        cmocka_unit_test(test_member_moves),
	        cmocka_unit_test(test_fold_then_gone),
	        cmocka_unit_test(test_fold_then_same_identity),
	        cmocka_unit_test(test_fold_unseen),
	        cmocka_unit_test(test_fold_index),
	        cmocka_unit_test(test_builtin_labels),
	        cmocka_unit_test(test_no_aggregate),
	        cmocka_unit_test(test_hits_sum),
	        cmocka_unit_test(test_hits_replaced_with_final),
	        cmocka_unit_test(test_hits_gone_without_final),
	        cmocka_unit_test(test_hits_present),
	        cmocka_unit_test(test_hits_never_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
