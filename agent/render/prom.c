/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus text exposition 0.0.4 and OpenMetrics 1.0.0.
 *
 * Samples of one family must stand together, so each family walks every
 * row. The label text of the rows is formatted once per snapshot (struct
 * tcx_rowlabels), in parts that many rows share, and copied into every
 * sample of every variant. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/buildinfo.h"
#include "agent/render/prom.h"
#include "agent/selfstats.h"
#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/names.h"
#include "collectors/plans.h"
#include "config/xstats.h"
#include "build.h"
#include "lib/grow.h"
#include "lib/clock.h"

static const char *const err_causes[TCX_ERR__MAX] = {"malformed", "kernel", "notfound",
                                                     "io",        "nomem",  "resource"};
static const char *const nldrop_causes[TCX_NLDROP__MAX] = {"sender", "length"};
static const char *const sweep_reasons[TCX_SWEEP__MAX] = {"new", "lost", "reload", "interval"};

const char *tcx_err_cause_name(enum tcx_err_cause c)
{
	return c < TCX_ERR__MAX ? err_causes[c] : "unknown";
}

const char *tcx_mode_name(enum tcx_dump_mode m)
{
	switch (m) {
	case TCX_MODE_TERSE:
		return "terse";
	case TCX_MODE_TERSE_REPAIR:
		return "terse+repair";
	case TCX_MODE_FULL:
		return "full";
	default:
		return "none";
	}
}

/* ---- label sets ------------------------------------------------------------------------- */

static void put_label(struct tcx_buf *b, int *first, const char *name, const char *value)
{
	if (!*first)
		tcx_buf_putc(b, ',');
	*first = 0;
	tcx_buf_puts(b, name);
	tcx_buf_put(b, "=\"", 2);
	tcx_buf_escape_label(b, value);
	tcx_buf_putc(b, '"');
}

/* A label whose value needs no escaping (numbers, hex, kernel names). */
static void put_raw(struct tcx_buf *b, const char *name_eq_quote, size_t nlen, const char *v,
                    size_t vlen)
{
	tcx_buf_put(b, name_eq_quote, nlen);
	tcx_buf_put(b, v, vlen);
	tcx_buf_putc(b, '"');
}

#define PUT_RAW(b, lit, v, vlen) put_raw((b), lit, sizeof(lit) - 1, (v), (vlen))

/* dev/parent or block, then netns: identifies a target. */
static void target_labels(struct tcx_buf *b, const struct tcx_target *t)
{
	int first = 1;

	if (t->block) {
		char blk[16];

		snprintf(blk, sizeof(blk), "%u", t->block);
		put_label(b, &first, "block", blk);
	} else {
		put_label(b, &first, "device", t->dev);
		put_label(b, &first, "parent", t->parent_name);
	}
	if (t->netns[0])
		put_label(b, &first, "netns", t->netns);
}

/* The label text of a snapshot's rows, formatted once and copied into every
 * sample of every text variant, in parts that rows share: the tp's, its
 * target's first (dev, parent or block, netns, then chain, protocol, pref,
 * kind), kept once for a run of filters of the same tp; the row's own
 * (handle, then order, action and cookie), the first action of a filter
 * sharing its filter's handle; and the user labels, once per label set. A
 * sample line is then the family's name and three copies. Each action row is
 * written once per counter family; its own labels cost about 90
 * bytes, and 20 more for where they are. */

/* Label text is copied in blocks of this many bytes (put_slice()). */
#define SLICE_PAD 32

struct rl_filter {
	uint32_t tp_off, off; /* its tp's labels; its handle */
	uint16_t tp_len, len;
};

struct rl_action {
	uint32_t off, len; /* its filter's handle and its own labels */
};

struct tcx_rowlabels {
	struct tcx_buf arena;  /* stays < 4 GiB: 32-bit offsets */
	struct rl_filter *flt; /* one per filter */
	struct rl_action *act; /* one per action */
	uint32_t *tgt_off;     /* n_targets + 1 offsets: each target's labels */
	uint32_t *set_off;     /* n_sets + 1 offsets: each label set's labels */
	size_t n_sets;         /* sets.n, or 1 (empty) before tcx_snapshot_classify() */
	struct tcx_buf kinds;  /* each kind, escaped */
	uint32_t kind_off[TCX_MAX_KINDS + 1];
	/* With aggregates: aggs->n + 1 offsets, each one's labels, then when it
	 * was created (in ts_off[i], formatted once: OpenMetrics's _created);
	 * the same of the hit aggregates (hit_aggs) in hagg_off and hts_off. */
	uint32_t *agg_off, *ts_off;
	uint32_t *hagg_off, *hts_off;
	/* What plan() asks of the rows, looked at once per snapshot too: bit k,
	 * some action row shown has counter k not 0 (the `auto` switches);
	 * the action rows shown, and bit t, some has time t; the filters
	 * shown, bit k, some has hit counter k, some has key counters, some is
	 * in_hw. */
	uint32_t nonzero;
	size_t shown;
	unsigned tm;
	size_t filters;
	unsigned hv_present;
	int keys, in_hw;
	/* n_qdiscs + 1 and n_classes + 1 offsets: each one's labels */
	uint32_t *qd_off, *cl_off;
};

size_t tcx_rowlabels_bytes(const struct tcx_rowlabels *l)
{
	if (!l)
		return 0;
	return tcx_alloc_size(l) + tcx_alloc_size(l->arena.p) + tcx_alloc_size(l->kinds.p) +
	       tcx_alloc_size(l->flt) + tcx_alloc_size(l->act) + tcx_alloc_size(l->tgt_off) +
	       tcx_alloc_size(l->set_off) + tcx_alloc_size(l->agg_off) + tcx_alloc_size(l->ts_off) +
	       tcx_alloc_size(l->hagg_off) + tcx_alloc_size(l->hts_off) +
	       tcx_alloc_size(l->qd_off) + tcx_alloc_size(l->cl_off);
}

/* The label text of the last labels freed, for the next build to write
 * into: its pages are in memory already, where a new arena's are cleared
 * by the kernel as they are first written (10 MB at 100k rows, 5% of the
 * daemon's CPU in clear_page). One at most is kept, from one collection's
 * labels freed to the next one's built (VmRSS keeps it between them; the
 * peak, both collections' labels, is the same). Labels are freed by
 * whichever thread lets go of their exposition last: an atomic exchange. */
static _Atomic(char *) spare_arena;

void tcx_rowlabels_free(struct tcx_rowlabels *l)
{
	if (!l)
		return;
	free(atomic_exchange(&spare_arena, l->arena.p));
	l->arena.p = NULL;
	tcx_buf_free(&l->arena);
	tcx_buf_free(&l->kinds);
	free(l->flt);
	free(l->act);
	free(l->tgt_off);
	free(l->set_off);
	free(l->agg_off);
	free(l->ts_off);
	free(l->hagg_off);
	free(l->hts_off);
	free(l->qd_off);
	free(l->cl_off);
	free(l);
}

/* A tp's labels, its target's first:
 * dev="eth0",parent="ingress",chain="0",protocol="ip",pref="10",kind="u32" */
static void tp_part(struct tcx_buf *b, const struct tcx_rowlabels *l, const struct tcx_snapshot *s,
                    const struct tcx_filter *f)
{
	char tmp[32];
	const char *proto;

	target_labels(b, &s->targets[f->target]);

	PUT_RAW(b, ",chain=\"", tmp, tcx_fmt_u64(tmp, f->chain));
	proto = tcx_protocol_name(f->protocol, tmp, sizeof(tmp));
	PUT_RAW(b, ",protocol=\"", proto, strlen(proto));
	PUT_RAW(b, ",pref=\"", tmp, tcx_fmt_u64(tmp, f->pref));
	PUT_RAW(b, ",kind=\"", l->kinds.p + l->kind_off[f->kind],
	        l->kind_off[f->kind + 1] - l->kind_off[f->kind]);
}

static int same_tp(const struct tcx_filter *a, const struct tcx_filter *b)
{
	return a->target == b->target && a->chain == b->chain && a->pref == b->pref &&
	       a->protocol == b->protocol && a->kind == b->kind;
}

/* The row's own parts below are written straight into room reserved for
 * them, each piece a copy of known size. ROW_ROOM is more than a part takes:
 * ,order="<5 digits>",action="<a kind, escaped>",cookie="<32 digits>", or
 * ,handle="<what TCX_HANDLE_MAX holds>". */
#define ROW_ROOM        192
#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)
_Static_assert(sizeof(",order=\"65535\",action=\"\",cookie=\"\"") - 1 +
                               TCX_ESC_LABEL_GROWTH * (TCX_KIND_MAX - 1) + 2 * TCX_COOKIE_MAX <=
                       ROW_ROOM,
               "an action's own labels fit in ROW_ROOM");
_Static_assert(sizeof(",handle=\"\"") - 1 + TCX_HANDLE_MAX <= ROW_ROOM,
               "a filter's own label fits in ROW_ROOM");

static char *row_room(struct tcx_buf *b)
{
	if (b->cap - b->len < ROW_ROOM && tcx_buf_reserve(b, ROW_ROOM) < 0)
		return NULL;
	return b->p + b->len;
}

/* A filter's own label: ,handle="800::800" */
static void handle_part(struct tcx_buf *b, const struct tcx_snapshot *s, const struct tcx_filter *f)
{
	char *p = row_room(b);

	if (!p)
		return;
	p = PUT_LIT(p, ",handle=\"");
	p += tcx_format_handle(tcx_kind_name(s, f->kind), f->handle, p, TCX_HANDLE_MAX);
	*p++ = '"';
	b->len = (size_t)(p - b->p);
}

/* The part of an action's labels after its filter's and before its label
 * set's: ,order="1",action="mirred",cookie="0a0b" */
static void action_part(struct tcx_buf *b, const struct tcx_rowlabels *l,
                        const struct tcx_action *a)
{
	uint32_t k0 = l->kind_off[a->kind], kn = l->kind_off[a->kind + 1] - k0;
	char *p = row_room(b);

	if (!p)
		return;
	p = PUT_LIT(p, ",order=\"");
	p += tcx_fmt_u64(p, a->order);
	p = PUT_LIT(p, "\",action=\"");
	memcpy(p, l->kinds.p + k0, kn);
	p = PUT_LIT(p + kn, "\",cookie=\"");
	tcx_cookie_hex(a->cookie, a->cookie_len, p);
	p += 2u * a->cookie_len;
	*p++ = '"';
	b->len = (size_t)(p - b->p);
}

