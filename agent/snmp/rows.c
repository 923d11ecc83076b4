/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snmp/rows.h"

/* One action identity (struct tcx_row_id) seen so far, and its index. */
struct tcx_snmp_id {
	struct tcx_row_id id;
	uint64_t hash;
	uint64_t discontinuity;
	uint64_t c[TCX_ACT_CTR__MAX]; /* its counters when last seen, to see replacements */
	uint32_t index;
	uint32_t act_index; /* the kernel's action index when known, likewise */
	uint32_t generation;
};

void tcx_snmp_ids_init(struct tcx_snmp_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	ids->next_index = 1;
}

void tcx_snmp_ids_free(struct tcx_snmp_ids *ids)
{
	free(ids->e);
	free(ids->slots);
	memset(ids, 0, sizeof(*ids));
}

/* The slot of id (hash h) in the index: its entry's, or the empty one it
 * would take. */
static uint32_t *slot_for(const struct tcx_snmp_ids *ids, const struct tcx_row_id *id, uint64_t h)
{
	size_t mask = ids->n_slots - 1, i = h & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t *slot = &ids->slots[i];

		if (!*slot ||
		    (ids->e[*slot - 1].hash == h && tcx_row_id_equal(&ids->e[*slot - 1].id, id)))
			return slot;
	}
}

/* Index the entries anew in n_slots slots, keeping those of the current
 * generation only when prune is set. */
static int reindex(struct tcx_snmp_ids *ids, size_t n_slots, int prune)
{
	uint32_t *slots = calloc(n_slots, sizeof(*slots));
	size_t kept = 0;

	if (!slots)
		return -ENOMEM;
	free(ids->slots);
	ids->slots = slots;
	ids->n_slots = n_slots;
	for (size_t i = 0; i < ids->n; i++) {
		if (prune && ids->e[i].generation != ids->generation)
			continue;
		ids->e[kept] = ids->e[i];
		*slot_for(ids, &ids->e[kept].id, ids->e[kept].hash) = (uint32_t)kept + 1;
		kept++;
	}
	ids->n = kept;
	return 0;
}

