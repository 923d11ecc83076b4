/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <linux/pkt_sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/render/page.h"
#include "agent/render/prom.h" /* tcx_mode_name() */
#include "collectors/names.h"
#include "collectors/plans.h"

/* ' stays: every attribute value of the page is in double quotes. */
void tcx_html_escape(struct tcx_buf *b, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *rep;

		switch (*s) {
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '&':
			rep = "&amp;";
			break;
		case '"':
			rep = "&quot;";
			break;
		default:
			continue;
		}
		tcx_buf_put(b, run, (size_t)(s - run));
		tcx_buf_puts(b, rep);
		run = s + 1;
	}
	tcx_buf_put(b, run, (size_t)(s - run));
}

/* A Unix time as "2026-12-06 16:48:11 UTC". */
static void put_time(struct tcx_buf *b, double t)
{
	time_t secs = (time_t)t;
	struct tm tm;
	char out[40];

	if (!gmtime_r(&secs, &tm) || !strftime(out, sizeof(out), "%Y-%m-%d %H:%M:%S UTC", &tm))
		tcx_buf_printf(b, "%.0f (Unix time)", t);
	else
		tcx_buf_puts(b, out);
}

/* v >= 0 rounded to `digits` decimals, exactly as tcx_buf_fixed() prints
 * (no trailing zeros): "125000", "0.5". The page's figures are printed
 * without printf: a large tree has a dozen per row. */
static void put_dec(struct tcx_buf *b, double v, unsigned digits)
{
	double scale = digits == 0 ? 1 : digits == 1 ? 10 : 100;

	if (!(v >= 0)) /* NaN, negative */
		v = 0;
	if (v * scale >= 1.8e19) {
		tcx_buf_printf(b, "%.0f", v);
		return;
	}
	tcx_buf_fixed(b, (uint64_t)(v * scale + 0.5), digits);
}

/* v with an SI prefix and 3 significant digits, then unit: "12.3 Mbit/s"
 * (as printf's %.3g, trailing zeros dropped). */
static void put_si(struct tcx_buf *b, double v, const char *unit)
{
	static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
	unsigned i = 0;

	while (v >= 999.5 && i + 1 < sizeof(prefix) / sizeof(prefix[0])) {
		v /= 1000;
		i++;
	}
	put_dec(b, v, v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2);
	tcx_buf_putc(b, ' ');
	tcx_buf_puts(b, prefix[i]);
	tcx_buf_puts(b, unit);
}

/* A table cell: the figure for people, its value to a tenth in the title. */
static void cell_rate(struct tcx_buf *b, int present, double v, const char *unit)
{
	if (!present) {
		tcx_buf_puts(b, "<td></td>");
		return;
	}
	tcx_buf_puts(b, "<td title=\"");
	put_dec(b, v, 1);
	tcx_buf_putc(b, ' ');
	tcx_buf_puts(b, unit);
	tcx_buf_puts(b, "\">");
	put_si(b, v, unit);
	tcx_buf_puts(b, "</td>");
}

/* ---- a device's tree ---------------------------------------------------------------- */

#define NONE UINT32_MAX

/* A handle -> node index, open addressing (sizes a power of two). */
struct hmap {
	uint32_t *key, *val;
	size_t mask;
};

/* The per-render working memory, sized for the largest device. */
struct tree {
	size_t cap; /* nodes */
	uint32_t *first, *last, *next, *stack;
	uint8_t *seen;
	struct hmap qd, cl; /* qdiscs and classes by handle */
	size_t hcap;
};

static void tree_free(struct tree *t)
{
	free(t->first);
	free(t->last);
	free(t->next);
	free(t->stack);
	free(t->seen);
	free(t->qd.key);
	free(t->qd.val);
	free(t->cl.key);
	free(t->cl.val);
}

