/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus text exposition 0.0.4 and OpenMetrics 1.0.0.
 *
 * Samples of one family must stand together, so each family walks every
 * row. The label set of a row is rebuilt for each family rather than kept:
 * keeping it would cost more memory per row than the row itself. The parts
 * that many rows share (target, filter) are built once and copied.
 *
 * A large snapshot rendered to a sink (the --once output, a gzip stream) is
 * rendered by two threads: each builds the labels of half the rows, then
 * the samples are cut into chunks that the threads render in turn and hand
 * to the sink in order, so that the output is the same byte for byte. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/expo.h"
#include "agent/render.h"
#include "collectors/tc_parse.h"
#include "config.h"

static const char *const err_causes[TCX_ERR__MAX] = {"malformed", "kernel", "notfound", "io",
                                                     "nomem"};

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

int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt, struct tcx_buf *b)
{
	if (fmt == TCX_FMT_JSON)
		return tcx_render_json(s, b);
	return tcx_render_prometheus(s, fmt == TCX_FMT_OPENMETRICS, b);
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

/* Everything a render pass builds once and copies per sample, in one arena:
 * each target's labels, then each filter's labels directly followed by those
 * of its first action (order, action, cookie and the user labels), so that
 * a sample line is two copies: the target's slice and the action's. Each
 * action row is written six times, once per counter family; formatting its
 * labels once costs about 140 bytes per row (more with user labels) while
 * the render runs. */
struct render {
	const struct tcx_snapshot *s;
	/* [0]: the targets' labels and the first part's rows; [1]: the rows of
	 * the second part, built by the second thread. */
	struct tcx_buf arena[2];
	size_t fmid, amid; /* filters and actions from here on are in arena[1] */
	uint32_t *tgt_off; /* n_targets + 1 offsets into arena[0] (each arena stays < 4 GiB) */
	uint32_t *flt_off; /* per filter: its labels (after the target's) */
	uint16_t *flt_len;
	uint32_t *act_off; /* per action: its filter's labels and its own */
	uint32_t *act_len;
	struct tcx_buf names; /* kinds escaped and `,name="` per user label */
	size_t kind_off[TCX_MAX_KINDS + 1];
	size_t lbl_off[TCX_MAX_LABELS + 1];
	struct tcx_buf row; /* scratch for one-off label sets */
};

static inline const char *flt_labels(const struct render *r, size_t fi)
{
	return r->arena[fi >= r->fmid].p + r->flt_off[fi];
}

static inline const char *act_labels(const struct render *r, size_t ai)
{
	return r->arena[ai >= r->amid].p + r->act_off[ai];
}

/* The part of a filter's labels after its target's:
 * ,chain="0",protocol="ip",pref="10",kind="u32",handle="800::800" */
static void filter_part(struct tcx_buf *b, const struct render *r, const struct tcx_filter *f)
{
	const char *kind = tcx_kind_name(r->s, f->kind);
	char tmp[32];
	const char *proto;

	PUT_RAW(b, ",chain=\"", tmp, tcx_fmt_u64(tmp, f->chain));
	proto = tcx_protocol_name(f->protocol, tmp, sizeof(tmp));
	PUT_RAW(b, ",protocol=\"", proto, strlen(proto));
	PUT_RAW(b, ",pref=\"", tmp, tcx_fmt_u64(tmp, f->pref));
	/* the kind, escaped once per render in r->names */
	PUT_RAW(b, ",kind=\"", r->names.p + r->kind_off[f->kind],
	        r->kind_off[f->kind + 1] - r->kind_off[f->kind]);
	tcx_format_handle(kind, f->handle, tmp, sizeof(tmp));
	PUT_RAW(b, ",handle=\"", tmp, strlen(tmp));
}

/* The part of an action's labels after its filter's:
 * ,order="1",action="mirred",cookie="0a0b" and the user labels. */
static void action_part(struct tcx_buf *b, const struct render *r, const struct tcx_action *a)
{
	static const char hexd[] = "0123456789abcdef";
	const struct tcx_config *cfg = r->s->cfg;
	char tmp[2 * TCX_COOKIE_MAX + 1];

	PUT_RAW(b, ",order=\"", tmp, tcx_fmt_u64(tmp, a->order));
	tcx_buf_put(b, ",action=\"", 9);
	tcx_buf_put(b, r->names.p + r->kind_off[a->kind],
	            r->kind_off[a->kind + 1] - r->kind_off[a->kind]);
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
			tcx_buf_put(b, r->names.p + r->lbl_off[i],
			            r->lbl_off[i + 1] - r->lbl_off[i]);
			tcx_buf_escape_label(b, values[i]);
			tcx_buf_putc(b, '"');
		}
	}
}

