/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/names.h"
#include "collectors/snapshot.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"

static void labelsets_free(struct tcx_labelsets *ls)
{
	free(ls->map);
	free(ls->value);
	free(ls->text);
	memset(ls, 0, sizeof(*ls));
}

/* The row arrays of the last collection's snapshot freed, for the next
 * collection (tcx_snapshot_reuse()): a pass writes its rows into memory that
 * is already mapped, instead of mapping and faulting in as much afresh (in
 * the daemon, half of a collection's page faults: README, Benchmark). The
 * next pass starts sized from the last one: tcx_snapshot_seal() trims the
 * filters and actions to their rows, and an array much larger than its rows
 * (the others grow by half) is freed instead. */
#define SPARE_ARRAYS(X) X(filters) X(actions) X(qdiscs) X(classes) X(xvals) X(hvals)
static struct {
#define X(a)                                                                                       \
	void *a;                                                                                   \
	size_t cap_##a;
	SPARE_ARRAYS(X)
#undef X
	int full;
} spare;
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;

/* s is being freed: its row arrays become the spare, when there is none. */
static void spare_put(struct tcx_snapshot *s)
{
	pthread_mutex_lock(&spare_lock);
	if (!spare.full) {
#define X(a)                                                                                       \
	if (s->cap_##a <= s->n_##a + s->n_##a / 2 + 256) {                                         \
		spare.a = s->a;                                                                    \
		spare.cap_##a = s->cap_##a;                                                        \
		s->a = NULL;                                                                       \
	}
		SPARE_ARRAYS(X)
#undef X
		spare.full = 1;
	}
	pthread_mutex_unlock(&spare_lock);
}

void tcx_snapshot_reuse(struct tcx_snapshot *s)
{
	s->reuse = 1;
	pthread_mutex_lock(&spare_lock);
	if (spare.full && !s->n_filters && !s->n_actions && !s->n_qdiscs && !s->n_classes &&
	    !s->n_xvals && !s->n_hvals) {
#define X(a)                                                                                       \
	free(s->a);                                                                                \
	s->a = spare.a;                                                                            \
	s->cap_##a = s->a ? spare.cap_##a : 0;                                                     \
	spare.a = NULL;
		SPARE_ARRAYS(X)
#undef X
		spare.full = 0;
	}
	pthread_mutex_unlock(&spare_lock);
}

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

void tcx_snapshot_clock(struct tcx_snapshot *s)
{
	s->tm_clock_ms = (int64_t)tcx_clock_ms(CLOCK_REALTIME);
	s->tm_boot_ms = (int64_t)tcx_clock_ms(CLOCK_BOOTTIME);
	if (!s->tm_hz)
		s->tm_hz = sysconf(_SC_CLK_TCK);
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
	if (s->reuse)
		spare_put(s);
	free(s->filters);
	free(s->actions);
	free(s->qdevs);
	free(s->qdiscs);
	free(s->classes);
	free(s->xvals);
	free(s->hvals);
	labelsets_free(&s->sets);
	tcx_aggregates_free(s->aggs);
	tcx_finals_free(s->finals);
	tcx_aggregates_free(s->hit_aggs);
	tcx_finals_free(s->hit_finals);
	free(s);
}

static size_t aggregates_bytes(const struct tcx_aggregates *g)
{
	if (!g)
		return 0;
	return tcx_alloc_size(g) + tcx_alloc_size(g->value) + tcx_alloc_size(g->text) +
	       tcx_alloc_size(g->c) + tcx_alloc_size(g->created) + tcx_alloc_size(g->present) +
	       tcx_alloc_size(g->tm_present) + tcx_alloc_size(g->tm);
}

static size_t finals_bytes(const struct tcx_finals *fs)
{
	return fs ? tcx_alloc_size(fs) + tcx_alloc_size(fs->f) : 0;
}