/* The user labels of label set i: ,tenant="acme",rule="first" */
static void set_part(struct tcx_buf *b, const struct tcx_snapshot *s, uint32_t i)
{
	for (size_t k = 0; k < s->sets.n_labels; k++) {
		tcx_buf_putc(b, ',');
		tcx_buf_puts(b, s->cfg->labels[k]);
		tcx_buf_put(b, "=\"", 2);
		tcx_buf_escape_label(b, tcx_labelset_value(s, i, k));
		tcx_buf_putc(b, '"');
	}
}

/* The kept labels of aggregate i: tenant="acme",rule="first" (those the
 * rows would leave out when empty left out too). */
static void aggregate_part(struct tcx_buf *b, const struct tcx_aggregates *g, size_t i)
{
	int first = 1;

	for (size_t k = 0; k < g->n_labels; k++) {
		const char *v = tcx_aggregate_value(g, i, k);

		if (!g->optional[k] || v[0])
			put_label(b, &first, g->names[k], v);
	}
}

/* The labels of aggregates g into the arena: *off gets g->n + 1 offsets,
 * each one's labels, then when it was created (at (*ts)[i]). Returns 0, or
 * -1 when out of memory. */
static int aggregates_labels(struct tcx_buf *ar, const struct tcx_aggregates *g, uint32_t **off,
                             uint32_t **ts)
{
	char tv[TCX_FMT_DOUBLE_MAX];
	size_t ts_len = 0;

	*off = malloc((g->n + 1) * sizeof(**off));
	*ts = malloc((g->n + 1) * sizeof(**ts));
	if (!*off || !*ts)
		return -1;
	for (size_t i = 0; i < g->n; i++) {
		(*off)[i] = (uint32_t)ar->len;
		aggregate_part(ar, g, i);
		(*ts)[i] = (uint32_t)ar->len;
		/* aggregates appear together: a time is formatted once (the
		 * shortest form that reads back takes microseconds) */
		if (!i || g->created[i] != g->created[i - 1])
			ts_len = tcx_fmt_double(tv, g->created[i]);
		tcx_buf_put(ar, tv, ts_len);
		if (ar->len > UINT32_MAX)
			return -1;
	}
	(*off)[g->n] = (uint32_t)ar->len;
	return 0;
}

/* A qdisc's or a class's labels, as tc prints them:
 * device="eth0",netns="blue",kind="htb",handle="1:10",parent="1:1", then a
 * class's user labels. */
static void qrow_part(struct tcx_buf *b, const struct tcx_rowlabels *l,
                      const struct tcx_snapshot *s, const struct tcx_qrow *q, int is_class)
{
	char tmp[32];

	PUT_RAW(b, ",kind=\"", l->kinds.p + l->kind_off[q->kind],
	        l->kind_off[q->kind + 1] - l->kind_off[q->kind]);
	tcx_format_qhandle(q->handle, tmp, sizeof(tmp));
	PUT_RAW(b, ",handle=\"", tmp, strlen(tmp));
	tcx_format_qparent(q->parent, tcx_kind_name(s, q->kind), tmp, sizeof(tmp));
	PUT_RAW(b, ",parent=\"", tmp, strlen(tmp));
	if (is_class)
		set_part(b, s, q->labels);
}

/* Offsets in l->arena of the labels of n rows (n + 1). The device's part
 * (device, netns) is escaped once for a run of rows of one device. */
static uint32_t *qrows_labels(struct tcx_rowlabels *l, const struct tcx_snapshot *s,
                              const struct tcx_qrow *rows, size_t n, int is_class)
{
	uint32_t *off = malloc((n + 1) * sizeof(*off));
	size_t dev_off = 0, dev_len = 0;

	for (size_t i = 0; off && i < n; i++) {
		struct tcx_buf *b = &l->arena;

		off[i] = (uint32_t)b->len;
		if (i && rows[i].qdev == rows[i - 1].qdev) {
			if (b->cap - b->len < dev_len && tcx_buf_reserve(b, dev_len) < 0)
				break;
			memcpy(b->p + b->len, b->p + dev_off, dev_len);
			b->len += dev_len;
		} else {
			const struct tcx_qdev *d = &s->qdevs[rows[i].qdev];
			int first = 1;

			put_label(b, &first, "device", d->dev);
			if (d->netns[0])
				put_label(b, &first, "netns", d->netns);
			dev_off = off[i];
			dev_len = b->len - dev_off;
		}
		qrow_part(&l->arena, l, s, &rows[i], is_class);
		if (l->arena.len > UINT32_MAX) {
			free(off);
			return NULL;
		}
	}
	if (off)
		off[n] = (uint32_t)l->arena.len;
	return off;
}

struct tcx_rowlabels *tcx_rowlabels_build(const struct tcx_snapshot *s)
{
	struct tcx_rowlabels *l = calloc(1, sizeof(*l));
	struct tcx_buf *ar;

	if (!l)
		return NULL;
	ar = &l->arena;
	tcx_buf_init_mem(ar);
	if ((ar->p = atomic_exchange(&spare_arena, NULL)))
		ar->cap = tcx_alloc_size(ar->p);
	tcx_buf_init_mem(&l->kinds);
	l->flt = malloc((s->n_filters ? s->n_filters : 1) * sizeof(*l->flt));
	l->act = malloc((s->n_actions ? s->n_actions : 1) * sizeof(*l->act));
	l->tgt_off = malloc((s->n_targets + 1) * sizeof(*l->tgt_off));
	l->n_sets = s->sets.n ? s->sets.n : 1;
	l->set_off = malloc((l->n_sets + 1) * sizeof(*l->set_off));
	/* The spare is the size of the labels freed last (of the collection
	 * before, as a rule), a good guess: growing it ahead would copy what it
	 * held. Without one, a guess from the rows. kinds.p is never NULL,
	 * even when every kind escapes to nothing: the parts below add offsets
	 * to it. */
	if (!l->flt || !l->act || !l->tgt_off || !l->set_off ||
	    tcx_buf_reserve(
	            ar, ar->p ? 0 : 4096 + (s->aggs ? s->n_filters * 48 : s->n_actions * 96)) < 0 ||
	    tcx_buf_reserve(&l->kinds, 16) < 0)
		goto fail;
	for (unsigned k = 0; k < s->n_kinds; k++) {
		l->kind_off[k] = (uint32_t)l->kinds.len;
		tcx_buf_escape_label(&l->kinds, s->kinds[k]);
	}
	l->kind_off[s->n_kinds] = (uint32_t)l->kinds.len;
	if (l->kinds.err)
		goto fail;
	for (size_t i = 0; i < s->n_targets; i++) {
		l->tgt_off[i] = (uint32_t)ar->len;
		target_labels(ar, &s->targets[i]);
	}
	l->tgt_off[s->n_targets] = (uint32_t)ar->len;
	for (size_t i = 0; i < l->n_sets; i++) {
		l->set_off[i] = (uint32_t)ar->len;
		set_part(ar, s, (uint32_t)i);
		if (ar->len > UINT32_MAX)
			goto fail;
	}
	l->set_off[l->n_sets] = (uint32_t)ar->len;
	if (s->aggs && aggregates_labels(ar, s->aggs, &l->agg_off, &l->ts_off) < 0)
		goto fail;
	if (s->aggs && s->hit_aggs &&
	    aggregates_labels(ar, s->hit_aggs, &l->hagg_off, &l->hts_off) < 0)
		goto fail;
	/* Actions follow their filter in a snapshot; any that do not get
	 * their filter's labels copied in front of their own. */
	for (size_t fi = 0, ai = 0; fi <= s->n_filters; fi++) {
		size_t first = ai;

		if (fi < s->n_filters) {
			const struct tcx_filter *f = &s->filters[fi];
			struct rl_filter *lf = &l->flt[fi];

			if (fi && same_tp(f, &s->filters[fi - 1])) {
				lf->tp_off = lf[-1].tp_off;
				lf->tp_len = lf[-1].tp_len;
			} else {
				lf->tp_off = (uint32_t)ar->len;
				tp_part(ar, l, s, f);
				lf->tp_len = (uint16_t)(ar->len - lf->tp_off);
			}
			lf->off = (uint32_t)ar->len;
			handle_part(ar, s, f);
			lf->len = (uint16_t)(ar->len - lf->off);
			if (!f->merged) {
				l->filters++;
				l->hv_present |= f->hv_present;
				l->keys |= f->n_keys != 0;
				l->in_hw |= (f->flags & TCX_FLAG_IN_HW) != 0;
			}
		}
		for (; ai < s->n_actions && (fi == s->n_filters || s->actions[ai].filter == fi);
		     ai++) {
			const struct tcx_action *a = &s->actions[ai];
			struct rl_action *la = &l->act[ai];

			if (tcx_action_shown(a)) {
				l->nonzero |= tcx_counters_nonzero(&tcx_action_counters, a->c);
				l->tm |= a->tm_present;
				l->shown++;
			}
			if (s->aggs) { /* the aggregates' labels stand for the rows' */
				la->off = la->len = 0;
				continue;
			}
			if (ai == first && fi < s->n_filters) {
				la->off = l->flt[fi].off;
			} else {
				la->off = (uint32_t)ar->len;
				handle_part(ar, s, &s->filters[a->filter]);
			}
			action_part(ar, l, a);
			la->len = (uint32_t)(ar->len - la->off);
		}
		if (ar->err || ar->len > UINT32_MAX)
			goto fail;
	}
	l->qd_off = qrows_labels(l, s, s->qdiscs, s->n_qdiscs, 0);
	l->cl_off = qrows_labels(l, s, s->classes, s->n_classes, 1);
	if (!l->qd_off || !l->cl_off || ar->err)
		goto fail;
	/* Give the slack back, but for the padding put_slice() reads. */
	if (tcx_buf_reserve(ar, SLICE_PAD) < 0)
		goto fail;
	memset(ar->p + ar->len, 0, SLICE_PAD);
	if (ar->len + SLICE_PAD < ar->cap) {
		char *p = realloc(ar->p, ar->len + SLICE_PAD);

		if (p) {
			ar->p = p;
			ar->cap = ar->len + SLICE_PAD;
		}
	}
	return l;
fail:
	tcx_rowlabels_free(l);
	return NULL;
}

