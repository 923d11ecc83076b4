/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SNMP rows without an agent: index allocation and stability,
 * discontinuities, GET/GETNEXT order, the counters a row has, plans,
 * actions' times. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snmp/mib.h"
#include "agent/snmp/rows.h"
#include "collectors/plans.h"

struct spec {
	const char *dev;
	uint16_t pref;
	uint32_t handle;
	uint64_t bytes;
	uint32_t act_index;
};

/* One target (dev0 ingress), one filter and one action per spec. */
static struct tcx_snapshot *snap_of(const struct spec *sp, size_t n, int fail_second_target)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);
	struct tcx_target *t = tcx_snapshot_add_target(s);

	snprintf(t->dev, sizeof(t->dev), "dev0");
	t->parent = TCX_PARENT_INGRESS;
	t->ok = 1;
	if (fail_second_target) {
		t = tcx_snapshot_add_target(s);
		snprintf(t->dev, sizeof(t->dev), "dev1");
		t->ok = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		struct tcx_action *a = tcx_snapshot_add_action(s);

		f->target = 0;
		f->pref = sp[i].pref;
		f->handle = sp[i].handle;
		f->protocol = 0x0800;
		f->n_actions = 1;
		a->filter = (uint32_t)i;
		a->order = 1;
		a->c[TCX_ACT_BYTES] = sp[i].bytes;
		a->c[TCX_ACT_PACKETS] = sp[i].bytes / 100;
		a->index = sp[i].act_index;
	}
	return s;
}

static struct tcx_snmp_rows build(struct tcx_snmp_ids *ids, const struct spec *sp, size_t n,
                                  uint64_t now, const struct tcx_snmp_rows *prev, int fail)
{
	struct tcx_snapshot *s = snap_of(sp, n, fail);
	struct tcx_snmp_rows r;

	assert_int_equal(tcx_snmp_rows_build(ids, s, now, prev, &r), 0);
	tcx_snapshot_unref(s); /* the rows hold their own reference */
	return r;
}

static uint32_t index_of(const struct tcx_snmp_rows *r, uint16_t pref)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->snap->filters[r->snap->actions[r->rows[i].obj].filter].pref == pref)
			return r->rows[i].index;
	return 0;
}

static void test_indices_are_stable_and_never_reused(void **state)
{
	struct tcx_snmp_ids ids;
	const struct spec a[] = {{"", 10, 1, 100, 0}, {"", 20, 1, 200, 0}, {"", 30, 1, 300, 0}};
	/* 20 is deleted, 40 added, order shuffled */
	const struct spec b[] = {{"", 40, 1, 50, 0}, {"", 30, 1, 310, 0}, {"", 10, 1, 110, 0}};
	/* 20 comes back */
	const struct spec c[] = {
	        {"", 10, 1, 120, 0}, {"", 20, 1, 5, 0}, {"", 30, 1, 320, 0}, {"", 40, 1, 60, 0}};
	struct tcx_snmp_rows r1, r2, r3, r4;

	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, a, 3, 100, NULL, 0);
	assert_int_equal(r1.n, 3);
	assert_int_equal(index_of(&r1, 10), 1);
	assert_int_equal(index_of(&r1, 20), 2);
	assert_int_equal(index_of(&r1, 30), 3);
	assert_int_equal(r1.rows[0].discontinuity, 0); /* first collection */
	assert_int_equal(r1.last_change, 100);

	r2 = build(&ids, b, 3, 200, &r1, 0);
	assert_int_equal(r2.n, 3);
	assert_int_equal(index_of(&r2, 10), 1);
	assert_int_equal(index_of(&r2, 30), 3);
	assert_int_equal(index_of(&r2, 40), 4);
	assert_int_equal(r2.rows[0].index, 1); /* sorted by index */
	assert_int_equal(r2.rows[1].index, 3);
	assert_int_equal(r2.rows[2].index, 4);
	assert_int_equal(tcx_snmp_rows_find(&r2, 4)->discontinuity, 200); /* a new row */
	assert_int_equal(tcx_snmp_rows_find(&r2, 1)->discontinuity, 0);
	assert_null(tcx_snmp_rows_find(&r2, 2));
	assert_int_equal(r2.last_change, 200);

	r3 = build(&ids, c, 4, 300, &r2, 0);
	assert_int_equal(index_of(&r3, 20), 5); /* a new index, 2 is not reused */
	assert_int_equal(index_of(&r3, 40), 4);
	assert_int_equal(r3.last_change, 300);

	/* Nothing added or removed: last_change stays. */
	r4 = build(&ids, c, 4, 400, &r3, 0);
	assert_int_equal(r4.last_change, 300);
	assert_int_equal(index_of(&r4, 20), 5);

	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_rows_free(&r4);
	tcx_snmp_ids_free(&ids);
}

static void test_discontinuity_on_reset_and_replace(void **state)
{
	struct tcx_snmp_ids ids;
	const struct spec a[] = {{"", 10, 1, 1000, 7}, {"", 20, 1, 1000, 8}, {"", 30, 1, 1000, 0}};
	/* 10: counters went down; 20: a new action index with higher counters;
	 * 30: grew */
	const struct spec b[] = {{"", 10, 1, 10, 7}, {"", 20, 1, 5000, 9}, {"", 30, 1, 2000, 0}};
	struct tcx_snmp_rows r1, r2, r3;

	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, a, 3, 50, NULL, 0);
	r2 = build(&ids, b, 3, 60, &r1, 0);
	assert_int_equal(tcx_snmp_rows_find(&r2, 1)->discontinuity, 60);
	assert_int_equal(tcx_snmp_rows_find(&r2, 2)->discontinuity, 60);
	assert_int_equal(tcx_snmp_rows_find(&r2, 3)->discontinuity, 0);
	r3 = build(&ids, b, 3, 70, &r2, 0);
	assert_int_equal(tcx_snmp_rows_find(&r3, 1)->discontinuity, 60); /* kept */
	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_ids_free(&ids);
}

/* Times become the master's sysUpTime at the event: here the master started
 * at time 1000 of ours (offset -1000). */
static void test_timestamps_follow_the_master(void **state)
{
	assert_int_equal(tcx_snmp_timestamp(1200, -1000), 200);
	assert_int_equal(tcx_snmp_timestamp(1001, -1000), 1);
	/* before the master's start, or none: 0 */
	assert_int_equal(tcx_snmp_timestamp(1000, -1000), 0);
	assert_int_equal(tcx_snmp_timestamp(900, -1000), 0);
	assert_int_equal(tcx_snmp_timestamp(0, -1000), 0);
	assert_int_equal(tcx_snmp_timestamp(0, 5000), 0);
	/* a master that started before our clock's 0 (on another host) */
	assert_int_equal(tcx_snmp_timestamp(100, 5000), 5100);
	/* the master restarted at 1300: the same event is now before it */
	assert_int_equal(tcx_snmp_timestamp(1200, -1300), 0);
	assert_int_equal(tcx_snmp_timestamp(1400, -1300), 100);
	/* TimeTicks wrap as the master's sysUpTime does */
	assert_int_equal(tcx_snmp_timestamp((1ULL << 32) + 110, -10), 100);
}

/* A target's dump can go from terse (flower rows have no action index) to
 * full (they have) and back, as filters of other classifiers come and go:
 * the row is the same, with the same counters, so it keeps its SNMP index
 * and has no discontinuity. */
static void test_action_index_known_or_not(void **state)
{
	struct tcx_snmp_ids ids;
	const struct spec terse[] = {{"", 10, 1, 1000, 0}, {"", 20, 1, 1000, 0}};
	const struct spec full[] = {{"", 10, 1, 1100, 7}, {"", 20, 1, 1100, 8}};
	const struct spec terse2[] = {{"", 10, 1, 1200, 0}, {"", 20, 1, 1200, 0}};
	struct tcx_snmp_rows r1, r2, r3;

	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, terse, 2, 50, NULL, 0);
	r2 = build(&ids, full, 2, 60, &r1, 0);
	r3 = build(&ids, terse2, 2, 70, &r2, 0);
	assert_int_equal(index_of(&r3, 10), 1);
	assert_int_equal(index_of(&r3, 20), 2);
	assert_int_equal(tcx_snmp_rows_find(&r2, 1)->discontinuity, 0);
	assert_int_equal(tcx_snmp_rows_find(&r3, 1)->discontinuity, 0);
	assert_int_equal(tcx_snmp_rows_find(&r3, 2)->discontinuity, 0);
	assert_int_equal(r3.last_change, 50); /* the same rows all along */
	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_ids_free(&ids);
}

