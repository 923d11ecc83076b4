/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "collectors/liveness.h"
#include "lib/hash.h"

struct tcx_liveness {
	struct tcx_snapshot *prev; /* a reference, or NULL */
	uint32_t *slot;            /* index + 1 of a row of prev with times; 0: free */
	size_t mask;               /* slots - 1 */
};

struct tcx_liveness *tcx_liveness_new(void)
{
	return calloc(1, sizeof(struct tcx_liveness));
}

void tcx_liveness_free(struct tcx_liveness *lv)
{
	if (!lv)
		return;
	tcx_snapshot_unref(lv->prev);
	free(lv->slot);
	free(lv);
}

/* Rows of t may lack times: t is dumped terse, and has filters. */
static int terse_target(const struct tcx_target *t)
{
	return (t->mode == TCX_MODE_TERSE || t->mode == TCX_MODE_TERSE_REPAIR) && t->n_filters;
}

/* A target's identity, as its labels say it. */
static uint64_t target_hash(const struct tcx_target *t)
{
	uint64_t h = tcx_hash_bytes(t->block, t->netns, strlen(t->netns));

	h = tcx_hash_bytes(h, t->dev, strlen(t->dev));
	return tcx_hash_bytes(h, t->parent_name, strlen(t->parent_name));
}

/* Action row i of s: a hash of its identity (tcx_row_id_of()'s, its
 * target's hash th given). */
static uint64_t row_hash(const struct tcx_snapshot *s, size_t i, uint64_t th)
{
	const struct tcx_action *a = &s->actions[i];
	const struct tcx_filter *f = &s->filters[a->filter];
	const char *fk = tcx_kind_name(s, f->kind), *ak = tcx_kind_name(s, a->kind);
	uint64_t h;

	h = tcx_hash_mix(th, (uint64_t)f->chain << 32 | f->handle);
	h = tcx_hash_mix(h, (uint64_t)f->pref << 32 | (uint64_t)f->protocol << 16 | a->order);
	h = tcx_hash_bytes(h, fk, strlen(fk));
	h = tcx_hash_bytes(h, ak, strlen(ak));
	return tcx_hash_bytes(h, a->cookie, a->cookie_len);
}

static int same_target(const struct tcx_target *a, const struct tcx_target *b)
{
	return a->block == b->block && !strcmp(a->netns, b->netns) && !strcmp(a->dev, b->dev) &&
	       !strcmp(a->parent_name, b->parent_name);
}

/* Is action row i of s row j of p, by identity? */
static int same_row(const struct tcx_snapshot *s, size_t i, const struct tcx_snapshot *p, size_t j)
{
	const struct tcx_action *a = &s->actions[i], *b = &p->actions[j];
	const struct tcx_filter *fa = &s->filters[a->filter], *fb = &p->filters[b->filter];

	return fa->chain == fb->chain && fa->handle == fb->handle && fa->pref == fb->pref &&
	       fa->protocol == fb->protocol && a->order == b->order &&
	       a->cookie_len == b->cookie_len && !memcmp(a->cookie, b->cookie, a->cookie_len) &&
	       !strcmp(tcx_kind_name(s, fa->kind), tcx_kind_name(p, fb->kind)) &&
	       !strcmp(tcx_kind_name(s, a->kind), tcx_kind_name(p, b->kind)) &&
	       same_target(&s->targets[fa->target], &p->targets[fb->target]);
}

/* The action rows of target ti of s (which has filters): [*from, return
 * value). */
static size_t target_rows(const struct tcx_snapshot *s, size_t ti, size_t *from)
{
	size_t i = *from = s->filters[s->targets[ti].first_filter].first_action;

	while (i < s->n_actions && s->filters[s->actions[i].filter].target == ti)
		i++;
	return i;
}

/* Does s have a target whose rows may lack times? */
static int any_terse(const struct tcx_snapshot *s)
{
	for (size_t ti = 0; ti < s->n_targets; ti++)
		if (terse_target(&s->targets[ti]))
			return 1;
	return 0;
}

/* Index the rows of p's terse targets that have times. */
static int index_prev(struct tcx_liveness *lv, const struct tcx_snapshot *p)
{
	size_t n = 0, slots = 16;

	for (size_t ti = 0, i, end; ti < p->n_targets; ti++) {
		if (!terse_target(&p->targets[ti]))
			continue;
		for (end = target_rows(p, ti, &i); i < end; i++)
			n += p->actions[i].tm_present && !p->actions[i].merged;
	}
	while (slots < 2 * n)
		slots <<= 1;
	if (!lv->slot || lv->mask + 1 != slots) {
		uint32_t *sl = calloc(slots, sizeof(*sl));

		if (!sl)
			return -1;
		free(lv->slot);
		lv->slot = sl;
		lv->mask = slots - 1;
	} else {
		memset(lv->slot, 0, slots * sizeof(*lv->slot));
	}
	for (size_t ti = 0; ti < p->n_targets; ti++) {
		const struct tcx_target *t = &p->targets[ti];
		uint64_t th;

		if (!terse_target(t))
			continue;
		th = target_hash(t);
		for (size_t i, end = target_rows(p, ti, &i); i < end; i++) {
			size_t k;

			if (!p->actions[i].tm_present || p->actions[i].merged)
				continue;
			for (k = row_hash(p, i, th) & lv->mask; lv->slot[k]; k = (k + 1) & lv->mask)
				;
			lv->slot[k] = (uint32_t)i + 1;
		}
	}
	return 0;
}

/* The rows of target ti of s without times take their times in p. */
static void carry(struct tcx_liveness *lv, struct tcx_snapshot *s, size_t ti,
                  const struct tcx_snapshot *p)
{
	uint64_t th = target_hash(&s->targets[ti]);

	for (size_t i, end = target_rows(s, ti, &i); i < end; i++) {
		struct tcx_action *a = &s->actions[i];

		if (a->tm_present || a->merged)
			continue;
		for (size_t k = row_hash(s, i, th) & lv->mask; lv->slot[k];
		     k = (k + 1) & lv->mask) {
			const struct tcx_action *b = &p->actions[lv->slot[k] - 1];

			if (!same_row(s, i, p, lv->slot[k] - 1))
				continue;
			if (!tcx_action_replaced(b->c, 0, a->c, 0)) {
				a->tm_present = b->tm_present;
				memcpy(a->tm, b->tm, sizeof(a->tm));
			}
			break;
		}
	}
}

int tcx_liveness_update(struct tcx_liveness *lv, struct tcx_snapshot *s)
{
	struct tcx_snapshot *p = lv->prev;
	int ret = 0;

	/* (only terse dumps leave times out: without one, nothing to carry) */
	if (p && !s->liveness_pass && any_terse(s)) {
		if (index_prev(lv, p) < 0) {
			ret = -1;
		} else {
			for (size_t ti = 0; ti < s->n_targets; ti++)
				if (terse_target(&s->targets[ti]))
					carry(lv, s, ti, p);
		}
	}
	tcx_snapshot_unref(p);
	lv->prev = tcx_snapshot_ref(s);
	return ret;
}
