/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz harness: the configuration loader and the cookie resolver.
 *
 * Input: a configuration file, optionally followed by a NUL byte and cookies
 * to resolve, each a length byte (taken modulo 17) and that many bytes.
 *
 * The loader must report at least one error exactly when it refuses the
 * file, each as "fuzz.yaml:...". A loaded configuration must resolve each of
 * its own cookies to its own values, and each of its fields and uuid
 * decoders must map a cookie made of its prefix; then the configured
 * cookies, the decoders' prefixes and the cookies of the input are resolved
 * and rendered as actions of a snapshot in every format (as UTF-8). Each of
 * its classes must be found again by tcx_config_class_labels(), in its own
 * namespace and, without one, in any namespace that has no entry of its own.
 *
 * Each input is loaded twice, with and without the loader's fast path for
 * the cookies block (config/yamlutil.c): the messages, the cookies and the
 * classes must be the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/render/render.h"
#include "collectors/agg.h"
#include "collectors/snapshot.h"
#include "config/config.h"
#include "config/yamlutil.h" /* tcx_yaml_no_fast_path */
#include "tests/fuzz/fuzz.h"

#define NAME "fuzz.yaml"
/* Rows rendered at most: every cookie is resolved, but rendering a few
 * thousand rows of long label values would only slow each run down. */
#define MAX_ROWS 32

/* The messages of one load, one a line. */
struct errs {
	unsigned n;
	struct tcx_buf text;
};

static void count_err(void *arg, const char *msg)
{
	struct errs *e = arg;

	FUZZ_CHECK(strncmp(msg, NAME ":", strlen(NAME ":")) == 0);
	e->n++;
	tcx_buf_puts(&e->text, msg);
	tcx_buf_putc(&e->text, '\n');
}

static struct tcx_config *load(const char *yaml, size_t len, int fast, struct errs *e)
{
	struct tcx_config *cfg;

	tcx_buf_init_mem(&e->text);
	tcx_yaml_no_fast_path = !fast;
	cfg = tcx_config_load_buffer(NAME, yaml, len, count_err, e);
	tcx_yaml_no_fast_path = 0;
	FUZZ_CHECK(!cfg == (e->n > 0));
	return cfg;
}

/* The fast path changes nothing: the same messages, the same cookies. */
static void check_same(const struct tcx_config *a, const struct errs *ea,
                       const struct tcx_config *b, const struct errs *eb)
{
	FUZZ_CHECK(ea->text.len == eb->text.len &&
	           (!ea->text.len || memcmp(ea->text.p, eb->text.p, ea->text.len) == 0));
	FUZZ_CHECK(!a == !b);
	if (!a)
		return;
	FUZZ_CHECK(a->n_labels == b->n_labels && a->n_cookies == b->n_cookies);
	for (size_t i = 0; i < a->n_cookies; i++) {
		const struct tcx_cookie_entry *x = &a->cookies[i], *y = &b->cookies[i];

		FUZZ_CHECK(x->len == y->len && memcmp(x->bytes, y->bytes, x->len) == 0);
		for (size_t l = 0; l < a->n_labels; l++)
			FUZZ_CHECK(strcmp(x->values[l], y->values[l]) == 0);
	}
	FUZZ_CHECK(a->classes.n == b->classes.n);
	for (size_t i = 0; i < a->classes.n; i++) {
		const struct tcx_class_entry *x = &a->classes.v[i], *y = &b->classes.v[i];

		FUZZ_CHECK(x->classid == y->classid && !strcmp(x->dev, y->dev) &&
		           !strcmp(x->netns, y->netns));
		for (size_t l = 0; l < a->n_labels; l++)
			FUZZ_CHECK(strcmp(x->values[l], y->values[l]) == 0);
	}
}

static void check_values(const struct tcx_config *cfg, const char **values)
{
	for (size_t l = 0; l < cfg->n_labels; l++) {
		FUZZ_CHECK(values[l]);
		FUZZ_CHECK(fuzz_utf8_valid(values[l], strlen(values[l])));
	}
}

/* Resolve a cookie and add it to s as an action of filter 0 (the first
 * MAX_ROWS). */
static enum tcx_map_kind resolve_row(struct tcx_snapshot *s, const uint8_t *cookie, size_t len)
{
	const char *values[TCX_MAX_LABELS];
	struct tcx_label_buf buf;
	enum tcx_map_kind k = tcx_labels_resolve(s->cfg, cookie, len, values, &buf);
	struct tcx_action *a;

	FUZZ_CHECK(len ? k != TCX_MAP_NONE && k <= TCX_MAP_UNMAPPED : k == TCX_MAP_NONE);
	check_values(s->cfg, values);
	if (s->n_actions == MAX_ROWS)
		return k;
	a = tcx_snapshot_add_action(s);
	FUZZ_CHECK(a);
	a->order = (uint16_t)s->n_actions;
	a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
	a->cookie_len = (uint8_t)len;
	memcpy(a->cookie, cookie, len);
	s->filters[0].n_actions++;
	return k;
}