size_t tcx_snapshot_bytes(const struct tcx_snapshot *s)
{
	size_t n = tcx_alloc_size(s) + tcx_alloc_size(s->targets) + tcx_alloc_size(s->filters) +
	           tcx_alloc_size(s->actions) + tcx_alloc_size(s->qdevs) +
	           tcx_alloc_size(s->qdiscs) + tcx_alloc_size(s->classes) +
	           tcx_alloc_size(s->xvals) + tcx_alloc_size(s->hvals) +
	           tcx_alloc_size(s->sets.map) + tcx_alloc_size(s->sets.value) +
	           tcx_alloc_size(s->sets.text);

	return n + aggregates_bytes(s->aggs) + finals_bytes(s->finals) +
	       aggregates_bytes(s->hit_aggs) + finals_bytes(s->hit_finals);
}

#define ADD_ROW(s, arr, n, cap, minimum)                                                           \
	do {                                                                                       \
		if (tcx_grow(&(s)->arr, &(s)->cap, (s)->n + 1, sizeof(*(s)->arr), (minimum)) < 0)  \
			return NULL;                                                               \
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

void tcx_target_init(struct tcx_target *t, const char *netns, const char *dev, uint32_t ifindex,
                     uint32_t block, uint32_t parent)
{
	snprintf(t->netns, sizeof(t->netns), "%s", netns);
	snprintf(t->dev, sizeof(t->dev), "%s", dev);
	t->ifindex = ifindex;
	t->block = block;
	t->parent = parent;
	if (block)
		snprintf(t->parent_name, sizeof(t->parent_name), "block");
	else
		tcx_format_parent(parent, t->parent_name, sizeof(t->parent_name));
	t->ok = 1;
}

const char *tcx_describe_target(const struct tcx_target *t, int with_netns, char *out,
                                size_t outlen)
{
	int n;

	if (t->block)
		n = snprintf(out, outlen, "block %u", t->block);
	else if (t->dev[0])
		n = snprintf(out, outlen, "dev %s parent %s", t->dev, t->parent_name);
	else
		n = snprintf(out, outlen, "all");
	if (with_netns && t->netns[0] && n >= 0 && (size_t)n < outlen)
		snprintf(out + n, outlen - (size_t)n, " netns %s", t->netns);
	return out;
}

int tcx_snapshot_kind_padded(struct tcx_snapshot *s, const char kind[TCX_KIND_MAX])
{
	/* Dumps repeat the same one or two kinds: try the last two first. */
	for (unsigned h = 0; h < 2; h++) {
		unsigned i = s->kind_hint[h];

		if (i < s->n_kinds && tcx_kind_eq(s->kinds[i], kind)) {
			s->kind_hint[h] = s->kind_hint[0];
			s->kind_hint[0] = (uint8_t)i;
			return (int)i;
		}
	}
	for (unsigned i = 0; i < s->n_kinds; i++)
		if (tcx_kind_eq(s->kinds[i], kind)) {
			s->kind_hint[1] = s->kind_hint[0];
			s->kind_hint[0] = (uint8_t)i;
			return (int)i;
		}
	if (s->n_kinds >= TCX_MAX_KINDS)
		return -1;
	memcpy(s->kinds[s->n_kinds], kind, TCX_KIND_MAX);
	s->kinds[s->n_kinds][TCX_KIND_MAX - 1] = '\0';
	return (int)s->n_kinds++;
}

int tcx_snapshot_kind(struct tcx_snapshot *s, const char *kind)
{
	char k[TCX_KIND_MAX] = {0};

	strncpy(k, kind, TCX_KIND_MAX - 1);
	return tcx_snapshot_kind_padded(s, k);
}

uint64_t *tcx_snapshot_add_hvals(struct tcx_snapshot *s, struct tcx_filter *f, unsigned n_keys)
{
	size_t n = TCX_FCTR__MAX + n_keys;
	uint64_t *v;

	if (n_keys > UINT8_MAX || s->n_hvals + n > UINT32_MAX ||
	    tcx_grow(&s->hvals, &s->cap_hvals, s->n_hvals + n, sizeof(*s->hvals), 256) < 0)
		return NULL;
	f->hv = (uint32_t)s->n_hvals;
	f->n_keys = (uint8_t)n_keys;
	v = memset(s->hvals + s->n_hvals, 0, n * sizeof(*v));
	s->n_hvals += n;
	return v;
}

void tcx_snapshot_truncate(struct tcx_snapshot *s, size_t n_filters, size_t n_actions)
{
	/* hv grows with the filters: the first dropped that has some is where
	 * the dropped values start */
	for (size_t i = n_filters; i < s->n_filters; i++)
		if (s->filters[i].hv_present) {
			s->n_hvals = s->filters[i].hv;
			break;
		}
	if (n_filters < s->n_filters)
		s->n_filters = n_filters;
	if (n_actions < s->n_actions)
		s->n_actions = n_actions;
}

/* A class by its device and id, for tcx_snapshot_link_classes(). */
struct class_key {
	uint32_t qdev, handle, i;
};

static int cmp_class_key(const void *a, const void *b)
{
	const struct class_key *x = a, *y = b;

	if (x->qdev != y->qdev)
		return x->qdev < y->qdev ? -1 : 1;
	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

/* The class of that device and id, or NULL. */
static struct class_key *find_class(struct class_key *k, size_t n, uint32_t qdev, uint32_t id)
{
	struct class_key key = {.qdev = qdev, .handle = id};

	return bsearch(&key, k, n, sizeof(*k), cmp_class_key);
}

int tcx_snapshot_link_classes(struct tcx_snapshot *s)
{
	struct class_key *k, *c;

	for (size_t i = 0; i < s->n_classes; i++) {
		s->classes[i].inner = 0;
		s->classes[i].child_qdisc = 0;
	}
	if (!s->n_classes)
		return 0;
	if (!(k = malloc(s->n_classes * sizeof(*k))))
		return -1;
	for (size_t i = 0; i < s->n_classes; i++)
		k[i] = (struct class_key){s->classes[i].qdev, s->classes[i].handle, (uint32_t)i};
	qsort(k, s->n_classes, sizeof(*k), cmp_class_key);
	for (size_t i = 0; i < s->n_classes; i++)
		if ((c = find_class(k, s->n_classes, s->classes[i].qdev, s->classes[i].parent)))
			s->classes[c->i].inner = 1;
	for (size_t i = 0; i < s->n_qdiscs; i++)
		if ((c = find_class(k, s->n_classes, s->qdiscs[i].qdev, s->qdiscs[i].parent)) &&
		    !s->classes[c->i].child_qdisc)
			s->classes[c->i].child_qdisc = (uint32_t)i + 1;
	free(k);
	return 0;
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

_Static_assert(sizeof(struct tcx_row_id) % 8 == 0, "tcx_row_id is hashed in 8-byte words");
_Static_assert(sizeof(struct tcx_qrow_id) % 8 == 0, "tcx_qrow_id is hashed in 8-byte words");

/* ---- series identity ---------------------------------------------------------------- */

static uint64_t filter_hash(const struct tcx_filter *f)
{
	uint64_t h = tcx_hash_mix(f->target, (uint64_t)f->chain << 32 | f->handle);

	return tcx_hash_mix(h, (uint64_t)f->pref << 32 | (uint64_t)f->protocol << 16 | f->kind);
}

static int same_filter(const struct tcx_filter *a, const struct tcx_filter *b)
{
	return a->target == b->target && a->chain == b->chain && a->handle == b->handle &&
	       a->pref == b->pref && a->protocol == b->protocol && a->kind == b->kind;
}

/* An action's identity, given its filter's (the first filter of that
 * identity). */
static uint64_t action_hash(const struct tcx_action *a, uint32_t filter)
{
	uint64_t h = tcx_hash_mix(filter, (uint64_t)a->order << 8 | a->kind);

	return tcx_hash_bytes(h, a->cookie, a->cookie_len);
}

static int same_action(const struct tcx_action *a, uint32_t fa, const struct tcx_action *b,
                       uint32_t fb)
{
	return fa == fb && a->order == b->order && a->kind == b->kind &&
	       a->cookie_len == b->cookie_len && !memcmp(a->cookie, b->cookie, a->cookie_len);
}

/* An open-addressing set of row numbers (+1; 0 is an empty slot). */
struct rowset {
	uint32_t *slot;
	size_t mask;
};

static int rowset_init(struct rowset *t, size_t n)
{
	size_t size = 16;

	while (size < 2 * n)
		size *= 2;
	t->slot = calloc(size, sizeof(*t->slot));
	t->mask = size - 1;
	return t->slot ? 0 : -1;
}

/* How a filter stands to the one before it in its target's dump order:
 * the kernel lists a target's chains, the tps of a chain by pref (one tp a
 * pref), and a tp's filters by handle (flower by its idr; u32 table by
 * table, bucket by bucket, a bucket sorted by node, the knodes past its
 * 4095th, all htid::fff, at its end). */
static int filter_order(const struct tcx_filter *a, const struct tcx_filter *b)
{
	if (a->chain != b->chain)
		return a->chain < b->chain ? -1 : 1;
	if (a->pref != b->pref)
		return a->pref < b->pref ? -1 : 1;
	return (a->handle > b->handle) - (a->handle < b->handle);
}

/* Add the hit counters of filter f to those of first, of its identity: each
 * counter that either has, and key k of each that has key k (first keeps its
 * number of keys). */
static void merge_hits(struct tcx_snapshot *s, struct tcx_filter *first, const struct tcx_filter *f)
{
	const struct tcx_counter_table *t = &tcx_filter_counters;
	const uint64_t *v;
	uint64_t *to;

	if (!f->hv_present)
		return;
	v = s->hvals + f->hv;
	if (!first->hv_present) { /* f's values become first's */
		first->hv = f->hv;
		first->n_keys = f->n_keys;
		first->hv_present = f->hv_present;
		return;
	}
	to = s->hvals + first->hv;
	for (unsigned k = 0; k < t->n; k++)
		to[k] = tcx_counter_add(&t->def[k], to[k], v[k]);
	for (unsigned k = 0; k < first->n_keys && k < f->n_keys; k++)
		to[t->n + k] += v[t->n + k];
	first->hv_present |= f->hv_present;
}

/* Rows in dump order can share an identity only with the row before them.
 * The filters of a target out of order (chains made out of order, u32
 * tables made out of order, a dump resumed after a change), all of them
 * when a target's filters are not together, and the actions of filters that
 * share an identity, or all of them when a filter's actions are out of
 * order, are matched through a hash. */
int tcx_snapshot_merge(struct tcx_snapshot *s)
{
	struct rowset ft = {0}, at = {0};
	uint8_t *hashed = NULL;  /* per target: its filters go through ft */
	uint8_t *grouped = NULL; /* per filter: it shares its identity */
	uint32_t *canon = NULL;  /* per filter: the first of its identity */
	size_t adjacent = 0, n_ft = 0, n_at = 0;
	int all = 0, actions_in_order = 1, ret = -1;

	s->merged_filters = s->merged_actions = 0;
	for (size_t i = 0; i < s->n_filters; i++) {
		struct tcx_filter *f = &s->filters[i];
		const struct tcx_filter *p;
		int c;

		f->merged = 0;
		if (!i)
			continue;
		p = f - 1;
		if (f->target < p->target) {
			all = 1;
			continue;
		}
		if (f->target != p->target || (c = filter_order(p, f)) < 0)
			continue;
		if (c == 0 && same_filter(p, f)) {
			adjacent++;
			continue;
		}
		if (!hashed && !(hashed = calloc(s->n_targets, 1)))
			goto out;
		hashed[f->target] = 1;
	}
	for (size_t i = 0; i < s->n_actions; i++) {
		struct tcx_action *a = &s->actions[i];

		a->merged = 0;
		if (i && (a->filter < a[-1].filter ||
		          (a->filter == a[-1].filter && a->order <= a[-1].order)))
			actions_in_order = 0;
	}
	if (!all && !hashed && !adjacent && actions_in_order) {
		ret = 0; /* every row is the first of its identity */
		goto out;
	}

	for (size_t i = 0; i < s->n_filters; i++)
		n_ft += all || (hashed && hashed[s->filters[i].target]);
	canon = malloc((s->n_filters ? s->n_filters : 1) * sizeof(*canon));
	grouped = calloc(s->n_filters ? s->n_filters : 1, 1);
	if (!canon || !grouped || rowset_init(&ft, n_ft) < 0)
		goto out;
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];

		canon[i] = (uint32_t)i;
		if (all || (hashed && hashed[f->target])) {
			size_t k = filter_hash(f) & ft.mask;

			for (; ft.slot[k]; k = (k + 1) & ft.mask)
				if (same_filter(&s->filters[ft.slot[k] - 1], f)) {
					canon[i] = ft.slot[k] - 1;
					break;
				}
			if (canon[i] == i)
				ft.slot[k] = (uint32_t)i + 1;
		} else if (i && same_filter(f - 1, f)) {
			canon[i] = canon[i - 1];
		}
		if (canon[i] != i)
			grouped[i] = grouped[canon[i]] = 1;
	}
	for (size_t i = 0; i < s->n_actions; i++)
		n_at += !actions_in_order || grouped[s->actions[i].filter];
	if (rowset_init(&at, n_at) < 0)
		goto out;
	for (size_t i = 0; i < s->n_filters; i++) {
		s->filters[i].merged = canon[i] != i;
		s->merged_filters += canon[i] != i;
		if (canon[i] != i)
			merge_hits(s, &s->filters[canon[i]], &s->filters[i]);
	}
	for (size_t i = 0; i < s->n_actions; i++) {
		struct tcx_action *a = &s->actions[i], *first;
		uint32_t fa = canon[a->filter];
		size_t k;

		if (actions_in_order && !grouped[a->filter])
			continue;
		for (k = action_hash(a, fa) & at.mask; at.slot[k]; k = (k + 1) & at.mask) {
			first = &s->actions[at.slot[k] - 1];
			if (same_action(first, canon[first->filter], a, fa)) {
				for (unsigned c = 0; c < TCX_ACT_CTR__MAX; c++)
					first->c[c] = tcx_counter_add(&tcx_action_counters.def[c],
					                              first->c[c], a->c[c]);
				tcx_times_fold(&first->tm_present, first->tm, a->tm_present, a->tm);
				a->merged = 1;
				s->merged_actions++;
				break;
			}
		}
		if (!a->merged)
			at.slot[k] = (uint32_t)i + 1;
	}
	ret = 0;
out:
	if (ret < 0) { /* nothing merged */
		for (size_t i = 0; i < s->n_filters; i++)
			s->filters[i].merged = 0;
		for (size_t i = 0; i < s->n_actions; i++)
			s->actions[i].merged = 0;
		s->merged_filters = s->merged_actions = 0;
		s->errors[TCX_ERR_NOMEM]++;
		s->incomplete = 1;
	}
	free(hashed);
	free(grouped);
	free(canon);
	free(ft.slot);
	free(at.slot);
	return ret;
}

/* A name into a zeroed field of size bytes, cut to size - 1. */
static void copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n); /* the rest stays zero */
}