static void test_failed_target_keeps_indices(void **state)
{
	struct tcx_snmp_ids ids;
	const struct spec a[] = {{"", 10, 1, 1, 0}, {"", 20, 1, 2, 0}};
	struct tcx_snmp_rows r1, r2, r3;

	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, a, 2, 1, NULL, 0);
	/* a pass in which some target failed and pref 20 is missing */
	r2 = build(&ids, a, 1, 2, &r1, 1);
	assert_int_equal(r2.n, 1);
	r3 = build(&ids, a, 2, 3, &r2, 0);
	assert_int_equal(index_of(&r3, 20), 2); /* the same index as before */
	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_ids_free(&ids);
}

static void test_getnext_order(void **state)
{
	struct tcx_snmp_ids ids;
	const struct spec a[] = {{"", 30, 1, 1, 0}, {"", 10, 1, 2, 0}, {"", 20, 1, 3, 0}};
	const struct spec b[] = {{"", 10, 1, 2, 0}, {"", 20, 1, 3, 0}};
	struct tcx_snmp_rows r1, r2;
	const struct tcx_snmp_row *row;
	unsigned col = 0, ncol, steps = 0;
	uint32_t idx = 0, seen[16];

	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, a, 3, 1, NULL, 0);
	r2 = build(&ids, b, 2, 2, &r1, 0); /* indices 2 and 3 remain */
	/* a whole walk of columns 2..4: (2,2) (2,3) (3,2) (3,3) (4,2) (4,3) */
	while (tcx_snmp_next(&r2, 2, 4, col, idx, &ncol, &row)) {
		assert_true(steps < 16);
		seen[steps++] = ncol * 100 + row->index;
		col = ncol;
		idx = row->index;
	}
	static const uint32_t walk[] = {202, 203, 302, 303, 402, 403};

	assert_int_equal(steps, 6);
	assert_memory_equal(seen, walk, sizeof(walk));
	/* from inside a gap, and from past the last index of a column */
	assert_true(tcx_snmp_next(&r2, 2, 4, 3, 1, &ncol, &row));
	assert_int_equal(ncol * 100 + row->index, 302);
	assert_true(tcx_snmp_next(&r2, 2, 4, 3, 99, &ncol, &row));
	assert_int_equal(ncol * 100 + row->index, 402);
	assert_false(tcx_snmp_next(&r2, 2, 4, 4, 3, &ncol, &row));
	assert_false(tcx_snmp_next(&r2, 2, 4, 9, 0, &ncol, &row));
	/* GET */
	assert_null(tcx_snmp_rows_find(&r2, 1));
	assert_non_null(tcx_snmp_rows_find(&r2, 3));

	/* the label table, two labels per row */
	uint32_t lab;
	col = 0;
	idx = 0;
	lab = 0;
	steps = 0;
	while (tcx_snmp_label_next(&r2, 2, 2, 3, col, idx, lab, &ncol, &row, &lab)) {
		assert_true(steps < 16);
		seen[steps++] = ncol * 1000 + row->index * 10 + lab;
		col = ncol;
		idx = row->index;
	}
	static const uint32_t labels[] = {2021, 2022, 2031, 2032, 3021, 3022, 3031, 3032};

	assert_int_equal(steps, 8);
	assert_memory_equal(seen, labels, sizeof(labels));
	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_ids_free(&ids);
}

static void test_scale(void **state)
{
	enum { N = 20000 };
	static struct spec sp[N];
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r1, r2;

	for (int i = 0; i < N; i++)
		sp[i] = (struct spec){"", (uint16_t)(1 + i / 5000), (uint32_t)i, (uint64_t)i, 0};
	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	r1 = build(&ids, sp, N, 1, NULL, 0);
	r2 = build(&ids, sp + 1, N - 1, 2, &r1, 0);
	assert_int_equal(r2.n, N - 1);
	assert_int_equal(r2.rows[0].index, 2);
	assert_int_equal(r2.rows[N - 2].index, N);
	assert_int_equal(ids.n, N - 1);
	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_ids_free(&ids);
}

/* Two filters with the same handle (u32's 800::fff past 4095 filters) whose
 * actions differ in kind or cookie are two rows, not one: the SNMP key is
 * the series identity. */
static void test_rows_that_differ_in_cookie_or_kind(void **state)
{
	const struct spec sp[] = {{"", 10, 0x80000fff, 100, 1},
	                          {"", 10, 0x80000fff, 200, 2},
	                          {"", 10, 0x80000fff, 300, 3}};
	struct tcx_snapshot *s = snap_of(sp, 3, 0);
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r;

	s->actions[1].cookie_len = 1;
	s->actions[1].cookie[0] = 0xaa;
	s->actions[0].kind = s->actions[1].kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	s->actions[2].kind = (uint8_t)tcx_snapshot_kind(s, "mirred");
	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	assert_int_equal(tcx_snmp_rows_build(&ids, s, 0, NULL, &r), 0);
	assert_int_equal(r.n, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(r.snap->actions[r.rows[i].obj].c[TCX_ACT_BYTES], 100 * (i + 1));
	tcx_snmp_rows_free(&r);
	tcx_snmp_ids_free(&ids);
	tcx_snapshot_unref(s);
}

/* A label GET reads the value from the row's label set: change the set, and
 * the GET changes with it. */
static void test_label_value_reads_the_set(void **state)
{
	static const char yaml[] =
	        "labels: [tenant, rule]\n"
	        "cookies:\n  \"0a0b\": [acme, first]\n  \"0c\": [beta, second]\n";
	struct tcx_config *cfg = tcx_config_load_buffer("t.yaml", yaml, strlen(yaml), NULL, NULL);
	const struct spec sp[] = {{"", 10, 1, 100, 0}, {"", 20, 1, 200, 0}, {"", 30, 1, 300, 0}};
	struct tcx_snapshot *s = snap_of(sp, 3, 0);
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r;
	const struct tcx_snmp_row *row, *second;
	char *v;

	assert_non_null(cfg);
	s->cfg = cfg; /* the snapshot's reference */
	memcpy(s->actions[0].cookie, "\x0a\x0b", 2);
	s->actions[0].cookie_len = 2;
	s->actions[1].cookie[0] = 0x0c;
	s->actions[1].cookie_len = 1;
	tcx_snapshot_classify(s);
	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	assert_int_equal(tcx_snmp_rows_build(&ids, s, 100, NULL, &r), 0);
	row = tcx_snmp_rows_find(&r, index_of(&r, 10));
	assert_non_null(row);
	assert_string_equal(tcx_snmp_label_value(&r, row, 1), "acme");
	assert_string_equal(tcx_snmp_label_value(&r, row, 2), "first");
	assert_string_equal(tcx_snmp_label_value(&r, row, 3), ""); /* no such label */
	assert_string_equal(tcx_snmp_label_value(&r, row, 0), "");
	second = tcx_snmp_rows_find(&r, index_of(&r, 20));
	assert_string_equal(tcx_snmp_label_value(&r, second, 2), "second");
	row = tcx_snmp_rows_find(&r, index_of(&r, 30)); /* no cookie */
	assert_string_equal(tcx_snmp_label_value(&r, row, 1), "");

	/* the value the GET serves is the set's */
	v = s->sets.text + s->sets.value[s->actions[1].labels * 2 + 1];
	assert_string_equal(v, "second");
	memcpy(v, "SECOND", 6);
	assert_string_equal(tcx_snmp_label_value(&r, second, 2), "SECOND");
	tcx_snmp_rows_free(&r);
	tcx_snmp_ids_free(&ids);
	tcx_snapshot_unref(s);
}

/* ---- qdiscs and classes ------------------------------------------------------------ */

struct qspec {
	const char *netns; /* device dev0 in it */
	const char *kind;
	uint32_t handle, parent;
	uint64_t bytes;
};

/* One device per netns named in the specs (dev0), a qdisc or a class per
 * spec; the first device's classes not dumped when fail_classes. */
static struct tcx_snapshot *qsnap_of(struct tcx_config *cfg, const struct qspec *qd, size_t nq,
                                     const struct qspec *cl, size_t nc, int fail_classes)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	const struct qspec *all[2] = {qd, cl};
	size_t n[2] = {nq, nc};

	s->qdevs = calloc(nq + nc + 1, sizeof(*s->qdevs));
	s->qdiscs = calloc(nq + 1, sizeof(*s->qdiscs));
	s->classes = calloc(nc + 1, sizeof(*s->classes));
	assert_true(s->qdevs && s->qdiscs && s->classes);
	for (int c = 0; c < 2; c++)
		for (size_t i = 0; i < n[c]; i++) {
			const struct qspec *q = &all[c][i];
			struct tcx_qrow *r =
			        c ? &s->classes[s->n_classes++] : &s->qdiscs[s->n_qdiscs++];
			size_t d = 0;

			while (d < s->n_qdevs && strcmp(s->qdevs[d].netns, q->netns) != 0)
				d++;
			if (d == s->n_qdevs) {
				snprintf(s->qdevs[d].netns, sizeof(s->qdevs[d].netns), "%s",
				         q->netns);
				snprintf(s->qdevs[d].dev, sizeof(s->qdevs[d].dev), "dev0");
				s->qdevs[d].ifindex = 2;
				s->qdevs[d].ok = !(fail_classes && d == 0);
				s->n_qdevs++;
			}
			r->qdev = (uint32_t)d;
			r->kind = (uint8_t)tcx_snapshot_kind(s, q->kind);
			r->handle = q->handle;
			r->parent = q->parent;
			r->c[TCX_QSTAT_BYTES] = q->bytes;
			r->c[TCX_QSTAT_PACKETS] = q->bytes / 100;
		}
	tcx_snapshot_classify(s);
	return s;
}

