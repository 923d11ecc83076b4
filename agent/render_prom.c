/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus text exposition 0.0.4 and OpenMetrics 1.0.0.
 *
 * Samples of one family must stand together, so each family walks every
 * row. The label set of a row is rebuilt for each family rather than kept:
 * keeping it would cost more memory per row than the row itself. The parts
 * that many rows share (target, filter) are built once and copied. */
#include <stdio.h>
#include <string.h>

#include "agent/render.h"
#include "collectors/tc_parse.h"
#include "config.h"

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

	out[0] = '\0';
	for (unsigned i = 0; i < 4; i++) {
		if (!(flags & (1u << i)))
			continue;
		n += (size_t)snprintf(out + n, n < outlen ? outlen - n : 0, "%s%s", n ? "," : "",
		                      names[i]);
	}
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

static void put_label_u64(struct tcx_buf *b, const char *name, uint64_t v)
{
	tcx_buf_putc(b, ',');
	tcx_buf_puts(b, name);
	tcx_buf_put(b, "=\"", 2);
	tcx_buf_u64(b, v);
	tcx_buf_putc(b, '"');
}

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

/* Everything that identifies a filter, starting with its target's labels. */
static void filter_labels(struct tcx_buf *b, const struct tcx_snapshot *s,
                          const struct tcx_filter *f)
{
	const char *kind = tcx_kind_name(s, f->kind);
	char tmp[32];
	int first = 0;

	target_labels(b, &s->targets[f->target]);
	put_label_u64(b, "chain", f->chain);
	put_label(b, &first, "protocol", tcx_protocol_name(f->protocol, tmp, sizeof(tmp)));
	put_label_u64(b, "pref", f->pref);
	put_label(b, &first, "kind", kind);
	tcx_format_handle(kind, f->handle, tmp, sizeof(tmp));
	put_label(b, &first, "handle", tmp);
}

/* Label sets are built in a scratch buffer and copied per sample. */
struct lbl_cache {
	struct tcx_buf filter; /* labels of the last filter seen */
	uint32_t filter_idx;
	int valid;
	struct tcx_buf row; /* the whole label set of the current row */
};

static void action_labels(struct lbl_cache *lc, const struct tcx_snapshot *s,
                          const struct tcx_action *a)
{
	const struct tcx_config *cfg = s->cfg;
	const char *values[TCX_MAX_LABELS];
	struct tcx_label_buf lb;
	char hex[2 * TCX_COOKIE_MAX + 1];
	int first = 0;

	if (!lc->valid || lc->filter_idx != a->filter) {
		lc->filter.len = 0;
		filter_labels(&lc->filter, s, &s->filters[a->filter]);
		lc->filter_idx = a->filter;
		lc->valid = 1;
	}
	lc->row.len = 0;
	tcx_buf_put(&lc->row, lc->filter.p, lc->filter.len);
	put_label_u64(&lc->row, "order", a->order);
	put_label(&lc->row, &first, "action", tcx_kind_name(s, a->kind));
	tcx_cookie_hex(a->cookie, a->cookie_len, hex);
	put_label(&lc->row, &first, "cookie", hex);
	if (!cfg || !cfg->n_labels)
		return;
	tcx_labels_resolve(cfg, a->cookie, a->cookie_len, values, &lb);
	for (size_t i = 0; i < cfg->n_labels; i++)
		put_label(&lc->row, &first, cfg->labels[i], values[i]);
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

static void render_actions(const struct tcx_snapshot *s, int om, struct tcx_buf *b,
                           struct lbl_cache *lc)
{
	for (unsigned f = F_BYTES; f <= F_HW_PACKETS; f++) {
		const char *name = action_families[f].name;

		family_header(b, name, "counter", action_families[f].help, om);
		lc->valid = 0;
		for (size_t i = 0; i < s->n_actions; i++) {
			const struct tcx_action *a = &s->actions[i];

			if (a->drop)
				continue;
			action_labels(lc, s, a);
			sample(b, name, lc->row.p, lc->row.len, action_value(a, f));
		}
	}
}

static void render_filters(const struct tcx_snapshot *s, int om, struct tcx_buf *b,
                           struct lbl_cache *lc)
{
	char flags[64];

	family_header(b, "tc_filter_flags_info", "info",
	              "Flags of a TC filter (skip_hw, skip_sw, in_hw, not_in_hw), one series per "
	              "filter.",
	              om);
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];
		int first = 0;

		lc->row.len = 0;
		filter_labels(&lc->row, s, f);
		tcx_flags_string(f->flags, flags, sizeof(flags));
		put_label(&lc->row, &first, "flags", flags);
		sample(b, "tc_filter_flags_info", lc->row.p, lc->row.len, 1);
	}
	family_header(b, "tc_filter_in_hw", "gauge",
	              "1 when the filter is offloaded to hardware (in_hw), else 0.", om);
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];

		lc->row.len = 0;
		filter_labels(&lc->row, s, f);
		sample(b, "tc_filter_in_hw", lc->row.p, lc->row.len,
		       (f->flags & TCX_FLAG_IN_HW) ? 1 : 0);
	}
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

