/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Aggregation state (collectors/agg.h).
 *
 * Each aggregate keeps `base`: what its members left in it (the last values
 * of members gone, the values before resets, the contributions of members
 * that moved away, final values). Each member keeps the counters of the
 * action it last saw (`last`, counted from `offset`: 0, or its value when
 * the member moved in), and `pending`, what the action before it had
 * counted when the dump showed it replaced. An aggregate's value is its base
 * plus, over its members, pending + last - offset.
 *
 * Deletion notifications and dumps. The kernel reuses a deleted filter's
 * identity (u32 gives the same handle, and the action the same index, to
 * the next filter at that pref; flower handle 1 again), so a final cannot
 * be matched to the action a dump saw by identity. Its order can: the
 * collector drains the notifications before it dumps, the actions of one
 * identity live one after the other, and the notifications come in the
 * order of deletion. So when a pass folds the finals of an identity, every
 * action deleted before the last dump's read of the row already had its
 * final folded, except those deleted during that dump itself, just before
 * the read; and the action the dump saw is deleted after them. Hence:
 *   - a final counts whole, into base;
 *   - it takes the place of the oldest value the member still counts for an
 *     action that may be the deleted one: `pending` first, then `last`
 *     (which the next dump sets again if that action still lives: a final
 *     of an action deleted during the dump costs nothing);
 *   - `pending`, and the last values of a member the dump no longer showed
 *     (`gone`), stay counted until the next pass's finals: a final among
 *     them replaces them, else they go into base (deleted without a final:
 *     a whole pref, a chain, a qdisc, a device; or a replace).
 * A value is then never counted twice; a value can be lost only where a
 * notification is (lost, or of an action deleted during a dump taken while
 * the action the dump saw was then deleted without one). An aggregate's
 * published value never goes down (`shown`).
 *
 * A state of hit counters (tcx_agg_new_hits()) is the same over filters,
 * with their hit counters (an absent one 0, and not in its aggregate's
 * `present` unless another member or final has it): read filter for
 * action above. A filter has no index (0: never compared); it is replaced
 * when its lookups or hits go down, and the kernel's deletion notification
 * of a filter deleted by handle carries its counters (collect.c drains
 * them into s->hit_finals with the actions'). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/agg.h"
#include "collectors/names.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"

struct member {
	struct tcx_row_id id;
	uint64_t hash;
	uint32_t agg;
	uint32_t index;  /* the kernel's action index, 0 when the dump has none (filters) */
	uint8_t seen;    /* in the pass under way */
	uint8_t gone;    /* not in the last complete dump: goes after the next finals */
	uint8_t pending; /* `pend` holds a replaced action's counters */
	uint8_t fresh;   /* a final took last's place: the next dump counts whole */
	struct tcx_counters last, offset, pend;
};

struct aggr {
	uint64_t hash;
	uint32_t key_off, key_len; /* its kept label values, each NUL-terminated */
	struct tcx_counters base;
	struct tcx_counters shown; /* published: never goes down */
	double created;
	uint32_t present; /* bit k: a member or final of it had counter k */
	/* The times of its members and finals, as of every pass it was in
	 * (tcx_times_fold()): the earliest install and first use, the latest
	 * last use; actions only. */
	uint8_t tm_present;
	int64_t tm[TCX_TM__MAX];
};

/* An open-addressing index of array positions (pos + 1; 0 is an empty
 * slot), with the upper half of each entry's hash: a probe compares it
 * before it reads the entry (a cache miss at 100k rows). */
struct slot {
	uint32_t pos;
	uint32_t check;
};

struct index {
	struct slot *slot;
	size_t mask; /* size - 1; size 0 before the first build */
	size_t used;
};

struct tcx_agg {
	/* The rows it sums: actions (tcx_action_counters), or the hit counters
	 * of filters (hits, tcx_filter_counters). Kept when it starts over. */
	int hits;
	const struct tcx_counter_table *t;
	struct tcx_config *cfg; /* of the last update: how rows map to aggregates */
	/* The kept labels the state was built for. */
	struct tcx_aggregate_cfg kept;
	char *kept_names; /* the kept user labels' names, each NUL-terminated */
	size_t kept_names_len;

	struct member *m;
	size_t n_m, cap_m;
	struct index mi;

	struct aggr *g;
	size_t n_g, cap_g;
	struct index gi;
	char *keys;
	size_t keys_len, keys_cap;
	char *key; /* scratch: the key of a row */
	size_t key_cap;
	int sum_only; /* tcx_agg_sum(): no members, the rows as they are */
};

/* ---- identities -------------------------------------------------------------------------- */

/* The value of built-in label b of a row, as the row's own label has it
 * ("" where the row has no such label); tmp holds 64 bytes. */
static const char *builtin_value(const struct tcx_row_id *id, enum tcx_builtin_label b, char *tmp)
{
	switch (b) {
	case TCX_BL_DEVICE:
		return id->dev;
	case TCX_BL_PARENT:
		return id->block ? "" : id->parent;
	case TCX_BL_BLOCK:
		if (!id->block)
			return "";
		snprintf(tmp, 64, "%u", id->block);
		return tmp;
	case TCX_BL_NETNS:
		return id->netns;
	case TCX_BL_CHAIN:
		snprintf(tmp, 64, "%u", id->chain);
		return tmp;
	case TCX_BL_PROTOCOL:
		return tcx_protocol_name(id->protocol, tmp, 64);
	case TCX_BL_PREF:
		snprintf(tmp, 64, "%u", id->pref);
		return tmp;
	case TCX_BL_KIND:
		return id->kind;
	case TCX_BL_HANDLE:
		tcx_format_handle(id->kind, id->handle, tmp, 64);
		return tmp;
	case TCX_BL_ORDER:
		snprintf(tmp, 64, "%u", id->order);
		return tmp;
	case TCX_BL_ACTION:
		return id->action;
	case TCX_BL_COOKIE:
		tcx_cookie_hex(id->cookie, id->cookie_len, tmp);
		return tmp;
	case TCX_BL__MAX:
		break;
	}
	return "";
}

/* ---- indices ----------------------------------------------------------------------------- */

static int index_build(struct index *x, size_t n)
{
	size_t size = 16;

	while (size < 2 * n + 16)
		size *= 2;
	free(x->slot);
	x->slot = calloc(size, sizeof(*x->slot));
	x->mask = x->slot ? size - 1 : 0;
	x->used = 0;
	return x->slot ? 0 : -1;
}

static void index_put(struct index *x, uint64_t hash, size_t pos)
{
	size_t k = hash & x->mask;

	while (x->slot[k].pos)
		k = (k + 1) & x->mask;
	x->slot[k].pos = (uint32_t)pos + 1;
	x->slot[k].check = (uint32_t)(hash >> 32);
	x->used++;
}

/* ---- aggregates -------------------------------------------------------------------------- */

/* The aggregate of key, added (created now) if it is new; -1 when out of
 * memory. */
static int64_t agg_find_add(struct tcx_agg *a, const char *key, size_t len, double now)
{
	uint64_t h = tcx_hash_bytes(0, key, len);
	struct aggr *g;
	size_t k;

	if (!a->gi.slot && index_build(&a->gi, 64) < 0)
		return -1;
	for (k = h & a->gi.mask; a->gi.slot[k].pos; k = (k + 1) & a->gi.mask) {
		if (a->gi.slot[k].check != (uint32_t)(h >> 32))
			continue;
		g = &a->g[a->gi.slot[k].pos - 1];
		if (g->hash == h && g->key_len == len && !memcmp(a->keys + g->key_off, key, len))
			return a->gi.slot[k].pos - 1;
	}
	if (len > UINT32_MAX - a->keys_len || a->n_g >= UINT32_MAX - 1 ||
	    tcx_grow(&a->keys, &a->keys_cap, a->keys_len + len + 1, 1, 4096) < 0 ||
	    tcx_grow(&a->g, &a->cap_g, a->n_g + 1, sizeof(*a->g), 64) < 0)
		return -1;
	g = &a->g[a->n_g];
	memset(g, 0, sizeof(*g));
	g->hash = h;
	g->key_off = (uint32_t)a->keys_len;
	g->key_len = (uint32_t)len;
	g->created = now;
	memcpy(a->keys + a->keys_len, key, len);
	a->keys_len += len;
	if (2 * (a->gi.used + 1) > a->gi.mask) {
		if (index_build(&a->gi, a->n_g + 1) < 0)
			return -1;
		for (size_t i = 0; i < a->n_g; i++)
			index_put(&a->gi, a->g[i].hash, i);
	}
	index_put(&a->gi, h, a->n_g);
	return (int64_t)a->n_g++;
}

/* The aggregate of a row, added (created `now`) if it is new; user: the
 * row's user label values. Its key is its kept label values, each
 * NUL-terminated. -1 when out of memory. */
static int64_t agg_of(struct tcx_agg *a, const struct tcx_row_id *id, const char **user, double now)
{
	size_t len = 0;

	/* a key may be empty (`by: []`), never NULL: memcmp() and memcpy() */
	if (tcx_grow(&a->key, &a->key_cap, 1, 1, 256) < 0)
		return -1;

	for (unsigned b = 0; b < TCX_BL__MAX + a->cfg->n_labels; b++) {
		char tmp[64];
		const char *v;
		size_t n;

		if (b < TCX_BL__MAX ? !(a->kept.builtin & (1u << b))
		                    : !(a->kept.user & (1u << (b - TCX_BL__MAX))))
			continue;
		v = b < TCX_BL__MAX ? builtin_value(id, (enum tcx_builtin_label)b, tmp)
		                    : user[b - TCX_BL__MAX];
		n = strlen(v) + 1;
		if (tcx_grow(&a->key, &a->key_cap, len + n, 1, 256) < 0)
			return -1;
		memcpy(a->key + len, v, n);
		len += n;
	}
	return agg_find_add(a, a->key, len, now);
}

/* ---- members ----------------------------------------------------------------------------- */

static struct member *member_find(const struct tcx_agg *a, const struct tcx_row_id *id, uint64_t h)
{
	if (!a->mi.slot)
		return NULL;
	for (size_t k = h & a->mi.mask; a->mi.slot[k].pos; k = (k + 1) & a->mi.mask) {
		struct member *m;

		if (a->mi.slot[k].check != (uint32_t)(h >> 32))
			continue;
		m = &a->m[a->mi.slot[k].pos - 1];
		if (m->hash == h && tcx_row_id_equal(&m->id, id))
			return m;
	}
	return NULL;
}

static int members_reindex(struct tcx_agg *a, size_t room)
{
	if (index_build(&a->mi, a->n_m + room) < 0)
		return -1;
	for (size_t i = 0; i < a->n_m; i++)
		index_put(&a->mi, a->m[i].hash, i);
	return 0;
}

static struct member *member_add(struct tcx_agg *a, const struct tcx_row_id *id, uint64_t h,
                                 uint32_t agg)
{
	struct member *m;

	if (tcx_grow(&a->m, &a->cap_m, a->n_m + 1, sizeof(*a->m), 256) < 0)
		return NULL;
	if ((!a->mi.slot || 2 * (a->mi.used + 1) > a->mi.mask) && members_reindex(a, a->n_m) < 0)
		return NULL;
	m = &a->m[a->n_m];
	memset(m, 0, sizeof(*m));
	m->id = *id;
	m->hash = h;
	m->agg = agg;
	index_put(&a->mi, h, a->n_m++);
	return m;
}

/* The member leaves what it counted (last - offset) in its aggregate, and
 * counts from `from` on. */
static void retire(struct tcx_agg *a, struct member *m, unsigned c, uint64_t from)
{
	a->g[m->agg].base.v[c] += m->last.v[c] - m->offset.v[c];
	m->offset.v[c] = from;
	m->last.v[c] = from;
}

/* The member's pending counters leave it: into base when `keep`, else a
 * final has taken their place. */
static void unpend(struct tcx_agg *a, struct member *m, int keep)
{
	for (unsigned c = 0; keep && m->pending && c < a->t->n; c++)
		a->g[m->agg].base.v[c] += m->pend.v[c];
	memset(&m->pend, 0, sizeof(m->pend));
	m->pending = 0;
}

/* A member seen in a pass with counters v, action index `index` and
 * aggregate agg. Another action under its identity (tcx_action_replaced())
 * puts what the old one counted in `pending`; another counter lower alone
 * is a reset of that counter. */
static void member_see(struct tcx_agg *a, struct member *m, const struct tcx_counters *v,
                       uint32_t index, uint32_t agg)
{
	/* the tables known here: their walks unrolled */
	int replaced =
	        !m->fresh && (a->hits ? tcx_counters_replaced(&tcx_filter_counters, m->last.v, v->v)
	                              : tcx_action_replaced(m->last.v, m->index, v->v, index));

	if (replaced) {
		unpend(a, m, 1); /* not left by the finals: cannot be pending still */
		for (unsigned c = 0; c < a->t->n; c++) {
			m->pend.v[c] = m->last.v[c] - m->offset.v[c];
			m->last.v[c] = m->offset.v[c] = 0;
		}
		m->pending = 1;
	}
	m->index = index;
	for (unsigned c = 0; c < a->t->n; c++) {
		uint64_t x = v->v[c];

		if (x < m->last.v[c])
			retire(a, m, c, 0); /* reset: the value before it stays */
		m->last.v[c] = x;
	}
	if (agg != m->agg) { /* moves: counts from here in the new one */
		unpend(a, m, 1);
		for (unsigned c = 0; c < a->t->n; c++)
			retire(a, m, c, m->last.v[c]);
	}
	m->agg = agg;
	m->fresh = 0;
	m->gone = 0;
	m->seen = 1;
}

/* ---- the state --------------------------------------------------------------------------- */

static struct tcx_agg *agg_new(int hits)
{
	struct tcx_agg *a = calloc(1, sizeof(struct tcx_agg));

	if (a) {
		a->hits = hits;
		a->t = hits ? &tcx_filter_counters : &tcx_action_counters;
	}
	return a;
}

struct tcx_agg *tcx_agg_new(void)
{
	return agg_new(0);
}

struct tcx_agg *tcx_agg_new_hits(void)
{
	return agg_new(1);
}

static void agg_clear(struct tcx_agg *a)
{
	int sum_only = a->sum_only, hits = a->hits;
	const struct tcx_counter_table *t = a->t;

	if (a->cfg)
		tcx_config_unref(a->cfg);
	free(a->kept_names);
	free(a->m);
	free(a->mi.slot);
	free(a->g);
	free(a->gi.slot);
	free(a->keys);
	free(a->key);
	memset(a, 0, sizeof(*a));
	a->sum_only = sum_only;
	a->hits = hits;
	a->t = t;
}

void tcx_agg_free(struct tcx_agg *a)
{
	if (!a)
		return;
	agg_clear(a);
	free(a);
}

/* The names of cfg's kept user labels, each NUL-terminated, into *buf (made
 * here); returns the length, or -1 when out of memory. */
static int64_t kept_names(const struct tcx_config *cfg, char **buf)
{
	size_t len = 0, cap = 0;

	*buf = NULL;
	for (size_t l = 0; l < cfg->n_labels; l++) {
		size_t n = strlen(cfg->labels[l]) + 1;

		if (!(cfg->aggregate.user & (1u << l)))
			continue;
		if (tcx_grow(buf, &cap, len + n, 1, 64) < 0) {
			free(*buf);
			return -1;
		}
		memcpy(*buf + len, cfg->labels[l], n);
		len += n;
	}
	return (int64_t)len;
}

/* Take cfg for the next pass: the state starts over when its kept labels
 * differ. -1 when out of memory. */
static int use_config(struct tcx_agg *a, struct tcx_config *cfg)
{
	char *names;
	int64_t len = kept_names(cfg, &names);

	if (len < 0)
		return -1;
	if (!a->cfg || a->kept.mode != cfg->aggregate.mode ||
	    a->kept.builtin != cfg->aggregate.builtin || a->kept_names_len != (size_t)len ||
	    (len && memcmp(a->kept_names, names, (size_t)len) != 0)) {
		agg_clear(a);
		a->kept = cfg->aggregate;
		a->kept_names = names;
		a->kept_names_len = (size_t)len;
	} else {
		free(names);
	}
	a->kept.user = cfg->aggregate.user; /* the same names, maybe at other places */
	tcx_config_ref(cfg);
	if (a->cfg)
		tcx_config_unref(a->cfg);
	a->cfg = cfg;
	return 0;
}

/* The snapshot's copy of the aggregates and their values now. */
static struct tcx_aggregates *publish(struct tcx_agg *a, const struct tcx_config *cfg)
{
	struct tcx_aggregates *g = calloc(1, sizeof(*g));
	size_t n = a->n_g ? a->n_g : 1;

	if (!g)
		return NULL;
	for (unsigned b = 0; b < TCX_BL__MAX + cfg->n_labels; b++) {
		if (b < TCX_BL__MAX ? !(a->kept.builtin & (1u << b))
		                    : !(a->kept.user & (1u << (b - TCX_BL__MAX))))
			continue;
		g->optional[g->n_labels] = b <= TCX_BL_NETNS;
		g->names[g->n_labels++] =
		        b < TCX_BL__MAX ? tcx_builtin_labels[b] : cfg->labels[b - TCX_BL__MAX];
	}
	g->n = a->n_g;
	g->value = malloc(n * (g->n_labels ? g->n_labels : 1) * sizeof(*g->value));
	g->text = malloc(a->keys_len ? a->keys_len : 1);
	g->c = calloc(n, sizeof(*g->c));
	g->created = malloc(n * sizeof(*g->created));
	g->present = malloc(n * sizeof(*g->present));
	if (!a->hits) {
		g->tm_present = malloc(n * sizeof(*g->tm_present));
		g->tm = malloc(n * sizeof(*g->tm));
	}
	if (!g->value || !g->text || !g->c || !g->created || !g->present ||
	    (!a->hits && (!g->tm_present || !g->tm))) {
		tcx_aggregates_free(g);
		return NULL;
	}
	if (a->keys_len)
		memcpy(g->text, a->keys, a->keys_len);
	for (size_t i = 0; i < a->n_g; i++) {
		uint32_t off = a->g[i].key_off;

		for (size_t k = 0; k < g->n_labels; k++) {
			g->value[i * g->n_labels + k] = off;
			off += (uint32_t)strlen(a->keys + off) + 1;
		}
		g->c[i] = a->g[i].base;
		g->created[i] = a->g[i].created;
		g->present[i] = a->g[i].present;
		if (g->tm) {
			g->tm_present[i] = a->g[i].tm_present;
			memcpy(g->tm[i], a->g[i].tm, sizeof(g->tm[i]));
		}
	}
	for (size_t i = 0; i < a->n_m; i++)
		for (unsigned c = 0; c < a->t->n; c++)
			g->c[a->m[i].agg].v[c] +=
			        a->m[i].pend.v[c] + a->m[i].last.v[c] - a->m[i].offset.v[c];
	for (size_t i = 0; i < a->n_g; i++)
		for (unsigned c = 0; c < a->t->n; c++) {
			if (g->c[i].v[c] < a->g[i].shown.v[c])
				g->c[i].v[c] = a->g[i].shown.v[c];
			a->g[i].shown.v[c] = g->c[i].v[c];
		}
	for (size_t i = 0; i < a->n_g; i++)
		g->nonzero |= tcx_counters_nonzero(a->t, g->c[i].v);
	return g;
}

/* Is the row id of a target that failed in s (its device or block, in its
 * namespace; a failed target without a device: the whole namespace)? */
static int in_failed_target(const struct tcx_snapshot *s, const struct tcx_row_id *id)
{
	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];

		if (t->ok || strncmp(t->netns, id->netns, sizeof(id->netns)) != 0)
			continue;
		if (t->block ? t->block == id->block
		             : !t->dev[0] ||
		                       (!id->block && !strncmp(t->dev, id->dev, sizeof(id->dev))))
			return 1;
	}
	return 0;
}