static struct tcx_snmp_rows qbuild(struct tcx_snmp_ids *ids, struct tcx_config *cfg,
                                   const struct qspec *qd, size_t nq, const struct qspec *cl,
                                   size_t nc, uint64_t now, const struct tcx_snmp_rows *prev,
                                   int fail_classes)
{
	struct tcx_snapshot *s = qsnap_of(cfg, qd, nq, cl, nc, fail_classes);
	struct tcx_snmp_rows r;

	assert_int_equal(tcx_snmp_rows_build(ids, s, now, prev, &r), 0);
	tcx_snapshot_unref(s);
	return r;
}

/* The row of the qdisc or class with this handle (and kind, and netns). */
static const struct tcx_snmp_row *qrow(const struct tcx_snmp_rows *r, const char *netns,
                                       const char *kind, uint32_t handle)
{
	const struct tcx_snapshot *s = r->snap;

	for (size_t i = 0; i < r->n; i++) {
		const struct tcx_qrow *q = r->table == TCX_SNMP_CLASSES
		                                   ? &s->classes[r->rows[i].obj]
		                                   : &s->qdiscs[r->rows[i].obj];

		if (q->handle == handle && strcmp(tcx_kind_name(s, q->kind), kind) == 0 &&
		    strcmp(s->qdevs[q->qdev].netns, netns) == 0)
			return &r->rows[i];
	}
	return NULL;
}

static uint32_t qindex(const struct tcx_snmp_rows *r, const char *netns, const char *kind,
                       uint32_t handle)
{
	const struct tcx_snmp_row *row = qrow(r, netns, kind, handle);

	return row ? row->index : 0;
}

/* A qdisc keeps its index while its identity (netns, device, kind, handle,
 * parent) is present; counters that go down mean it was deleted and added
 * again (a discontinuity, the same index); an index is never given again,
 * to a qdisc that comes back or to another kind under the same handle. */
static void test_qdisc_indices(void **state)
{
	struct tcx_snmp_ids ids;
	const struct qspec a[] = {{"", "htb", 0x10000, TC_H_ROOT, 1000},
	                          {"", "pfifo", 0x100000, 0x10010, 500},
	                          {"", "ingress", 0xffff0000, TC_H_INGRESS, 100},
	                          {"blue", "htb", 0x10000, TC_H_ROOT, 7}};
	/* pfifo 10: made again (bytes went down), ingress gone, fq_codel 20:
	 * new, order shuffled */
	const struct qspec b[] = {{"", "fq_codel", 0x200000, 0x10020, 9},
	                          {"blue", "htb", 0x10000, TC_H_ROOT, 8},
	                          {"", "pfifo", 0x100000, 0x10010, 50},
	                          {"", "htb", 0x10000, TC_H_ROOT, 2000}};
	/* ingress back; 10: a bfifo now; htb 1: grew */
	const struct qspec c[] = {{"", "htb", 0x10000, TC_H_ROOT, 3000},
	                          {"", "bfifo", 0x100000, 0x10010, 60},
	                          {"", "ingress", 0xffff0000, TC_H_INGRESS, 100},
	                          {"", "fq_codel", 0x200000, 0x10020, 9},
	                          {"blue", "htb", 0x10000, TC_H_ROOT, 9}};
	struct tcx_snmp_rows r1, r2, r3, r4;

	tcx_snmp_ids_init(&ids, TCX_SNMP_QDISCS);
	r1 = qbuild(&ids, NULL, a, 4, NULL, 0, 100, NULL, 0);
	assert_int_equal(r1.table, TCX_SNMP_QDISCS);
	assert_int_equal(r1.n, 4);
	assert_int_equal(qindex(&r1, "", "htb", 0x10000), 1);
	assert_int_equal(qindex(&r1, "", "pfifo", 0x100000), 2);
	assert_int_equal(qindex(&r1, "", "ingress", 0xffff0000), 3);
	assert_int_equal(qindex(&r1, "blue", "htb", 0x10000), 4); /* another netns */
	for (size_t i = 0; i < r1.n; i++)
		assert_int_equal(r1.rows[i].discontinuity, 0); /* the first collection */
	assert_int_equal(r1.last_change, 100);

	r2 = qbuild(&ids, NULL, b, 4, NULL, 0, 200, &r1, 0);
	assert_int_equal(r2.n, 4);
	assert_int_equal(qindex(&r2, "", "htb", 0x10000), 1);
	assert_int_equal(qindex(&r2, "", "pfifo", 0x100000), 2);
	assert_int_equal(qindex(&r2, "blue", "htb", 0x10000), 4);
	assert_int_equal(qindex(&r2, "", "fq_codel", 0x200000), 5);
	assert_null(tcx_snmp_rows_find(&r2, 3));                          /* ingress gone */
	assert_int_equal(tcx_snmp_rows_find(&r2, 1)->discontinuity, 0);   /* grew */
	assert_int_equal(tcx_snmp_rows_find(&r2, 2)->discontinuity, 200); /* replaced */
	assert_int_equal(tcx_snmp_rows_find(&r2, 4)->discontinuity, 0);
	assert_int_equal(tcx_snmp_rows_find(&r2, 5)->discontinuity, 200); /* new */
	assert_int_equal(r2.rows[0].index, 1);                            /* sorted by index */
	assert_int_equal(r2.rows[3].index, 5);
	assert_int_equal(r2.last_change, 200);

	r3 = qbuild(&ids, NULL, c, 5, NULL, 0, 300, &r2, 0);
	assert_int_equal(r3.n, 5);
	assert_int_equal(qindex(&r3, "", "bfifo", 0x100000), 6);     /* another kind: a new row */
	assert_int_equal(qindex(&r3, "", "ingress", 0xffff0000), 7); /* 3 is not reused */
	assert_null(tcx_snmp_rows_find(&r3, 2));
	assert_int_equal(tcx_snmp_rows_find(&r3, 1)->discontinuity, 0);
	assert_int_equal(tcx_snmp_rows_find(&r3, 7)->discontinuity, 300);
	assert_int_equal(r3.last_change, 300);

	/* the same rows again: last_change stays, the discontinuities too */
	r4 = qbuild(&ids, NULL, c, 5, NULL, 0, 400, &r3, 0);
	assert_int_equal(r4.last_change, 300);
	assert_int_equal(tcx_snmp_rows_find(&r4, 7)->discontinuity, 300);
	assert_string_equal(tcx_snmp_label_value(&r4, &r4.rows[0], 1), ""); /* no labels */

	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_rows_free(&r4);
	tcx_snmp_ids_free(&ids);
}

