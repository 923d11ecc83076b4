/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus text exposition 0.0.4 and OpenMetrics 1.0.0.
 *
 * Samples of one family must stand together, so each family walks every
 * row. The label set of a row is rebuilt for each family rather than kept:
 * keeping it would cost more memory per row than the row itself. The parts
 * that many rows share (target, filter) are built once and copied. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/expo.h"
#include "agent/render.h"
#include "collectors/collect.h"
#include "collectors/tc_parse.h"
#include "build.h"

static const char *const err_causes[TCX_ERR__MAX] = {"malformed", "kernel", "notfound", "io",
                                                     "nomem"};
static const char *const nldrop_causes[TCX_NLDROP__MAX] = {"sender", "length"};

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

void tcx_flags_string(uint32_t flags, char *out, size_t outlen)
{
	static const char *const names[] = {"skip_hw", "skip_sw", "in_hw", "not_in_hw"};
	size_t n = 0;

	if (!outlen)
		return;
	for (unsigned i = 0; i < 4; i++) {
		size_t len = strlen(names[i]);

		if (!(flags & (1u << i)) || n + len + 2 > outlen)
			continue;
		if (n)
			out[n++] = ',';
		memcpy(out + n, names[i], len);
		n += len;
	}
	out[n] = '\0';
}

int tcx_format_parse(const char *name, enum tcx_format *fmt)
{
	if (strcmp(name, "prometheus") == 0 || strcmp(name, "text") == 0)
		*fmt = TCX_FMT_PROMETHEUS;
	else if (strcmp(name, "openmetrics") == 0)
		*fmt = TCX_FMT_OPENMETRICS;
	else if (strcmp(name, "json") == 0)
		*fmt = TCX_FMT_JSON;
	else
		return -1;
	return 0;
}

int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt, struct tcx_rowlabels *labels,
               struct tcx_buf *b)
{
	if (fmt == TCX_FMT_JSON)
		return tcx_render_json(s, b);
	return tcx_render_prometheus_ex(s, fmt == TCX_FMT_OPENMETRICS, NULL, labels, b);
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
		put_label(b, &first, "dev", t->dev);
		put_label(b, &first, "parent", t->parent_name);
	}
	if (t->netns[0])
		put_label(b, &first, "netns", t->netns);
}

/* The label sets of the rows, formatted once and copied into each sample,
 * in three parts: the target's (dev, parent or block, netns); the tp's
 * (chain, protocol, pref, kind), kept once for a run of filters of the same
 * tp; the row's own (handle, then order, action, cookie and the user
 * labels), the first action of a filter sharing its filter's handle. A
 * sample line is then three copies. Each action row is written six times,
 * once per counter family; its own labels cost about 90 bytes (more with
 * user labels). Formatted at render time, or while the collector runs
 * (tcx_rowlabels_update() from its observer, while the kernel builds the next
 * chunk of the dump). */
struct rl_filter {
	uint32_t tp_off, off; /* its tp's labels; its handle */
	uint16_t tp_len, len;
};

struct rl_action {
	uint32_t off, len; /* its filter's handle and its own labels */
};

struct tcx_rowlabels {
	const struct tcx_config *cfg; /* the user label names are its own */
	struct tcx_buf arena;         /* stays < 4 GiB: 32-bit offsets */
	struct rl_filter *flt;        /* cap_f of them */
	struct rl_action *act;
	size_t cap_f, cap_a;
	size_t n_filters, n_actions; /* rows formatted so far */
	struct tcx_buf names;        /* `,name="` per user label, then the kinds escaped */
	size_t lbl_off[TCX_MAX_LABELS + 1];
	size_t kind_off[TCX_MAX_KINDS + 1];
	unsigned n_kinds; /* kinds escaped so far */
	int err;
};

struct tcx_rowlabels *tcx_rowlabels_new(void)
{
	struct tcx_rowlabels *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	tcx_buf_init_mem(&l->arena);
	tcx_buf_init_mem(&l->names);
	return l;
}