/* Row i of s, of the kind a sums: 0 when it is not shown, else 1 with its
 * counters (v; present: bit k, counter k is the kernel's, the others 0),
 * its action index and its label set. A filter is shown with hit counters
 * only; it has no cookie: its label set is TCX_LABELSET_NONE. */
static int row_of(const struct tcx_agg *a, const struct tcx_snapshot *s, size_t i,
                  struct tcx_counters *v, uint32_t *present, uint32_t *index, uint32_t *labels)
{
	if (a->hits) {
		const struct tcx_filter *f = &s->filters[i];

		if (f->merged || !f->hv_present)
			return 0;
		memset(v, 0, sizeof(*v));
		for (unsigned c = 0; c < TCX_FCTR__MAX; c++)
			if (f->hv_present & (1u << c))
				v->v[c] = s->hvals[f->hv + c];
		*present = f->hv_present;
		*index = 0;
		*labels = TCX_LABELSET_NONE;
	} else {
		const struct tcx_action *ac = &s->actions[i];

		if (!tcx_action_shown(ac))
			return 0;
		tcx_counters_of(ac, v);
		*present = (1u << TCX_ACT_CTR__MAX) - 1;
		*index = ac->index;
		*labels = ac->labels;
	}
	return 1;
}

int tcx_agg_update(struct tcx_agg *a, struct tcx_snapshot *s)
{
	int64_t *set_agg = NULL; /* when only user labels are kept: each set's aggregate */
	double now = tcx_ts_s(s->taken);
	size_t kept = 0, n_before, n_rows = a->hits ? s->n_filters : s->n_actions;
	struct tcx_finals **fsp = a->hits ? &s->hit_finals : &s->finals;
	struct tcx_finals *finals = *fsp; /* folded first, then freed */
	struct tcx_aggregates **out = a->hits ? &s->hit_aggs : &s->aggs;

	tcx_aggregates_free(*out);
	*out = NULL;
	*fsp = NULL;
	if (!s->cfg || s->cfg->aggregate.mode == TCX_AGG_NONE) {
		tcx_finals_free(finals);
		agg_clear(a);
		return 0;
	}
	if (use_config(a, s->cfg) < 0)
		goto oom;
	/* The finals first (drained before the dumps, in the order of
	 * deletion), then what the last pass left pending and the members it
	 * no longer showed, which no final has replaced: they go into base. */
	for (size_t i = 0; finals && !a->sum_only && i < finals->n; i++)
		if (tcx_agg_fold_final(a, &finals->f[i]) < 0)
			goto oom;
	tcx_finals_free(finals);
	finals = NULL;
	n_before = a->n_m;
	for (size_t i = 0; i < a->n_m; i++) {
		struct member *m = &a->m[i];

		unpend(a, m, 1);
		if (m->gone) {
			for (unsigned c = 0; c < a->t->n; c++)
				retire(a, m, c, 0);
			continue;
		}
		a->m[kept++] = *m;
	}
	a->n_m = kept;
	if (kept != n_before && members_reindex(a, kept) < 0)
		goto oom;
	kept = 0;
	if (!a->kept.builtin) {
		set_agg = malloc((s->sets.n ? s->sets.n : 1) * sizeof(*set_agg));
		if (!set_agg)
			goto oom;
		for (size_t i = 0; i < s->sets.n; i++)
			set_agg[i] = -1;
	}
	/* Room for every row as a new member: no growth in the pass. */
	if (!a->sum_only &&
	    (tcx_grow(&a->m, &a->cap_m, a->n_m + n_rows, sizeof(*a->m), 256) < 0 ||
	     (2 * (a->n_m + n_rows + 1) > a->mi.mask && members_reindex(a, n_rows) < 0)))
		goto oom;
	for (size_t i = 0; i < n_rows; i++) {
		const char *user[TCX_MAX_LABELS];
		struct tcx_row_id id;
		struct tcx_counters v;
		struct member *m;
		uint32_t present, index, labels;
		int64_t agg = -1;
		uint64_t h;

		if (!row_of(a, s, i, &v, &present, &index, &labels))
			continue;
		if (set_agg && labels < s->sets.n)
			agg = set_agg[labels];
		if (agg < 0 || !a->sum_only) {
			if (a->hits)
				tcx_filter_id_of(s, i, &id);
			else
				tcx_row_id_of(s, i, &id);
		}
		if (agg < 0) {
			for (size_t l = 0; l < a->cfg->n_labels; l++)
				user[l] = l < s->sets.n_labels ? tcx_labelset_value(s, labels, l)
				                               : "";
			agg = agg_of(a, &id, user, now);
			if (agg < 0)
				goto oom;
			if (set_agg && labels < s->sets.n)
				set_agg[labels] = agg;
		}
		a->g[agg].present |= present;
		if (!a->hits)
			tcx_times_fold(&a->g[agg].tm_present, a->g[agg].tm,
			               s->actions[i].tm_present, s->actions[i].tm);
		if (a->sum_only) { /* no members: the row as it is */
			for (unsigned c = 0; c < a->t->n; c++)
				a->g[agg].base.v[c] += v.v[c];
			continue;
		}
		h = tcx_row_id_hash(&id);
		m = member_find(a, &id, h);
		if (m && m->seen)
			continue; /* the same identity twice (two targets overlap): once */
		if (!m) {
			if (!(m = member_add(a, &id, h, (uint32_t)agg)))
				goto oom;
			m->last = v;
			m->index = index;
			m->seen = 1;
			continue;
		}
		member_see(a, m, &v, index, (uint32_t)agg);
	}
	/* Members not seen are gone: their last values stay counted until the
	 * next pass's finals (a final of theirs may be on its way). Those of a
	 * target that failed in this pass are not known to be gone, and would
	 * count again from 0 when it comes back: they stay as they are. */
	for (size_t i = 0; i < a->n_m; i++) {
		struct member *m = &a->m[i];

		if (!m->seen && !s->incomplete && !in_failed_target(s, &m->id))
			m->gone = 1;
		m->seen = 0;
	}
	free(set_agg);
	if (!(*out = publish(a, s->cfg)))
		goto oom_done;
	return 0;
oom:
	free(set_agg);
	tcx_finals_free(finals);
	/* Start over rather than keep a state that missed part of a pass. */
	agg_clear(a);
oom_done:
	s->errors[TCX_ERR_NOMEM]++;
	s->incomplete = 1;
	return -1;
}