/* The parts of an exposition, in order: each a loop over families and, in
 * each family, over rows. */
enum section {
	SEC_ACTIONS, /* tc_action_* */
	SEC_TIMES,   /* tc_action_*_timestamp_seconds */
	SEC_FILTERS, /* tc_filter_flags_info */
	SEC_HITS,    /* tc_filter_lookups_total, tc_filter_hits_total, ... */
	SEC_KEYS,    /* tc_filter_u32_key_hits_total */
	SEC_QDISCS,  /* tc_qdisc_* */
	SEC_CLASSES, /* tc_class_* */
	SEC_TREE,    /* tc_class_info */
	SEC_XSTATS,  /* tc_qdisc_<kind>_*, tc_class_<kind>_* */
	SEC_PLANS,   /* the same, of the options (collectors/plans.h) */
	SEC_TARGETS, /* tc_scrape_collector_* */
	SEC_QDEVS,   /* tc_scrape_device_* */
	SEC_META,    /* tc_exporter_* of the snapshot, build info */
	SEC_SELF,    /* the daemon's own counters, process_* */
	SEC_EOF,     /* OpenMetrics' # EOF */
	SEC__N,
};

/* Where a rendering stands, between two sample lines: it pauses there when
 * the buffer holds `limit` bytes (tcx_prom_render_next()) and goes on from
 * there. */
struct cursor {
	enum section sec;
	unsigned fam;   /* the family within the section */
	size_t row;     /* the next row of the family */
	size_t written; /* its rows written (those shown: max_rows, max_filters) */
	int hdr;        /* its HELP and TYPE are written */
};

/* The whole seconds put_ms() wrote last, as text. The times of a snapshot
 * bunch together (rules installed in one batch, the last use of busy ones
 * within the interval, the install time of those never used): the 10
 * digits are copied, not made again (at 100k u32 rules, 7% of --once's
 * instructions). */
struct secs_memo {
	uint64_t s;
	uint8_t n; /* 0: none yet */
	char text[20];
};

/* A render pass: the rows' labels (given, or its own), what it writes of
 * the row families (tc_action_* and tc_filter_flags_info), and where it
 * stands. */
struct render {
	const struct tcx_snapshot *s;
	const struct tcx_rowlabels *l;
	struct tcx_rowlabels *own;      /* built here: freed with the pass */
	int om;                         /* OpenMetrics, else text 0.0.4 */
	const struct tcx_selfstats *st; /* the daemon's counters, or NULL */
	struct cursor at;
	size_t limit;                 /* pause once the buffer holds this many bytes */
	struct tcx_buf row;           /* scratch for one-off label sets */
	uint8_t on[TCX_ACT_CTR__MAX]; /* the tc_action_* families written (`families:`) */
	uint8_t tm_on[TCX_TM__MAX];   /* the action time families written */
	unsigned tm_mask;             /* the same: bit (1 << enum tcx_tm) */
	int created_on;               /* OpenMetrics, and NAME_created of the counters */
	uint8_t qdisc_on[TCX_QSTAT__MAX], class_on[TCX_QSTAT__MAX]; /* tc_qdisc_*, tc_class_* */
	int xstats_on;                                              /* tc_qdisc_<kind>_* ... */
	int tree_on;                                                /* tc_class_info */
	int plans_on;                                               /* collectors/plans.h */
	int flags_on;                   /* tc_filter_flags_info is written */
	uint8_t hits_on[TCX_FCTR__MAX]; /* the filter hit families written */
	int keys_on;                    /* tc_filter_u32_key_hits_total is written */
	size_t max_rows;                /* action rows (or aggregates) written, the first ones */
	size_t max_filters;             /* filters written to tc_filter_flags_info */
	/* the hit counters of the filters (with aggregates: of the hit
	 * aggregates) before it are written */
	size_t hits_end;
	uint64_t series_dropped; /* series left out past max_series */
	struct secs_memo secs;   /* put_ms()'s */
};

/* Is switch sw, set to auto, on: does some row (or aggregate) have a
 * counter of the switch that is not 0, or (auto_in_hw) a filter in
 * hardware? */
static int auto_on(const struct render *r, enum tcx_switch_id sw)
{
	const struct tcx_counter_table *t = &tcx_action_counters;
	uint32_t mask = 0, nonzero = r->l->nonzero | (r->s->aggs ? r->s->aggs->nonzero : 0);

	for (unsigned k = 0; k < t->n; k++)
		mask |= (uint32_t)(t->def[k].sw == sw) << k;
	return (nonzero & mask) || (tcx_family_switches[sw].auto_in_hw && r->l->in_hw);
}

/* The hit series of filter f that plan() turned on. */
static size_t hit_series(const struct render *r, const struct tcx_filter *f)
{
	size_t n = r->keys_on && (f->hv_present & (1u << TCX_FCTR_HITS)) ? f->n_keys : 0;

	for (unsigned k = 0; k < TCX_FCTR__MAX; k++)
		n += r->hits_on[k] && (f->hv_present & (1u << k));
	return f->merged ? 0 : n;
}

/* The hit series of hit aggregate i that plan() turned on. */
static size_t hit_agg_series(const struct render *r, size_t i)
{
	size_t n = 0;

	for (unsigned k = 0; k < TCX_FCTR__MAX; k++)
		n += r->hits_on[k] && (r->s->hit_aggs->present[i] & (1u << k));
	return n;
}

/* The time series of action row i (with aggregates: of aggregate i) that
 * plan() turned on. */
static unsigned time_series(const struct render *r, size_t i)
{
	const struct tcx_snapshot *s = r->s;
	unsigned p = s->aggs ? (s->aggs->tm_present ? s->aggs->tm_present[i] : 0)
	                     : s->actions[i].tm_present;

	return (unsigned)__builtin_popcount(p & r->tm_mask);
}

/* Which row families are written, and how many of their series fit in
 * max_series: the first action rows (or aggregates) whose every series fits,
 * then the first filters' flags in what is left, then the hit counters of
 * the first filters (or hit aggregates) whose every hit series fits in what
 * is left. With aggregates, no key hits (each filter's keys are its own). */
static void plan(struct render *r)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_config *cfg = s->cfg;
	const struct tcx_counter_table *t = &tcx_action_counters;
	int aggregated = s->aggs != NULL;
	size_t k = 0, rows = 0, fit = 0, filters = 0, n_hit_rows;
	uint64_t all = 0, kept = 0; /* the action rows' series, those that fit */
	uint64_t max = cfg ? cfg->max_series : 0;
	int limited = max != 0; /* max counts down to 0 */
	/* each switch: 1 on, 0 off, -1 auto and not looked at yet */
	int sw_on[TCX_SW__MAX];
	unsigned present = 0, keys = 0;

	for (unsigned sw = 0; sw < TCX_SW__MAX; sw++) {
		enum tcx_family_mode m = tcx_switch_mode(
		        sw, cfg ? cfg->families.mode[sw] : TCX_FAM_DEFAULT, aggregated);

		sw_on[sw] = m == TCX_FAM_ON ? 1 : m == TCX_FAM_OFF ? 0 : -1;
	}
	for (unsigned c = 0; c < t->n; c++) {
		enum tcx_switch_id sw = t->def[c].sw;

		if (sw_on[sw] < 0)
			sw_on[sw] = auto_on(r, sw);
		r->on[c] = (uint8_t)sw_on[sw];
		k += r->on[c];
	}
	r->flags_on = sw_on[TCX_SW_FLAGS] > 0;
	/* a family no filter (no hit aggregate) has a counter of is left out,
	 * HELP and all */
	if (!aggregated) {
		present = r->l->hv_present;
		keys = r->l->keys;
	}
	for (size_t i = 0; aggregated && s->hit_aggs && i < s->hit_aggs->n; i++)
		present |= s->hit_aggs->present[i];
	for (unsigned c = 0; c < TCX_FCTR__MAX; c++)
		r->hits_on[c] = sw_on[tcx_filter_counters.def[c].sw] > 0 && (present & (1u << c));
	r->keys_on = sw_on[TCX_SW_KEYS] > 0 && keys;
	for (unsigned c = 0; c < TCX_QSTAT__MAX; c++) {
		r->qdisc_on[c] = sw_on[tcx_qdisc_counters.def[c].sw] != 0;
		r->class_on[c] = sw_on[tcx_class_counters.def[c].sw] != 0;
	}
	/* an optional counter's family only when some row has it */
	for (unsigned c = 0; c < TCX_QSTAT__MAX; c++) {
		unsigned qd = 0, cl = 0;

		if (!tcx_qdisc_counters.def[c].optional)
			continue;
		for (size_t i = 0; i < s->n_qdiscs && !qd; i++)
			qd = s->qdiscs[i].stats_present & (1u << c);
		for (size_t i = 0; i < s->n_classes && !cl; i++)
			cl = s->classes[i].stats_present & (1u << c);
		r->qdisc_on[c] &= qd != 0;
		r->class_on[c] &= cl != 0;
	}
	r->xstats_on = sw_on[TCX_SW_XSTATS] != 0;
	r->tree_on = sw_on[TCX_SW_CLASS] != 0;
	r->plans_on = sw_on[TCX_SW_PLANS] != 0;
	r->created_on = r->om && sw_on[TCX_SW_CREATED] > 0;
	/* a time family no row (no aggregate) has is left out, HELP and all */
	if (sw_on[TCX_SW_LIVENESS] > 0) {
		unsigned tm = 0;

		if (s->aggs && s->aggs->tm_present) {
			for (size_t i = 0; i < s->aggs->n; i++)
				tm |= s->aggs->tm_present[i];
		} else if (!s->aggs) {
			tm = r->l->tm;
		}
		for (unsigned x = 0; x < TCX_TM__MAX; x++)
			r->tm_on[x] = (tm >> x) & 1;
		r->tm_mask = tm;
	}
	if (r->flags_on)
		filters = r->l->filters;
	r->max_filters = filters;
	/* the first action rows (aggregates) whose every series fits: k
	 * each, and their times; with no max_series, all of them */
	if (!limited)
		fit = s->aggs ? s->aggs->n : r->l->shown;
	for (size_t i = 0, n_rows = s->aggs ? s->aggs->n : s->n_actions; limited && i < n_rows;
	     i++) {
		uint64_t n;

		if (!s->aggs && !tcx_action_shown(&s->actions[i]))
			continue;
		n = k + time_series(r, i);
		all += n;
		rows++;
		if (rows == fit + 1 && kept + n <= max) {
			kept += n;
			fit++;
		}
	}
	r->max_rows = fit;
	if (max) {
		max -= kept;
		if (filters > max)
			r->max_filters = (size_t)max;
	}
	r->series_dropped = all - kept + (filters - r->max_filters);
	if (limited)
		max -= r->max_filters;
	n_hit_rows = !aggregated ? s->n_filters : s->hit_aggs ? s->hit_aggs->n : 0;
	r->hits_end = n_hit_rows;
	for (size_t i = 0, n; limited && i < n_hit_rows; i++) {
		if (!(n = aggregated ? hit_agg_series(r, i) : hit_series(r, &s->filters[i])))
			continue;
		if (r->hits_end < i || (limited && n > max)) {
			r->hits_end = r->hits_end < i ? r->hits_end : i;
			r->series_dropped += n;
			continue;
		}
		if (limited)
			max -= n;
	}
}