/* Every class is found where it applies. */
static void check_classes(const struct tcx_config *cfg)
{
	for (size_t i = 0; i < cfg->classes.n; i++) {
		const struct tcx_class_entry *e = &cfg->classes.v[i], *o;

		FUZZ_CHECK(e->classid >> 16 && e->classid & 0xffff);
		FUZZ_CHECK(e->dev[0] && strlen(e->dev) < sizeof(e->dev) && !strchr(e->dev, '/'));
		FUZZ_CHECK(!strchr(e->netns, '/'));
		check_values(cfg, e->values);
		FUZZ_CHECK(tcx_config_class_labels(cfg, e->netns, e->dev, e->classid) == e);
		if (e->netns[0])
			continue;
		FUZZ_CHECK(tcx_config_class_labels(cfg, NULL, e->dev, e->classid) == e);
		o = tcx_config_class_labels(cfg, "x", e->dev, e->classid);
		FUZZ_CHECK(o == e || (o && !strcmp(o->netns, "x") && o->classid == e->classid &&
		                      !strcmp(o->dev, e->dev)));
	}
}

static void exercise(struct tcx_config *cfg, const uint8_t *cookies, size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct tcx_target *t;
	struct tcx_filter *f;
	struct tcx_agg *agg;
	struct tcx_buf b;

	FUZZ_CHECK(s && (t = tcx_snapshot_add_target(s)) && (f = tcx_snapshot_add_filter(s)));
	snprintf(t->dev, sizeof(t->dev), "eth0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	t->n_filters = 1;
	f->kind = (uint8_t)tcx_snapshot_kind(s, "flower");
	f->handle = 1;

	for (size_t i = 0; i < cfg->n_cookies; i++) {
		const struct tcx_cookie_entry *e = &cfg->cookies[i];
		const char *values[TCX_MAX_LABELS];
		struct tcx_label_buf buf;

		FUZZ_CHECK(e->len >= 1 && e->len <= TCX_COOKIE_MAX);
		FUZZ_CHECK(tcx_labels_resolve(cfg, e->bytes, e->len, values, &buf) ==
		           TCX_MAP_EXACT);
		for (size_t l = 0; l < cfg->n_labels; l++)
			FUZZ_CHECK(values[l] == e->values[l]);
		resolve_row(s, e->bytes, e->len);
	}
	/* Each decoder's prefix, padded to its length: a fields or uuid decoder
	 * the loader accepted must map it (unless a cookie or decoder before it
	 * does). */
	for (size_t i = 0; i < cfg->n_decoders; i++) {
		const struct tcx_decoder *d = &cfg->decoders[i];
		size_t len = d->length ? d->length : d->type == TCX_DEC_UUID ? 16 : TCX_COOKIE_MAX;
		uint8_t cookie[TCX_COOKIE_MAX];

		FUZZ_CHECK(d->prefix_len <= TCX_COOKIE_MAX && len <= TCX_COOKIE_MAX);
		if (d->prefix_len > len)
			continue;
		memset(cookie, 'a', sizeof(cookie));
		memcpy(cookie, d->prefix, d->prefix_len);
		if (resolve_row(s, cookie, len) == TCX_MAP_UNMAPPED)
			FUZZ_CHECK(d->type == TCX_DEC_ASCII);
	}
	while (n) {
		size_t len = cookies[0] % (TCX_COOKIE_MAX + 1);

		if (n - 1 < len)
			break;
		resolve_row(s, cookies + 1, len);
		cookies += 1 + len;
		n -= 1 + len;
	}
	t->n_actions = (uint32_t)s->n_actions;
	tcx_snapshot_classify(s);
	/* each row's label set holds what its cookie resolves to */
	for (size_t i = 0; i < s->n_actions; i++) {
		const struct tcx_action *a = &s->actions[i];
		const char *values[TCX_MAX_LABELS];
		struct tcx_label_buf buf;

		FUZZ_CHECK(tcx_labelset_map(s, a->labels) ==
		           tcx_labels_resolve(cfg, a->cookie, a->cookie_len, values, &buf));
		for (size_t l = 0; l < cfg->n_labels; l++)
			FUZZ_CHECK(!strcmp(tcx_labelset_value(s, a->labels, l), values[l]));
	}
	/* With `aggregate`, the aggregates (a second pass finds every row), and
	 * they are rendered too. */
	agg = tcx_agg_new();
	FUZZ_CHECK(agg && tcx_agg_update(agg, s) == 0 && tcx_agg_update(agg, s) == 0);
	FUZZ_CHECK(!s->aggs == (cfg->aggregate.mode == TCX_AGG_NONE));
	for (int fmt = TCX_FMT_PROMETHEUS; fmt <= TCX_FMT_JSON; fmt++) {
		fuzz_render(s, fmt, NULL, &b);
		tcx_buf_free(&b);
	}
	tcx_agg_free(agg);
	tcx_snapshot_unref(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t len = nul ? (size_t)(nul - data) : size;
	struct errs e = {0}, slow_e = {0};
	struct tcx_config *cfg, *slow;
	char *yaml = malloc(len ? len : 1);

	FUZZ_CHECK(yaml);
	memcpy(yaml, data, len);
	cfg = load(yaml, len, 1, &e);
	slow = load(yaml, len, 0, &slow_e);
	free(yaml);
	check_same(cfg, &e, slow, &slow_e);
	tcx_buf_free(&e.text);
	tcx_buf_free(&slow_e.text);
	if (slow)
		tcx_config_unref(slow);
	if (!cfg)
		return 0;
	FUZZ_CHECK(cfg->n_labels <= TCX_MAX_LABELS && cfg->n_targets > 0);
	check_classes(cfg);
	exercise(cfg, nul ? nul + 1 : NULL, nul ? size - len - 1 : 0);
	tcx_config_unref(cfg);
	return 0;
}