/* tcx_agg_sum() of one kind of rows. */
static int agg_sum(struct tcx_snapshot *s, int hits)
{
	struct tcx_agg *a = agg_new(hits);
	int r;

	if (!a) {
		s->errors[TCX_ERR_NOMEM]++;
		s->incomplete = 1;
		return -1;
	}
	a->sum_only = 1;
	r = tcx_agg_update(a, s);
	tcx_agg_free(a);
	return r;
}

int tcx_agg_sum(struct tcx_snapshot *s)
{
	return agg_sum(s, 0) < 0 || agg_sum(s, 1) < 0 ? -1 : 0;
}

int tcx_agg_fold_final(struct tcx_agg *a, const struct tcx_final *f)
{
	const struct tcx_row_id *id = &f->id;
	const struct tcx_counters *final = &f->c;
	uint64_t h = tcx_row_id_hash(id);
	struct member *m;
	int64_t agg;

	if (!a->cfg)
		return 0;
	m = member_find(a, id, h);
	if (m) {
		agg = m->agg;
	} else {
		/* A row no pass saw: an action maps as its cookie says now; a
		 * filter has no cookie, and is shown whatever `unmapped` says. */
		const char *user[TCX_MAX_LABELS];
		struct tcx_label_buf lb;
		enum tcx_map_kind mk = TCX_MAP_NONE;

		for (size_t l = 0; l < a->cfg->n_labels; l++)
			user[l] = "";
		if (id->cookie_len)
			mk = tcx_labels_resolve(a->cfg, id->cookie, id->cookie_len, user, &lb);
		if (!a->hits && a->cfg->unmapped == TCX_UNMAPPED_DROP &&
		    (mk == TCX_MAP_NONE || mk == TCX_MAP_UNMAPPED))
			return 0; /* never shown */
		agg = agg_of(a, id, user, tcx_clock_s(CLOCK_REALTIME));
		if (agg < 0)
			return -1;
	}
	a->g[agg].present |= f->present;
	tcx_times_fold(&a->g[agg].tm_present, a->g[agg].tm, f->tm_present, f->tm);
	for (unsigned c = 0; c < a->t->n; c++)
		a->g[agg].base.v[c] += final->v[c];
	if (!m)
		return 0;
	/* It takes the place of the oldest value the member counts for an
	 * action that may be the deleted one (see the top of the file). A
	 * final of another index than last's is not last's. */
	if (m->pending) {
		unpend(a, m, 0);
	} else if (!m->fresh && !(f->index && m->index && f->index != m->index)) {
		for (unsigned c = 0; c < a->t->n; c++) {
			/* What it counted before it moved in stays where it is. */
			uint64_t before =
			        m->offset.v[c] < final->v[c] ? m->offset.v[c] : final->v[c];

			a->g[agg].base.v[c] -= before;
			m->last.v[c] = m->offset.v[c] = 0;
		}
		m->fresh = 1;
	}
	return 0;
}