static int tree_alloc(struct tree *t, size_t n)
{
	size_t h = 16;

	while (h < 2 * n)
		h <<= 1;
	memset(t, 0, sizeof(*t));
	t->cap = n;
	t->hcap = h;
	t->first = malloc((n + 1) * sizeof(uint32_t));
	t->last = malloc((n + 1) * sizeof(uint32_t));
	t->next = malloc((n + 1) * sizeof(uint32_t));
	t->stack = malloc((n + 2) * sizeof(uint32_t));
	t->seen = malloc(n + 1);
	t->qd.key = malloc(h * sizeof(uint32_t));
	t->qd.val = malloc(h * sizeof(uint32_t));
	t->cl.key = malloc(h * sizeof(uint32_t));
	t->cl.val = malloc(h * sizeof(uint32_t));
	t->qd.mask = t->cl.mask = h - 1;
	if (!t->first || !t->last || !t->next || !t->stack || !t->seen || !t->qd.key ||
	    !t->qd.val || !t->cl.key || !t->cl.val) {
		tree_free(t);
		return -1;
	}
	return 0;
}

static size_t hslot(const struct hmap *m, uint32_t key)
{
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 32) & m->mask;
}

/* The first node of handle key stays (a handle listed twice is shown twice,
 * under the first). */
static void hput(struct hmap *m, uint32_t key, uint32_t val)
{
	size_t i = hslot(m, key);

	while (m->val[i] != NONE) {
		if (m->key[i] == key)
			return;
		i = (i + 1) & m->mask;
	}
	m->key[i] = key;
	m->val[i] = val;
}

static uint32_t hget(const struct hmap *m, uint32_t key)
{
	size_t i = hslot(m, key);

	while (m->val[i] != NONE) {
		if (m->key[i] == key)
			return m->val[i];
		i = (i + 1) & m->mask;
	}
	return NONE;
}

/* Node i of a device: its qdiscs first (0 .. nq - 1), then its classes. */
struct dev_rows {
	const struct tcx_snapshot *s;
	const struct tcx_qrow *q, *c;
	uint32_t nq, nc;
};

static const struct tcx_qrow *node_row(const struct dev_rows *d, uint32_t i)
{
	return i < d->nq ? &d->q[i] : &d->c[i - d->nq];
}

/* The parent node of node i, or NONE for a root of the tree: a qdisc hangs
 * from the class its parent names (a qdisc whose parent is root, ingress
 * or a class not listed is a root); a class from the class its parent
 * names, else from its own qdisc (HTB's top classes say "root"). */
static uint32_t parent_of(const struct tree *t, const struct dev_rows *d, uint32_t i)
{
	const struct tcx_qrow *r = node_row(d, i);
	uint32_t p;

	if (i < d->nq) {
		if (r->parent == TC_H_ROOT || r->parent == TC_H_INGRESS || r->parent == TC_H_UNSPEC)
			return NONE;
		p = hget(&t->cl, r->parent);
		return p == NONE ? NONE : d->nq + p;
	}
	if (r->parent != TC_H_ROOT && TC_H_MIN(r->parent)) {
		p = hget(&t->cl, r->parent);
		if (p != NONE && d->nq + p != i)
			return d->nq + p;
	}
	if (r->parent != TC_H_ROOT && !TC_H_MIN(r->parent)) {
		p = hget(&t->qd, r->parent);
		if (p != NONE)
			return p;
	}
	return hget(&t->qd, TC_H_MAJ(r->handle));
}

/* The options' value of a role, in the role's unit (bytes per second). */
static int role_of(const struct tcx_snapshot *s, const struct tcx_qrow *r, enum tcx_plan_role role,
                   uint64_t *v)
{
	return r->pt_id && tcx_plans_role(tcx_qrow_pt(r), s->xvals + r->pl, r->pl_present, role, v);
}