void tcx_filter_id_of(const struct tcx_snapshot *s, size_t i, struct tcx_row_id *id)
{
	const struct tcx_filter *f = &s->filters[i];
	const struct tcx_target *t = &s->targets[f->target];

	memset(id, 0, sizeof(*id));
	copy_name(id->netns, sizeof(id->netns), t->netns);
	if (!t->block)
		copy_name(id->dev, sizeof(id->dev), t->dev);
	copy_name(id->parent, sizeof(id->parent), t->parent_name);
	copy_name(id->kind, sizeof(id->kind), tcx_kind_name(s, f->kind));
	id->block = t->block;
	id->chain = f->chain;
	id->handle = f->handle;
	id->pref = f->pref;
	id->protocol = f->protocol;
}

void tcx_row_id_of(const struct tcx_snapshot *s, size_t i, struct tcx_row_id *id)
{
	const struct tcx_action *a = &s->actions[i];

	tcx_filter_id_of(s, a->filter, id);
	copy_name(id->action, sizeof(id->action), tcx_kind_name(s, a->kind));
	id->order = a->order;
	id->cookie_len = a->cookie_len;
	tcx_cookie_copy(id->cookie, a->cookie, a->cookie_len);
}

void tcx_qrow_id_of(const struct tcx_snapshot *s, int is_class, size_t i, struct tcx_qrow_id *id)
{
	const struct tcx_qrow *q = is_class ? &s->classes[i] : &s->qdiscs[i];
	const struct tcx_qdev *d = &s->qdevs[q->qdev];

	memset(id, 0, sizeof(*id));
	copy_name(id->netns, sizeof(id->netns), d->netns);
	copy_name(id->dev, sizeof(id->dev), d->dev);
	copy_name(id->kind, sizeof(id->kind), tcx_kind_name(s, q->kind));
	id->handle = q->handle;
	id->parent = is_class ? 0 : q->parent;
}