void tcx_rowlabels_free(struct tcx_rowlabels *l)
{
	if (!l)
		return;
	tcx_buf_free(&l->arena);
	tcx_buf_free(&l->names);
	free(l->flt);
	free(l->act);
	free(l);
}

/* Forget every row (and the names, which belong to a configuration). */
static void rowlabels_reset(struct tcx_rowlabels *l)
{
	l->arena.len = 0;
	l->names.len = 0;
	l->n_filters = l->n_actions = 0;
	l->n_kinds = 0;
	l->cfg = NULL;
	l->err = 0;
	l->arena.err = l->names.err = 0;
}

static void observe_rows(void *arg, const struct tcx_snapshot *s)
{
	tcx_rowlabels_update(arg, s); /* on failure the render formats them again */
}

static void observe_dropped(void *arg, const struct tcx_snapshot *s, size_t nf, size_t na)
{
	tcx_rowlabels_drop(arg, nf, na);
}

struct tcx_collect_observer tcx_rowlabels_observer(struct tcx_rowlabels *l)
{
	return (struct tcx_collect_observer){
	        .rows = observe_rows, .dropped = observe_dropped, .arg = l};
}

void tcx_rowlabels_drop(struct tcx_rowlabels *l, size_t nf, size_t na)
{
	size_t cut = l->arena.len;

	if (nf >= l->n_filters && na >= l->n_actions)
		return;
	if (nf < l->n_filters) {
		cut = l->flt[nf].off;
		/* its tp's labels too, unless a filter kept shares them */
		if ((!nf || l->flt[nf].tp_off != l->flt[nf - 1].tp_off) && l->flt[nf].tp_off < cut)
			cut = l->flt[nf].tp_off;
	}
	if (na < l->n_actions && l->act[na].off < cut)
		cut = l->act[na].off;
	if (nf > l->n_filters)
		nf = l->n_filters;
	if (na > l->n_actions)
		na = l->n_actions;
	/* The rows kept must all lie before the cut; they do when rows are
	 * dropped from a mark on, as the collector does. Otherwise start over. */
	if ((nf && (l->flt[nf - 1].off + l->flt[nf - 1].len > cut ||
	            l->flt[nf - 1].tp_off + l->flt[nf - 1].tp_len > cut)) ||
	    (na && l->act[na - 1].off + l->act[na - 1].len > cut)) {
		rowlabels_reset(l);
		return;
	}
	l->arena.len = cut;
	l->n_filters = nf;
	l->n_actions = na;
}

/* A tp's labels: ,chain="0",protocol="ip",pref="10",kind="u32" */
static void tp_part(struct tcx_buf *b, const struct tcx_rowlabels *l, const struct tcx_filter *f)
{
	char tmp[32];
	const char *proto;

	PUT_RAW(b, ",chain=\"", tmp, tcx_fmt_u64(tmp, f->chain));
	proto = tcx_protocol_name(f->protocol, tmp, sizeof(tmp));
	PUT_RAW(b, ",protocol=\"", proto, strlen(proto));
	PUT_RAW(b, ",pref=\"", tmp, tcx_fmt_u64(tmp, f->pref));
	/* the kind, escaped once in l->names */
	PUT_RAW(b, ",kind=\"", l->names.p + l->kind_off[f->kind],
	        l->kind_off[f->kind + 1] - l->kind_off[f->kind]);
}

static int same_tp(const struct tcx_filter *a, const struct tcx_filter *b)
{
	return a->target == b->target && a->chain == b->chain && a->pref == b->pref &&
	       a->protocol == b->protocol && a->kind == b->kind;
}

/* A filter's own label: ,handle="800::800" */
static void handle_part(struct tcx_buf *b, const struct tcx_snapshot *s, const struct tcx_filter *f)
{
	char tmp[32];

	tcx_format_handle(tcx_kind_name(s, f->kind), f->handle, tmp, sizeof(tmp));
	PUT_RAW(b, ",handle=\"", tmp, strlen(tmp));
}

/* The part of an action's labels after its filter's:
 * ,order="1",action="mirred",cookie="0a0b" and the user labels. */