static void cell_bits(struct tcx_buf *b, int present, uint64_t bytes_per_s)
{
	double bits = (double)bytes_per_s * 8;

	if (!present) {
		tcx_buf_puts(b, "<td></td>");
		return;
	}
	tcx_buf_puts(b, "<td title=\"");
	if (bytes_per_s <= UINT64_MAX / 8)
		tcx_buf_u64(b, bytes_per_s * 8);
	else
		tcx_buf_printf(b, "%.0f", bits);
	tcx_buf_puts(b, " bit/s\">");
	put_si(b, bits, "bit/s");
	tcx_buf_puts(b, "</td>");
}

static void put_row(struct tcx_buf *b, const struct dev_rows *d, uint32_t i, unsigned depth)
{
	const struct tcx_snapshot *s = d->s;
	const struct tcx_qrow *r = node_row(d, i);
	const char *kind = tcx_kind_name(s, r->kind);
	int is_class = i >= d->nq;
	char handle[16], parent[24];
	uint64_t rate = 0, ceil = 0;
	int has_rate = role_of(s, r, TCX_ROLE_RATE, &rate);
	int has_ceil = role_of(s, r, TCX_ROLE_CEIL, &ceil);
	int has_bl = (r->stats_present & (1u << TCX_QSTAT_BACKLOG_BYTES)) != 0;
	int has_blp = (r->stats_present & (1u << TCX_QSTAT_BACKLOG_PACKETS)) != 0;

	tcx_format_qhandle(r->handle, handle, sizeof(handle));
	tcx_format_qparent(r->parent, kind, parent, sizeof(parent));
	tcx_buf_puts(b, is_class ? "<tr class=\"c\" data-handle=\""
	                         : "<tr class=\"q\" data-handle=\"");
	tcx_buf_puts(b, handle);
	/* indented 0.3em, and 1.2em a level */
	tcx_buf_puts(b, "\"><td style=\"padding-left:");
	tcx_buf_fixed(b, 3 + 12 * (uint64_t)(depth > 40 ? 40 : depth), 1);
	tcx_buf_puts(b, is_class ? "em\">class " : "em\">qdisc ");
	tcx_buf_puts(b, handle);
	tcx_buf_puts(b, "</td><td>");
	tcx_html_escape(b, kind);
	tcx_buf_puts(b, "</td><td>");
	tcx_buf_puts(b, parent);
	tcx_buf_puts(b, "</td>");
	cell_rate(b, r->rates_present & (1u << TCX_QRATE_BYTES), r->rates[TCX_QRATE_BYTES], "B/s");
	cell_rate(b, r->rates_present & (1u << TCX_QRATE_PACKETS), r->rates[TCX_QRATE_PACKETS],
	          "pkt/s");
	cell_rate(b, r->rates_present & (1u << TCX_QRATE_DROPS), r->rates[TCX_QRATE_DROPS],
	          "pkt/s");
	tcx_buf_puts(b, "<td>");
	if (has_bl) {
		tcx_buf_u64(b, r->c[TCX_QSTAT_BACKLOG_BYTES]);
		tcx_buf_puts(b, " B");
	}
	if (has_bl && has_blp)
		tcx_buf_puts(b, ", ");
	if (has_blp) {
		tcx_buf_u64(b, r->c[TCX_QSTAT_BACKLOG_PACKETS]);
		tcx_buf_puts(b, " pkt");
	}
	tcx_buf_puts(b, "</td>");
	cell_bits(b, has_rate, rate);
	cell_bits(b, has_ceil, ceil);
	if (has_ceil && ceil && (r->rates_present & (1u << TCX_QRATE_BYTES))) {
		/* bytes per second of bytes per second: the share of the ceil */
		double pct = 100.0 * r->rates[TCX_QRATE_BYTES] / (double)ceil;

		tcx_buf_puts(b, "<td title=\"");
		put_dec(b, pct, 2);
		tcx_buf_puts(b, " %\"><span class=\"bar\" style=\"width:");
		put_dec(b, 0.6 * (pct > 100 ? 100 : pct), 0);
		tcx_buf_puts(b, "px\"></span> ");
		put_dec(b, pct, 1);
		tcx_buf_puts(b, " %</td>");
	} else {
		tcx_buf_puts(b, "<td></td>");
	}
	tcx_buf_puts(b, "</tr>\n");
}

