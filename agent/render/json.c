/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON lines: one object per line, each with a "type" first: action rows
 * (or aggregates), filters (or filter aggregates), qdiscs, classes, then
 * the targets and devices with their state, and a last "collection" line
 * (see tcexporter(8), "JSON OUTPUT"). */
#include <stdio.h>
#include <string.h>

#include "agent/render/json.h"
#include "agent/render/prom.h"
#include "collectors/agg.h"
#include "collectors/names.h"
#include "collectors/plans.h"
#include "config/xstats.h"
#include "lib/clock.h"

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

static void kv_bool(struct tcx_buf *b, const char *k, int v)
{
	key(b, k);
	tcx_buf_puts(b, v ? "true" : "false");
}

static void kv_double(struct tcx_buf *b, const char *k, double v)
{
	key(b, k);
	tcx_buf_double(b, v);
}

/* A line's opening: {"type":"<type>" (the keys that follow start with a
 * comma). */
static void open_line(struct tcx_buf *b, const char *type)
{
	tcx_buf_put(b, "{\"type\":", 8);
	tcx_buf_json_string(b, type);
}

/* "labels":{"name":"value",...}: the user labels of label set ls. */
static void user_labels(const struct tcx_snapshot *s, uint32_t ls, struct tcx_buf *b)
{
	key(b, "labels");
	tcx_buf_putc(b, '{');
	for (size_t l = 0; l < s->sets.n_labels; l++) {
		if (l)
			tcx_buf_putc(b, ',');
		tcx_buf_json_string(b, s->cfg->labels[l]);
		tcx_buf_putc(b, ':');
		tcx_buf_json_string(b, tcx_labelset_value(s, ls, l));
	}
	tcx_buf_putc(b, '}');
}

/* "installed":T,"first_used":T,"last_used":T: a row's times (tm_present,
 * tm: tcx_action's), each in seconds of Unix time, or null when unknown. */
static void kv_times(struct tcx_buf *b, unsigned present, const int64_t *tm)
{
	static const struct {
		enum tcx_tm t;
		const char *key;
	} keys[] = {{TCX_TM_INSTALLED, "installed"},
	            {TCX_TM_FIRST_USED, "first_used"},
	            {TCX_TM_LAST_USED, "last_used"}};

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		key(b, keys[k].key);
		if (present & (1u << keys[k].t))
			tcx_buf_fixed(b, tm[keys[k].t] > 0 ? (uint64_t)tm[keys[k].t] : 0, 3);
		else
			tcx_buf_put(b, "null", 4);
	}
}

/* With `aggregate`: one line per aggregate, {"type":"<type>","labels":{its
 * kept labels}, then the counters of table ctr that it has. */
static int render_aggregates(const struct tcx_aggregates *g, const char *type,
                             const struct tcx_counter_table *ctr, struct tcx_buf *b)
{
	for (size_t i = 0; i < g->n; i++) {
		open_line(b, type);
		key(b, "labels");
		tcx_buf_putc(b, '{');
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
		if (g->tm)
			kv_times(b, g->tm_present[i], g->tm[i]);
		tcx_buf_put(b, "}\n", 2);
	}
	return b->err ? -b->err : 0;
}

/* A per-kind statistic's key: its family's name without tc_<object>_<kind>_
 * (and tin_ for a tin's) and _total: "lends", "drop_overlimit". */
static void family_key(struct tcx_buf *b, const char *family, int type, size_t prefix, int tin)
{
	const char *k = family + prefix;
	size_t n = strlen(k);

	if (tin && strncmp(k, "tin_", 4) == 0)
		k += 4, n -= 4;
	if (type == TCX_XSTAT_COUNTER && n > 6 && strcmp(k + n - 6, "_total") == 0)
		n -= 6;
	tcx_buf_putc(b, '"');
	tcx_buf_put(b, k, n);
	tcx_buf_put(b, "\":", 2);
}

