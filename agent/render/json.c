/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON lines: one object per action row, then one line with the array of
 * filters, one with the array of qdiscs and one with the array of classes
 * (see tcexporter(8), "JSON OUTPUT"). */
#include <stdio.h>
#include <string.h>

#include "agent/render/json.h"
#include "collectors/agg.h"
#include "collectors/names.h"
#include "collectors/xstats.h"

static void key(struct tcx_buf *b, const char *k)
{
	tcx_buf_putc(b, ',');
	tcx_buf_json_string(b, k);
	tcx_buf_putc(b, ':');
}

static void kv_str(struct tcx_buf *b, const char *k, const char *v)
{
	key(b, k);
	tcx_buf_json_string(b, v);
}

static void kv_u64(struct tcx_buf *b, const char *k, uint64_t v)
{
	key(b, k);
	tcx_buf_u64(b, v);
}

/* With `aggregate`: one object per aggregate, {"<what>":{its kept
 * labels}, then the counters of table ctr that it has. */
static int render_aggregates(const struct tcx_aggregates *g, const char *what,
                             const struct tcx_counter_table *ctr, struct tcx_buf *b)
{
	for (size_t i = 0; i < g->n; i++) {
		tcx_buf_put(b, "{\"", 2);
		tcx_buf_puts(b, what);
		tcx_buf_put(b, "\":{", 3);
		for (size_t k = 0, first = 1; k < g->n_labels; k++) {
			const char *v = tcx_aggregate_value(g, i, k);

			if (g->optional[k] && !v[0])
				continue;
			if (!first)
				tcx_buf_putc(b, ',');
			first = 0;
			tcx_buf_json_string(b, g->names[k]);
			tcx_buf_putc(b, ':');
			tcx_buf_json_string(b, v);
		}
		tcx_buf_putc(b, '}');
		for (unsigned c = 0; c < ctr->n; c++)
			if (g->present[i] & (1u << c))
				kv_u64(b, ctr->def[c].key, g->c[i].v[c]);
		tcx_buf_put(b, "}\n", 2);
	}
	return b->err ? -b->err : 0;
}

/* A per-kind statistic's key: its family's name without tc_<object>_<kind>_
 * (and tin_ for a tin's) and _total: "lends", "drop_overlimit". */
static void xstat_key(struct tcx_buf *b, const struct tcx_xstat *f, size_t prefix, int tin)
{
	const char *k = f->family + prefix;
	size_t n = strlen(k);

	if (tin && strncmp(k, "tin_", 4) == 0)
		k += 4, n -= 4;
	if (f->type == TCX_XSTAT_COUNTER && n > 6 && strcmp(k + n - 6, "_total") == 0)
		n -= 6;
	tcx_buf_putc(b, '"');
	tcx_buf_put(b, k, n);
	tcx_buf_put(b, "\":", 2);
}

/* The present fields of n of fields, values v: {"lends":1,...}; the
 * elements of an array member (a label) in an object of their own:
 * "band_drops":{"0":1,"1":0}. */
static void xstats_object(struct tcx_buf *b, const struct tcx_xstat *fields, unsigned n,
                          const uint64_t *v, uint64_t present, size_t prefix, int tin, int close)
{
	int first = 1;

	tcx_buf_putc(b, '{');
	for (unsigned i = 0; i < n; i++) {
		int open =
		        i && fields[i].label && strcmp(fields[i].family, fields[i - 1].family) == 0;

		if (!(present & (UINT64_C(1) << i)))
			continue;
		if (fields[i].label && !open) {
			/* the first element present of its member */
			if (!first)
				tcx_buf_putc(b, ',');
			first = 0;
			xstat_key(b, &fields[i], prefix, tin);
			tcx_buf_putc(b, '{');
		} else if (fields[i].label) {
			tcx_buf_putc(b, ',');
		}
		if (fields[i].label) {
			tcx_buf_json_string(b, fields[i].label_value);
			tcx_buf_putc(b, ':');
		} else {
			if (!first)
				tcx_buf_putc(b, ',');
			first = 0;
			xstat_key(b, &fields[i], prefix, tin);
		}
		tcx_xstat_put(b, &fields[i], v[i]);
		if (fields[i].label &&
		    (i + 1 == n || strcmp(fields[i + 1].family, fields[i].family)))
			tcx_buf_putc(b, '}');
	}
	if (close)
		tcx_buf_putc(b, '}');
}