static int render_init(struct render *r, const struct tcx_snapshot *s, int om,
                       const struct tcx_selfstats *st, const struct tcx_rowlabels *l)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->om = om;
	r->st = st;
	r->limit = SIZE_MAX;
	tcx_buf_init_mem(&r->row);
	if (!l)
		l = r->own = tcx_rowlabels_build(s);
	r->l = l;
	if (!l)
		return -1;
	plan(r);
	return 0;
}

static void render_free(struct render *r)
{
	tcx_rowlabels_free(r->own);
	tcx_buf_free(&r->row);
}

/* The labels of target ti. */
static inline void put_target(struct tcx_buf *b, const struct render *r, size_t ti)
{
	const struct tcx_rowlabels *l = r->l;

	tcx_buf_put(b, l->arena.p + l->tgt_off[ti], l->tgt_off[ti + 1] - l->tgt_off[ti]);
}

/* Before row i of a family (its `written` rows written): pause there when
 * the buffer holds r->limit bytes. */
static inline int pause_at(struct render *r, const struct tcx_buf *b, size_t i, size_t written)
{
	if (b->len < r->limit)
		return 0;
	r->at.row = i;
	r->at.written = written;
	return 1;
}

/* The family at r->at is done: the next one starts from its first row. */
static inline void family_done(struct render *r)
{
	r->at.row = r->at.written = 0;
	r->at.hdr = 0;
}

/* ---- families -------------------------------------------------------------------------- */

static void family_header(struct tcx_buf *b, const char *name, const char *type, const char *help,
                          int om)
{
	size_t n = strlen(name);

	/* OpenMetrics names the family without the _total/_info suffix. */
	if (om && strcmp(type, "counter") == 0 && n > 6 && strcmp(name + n - 6, "_total") == 0)
		n -= 6;
	else if (om && strcmp(type, "info") == 0 && n > 5 && strcmp(name + n - 5, "_info") == 0)
		n -= 5;
	else if (!om && strcmp(type, "info") == 0)
		type = "gauge";
	tcx_buf_put(b, "# HELP ", 7);
	tcx_buf_put(b, name, n);
	tcx_buf_putc(b, ' ');
	tcx_buf_puts(b, help);
	tcx_buf_put(b, "\n# TYPE ", 8);
	tcx_buf_put(b, name, n);
	tcx_buf_putc(b, ' ');
	tcx_buf_puts(b, type);
	tcx_buf_putc(b, '\n');
}

/* NAME{LABELS} and the space before the value. */
static void sample_head(struct tcx_buf *b, const char *name, const char *labels, size_t llen)
{
	tcx_buf_puts(b, name);
	if (llen) {
		tcx_buf_putc(b, '{');
		tcx_buf_put(b, labels, llen);
		tcx_buf_putc(b, '}');
	}
	tcx_buf_putc(b, ' ');
}

static void sample(struct tcx_buf *b, const char *name, const char *labels, size_t llen, uint64_t v)
{
	sample_head(b, name, labels, llen);
	tcx_buf_u64(b, v);
	tcx_buf_putc(b, '\n');
}

/* A sample with one label, built in r->row. */
static void sample1(struct render *r, struct tcx_buf *b, const char *name, const char *label,
                    const char *value, uint64_t v)
{
	int first = 1;

	r->row.len = 0;
	put_label(&r->row, &first, label, value);
	sample(b, name, r->row.p, r->row.len, v);
}

/* A slice of the label text. */
struct slice {
	const char *p;
	size_t n;
};

/* Copy a slice in blocks of 16 bytes, two at a time: up to SLICE_PAD - 1
 * bytes past its end are read (the arena and the names are padded for it)
 * and written (put_slices() reserves room for it), then overwritten by what
 * follows. */
static inline char *put_slice(char *p, struct slice s)
{
	for (size_t k = 0; k < s.n; k += SLICE_PAD) {
		memcpy(p + k, s.p + k, 16);
		memcpy(p + k + 16, s.p + k + 16, 16);
	}
	return p + s.n;
}

/* The start of a line: n slices, with one capacity check for them and for
 * `tail` more bytes. Returns where the rest of the line goes, or NULL when
 * the buffer failed. */
static inline char *put_slices(struct tcx_buf *b, const struct slice *sl, unsigned n, size_t tail)
{
	size_t need = tail + SLICE_PAD;
	char *p;

	for (unsigned k = 0; k < n; k++)
		need += sl[k].n;
	if (b->cap - b->len < need && tcx_buf_reserve(b, need) < 0)
		return NULL;
	p = b->p + b->len;
	for (unsigned k = 0; k < n; k++)
		p = put_slice(p, sl[k]);
	return p;
}

/* A name and its opening brace, padded for put_slice(). */
struct padded_name {
	char text[64 + SLICE_PAD];
	struct slice s;
};

static void padded_name(struct padded_name *pn, const char *name)
{
	size_t n = strlen(name);

	memset(pn->text, 0, sizeof(pn->text));
	memcpy(pn->text, name, n);
	pn->text[n] = '{';
	pn->s = (struct slice){pn->text, n + 1};
}

/* The label text of action row i, in three slices. */
static inline void action_slices(const struct render *r, size_t i, struct slice *lb)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	const struct tcx_action *a = &s->actions[i];
	const struct rl_filter *lf = &l->flt[a->filter];
	uint32_t set = a->labels < l->n_sets ? a->labels : 0;

	lb[0] = (struct slice){l->arena.p + lf->tp_off, lf->tp_len};
	lb[1] = (struct slice){l->arena.p + l->act[i].off, l->act[i].len};
	lb[2] = (struct slice){l->arena.p + l->set_off[set], l->set_off[set + 1] - l->set_off[set]};
}

/* The end of a sample line: the value and the newline, after "} " (the
 * line's start is in place, p its end). */
static inline void put_value(struct tcx_buf *b, char *p, uint64_t v)
{
	*p++ = '}';
	*p++ = ' ';
	p += tcx_fmt_u64(p, v);
	*p++ = '\n';
	b->len = (size_t)(p - b->p);
}

/* The end of a sample line whose value is a time in ms of Unix time, in
 * seconds: "1765051234.56" (no trailing zeros). p has room for 32 bytes. */
static inline void put_ms(struct secs_memo *m, struct tcx_buf *b, char *p, int64_t ms)
{
	uint64_t v = ms > 0 ? (uint64_t)ms : 0;
	unsigned frac = (unsigned)(v % 1000);

	*p++ = '}';
	*p++ = ' ';
	if (!m->n || m->s != v / 1000) {
		m->s = v / 1000;
		m->n = (uint8_t)tcx_fmt_u64(m->text, m->s);
	}
	memcpy(p, m->text, sizeof(m->text)); /* 20 bytes: the room is 32 */
	p += m->n;
	if (frac) {
		*p++ = '.';
		*p++ = (char)('0' + frac / 100);
		if (frac % 100) {
			*p++ = (char)('0' + frac / 10 % 10);
			if (frac % 10)
				*p++ = (char)('0' + frac % 10);
		}
	}
	*p++ = '\n';
	b->len = (size_t)(p - b->p);
}

/* The samples of one family of a counter table: counter k of each row,
 * from row r->at.row on. sl[0] is the family's name and brace; the rest is
 * theirs. Returns 1 when it paused (pause_at()), else 0. */
typedef int counter_samples_fn(struct render *r, int om, const struct tcx_counter_def *d,
                               unsigned k, struct slice *sl, struct tcx_buf *b);

/* The families of counter table t, in their order of the exposition
 * (expo), those that are on: each its HELP and TYPE, then its samples. The
 * table is read per family; samples() writes the rows. Returns 1 when it
 * paused, else 0. */
static int counter_families(struct render *r, int om, const struct tcx_counter_table *t,
                            const uint8_t *on, counter_samples_fn *samples, struct tcx_buf *b)
{
	static const char *const types[] = {
	        [TCX_METRIC_COUNTER] = "counter", [TCX_METRIC_GAUGE] = "gauge"};

	for (unsigned x = r->at.fam; x < t->n; x++) {
		struct slice sl[4]; /* NAME{, then the labels */
		struct padded_name name;
		unsigned k = 0;

		while (k < t->n && t->def[k].expo != x)
			k++;
		if (k == t->n || !on[k])
			continue;
		padded_name(&name, t->def[k].family);
		sl[0] = name.s;
		if (!r->at.hdr)
			family_header(b, t->def[k].family, types[t->def[k].type], t->def[k].help,
			              om);
		r->at.hdr = 1;
		if (samples(r, om, &t->def[k], k, sl, b)) {
			r->at.fam = x;
			return 1;
		}
		family_done(r);
	}
	return 0;
}

/* Counter k of aggregate i of g (its labels and creation time at off[i]
 * and ts[i] in the arena), and in OpenMetrics when it first appeared
 * (NAME_created). Returns -1 when the buffer failed, else 0. */
static int aggregate_sample(struct render *r, int om, const struct tcx_counter_def *d,
                            const struct tcx_aggregates *g, const uint32_t *off, const uint32_t *ts,
                            size_t i, unsigned k, struct slice *sl, struct tcx_buf *b)
{
	const char *arena = r->l->arena.p;
	size_t stem = strlen(d->family) - 6; /* without _total */
	char *p;

	sl[1] = (struct slice){arena + off[i], ts[i] - off[i]};
	if (!(p = put_slices(b, sl, 2, 24)))
		return -1;
	put_value(b, p, g->c[i].v[k]);
	if (r->created_on) {
		tcx_buf_put(b, d->family, stem);
		tcx_buf_put(b, "_created{", 9);
		tcx_buf_put(b, sl[1].p, sl[1].n);
		tcx_buf_put(b, "} ", 2);
		tcx_buf_put(b, arena + ts[i], off[i + 1] - ts[i]);
		tcx_buf_putc(b, '\n');
	}
	return 0;
}