static void xstat_key(struct tcx_buf *b, const struct tcx_xstat *f, size_t prefix, int tin)
{
	family_key(b, f->family, f->type, prefix, tin);
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

/* One line per qdisc or class: its labels as the text formats name them,
 * its counters by the table's keys, its per-kind statistics, and a class's
 * user labels. */
static void render_qrows(const struct tcx_snapshot *s, int is_class, struct tcx_buf *b)
{
	const struct tcx_counter_table *ctr = is_class ? &tcx_class_counters : &tcx_qdisc_counters;
	const struct tcx_qrow *rows = is_class ? s->classes : s->qdiscs;
	size_t n = is_class ? s->n_classes : s->n_qdiscs;
	char tmp[32];

	for (size_t i = 0; i < n; i++) {
		const struct tcx_qrow *q = &rows[i];
		const struct tcx_qdev *d = &s->qdevs[q->qdev];
		const char *kind = tcx_kind_name(s, q->kind);
		const struct tcx_xstats_table *t = tcx_qrow_xt(q);
		const uint64_t *x = t ? s->xvals + q->xs : NULL;
		/* tc_qdisc_<kind>_ */
		size_t prefix = 3 + strlen(is_class ? "class" : "qdisc") + 1 + strlen(kind) + 1;

		open_line(b, is_class ? "class" : "qdisc");
		kv_str(b, "netns", d->netns);
		kv_str(b, "device", d->dev);
		kv_str(b, "kind", kind);
		tcx_format_qhandle(q->handle, tmp, sizeof(tmp));
		kv_str(b, "handle", tmp);
		tcx_format_qparent(q->parent, kind, tmp, sizeof(tmp));
		kv_str(b, "parent", tmp);
		for (unsigned c = 0; c < ctr->n; c++)
			if (!ctr->def[c].optional || (q->stats_present & (1u << c)))
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
		if (q->pt_id) {
			const struct tcx_plans_table *pt = tcx_qrow_pt(q);

			key(b, "plans");
			tcx_buf_putc(b, '{');
			for (unsigned f = 0, first = 1; f < pt->n; f++) {
				const struct tcx_plan *pl;
				const char *lv;

				if (!(q->pl_present & (1u << f)))
					continue;
				if (!first)
					tcx_buf_putc(b, ',');
				first = 0;
				pl = &pt->rows[f];
				lv = tcx_plan_label(pl, s->xvals[q->pl + f]);
				if (lv) { /* a mode: "diffserv":"diffserv3" */
					tcx_buf_json_string(b, pl->label);
					tcx_buf_putc(b, ':');
					tcx_buf_json_string(b, lv);
					continue;
				}
				family_key(b, pl->family, pl->type, prefix, 0);
				tcx_plan_put(b, pl, s->xvals[q->pl + f]);
			}
			tcx_buf_putc(b, '}');
		}
		if (is_class) {
			const struct tcx_qrow *c =
			        q->child_qdisc ? &s->qdiscs[q->child_qdisc - 1] : NULL;

			kv_bool(b, "leaf", !q->inner);
			key(b, "leaf_qdisc");
			if (c) {
				tcx_format_qhandle(c->handle, tmp, sizeof(tmp));
				tcx_buf_json_string(b, tmp);
				kv_str(b, "leaf_kind", tcx_kind_name(s, c->kind));
			} else {
				tcx_buf_put(b, "null,\"leaf_kind\":null", 21);
			}
			user_labels(s, q->labels, b);
		}
		tcx_buf_put(b, "}\n", 2);
	}
}

/* A target's identity: ,"netns":"","device":...,"block":...,"parent":... */
static void target_identity(const struct tcx_target *t, struct tcx_buf *b)
{
	kv_str(b, "netns", t->netns);
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
}

/* A filter's line opening, with its identity:
 * {"type":"<type>","netns":"",...,"flags":"..." */
static void filter_identity(const struct tcx_snapshot *s, const struct tcx_filter *f,
                            const char *type, struct tcx_buf *b)
{
	const char *kind = tcx_kind_name(s, f->kind);
	char tmp[64];

	open_line(b, type);
	target_identity(&s->targets[f->target], b);
	kv_u64(b, "chain", f->chain);
	kv_str(b, "protocol", tcx_protocol_name(f->protocol, tmp, sizeof(tmp)));
	kv_u64(b, "pref", f->pref);
	kv_str(b, "kind", kind);
	tcx_format_handle(kind, f->handle, tmp, sizeof(tmp));
	kv_str(b, "handle", tmp);
	tcx_flags_string(f->flags, tmp, sizeof(tmp));
	kv_str(b, "flags", tmp);
}

/* One line per filter shown: its identity and the hit counters its
 * classifier keeps (none: no key), u32's per key in "key_hits":[...]. */
static void render_filters(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	const struct tcx_counter_table *ctr = &tcx_filter_counters;

	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];
		const uint64_t *v;

		if (f->merged)
			continue;
		filter_identity(s, f, "filter", b);
		if (!f->hv_present) { /* hvals may be NULL: no offset into it */
			tcx_buf_put(b, "}\n", 2);
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
		tcx_buf_put(b, "}\n", 2);
	}
}

