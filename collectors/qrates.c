/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "collectors/qrates.h"
#include "lib/hash.h"

/* One row's counters as kept for the next collection. */
struct entry {
	uint64_t key; /* a hash of the row's identity, never 0 */
	uint64_t c[TCX_QRATE__MAX];
	uint32_t present; /* bit k: c[k] was sent */
};

/* A collection's rows: their entries in the order the rows came, and an
 * open-addressed index of them by key (idx[i]: an entry's position + 1, 0
 * free; at most half full). 40 bytes a row and 4 to 8 of index, where a
 * table of the entries themselves at most half full took 80 to 160
 * (21 MB of the daemon's 97 at 100k qdiscs and classes). */
struct table {
	struct entry *e;
	size_t n, cap;
	uint32_t *idx;
	size_t mask; /* slots - 1 */
};

struct tcx_qrates {
	struct table prev, cur;
	double prev_s; /* when the collection kept in prev started */
	int have_prev;
};

/* The counters behind each rate. */
static const enum tcx_qstat src[TCX_QRATE__MAX] = {
        [TCX_QRATE_BYTES] = TCX_QSTAT_BYTES,
        [TCX_QRATE_PACKETS] = TCX_QSTAT_PACKETS,
        [TCX_QRATE_DROPS] = TCX_QSTAT_DROPS,
};

struct tcx_qrates *tcx_qrates_new(void)
{
	return calloc(1, sizeof(struct tcx_qrates));
}

static void table_free(struct table *t)
{
	free(t->e);
	free(t->idx);
}

void tcx_qrates_free(struct tcx_qrates *q)
{
	if (!q)
		return;
	table_free(&q->prev);
	table_free(&q->cur);
	free(q);
}

static uint64_t row_key(const struct tcx_snapshot *s, int is_class, size_t i)
{
	struct tcx_qrow_id id;
	uint64_t h;

	tcx_qrow_id_of(s, is_class, i, &id);
	h = tcx_hash_bytes((uint64_t)is_class + 1, &id, sizeof(id));
	return h ? h : 1;
}

/* The index slot of key in t: the one that holds it, or the free one where
 * it would go. */
static uint32_t *slot(const struct table *t, uint64_t key)
{
	size_t i = (size_t)key & t->mask;

	while (t->idx[i] && t->e[t->idx[i] - 1].key != key)
		i = (i + 1) & t->mask;
	return &t->idx[i];
}

/* The entry of key in t (of a collection before), or NULL. Rows come in
 * the same order from one collection to the next unless something
 * changed, so the entry at the row's own position `at` is tried first. */
static const struct entry *find(const struct table *t, size_t at, uint64_t key)
{
	const uint32_t *s;

	if (!t->idx)
		return NULL;
	if (at < t->n && t->e[at].key == key)
		return &t->e[at];
	s = slot(t, key);
	return *s ? &t->e[*s - 1] : NULL;
}

/* Make t empty with room for n entries. */
static int table_reset(struct table *t, size_t n)
{
	size_t slots = 16;

	if (n > UINT32_MAX / 2)
		return -1;
	while (slots < 2 * n)
		slots <<= 1;
	if (t->cap < n || t->cap > 2 * n + 64) {
		struct entry *e = realloc(t->e, (n ? n : 1) * sizeof(*e));

		if (!e)
			return -1;
		t->e = e;
		t->cap = n;
	}
	if (!t->idx || t->mask + 1 != slots) {
		uint32_t *idx = calloc(slots, sizeof(*idx));

		if (!idx)
			return -1;
		free(t->idx);
		t->idx = idx;
		t->mask = slots - 1;
	} else {
		memset(t->idx, 0, slots * sizeof(*t->idx));
	}
	t->n = 0;
	return 0;
}

/* The rates of row r from its entry `was` of dt seconds before. */
static void row_rates(struct tcx_qrow *r, const struct entry *was, double dt)
{
	const struct tcx_counter_def *defs = tcx_class_counters.def; /* widths as qdiscs' */

	r->rates_present = 0;
	/* bytes or packets lower than before: another object (replaced) */
	for (unsigned k = 0; k < TCX_QRATE__MAX; k++) {
		const struct tcx_counter_def *d = &defs[src[k]];

		if ((was->present & (1u << k)) && (r->stats_present & (1u << src[k])) &&
		    d->replace && r->c[src[k]] < was->c[k])
			return;
	}
	for (unsigned k = 0; k < TCX_QRATE__MAX; k++) {
		uint64_t delta;

		if (!(was->present & (1u << k)) || !(r->stats_present & (1u << src[k])))
			continue;
		delta = tcx_counter_sub(&defs[src[k]], r->c[src[k]], was->c[k]);
		r->rates[k] = (float)((double)delta / dt);
		r->rates_present |= (uint8_t)(1u << k);
	}
}

static void update_rows(struct tcx_qrates *q, struct tcx_snapshot *s, int is_class, double dt)
{
	struct tcx_qrow *rows = is_class ? s->classes : s->qdiscs;
	size_t n = is_class ? s->n_classes : s->n_qdiscs;

	for (size_t i = 0; i < n; i++) {
		struct tcx_qrow *r = &rows[i];
		uint64_t key = row_key(s, is_class, i);
		uint32_t *at = slot(&q->cur, key);
		struct entry *e;

		r->rates_present = 0;
		if (dt > 0) {
			const struct entry *was = find(&q->prev, q->cur.n, key);

			if (was)
				row_rates(r, was, dt);
		}
		if (*at) /* the same identity twice: the first is kept */
			continue;
		e = &q->cur.e[q->cur.n++];
		*at = (uint32_t)q->cur.n;
		e->key = key;
		e->present = 0;
		for (unsigned k = 0; k < TCX_QRATE__MAX; k++) {
			e->c[k] = r->c[src[k]];
			if (r->stats_present & (1u << src[k]))
				e->present |= 1u << k;
		}
	}
}

int tcx_qrates_update(struct tcx_qrates *q, struct tcx_snapshot *s, double mono_s)
{
	double dt = q->have_prev ? mono_s - q->prev_s : 0;
	struct table t;

	s->rates_interval_s = 0;
	if (table_reset(&q->cur, s->n_qdiscs + s->n_classes) < 0) {
		for (size_t i = 0; i < s->n_qdiscs; i++)
			s->qdiscs[i].rates_present = 0;
		for (size_t i = 0; i < s->n_classes; i++)
			s->classes[i].rates_present = 0;
		q->have_prev = 0;
		return -1;
	}
	if (!q->have_prev)
		dt = 0;
	update_rows(q, s, 0, dt);
	update_rows(q, s, 1, dt);
	if (dt > 0)
		s->rates_interval_s = dt;
	/* this collection's counters are the next one's "before" */
	t = q->prev;
	q->prev = q->cur;
	q->cur = t;
	q->prev_s = mono_s;
	q->have_prev = 1;
	return 0;
}