/* With `aggregate`: one series per aggregate, the first max_rows. */
static int aggregate_samples(struct render *r, int om, const struct tcx_counter_def *d, unsigned k,
                             struct slice *sl, struct tcx_buf *b)
{
	for (size_t i = r->at.row; i < r->max_rows; i++) {
		if (pause_at(r, b, i, 0))
			return 1;
		if (aggregate_sample(r, om, d, r->s->aggs, r->l->agg_off, r->l->ts_off, i, k, sl,
		                     b) < 0)
			return 0;
	}
	return 0;
}

/* One series per action row shown, the first max_rows; with `created`
 * (OpenMetrics), each followed by NAME_created: when the action was
 * installed, where its times are known. */
static int action_samples(struct render *r, int om, const struct tcx_counter_def *d, unsigned k,
                          struct slice *sl, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	size_t written = r->at.written;
	struct padded_name created;
	struct slice family = sl[0];
	int with_created = r->created_on && d->type == TCX_METRIC_COUNTER;

	if (with_created) {
		char stem[64];
		size_t n = strlen(d->family) - 6; /* without _total */

		memcpy(stem, d->family, n);
		memcpy(stem + n, "_created", 9);
		padded_name(&created, stem);
	}
	for (size_t i = r->at.row; i < s->n_actions && written < r->max_rows; i++) {
		const struct tcx_action *a = &s->actions[i];
		char *p;

		if (!tcx_action_shown(a))
			continue;
		if (pause_at(r, b, i, written))
			return 1;
		written++;
		action_slices(r, i, sl + 1);
		if (!(p = put_slices(b, sl, 4, 24)))
			return 0;
		put_value(b, p, a->c[k]);
		if (!with_created || !(a->tm_present & (1u << TCX_TM_INSTALLED)))
			continue;
		sl[0] = created.s;
		p = put_slices(b, sl, 4, 32);
		sl[0] = family;
		if (!p)
			return 0;
		put_ms(&r->secs, b, p, a->tm[TCX_TM_INSTALLED]);
	}
	return 0;
}

/* ---- action times ------------------------------------------------------------------------ */

static const struct {
	enum tcx_tm t;
	const char *name, *help;
} time_families[] = {
        {TCX_TM_INSTALLED, "tc_action_installed_timestamp_seconds",
         "When the action was installed, in Unix time, to the kernel's 10 ms."},
        {TCX_TM_FIRST_USED, "tc_action_first_used_timestamp_seconds",
         "When the action first matched a packet, in Unix time; no sample while it never "
         "has."},
        {TCX_TM_LAST_USED, "tc_action_last_used_timestamp_seconds",
         "When the action last matched a packet, in Unix time; its install time while it "
         "never has."},
};

/* Time t of each action row shown (the first max_rows) that has it. */
static int time_samples(struct render *r, enum tcx_tm t, struct slice *sl, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	size_t written = r->at.written;

	for (size_t i = r->at.row; i < s->n_actions && written < r->max_rows; i++) {
		const struct tcx_action *a = &s->actions[i];
		char *p;

		if (!tcx_action_shown(a))
			continue;
		if (pause_at(r, b, i, written))
			return 1;
		written++;
		if (!(a->tm_present & (1u << t)))
			continue;
		action_slices(r, i, sl + 1);
		if (!(p = put_slices(b, sl, 4, 32)))
			return 0;
		put_ms(&r->secs, b, p, a->tm[t]);
	}
	return 0;
}

/* The same of each aggregate (the first max_rows) that has it. */
static int time_agg_samples(struct render *r, enum tcx_tm t, struct slice *sl, struct tcx_buf *b)
{
	const struct tcx_aggregates *g = r->s->aggs;
	const char *arena = r->l->arena.p;

	for (size_t i = r->at.row; i < r->max_rows; i++) {
		char *p;

		if (pause_at(r, b, i, 0))
			return 1;
		if (!(g->tm_present[i] & (1u << t)))
			continue;
		sl[1] = (struct slice){arena + r->l->agg_off[i],
		                       r->l->ts_off[i] - r->l->agg_off[i]};
		if (!(p = put_slices(b, sl, 2, 32)))
			return 0;
		put_ms(&r->secs, b, p, g->tm[i][t]);
	}
	return 0;
}

/* The time families that are on (`liveness`, and some row has the time).
 * Returns 1 when it paused, else 0. */
static int render_times(struct render *r, int om, struct tcx_buf *b)
{
	for (unsigned x = r->at.fam; x < sizeof(time_families) / sizeof(time_families[0]); x++) {
		enum tcx_tm t = time_families[x].t;
		struct padded_name name;
		struct slice sl[4];

		if (!r->tm_on[t])
			continue;
		padded_name(&name, time_families[x].name);
		sl[0] = name.s;
		if (!r->at.hdr)
			family_header(b, time_families[x].name, "gauge", time_families[x].help, om);
		r->at.hdr = 1;
		if (r->s->aggs ? time_agg_samples(r, t, sl, b) : time_samples(r, t, sl, b)) {
			r->at.fam = x;
			return 1;
		}
		family_done(r);
	}
	return 0;
}

/* ---- qdiscs and classes ------------------------------------------------------------------ */

static int qrow_samples(struct render *r, const struct tcx_qrow *rows, size_t n,
                        const uint32_t *off, unsigned k, struct slice *sl, struct tcx_buf *b)
{
	const char *arena = r->l->arena.p;
	/* (qdiscs and classes share their counters' definitions) */
	uint32_t need = tcx_qdisc_counters.def[k].optional ? 1u << k : 0;

	for (size_t i = r->at.row; i < n; i++) {
		char *p;

		if ((rows[i].stats_present & need) != need)
			continue;
		if (pause_at(r, b, i, 0))
			return 1;
		sl[1] = (struct slice){arena + off[i], off[i + 1] - off[i]};
		if (!(p = put_slices(b, sl, 2, 24)))
			return 0;
		put_value(b, p, rows[i].c[k]);
	}
	return 0;
}

static int qdisc_samples(struct render *r, int om, const struct tcx_counter_def *d, unsigned k,
                         struct slice *sl, struct tcx_buf *b)
{
	return qrow_samples(r, r->s->qdiscs, r->s->n_qdiscs, r->l->qd_off, k, sl, b);
}

static int class_samples(struct render *r, int om, const struct tcx_counter_def *d, unsigned k,
                         struct slice *sl, struct tcx_buf *b)
{
	return qrow_samples(r, r->s->classes, r->s->n_classes, r->l->cl_off, k, sl, b);
}

/* tc_class_info: one series per class, with its labels, whether it is a
 * leaf (no class hangs from it) and the qdisc attached to it (its handle and
 * kind; empty when none is listed: HTB's default pfifo is not). Returns 1
 * when it paused, else 0. */
static int render_tree(struct render *r, int om, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	char tmp[32];

	if (!r->tree_on || !s->n_classes)
		return 0;
	if (!r->at.hdr)
		family_header(b, "tc_class_info", "info",
		              "The class tree, one series per class: leaf is true when no class "
		              "hangs from it; leaf_qdisc and leaf_kind name the qdisc attached to "
		              "it (empty when none is listed, as HTB's default pfifo).",
		              om);
	r->at.hdr = 1;
	for (size_t i = r->at.row; i < s->n_classes; i++) {
		const struct tcx_qrow *c = &s->classes[i];
		const struct tcx_qrow *q = c->child_qdisc ? &s->qdiscs[c->child_qdisc - 1] : NULL;

		if (pause_at(r, b, i, 0))
			return 1;
		tcx_buf_put(b, "tc_class_info{", 14);
		tcx_buf_put(b, l->arena.p + l->cl_off[i], l->cl_off[i + 1] - l->cl_off[i]);
		tcx_buf_puts(b, c->inner ? ",leaf=\"false\",leaf_qdisc=\""
		                         : ",leaf=\"true\",leaf_qdisc=\"");
		if (q) {
			tcx_format_qhandle(q->handle, tmp, sizeof(tmp));
			tcx_buf_puts(b, tmp);
		}
		tcx_buf_put(b, "\",leaf_kind=\"", 13);
		if (q)
			tcx_buf_put(b, l->kinds.p + l->kind_off[q->kind],
			            l->kind_off[q->kind + 1] - l->kind_off[q->kind]);
		tcx_buf_put(b, "\"} 1\n", 5);
	}
	return 0;
}

/* One per-kind statistic of a row: NAME{LABELS[,label="value"]} VALUE. */
static void xstat_sample(struct tcx_buf *b, const struct tcx_xstat *f, const char *labels,
                         size_t llen, const char *label, const char *value, uint64_t raw)
{
	tcx_buf_puts(b, f->family);
	tcx_buf_putc(b, '{');
	tcx_buf_put(b, labels, llen);
	if (label) {
		tcx_buf_putc(b, ',');
		tcx_buf_puts(b, label);
		tcx_buf_put(b, "=\"", 2);
		tcx_buf_puts(b, value);
		tcx_buf_putc(b, '"');
	}
	tcx_buf_put(b, "} ", 2);
	tcx_xstat_put(b, f, raw);
	tcx_buf_putc(b, '\n');
}

/* The families of the fields [from, to) of table t (one family: its name
 * shared), over the rows that have t, from row r->at.row on. tins: the
 * fields are per tin. Its HELP and TYPE come with its first sample. Returns
 * 1 when it paused, else 0. */
static int xstats_family(struct render *r, int om, const struct tcx_xstats_table *t,
                         const struct tcx_xstat *fields, unsigned from, unsigned to, int tins,
                         struct tcx_buf *b)
{
	static const char *const types[] = {
	        [TCX_XSTAT_COUNTER] = "counter", [TCX_XSTAT_GAUGE] = "gauge"};
	const struct tcx_snapshot *s = r->s;
	const struct tcx_qrow *rows = t->is_class ? s->classes : s->qdiscs;
	const uint32_t *off = t->is_class ? r->l->cl_off : r->l->qd_off;
	size_t n = t->is_class ? s->n_classes : s->n_qdiscs;