static void render_targets(const struct tcx_snapshot *s, int om, struct tcx_buf *b,
                           struct lbl_cache *lc)
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

	for (unsigned k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
		family_header(b, fams[k].name, fams[k].type, fams[k].help, om);
		for (size_t i = 0; i < s->n_targets; i++) {
			const struct tcx_target *t = &s->targets[i];
			int first = 0;

			lc->row.len = 0;
			target_labels(&lc->row, t);
			switch (k) {
			case 0:
				sample(b, fams[k].name, lc->row.p, lc->row.len, t->ok ? 1 : 0);
				break;
			case 1:
				sample_double(b, fams[k].name, lc->row.p, lc->row.len,
				              t->duration_s);
				break;
			case 2:
				sample(b, fams[k].name, lc->row.p, lc->row.len, t->n_filters);
				break;
			case 3:
				sample(b, fams[k].name, lc->row.p, lc->row.len, t->n_actions);
				break;
			case 4: {
				size_t base = lc->row.len;

				put_label(&lc->row, &first, "type", "terse");
				sample(b, fams[k].name, lc->row.p, lc->row.len, t->terse_dumps);
				lc->row.len = base;
				first = 0;
				put_label(&lc->row, &first, "type", "full");
				sample(b, fams[k].name, lc->row.p, lc->row.len, t->full_dumps);
				break;
			}
			default:
				put_label(&lc->row, &first, "mode", tcx_mode_name(t->mode));
				sample(b, fams[k].name, lc->row.p, lc->row.len, 1);
				break;
			}
		}
	}
}

static void render_meta(const struct tcx_snapshot *s, int om, struct tcx_buf *b,
                        struct lbl_cache *lc)
{
	static const char *const causes[TCX_ERR__MAX] = {"malformed", "kernel", "notfound", "io",
	                                                 "nomem"};
	int first;

	family_header(b, "tc_exporter_snapshot_errors", "gauge",
	              "Errors met while taking the snapshot, by cause.", om);
	for (unsigned i = 0; i < TCX_ERR__MAX; i++) {
		lc->row.len = 0;
		first = 1;
		put_label(&lc->row, &first, "cause", causes[i]);
		sample(b, "tc_exporter_snapshot_errors", lc->row.p, lc->row.len, s->errors[i]);
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
	lc->row.len = 0;
	first = 1;
	put_label(&lc->row, &first, "version", TCX_VERSION);
	sample(b, "tc_exporter_build_info", lc->row.p, lc->row.len, 1);
}

int tcx_render_prometheus(const struct tcx_snapshot *s, int om, struct tcx_buf *b)
{
	struct lbl_cache lc;
	int err;

	tcx_buf_init_mem(&lc.filter);
	tcx_buf_init_mem(&lc.row);
	lc.valid = 0;
	render_actions(s, om, b, &lc);
	render_filters(s, om, b, &lc);
	render_targets(s, om, b, &lc);
	render_meta(s, om, b, &lc);
	if (om)
		tcx_buf_put(b, "# EOF\n", 6);
	err = lc.filter.err ? lc.filter.err : lc.row.err;
	tcx_buf_free(&lc.filter);
	tcx_buf_free(&lc.row);
	if (err)
		return -err;
	return b->err ? -b->err : 0;
}