/* A class is identified by netns, device, class id and kind: one moved
 * under another parent keeps its index. Its label rows read the label set
 * `classes:` gives it, "" where it gives none; a device whose classes could
 * not be dumped keeps their indices for when they come back. */
static void test_class_rows_and_labels(void **state)
{
	static const char yaml[] = "labels: [tenant, rule]\n"
	                           "classes:\n"
	                           "  \"dev0 1:10\": {tenant: acme, rule: gold}\n"
	                           "  \"dev0 1:20\": [globex, \"\"]\n";
	struct tcx_config *cfg = tcx_config_load_buffer("t.yaml", yaml, strlen(yaml), NULL, NULL);
	const struct qspec q[] = {{"", "htb", 0x10000, TC_H_ROOT, 100}};
	const struct qspec a[] = {{"", "htb", 0x10001, TC_H_ROOT, 100},
	                          {"", "htb", 0x10010, 0x10001, 60},
	                          {"", "htb", 0x10020, 0x10001, 40}};
	/* 1:20 moved under 1:10 */
	const struct qspec b[] = {{"", "htb", 0x10001, TC_H_ROOT, 200},
	                          {"", "htb", 0x10010, 0x10001, 120},
	                          {"", "htb", 0x10020, 0x10010, 80}};
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r1, r2, r3, r4;
	const struct tcx_snmp_row *row;
	unsigned col = 0, ncol, steps = 0;
	uint32_t idx = 0, lab = 0, seen[16];

	assert_non_null(cfg);
	tcx_snmp_ids_init(&ids, TCX_SNMP_CLASSES);
	r1 = qbuild(&ids, cfg, q, 1, a, 3, 10, NULL, 0);
	assert_int_equal(r1.table, TCX_SNMP_CLASSES);
	assert_int_equal(r1.n, 3);
	assert_int_equal(qindex(&r1, "", "htb", 0x10001), 1);
	assert_int_equal(qindex(&r1, "", "htb", 0x10010), 2);
	assert_int_equal(qindex(&r1, "", "htb", 0x10020), 3);

	row = tcx_snmp_rows_find(&r1, 2);
	assert_string_equal(tcx_snmp_label_value(&r1, row, 1), "acme");
	assert_string_equal(tcx_snmp_label_value(&r1, row, 2), "gold");
	assert_string_equal(tcx_snmp_label_value(&r1, row, 3), ""); /* no such label */
	row = tcx_snmp_rows_find(&r1, 3);
	assert_string_equal(tcx_snmp_label_value(&r1, row, 1), "globex");
	assert_string_equal(tcx_snmp_label_value(&r1, row, 2), "");
	row = tcx_snmp_rows_find(&r1, 1); /* not in the map */
	assert_string_equal(tcx_snmp_label_value(&r1, row, 1), "");

	/* the class label table: two label rows per class, in (column, class,
	 * label) order */
	while (tcx_snmp_label_next(&r1, 2, 2, 3, col, idx, lab, &ncol, &row, &lab)) {
		assert_true(steps < 16);
		seen[steps++] = ncol * 1000 + row->index * 10 + lab;
		col = ncol;
		idx = row->index;
	}
	static const uint32_t walk[] = {2011, 2012, 2021, 2022, 2031, 2032,
	                                3011, 3012, 3021, 3022, 3031, 3032};

	assert_int_equal(steps, 12);
	assert_memory_equal(seen, walk, sizeof(walk));

	r2 = qbuild(&ids, cfg, q, 1, b, 3, 20, &r1, 0);
	assert_int_equal(qindex(&r2, "", "htb", 0x10020), 3); /* moved: the same class */
	assert_int_equal(tcx_snmp_rows_find(&r2, 3)->discontinuity, 0);
	assert_int_equal(r2.last_change, 10);

	/* the device's classes could not be dumped: no rows, indices kept */
	r3 = qbuild(&ids, cfg, q, 1, NULL, 0, 30, &r2, 1);
	assert_int_equal(r3.n, 0);
	assert_int_equal(r3.last_change, 30);
	r4 = qbuild(&ids, cfg, q, 1, b, 3, 40, &r3, 0);
	assert_int_equal(qindex(&r4, "", "htb", 0x10001), 1);
	assert_int_equal(qindex(&r4, "", "htb", 0x10010), 2);
	assert_int_equal(qindex(&r4, "", "htb", 0x10020), 3);
	assert_int_equal(tcx_snmp_rows_find(&r4, 1)->discontinuity, 0);

	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_rows_free(&r4);
	tcx_snmp_ids_free(&ids);
	tcx_config_unref(cfg);
}

/* ---- filters ------------------------------------------------------------------------ */

#define HAS_LOOKUPS (1u << TCX_FCTR_LOOKUPS)
#define HAS_HITS    (1u << TCX_FCTR_HITS)
#define HAS_MARK    (1u << TCX_FCTR_U32_MARK)

struct fspec {
	const char *kind;
	uint16_t pref;
	uint32_t handle;
	uint8_t present; /* hv_present */
	uint64_t lookups, hits, mark;
	uint8_t merged;
};

/* One target (dev0 parent 1:), one filter per spec, with the hit counters
 * its present mask names (two u32 key hits on the first that has hits). */
static struct tcx_snapshot *fsnap_of(const struct fspec *fs, size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);
	struct tcx_target *t = tcx_snapshot_add_target(s);
	int keys = 1;

	snprintf(t->dev, sizeof(t->dev), "dev0");
	snprintf(t->parent_name, sizeof(t->parent_name), "1:");
	t->parent = 0x10000;
	t->ifindex = 2;
	t->ok = 1;
	for (size_t i = 0; i < n; i++) {
		struct tcx_filter *f = tcx_snapshot_add_filter(s);
		uint64_t *v;

		f->target = 0;
		f->pref = fs[i].pref;
		f->handle = fs[i].handle;
		f->protocol = 0x0800;
		f->kind = (uint8_t)tcx_snapshot_kind(s, fs[i].kind);
		f->merged = fs[i].merged;
		if (!fs[i].present)
			continue;
		v = tcx_snapshot_add_hvals(s, f, keys && (fs[i].present & HAS_HITS) ? 2 : 0);
		assert_non_null(v);
		keys &= !f->n_keys;
		v[TCX_FCTR_LOOKUPS] = fs[i].present & HAS_LOOKUPS ? fs[i].lookups : 0;
		v[TCX_FCTR_HITS] = fs[i].present & HAS_HITS ? fs[i].hits : 0;
		v[TCX_FCTR_U32_MARK] = fs[i].present & HAS_MARK ? fs[i].mark : 0;
		for (unsigned k = 0; k < f->n_keys; k++)
			v[TCX_FCTR__MAX + k] = 1000 + k;
		f->hv_present = fs[i].present;
	}
	return s;
}

static struct tcx_snmp_rows fbuild(struct tcx_snmp_ids *ids, const struct fspec *fs, size_t n,
                                   uint64_t now, const struct tcx_snmp_rows *prev)
{
	struct tcx_snapshot *s = fsnap_of(fs, n);
	struct tcx_snmp_rows r;

	assert_int_equal(tcx_snmp_rows_build(ids, s, now, prev, &r), 0);
	tcx_snapshot_unref(s);
	return r;
}

/* The row of the filter of this kind and pref, or NULL. */
static const struct tcx_snmp_row *frow(const struct tcx_snmp_rows *r, const char *kind,
                                       uint16_t pref)
{
	const struct tcx_snapshot *s = r->snap;

	for (size_t i = 0; i < r->n; i++) {
		const struct tcx_filter *f = &s->filters[r->rows[i].obj];

		if (f->pref == pref && strcmp(tcx_kind_name(s, f->kind), kind) == 0)
			return &r->rows[i];
	}
	return NULL;
}

static uint32_t findex(const struct tcx_snmp_rows *r, const char *kind, uint16_t pref)
{
	const struct tcx_snmp_row *row = frow(r, kind, pref);

	return row ? row->index : 0;
}

/* The column of hit counter k in tcxFilterEntry. */
static unsigned fcol(unsigned k)
{
	return tcx_filter_counters.def[k].snmp_col;
}