	for (size_t i = r->at.row; i < n; i++) {
		const struct tcx_qrow *q = &rows[i];
		const char *labels = r->l->arena.p + off[i];
		size_t llen = off[i + 1] - off[i];
		const uint64_t *x;

		if (tcx_qrow_xt(q) != t)
			continue;
		if (pause_at(r, b, i, 0))
			return 1;
		x = s->xvals + q->xs;
		for (unsigned tin = 0; tin < (tins ? q->n_tins : 1); tin++) {
			const uint64_t *v = x;
			uint64_t present = q->xs_present;
			char tv[8];

			if (tins) {
				v = x + t->n_fields + (size_t)tin * (1 + t->n_tin_fields);
				present = *v++;
				snprintf(tv, sizeof(tv), "%u", tin);
			}
			for (unsigned f = from; f < to; f++) {
				if (!(present & (UINT64_C(1) << f)))
					continue;
				if (!r->at.hdr)
					family_header(b, fields[f].family, types[fields[f].type],
					              fields[f].help, om);
				r->at.hdr = 1;
				xstat_sample(b, &fields[f], labels, llen,
				             tins ? t->tin_label : fields[f].label,
				             tins ? tv : fields[f].label_value, v[f]);
			}
		}
	}
	return 0;
}

/* Each table's fields, a family per run of fields of one name. *fam counts
 * the section's families: those before r->at.fam were written before the
 * rendering paused. Returns 1 when it paused, else 0. */
static int xstats_families(struct render *r, int om, const struct tcx_xstat *fields, unsigned n,
                           const struct tcx_xstats_table *t, int tins, unsigned *fam,
                           struct tcx_buf *b)
{
	for (unsigned from = 0, to; from < n; from = to) {
		for (to = from + 1; to < n && strcmp(fields[to].family, fields[from].family) == 0;
		     to++)
			;
		if ((*fam)++ < r->at.fam)
			continue;
		if (xstats_family(r, om, t, fields, from, to, tins, b)) {
			r->at.fam = *fam - 1;
			return 1;
		}
		family_done(r);
	}
	return 0;
}

/* 1 when a qdisc or class of kind was collected (tables of other kinds
 * have no rows to look for). */
static int has_kind(const struct tcx_snapshot *s, const char *kind)
{
	for (unsigned k = 0; k < s->n_kinds; k++)
		if (strcmp(s->kinds[k], kind) == 0)
			return 1;
	return 0;
}

/* The plans (collectors/plans.h): each row of each table one family, over
 * the qdiscs or classes that have it. Returns 1 when it paused, else 0. */
static int render_plans(struct render *r, int om, struct tcx_buf *b)
{
	static const char *const types[] = {
	        [TCX_XSTAT_COUNTER] = "counter", [TCX_XSTAT_GAUGE] = "gauge"};
	const struct tcx_snapshot *s = r->s;
	unsigned fam = 0;

	if (!r->plans_on)
		return 0;
	for (size_t k = 0; k < tcx_plans_n_tables; k++) {
		const struct tcx_plans_table *t = tcx_plans_tables[k];
		const struct tcx_qrow *rows = t->is_class ? s->classes : s->qdiscs;
		const uint32_t *off = t->is_class ? r->l->cl_off : r->l->qd_off;
		size_t n = t->is_class ? s->n_classes : s->n_qdiscs;
		const uint8_t *on = t->is_class ? r->class_on : r->qdisc_on;

		if (!on[TCX_QSTAT_BYTES] || !has_kind(s, t->kind)) {
			fam += t->n;
			continue;
		}
		for (unsigned f = 0; f < t->n; f++) {
			const struct tcx_plan *pl = &t->rows[f];
			const char *lv;

			if (fam++ < r->at.fam)
				continue; /* done before the pause */
			for (size_t i = r->at.row; i < n; i++) {
				const struct tcx_qrow *q = &rows[i];

				if (tcx_qrow_pt(q) != t || !(q->pl_present & (1u << f)))
					continue;
				if (pause_at(r, b, i, 0)) {
					r->at.fam = fam - 1;
					return 1;
				}
				if (!r->at.hdr)
					family_header(b, pl->family, types[pl->type], pl->help, om);
				r->at.hdr = 1;
				tcx_buf_puts(b, pl->family);
				tcx_buf_putc(b, '{');
				tcx_buf_put(b, r->l->arena.p + off[i], off[i + 1] - off[i]);
				lv = tcx_plan_label(pl, s->xvals[q->pl + f]);
				if (lv) { /* names from the table: nothing to escape */
					tcx_buf_putc(b, ',');
					tcx_buf_puts(b, pl->label);
					tcx_buf_put(b, "=\"", 2);
					tcx_buf_puts(b, lv);
					tcx_buf_putc(b, '"');
				}
				tcx_buf_put(b, "} ", 2);
				tcx_plan_put(b, pl, s->xvals[q->pl + f]);
				tcx_buf_putc(b, '\n');
			}
			family_done(r);
		}
	}
	return 0;
}

static int render_xstats(struct render *r, int om, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	unsigned fam = 0;

	if (!r->xstats_on)
		return 0;
	for (size_t k = 0; k < tcx_xstats_n_tables; k++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[k];
		const uint8_t *on = t->is_class ? r->class_on : r->qdisc_on;
		const struct tcx_qrow *rows = t->is_class ? s->classes : s->qdiscs;
		size_t n = t->is_class ? s->n_classes : s->n_qdiscs, i = 0;

		while (i < n && tcx_qrow_xt(&rows[i]) != t)
			i++;
		if (i == n || !on[TCX_QSTAT_BYTES])
			continue;
		if (xstats_families(r, om, t->fields, t->n_fields, t, 0, &fam, b) ||
		    xstats_families(r, om, t->tin_fields, t->n_tin_fields, t, 1, &fam, b))
			return 1;
	}
	return 0;
}

/* An upper bound of the output, so that a growing buffer is sized once. */
static size_t estimate(const struct render *r)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	size_t est = 16384 + s->n_targets * 2048;

	for (size_t i = 0; !s->aggs && i < s->n_actions; i++) {
		struct slice lb[3];

		action_slices(r, i, lb);
		est += TCX_ACT_CTR__MAX * (48 + lb[0].n + lb[1].n + lb[2].n);
	}
	for (size_t i = 0; i < s->n_filters; i++)
		est += (160 + l->flt[i].tp_len + l->flt[i].len) *
		       (1 + (s->filters[i].hv_present ? TCX_FCTR__MAX + s->filters[i].n_keys : 0));
	for (size_t i = 0; s->aggs && i < s->aggs->n; i++)
		est += TCX_ACT_CTR__MAX * 2 * (80 + l->agg_off[i + 1] - l->agg_off[i]);
	for (size_t i = 0; s->aggs && s->hit_aggs && i < s->hit_aggs->n; i++)
		est += TCX_FCTR__MAX * 2 * (80 + l->hagg_off[i + 1] - l->hagg_off[i]);
	for (size_t i = 0; i < s->n_qdiscs; i++)
		est += (TCX_QSTAT__MAX + 8) * (64 + l->qd_off[i + 1] - l->qd_off[i]);
	for (size_t i = 0; i < s->n_classes; i++)
		est += (TCX_QSTAT__MAX + 8) * (64 + l->cl_off[i + 1] - l->cl_off[i]);
	return est;
}

static int render_filters(struct render *r, int om, struct tcx_buf *b)
{
	static const char *const flag_labels[] = {",skip_hw=\"", ",skip_sw=\"", ",in_hw=\"",
	                                          ",not_in_hw=\""};
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	/* the end of a line for each value of the four flags */
	char tails[16][80 + SLICE_PAD] = {{0}};
	size_t tail_len[16];
	struct padded_name name;
	struct slice sl[4];
	size_t written = r->at.written;

	if (!r->flags_on)
		return 0;
	for (unsigned flags = 0; flags < 16; flags++) {
		char *t = tails[flags];

		for (unsigned k = 0; k < 4; k++)
			t = stpcpy(stpcpy(t, flag_labels[k]),
			           (flags & (1u << k)) ? "true\"" : "false\"");
		t = stpcpy(t, "} 1\n");
		tail_len[flags] = (size_t)(t - tails[flags]);
	}
	padded_name(&name, "tc_filter_flags_info");
	sl[0] = name.s;
	/* One family for the flags, each a label of its own, so that a query
	 * compares values (in_hw="true") instead of matching substrings. */
	if (!r->at.hdr)
		family_header(
		        b, "tc_filter_flags_info", "info",
		        "Flags of a TC filter, one series per filter: skip_hw, skip_sw, in_hw "
		        "(offloaded to hardware) and not_in_hw, each true or false.",
		        om);
	r->at.hdr = 1;
	for (size_t i = r->at.row; i < s->n_filters && written < r->max_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];
		const struct rl_filter *lf = &l->flt[i];
		char *p;

		if (f->merged)
			continue;
		if (pause_at(r, b, i, written))
			return 1;
		written++;
		sl[1] = (struct slice){l->arena.p + lf->tp_off, lf->tp_len};
		sl[2] = (struct slice){l->arena.p + lf->off, lf->len};
		sl[3] = (struct slice){tails[f->flags & 15], tail_len[f->flags & 15]};
		if (!(p = put_slices(b, sl, 4, 0)))
			return 0;
		b->len = (size_t)(p - b->p);
	}
	return 0;
}

/* ---- filter hit counters ------------------------------------------------------------------ */

/* One series per filter shown that has counter k, of those before
 * hits_end. */
static int hit_samples(struct render *r, int om, const struct tcx_counter_def *d, unsigned k,
                       struct slice *sl, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;

	(void)om;
	(void)d;
	for (size_t i = r->at.row; i < r->hits_end; i++) {
		const struct tcx_filter *f = &s->filters[i];
		const struct rl_filter *lf = &l->flt[i];
		char *p;

		if (f->merged || !(f->hv_present & (1u << k)))
			continue;
		if (pause_at(r, b, i, 0))
			return 1;
		sl[1] = (struct slice){l->arena.p + lf->tp_off, lf->tp_len};
		sl[2] = (struct slice){l->arena.p + lf->off, lf->len};
		if (!(p = put_slices(b, sl, 3, 24)))
			return 0;
		put_value(b, p, s->hvals[f->hv + k]);
	}
	return 0;
}

/* With `aggregate`: one series per hit aggregate that has counter k, of
 * those before hits_end. */