/* The labels of filters [f_from, f_to) and actions [a_from, a_to) into
 * arena[part]. Actions follow their filter in a snapshot; any that do not
 * (or whose filter is in the other part) get their filter's labels copied in
 * front of their own. */
static int build_rows(struct render *r, unsigned part, size_t f_from, size_t f_to, size_t a_from,
                      size_t a_to)
{
	const struct tcx_snapshot *s = r->s;
	struct tcx_buf *ar = &r->arena[part];

	for (size_t fi = f_from, ai = a_from; fi <= f_to; fi++) {
		size_t first = ai;

		if (fi < f_to) {
			r->flt_off[fi] = (uint32_t)ar->len;
			filter_part(ar, r, &s->filters[fi]);
			r->flt_len[fi] = (uint16_t)(ar->len - r->flt_off[fi]);
		}
		for (; ai < a_to && (fi == f_to || s->actions[ai].filter == fi); ai++) {
			const struct tcx_action *a = &s->actions[ai];

			if (ai == first && fi < f_to) {
				r->act_off[ai] = r->flt_off[fi];
			} else {
				r->act_off[ai] = (uint32_t)ar->len;
				filter_part(ar, r, &s->filters[a->filter]);
			}
			if (!a->drop)
				action_part(ar, r, a);
			r->act_len[ai] = (uint32_t)(ar->len - r->act_off[ai]);
		}
		if (ar->len > UINT32_MAX)
			return -1;
	}
	return ar->err ? -1 : 0;
}

/* Everything but the rows' labels; parts: 1, or 2 (the caller builds the
 * second part with build_rows(r, 1, ...)). */
static int render_init(struct render *r, const struct tcx_snapshot *s, unsigned parts)
{
	const struct tcx_config *cfg = s->cfg;
	size_t n_labels = cfg ? cfg->n_labels : 0;

	memset(r, 0, sizeof(*r));
	r->s = s;
	tcx_buf_init_mem(&r->arena[0]);
	tcx_buf_init_mem(&r->arena[1]);
	tcx_buf_init_mem(&r->names);
	tcx_buf_init_mem(&r->row);
	r->fmid = s->n_filters;
	r->amid = s->n_actions;
	if (parts > 1 && s->n_filters > 1) {
		r->fmid = s->n_filters / 2;
		r->amid = s->filters[r->fmid].first_action;
		if (r->amid > s->n_actions)
			r->amid = s->n_actions;
	}
	r->tgt_off = malloc((s->n_targets + 1) * sizeof(*r->tgt_off));
	r->flt_off = malloc((s->n_filters + 1) * sizeof(*r->flt_off));
	r->flt_len = malloc((s->n_filters + 1) * sizeof(*r->flt_len));
	r->act_off = malloc((s->n_actions + 1) * sizeof(*r->act_off));
	r->act_len = malloc((s->n_actions + 1) * sizeof(*r->act_len));
	if (!r->tgt_off || !r->flt_off || !r->flt_len || !r->act_off || !r->act_len)
		return -1;
	for (size_t i = 0; i < s->n_targets; i++) {
		r->tgt_off[i] = (uint32_t)r->arena[0].len;
		target_labels(&r->arena[0], &s->targets[i]);
	}
	r->tgt_off[s->n_targets] = (uint32_t)r->arena[0].len;
	for (unsigned k = 0; k < s->n_kinds; k++) {
		r->kind_off[k] = r->names.len;
		tcx_buf_escape_label(&r->names, s->kinds[k]);
	}
	r->kind_off[s->n_kinds] = r->names.len;
	for (size_t l = 0; l < n_labels; l++) {
		r->lbl_off[l] = r->names.len;
		tcx_buf_putc(&r->names, ',');
		tcx_buf_puts(&r->names, cfg->labels[l]);
		tcx_buf_put(&r->names, "=\"", 2);
	}
	r->lbl_off[n_labels] = r->names.len;
	if (r->names.err || r->arena[0].err)
		return -1;
	return 0;
}