/* A row per filter shown (not merged) that has some hit counter: a u32 rule
 * on a kernel without CONFIG_CLS_U32_PERF has none, and no row. The
 * counters a filter lacks have no instance: GET finds none, GETNEXT skips
 * it; the others are its values (u32's key hits are not in a column). */
static void test_filter_rows_and_absent_counters(void **state)
{
	const struct fspec fs[] = {
	        {"u32", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 50, 20, 0, 0},
	        {"u32", 20, 0x80000800, 0, 0, 0, 0, 0}, /* no PERF: no counter */
	        {"matchall", 30, 1, HAS_HITS, 0, 7, 0, 0},
	        {"u32", 40, 0x80000800, HAS_MARK, 0, 0, 3, 0},
	        /* merged (into a filter of its identity, which carries the sum):
	         * not shown, whatever its counters */
	        {"u32", 45, 0x80000800, HAS_MARK, 0, 0, 4, 1},
	        {"basic", 50, 1, HAS_LOOKUPS | HAS_HITS, 9, 0, 0, 0},
	        {"bpf", 60, 1, 0, 0, 0, 0, 0},
	};
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r;
	const struct tcx_snmp_row *row;
	unsigned col = 0, ncol, steps = 0, lookups = fcol(TCX_FCTR_LOOKUPS),
	         hits = fcol(TCX_FCTR_HITS), mark = fcol(TCX_FCTR_U32_MARK);
	uint32_t idx = 0, seen[64];

	assert_int_equal(lookups, 12);
	assert_int_equal(hits, 13);
	assert_int_equal(mark, 14);
	assert_int_equal(tcx_filter_counters.def[TCX_FCTR_LOOKUPS].snmp, TCX_SNMP_COUNTER64);
	assert_int_equal(tcx_filter_counters.def[TCX_FCTR_HITS].snmp, TCX_SNMP_COUNTER64);
	assert_int_equal(tcx_filter_counters.def[TCX_FCTR_U32_MARK].snmp, TCX_SNMP_COUNTER32);

	tcx_snmp_ids_init(&ids, TCX_SNMP_FILTERS);
	r = fbuild(&ids, fs, 7, 100, NULL);
	assert_int_equal(r.table, TCX_SNMP_FILTERS);
	assert_int_equal(r.n, 4);
	assert_int_equal(findex(&r, "u32", 10), 1);
	assert_int_equal(findex(&r, "u32", 20), 0);
	assert_int_equal(findex(&r, "matchall", 30), 2);
	assert_int_equal(findex(&r, "u32", 40), 3);
	assert_int_equal(findex(&r, "u32", 45), 0);
	assert_int_equal(findex(&r, "basic", 50), 4);
	assert_int_equal(findex(&r, "bpf", 60), 0);
	for (size_t i = 0; i < r.n; i++)
		assert_int_equal(r.rows[i].discontinuity, 0);
	assert_int_equal(r.last_change, 100);

	/* GET: the identity columns and the discontinuity time of every row,
	 * the counters it has */
	row = tcx_snmp_rows_find(&r, 1);
	assert_true(tcx_snmp_has(&r, row, TCX_COL_FILTER_HANDLE));
	assert_true(tcx_snmp_has(&r, row, TCX_COL_FILTER_DISCONTINUITY_TIME));
	assert_true(tcx_snmp_has(&r, row, lookups));
	assert_true(tcx_snmp_has(&r, row, hits));
	assert_false(tcx_snmp_has(&r, row, mark));
	row = tcx_snmp_rows_find(&r, 2); /* matchall: hits only */
	assert_false(tcx_snmp_has(&r, row, lookups));
	assert_true(tcx_snmp_has(&r, row, hits));
	assert_false(tcx_snmp_has(&r, row, mark));
	assert_int_equal(r.snap->hvals[r.snap->filters[row->obj].hv + TCX_FCTR_HITS], 7);
	row = tcx_snmp_rows_find(&r, 3); /* a mark only */
	assert_false(tcx_snmp_has(&r, row, lookups));
	assert_false(tcx_snmp_has(&r, row, hits));
	assert_true(tcx_snmp_has(&r, row, mark));
	assert_true(tcx_snmp_has(&r, row, TCX_COL_FILTER_NETNS));
	row = tcx_snmp_rows_find(&r, 4); /* basic: hits of 0 are there */
	assert_true(tcx_snmp_has(&r, row, hits));
	assert_int_equal(r.snap->hvals[r.snap->filters[row->obj].hv + TCX_FCTR_HITS], 0);

	/* a walk of columns 11..15 skips the counters a row lacks */
	while (tcx_snmp_next(&r, 11, 15, col, idx, &ncol, &row)) {
		assert_true(steps < 64);
		seen[steps++] = ncol * 100 + row->index;
		col = ncol;
		idx = row->index;
	}
	static const uint32_t walk[] = {1101, 1102, 1103, 1104, /* handle */
	                                1201, 1204,             /* lookups */
	                                1301, 1302, 1304,       /* hits */
	                                1403,                   /* mark */
	                                1501, 1502, 1503, 1504};

	assert_int_equal(steps, sizeof(walk) / sizeof(walk[0]));
	assert_memory_equal(seen, walk, sizeof(walk));
	/* from a row without the counter, and past the last row that has it */
	assert_true(tcx_snmp_next(&r, 11, 15, lookups, 2, &ncol, &row));
	assert_int_equal(ncol * 100 + row->index, 1204);
	assert_true(tcx_snmp_next(&r, 11, 15, mark, 3, &ncol, &row));
	assert_int_equal(ncol * 100 + row->index, 1501);
	assert_true(tcx_snmp_next(&r, 11, 15, mark, 0, &ncol, &row));
	assert_int_equal(ncol * 100 + row->index, 1403);
	assert_string_equal(tcx_snmp_label_value(&r, &r.rows[0], 1), ""); /* no labels */

	tcx_snmp_rows_free(&r);
	tcx_snmp_ids_free(&ids);
}

/* A filter's index is stable while its identity (target, chain, protocol,
 * pref, kind, handle) has counters; a new one gets a new index; one that
 * goes and comes back never gets its old one. Lookups or hits going down
 * are another filter under the same identity (a discontinuity); the 32-bit
 * mark count going down alone is not (it wraps). */