/* {"qdiscs":[...]} or {"classes":[...]}: one object per row, its labels as
 * the text formats name them, its counters by the table's keys, its per-kind
 * statistics, and a class's user labels. */
static void render_qrows(const struct tcx_snapshot *s, int is_class, struct tcx_buf *b)
{
	const struct tcx_counter_table *ctr = is_class ? &tcx_class_counters : &tcx_qdisc_counters;
	const struct tcx_qrow *rows = is_class ? s->classes : s->qdiscs;
	size_t n = is_class ? s->n_classes : s->n_qdiscs;
	char tmp[32];

	tcx_buf_puts(b, is_class ? "{\"classes\":[" : "{\"qdiscs\":[");
	for (size_t i = 0; i < n; i++) {
		const struct tcx_qrow *q = &rows[i];
		const struct tcx_qdev *d = &s->qdevs[q->qdev];
		const char *kind = tcx_kind_name(s, q->kind);
		const struct tcx_xstats_table *t = q->xt;
		const uint64_t *x = t ? s->xvals + q->xs : NULL;
		/* tc_qdisc_<kind>_ */
		size_t prefix = 3 + strlen(is_class ? "class" : "qdisc") + 1 + strlen(kind) + 1;

		if (i)
			tcx_buf_putc(b, ',');
		tcx_buf_put(b, "{\"netns\":", 9);
		tcx_buf_json_string(b, d->netns);
		kv_str(b, "device", d->dev);
		kv_str(b, "kind", kind);
		tcx_format_qhandle(q->handle, tmp, sizeof(tmp));
		kv_str(b, "handle", tmp);
		tcx_format_qparent(q->parent, kind, tmp, sizeof(tmp));
		kv_str(b, "parent", tmp);
		for (unsigned c = 0; c < ctr->n; c++)
			kv_u64(b, ctr->def[c].key, q->c[c]);
		key(b, "xstats");
		if (!t) {
			tcx_buf_put(b, "{}", 2);
		} else {
			xstats_object(b, t->fields, t->n_fields, x, q->xs_present, prefix, 0,
			              !t->n_tin_fields);
			if (t->n_tin_fields) {
				tcx_buf_puts(b, q->xs_present ? ",\"tins\":[" : "\"tins\":[");
				for (unsigned tin = 0; tin < q->n_tins; tin++) {
					const uint64_t *v = x + t->n_fields +
					                    (size_t)tin * (1 + t->n_tin_fields);

					if (tin)
						tcx_buf_putc(b, ',');
					xstats_object(b, t->tin_fields, t->n_tin_fields, v + 1,
					              v[0], prefix, 1, 1);
				}
				tcx_buf_put(b, "]}", 2);
			}
		}
		if (is_class) {
			key(b, "labels");
			tcx_buf_putc(b, '{');
			for (size_t l = 0; l < s->sets.n_labels; l++) {
				if (l)
					tcx_buf_putc(b, ',');
				tcx_buf_json_string(b, s->cfg->labels[l]);
				tcx_buf_putc(b, ':');
				tcx_buf_json_string(b, tcx_labelset_value(s, q->labels, l));
			}
			tcx_buf_putc(b, '}');
		}
		tcx_buf_putc(b, '}');
	}
	tcx_buf_put(b, "]}\n", 3);
}

/* A filter's identity, opening its object: {"netns":"",...,"flags":"..." */
static void filter_identity(const struct tcx_snapshot *s, const struct tcx_filter *f,
                            struct tcx_buf *b)
{
	const struct tcx_target *t = &s->targets[f->target];
	const char *kind = tcx_kind_name(s, f->kind);
	char tmp[64];