static void action_part(struct tcx_buf *b, const struct tcx_rowlabels *l,
                        const struct tcx_action *a)
{
	static const char hexd[] = "0123456789abcdef";
	const struct tcx_config *cfg = l->cfg;
	char tmp[2 * TCX_COOKIE_MAX + 1];

	PUT_RAW(b, ",order=\"", tmp, tcx_fmt_u64(tmp, a->order));
	tcx_buf_put(b, ",action=\"", 9);
	tcx_buf_put(b, l->names.p + l->kind_off[a->kind],
	            l->kind_off[a->kind + 1] - l->kind_off[a->kind]);
	tcx_buf_putc(b, '"');
	for (unsigned i = 0; i < a->cookie_len; i++) {
		tmp[2 * i] = hexd[a->cookie[i] >> 4];
		tmp[2 * i + 1] = hexd[a->cookie[i] & 15];
	}
	PUT_RAW(b, ",cookie=\"", tmp, 2u * a->cookie_len);
	if (cfg && cfg->n_labels) {
		const char *values[TCX_MAX_LABELS];
		struct tcx_label_buf lb;

		tcx_labels_resolve(cfg, a->cookie, a->cookie_len, values, &lb);
		for (size_t i = 0; i < cfg->n_labels; i++) {
			tcx_buf_put(b, l->names.p + l->lbl_off[i],
			            l->lbl_off[i + 1] - l->lbl_off[i]);
			tcx_buf_escape_label(b, values[i]);
			tcx_buf_putc(b, '"');
		}
	}
}

/* Room for `want` rows, doubling (few reallocations, so few freed blocks
 * left behind in the heap while the arrays are small). */
static int room(void **arr, size_t *cap, size_t want, size_t elem)
{
	size_t ncap = *cap ? *cap : 1024;
	void *n;

	if (want <= *cap)
		return 0;
	while (ncap < want)
		ncap *= 2;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -1;
	*arr = n;
	*cap = ncap;
	return 0;
}

int tcx_rowlabels_update(struct tcx_rowlabels *l, const struct tcx_snapshot *s)
{
	const struct tcx_config *cfg = s->cfg;

	if (l->cfg != cfg || l->err)
		rowlabels_reset(l);
	if (!l->names.len && !l->n_kinds) {
		size_t n_labels = cfg ? cfg->n_labels : 0;

		l->cfg = cfg;
		for (size_t i = 0; i < n_labels; i++) {
			l->lbl_off[i] = l->names.len;
			tcx_buf_putc(&l->names, ',');
			tcx_buf_puts(&l->names, cfg->labels[i]);
			tcx_buf_put(&l->names, "=\"", 2);
		}
		l->lbl_off[n_labels] = l->names.len;
		l->kind_off[0] = l->names.len;
	}
	for (; l->n_kinds < s->n_kinds; l->n_kinds++) {
		tcx_buf_escape_label(&l->names, s->kinds[l->n_kinds]);
		l->kind_off[l->n_kinds + 1] = l->names.len;
	}
	if (room((void **)&l->flt, &l->cap_f, s->n_filters, sizeof(*l->flt)) < 0 ||
	    room((void **)&l->act, &l->cap_a, s->n_actions, sizeof(*l->act)) < 0 || l->names.err) {
		l->err = 1;
		return -ENOMEM;
	}
	/* Actions follow their filter in a snapshot; any that do not get
	 * their filter's labels copied in front of their own. */
	for (size_t fi = l->n_filters, ai = l->n_actions; fi <= s->n_filters; fi++) {
		size_t first = ai;
		struct tcx_buf *ar = &l->arena;

		if (fi < s->n_filters) {
			const struct tcx_filter *f = &s->filters[fi];
			struct rl_filter *lf = &l->flt[fi];

			if (fi && same_tp(f, &s->filters[fi - 1])) {
				lf->tp_off = lf[-1].tp_off;
				lf->tp_len = lf[-1].tp_len;
			} else {
				lf->tp_off = (uint32_t)ar->len;
				tp_part(ar, l, f);
				lf->tp_len = (uint16_t)(ar->len - lf->tp_off);
			}
			lf->off = (uint32_t)ar->len;
			handle_part(ar, s, f);
			lf->len = (uint16_t)(ar->len - lf->off);
		}
		for (; ai < s->n_actions && (fi == s->n_filters || s->actions[ai].filter == fi);
		     ai++) {
			const struct tcx_action *a = &s->actions[ai];
			struct rl_action *la = &l->act[ai];

			if (ai == first && fi < s->n_filters) {
				la->off = l->flt[fi].off;
			} else {
				la->off = (uint32_t)ar->len;
				handle_part(ar, s, &s->filters[a->filter]);
			}
			action_part(ar, l, a);
			la->len = (uint32_t)(ar->len - la->off);
		}
		if (ar->err || ar->len > UINT32_MAX) {
			l->err = 1;
			return -ENOMEM;
		}
	}
	l->n_filters = s->n_filters;
	l->n_actions = s->n_actions;
	return 0;
}