static void test_filter_indices_and_discontinuities(void **state)
{
	const struct fspec a[] = {
	        {"u32", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 500, 200, 0, 0},
	        {"u32", 10, 0x80000801, HAS_LOOKUPS | HAS_HITS, 500, 300, 0, 0},
	        {"basic", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 40, 4, 0, 0}, /* another kind */
	        {"u32", 20, 0x80000800, HAS_MARK, 0, 0, 1000, 0},
	};
	/* 800::801 gone, matchall 30 new, order shuffled; 800::800's hits went
	 * down (replaced), 20's mark went down alone (wrapped), basic grew */
	const struct fspec b[] = {
	        {"matchall", 30, 1, HAS_HITS, 0, 1, 0, 0},
	        {"u32", 20, 0x80000800, HAS_MARK, 0, 0, 5, 0},
	        {"basic", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 80, 8, 0, 0},
	        {"u32", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 600, 10, 0, 0},
	};
	/* 800::801 back; 800::800 lost its counters (no row) */
	const struct fspec c[] = {
	        {"u32", 10, 0x80000800, 0, 0, 0, 0, 0},
	        {"u32", 10, 0x80000801, HAS_LOOKUPS | HAS_HITS, 1, 1, 0, 0},
	        {"basic", 10, 0x80000800, HAS_LOOKUPS | HAS_HITS, 90, 9, 0, 0},
	        {"u32", 20, 0x80000800, HAS_MARK, 0, 0, 6, 0},
	        {"matchall", 30, 1, HAS_HITS, 0, 2, 0, 0},
	};
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r1, r2, r3, r4;

	tcx_snmp_ids_init(&ids, TCX_SNMP_FILTERS);
	r1 = fbuild(&ids, a, 4, 100, NULL);
	assert_int_equal(r1.n, 4);
	assert_int_equal(tcx_snmp_rows_find(&r1, 1)->obj, 0);
	assert_int_equal(tcx_snmp_rows_find(&r1, 2)->obj, 1);
	assert_int_equal(findex(&r1, "basic", 10), 3);
	assert_int_equal(findex(&r1, "u32", 20), 4);

	r2 = fbuild(&ids, b, 4, 200, &r1);
	assert_int_equal(r2.n, 4);
	assert_int_equal(findex(&r2, "u32", 10), 1);
	assert_int_equal(findex(&r2, "basic", 10), 3);
	assert_int_equal(findex(&r2, "u32", 20), 4);
	assert_int_equal(findex(&r2, "matchall", 30), 5);
	assert_null(tcx_snmp_rows_find(&r2, 2));                          /* 800::801 gone */
	assert_int_equal(tcx_snmp_rows_find(&r2, 1)->discontinuity, 200); /* hits went down */
	assert_int_equal(tcx_snmp_rows_find(&r2, 3)->discontinuity, 0);   /* grew */
	assert_int_equal(tcx_snmp_rows_find(&r2, 4)->discontinuity, 0);   /* mark wrapped */
	assert_int_equal(tcx_snmp_rows_find(&r2, 5)->discontinuity, 200); /* new */
	assert_int_equal(r2.rows[0].index, 1);                            /* sorted by index */
	assert_int_equal(r2.rows[3].index, 5);
	assert_int_equal(r2.last_change, 200);

	r3 = fbuild(&ids, c, 5, 300, &r2);
	assert_int_equal(r3.n, 4);
	assert_null(tcx_snmp_rows_find(&r3, 1));              /* no counters: no row */
	assert_int_equal(tcx_snmp_rows_find(&r3, 6)->obj, 1); /* 800::801: not 2 again */
	assert_int_equal(tcx_snmp_rows_find(&r3, 6)->discontinuity, 300);
	assert_int_equal(findex(&r3, "basic", 10), 3);
	assert_int_equal(findex(&r3, "matchall", 30), 5);
	assert_int_equal(tcx_snmp_rows_find(&r3, 5)->discontinuity, 200); /* kept */
	assert_int_equal(r3.last_change, 300);

	/* the same rows again: last_change stays */
	r4 = fbuild(&ids, c, 5, 400, &r3);
	assert_int_equal(r4.last_change, 300);
	assert_int_equal(tcx_snmp_rows_find(&r4, 6)->discontinuity, 300);

	tcx_snmp_rows_free(&r1);
	tcx_snmp_rows_free(&r2);
	tcx_snmp_rows_free(&r3);
	tcx_snmp_rows_free(&r4);
	tcx_snmp_ids_free(&ids);
}

/* Give row q the plans of table pt: the value of the row of each role is
 * base + role; present: the roles the row has (bit role), the others
 * absent. */
static void set_plans(struct tcx_snapshot *s, struct tcx_qrow *q, const struct tcx_plans_table *pt,
                      uint64_t base, uint32_t roles)
{
	assert_non_null(pt);
	q->pt_id = (uint8_t)(tcx_plans_id(pt) + 1);
	q->pl = (uint32_t)s->n_xvals;
	q->pl_present = 0;
	for (unsigned i = 0; i < pt->n; i++) {
		s->xvals[s->n_xvals++] = base + pt->rows[i].role;
		if (pt->rows[i].role && (roles & (1u << pt->rows[i].role)))
			q->pl_present |= 1u << i;
	}
}

/* The plan columns of tcxClassTable and tcxQdiscTable: the value of the
 * row of the column's role (tcx_plans_role), a TcxGauge64 for rates and
 * bursts; no instance where the kind has no such row, where the row is
 * absent, or where the qrow has no plans at all (GET: tcx_snmp_has;
 * GETNEXT skips it). */
static void test_plan_columns(void **state)
{
	const struct qspec qd[] = {{"", "htb", 0x10000, TC_H_ROOT, 100},
	                           {"", "pfifo", 0x100000, 0x10010, 10},
	                           {"", "noqueue", 0, TC_H_ROOT, 0}};
	const struct qspec cl[] = {{"", "htb", 0x10001, TC_H_ROOT, 100},
	                           {"", "htb", 0x10010, 0x10001, 60},
	                           {"", "mq", 0x10002, TC_H_ROOT, 1}};
	struct tcx_snapshot *s = qsnap_of(NULL, qd, 3, cl, 3, 0);
	const uint64_t big = 5000000000ull; /* 40gbit: past 2^32 */
	const uint32_t all = ~0u, no_ceil = ~(1u << TCX_ROLE_CEIL);
	struct tcx_snmp_ids qids, cids;
	struct tcx_snmp_rows qr, cr;
	const struct tcx_snmp_row *c1, *c10, *cmq, *qhtb, *qfifo, *qnoq, *row;
	unsigned ncol;
	uint64_t v;
	int wide;

	(void)state;
	s->xvals = calloc(64, sizeof(*s->xvals));
	assert_non_null(s->xvals);
	s->cap_xvals = 64;
	set_plans(s, &s->classes[0], tcx_plans_lookup("htb", 1), big, no_ceil);
	set_plans(s, &s->classes[1], tcx_plans_lookup("htb", 1), 1000, all);
	set_plans(s, &s->qdiscs[0], tcx_plans_lookup("htb", 0), 2000, all);
	set_plans(s, &s->qdiscs[1], tcx_plans_lookup("pfifo", 0), 3000, all);
	tcx_snmp_ids_init(&qids, TCX_SNMP_QDISCS);
	tcx_snmp_ids_init(&cids, TCX_SNMP_CLASSES);
	assert_int_equal(tcx_snmp_rows_build(&qids, s, 10, NULL, &qr), 0);
	assert_int_equal(tcx_snmp_rows_build(&cids, s, 10, NULL, &cr), 0);
	tcx_snapshot_unref(s);
	c1 = qrow(&cr, "", "htb", 0x10001);
	c10 = qrow(&cr, "", "htb", 0x10010);
	cmq = qrow(&cr, "", "mq", 0x10002);
	qhtb = qrow(&qr, "", "htb", 0x10000);
	qfifo = qrow(&qr, "", "pfifo", 0x100000);
	qnoq = qrow(&qr, "", "noqueue", 0);
	assert_true(c1 && c10 && cmq && qhtb && qfifo && qnoq);

	/* every class column of htb's, its value and type */
	{
		const struct {
			unsigned col;
			enum tcx_plan_role role;
			int wide;
		} cc[] = {{TCX_COL_CLASS_RATE, TCX_ROLE_RATE, 1},
		          {TCX_COL_CLASS_CEIL, TCX_ROLE_CEIL, 1},
		          {TCX_COL_CLASS_BURST, TCX_ROLE_BURST, 1},
		          {TCX_COL_CLASS_CBURST, TCX_ROLE_CBURST, 1},
		          {TCX_COL_CLASS_PRIO, TCX_ROLE_PRIO, 0},
		          {TCX_COL_CLASS_QUANTUM, TCX_ROLE_QUANTUM, 0},
		          {TCX_COL_CLASS_LEVEL, TCX_ROLE_LEVEL, 0}};

		for (size_t i = 0; i < sizeof(cc) / sizeof(cc[0]); i++) {
			assert_true(tcx_snmp_is_plan_col(TCX_SNMP_CLASSES, cc[i].col));
			assert_true(tcx_snmp_has(&cr, c10, cc[i].col));
			v = 0;
			wide = -1;
			assert_int_equal(tcx_snmp_plan(&cr, c10, cc[i].col, &v, &wide), 1);
			assert_int_equal(v, 1000 + cc[i].role);
			assert_int_equal(wide, cc[i].wide);
			/* the mq class has no plans: no instance */
			assert_false(tcx_snmp_has(&cr, cmq, cc[i].col));
			assert_int_equal(tcx_snmp_plan(&cr, cmq, cc[i].col, &v, &wide), 0);
		}
	}
	assert_int_equal(tcx_snmp_plan(&cr, c1, TCX_COL_CLASS_RATE, &v, &wide), 1);
	assert_true(v == big + TCX_ROLE_RATE); /* 64 bits through */
	/* 1:1's ceil is absent: no instance, not a zero */
	assert_false(tcx_snmp_has(&cr, c1, TCX_COL_CLASS_CEIL));
	assert_int_equal(tcx_snmp_plan(&cr, c1, TCX_COL_CLASS_CEIL, &v, &wide), 0);
	/* the other columns are no plans' and every row has them */
	assert_false(tcx_snmp_is_plan_col(TCX_SNMP_CLASSES, TCX_COL_CLASS_DISCONTINUITY_TIME));
	assert_int_equal(tcx_snmp_plan(&cr, c10, TCX_COL_CLASS_KIND, &v, &wide), 0);
	assert_true(tcx_snmp_has(&cr, cmq, TCX_COL_CLASS_KIND));
	assert_true(tcx_snmp_has(&cr, cmq, TCX_COL_CLASS_DISCONTINUITY_TIME));

	/* GETNEXT: the ceil column holds 1:10 alone, then the burst column
	 * starts; the mq class is in no plan column */
	assert_true(tcx_snmp_next(&cr, TCX_CLASS_MIN_COL, TCX_COL_CLASS_LEVEL, TCX_COL_CLASS_CEIL,
	                          0, &ncol, &row));
	assert_int_equal(ncol, TCX_COL_CLASS_CEIL);
	assert_ptr_equal(row, c10);
	assert_true(tcx_snmp_next(&cr, TCX_CLASS_MIN_COL, TCX_COL_CLASS_LEVEL, TCX_COL_CLASS_CEIL,
	                          c10->index, &ncol, &row));
	assert_int_equal(ncol, TCX_COL_CLASS_BURST);
	assert_ptr_equal(row, c1);
	for (unsigned col = TCX_COL_CLASS_RATE; col <= TCX_COL_CLASS_LEVEL; col++)
		for (uint32_t idx = 0; tcx_snmp_next(&cr, TCX_CLASS_MIN_COL, TCX_COL_CLASS_LEVEL,
		                                     col, idx, &ncol, &row) &&
		                       ncol == col;
		     idx = row->index)
			assert_ptr_not_equal(row, cmq);
	assert_false(tcx_snmp_next(&cr, TCX_CLASS_MIN_COL, TCX_COL_CLASS_LEVEL, TCX_COL_CLASS_LEVEL,
	                           c10->index > c1->index ? c10->index : c1->index, &ncol, &row));

	/* qdiscs: htb's default class, pfifo's limit; noqueue has nothing */
	assert_int_equal(tcx_snmp_plan(&qr, qhtb, TCX_COL_QDISC_DEFAULT_CLASS, &v, &wide), 1);
	assert_int_equal(v, 2000 + TCX_ROLE_DEFAULT_CLASS);
	assert_int_equal(wide, 0);
	assert_false(tcx_snmp_has(&qr, qhtb, TCX_COL_QDISC_RATE));
	assert_false(tcx_snmp_has(&qr, qhtb, TCX_COL_QDISC_LIMIT_PACKETS));
	assert_int_equal(tcx_snmp_plan(&qr, qfifo, TCX_COL_QDISC_LIMIT_PACKETS, &v, &wide), 1);
	assert_int_equal(v, 3000 + TCX_ROLE_LIMIT_PACKETS);
	assert_false(tcx_snmp_has(&qr, qfifo, TCX_COL_QDISC_LIMIT_BYTES));
	assert_false(tcx_snmp_has(&qr, qfifo, TCX_COL_QDISC_DEFAULT_CLASS));
	for (unsigned col = TCX_COL_QDISC_RATE; col <= TCX_COL_QDISC_DEFAULT_CLASS; col++) {
		assert_true(tcx_snmp_is_plan_col(TCX_SNMP_QDISCS, col));
		assert_false(tcx_snmp_has(&qr, qnoq, col));
	}
	assert_true(tcx_snmp_has(&qr, qnoq, TCX_COL_QDISC_KIND));
	/* a class column's number is another plan in the qdisc table, and
	 * past the qdisc table's last column none at all */
	assert_false(tcx_snmp_is_plan_col(TCX_SNMP_QDISCS, TCX_COL_CLASS_LEVEL));
	assert_false(tcx_snmp_is_plan_col(TCX_SNMP_ACTIONS, TCX_COL_CLASS_RATE));
	assert_true(tcx_snmp_next(&qr, TCX_QDISC_MIN_COL, TCX_COL_QDISC_DEFAULT_CLASS,
	                          TCX_COL_QDISC_RATE, 0, &ncol, &row));
	assert_int_equal(ncol, TCX_COL_QDISC_LIMIT_PACKETS); /* no rate, no burst: skipped */
	assert_ptr_equal(row, qfifo);

	tcx_snmp_rows_free(&qr);
	tcx_snmp_rows_free(&cr);
	tcx_snmp_ids_free(&qids);
	tcx_snmp_ids_free(&cids);
}

