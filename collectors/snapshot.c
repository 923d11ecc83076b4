/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "collectors/snapshot.h"

struct tcx_snapshot *tcx_snapshot_new(struct tcx_config *cfg)
{
	struct tcx_snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refcnt, 1);
	s->cfg = cfg ? tcx_config_ref(cfg) : NULL;
	clock_gettime(CLOCK_REALTIME, &s->taken);
	return s;
}

struct tcx_snapshot *tcx_snapshot_ref(struct tcx_snapshot *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refcnt, 1, memory_order_relaxed);
	return s;
}

void tcx_snapshot_unref(struct tcx_snapshot *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refcnt, 1, memory_order_acq_rel) != 1)
		return;
	if (s->cfg)
		tcx_config_unref(s->cfg);
	free(s->targets);
	free(s->filters);
	free(s->actions);
	free(s);
}

/* Grow an array by half again; large arrays are mmap'd by glibc, so realloc
 * remaps them instead of copying and the peak stays near the final size. */
static void *grow(void *arr, size_t *cap, size_t elem, size_t min)
{
	size_t ncap = *cap ? *cap + *cap / 2 : min;
	void *n = realloc(arr, ncap * elem);

	if (!n)
		return NULL;
	*cap = ncap;
	return n;
}

#define ADD_ROW(s, arr, n, cap, minimum)                                                           \
	do {                                                                                       \
		if ((s)->n == (s)->cap) {                                                          \
			void *p_ = grow((s)->arr, &(s)->cap, sizeof(*(s)->arr), (minimum));        \
			if (!p_)                                                                   \
				return NULL;                                                       \
			(s)->arr = p_;                                                             \
		}                                                                                  \
		memset(&(s)->arr[(s)->n], 0, sizeof(*(s)->arr));                                   \
		return &(s)->arr[(s)->n++];                                                        \
	} while (0)

struct tcx_target *tcx_snapshot_add_target(struct tcx_snapshot *s)
{
	ADD_ROW(s, targets, n_targets, cap_targets, 8);
}

struct tcx_filter *tcx_snapshot_add_filter(struct tcx_snapshot *s)
{
	ADD_ROW(s, filters, n_filters, cap_filters, 256);
}

struct tcx_action *tcx_snapshot_add_action(struct tcx_snapshot *s)
{
	ADD_ROW(s, actions, n_actions, cap_actions, 256);
}

int tcx_snapshot_kind(struct tcx_snapshot *s, const char *kind)
{
	/* Dumps repeat the same one or two kinds: try the last two first. */
	for (unsigned h = 0; h < 2; h++) {
		unsigned i = s->kind_hint[h];

		if (i < s->n_kinds && strcmp(s->kinds[i], kind) == 0) {
			s->kind_hint[h] = s->kind_hint[0];
			s->kind_hint[0] = (uint8_t)i;
			return (int)i;
		}
	}
	for (unsigned i = 0; i < s->n_kinds; i++)
		if (strcmp(s->kinds[i], kind) == 0) {
			s->kind_hint[1] = s->kind_hint[0];
			s->kind_hint[0] = (uint8_t)i;
			return (int)i;
		}
	if (s->n_kinds >= TCX_MAX_KINDS)
		return -1;
	strncpy(s->kinds[s->n_kinds], kind, TCX_KIND_MAX - 1);
	s->kinds[s->n_kinds][TCX_KIND_MAX - 1] = '\0';
	return (int)s->n_kinds++;
}

void tcx_snapshot_truncate(struct tcx_snapshot *s, size_t n_filters, size_t n_actions)
{
	if (n_filters < s->n_filters)
		s->n_filters = n_filters;
	if (n_actions < s->n_actions)
		s->n_actions = n_actions;
}

void tcx_snapshot_seal(struct tcx_snapshot *s)
{
	void *p;

	if (s->n_filters && s->n_filters < s->cap_filters &&
	    (p = realloc(s->filters, s->n_filters * sizeof(*s->filters)))) {
		s->filters = p;
		s->cap_filters = s->n_filters;
	}
	if (s->n_actions && s->n_actions < s->cap_actions &&
	    (p = realloc(s->actions, s->n_actions * sizeof(*s->actions)))) {
		s->actions = p;
		s->cap_actions = s->n_actions;
	}
}

void tcx_snapshot_classify(struct tcx_snapshot *s)
{
	const char *values[TCX_MAX_LABELS];
	struct tcx_label_buf lb;
	int drop_policy = s->cfg && s->cfg->unmapped == TCX_UNMAPPED_DROP;

	s->unmapped_cookies = 0;
	s->dropped_rows = 0;
	for (size_t i = 0; i < s->n_actions; i++) {
		struct tcx_action *a = &s->actions[i];
		enum tcx_map_kind m = TCX_MAP_NONE;

		if (s->cfg)
			m = tcx_labels_resolve(s->cfg, a->cookie, a->cookie_len, values, &lb);
		else if (a->cookie_len)
			m = TCX_MAP_UNMAPPED;
		a->map = (uint8_t)m;
		a->drop = drop_policy && (m == TCX_MAP_NONE || m == TCX_MAP_UNMAPPED);
		s->unmapped_cookies += m == TCX_MAP_UNMAPPED;
		s->dropped_rows += a->drop;
	}
}

size_t tcx_snapshot_failed_targets(const struct tcx_snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_targets; i++)
		n += !s->targets[i].ok;
	return n + (s->incomplete ? 1 : 0);
}