/* A render pass: the rows' labels (given, or its own) and the targets'. */
struct render {
	const struct tcx_snapshot *s;
	struct tcx_rowlabels *l;
	struct tcx_rowlabels *own; /* formatted here: freed with the pass */
	struct tcx_buf tgt;        /* each target's labels */
	uint32_t *tgt_off;         /* n_targets + 1 offsets into tgt */
	struct tcx_buf row;        /* scratch for one-off label sets */
};

static int render_init(struct render *r, const struct tcx_snapshot *s, struct tcx_rowlabels *l)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	tcx_buf_init_mem(&r->tgt);
	tcx_buf_init_mem(&r->row);
	if (!l)
		l = r->own = tcx_rowlabels_new();
	r->l = l;
	r->tgt_off = malloc((s->n_targets + 1) * sizeof(*r->tgt_off));
	if (!l || !r->tgt_off)
		return -1;
	for (size_t i = 0; i < s->n_targets; i++) {
		r->tgt_off[i] = (uint32_t)r->tgt.len;
		target_labels(&r->tgt, &s->targets[i]);
	}
	r->tgt_off[s->n_targets] = (uint32_t)r->tgt.len;
	if (r->tgt.err || r->tgt.len > UINT32_MAX)
		return -1;
	/* Rows the collector's observer has not formatted yet (all of them
	 * without one). */
	return tcx_rowlabels_update(l, s);
}

static void render_free(struct render *r)
{
	tcx_rowlabels_free(r->own);
	tcx_buf_free(&r->tgt);
	tcx_buf_free(&r->row);
	free(r->tgt_off);
}

/* The labels of target ti. */
static inline void put_target(struct tcx_buf *b, const struct render *r, size_t ti)
{
	tcx_buf_put(b, r->tgt.p + r->tgt_off[ti], r->tgt_off[ti + 1] - r->tgt_off[ti]);
}