/* A new final at the end of *fs (made when NULL), zeroed; NULL when out of
 * memory. */
static struct tcx_final *final_new(struct tcx_finals **fs)
{
	struct tcx_final *f;

	if (!*fs && !(*fs = calloc(1, sizeof(**fs))))
		return NULL;
	if (tcx_grow(&(*fs)->f, &(*fs)->cap, (*fs)->n + 1, sizeof(*(*fs)->f), 16) < 0)
		return NULL;
	f = &(*fs)->f[(*fs)->n++];
	memset(f, 0, sizeof(*f));
	return f;
}

int tcx_finals_add(struct tcx_finals **fs, const struct tcx_snapshot *s, size_t i)
{
	struct tcx_final *f = final_new(fs);

	if (!f)
		return -1;
	tcx_row_id_of(s, i, &f->id);
	tcx_counters_of(&s->actions[i], &f->c);
	f->index = s->actions[i].index;
	f->present = (1u << TCX_ACT_CTR__MAX) - 1;
	f->tm_present = s->actions[i].tm_present;
	memcpy(f->tm, s->actions[i].tm, sizeof(f->tm));
	return 0;
}

int tcx_hit_finals_add(struct tcx_finals **fs, const struct tcx_snapshot *s, size_t i)
{
	const struct tcx_filter *flt = &s->filters[i];
	struct tcx_final *f = final_new(fs);

	if (!f)
		return -1;
	tcx_filter_id_of(s, i, &f->id);
	for (unsigned c = 0; c < TCX_FCTR__MAX; c++)
		if (flt->hv_present & (1u << c))
			f->c.v[c] = s->hvals[flt->hv + c];
	f->present = flt->hv_present;
	return 0;
}