/* DateAndTime (RFC 2579) of a time in ms of Unix time: the 11-octet form in
 * UTC, deci-seconds truncated; before 1970 as 1970, past 9999 as its last
 * deci-second. */
static void test_date_and_time(void **state)
{
	static const struct {
		int64_t ms;
		uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN];
	} cases[] = {
	        /* 2026-12-06 20:16:26.789 */
	        {1796588186789, {0x07, 0xea, 12, 6, 20, 16, 26, 7, '+', 0, 0}},
	        /* 2024-02-29 23:59:59.950: a leap day, the .95 truncated */
	        {1709251199950, {0x07, 0xe8, 2, 29, 23, 59, 59, 9, '+', 0, 0}},
	        /* the next ms: 2024-03-01 */
	        {1709251200000, {0x07, 0xe8, 3, 1, 0, 0, 0, 0, '+', 0, 0}},
	        {0, {0x07, 0xb2, 1, 1, 0, 0, 0, 0, '+', 0, 0}},
	        {99, {0x07, 0xb2, 1, 1, 0, 0, 0, 0, '+', 0, 0}},
	        {-1, {0x07, 0xb2, 1, 1, 0, 0, 0, 0, '+', 0, 0}},
	        {INT64_MIN, {0x07, 0xb2, 1, 1, 0, 0, 0, 0, '+', 0, 0}},
	        {253402300799999, {0x27, 0x0f, 12, 31, 23, 59, 59, 9, '+', 0, 0}},
	        {INT64_MAX, {0x27, 0x0f, 12, 31, 23, 59, 59, 9, '+', 0, 0}},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN];

		memset(dt, 0xee, sizeof(dt));
		tcx_snmp_date_and_time(cases[i].ms, dt);
		assert_memory_equal(dt, cases[i].dt, sizeof(dt));
	}
}

/* The columns of an action's times: tcxActionInstallTime and
 * tcxActionLastUseTime the DateAndTimes of its install and last use,
 * tcxActionNeverUsed true(1) without a first use, false(2) with one; a
 * row whose times are unknown has no instance in any of the three (GET:
 * tcx_snmp_has; GETNEXT skips it) but has its other columns; the other
 * tables have no such columns. */