/* "error":"..." or null */
static void kv_error(struct tcx_buf *b, int ok, const char *error)
{
	key(b, "error");
	if (ok)
		tcx_buf_put(b, "null", 4);
	else
		tcx_buf_json_string(b, error);
}

/* One line per target and per device whose qdiscs and classes were
 * collected, with its state; then the collection's. */
static void render_state(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	size_t failed = 0;

	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];

		open_line(b, "target");
		target_identity(t, b);
		kv_bool(b, "success", t->ok);
		kv_error(b, t->ok, t->error);
		kv_str(b, "mode", tcx_mode_name(t->mode));
		key(b, "dump_requests");
		tcx_buf_put(b, "{\"terse\":", 9);
		tcx_buf_u64(b, t->terse_dumps);
		kv_u64(b, "full", t->full_dumps);
		tcx_buf_putc(b, '}');
		kv_u64(b, "repaired_prefs", t->repaired_prefs);
		kv_u64(b, "filters", t->n_filters);
		kv_u64(b, "actions", t->n_actions);
		kv_double(b, "duration_seconds", t->duration_s);
		tcx_buf_put(b, "}\n", 2);
		failed += !t->ok;
	}
	for (size_t i = 0; i < s->n_qdevs; i++) {
		const struct tcx_qdev *d = &s->qdevs[i];

		open_line(b, "device");
		kv_str(b, "netns", d->netns);
		kv_str(b, "device", d->dev);
		kv_bool(b, "success", d->ok);
		kv_error(b, d->ok, d->error);
		kv_u64(b, "qdiscs", d->n_qdiscs);
		kv_u64(b, "classes", d->n_classes);
		tcx_buf_put(b, "}\n", 2);
		failed += !d->ok;
	}
	open_line(b, "collection");
	kv_double(b, "timestamp", tcx_ts_s(s->taken));
	kv_double(b, "duration_seconds", s->duration_s);
	kv_u64(b, "targets", s->n_targets);
	kv_u64(b, "devices", s->n_qdevs);
	kv_u64(b, "failed", failed);
	kv_bool(b, "complete", !s->incomplete);
	key(b, "errors");
	for (int i = 0; i < TCX_ERR__MAX; i++) {
		tcx_buf_putc(b, i ? ',' : '{');
		tcx_buf_json_string(b, tcx_err_cause_name((enum tcx_err_cause)i));
		tcx_buf_putc(b, ':');
		tcx_buf_u64(b, s->errors[i]);
	}
	tcx_buf_put(b, "}}\n", 3);
}

int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b)
{
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
		filter_identity(s, &s->filters[a->filter], "action", b);
		kv_u64(b, "order", a->order);
		kv_str(b, "action", tcx_kind_name(s, a->kind));
		key(b, "index");
		if (a->index)
			tcx_buf_u64(b, a->index);
		else
			tcx_buf_put(b, "null", 4);
		tcx_cookie_hex(a->cookie, a->cookie_len, hex);
		kv_str(b, "cookie", hex);
		user_labels(s, a->labels, b);
		for (unsigned c = 0; c < ctr->n; c++)
			kv_u64(b, ctr->def[c].key, a->c[c]);
		kv_times(b, a->tm_present, a->tm);
		tcx_buf_put(b, "}\n", 2);
	}
	if (s->n_targets && !s->aggs) /* aggregates stand for the filters too */
		render_filters(s, b);
	render_qrows(s, 0, b);
	render_qrows(s, 1, b);
	render_state(s, b);
	return b->err ? -b->err : 0;
}
