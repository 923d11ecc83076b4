/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snmp/rows.h"

/* One action identity (see tcx_snapshot_merge()): where it is (namespace,
 * device or block, parent) and which action it is (chain, protocol, pref,
 * classifier, handle, order, action kind, cookie). Kinds go by name: the
 * index of a kind differs from one snapshot to the next. */
struct tcx_snmp_id {
	char *key; /* NULL: empty slot */
	size_t keylen;
	uint64_t hash;
	uint32_t index;
	uint64_t discontinuity;
	uint32_t act_index; /* the kernel's action index when known, to see replacements */
	uint32_t generation;
	uint64_t bytes, packets;
};

void tcx_snmp_ids_init(struct tcx_snmp_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
	ids->next_index = 1;
}

void tcx_snmp_ids_free(struct tcx_snmp_ids *ids)
{
	for (size_t i = 0; i < ids->n_slots; i++)
		free(ids->slots[i].key);
	free(ids->slots);
	memset(ids, 0, sizeof(*ids));
}

static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static size_t make_key(const struct tcx_snapshot *s, const struct tcx_action *a, char *key)
{
	const struct tcx_filter *f = &s->filters[a->filter];
	const struct tcx_target *t = &s->targets[f->target];
	size_t n = 0, l;
	uint32_t nums[6] = {t->block,  t->parent, f->chain, (uint32_t)f->protocol << 16 | f->pref,
	                    f->handle, a->order};

	const char *strs[4] = {t->netns, t->dev, tcx_kind_name(s, f->kind),
	                       tcx_kind_name(s, a->kind)};

	for (unsigned i = 0; i < 4; i++) {
		l = strlen(strs[i]) + 1;
		memcpy(key + n, strs[i], l);
		n += l;
	}
	memcpy(key + n, nums, sizeof(nums));
	n += sizeof(nums);
	key[n++] = (char)a->cookie_len;
	memcpy(key + n, a->cookie, a->cookie_len);
	return n + a->cookie_len;
}

#define KEY_MAX (64 + IFNAMSIZ + 2 * TCX_KIND_MAX + 6 * 4 + 1 + TCX_COOKIE_MAX)

static struct tcx_snmp_id *slot_for(struct tcx_snmp_ids *ids, const char *key, size_t len,
                                    uint64_t h)
{
	size_t mask = ids->n_slots - 1, i = h & mask;

	for (;; i = (i + 1) & mask) {
		struct tcx_snmp_id *e = &ids->slots[i];

		if (!e->key || (e->hash == h && e->keylen == len && !memcmp(e->key, key, len)))
			return e;
	}
}

/* Rehash into a table of n_slots, keeping entries of the current generation
 * only when prune is set. */
static int rehash(struct tcx_snmp_ids *ids, size_t n_slots, int prune)
{
	struct tcx_snmp_id *old = ids->slots, *nslots = calloc(n_slots, sizeof(*nslots));
	size_t old_n = ids->n_slots;

	if (!nslots)
		return -ENOMEM;
	ids->slots = nslots;
	ids->n_slots = n_slots;
	ids->n_used = 0;
	for (size_t i = 0; i < old_n; i++) {
		struct tcx_snmp_id *e = &old[i];

		if (!e->key)
			continue;
		if (prune && e->generation != ids->generation) {
			free(e->key);
			continue;
		}
		*slot_for(ids, e->key, e->keylen, e->hash) = *e;
		ids->n_used++;
	}
	free(old);
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
	char key[KEY_MAX];
	int first = ids->generation == 0;

	memset(out, 0, sizeof(*out));
	out->rows = malloc((snap->n_actions ? snap->n_actions : 1) * sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	ids->generation++;
	for (size_t i = 0; i < snap->n_actions; i++) {
		const struct tcx_action *a = &snap->actions[i];
		struct tcx_snmp_id *e;
		size_t len;
		uint64_t h;

		if (!tcx_action_shown(a))
			continue;
		if ((ids->n_used + 1) * 2 > ids->n_slots &&
		    rehash(ids, ids->n_slots ? ids->n_slots * 2 : 1024, 0) < 0)
			goto oom;
		len = make_key(snap, a, key);
		h = fnv1a(key, len);
		e = slot_for(ids, key, len, h);
		if (!e->key) {
			e->key = malloc(len);
			if (!e->key)
				goto oom;
			memcpy(e->key, key, len);
			e->keylen = len;
			e->hash = h;
			e->index = ids->next_index++;
			/* A row that appears after the first collection starts
			 * its counters then. */
			e->discontinuity = first ? 0 : now;
			ids->n_used++;
		} else if (e->generation == ids->generation) {
			continue; /* the same identity twice: never, once merged */
		} else if (a->bytes < e->bytes || a->packets < e->packets ||
		           (a->index && e->act_index && a->index != e->act_index)) {
			/* Replaced under the same identity: new counters. */
			e->discontinuity = now;
		}
		e->bytes = a->bytes;
		e->packets = a->packets;
		e->act_index = a->index;
		e->generation = ids->generation;
		out->rows[out->n++] =
		        (struct tcx_snmp_row){e->index, (uint32_t)i, e->discontinuity};
	}
	/* Identities gone from a complete snapshot are forgotten; after a failed
	 * target they are kept, so that its rows keep their indices when it
	 * comes back. */
	if (!tcx_snapshot_failed_targets(snap) && ids->n_used > out->n &&
	    rehash(ids, ids->n_slots, 1) < 0)
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