	tcx_buf_put(b, "{\"netns\":", 9);
	tcx_buf_json_string(b, t->netns);
	if (t->block) {
		key(b, "device");
		tcx_buf_put(b, "null", 4);
		kv_u64(b, "block", t->block);
	} else {
		kv_str(b, "device", t->dev);
		key(b, "block");
		tcx_buf_put(b, "null", 4);
	}
	kv_str(b, "parent", t->parent_name);
	kv_u64(b, "chain", f->chain);
	kv_str(b, "protocol", tcx_protocol_name(f->protocol, tmp, sizeof(tmp)));
	kv_u64(b, "pref", f->pref);
	kv_str(b, "kind", kind);
	tcx_format_handle(kind, f->handle, tmp, sizeof(tmp));
	kv_str(b, "handle", tmp);
	tcx_flags_string(f->flags, tmp, sizeof(tmp));
	kv_str(b, "flags", tmp);
}

/* {"filters":[...]}: one object per filter shown, its identity and the hit
 * counters its classifier keeps (none: no key), u32's per key in
 * "key_hits":[...]. */
static void render_filters(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	const struct tcx_counter_table *ctr = &tcx_filter_counters;
	int first = 1;

	tcx_buf_puts(b, "{\"filters\":[");
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];
		const uint64_t *v;

		if (f->merged)
			continue;
		if (!first)
			tcx_buf_putc(b, ',');
		first = 0;
		filter_identity(s, f, b);
		if (!f->hv_present) { /* hvals may be NULL: no offset into it */
			tcx_buf_putc(b, '}');
			continue;
		}
		v = s->hvals + f->hv;
		for (unsigned c = 0; c < ctr->n; c++)
			if (f->hv_present & (1u << c))
				kv_u64(b, ctr->def[c].key, v[c]);
		if (f->n_keys && (f->hv_present & (1u << TCX_FCTR_HITS))) {
			key(b, TCX_KEY_HITS_KEY);
			for (unsigned k = 0; k < f->n_keys; k++) {
				tcx_buf_putc(b, k ? ',' : '[');
				tcx_buf_u64(b, v[ctr->n + k]);
			}
			tcx_buf_putc(b, ']');
		}
		tcx_buf_putc(b, '}');
	}
	tcx_buf_put(b, "]}\n", 3);
}

int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	const struct tcx_config *cfg = s->cfg;
	const struct tcx_counter_table *ctr = &tcx_action_counters;
	char hex[2 * TCX_COOKIE_MAX + 1];

	if (s->aggs)
		render_aggregates(s->aggs, "aggregate", ctr, b);
	/* then the filters' hit counters, summed alike */
	if (s->aggs && s->hit_aggs)
		render_aggregates(s->hit_aggs, "filter_aggregate", &tcx_filter_counters, b);
	for (size_t i = 0; !s->aggs && i < s->n_actions; i++) {
		const struct tcx_action *a = &s->actions[i];

		if (!tcx_action_shown(a))
			continue;
		filter_identity(s, &s->filters[a->filter], b);
		kv_u64(b, "order", a->order);
		kv_str(b, "action", tcx_kind_name(s, a->kind));
		key(b, "index");
		if (a->index)
			tcx_buf_u64(b, a->index);
		else
			tcx_buf_put(b, "null", 4);
		tcx_cookie_hex(a->cookie, a->cookie_len, hex);
		kv_str(b, "cookie", hex);
		key(b, "labels");
		tcx_buf_putc(b, '{');
		for (size_t l = 0; l < s->sets.n_labels; l++) {
			if (l)
				tcx_buf_putc(b, ',');
			tcx_buf_json_string(b, cfg->labels[l]);
			tcx_buf_putc(b, ':');
			tcx_buf_json_string(b, tcx_labelset_value(s, a->labels, l));
		}
		tcx_buf_putc(b, '}');
		for (unsigned c = 0; c < ctr->n; c++)
			kv_u64(b, ctr->def[c].key, a->c[c]);
		tcx_buf_put(b, "}\n", 2);
	}
	if (s->n_targets && !s->aggs) /* aggregates stand for the filters too */
		render_filters(s, b);
	if (s->n_qdevs) {
		render_qrows(s, 0, b);
		render_qrows(s, 1, b);
	}
	return b->err ? -b->err : 0;
}
