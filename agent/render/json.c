/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON lines: one object per action row (see tcexporter(8), "JSON OUTPUT"). */
#include <stdio.h>

#include "agent/render/json.h"
#include "collectors/agg.h"
#include "collectors/names.h"

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

/* With `aggregate`: one object per aggregate, its kept labels and counters. */
static int render_aggregates(const struct tcx_aggregates *g, struct tcx_buf *b)
{
	const struct tcx_counter_table *ctr = &tcx_action_counters;

	for (size_t i = 0; i < g->n; i++) {
		tcx_buf_put(b, "{\"aggregate\":{", 14);
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
			kv_u64(b, ctr->def[c].key, g->c[i].v[c]);
		tcx_buf_put(b, "}\n", 2);
	}
	return b->err ? -b->err : 0;
}

int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b)
{
	const struct tcx_config *cfg = s->cfg;
	const struct tcx_counter_table *ctr = &tcx_action_counters;
	char tmp[64], hex[2 * TCX_COOKIE_MAX + 1];

	if (s->aggs)
		return render_aggregates(s->aggs, b);
	for (size_t i = 0; i < s->n_actions; i++) {
		const struct tcx_action *a = &s->actions[i];
		const struct tcx_filter *f = &s->filters[a->filter];
		const struct tcx_target *t = &s->targets[f->target];
		const char *kind = tcx_kind_name(s, f->kind);

		if (!tcx_action_shown(a))
			continue;
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
	return b->err ? -b->err : 0;
}