static void render_free(struct render *r)
{
	tcx_buf_free(&r->arena[0]);
	tcx_buf_free(&r->arena[1]);
	tcx_buf_free(&r->names);
	tcx_buf_free(&r->row);
	free(r->tgt_off);
	free(r->flt_off);
	free(r->flt_len);
	free(r->act_off);
	free(r->act_len);
}

/* The labels of target ti. */
static inline void put_target(struct tcx_buf *b, const struct render *r, size_t ti)
{
	tcx_buf_put(b, r->arena[0].p + r->tgt_off[ti], r->tgt_off[ti + 1] - r->tgt_off[ti]);
}

/* The whole label set of a filter. */
static void filter_labels(struct tcx_buf *b, const struct render *r, uint32_t fi)
{
	put_target(b, r, r->s->filters[fi].target);
	tcx_buf_put(b, flt_labels(r, fi), r->flt_len[fi]);
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

static void sample(struct tcx_buf *b, const char *name, const char *labels, size_t llen, uint64_t v)
{
	tcx_buf_puts(b, name);
	tcx_buf_putc(b, '{');
	tcx_buf_put(b, labels, llen);
	tcx_buf_put(b, "} ", 2);
	tcx_buf_u64(b, v);
	tcx_buf_putc(b, '\n');
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

/* One sample: name{labels} value, the labels being two arena slices; one
 * capacity check for the whole line. */
static inline void put_sample2(struct tcx_buf *b, const char *name, size_t nlen, const char *l1,
                               size_t n1, const char *l2, size_t n2, uint64_t v)
{
	size_t need = nlen + n1 + n2 + 24;
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
	*p++ = '}';
	*p++ = ' ';
	p += tcx_fmt_u64(p, v);
	*p++ = '\n';
	b->len = (size_t)(p - b->p);
}

/* Samples of action family f for actions [from, to). */
static void action_rows(const struct render *r, unsigned f, size_t from, size_t to,
                        struct tcx_buf *b)
{
	const struct tcx_snapshot *s = r->s;
	const char *name = action_families[f].name, *tgt = r->arena[0].p;
	size_t nlen = strlen(name);

	for (size_t i = from; i < to; i++) {
		const struct tcx_action *a = &s->actions[i];
		uint32_t fi = a->filter, ti = s->filters[fi].target;

		if (a->drop)
			continue;
		put_sample2(b, name, nlen, tgt + r->tgt_off[ti],
		            r->tgt_off[ti + 1] - r->tgt_off[ti], act_labels(r, i), r->act_len[i],
		            action_value(a, f));
	}
}

static void action_header(struct tcx_buf *b, unsigned f, int om)
{
	family_header(b, action_families[f].name, "counter", action_families[f].help, om);
}

static void render_actions(const struct render *r, int om, struct tcx_buf *b)
{
	for (unsigned f = F_BYTES; f <= F_HW_PACKETS; f++) {
		action_header(b, f, om);
		action_rows(r, f, 0, r->s->n_actions, b);
	}
}

/* An upper bound of the output, so that a growing buffer is sized once. */
static size_t estimate(const struct render *r)
{
	const struct tcx_snapshot *s = r->s;
	size_t est = 16384 + s->n_targets * 2048;

	for (size_t i = 0; i < s->n_actions; i++) {
		uint32_t fi = s->actions[i].filter, ti = s->filters[fi].target;

		est += 6 * (48 + r->tgt_off[ti + 1] - r->tgt_off[ti] + r->act_len[i]);
	}
	for (size_t i = 0; i < s->n_filters; i++) {
		uint32_t ti = s->filters[i].target;

		est += 2 * (80 + r->tgt_off[ti + 1] - r->tgt_off[ti] + r->flt_len[i]);
	}
	return est;
}

/* One family for the flags, each a label of its own, so that a query
 * compares values (in_hw="true") instead of matching substrings. */
static void flags_header(struct tcx_buf *b, int om)
{
	family_header(b, "tc_filter_flags_info", "info",
	              "Flags of a TC filter, one series per filter: skip_hw, skip_sw, in_hw "
	              "(offloaded to hardware) and not_in_hw, each true or false.",
	              om);
}

/* Samples of the flags family for filters [from, to). */
static void flags_rows(const struct render *r, size_t from, size_t to, struct tcx_buf *b)
{
	static const char *const flag_labels[] = {",skip_hw=\"", ",skip_sw=\"", ",in_hw=\"",
	                                          ",not_in_hw=\""};
	const struct tcx_snapshot *s = r->s;

	for (size_t i = from; i < to; i++) {
		uint32_t flags = s->filters[i].flags;

		tcx_buf_put(b, "tc_filter_flags_info{", 21);
		filter_labels(b, r, (uint32_t)i);
		for (unsigned k = 0; k < 4; k++) {
			tcx_buf_puts(b, flag_labels[k]);
			tcx_buf_puts(b, (flags & (1u << k)) ? "true\"" : "false\"");
		}
		sample_end(b, 1);
	}
}

static void render_filters(const struct render *r, int om, struct tcx_buf *b)
{
	flags_header(b, om);
	flags_rows(r, 0, r->s->n_filters, b);
}

/* ---- two threads ------------------------------------------------------------------------ */

#define ROW_FAMILIES (F_HW_PACKETS + 2) /* the action counters, then the flags */

/* The row families cut into chunks, numbered in output order: item g is
 * rendered by thread g % 2 into its own buffer, and written when the turn
 * reaches g. */
struct par {
	struct render *r;
	int om;
	struct tcx_buf *out; /* a sink: the chunks go straight to it */
	size_t chunk;        /* rows per chunk */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned inits_done; /* both halves of the labels built */
	int init_failed;
	size_t turn; /* the item to write next */
	int err;     /* first failure (errno): later items are skipped */
};

static size_t family_rows(const struct render *r, unsigned fam)
{
	return fam < ROW_FAMILIES - 1 ? r->s->n_actions : r->s->n_filters;
}

static void par_emit(struct par *p, unsigned t, struct tcx_buf *priv)
{
	const struct render *r = p->r;
	size_t g = 0;

	pthread_mutex_lock(&p->lock);
	while (p->inits_done < 2)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (p->init_failed)
		return;
	for (unsigned fam = 0; fam < ROW_FAMILIES; fam++) {
		size_t n = family_rows(r, fam);

		for (size_t from = 0; from == 0 || from < n; from += p->chunk, g++) {
			size_t to = n - from > p->chunk ? from + p->chunk : n;
			int e = 0;

			if (g % 2 != t)
				continue;
			priv->len = 0;
			if (fam < ROW_FAMILIES - 1) {
				if (from == 0)
					action_header(priv, fam, p->om);
				action_rows(r, fam, from, to, priv);
			} else {
				if (from == 0)
					flags_header(priv, p->om);
				flags_rows(r, from, to, priv);
			}
			pthread_mutex_lock(&p->lock);
			while (p->turn != g)
				pthread_cond_wait(&p->cond, &p->lock);
			pthread_mutex_unlock(&p->lock);
			/* Our turn: the other thread waits for the next one. */
			if (priv->err)
				e = priv->err;
			else if (!p->err && priv->len)
				e = p->out->sink(p->out->sink_arg, priv->p, priv->len);
			pthread_mutex_lock(&p->lock);
			if (e && !p->err)
				p->err = e;
			p->turn++;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
		}
	}
}

static void par_init_done(struct par *p, int failed)
{
	pthread_mutex_lock(&p->lock);
	if (failed)
		p->init_failed = 1;
	p->inits_done++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static void *par_worker(void *arg)
{
	struct par *p = arg;
	struct render *r = p->r;
	struct tcx_buf priv;

	tcx_buf_init_mem(&priv);
	par_init_done(p, build_rows(r, 1, r->fmid, r->s->n_filters, r->amid, r->s->n_actions) < 0);
	par_emit(p, 1, &priv);
	tcx_buf_free(&priv);
	return NULL;
}

/* The row families by two threads; the second part of r's labels is built
 * here too. Returns 0, -ENOMEM, or the sink's -errno. */
static int render_rows_par(struct render *r, int om, struct tcx_buf *b, size_t chunk)
{
	struct par p = {.r = r, .om = om, .out = b, .chunk = chunk ? chunk : 1};
	struct tcx_buf priv;
	sigset_t all, old;
	pthread_t th;
	int err;

	if (tcx_buf_flush(b) < 0)
		return -b->err;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&th, NULL, par_worker, &p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&p.cond);
		pthread_mutex_destroy(&p.lock);
		/* No second thread: build its part here and go on alone. */
		if (build_rows(r, 1, r->fmid, r->s->n_filters, r->amid, r->s->n_actions) < 0 ||
		    build_rows(r, 0, 0, r->fmid, 0, r->amid) < 0)
			return -ENOMEM;
		render_actions(r, om, b);
		render_filters(r, om, b);
		return 0;
	}
	tcx_buf_init_mem(&priv);
	par_init_done(&p, build_rows(r, 0, 0, r->fmid, 0, r->amid) < 0);
	par_emit(&p, 0, &priv);
	pthread_join(th, NULL);
	tcx_buf_free(&priv);
	pthread_cond_destroy(&p.cond);
	pthread_mutex_destroy(&p.lock);
	if (p.init_failed)
		return -ENOMEM;
	if (p.err == ENOMEM)
		return -ENOMEM;
	if (p.err) {
		b->err = p.err;
		return -p.err;
	}
	return 0;
}

/* Two threads pay off from a few thousand rows, with a CPU for each. */
#define PAR_MIN_ROWS   4096
#define PAR_CHUNK_ROWS 2048

static int cpus_available(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return CPU_COUNT(&set);
}

/* A gauge with a fractional value. */
static void sample_double(struct tcx_buf *b, const char *name, const char *labels, size_t llen,
                          double v)
{
	tcx_buf_puts(b, name);
	if (llen) {
		tcx_buf_putc(b, '{');
		tcx_buf_put(b, labels, llen);
		tcx_buf_putc(b, '}');
	}
	tcx_buf_printf(b, " %.9g\n", v);
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
	struct tcx_buf *row = &r->row;
	int first;

	family_header(b, "tc_exporter_snapshot_errors", "gauge",
	              "Errors met while taking the snapshot, by cause.", om);
	for (unsigned i = 0; i < TCX_ERR__MAX; i++) {
		row->len = 0;
		first = 1;
		put_label(row, &first, "cause", err_causes[i]);
		sample(b, "tc_exporter_snapshot_errors", row->p, row->len, s->errors[i]);
	}
	family_header(b, "tc_exporter_unmapped_cookies", "gauge",
	              "Actions whose cookie matched neither the cookie map nor a decoder.", om);
	sample_double(b, "tc_exporter_unmapped_cookies", "", 0, (double)s->unmapped_cookies);
	family_header(b, "tc_exporter_dropped_actions", "gauge",
	              "Actions left out by the 'unmapped: drop' policy.", om);
	sample_double(b, "tc_exporter_dropped_actions", "", 0, (double)s->dropped_rows);
	family_header(b, "tc_exporter_snapshot_timestamp_seconds", "gauge",
	              "When the snapshot was taken (Unix time).", om);
	sample_double(b, "tc_exporter_snapshot_timestamp_seconds", "", 0,
	              (double)s->taken.tv_sec + (double)s->taken.tv_nsec / 1e9);
	family_header(b, "tc_exporter_snapshot_duration_seconds", "gauge",
	              "Time the whole collection pass took.", om);
	sample_double(b, "tc_exporter_snapshot_duration_seconds", "", 0, s->duration_s);
	family_header(b, "tc_exporter_build_info", "info",
	              "Build information: version of tcexporter.", om);
	row->len = 0;
	first = 1;
	put_label(row, &first, "version", TCX_VERSION);
	sample(b, "tc_exporter_build_info", row->p, row->len, 1);
}

/* Here rather than in expo.c: the renderer is in the executable too, and
 * expo.c (zlib) is in the daemon module only. */
const unsigned tcx_http_codes[TCX_HTTP_CODES] = {200, 304, 400, 401, 403, 404, 405, 431, 503, 0};

unsigned tcx_http_code_slot(unsigned code)
{
	for (unsigned i = 0; i + 1 < TCX_HTTP_CODES; i++)
		if (tcx_http_codes[i] == code)
			return i;
	return TCX_HTTP_CODES - 1;
}

/* The daemon's own counters. */
static void render_self(struct render *r, int om, const struct tcx_selfstats *st, struct tcx_buf *b)
{
	struct tcx_buf *row = &r->row;
	char code[8];
	int first;

	family_header(b, "tc_exporter_collections_total", "counter",
	              "Collection passes since the daemon started.", om);
	sample_double(b, "tc_exporter_collections_total", "", 0, (double)st->collections_total);
	family_header(b, "tc_exporter_collection_errors_total", "counter",
	              "Errors met by collection passes since the daemon started, by cause.", om);
	for (unsigned i = 0; i < TCX_ERR__MAX; i++) {
		row->len = 0;
		first = 1;
		put_label(row, &first, "cause", err_causes[i]);
		sample(b, "tc_exporter_collection_errors_total", row->p, row->len,
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
	sample_double(b, "tc_exporter_config_last_reload_successful", "", 0,
	              st->last_reload_ok ? 1 : 0);
	family_header(b, "tc_exporter_config_last_reload_success_timestamp_seconds", "gauge",
	              "When the configuration in use was loaded (Unix time).", om);
	sample_double(b, "tc_exporter_config_last_reload_success_timestamp_seconds", "", 0,
	              st->last_reload_ts);
}

int tcx_render_prometheus(const struct tcx_snapshot *s, int om, struct tcx_buf *b)
{
	return tcx_render_prometheus_ex(s, om, NULL, b);
}

int tcx_render_prometheus_opts(const struct tcx_snapshot *s, int om, const struct tcx_selfstats *st,
                               struct tcx_buf *b, const struct tcx_render_opts *o)
{
	unsigned threads = o ? o->threads : 0;
	struct render r;
	int err = 0;

	if (!b->sink)
		threads = 1; /* a growing buffer: one thread writes it */
	else if (!threads)
		threads =
		        s->n_actions + s->n_filters >= PAR_MIN_ROWS && cpus_available() > 1 ? 2 : 1;
	if (render_init(&r, s, threads) < 0) {
		render_free(&r);
		return -ENOMEM;
	}
	if (threads > 1) {
		err = render_rows_par(&r, om, b,
		                      o && o->chunk_rows ? o->chunk_rows : PAR_CHUNK_ROWS);
	} else if (build_rows(&r, 0, 0, s->n_filters, 0, s->n_actions) < 0) {
		err = -ENOMEM;
	} else {
		if (!b->sink)
			tcx_buf_reserve(b, estimate(&r));
		render_actions(&r, om, b);
		render_filters(&r, om, b);
	}
	if (err) {
		render_free(&r);
		return err;
	}
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

int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int om, const struct tcx_selfstats *st,
                             struct tcx_buf *b)
{
	return tcx_render_prometheus_opts(s, om, st, b, NULL);
}