/* The tree of device qd: every qdisc and class once, in the order of the
 * dump under each parent. */
static void put_device(struct tcx_buf *b, const struct tcx_snapshot *s, const struct tcx_qdev *qd,
                       struct tree *t, const struct tcx_page_info *pi)
{
	struct dev_rows d = {.s = s,
	                     .q = s->qdiscs + qd->first_qdisc,
	                     .c = s->classes + qd->first_class,
	                     .nq = qd->n_qdiscs,
	                     .nc = qd->n_classes};
	uint32_t n = d.nq + d.nc, shown = 0;
	size_t max_rows = pi->max_rows ? pi->max_rows : TCX_PAGE_MAX_ROWS;
	unsigned fold = pi->fold_classes ? pi->fold_classes : TCX_PAGE_FOLD_CLASSES;

	tcx_buf_puts(b,
	             qd->n_classes > fold ? "<details data-dev=\"" : "<details open data-dev=\"");
	tcx_html_escape(b, qd->dev);
	tcx_buf_puts(b, "\" data-netns=\"");
	tcx_html_escape(b, qd->netns);
	tcx_buf_puts(b, "\"><summary><b>");
	tcx_html_escape(b, qd->dev);
	tcx_buf_puts(b, "</b>");
	if (qd->netns[0]) {
		tcx_buf_puts(b, " (netns ");
		tcx_html_escape(b, qd->netns);
		tcx_buf_puts(b, ")");
	}
	tcx_buf_printf(b, ": %u qdisc%s, %u class%s", qd->n_qdiscs, qd->n_qdiscs == 1 ? "" : "s",
	               qd->n_classes, qd->n_classes == 1 ? "" : "es");
	if (qd->n_classes > fold)
		tcx_buf_printf(b, " (folded: more than %u classes)", fold);
	if (!qd->ok) {
		tcx_buf_puts(b, " <span class=\"err\">classes failed: ");
		tcx_html_escape(b, qd->error);
		tcx_buf_puts(b, "</span>");
	}
	tcx_buf_puts(b, "</summary>\n");
	if (!n) {
		tcx_buf_puts(b, "</details>\n");
		return;
	}
	tcx_buf_puts(b, "<table class=\"tree\">\n<tr><th>qdisc / class</th><th>kind</th>"
	                "<th>parent</th><th>bytes/s</th><th>packets/s</th><th>drops/s</th>"
	                "<th>backlog</th><th>rate</th><th>ceil</th><th>use of ceil</th></tr>\n");
	/* the maps, sized for this device: a small device after a large one
	 * clears a few slots, not the large one's */
	t->qd.mask = 15;
	while (t->qd.mask + 1 < 2 * (size_t)n)
		t->qd.mask = 2 * t->qd.mask + 1;
	t->cl.mask = t->qd.mask;
	for (size_t i = 0; i <= t->qd.mask; i++) {
		t->qd.val[i] = NONE;
		t->cl.val[i] = NONE;
	}
	for (uint32_t i = 0; i < d.nq; i++)
		hput(&t->qd, d.q[i].handle, i);
	for (uint32_t i = 0; i < d.nc; i++)
		hput(&t->cl, d.c[i].handle, i);
	/* node n is the virtual root of the device */
	for (uint32_t i = 0; i <= n; i++) {
		t->first[i] = t->last[i] = t->next[i] = NONE;
		t->seen[i] = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = parent_of(t, &d, i);

		if (p == NONE)
			p = n;
		if (t->last[p] == NONE)
			t->first[p] = i;
		else
			t->next[t->last[p]] = i;
		t->last[p] = i;
	}
	/* Depth first from the virtual root, then from each node no walk
	 * reached (a loop of parents, which the kernel does not make), so that
	 * every row is shown once. The stack holds, per level, the next
	 * sibling to show. */
	for (uint32_t start = n; start != NONE;) {
		uint32_t sp = 0;

		if (start != n) {
			t->seen[start] = 1;
			if (shown++ < max_rows)
				put_row(b, &d, start, 0);
		}
		t->stack[sp++] = t->first[start];
		while (sp) {
			uint32_t c = t->stack[sp - 1];

			if (c == NONE) {
				sp--;
				continue;
			}
			t->stack[sp - 1] = t->next[c];
			if (t->seen[c])
				continue;
			t->seen[c] = 1;
			if (shown++ < max_rows)
				put_row(b, &d, c, start == n ? sp - 1 : sp);
			t->stack[sp++] = t->first[c];
		}
		for (start = start == n ? 0 : start + 1; start < n && t->seen[start]; start++)
			;
		if (start >= n)
			start = NONE;
	}
	tcx_buf_puts(b, "</table>\n");
	if (shown > max_rows)
		tcx_buf_printf(b,
		               "<p>%u more rows of this device are not shown: see <a "
		               "href=\"metrics\">/metrics</a>.</p>\n",
		               shown - (uint32_t)max_rows);
	tcx_buf_puts(b, "</details>\n");
}