void tcx_finals_free(struct tcx_finals *fs)
{
	if (!fs)
		return;
	free(fs->f);
	free(fs);
}

void tcx_aggregates_free(struct tcx_aggregates *g)
{
	if (!g)
		return;
	free(g->value);
	free(g->text);
	free(g->c);
	free(g->created);
	free(g->tm_present);
	free(g->tm);
	free(g->present);
	free(g);
}

/* ---- label sets ------------------------------------------------------------------------ */

/* Add a set of values (NULL: every value empty); returns its number, or -1
 * when out of memory. */
static int64_t labelset_add(struct tcx_labelsets *ls, enum tcx_map_kind m, const char **values)
{
	size_t need = 0;

	for (size_t i = 0; values && i < ls->n_labels; i++)
		need += strlen(values[i]) + 1;
	if (!ls->text_len)
		need++; /* the empty value every set without one points at */
	/* values are 32-bit offsets into text */
	if (ls->text_len + need > UINT32_MAX ||
	    tcx_grow(&ls->text, &ls->text_cap, ls->text_len + need, 1, 4096) < 0)
		return -1;
	if (!ls->text_len)
		ls->text[ls->text_len++] = '\0';
	if (ls->n == ls->cap) {
		/* map and value grow together, to one capacity */
		size_t cap = ls->cap, vcap = ls->cap;

		if (tcx_grow(&ls->map, &cap, ls->n + 1, 1, 64) < 0 ||
		    tcx_grow(&ls->value, &vcap, cap,
		             (ls->n_labels ? ls->n_labels : 1) * sizeof(*ls->value), 64) < 0)
			return -1;
		ls->cap = cap;
	}
	for (size_t i = 0; i < ls->n_labels; i++) {
		uint32_t *v = &ls->value[ls->n * ls->n_labels + i];
		size_t len;

		if (!values || !values[i][0]) {
			*v = 0;
			continue;
		}
		len = strlen(values[i]) + 1;
		*v = (uint32_t)ls->text_len;
		memcpy(ls->text + ls->text_len, values[i], len);
		ls->text_len += len;
	}
	ls->map[ls->n] = (uint8_t)m;
	return (int64_t)ls->n++;
}