static void test_action_time_columns(void **state)
{
	const struct spec sp[] = {
	        {"", 10, 1, 100, 1}, /* used */
	        {"", 20, 1, 0, 2},   /* never used */
	        {"", 30, 1, 300, 3}, /* times unknown (a terse row) */
	        {"", 40, 1, 0, 4},   /* never used */
	};
	static const unsigned cols[] = {TCX_COL_ACTION_INSTALL_TIME, TCX_COL_ACTION_LAST_USE_TIME,
	                                TCX_COL_ACTION_NEVER_USED};
	static const uint8_t installed[TCX_SNMP_DATE_AND_TIME_LEN] = {0x07, 0xea, 11,  30, 8, 5,
	                                                              9,    1,    '+', 0,  0};
	static const uint8_t last_used[TCX_SNMP_DATE_AND_TIME_LEN] = {0x07, 0xea, 12,  6, 20, 16,
	                                                              26,   7,    '+', 0, 0};
	static const uint8_t never[TCX_SNMP_DATE_AND_TIME_LEN] = {0x07, 0xea, 12,  6, 20, 17,
	                                                          0,    0,    '+', 0, 0};
	struct tcx_snapshot *s = snap_of(sp, 4, 0);
	const uint8_t known = 1u << TCX_TM_INSTALLED | 1u << TCX_TM_LAST_USED;
	const struct tcx_snmp_row *used, *unused, *unknown, *unused2, *row;
	uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN];
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows r;
	unsigned ncol;
	int truth;

	(void)state;
	s->actions[0].tm_present = known | 1u << TCX_TM_FIRST_USED;
	s->actions[0].tm[TCX_TM_INSTALLED] = 1796025909123;  /* 2026-11-30 08:05:09.123 */
	s->actions[0].tm[TCX_TM_FIRST_USED] = 1796025919000; /* 10 s later */
	s->actions[0].tm[TCX_TM_LAST_USED] = 1796588186789;  /* 2026-12-06 20:16:26.789 */
	s->actions[1].tm_present = known;
	s->actions[1].tm[TCX_TM_INSTALLED] = 1796588220000; /* 2026-12-06 20:17:00.000 */
	s->actions[1].tm[TCX_TM_LAST_USED] = 1796588220000; /* the kernel's: its install */
	s->actions[3].tm_present = known;
	s->actions[3].tm[TCX_TM_INSTALLED] = 1796588220000;
	s->actions[3].tm[TCX_TM_LAST_USED] = 1796588220000;
	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	assert_int_equal(tcx_snmp_rows_build(&ids, s, 10, NULL, &r), 0);
	tcx_snapshot_unref(s);
	used = tcx_snmp_rows_find(&r, index_of(&r, 10));
	unused = tcx_snmp_rows_find(&r, index_of(&r, 20));
	unknown = tcx_snmp_rows_find(&r, index_of(&r, 30));
	unused2 = tcx_snmp_rows_find(&r, index_of(&r, 40));
	assert_true(used && unused && unknown && unused2);
	assert_true(used->index < unused->index && unused->index < unknown->index &&
	            unknown->index < unused2->index);

	assert_int_equal(tcx_snmp_action_time(&r, used, TCX_COL_ACTION_INSTALL_TIME, dt, &truth),
	                 1);
	assert_memory_equal(dt, installed, sizeof(dt));
	assert_int_equal(tcx_snmp_action_time(&r, used, TCX_COL_ACTION_LAST_USE_TIME, dt, &truth),
	                 1);
	assert_memory_equal(dt, last_used, sizeof(dt));
	truth = 0;
	assert_int_equal(tcx_snmp_action_time(&r, used, TCX_COL_ACTION_NEVER_USED, dt, &truth), 1);
	assert_int_equal(truth, TCX_SNMP_FALSE);
	assert_int_equal(tcx_snmp_action_time(&r, unused, TCX_COL_ACTION_INSTALL_TIME, dt, &truth),
	                 1);
	assert_memory_equal(dt, never, sizeof(dt));
	assert_int_equal(tcx_snmp_action_time(&r, unused, TCX_COL_ACTION_LAST_USE_TIME, dt, &truth),
	                 1);
	assert_memory_equal(dt, never, sizeof(dt));
	truth = 0;
	assert_int_equal(tcx_snmp_action_time(&r, unused, TCX_COL_ACTION_NEVER_USED, dt, &truth),
	                 1);
	assert_int_equal(truth, TCX_SNMP_TRUE);
	for (size_t k = 0; k < 3; k++) {
		assert_true(tcx_snmp_has(&r, used, cols[k]));
		assert_true(tcx_snmp_has(&r, unused, cols[k]));
		assert_false(tcx_snmp_has(&r, unknown, cols[k]));
		assert_int_equal(tcx_snmp_action_time(&r, unknown, cols[k], dt, &truth), 0);
	}
	/* the row without times has its other columns */
	assert_true(tcx_snmp_has(&r, unknown, TCX_COL_ACTION_KIND));
	assert_true(tcx_snmp_has(&r, unknown, TCX_COL_ACTION_DISCONTINUITY_TIME));
	assert_true(tcx_snmp_has(&r, unknown, tcx_action_counters.def[TCX_ACT_BYTES].snmp_col));
	/* other columns are no times' */
	assert_int_equal(
	        tcx_snmp_action_time(&r, used, TCX_COL_ACTION_DISCONTINUITY_TIME, dt, &truth), 0);
	assert_int_equal(tcx_snmp_action_time(&r, used, TCX_COL_ACTION_KIND, dt, &truth), 0);

	/* GETNEXT: each time column walks the rows with times, the unknown
	 * one skipped, then the next column starts */
	for (size_t k = 0; k < 3; k++) {
		assert_true(tcx_snmp_next(&r, TCX_ACTION_MIN_COL, TCX_COL_ACTION_NEVER_USED,
		                          cols[k], 0, &ncol, &row));
		assert_int_equal(ncol, cols[k]);
		assert_ptr_equal(row, used);
		assert_true(tcx_snmp_next(&r, TCX_ACTION_MIN_COL, TCX_COL_ACTION_NEVER_USED,
		                          cols[k], used->index, &ncol, &row));
		assert_int_equal(ncol, cols[k]);
		assert_ptr_equal(row, unused);
		assert_true(tcx_snmp_next(&r, TCX_ACTION_MIN_COL, TCX_COL_ACTION_NEVER_USED,
		                          cols[k], unused->index, &ncol, &row));
		assert_int_equal(ncol, cols[k]);
		assert_ptr_equal(row, unused2);
		if (k < 2) {
			assert_true(tcx_snmp_next(&r, TCX_ACTION_MIN_COL, TCX_COL_ACTION_NEVER_USED,
			                          cols[k], unused2->index, &ncol, &row));
			assert_int_equal(ncol, cols[k + 1]);
			assert_ptr_equal(row, used);
		} else {
			assert_false(tcx_snmp_next(&r, TCX_ACTION_MIN_COL,
			                           TCX_COL_ACTION_NEVER_USED, cols[k],
			                           unused2->index, &ncol, &row));
		}
	}
	/* the discontinuity time before them: every row */
	assert_true(tcx_snmp_next(&r, TCX_ACTION_MIN_COL, TCX_COL_ACTION_NEVER_USED,
	                          TCX_COL_ACTION_DISCONTINUITY_TIME, unused->index, &ncol, &row));
	assert_int_equal(ncol, TCX_COL_ACTION_DISCONTINUITY_TIME);
	assert_ptr_equal(row, unknown);

	tcx_snmp_rows_free(&r);
	tcx_snmp_ids_free(&ids);
}

/* The plan columns of 32-bit roles are Unsigned32: every row of those
 * roles reads a field of 32 bits at most (a 64-bit one would need a
 * TcxGauge64 column). */
static void test_plan_roles_fit_their_columns(void **state)
{
	(void)state;
	for (size_t k = 0; k < tcx_plans_n_tables; k++) {
		const struct tcx_plans_table *t = tcx_plans_tables[k];

		for (unsigned i = 0; i < t->n; i++) {
			const struct tcx_plan *r = &t->rows[i];

			switch (r->role) {
			case TCX_ROLE_PRIO:
			case TCX_ROLE_QUANTUM:
			case TCX_ROLE_LEVEL:
			case TCX_ROLE_LIMIT_PACKETS:
			case TCX_ROLE_LIMIT_BYTES:
			case TCX_ROLE_DEFAULT_CLASS:
				if (r->how != TCX_PLAN_U32 && r->how != TCX_PLAN_U16 &&
				    r->how != TCX_PLAN_U8 && r->how != TCX_PLAN_ATTR)
					fail_msg("%s (%s) has a 32-bit column but reads %u",
					         r->family, t->kind, r->how);
				if (r->div != 0 || (r->flags & TCX_PLAN_POW2))
					fail_msg("%s: not an integer as read", r->family);
				break;
			default:
				break;
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_indices_are_stable_and_never_reused),
	        cmocka_unit_test(test_discontinuity_on_reset_and_replace),
	        cmocka_unit_test(test_timestamps_follow_the_master),
	        cmocka_unit_test(test_action_index_known_or_not),
	        cmocka_unit_test(test_failed_target_keeps_indices),
	        cmocka_unit_test(test_getnext_order),
	        cmocka_unit_test(test_scale),
	        cmocka_unit_test(test_rows_that_differ_in_cookie_or_kind),
	        cmocka_unit_test(test_label_value_reads_the_set),
	        cmocka_unit_test(test_qdisc_indices),
	        cmocka_unit_test(test_class_rows_and_labels),
	        cmocka_unit_test(test_filter_rows_and_absent_counters),
	        cmocka_unit_test(test_filter_indices_and_discontinuities),
	        cmocka_unit_test(test_plan_columns),
	        cmocka_unit_test(test_plan_roles_fit_their_columns),
	        cmocka_unit_test(test_date_and_time),
	        cmocka_unit_test(test_action_time_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