/* ---- the page ------------------------------------------------------------------------- */

static const char style[] =
        "<style>"
        "body{font-family:sans-serif;margin:1em;color:#222}"
        "table{border-collapse:collapse;margin:.5em 0}"
        "th,td{border:1px solid #bbb;padding:.15em .5em;text-align:left}"
        "th{background:#eee}"
        "table.tree td:nth-child(n+4){text-align:right;white-space:nowrap}"
        "tr.q td:first-child{font-weight:bold}"
        "summary{cursor:pointer;margin:.4em 0}"
        ".bar{display:inline-block;height:.8em;background:#4a8;vertical-align:middle}"
        ".err{color:#b00}"
        "</style>";

static void put_targets(struct tcx_buf *b, const struct tcx_snapshot *s)
{
	tcx_buf_printf(b,
	               "<h2>Targets</h2>\n<p>Last collection: %zu action rows from %zu filters "
	               "in %.3f s.</p>\n"
	               "<table border=\"1\">\n<tr><th>netns</th><th>target</th><th>state"
	               "</th><th>mode</th><th>filters</th><th>actions</th></tr>\n",
	               s->n_actions, s->n_filters, s->duration_s);
	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];
		char what[TCX_TARGET_DESC_MAX];

		tcx_buf_puts(b, "<tr><td>");
		tcx_html_escape(b, t->netns);
		tcx_buf_puts(b, "</td><td>");
		tcx_html_escape(b, tcx_describe_target(t, 0, what, sizeof(what)));
		tcx_buf_puts(b, "</td><td>");
		if (t->ok) {
			tcx_buf_puts(b, "ok");
		} else {
			tcx_buf_puts(b, "<span class=\"err\">failed: ");
			tcx_html_escape(b, t->error);
			tcx_buf_puts(b, "</span>");
		}
		tcx_buf_printf(b, "</td><td>%s</td><td>%u</td><td>%u</td></tr>\n",
		               tcx_mode_name(t->mode), t->n_filters, t->n_actions);
	}
	tcx_buf_puts(b, "</table>\n");
}

static void put_devices(struct tcx_buf *b, const struct tcx_snapshot *s)
{
	tcx_buf_printf(b,
	               "<p>%zu qdiscs and %zu classes of %zu devices.</p>\n<table border=\"1\">\n"
	               "<tr><th>netns</th><th>device</th><th>state</th><th>qdiscs</th>"
	               "<th>classes</th></tr>\n",
	               s->n_qdiscs, s->n_classes, s->n_qdevs);
	for (size_t i = 0; i < s->n_qdevs; i++) {
		const struct tcx_qdev *d = &s->qdevs[i];

		tcx_buf_puts(b, "<tr><td>");
		tcx_html_escape(b, d->netns);
		tcx_buf_puts(b, "</td><td>");
		tcx_html_escape(b, d->dev);
		tcx_buf_puts(b, "</td><td>");
		if (d->ok) {
			tcx_buf_puts(b, "ok");
		} else {
			tcx_buf_puts(b, "classes failed: ");
			tcx_html_escape(b, d->error);
		}
		tcx_buf_printf(b, "</td><td>%u</td><td>%u</td></tr>\n", d->n_qdiscs, d->n_classes);
	}
	tcx_buf_puts(b, "</table>\n");
}