/* The label set of action i, whose cookie is not empty: that of an earlier
 * action with the same cookie (seen holds the first action of each cookie),
 * or the cookie resolved now. -1 when out of memory. */
static int64_t cookie_set(struct tcx_snapshot *s, struct rowset *seen, size_t i)
{
	const struct tcx_action *a = &s->actions[i];
	const char *values[TCX_MAX_LABELS];
	struct tcx_label_buf lb;
	enum tcx_map_kind m = TCX_MAP_UNMAPPED;
	size_t k = tcx_cookie_hash(a->cookie, a->cookie_len) & seen->mask;

	for (; seen->slot[k]; k = (k + 1) & seen->mask) {
		const struct tcx_action *b = &s->actions[seen->slot[k] - 1];

		if (b->cookie_len == a->cookie_len && !memcmp(b->cookie, a->cookie, a->cookie_len))
			return b->labels;
	}
	seen->slot[k] = (uint32_t)i + 1;
	if (s->cfg)
		m = tcx_labels_resolve(s->cfg, a->cookie, a->cookie_len, values, &lb);
	if (m == TCX_MAP_UNMAPPED)
		return TCX_LABELSET_UNMAPPED;
	return labelset_add(&s->sets, m, values);
}

/* The label set of each class that `classes:` names, one per entry (an
 * entry without a namespace can name a class in several). Returns 0, or -1
 * when out of memory (then the rest keep TCX_LABELSET_NONE). */