static int cmp_index(const void *a, const void *b)
{
	const struct tcx_snmp_row *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int tcx_snmp_rows_build(struct tcx_snmp_ids *ids, struct tcx_snapshot *snap, uint64_t now,
                        const struct tcx_snmp_rows *prev, struct tcx_snmp_rows *out)
{
	int first = ids->generation == 0;

	memset(out, 0, sizeof(*out));
	out->rows = malloc((snap->n_actions ? snap->n_actions : 1) * sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	ids->generation++;
	for (size_t i = 0; i < snap->n_actions; i++) {
		const struct tcx_action *a = &snap->actions[i];
		struct tcx_snmp_id *e;
		struct tcx_row_id id;
		uint32_t *slot;
		uint64_t h;

		if (!tcx_action_shown(a))
			continue;
		if ((ids->n + 1) * 2 > ids->n_slots &&
		    reindex(ids, ids->n_slots ? ids->n_slots * 2 : 1024, 0) < 0)
			goto oom;
		tcx_row_id_of(snap, i, &id);
		h = tcx_row_id_hash(&id);
		slot = slot_for(ids, &id, h);
		if (!*slot) {
			if (ids->n == ids->cap) {
				size_t cap = ids->cap ? 2 * ids->cap : 1024;
				void *p = realloc(ids->e, cap * sizeof(*ids->e));

				if (!p)
					goto oom;
				ids->e = p;
				ids->cap = cap;
			}
			e = &ids->e[ids->n];
			*slot = (uint32_t)++ids->n;
			e->id = id;
			e->hash = h;
			e->index = ids->next_index++;
			/* A row that appears after the first collection starts
			 * its counters then. */
			e->discontinuity = first ? 0 : now;
		} else if ((e = &ids->e[*slot - 1])->generation == ids->generation) {
			continue; /* the same identity twice (targets that overlap): once */
		} else if (tcx_action_replaced(e->c, e->act_index, a->c, a->index)) {
			/* Replaced under the same identity: new counters. */
			e->discontinuity = now;
		}
		memcpy(e->c, a->c, sizeof(e->c));
		e->act_index = a->index;
		e->generation = ids->generation;
		out->rows[out->n++] =
		        (struct tcx_snmp_row){e->index, (uint32_t)i, e->discontinuity};
	}
	/* Identities gone from a complete snapshot are forgotten; after a failed
	 * target they are kept, so that its rows keep their indices when it
	 * comes back. */
	if (!tcx_snapshot_failed_targets(snap) && ids->n > out->n &&
	    reindex(ids, ids->n_slots, 1) < 0)
		goto oom;
	qsort(out->rows, out->n, sizeof(*out->rows), cmp_index);
	out->snap = tcx_snapshot_ref(snap);
	out->last_change = now;
	out->built_at = now;
	if (prev && prev->n == out->n) {
		size_t k = 0;

		while (k < out->n && prev->rows[k].index == out->rows[k].index)
			k++;
		if (k == out->n)
			out->last_change = prev->last_change;
	}
	return 0;
oom:
	free(out->rows);
	memset(out, 0, sizeof(*out));
	return -ENOMEM;
}

void tcx_snmp_rows_free(struct tcx_snmp_rows *r)
{
	tcx_snapshot_unref(r->snap);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

uint32_t tcx_snmp_timestamp(uint64_t event, int64_t offset)
{
	int64_t t = (int64_t)event + offset;

	/* (TimeTicks wrap after 497 days, as the master's sysUpTime does.) */
	return event && t > 0 ? (uint32_t)t : 0;
}

/* The first row whose index is > index (or >= when inclusive). */
static size_t lower(const struct tcx_snmp_rows *r, uint32_t index, int inclusive)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->rows[mid].index < index || (!inclusive && r->rows[mid].index == index))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct tcx_snmp_row *tcx_snmp_rows_find(const struct tcx_snmp_rows *r, uint32_t index)
{
	size_t i = lower(r, index, 1);

	return i < r->n && r->rows[i].index == index ? &r->rows[i] : NULL;
}

const char *tcx_snmp_label_value(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row,
                                 uint32_t label)
{
	const struct tcx_snapshot *s = r->snap;

	if (label < 1 || label > s->sets.n_labels)
		return "";
	return tcx_labelset_value(s, s->actions[row->action].labels, label - 1);
}

int tcx_snmp_next(const struct tcx_snmp_rows *r, unsigned min_col, unsigned max_col, unsigned col,
                  uint32_t index, unsigned *ncol, const struct tcx_snmp_row **nrow)
{
	if (!r->n)
		return 0;
	if (col < min_col) {
		col = min_col;
		index = 0;
	}
	for (; col <= max_col; col++, index = 0) {
		size_t i = lower(r, index, 0);

		if (i < r->n) {
			*ncol = col;
			*nrow = &r->rows[i];
			return 1;
		}
	}
	return 0;
}

int tcx_snmp_label_next(const struct tcx_snmp_rows *r, unsigned n_labels, unsigned min_col,
                        unsigned max_col, unsigned col, uint32_t index, uint32_t label,
                        unsigned *ncol, const struct tcx_snmp_row **nrow, uint32_t *nlabel)
{
	if (!r->n || !n_labels)
		return 0;
	if (col < min_col) {
		col = min_col;
		index = 0;
		label = 0;
	}
	for (; col <= max_col; col++, index = 0, label = 0) {
		size_t i = lower(r, index, 1);

		if (i < r->n && r->rows[i].index == index && label < n_labels) {
			*ncol = col;
			*nrow = &r->rows[i];
			*nlabel = label + 1;
			return 1;
		}
		if (i < r->n && r->rows[i].index == index)
			i++;
		if (i < r->n) {
			*ncol = col;
			*nrow = &r->rows[i];
			*nlabel = 1;
			return 1;
		}
	}
	return 0;
}