int tcx_page_render(struct tcx_buf *b, const struct tcx_snapshot *s, const struct tcx_page_info *pi)
{
	/* whole seconds, rounded up, from 1 to a day */
	unsigned long refresh = 1;

	if (pi->interval_s > 86400) {
		refresh = 86400;
	} else if (pi->interval_s > 1) {
		refresh = (unsigned long)pi->interval_s;
		if ((double)refresh < pi->interval_s)
			refresh++;
	}

	tcx_buf_printf(b,
	               "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
	               "<meta http-equiv=\"refresh\" content=\"%lu\">"
	               "<title>tcexporter</title>%s</head>\n<body>\n<h1>tcexporter ",
	               refresh, style);
	tcx_html_escape(b, pi->version);
	tcx_buf_puts(b, "</h1>\n<p>Linux TC action, filter, qdisc and class counters: <a "
	                "href=\"metrics\">/metrics</a> (<a href=\"healthz\">/healthz</a>)</p>\n");
	tcx_buf_puts(b, "<p id=\"reload\">Configuration: ");
	if (pi->reload_ok) {
		tcx_buf_puts(b, "loaded at ");
		put_time(b, pi->loaded_ts);
		tcx_buf_puts(b, "; the last load (start or reload) succeeded.");
	} else {
		tcx_buf_puts(b, "<span class=\"err\">the last reload was rejected</span> (the log "
		                "says why): running the configuration loaded at ");
		put_time(b, pi->loaded_ts);
		tcx_buf_putc(b, '.');
	}
	tcx_buf_puts(b, "</p>\n");
	if (!s) {
		tcx_buf_puts(b, "<p id=\"age\">No collection has completed yet.</p>\n"
		                "</body></html>\n");
		return b->err ? -1 : 0;
	}
	{
		double taken = (double)s->taken.tv_sec + (double)s->taken.tv_nsec / 1e9;
		double age = pi->now > taken ? pi->now - taken : 0; /* a wall clock stepped back */

		tcx_buf_puts(b, "<p id=\"age\">Collected at ");
		put_time(b, taken);
		tcx_buf_printf(b, ", %.1f s ago (every %.3g s; this page refreshes itself).", age,
		               pi->interval_s);
		if (s->rates_interval_s > 0)
			tcx_buf_printf(b,
			               " Rates: over the %.2f s between the last two collections.",
			               s->rates_interval_s);
		else
			tcx_buf_puts(b, " Rates: from the next collection on (they need two).");
		tcx_buf_puts(b, "</p>\n");
	}
	if (s->n_qdevs) {
		struct tree t;
		size_t largest = 0;

		tcx_buf_puts(b, "<h2>Qdiscs and classes</h2>\n");
		put_devices(b, s);
		for (size_t i = 0; i < s->n_qdevs; i++) {
			size_t n = (size_t)s->qdevs[i].n_qdiscs + s->qdevs[i].n_classes;

			if (n > largest)
				largest = n;
		}
		if (tree_alloc(&t, largest) < 0) {
			b->err = b->err ? b->err : ENOMEM;
			return -1;
		}
		for (size_t i = 0; i < s->n_qdevs; i++)
			put_device(b, s, &s->qdevs[i], &t, pi);
		tree_free(&t);
	}
	put_targets(b, s);
	tcx_buf_puts(b, "</body></html>\n");
	return b->err ? -1 : 0;
}