static int hit_aggregate_samples(struct render *r, int om, const struct tcx_counter_def *d,
                                 unsigned k, struct slice *sl, struct tcx_buf *b)
{
	const struct tcx_aggregates *g = r->s->hit_aggs;

	for (size_t i = r->at.row; g && i < r->hits_end; i++) {
		if (!(g->present[i] & (1u << k)))
			continue;
		if (pause_at(r, b, i, 0))
			return 1;
		if (aggregate_sample(r, om, d, g, r->l->hagg_off, r->l->hts_off, i, k, sl, b) < 0)
			return 0;
	}
	return 0;
}

/* tc_filter_u32_key_hits_total: one series per key of each filter shown
 * that counts its keys, of those before hits_end. */
static int render_keys(struct render *r, int om, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	struct padded_name name;
	struct slice sl[3];
	size_t i = r->at.row;

	if (!r->keys_on)
		return 0;
	while (i < r->hits_end && (s->filters[i].merged || !s->filters[i].n_keys))
		i++;
	if (i == r->hits_end)
		return 0;
	padded_name(&name, TCX_KEY_HITS_FAMILY);
	sl[0] = name.s;
	if (!r->at.hdr)
		family_header(b, TCX_KEY_HITS_FAMILY, "counter", TCX_KEY_HITS_HELP, om);
	r->at.hdr = 1;
	for (; i < r->hits_end; i++) {
		const struct tcx_filter *f = &s->filters[i];
		const struct rl_filter *lf = &l->flt[i];

		if (f->merged || !f->n_keys || !(f->hv_present & (1u << TCX_FCTR_HITS)))
			continue;
		if (pause_at(r, b, i, 0))
			return 1;
		sl[1] = (struct slice){l->arena.p + lf->tp_off, lf->tp_len};
		sl[2] = (struct slice){l->arena.p + lf->off, lf->len};
		for (unsigned key = 0; key < f->n_keys; key++) {
			char *p;

			if (!(p = put_slices(b, sl, 3, 48)))
				return 0;
			memcpy(p, ",key=\"", 6);
			p += 6;
			p += tcx_fmt_u64(p, key);
			*p++ = '"';
			put_value(b, p, s->hvals[f->hv + TCX_FCTR__MAX + key]);
		}
	}
	return 0;
}

/* A gauge with a fractional value. */
static void sample_double(struct tcx_buf *b, const char *name, const char *labels, size_t llen,
                          double v)
{
	sample_head(b, name, labels, llen);
	tcx_buf_double(b, v);
	tcx_buf_putc(b, '\n');
}

static int render_targets(struct render *r, int om, struct tcx_buf *b)
{
	static const struct {
		const char *name, *type, *help;
	} fams[] = {
	        {"tc_scrape_collector_success", "gauge",
	         "1 when the target was collected in full, 0 when it failed (its rows are then "
	         "absent)."},
	        {"tc_scrape_collector_duration_seconds", "gauge",
	         "Time spent collecting the target."},
	        {"tc_scrape_collector_filters", "gauge", "Filters collected from the target."},
	        {"tc_scrape_collector_actions", "gauge", "Action rows collected from the target."},
	        {"tc_scrape_collector_dump_requests", "gauge",
	         "Netlink filter dumps the target needed, by dump type (terse or full)."},
	        {"tc_scrape_collector_mode_info", "info",
	         "How the target was dumped: terse, terse+repair (terse plus full dumps of "
	         "non-flower prefs) or full."},
	        {"tc_scrape_collector_finals_lost", "gauge",
	         "With aggregate: filter deletion notifications the target's namespace lost "
	         "since start; when not 0, the target's aggregates may lack the final counters "
	         "of deleted filters (a lower bound)."},
	};
	const struct tcx_snapshot *s = r->s;
	struct tcx_buf *row = &r->row;

	for (unsigned k = r->at.fam; k < sizeof(fams) / sizeof(fams[0]); k++) {
		if (k == 6 && !s->aggs) /* no notifications without aggregate */
			continue;
		if (!r->at.hdr)
			family_header(b, fams[k].name, fams[k].type, fams[k].help, om);
		r->at.hdr = 1;
		for (size_t i = r->at.row; i < s->n_targets; i++) {
			const struct tcx_target *t = &s->targets[i];
			int first = 0;

			if (pause_at(r, b, i, 0)) {
				r->at.fam = k;
				return 1;
			}
			row->len = 0;
			put_target(row, r, i);
			switch (k) {
			case 0:
				sample(b, fams[k].name, row->p, row->len, t->ok ? 1 : 0);
				break;
			case 1:
				sample_double(b, fams[k].name, row->p, row->len, t->duration_s);
				break;
			case 2:
				sample(b, fams[k].name, row->p, row->len, t->n_filters);
				break;
			case 3:
				sample(b, fams[k].name, row->p, row->len, t->n_actions);
				break;
			case 4: {
				size_t base = row->len;

				put_label(row, &first, "type", "terse");
				sample(b, fams[k].name, row->p, row->len, t->terse_dumps);
				row->len = base;
				first = 0;
				put_label(row, &first, "type", "full");
				sample(b, fams[k].name, row->p, row->len, t->full_dumps);
				break;
			}
			case 5:
				put_label(row, &first, "mode", tcx_mode_name(t->mode));
				sample(b, fams[k].name, row->p, row->len, 1);
				break;
			default:
				sample(b, fams[k].name, row->p, row->len, t->notifications_lost);
				break;
			}
		}
		family_done(r);
	}
	return 0;
}

/* The devices whose qdiscs and classes were collected: each one's labels
 * (device, netns) in row. */
static void qdev_labels(struct tcx_buf *row, const struct tcx_qdev *d)
{
	int first = 1;

	row->len = 0;
	put_label(row, &first, "device", d->dev);
	if (d->netns[0])
		put_label(row, &first, "netns", d->netns);
}

static int render_qdevs(struct render *r, int om, struct tcx_buf *b)
{
	static const char *const fams[][2] = {
	        {"tc_scrape_device_success",
	         "1 when the device's qdiscs and classes were collected in full, 0 when its "
	         "classes could not be dumped (they are then absent)."},
	        {"tc_scrape_device_qdiscs", "Qdiscs collected from the device."},
	        {"tc_scrape_device_classes", "Classes collected from the device."},
	};
	const struct tcx_snapshot *s = r->s;

	if (!s->n_qdevs)
		return 0;
	for (unsigned k = r->at.fam; k < 3; k++) {
		if (!r->at.hdr)
			family_header(b, fams[k][0], "gauge", fams[k][1], om);
		r->at.hdr = 1;
		for (size_t i = r->at.row; i < s->n_qdevs; i++) {
			const struct tcx_qdev *d = &s->qdevs[i];

			if (pause_at(r, b, i, 0)) {
				r->at.fam = k;
				return 1;
			}
			qdev_labels(&r->row, d);
			sample(b, fams[k][0], r->row.p, r->row.len,
			       k == 0   ? (uint64_t)(d->ok != 0)
			       : k == 1 ? d->n_qdiscs
			                : d->n_classes);
		}
		family_done(r);
	}
	return 0;
}

/* What tcexporter was built from and with (agent/buildinfo.h). */
static void render_build_info(struct render *r, int om, struct tcx_buf *b)
{
	const char *v[TCX_BUILD__MAX];
	int first = 1;

	tcx_build_info(v);
	r->row.len = 0;
	for (unsigned i = 0; i < TCX_BUILD__MAX; i++)
		put_label(&r->row, &first, tcx_build_labels[i], v[i]);
	family_header(b, "tc_exporter_build_info", "info",
	              "Build information: the version of tcexporter, the git commit it was built "
	              "from (unknown outside a git checkout), and the versions of libmnl (built "
	              "against), libmicrohttpd and net-snmp (in use; none without SNMP).",
	              om);
	sample(b, "tc_exporter_build_info", r->row.p, r->row.len, 1);
}

static void render_meta(struct render *r, int om, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;

	family_header(b, "tc_exporter_snapshot_errors", "gauge",
	              "Errors met while taking the snapshot, by cause.", om);
	for (unsigned i = 0; i < TCX_ERR__MAX; i++) {
		sample1(r, b, "tc_exporter_snapshot_errors", "cause", err_causes[i], s->errors[i]);
	}
	family_header(b, "tc_exporter_unmapped_cookies", "gauge",
	              "Actions whose cookie matched neither the cookie map nor a decoder.", om);
	sample(b, "tc_exporter_unmapped_cookies", "", 0, s->unmapped_cookies);
	family_header(b, "tc_exporter_dropped_actions", "gauge",
	              "Actions left out by the 'unmapped: drop' policy.", om);
	sample(b, "tc_exporter_dropped_actions", "", 0, s->dropped_rows);
	family_header(b, "tc_exporter_clamped_action_times", "gauge",
	              "Action times of this collection that the kernel gave as older than the "
	              "host's boot, each clamped to the boot.",
	              om);
	sample(b, "tc_exporter_clamped_action_times", "", 0, s->tm_clamped);
	family_header(b, "tc_exporter_liveness_pass", "gauge",
	              "1 when this collection dumped every filter in full for its action times "
	              "(liveness_interval), else 0.",
	              om);
	sample(b, "tc_exporter_liveness_pass", "", 0, (uint64_t)s->liveness_pass);
	family_header(b, "tc_exporter_netlink_dropped_total", "counter",
	              "Netlink datagrams dropped since the collector started, by cause: sender "
	              "(not sent by the kernel; dropped unread), length (a message length that "
	              "does not fit; the rest of the datagram dropped and its target failed).",
	              om);
	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++) {
		sample1(r, b, "tc_exporter_netlink_dropped_total", "cause", nldrop_causes[i],
		        s->netlink_dropped[i]);
	}
	family_header(b, "tc_exporter_notifications_lost_total", "counter",
	              "Deletion notifications lost since the collector started (the kernel's "
	              "count of those its queue had no room for, plus those that could not be "
	              "read): the final counters of those filters are not in the aggregates.",
	              om);
	sample(b, "tc_exporter_notifications_lost_total", "", 0, s->notifications_lost);
	family_header(b, "tc_exporter_filter_sweeps_total", "counter",
	              "Collections of a namespace that asked every qdisc and class for its "
	              "filters, not only those known to hold some, since the collector started, "
	              "by reason: new (its first collection, or its sockets opened again), lost "
	              "(a notification of an added filter may have been lost), reload, interval "
	              "(sweep_interval).",
	              om);
	for (unsigned i = 0; i < TCX_SWEEP__MAX; i++)
		sample1(r, b, "tc_exporter_filter_sweeps_total", "reason", sweep_reasons[i],
		        s->sweeps[i]);
	family_header(b, "tc_exporter_merged_rows", "gauge",
	              "Rows left out because an earlier row had the same labels, by row type; an "
	              "action's counters are added to that row's (u32 gives every filter past the "
	              "4095th of a hash table the handle 800::fff).",
	              om);
	sample1(r, b, "tc_exporter_merged_rows", "row", "filter", s->merged_filters);
	sample1(r, b, "tc_exporter_merged_rows", "row", "action", s->merged_actions);
	family_header(
	        b, "tc_exporter_series_dropped", "gauge",
	        "Series of tc_action_*, tc_filter_flags_info and the filter hit families left "
	        "out of this exposition because they were past max_series.",
	        om);
	sample(b, "tc_exporter_series_dropped", "", 0, r->series_dropped);
	family_header(b, "tc_exporter_snapshot_timestamp_seconds", "gauge",
	              "When the snapshot was taken (Unix time).", om);
	sample_double(b, "tc_exporter_snapshot_timestamp_seconds", "", 0, tcx_ts_s(s->taken));
	family_header(b, "tc_exporter_snapshot_duration_seconds", "gauge",
	              "Time the whole collection pass took.", om);
	sample_double(b, "tc_exporter_snapshot_duration_seconds", "", 0, s->duration_s);
	render_build_info(r, om, b);
}