static int classify_classes(struct tcx_snapshot *s)
{
	const struct tcx_classes *cs = s->cfg ? &s->cfg->classes : NULL;
	uint32_t *entry_set;
	int ret = 0;

	if (!cs || !cs->n || !s->n_classes)
		return 0;
	if (!(entry_set = calloc(cs->n, sizeof(*entry_set))))
		return -1;
	for (size_t i = 0; i < s->n_classes; i++) {
		struct tcx_qrow *q = &s->classes[i];
		const struct tcx_qdev *d = &s->qdevs[q->qdev];
		const struct tcx_class_entry *e =
		        tcx_config_class_labels(s->cfg, d->netns, d->dev, q->handle);
		size_t k;
		int64_t set;

		q->labels = TCX_LABELSET_NONE;
		if (!e)
			continue;
		k = (size_t)(e - cs->v);
		if (!entry_set[k]) {
			if ((set = labelset_add(&s->sets, TCX_MAP_EXACT, e->values)) < 0) {
				ret = -1;
				break;
			}
			entry_set[k] = (uint32_t)set;
		}
		q->labels = entry_set[k];
	}
	free(entry_set);
	return ret;
}

void tcx_snapshot_classify(struct tcx_snapshot *s)
{
	struct tcx_labelsets *ls = &s->sets;
	struct rowset seen = {0};
	int drop_policy = s->cfg && s->cfg->unmapped == TCX_UNMAPPED_DROP, oom = 0;
	/* A cookie maps to labels through `cookies:` or a decoder: with
	 * neither, every cookie is unmapped, and none is looked up. */
	int can_map = s->cfg && (s->cfg->n_cookies || s->cfg->n_decoders);

	labelsets_free(ls);
	ls->n_labels = s->cfg ? s->cfg->n_labels : 0;
	s->unmapped_cookies = 0;
	s->dropped_rows = 0;
	if (labelset_add(ls, TCX_MAP_NONE, NULL) != TCX_LABELSET_NONE ||
	    labelset_add(ls, TCX_MAP_UNMAPPED, NULL) != TCX_LABELSET_UNMAPPED ||
	    (can_map && rowset_init(&seen, s->n_actions) < 0))
		oom = 1;
	for (size_t i = 0; i < s->n_actions; i++) {
		struct tcx_action *a = &s->actions[i];
		int64_t set = TCX_LABELSET_NONE;
		enum tcx_map_kind m;

		if (a->merged) /* counted with the row it was added to */
			continue;
		if (a->cookie_len)
			set = !can_map ? TCX_LABELSET_UNMAPPED : oom ? -1 : cookie_set(s, &seen, i);
		if (set < 0) { /* shown without its labels */
			oom = 1;
			set = TCX_LABELSET_UNMAPPED;
		}
		a->labels = (uint32_t)set;
		m = set == TCX_LABELSET_NONE       ? TCX_MAP_NONE
		    : set == TCX_LABELSET_UNMAPPED ? TCX_MAP_UNMAPPED
		                                   : (enum tcx_map_kind)ls->map[set];
		a->drop = drop_policy && (m == TCX_MAP_NONE || m == TCX_MAP_UNMAPPED);
		s->unmapped_cookies += m == TCX_MAP_UNMAPPED;
		s->dropped_rows += a->drop;
	}
	free(seen.slot);
	if (classify_classes(s) < 0)
		oom = 1;
	if (oom) {
		s->errors[TCX_ERR_NOMEM]++;
		s->incomplete = 1;
	}
}