/* The whole label set of a filter. */
static void filter_labels(struct tcx_buf *b, const struct render *r, uint32_t fi)
{
	const struct tcx_rowlabels *l = r->l;

	put_target(b, r, r->s->filters[fi].target);
	tcx_buf_put(b, l->arena.p + l->flt[fi].tp_off, l->flt[fi].tp_len);
	tcx_buf_put(b, l->arena.p + l->flt[fi].off, l->flt[fi].len);
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

static void sample_end(struct tcx_buf *b, uint64_t v)
{
	tcx_buf_put(b, "} ", 2);
	tcx_buf_u64(b, v);
	tcx_buf_putc(b, '\n');
}

enum action_field { F_BYTES, F_PACKETS, F_DROPS, F_OVERLIMITS, F_HW_BYTES, F_HW_PACKETS };

static const struct {
	const char *name;
	const char *help;
} action_families[] = {
        [F_BYTES] = {"tc_action_bytes_total",
                     "Bytes that passed through the action (software and hardware)."},
        [F_PACKETS] = {"tc_action_packets_total",
                       "Packets that passed through the action (software and hardware)."},
        [F_DROPS] = {"tc_action_drops_total", "Packets the action dropped."},
        [F_OVERLIMITS] = {"tc_action_overlimits_total", "Overlimit events of the action."},
        [F_HW_BYTES] = {"tc_action_hw_bytes_total",
                        "Bytes counted by hardware offload (a subset of tc_action_bytes_total)."},
        [F_HW_PACKETS] = {"tc_action_hw_packets_total",
                          "Packets counted by hardware offload (a subset of "
                          "tc_action_packets_total)."},
};

static uint64_t action_value(const struct tcx_action *a, enum action_field f)
{
	switch (f) {
	case F_BYTES:
		return a->bytes;
	case F_PACKETS:
		return a->packets;
	case F_DROPS:
		return a->drops;
	case F_OVERLIMITS:
		return a->overlimits;
	case F_HW_BYTES:
		return a->hw_bytes;
	case F_HW_PACKETS:
		return a->hw_packets;
	}
	return 0;
}

/* One sample: name{labels} value, the labels being three slices (target,
 * tp, row); one capacity check for the whole line. */
static inline void put_sample3(struct tcx_buf *b, const char *name, size_t nlen, const char *l1,
                               size_t n1, const char *l2, size_t n2, const char *l3, size_t n3,
                               uint64_t v)
{
	size_t need = nlen + n1 + n2 + n3 + 24;
	char *p;

	if (b->cap - b->len < need && tcx_buf_reserve(b, need) < 0)
		return;
	p = b->p + b->len;
	memcpy(p, name, nlen);
	p += nlen;
	*p++ = '{';
	memcpy(p, l1, n1);
	p += n1;
	memcpy(p, l2, n2);
	p += n2;
	memcpy(p, l3, n3);
	p += n3;
	*p++ = '}';
	*p++ = ' ';
	p += tcx_fmt_u64(p, v);
	*p++ = '\n';
	b->len = (size_t)(p - b->p);
}

static void render_actions(const struct render *r, int om, struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	const struct tcx_rowlabels *l = r->l;
	const char *tgt = r->tgt.p, *ar = l->arena.p;

	for (unsigned f = F_BYTES; f <= F_HW_PACKETS; f++) {
		const char *name = action_families[f].name;
		size_t nlen = strlen(name);

		family_header(b, name, "counter", action_families[f].help, om);
		for (size_t i = 0; i < s->n_actions; i++) {
			const struct tcx_action *a = &s->actions[i];
			const struct rl_filter *lf = &l->flt[a->filter];
			uint32_t ti = s->filters[a->filter].target;

			if (!tcx_action_shown(a))
				continue;
			put_sample3(b, name, nlen, tgt + r->tgt_off[ti],
			            r->tgt_off[ti + 1] - r->tgt_off[ti], ar + lf->tp_off,
			            lf->tp_len, ar + l->act[i].off, l->act[i].len,
			            action_value(a, f));
		}
	}
}

/* An upper bound of the output, so that a growing buffer is sized once. */
static size_t estimate(const struct render *r)
{
	const struct tcx_snapshot *s = r->s;
	size_t est = 16384 + s->n_targets * 2048;

	for (size_t i = 0; i < s->n_actions; i++) {
		uint32_t fi = s->actions[i].filter, ti = s->filters[fi].target;

		est += 6 * (48 + r->tgt_off[ti + 1] - r->tgt_off[ti] + r->l->flt[fi].tp_len +
		            r->l->act[i].len);
	}
	for (size_t i = 0; i < s->n_filters; i++) {
		uint32_t ti = s->filters[i].target;

		est += 2 * (80 + r->tgt_off[ti + 1] - r->tgt_off[ti] + r->l->flt[i].tp_len +
		            r->l->flt[i].len);
	}
	return est;
}

static void render_filters(const struct render *r, int om, struct tcx_buf *b)
{
	static const char *const flag_labels[] = {",skip_hw=\"", ",skip_sw=\"", ",in_hw=\"",
	                                          ",not_in_hw=\""};
	const struct tcx_snapshot *s = r->s;

	/* One family for the flags, each a label of its own, so that a query
	 * compares values (in_hw="true") instead of matching substrings. */
	family_header(b, "tc_filter_flags_info", "info",
	              "Flags of a TC filter, one series per filter: skip_hw, skip_sw, in_hw "
	              "(offloaded to hardware) and not_in_hw, each true or false.",
	              om);
	for (size_t i = 0; i < s->n_filters; i++) {
		uint32_t flags = s->filters[i].flags;

		if (s->filters[i].merged)
			continue;
		tcx_buf_put(b, "tc_filter_flags_info{", 21);
		filter_labels(b, r, (uint32_t)i);
		for (unsigned k = 0; k < 4; k++) {
			tcx_buf_puts(b, flag_labels[k]);
			tcx_buf_puts(b, (flags & (1u << k)) ? "true\"" : "false\"");
		}
		sample_end(b, 1);
	}
}

/* A gauge with a fractional value. */
static void sample_double(struct tcx_buf *b, const char *name, const char *labels, size_t llen,
                          double v)
{
	sample_head(b, name, labels, llen);
	tcx_buf_double(b, v);
	tcx_buf_putc(b, '\n');
}

static void render_targets(struct render *r, int om, struct tcx_buf *b)
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
	};
	const struct tcx_snapshot *s = r->s;
	struct tcx_buf *row = &r->row;

	for (unsigned k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family_header(b, fams[k].name, fams[k].type, fams[k].help, om);
		for (size_t i = 0; i < s->n_targets; i++) {
			const struct tcx_target *t = &s->targets[i];
			int first = 0;

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
			default:
				put_label(row, &first, "mode", tcx_mode_name(t->mode));
				sample(b, fams[k].name, row->p, row->len, 1);
				break;
			}
		}
	}
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
	family_header(b, "tc_exporter_netlink_dropped_total", "counter",
	              "Netlink datagrams dropped since the collector started, by cause: sender "
	              "(not sent by the kernel; dropped unread), length (a message length that "
	              "does not fit; the rest of the datagram dropped and its target failed).",
	              om);
	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++) {
		sample1(r, b, "tc_exporter_netlink_dropped_total", "cause", nldrop_causes[i],
		        s->netlink_dropped[i]);
	}
	family_header(b, "tc_exporter_merged_rows", "gauge",
	              "Rows left out because an earlier row had the same labels, by row type; an "
	              "action's counters are added to that row's (u32 gives every filter past the "
	              "4095th of a hash table the handle 800::fff).",
	              om);
	sample1(r, b, "tc_exporter_merged_rows", "row", "filter", s->merged_filters);
	sample1(r, b, "tc_exporter_merged_rows", "row", "action", s->merged_actions);
	family_header(b, "tc_exporter_snapshot_timestamp_seconds", "gauge",
	              "When the snapshot was taken (Unix time).", om);
	sample_double(b, "tc_exporter_snapshot_timestamp_seconds", "", 0,
	              (double)s->taken.tv_sec + (double)s->taken.tv_nsec / 1e9);
	family_header(b, "tc_exporter_snapshot_duration_seconds", "gauge",
	              "Time the whole collection pass took.", om);
	sample_double(b, "tc_exporter_snapshot_duration_seconds", "", 0, s->duration_s);
	family_header(b, "tc_exporter_build_info", "info",
	              "Build information: version of tcexporter.", om);
	sample1(r, b, "tc_exporter_build_info", "version", TCX_VERSION, 1);
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
}

int tcx_render_prometheus(const struct tcx_snapshot *s, int om, struct tcx_buf *b)
{
	return tcx_render_prometheus_ex(s, om, NULL, NULL, b);
}

int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int om, const struct tcx_selfstats *st,
                             struct tcx_rowlabels *labels, struct tcx_buf *b)
{
	struct render r;
	int err = 0;

	if (render_init(&r, s, labels) < 0) {
		render_free(&r);
		return -ENOMEM;
	}
	if (!b->sink)
		tcx_buf_reserve(b, estimate(&r));
	render_actions(&r, om, b);
	render_filters(&r, om, b);
	render_targets(&r, om, b);
	render_meta(&r, om, b);
	if (st)
		render_self(&r, om, st, b);
	if (om)
		tcx_buf_put(b, "# EOF\n", 6);
	if (r.row.err)
		err = -ENOMEM;
	render_free(&r);
	if (err)
		return err;
	return b->err ? -b->err : 0;
}