/* The process_* families, named and explained as the official Prometheus
 * clients do (as of when the exposition was rendered). */
static void render_process(const struct tcx_process_stats *p, int om, struct tcx_buf *b)
{
	if (!p->ok)
		return;
	family_header(b, "process_cpu_seconds_total", "counter",
	              "Total user and system CPU time spent in seconds.", om);
	sample_double(b, "process_cpu_seconds_total", "", 0, p->cpu_seconds);
	family_header(b, "process_open_fds", "gauge", "Number of open file descriptors.", om);
	sample(b, "process_open_fds", "", 0, p->open_fds);
	family_header(b, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
	              om);
	sample(b, "process_max_fds", "", 0, p->max_fds);
	family_header(b, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
	              om);
	sample(b, "process_virtual_memory_bytes", "", 0, p->virtual_bytes);
	family_header(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
	              om);
	sample(b, "process_resident_memory_bytes", "", 0, p->resident_bytes);
	family_header(b, "process_start_time_seconds", "gauge",
	              "Start time of the process since unix epoch in seconds.", om);
	sample_double(b, "process_start_time_seconds", "", 0, p->start_time_seconds);
}

/* The daemon's own counters. */
static void render_self(struct render *r, int om, const struct tcx_selfstats *st, struct tcx_buf *b)
{
	struct tcx_buf *row = &r->row;
	char code[8];
	int first;

	family_header(b, "tc_exporter_collections_total", "counter",
	              "Collection passes since the daemon started.", om);
	sample(b, "tc_exporter_collections_total", "", 0, st->collections_total);
	family_header(b, "tc_exporter_collection_errors_total", "counter",
	              "Errors met by collection passes since the daemon started, by cause.", om);
	for (unsigned i = 0; i < TCX_ERR__MAX; i++) {
		sample1(r, b, "tc_exporter_collection_errors_total", "cause", err_causes[i],
		        st->collection_errors_total[i]);
	}
	family_header(b, "tc_exporter_http_requests_total", "counter",
	              "HTTP requests answered, by status code, as of when this exposition was "
	              "rendered.",
	              om);
	for (unsigned i = 0; i < TCX_HTTP_CODES; i++) {
		row->len = 0;
		first = 1;
		if (tcx_http_codes[i])
			snprintf(code, sizeof(code), "%u", tcx_http_codes[i]);
		else
			snprintf(code, sizeof(code), "other");
		put_label(row, &first, "code", code);
		sample(b, "tc_exporter_http_requests_total", row->p, row->len,
		       st->http_requests_total[i]);
	}
	family_header(b, "tc_exporter_http_responses_cut_total", "counter",
	              "Responses of /metrics cut short, their connection closed, by reason: "
	              "render, a body sent as it was rendered whose rendering failed (out of "
	              "memory) once its status had been sent; memory, a client too slow, whose "
	              "answer held a collection replaced since, when those held more than "
	              "http.max_stale_mib. Counted in tc_exporter_http_requests_total too, as "
	              "200.",
	              om);
	for (unsigned i = 0; i < TCX_CUT__MAX; i++)
		sample1(r, b, "tc_exporter_http_responses_cut_total", "reason", tcx_cut_reasons[i],
		        st->http_responses_cut_total[i]);
	family_header(b, "tc_exporter_http_requests_refused_total", "counter",
	              "Requests refused with 429, by reason: render, a GET of /metrics that would "
	              "have rendered a variant for itself when its client address, or all of them, "
	              "had had http.renders_per_ip (http.renders) renders of the collection, after "
	              "waiting for the next one; password_queue, a password check beyond "
	              "http.password_checks_per_ip (http.password_checks) waiting; password_rate, "
	              "a password check beyond the web config's rate_limit; bytes, a GET of "
	              "/metrics answered from a body rendered ahead when its client address had "
	              "been sent http.renders_per_ip times the largest of those bodies (1 MiB at "
	              "least) for each second of the interval in the collection, after waiting for "
	              "the next one. Counted in tc_exporter_http_requests_total too, as 429.",
	              om);
	for (unsigned i = 0; i < TCX_REFUSE__MAX; i++)
		sample1(r, b, "tc_exporter_http_requests_refused_total", "reason",
		        tcx_refuse_reasons[i], st->http_requests_refused_total[i]);
	family_header(b, "tc_exporter_http_accept_errors_total", "counter",
	              "Connections the HTTP servers could not accept, by cause: resource (no file "
	              "descriptor or memory left; with no descriptor, a connection waiting for its "
	              "request is closed for each), other.",
	              om);
	for (unsigned i = 0; i < TCX_ACCEPT_CAUSES; i++)
		sample1(r, b, "tc_exporter_http_accept_errors_total", "cause", tcx_accept_causes[i],
		        st->http_accept_errors_total[i]);
	family_header(b, "tc_exporter_snapshot_age_seconds", "gauge",
	              "Age of the snapshot when this exposition was rendered (once per snapshot "
	              "and format).",
	              om);
	sample_double(b, "tc_exporter_snapshot_age_seconds", "", 0, st->snapshot_age_s);
	family_header(b, "tc_exporter_config_last_reload_successful", "gauge",
	              "1 when the last configuration (re)load succeeded, 0 when it was rejected.",
	              om);
	sample(b, "tc_exporter_config_last_reload_successful", "", 0, st->last_reload_ok ? 1 : 0);
	family_header(b, "tc_exporter_config_last_reload_success_timestamp_seconds", "gauge",
	              "When the configuration in use was loaded (Unix time).", om);
	sample_double(b, "tc_exporter_config_last_reload_success_timestamp_seconds", "", 0,
	              st->last_reload_ts);
	render_process(&st->process, om, b);
}

/* Section r->at.sec from where r->at stands: returns 1 when it paused,
 * else 0. */
static int render_section(struct render *r, struct tcx_buf *b)
{
	int om = r->om;

	switch (r->at.sec) {
	case SEC_ACTIONS:
		return counter_families(r, om, &tcx_action_counters, r->on,
		                        r->s->aggs ? aggregate_samples : action_samples, b);
	case SEC_TIMES:
		return render_times(r, om, b);
	case SEC_FILTERS:
		return render_filters(r, om, b);
	case SEC_HITS:
		return counter_families(r, om, &tcx_filter_counters, r->hits_on,
		                        r->s->aggs ? hit_aggregate_samples : hit_samples, b);
	case SEC_KEYS:
		return render_keys(r, om, b);
	case SEC_QDISCS:
		return counter_families(r, om, &tcx_qdisc_counters, r->qdisc_on, qdisc_samples, b);
	case SEC_CLASSES:
		return counter_families(r, om, &tcx_class_counters, r->class_on, class_samples, b);
	case SEC_TREE:
		return render_tree(r, om, b);
	case SEC_XSTATS:
		return render_xstats(r, om, b);
	case SEC_PLANS:
		return render_plans(r, om, b);
	case SEC_TARGETS:
		return render_targets(r, om, b);
	case SEC_QDEVS:
		return render_qdevs(r, om, b);
	case SEC_META:
		render_meta(r, om, b);
		return 0;
	case SEC_SELF:
		if (r->st)
			render_self(r, om, r->st, b);
		return 0;
	default:
		if (om)
			tcx_buf_put(b, "# EOF\n", 6);
		return 0;
	}
}

struct tcx_prom_render {
	struct render r;
};

struct tcx_prom_render *tcx_prom_render_new(const struct tcx_snapshot *s, int om,
                                            const struct tcx_selfstats *st,
                                            const struct tcx_rowlabels *labels)
{
	struct tcx_prom_render *p = malloc(sizeof(*p));

	if (p && render_init(&p->r, s, om, st, labels) < 0) {
		tcx_prom_render_free(p);
		return NULL;
	}
	return p;
}

int tcx_prom_render_next(struct tcx_prom_render *p, struct tcx_buf *b, size_t limit)
{
	struct render *r = &p->r;

	r->limit = limit;
	while (r->at.sec < SEC__N && !b->err && !r->row.err) {
		if (render_section(r, b))
			return 1;
		r->at = (struct cursor){.sec = r->at.sec + 1};
	}
	if (r->row.err)
		return -ENOMEM;
	return b->err ? -b->err : 0;
}

void tcx_prom_render_free(struct tcx_prom_render *p)
{
	if (!p)
		return;
	render_free(&p->r);
	free(p);
}

int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int om, const struct tcx_selfstats *st,
                             const struct tcx_rowlabels *labels, struct tcx_buf *b)
{
	struct tcx_prom_render *p = tcx_prom_render_new(s, om, st, labels);
	int err;

	if (!p)
		return -ENOMEM;
	if (!b->sink)
		tcx_buf_reserve(b, estimate(&p->r));
	err = tcx_prom_render_next(p, b, SIZE_MAX);
	tcx_prom_render_free(p);
	return err;
}