/* Failed targets (indices into the array arg) by reason, then position. */
static int cmp_failed(const void *x, const void *y, void *arg)
{
	const struct tcx_target *t = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = strcmp(t[a].error, t[b].error);

	return c ? c : (a > b) - (a < b);
}

/* Groups (their first positions in the array arg) by their first target. */
static int cmp_group(const void *x, const void *y, void *arg)
{
	const uint32_t *idx = arg;
	uint32_t a = idx[*(const uint32_t *)x], b = idx[*(const uint32_t *)y];

	return (a > b) - (a < b);
}

/* The targets named in the line of a reason that several share. */
#define FAILED_NAMED 3

size_t tcx_snapshot_failures(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	char where[TCX_TARGET_DESC_MAX];
	uint32_t *idx = malloc((s->n_targets + 1) * 2 * sizeof(*idx)), *group;
	size_t n = 0, n_groups = 0;

	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];

		if (t->ok)
			continue;
		if (!idx) /* out of memory: one line each */
			tcx_buf_printf(b, "target %s: %s\n",
			               tcx_describe_target(t, 1, where, sizeof(where)), t->error);
		else
			idx[n] = (uint32_t)i;
		n++;
	}
	/* One line per reason, in the order of its first target: 300
	 * namespaces that failed for want of fds are one line. */
	group = idx ? idx + s->n_targets + 1 : NULL;
	if (idx)
		qsort_r(idx, n, sizeof(*idx), cmp_failed, s->targets);
	for (size_t i = 0; idx && i < n; i++)
		if (!i || strcmp(s->targets[idx[i]].error, s->targets[idx[i - 1]].error) != 0)
			group[n_groups++] = (uint32_t)i;
	if (idx)
		qsort_r(group, n_groups, sizeof(*group), cmp_group, idx);
	for (size_t g = 0; g < n_groups; g++) {
		size_t first = group[g], k = first;
		const char *why = s->targets[idx[first]].error;

		while (k < n && strcmp(s->targets[idx[k]].error, why) == 0)
			k++;
		if (k - first == 1) {
			tcx_buf_printf(b, "target %s: %s\n",
			               tcx_describe_target(&s->targets[idx[first]], 1, where,
			                                   sizeof(where)),
			               why);
			continue;
		}
		tcx_buf_printf(b, "%zu targets: %s (", k - first, why);
		for (size_t j = first; j < k && j < first + FAILED_NAMED; j++)
			tcx_buf_printf(
			        b, "%s%s", j > first ? ", " : "",
			        tcx_describe_target(&s->targets[idx[j]], 1, where, sizeof(where)));
		if (k - first > FAILED_NAMED)
			tcx_buf_printf(b, " and %zu more", k - first - FAILED_NAMED);
		tcx_buf_puts(b, ")\n");
	}
	free(idx);
	for (size_t i = 0; i < s->n_qdevs; i++) {
		const struct tcx_qdev *d = &s->qdevs[i];

		if (d->ok)
			continue;
		tcx_buf_printf(b, "device %s%s%s: %s\n", d->dev, d->netns[0] ? " netns " : "",
		               d->netns, d->error);
		n++;
	}
	return n;
}

size_t tcx_snapshot_failed_targets(const struct tcx_snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_targets; i++)
		n += !s->targets[i].ok;
	return n + (s->incomplete ? 1 : 0);
}
