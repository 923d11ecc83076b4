/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "collectors/qrates.h"
#include "lib/hash.h"

/* The identities of a collection's rows: the hash of row j's (its qdiscs,
 * then its classes) in key[j]. */
struct keys {
	uint64_t *key;
	size_t n, cap;
};

struct tcx_qrates {
	struct keys prev, cur;
	struct tcx_snapshot *prev_s; /* a reference; NULL: no collection before */
	double prev_t;               /* when it started */
};

/* An index of prev's keys, made during an update only when a row is not
 * at its place of the collection before (a row added or gone before it):
 * idx[i] is j + 1 for the first row j of a hash, 0 free; at most half
 * full. Freed after the update: it is not part of the daemon's memory
 * between collections, when the rows stay where they were. */
struct index {
	uint32_t *idx;
	size_t mask; /* slots - 1 */
	int failed;  /* out of memory: rows not at their place have no rate */
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

void tcx_qrates_free(struct tcx_qrates *q)
{
	if (!q)
		return;
	free(q->prev.key);
	free(q->cur.key);
	tcx_snapshot_unref(q->prev_s);
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

/* The index slot of key: the one that holds it, or the free one where it
 * would go. */
static uint32_t *slot(const struct index *ix, const struct keys *k, uint64_t key)
{
	size_t i = (size_t)key & ix->mask;

	while (ix->idx[i] && k->key[ix->idx[i] - 1] != key)
		i = (i + 1) & ix->mask;
	return &ix->idx[i];
}

static int index_make(struct index *ix, const struct keys *k)
{
	size_t slots = 16;

	while (slots < 2 * k->n)
		slots <<= 1;
	if (!(ix->idx = calloc(slots, sizeof(*ix->idx)))) {
		ix->failed = 1;
		return -1;
	}
	ix->mask = slots - 1;
	for (size_t j = 0; j < k->n; j++) {
		uint32_t *at = slot(ix, k, k->key[j]);

		if (!*at) /* the same identity twice: the first is found */
			*at = (uint32_t)j + 1;
	}
	return 0;
}

/* Row j of s: its qdiscs, then its classes. */
static const struct tcx_qrow *row_at(const struct tcx_snapshot *s, size_t j)
{
	return j < s->n_qdiscs ? &s->qdiscs[j] : &s->classes[j - s->n_qdiscs];
}

/* The row of key in the collection before, or NULL: the row at the same
 * position j, as rows come in the same order from one collection to the
 * next unless something changed, else the first of that identity. */
static const struct tcx_qrow *find(const struct tcx_qrates *q, struct index *ix, size_t j,
                                   uint64_t key)
{
	const struct keys *k = &q->prev;
	const uint32_t *at;

	if (!q->prev_s)
		return NULL;
	if (j < k->n && k->key[j] == key)
		return row_at(q->prev_s, j);
	if (ix->failed || (!ix->idx && index_make(ix, k) < 0))
		return NULL;
	at = slot(ix, k, key);
	return *at ? row_at(q->prev_s, *at - 1) : NULL;
}

/* Make k empty with room for n rows. */
static int keys_reset(struct keys *k, size_t n)
{
	if (n > UINT32_MAX / 2)
		return -1;
	if (k->cap < n || k->cap > 2 * n + 64) {
		uint64_t *key = realloc(k->key, (n ? n : 1) * sizeof(*key));

		if (!key)
			return -1;
		k->key = key;
		k->cap = n;
	}
	k->n = 0;
	return 0;
}

/* The rates of row r from the same row `was` of dt seconds before. */
static void row_rates(struct tcx_qrow *r, const struct tcx_qrow *was, double dt)
{
	const struct tcx_counter_def *defs = tcx_class_counters.def; /* widths as qdiscs' */
	unsigned both = r->stats_present & was->stats_present;

	r->rates_present = 0;
	/* bytes or packets lower than before: another object (replaced) */
	for (unsigned k = 0; k < TCX_QRATE__MAX; k++) {
		enum tcx_qstat c = src[k];

		if ((both & (1u << c)) && defs[c].replace && r->c[c] < was->c[c])
			return;
	}
	for (unsigned k = 0; k < TCX_QRATE__MAX; k++) {
		enum tcx_qstat c = src[k];

		if (!(both & (1u << c)))
			continue;
		r->rates[k] = (float)((double)tcx_counter_sub(&defs[c], r->c[c], was->c[c]) / dt);
		r->rates_present |= (uint8_t)(1u << k);
	}
}

static void update_rows(struct tcx_qrates *q, struct index *ix, struct tcx_snapshot *s,
                        int is_class, double dt)
{
	struct tcx_qrow *rows = is_class ? s->classes : s->qdiscs;
	size_t n = is_class ? s->n_classes : s->n_qdiscs;

	for (size_t i = 0; i < n; i++) {
		struct tcx_qrow *r = &rows[i];
		size_t j = q->cur.n++;
		uint64_t key = row_key(s, is_class, i);

		q->cur.key[j] = key;
		r->rates_present = 0;
		if (dt > 0) {
			const struct tcx_qrow *was = find(q, ix, j, key);

			if (was)
				row_rates(r, was, dt);
		}
	}
}

int tcx_qrates_update(struct tcx_qrates *q, struct tcx_snapshot *s, double mono_s)
{
	double dt = q->prev_s ? mono_s - q->prev_t : 0;
	struct index ix = {0};
	struct keys k;

	s->rates_interval_s = 0;
	if (keys_reset(&q->cur, s->n_qdiscs + s->n_classes) < 0) {
		for (size_t i = 0; i < s->n_qdiscs; i++)
			s->qdiscs[i].rates_present = 0;
		for (size_t i = 0; i < s->n_classes; i++)
			s->classes[i].rates_present = 0;
		tcx_snapshot_unref(q->prev_s);
		q->prev_s = NULL;
		return -1;
	}
	update_rows(q, &ix, s, 0, dt);
	update_rows(q, &ix, s, 1, dt);
	free(ix.idx);
	if (dt > 0)
		s->rates_interval_s = dt;
	/* this collection is the next one's "before" */
	k = q->prev;
	q->prev = q->cur;
	q->cur = k;
	tcx_snapshot_unref(q->prev_s);
	q->prev_s = tcx_snapshot_ref(s);
	q->prev_t = mono_s;
	return 0;
}
