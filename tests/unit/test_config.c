/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the YAML configuration loader (config/config.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h"
#include "config/yamlutil.h" /* tcx_yaml_no_fast_path */
#include "lib/clock.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Every message, each followed by "\n". */
struct errs {
	char *text;
	size_t len;
	unsigned n;
};

static void collect(void *arg, const char *msg)
{
	struct errs *e = arg;
	size_t m = strlen(msg);

	e->text = realloc(e->text, e->len + m + 2);
	assert_non_null(e->text);
	memcpy(e->text + e->len, msg, m);
	e->len += m;
	e->text[e->len++] = '\n';
	e->text[e->len] = '\0';
	e->n++;
}

static struct tcx_config *load(const char *yaml, struct errs *e)
{
	return tcx_config_load_buffer("t.yaml", yaml, strlen(yaml), collect, e);
}

/* yaml must fail to load, reporting exactly `expected` (messages joined by \n). */
static void expect_errors(const char *yaml, const char *expected)
{
	struct errs e = {0};
	struct tcx_config *cfg = load(yaml, &e);

	if (cfg)
		tcx_config_unref(cfg);
	assert_null(cfg);
	assert_non_null(e.text);
	assert_string_equal(e.text, expected);
	free(e.text);
}

/* yaml must load without any message. */
static struct tcx_config *load_ok(const char *yaml)
{
	struct errs e = {0};
	struct tcx_config *cfg = load(yaml, &e);

	if (e.text)
		fprintf(stderr, "unexpected errors:\n%s", e.text);
	assert_null(e.text);
	assert_non_null(cfg);
	return cfg;
}

static const char *srcdir(void)
{
	const char *s = getenv("TCX_SRCDIR");

	return s && *s ? s : ".";
}

/* ---- good configurations ------------------------------------------------------ */

static void test_example_file(void **state)
{
	char path[4096];
	struct errs e = {0};
	struct tcx_config *cfg;
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;
	const uint8_t c1[] = {0x00, 0x11, 0xaa};

	snprintf(path, sizeof(path), "%s/config/tcexporter.yaml", srcdir());
	cfg = tcx_config_load_file(path, collect, &e);
	if (e.text)
		fprintf(stderr, "%s", e.text);
	assert_null(e.text);
	assert_non_null(cfg);
	assert_string_equal(cfg->path, path);
	assert_true(cfg->interval_s == 15.0);

	assert_int_equal(cfg->n_targets, 5);
	assert_int_equal(cfg->targets[0].all, 1);
	assert_null(cfg->targets[0].dev);
	assert_string_equal(cfg->targets[1].dev, "eth0");
	assert_int_equal(cfg->targets[1].has_parent, 1);
	assert_int_equal(cfg->targets[1].parent, TCX_PARENT_INGRESS);
	assert_string_equal(cfg->targets[1].parent_str, "ingress");
	assert_int_equal(cfg->targets[2].parent, 0x00010000u);
	assert_string_equal(cfg->targets[2].parent_str, "1:");
	assert_int_equal(cfg->targets[3].has_block, 1);
	assert_int_equal(cfg->targets[3].block, 22);
	assert_string_equal(cfg->targets[4].dev, "veth0");
	assert_string_equal(cfg->targets[4].netns, "blue");
	assert_true(cfg->targets[0].line > 0);
	assert_true(cfg->targets[1].line > cfg->targets[0].line);

	assert_int_equal(cfg->n_labels, 2);
	assert_string_equal(cfg->labels[0], "tenant");
	assert_string_equal(cfg->labels[1], "rule");
	assert_int_equal(cfg->unmapped, TCX_UNMAPPED_EXPORT);
	assert_int_equal(cfg->n_cookies, 3);
	assert_int_equal(cfg->n_decoders, 3);
	assert_int_equal(cfg->decoders[0].type, TCX_DEC_ASCII);
	assert_int_equal(cfg->decoders[0].length, 8);
	assert_int_equal(cfg->decoders[0].prefix_len, 1);
	assert_int_equal(cfg->decoders[0].prefix[0], 0x52);
	assert_int_equal(cfg->decoders[1].type, TCX_DEC_FIELDS);
	assert_int_equal(cfg->decoders[1].n_fields, 4);
	assert_int_equal(cfg->decoders[2].type, TCX_DEC_UUID);
	assert_int_equal(cfg->decoders[2].layout, TCX_UUID_OVS);

	assert_int_equal(tcx_labels_resolve(cfg, c1, sizeof(c1), v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "acme");
	assert_string_equal(v[1], "web");
	assert_int_equal(cfg->classes.n, 3);
	assert_string_equal(tcx_config_class_labels(cfg, NULL, "eth0", 0x10010)->values[1], "gold");
	assert_string_equal(tcx_config_class_labels(cfg, "blue", "veth0", 0x10010)->values[0],
	                    "initech");
	assert_null(tcx_config_class_labels(cfg, NULL, "veth0", 0x10010));
	tcx_config_unref(cfg);
}

static void test_default(void **state)
{
	struct tcx_config *cfg = tcx_config_default();

	assert_string_equal(cfg->path, "<default>");
	assert_true(cfg->interval_s == 15.0);
	assert_int_equal(cfg->n_targets, 1);
	assert_int_equal(cfg->targets[0].all, 1);
	assert_null(cfg->targets[0].dev);
	assert_null(cfg->targets[0].netns);
	assert_int_equal(cfg->targets[0].has_parent, 0);
	assert_int_equal(cfg->targets[0].has_block, 0);
	assert_int_equal(cfg->n_labels, 0);
	assert_int_equal(cfg->n_cookies, 0);
	assert_int_equal(cfg->n_decoders, 0);
	assert_int_equal(cfg->unmapped, TCX_UNMAPPED_EXPORT);
	assert_non_null(strstr(tcx_default_config_yaml, "all: true"));
	tcx_config_unref(cfg);
}

/* Keys absent: 15 s, one `all` target, no labels. */
static void test_minimal_defaults(void **state)
{
	struct tcx_config *cfg = load_ok("unmapped: drop\n");

	assert_true(cfg->interval_s == 15.0);
	assert_int_equal(cfg->n_targets, 1);
	assert_int_equal(cfg->targets[0].all, 1);
	assert_int_equal(cfg->targets[0].line, 0);
	assert_int_equal(cfg->unmapped, TCX_UNMAPPED_DROP);
	assert_int_equal(cfg->n_labels, 0);
	assert_int_equal(cfg->n_cookies, 0);
	assert_int_equal(cfg->n_slots, 0);
	tcx_config_unref(cfg);
}

/* sweep_interval: 5 min unless set; 0 sweeps every collection; each
 * configuration loaded has a generation of its own. */
static void test_sweep_interval(void **state)
{
	struct tcx_config *cfg = load_ok("interval: 1\n"), *again;

	(void)state;
	assert_float_equal(cfg->sweep_interval_s, 300, 1e-12);
	again = load_ok("sweep_interval: 0\n");
	assert_float_equal(again->sweep_interval_s, 0, 1e-12);
	assert_true(again->generation > cfg->generation);
	tcx_config_unref(again);
	tcx_config_unref(cfg);
	cfg = load_ok("sweep_interval: 1h\n");
	assert_float_equal(cfg->sweep_interval_s, 3600, 1e-12);
	tcx_config_unref(cfg);
	expect_errors("sweep_interval: 5x\n",
	              "t.yaml:1:17: invalid sweep_interval '5x': must be 0 (every collection) or a "
	              "duration between 1ms and 24h such as 5m, 1h\n");
}

/* liveness_interval: 60 s unless set; 0 turns the liveness passes off; a
 * duration as `interval`'s; anything else is an error that says so. */
static void test_liveness_interval(void **state)
{
	struct tcx_config *cfg = load_ok("interval: 15\n");

	assert_float_equal(cfg->liveness_interval_s, 60, 1e-12);
	tcx_config_unref(cfg);
	cfg = load_ok("liveness_interval: 0\n");
	assert_float_equal(cfg->liveness_interval_s, 0, 1e-12);
	tcx_config_unref(cfg);
	cfg = load_ok("liveness_interval: 5m\n");
	assert_float_equal(cfg->liveness_interval_s, 300, 1e-12);
	tcx_config_unref(cfg);
	expect_errors("liveness_interval: -1\n",
	              "t.yaml:1:20: invalid liveness_interval '-1': must be 0 (off) or a duration "
	              "between 1ms and 24h such as 60s, 5m\n");
	expect_errors("liveness_interval: [1]\n",
	              "t.yaml:1:20: 'liveness_interval' must be a scalar, got a sequence\n");
}

static void test_intervals(void **state)
{
	static const struct {
		const char *text;
		double s;
	} good[] = {
	        {"15", 15},    {"0.5", 0.5},     {"500ms", 0.5},  {"15s", 15},
	        {"2m", 120},   {"1h", 3600},     {"24h", 86400},  {"1ms", 0.001},
	        {"1.5s", 1.5}, {"86400", 86400}, {"\"30s\"", 30}, {"0.001", 0.001},
	};
	static const char *const bad[] = {"0",  "0s",   "86401", "25h", "0.5ms", "-1",  "1.",
	                                  ".5", "15 s", "15x",   "1e3", "s",     "\"\""};
	char yaml[128], expected[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct tcx_config *cfg;

		snprintf(yaml, sizeof(yaml), "interval: %s\n", good[i].text);
		cfg = load_ok(yaml);
		assert_float_equal(cfg->interval_s, good[i].s, 1e-12);
		tcx_config_unref(cfg);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *text = bad[i];
		char unq[16];

		snprintf(yaml, sizeof(yaml), "interval: %s\n", text);
		if (text[0] == '"') { /* the message shows the value, not the quotes */
			snprintf(unq, sizeof(unq), "%.*s", (int)strlen(text) - 2, text + 1);
			text = unq;
		}
		snprintf(expected, sizeof(expected),
		         "t.yaml:1:11: invalid interval '%s': must be a duration between 1ms and "
		         "24h such as 15s, 500ms, 2m\n",
		         text);
		expect_errors(yaml, expected);
	}
}

static void test_targets(void **state)
{
	struct tcx_config *cfg = load_ok("targets:\n"
	                                 "  - all: yes\n"
	                                 "    netns: blue\n"
	                                 "  - all: TRUE\n"
	                                 "  - dev: eth0\n"
	                                 "    parent: EGRESS\n"
	                                 "  - dev: eth1\n"
	                                 "    parent: root\n"
	                                 "  - dev: eth2\n"
	                                 "    parent: 1:a\n"
	                                 "  - dev: eth3\n"
	                                 "    parent: \"ffff:\"\n"
	                                 "  - dev: eth4\n"
	                                 "    parent: \"FFFF:fff1\"\n"
	                                 "  - block: 4294967294\n"
	                                 "  - dev: abcdefghijklmno\n"
	                                 "  - dev: eth0\n");

	assert_int_equal(cfg->n_targets, 10);
	assert_int_equal(cfg->targets[0].all, 1);
	assert_string_equal(cfg->targets[0].netns, "blue");
	assert_int_equal(cfg->targets[0].line, 2);
	assert_int_equal(cfg->targets[1].all, 1);
	assert_null(cfg->targets[1].netns);
	assert_int_equal(cfg->targets[1].line, 4);
	assert_int_equal(cfg->targets[2].parent, TCX_PARENT_EGRESS);
	assert_string_equal(cfg->targets[2].parent_str, "egress");
	assert_int_equal(cfg->targets[3].has_parent, 1);
	assert_int_equal(cfg->targets[3].parent, 0);
	assert_string_equal(cfg->targets[3].parent_str, "root");
	assert_int_equal(cfg->targets[4].parent, 0x0001000au);
	assert_string_equal(cfg->targets[4].parent_str, "1:a");
	assert_int_equal(cfg->targets[5].parent, 0xFFFF0000u);
	assert_int_equal(cfg->targets[6].parent, 0xFFFFFFF1u);
	assert_string_equal(cfg->targets[6].parent_str, "FFFF:fff1");
	assert_int_equal(cfg->targets[7].has_block, 1);
	assert_int_equal(cfg->targets[7].block, 4294967294u);
	assert_null(cfg->targets[7].dev);
	assert_string_equal(cfg->targets[8].dev, "abcdefghijklmno");
	assert_int_equal(cfg->targets[9].has_parent, 0);
	assert_null(cfg->targets[9].parent_str);
	assert_int_equal(cfg->targets[9].line, 17);
	tcx_config_unref(cfg);
}

static void test_cookie_forms(void **state)
{
	struct tcx_config *cfg = load_ok("labels: [tenant, rule]\n"
	                                 "cookies:\n"
	                                 "  \"0011aa\": {rule: web, tenant: acme}\n"
	                                 "  \"0x22\": [acme, db]\n"
	                                 "  0XAbCd: [\"\", \"x y\"]\n"
	                                 "  \"33\": {tenant: , rule: null}\n");
	const uint8_t c1[] = {0x00, 0x11, 0xaa}, c2[] = {0x22}, c3[] = {0xab, 0xcd}, c4[] = {0x33};
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	assert_int_equal(cfg->n_cookies, 4);
	assert_int_equal(cfg->n_slots, 8);
	assert_int_equal(tcx_labels_resolve(cfg, c1, sizeof(c1), v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "acme");
	assert_string_equal(v[1], "web");
	assert_int_equal(tcx_labels_resolve(cfg, c2, sizeof(c2), v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "acme");
	assert_string_equal(v[1], "db");
	assert_int_equal(tcx_labels_resolve(cfg, c3, sizeof(c3), v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "x y");
	/* a YAML null is an empty value, the word "null" in plain style is text */
	assert_int_equal(tcx_labels_resolve(cfg, c4, sizeof(c4), v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "null");
	tcx_config_unref(cfg);
}

/* cookies and decoders before labels: same result as labels first. */
static void test_label_order_independent(void **state)
{
	static const char *const yaml[] = {
	        "labels: [tenant, rule]\n"
	        "cookies: {\"0a\": {rule: r, tenant: t}}\n"
	        "decoders: [{type: ascii, label: rule}]\n",
	        "cookies: {\"0a\": {rule: r, tenant: t}}\n"
	        "decoders: [{type: ascii, label: rule}]\n"
	        "labels: [tenant, rule]\n",
	};
	const uint8_t c[] = {0x0a}, txt[] = {'w', 'e', 'b'};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct tcx_config *cfg = load_ok(yaml[i]);
		const char *v[TCX_MAX_LABELS];
		struct tcx_label_buf buf;

		assert_int_equal(cfg->n_labels, 2);
		assert_int_equal(cfg->decoders[0].label, 1);
		assert_int_equal(tcx_labels_resolve(cfg, c, 1, v, &buf), TCX_MAP_EXACT);
		assert_string_equal(v[0], "t");
		assert_string_equal(v[1], "r");
		assert_int_equal(tcx_labels_resolve(cfg, txt, 3, v, &buf), TCX_MAP_DECODED);
		assert_string_equal(v[0], "");
		assert_string_equal(v[1], "web");
		tcx_config_unref(cfg);
	}
}

static void test_decoders_parsed(void **state)
{
	struct tcx_config *cfg = load_ok("labels: [a, b]\n"
	                                 "decoders:\n"
	                                 "  - type: uuid\n"
	                                 "    label: b\n"
	                                 "    layout: rfc4122\n"
	                                 "  - {type: uuid, label: a}\n"
	                                 "  - type: fields\n"
	                                 "    length: 16\n"
	                                 "    prefix: \"0xAB01\"\n"
	                                 "    fields:\n"
	                                 "      - {label: b, bytes: 8}\n"
	                                 "      - {bytes: 7}\n"
	                                 "      - {bytes: 1, label: a}\n");

	assert_int_equal(cfg->n_decoders, 3);
	assert_int_equal(cfg->decoders[0].type, TCX_DEC_UUID);
	assert_int_equal(cfg->decoders[0].layout, TCX_UUID_RFC4122);
	assert_int_equal(cfg->decoders[0].label, 1);
	assert_int_equal(cfg->decoders[0].line, 3);
	assert_int_equal(cfg->decoders[1].layout, TCX_UUID_OVS);
	assert_int_equal(cfg->decoders[1].label, 0);
	assert_int_equal(cfg->decoders[2].type, TCX_DEC_FIELDS);
	assert_int_equal(cfg->decoders[2].length, 16);
	assert_int_equal(cfg->decoders[2].prefix_len, 2);
	assert_int_equal(cfg->decoders[2].prefix[0], 0xab);
	assert_int_equal(cfg->decoders[2].prefix[1], 0x01);
	assert_int_equal(cfg->decoders[2].n_fields, 3);
	assert_int_equal(cfg->decoders[2].fields[0].label, 1);
	assert_int_equal(cfg->decoders[2].fields[0].width, 8);
	assert_int_equal(cfg->decoders[2].fields[1].label, -1);
	assert_int_equal(cfg->decoders[2].fields[1].width, 7);
	assert_int_equal(cfg->decoders[2].fields[2].label, 0);
	assert_int_equal(cfg->decoders[2].fields[2].width, 1);
	tcx_config_unref(cfg);
}

static void test_refcount(void **state)
{
	struct tcx_config *cfg = load_ok("labels: [a]\ncookies: {\"01\": [x]}\n");

	assert_int_equal(atomic_load(&cfg->refcnt), 1);
	assert_ptr_equal(tcx_config_ref(cfg), cfg);
	assert_ptr_equal(tcx_config_ref(cfg), cfg);
	assert_int_equal(atomic_load(&cfg->refcnt), 3);
	tcx_config_unref(cfg);
	tcx_config_unref(cfg);
	assert_int_equal(atomic_load(&cfg->refcnt), 1);
	assert_string_equal(cfg->cookies[0].values[0], "x"); /* still alive */
	tcx_config_unref(cfg); /* freed here: valgrind/ASan report a leak otherwise */
	tcx_config_unref(NULL);
	assert_null(tcx_config_ref(NULL));
}

/* 100k generated cookies through the loader, every one found again. */
static void test_many_cookies(void **state)
{
	enum { N = 100000 };
	size_t cap = (size_t)N * 40 + 64, len = 0, i;
	char *yaml = malloc(cap);
	struct errs e = {0};
	struct tcx_config *cfg;
	struct tcx_label_buf buf;
	const char *v[TCX_MAX_LABELS];
	assert_non_null(yaml);
	len += (size_t)snprintf(yaml + len, cap - len, "labels: [id]\ncookies:\n");
	for (i = 0; i < N; i++) /* 4-byte cookies i*7919, values "v<i>" */
		len += (size_t)snprintf(yaml + len, cap - len, "  \"%08zx\": [v%zu]\n", i * 7919,
		                        i);
	cfg = tcx_config_load_buffer("big.yaml", yaml, len, collect, &e);
	assert_null(e.text);
	assert_non_null(cfg);
	assert_int_equal(cfg->n_cookies, N);
	assert_true(cfg->n_slots >= 2 * (size_t)N);
	assert_int_equal(cfg->n_slots & (cfg->n_slots - 1), 0);
	for (i = 0; i < N; i++) {
		uint32_t x = (uint32_t)(i * 7919);
		uint8_t c[4] = {(uint8_t)(x >> 24), (uint8_t)(x >> 16), (uint8_t)(x >> 8),
		                (uint8_t)x};
		char want[16];

		snprintf(want, sizeof(want), "v%zu", i);
		assert_int_equal(tcx_labels_resolve(cfg, c, 4, v, &buf), TCX_MAP_EXACT);
		assert_string_equal(v[0], want);
	}
	/* misses: same bytes, other lengths; values never generated */
	{
		const uint8_t c3[] = {0, 0, 0}, c5[] = {0, 0, 0, 0, 0}, c4[] = {0, 0, 0, 1};

		assert_int_equal(tcx_labels_resolve(cfg, c3, 3, v, &buf), TCX_MAP_UNMAPPED);
		assert_int_equal(tcx_labels_resolve(cfg, c5, 5, v, &buf), TCX_MAP_UNMAPPED);
		assert_int_equal(tcx_labels_resolve(cfg, c4, 4, v, &buf), TCX_MAP_UNMAPPED);
		assert_string_equal(v[0], "");
	}
	tcx_config_unref(cfg);
	free(yaml);
}

/* ---- the fast path of the cookies block (config/yamlutil.c) -------------------- */

/* Everything a load gives: the messages, then the config. */
static char *describe(const char *yaml, size_t len, int fast, int *taken)
{
	unsigned long before = tcx_yaml_fast_blocks;
	struct errs e = {0};
	struct tcx_config *cfg;
	char *out = NULL, hex[2 * TCX_COOKIE_MAX + 1];
	size_t n = 0, i, j;
	FILE *f = open_memstream(&out, &n);

	assert_non_null(f);
	tcx_yaml_no_fast_path = !fast;
	cfg = tcx_config_load_buffer("t.yaml", yaml, len, collect, &e);
	tcx_yaml_no_fast_path = 0;
	*taken = tcx_yaml_fast_blocks != before;
	fprintf(f, "%s--\n", e.text ? e.text : "");
	if (cfg) {
		fprintf(f, "interval %g targets %zu decoders %zu unmapped %d labels",
		        cfg->interval_s, cfg->n_targets, cfg->n_decoders, (int)cfg->unmapped);
		for (i = 0; i < cfg->n_labels; i++)
			fprintf(f, " %s", cfg->labels[i]);
		fprintf(f, "\n");
		for (i = 0; i < cfg->n_cookies; i++) {
			tcx_cookie_hex(cfg->cookies[i].bytes, cfg->cookies[i].len, hex);
			fprintf(f, "%s:", hex);
			for (j = 0; j < cfg->n_labels; j++)
				fprintf(f, " '%s'", cfg->cookies[i].values[j]);
			fprintf(f, "\n");
		}
		for (i = 0; i < cfg->classes.n; i++) {
			char key[TCX_CLASS_KEY_MAX];

			tcx_class_key_format(&cfg->classes.v[i], key);
			fprintf(f, "%s:", key);
			for (j = 0; j < cfg->n_labels; j++)
				fprintf(f, " '%s'", cfg->classes.v[i].values[j]);
			fprintf(f, "\n");
		}
		tcx_config_unref(cfg);
	}
	fclose(f);
	free(e.text);
	return out;
}

/* Load yaml with and without the fast path: the same result. Whether the fast
 * path was taken. */
static int same_both_ways(const char *yaml, size_t len)
{
	int fast, slow;
	char *a = describe(yaml, len, 1, &fast), *b = describe(yaml, len, 0, &slow);

	if (strcmp(a, b))
		fprintf(stderr, "input:\n%.*s\n---- fast path:\n%s---- libyaml:\n%s", (int)len,
		        yaml, a, b);
	assert_string_equal(a, b);
	assert_false(slow);
	free(a);
	free(b);
	return fast;
}

static void test_fast_path_same(void **state)
{
	static const struct {
		int fast; /* the fast path is taken */
		const char *yaml;
	} cases[] = {
	        /* taken: valid, and every error a cookie can have */
	        {1, "labels: [a, b]\ncookies:\n  \"0a\": [x, y]\n  0b: {a: x, b: \"y z\"}\n"},
	        {1, "labels: [a, b]\ncookies: # the map\n\n  # first\n  \"0a\": [x, y]\n\n"
	            "# between\n    # more\n  0b: {b: y, a: x}\n  # last\n"},
	        {1, "labels: [a]\ncookies:\n \"zz\": [x]\n \"abc\": [x]\n \"\": [x]\n 0x: [x]\n"
	            " \"0x0A\": [x]\n 0a: [x]\n \"0102030405060708091011121314151617\": [x]\n"},
	        {1, "labels: [a, b]\ncookies:\n  01: [x]\n  02: [x, y, z]\n  03: []\n  04: {}\n"
	            "  05: {a: x}\n  06: {a: x, c: y}\n  07: {a: x, a: y, b: z}\n"
	            "  08: {b: \"\", a: \"\"}\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\n  02: [y]\n  01: [z]\n  0x02: [w]\n"},
	        {1, "cookies:\n  01: [x]\n  02: {a: y}\nlabels: [a]\n"},
	        {1, "cookies:\n  01: [x]\n"},
	        {1, "labels: [1bad]\ncookies:\n  01: [x]\n  zz: [y]\n"},
	        {1, "labels: [a]\ncookies:\n  01: [null]\n  02: [n/a]\n  03: [true]\n"},
	        {1, "labels: [a, b]\ncookies:\n  01: [\" x \", \"a  b\"]\n"
	            "  02: [\"#x\", \"a: b, c\"]\n  03: {a: \"[x]\", b: \"'{}'\"}\n"
	            "  \"0 4\": [\"\", \"&a *b !c\"]\n"},
	        {1, "labels: [a]\ncookies:\n  01: [NULL]\n  02: [\"~\"]\n  03: [a.b/c@d+e-f_g]\n"},
	        {1, "labels: [a]\r\ncookies:\r\n  01: [x]\r\n\r\n  02: [y]\r\ninterval: 5s\r\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\n  02: [y]"},
	        {1, "labels: [a]\ncookies:\n    01: [x]\ninterval: 1s\ndecoders:\n"
	            "  - {type: ascii, label: a}\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\nhttp:\n  listen: ':1'\n"
	            "\"cookies\": {02: [y]}\n"},
	        {1, "\"cookies\": {02: [y]}\nlabels: [a]\ncookies:\n  01: [x]\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\ninterval: [oops\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\nclasses:\n  \"eth0 1:1\": [y]\n"
	            "  eth0 1:0A: {a: z}\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\nclasses:\n  \"eth0 1:\": [y]\n"
	            "  eth0 1:1: [z]\n  eth0 1:01: [w]\n"},
	        {1, "labels: [a]\ncookies:\n  01: [x]\nunmapped: \"\\xff\"\n"},
	        {1, "---\nlabels: [a] # \t\ncookies:\n  01: [x]\ninterval: 1s\n---\nother: 1\n"},
	        {1,
	         "labels: [a]\ncookies:\n  0a: [x]\n" /* all in libyaml's 1024 */
	         "  0b: [\"0123456789012345678901234567890123456789012345678901234567890123\"]\n"},
	        /* not taken */
	        {0, "labels: [a]\ncookies:\n"},
	        {0, "labels: [a]\ncookies:"},
	        {0, "labels: [a]\ncookies:\n\n  # nothing\ninterval: 1s\n"},
	        {0, "labels: [a]\ncookies: {}\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n\t02: [y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n  02:\t[y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x] # c\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]  \n"},
	        {0, "labels: [a]\ncookies:\n  \"\\x30\\x31\": [x]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [\"\\u00e9\"]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [\"\xc3\xa9\"]\n"},
	        {0, "# \xc3\xa9\nlabels: [a]\ncookies:\n  01: [x]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n  02: [y,  z]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n  02: [y ,z]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n  02:  [y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n   02: [y]\n"},
	        {0, "labels: [a]\ncookies:\n   01: [x]\n  02: [y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: &v [x]\n  02: *v\n"},
	        {0, "labels: [a]\ncookies:\n  01: !!seq [x]\n"},
	        {0, "labels: [a]\ncookies:\n  ? 01\n  : [x]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x,\n    y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: ['x']\n"},
	        {0, "labels: [a]\ncookies:\n  01: [-x]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [~]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\ncookies:\n  02: [y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n\"http\": {}\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n- x\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n@x: 1\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\nx y: 1\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n...\n"},
	        {0, "labels: [a,\ncookies:\n  01: [x]\n]\n"},
	        /* inside a flow collection or a quoted scalar: not a top-level key */
	        {0, "labels: [a,\ncookies:\n  01: [x]\nb: c]\n"},
	        {0, "http: {listen: \":1\",\ncookies:\n  01: [x]\nb: c}\n"},
	        {0, "{labels: [a],\ncookies:\n  01: [x]\nb: c}\n"},
	        {0, "{# a flow mapping\ncookies:\n  \"\": [x, y]\nlabels: [b]\n"},
	        {0, "labels: [a]\ninterval: \"1s\ncookies:\n  01: [x]\nb: c\"\n"},
	        {0, "labels: [a]\ninterval: \"1s\ncookies:\n  01: [x]\n\"\n"},
	        {0, "  labels: [a]\ncookies:\n  01: [x]\n"},
	        {0, "- a\ncookies:\n  01: [x]\n"},
	        {0, "labels: [a]\n---\ncookies:\n  01: [x]\n"},
	        {0, "http:\n  cookies:\n    01: [x]\nlabels: [a]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\r  02: [y]\n"},
	        {0, "labels: [a]\ncookies:\n  01: [x]\n  "
	            "\"01234567890123456789012345678901234567890123456789012345678901234\": [y]\n"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fast = same_both_ways(cases[i].yaml, strlen(cases[i].yaml));

		if (fast != cases[i].fast)
			fprintf(stderr, "case %zu: the fast path was %staken:\n%s\n", i,
			        fast ? "" : "not ", cases[i].yaml);
		assert_int_equal(fast, cases[i].fast);
	}
	/* a NUL byte */
	assert_false(same_both_ways("labels: [a]\ncookies:\n  01: [x]\0\n", 28));
}

/* A deterministic pseudo-random generator (a 64-bit LCG). */
static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static const char *pick(uint64_t *s, const char *const *v, size_t n)
{
	return v[rnd(s) % n];
}

#define PICK(s, v) pick(s, v, sizeof(v) / sizeof(v[0]))

/* Thousands of generated configurations, most of them a valid cookies block
 * with a mutation or two: the same result with and without the fast path. */
static void test_fast_path_random(void **state)
{
	static const char *const keys[] = {
	        "0a",   "\"0a\"",   "0A",  "\"0x0a\"",
	        "0b0c", "\"0b0c\"", "zz",  "\"abc\"",
	        "\"\"", "0x",       "abc", "\"0102030405060708091011121314151617\""};
	static const char *const vals[] = {"x", "\"y z\"", "t1", "null", "\"\"", "a.b", "1", "x-y"};
	static const char *const labs[] = {"a", "b", "c"};
	static const char *const before[] = {"",
	                                     "labels: [a, b]\n",
	                                     "labels: [a]\n",
	                                     "interval: 5s\nlabels: [a, b]\n",
	                                     "# hi\n",
	                                     "{\n",
	                                     "x: [\n"};
	static const char *const after[] = {
	        "",           "labels: [a, b]\n", "interval: 1s\n", "- x\n", "decoders: []\n",
	        "\"q\": 1\n", "labels: [b]\n"};
	static const char mut[] = " \t\"\\#:,[]{}\n\rx0-&*!?|'~@%.\xc3";
	enum { RUNS = 20000, CAP = 4096 };
	uint64_t s = 42;
	unsigned run, taken = 0;
	char *y = malloc(CAP);

	assert_non_null(y);
	for (run = 0; run < RUNS; run++) {
		const char *nl = rnd(&s) % 4 ? "\n" : "\r\n";
		size_t len = 0, i, j, n = 1 + rnd(&s) % 6, ind = 1 + rnd(&s) % 3, m;

		len += (size_t)snprintf(y + len, CAP - len, "%scookies:%s%s", PICK(&s, before),
		                        rnd(&s) % 4 ? "" : " # c", nl);
		for (i = 0; i < n; i++) {
			len += (size_t)snprintf(y + len, CAP - len, "%*s%s: ", (int)ind, "",
			                        PICK(&s, keys));
			m = rnd(&s) % 4;
			if (rnd(&s) % 2) {
				y[len++] = '[';
				for (j = 0; j < m; j++)
					len += (size_t)snprintf(y + len, CAP - len, "%s%s",
					                        j ? ", " : "", PICK(&s, vals));
				y[len++] = ']';
			} else {
				y[len++] = '{';
				for (j = 0; j < m; j++)
					len += (size_t)snprintf(y + len, CAP - len, "%s%s: %s",
					                        j ? ", " : "", PICK(&s, labs),
					                        PICK(&s, vals));
				y[len++] = '}';
			}
			len += (size_t)snprintf(y + len, CAP - len, "%s%s", nl,
			                        rnd(&s) % 8 ? ""
			                                    : (rnd(&s) % 2 ? "  # c\n" : "\n"));
		}
		len += (size_t)snprintf(y + len, CAP - len, "%s", PICK(&s, after));
		if (rnd(&s) % 8 == 0 && len > 0 && y[len - 1] == '\n')
			len--; /* no line break at the end */
		for (m = rnd(&s) % 4 / 2 + (rnd(&s) % 8 == 0); m > 0 && len < CAP - 2; m--) {
			size_t at = rnd(&s) % (len + 1);

			switch (rnd(&s) % 3) {
			case 0: /* insert */
				memmove(y + at + 1, y + at, len - at);
				y[at] = mut[rnd(&s) % (sizeof(mut) - 1)];
				len++;
				break;
			case 1: /* replace */
				if (at < len)
					y[at] = mut[rnd(&s) % (sizeof(mut) - 1)];
				break;
			default: /* delete */
				if (at < len) {
					memmove(y + at, y + at + 1, len - at - 1);
					len--;
				}
			}
		}
		assert_true(len < CAP);
		taken += (unsigned)same_both_ways(y, len);
	}
	/* enough of them exercise the fast path, and enough do not */
	assert_true(taken > RUNS / 5);
	assert_true(taken < RUNS * 4 / 5);
	free(y);
}

/* ---- errors ------------------------------------------------------------------- */

/* Anything but a regular file, and a file over the limit, is refused before
 * it is read (it was read whole: /dev/zero until memory ran out). */
static void test_err_file_kind_and_size(void **state)
{
	char dir[] = "/tmp/tcx-config-XXXXXX", big[64], msg[256];
	struct errs e = {0};
	int fd;

	assert_null(tcx_config_load_file("/dev/zero", collect, &e));
	assert_string_equal(e.text, "/dev/zero: cannot open: not a regular file\n");
	free(e.text);

	assert_non_null(mkdtemp(dir));
	e = (struct errs){0};
	assert_null(tcx_config_load_file(dir, collect, &e));
	snprintf(msg, sizeof(msg), "%s: cannot open: not a regular file\n", dir);
	assert_string_equal(e.text, msg);
	free(e.text);

	/* sparse: one byte over 128 MiB costs no disk */
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(128u << 20) + 1), 0);
	close(fd);
	e = (struct errs){0};
	assert_null(tcx_config_load_file(big, collect, &e));
	snprintf(msg, sizeof(msg), "%s: cannot open: larger than 128 MiB\n", big);
	assert_string_equal(e.text, msg);
	free(e.text);
	unlink(big);
	rmdir(dir);
}

/* 100k nested flow collections: refused at the 64th level, at once (libyaml's
 * scanner took 15 s over such a file before its document was refused). */
static void test_err_deep_nesting(void **state)
{
	static const struct {
		const char *open, *close, *col;
	} forms[] = {{"[", "]", "67"}, {"{a: ", "}", "256"}, {"- ", "", "129"}};
	enum { DEPTH = 100000 };

	for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		size_t lo = strlen(forms[f].open), lc = strlen(forms[f].close);
		size_t len = 0, cap = 16 + DEPTH * (lo + lc);
		char *yaml = malloc(cap), want[128];
		struct errs e = {0};
		double t0;

		assert_non_null(yaml);
		memcpy(yaml, "a: ", 3);
		len = 3;
		if (!lc) /* a block sequence: its entries one per line, deeper and deeper */
			len = 0;
		for (size_t i = 0; i < DEPTH; i++, len += lo)
			memcpy(yaml + len, forms[f].open, lo);
		for (size_t i = 0; i < DEPTH; i++, len += lc)
			memcpy(yaml + len, forms[f].close, lc);
		yaml[len++] = lc ? '\n' : 'x';
		t0 = tcx_clock_s(CLOCK_MONOTONIC);
		assert_null(tcx_config_load_buffer("t.yaml", yaml, len, collect, &e));
		assert_true(tcx_clock_s(CLOCK_MONOTONIC) - t0 < 1.0);
		snprintf(want, sizeof(want), "t.yaml:1:%s: nested deeper than 64 levels\n",
		         forms[f].col);
		assert_string_equal(e.text, want);
		free(e.text);
		free(yaml);
	}
}

/* Cookies are taken as they are parsed once labels are known: an anchor in one
 * still serves an alias in a later one, and errors keep their places. */
static void test_cookies_streamed(void **state)
{
	struct tcx_config *cfg = load_ok("labels: [tenant, rule]\n"
	                                 "cookies:\n"
	                                 "  \"01\": &v {tenant: a, rule: b}\n"
	                                 "  \"02\": [c, d]\n"
	                                 "  \"03\": *v\n");
	const uint8_t c3[] = {0x03};
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	assert_int_equal(cfg->n_cookies, 3);
	assert_int_equal(tcx_labels_resolve(cfg, c3, 1, v, &buf), TCX_MAP_EXACT);
	assert_string_equal(v[0], "a");
	assert_string_equal(v[1], "b");
	tcx_config_unref(cfg);
	expect_errors("labels: [a]\n"
	              "cookies:\n"
	              "  \"01\": [x]\n"
	              "  \"02\": [x, y]\n"
	              "  \"01\": [z]\n",
	              "t.yaml:4:9: cookie '02': expected 1 values, got 2\n"
	              "t.yaml:5:3: duplicate cookie '01' (first at 3:3)\n");
	expect_errors("labels: [a]\ncookies:\n  \"01\": &x [x]\n  \"04\": *nope\n",
	              "t.yaml:4:9: undefined alias 'nope'\n");
}

static void test_err_file(void **state)
{
	struct errs e = {0};
	struct tcx_config *cfg = tcx_config_load_file("/nonexistent/tcx.yaml", collect, &e);

	assert_null(cfg);
	assert_string_equal(e.text,
	                    "/nonexistent/tcx.yaml: cannot open: No such file or directory\n");
	free(e.text);
}

static void test_err_syntax(void **state)
{
	expect_errors("targets: [a, b\n", "t.yaml:2:1: YAML syntax error: did not find expected "
	                                  "',' or ']' while parsing a flow sequence\n");
	/* what was parsed before the error is checked too */
	expect_errors(
	        "a: b\n c: d\n",
	        "t.yaml:1:1: unknown key 'a' (expected one of: interval, targets, labels, "
	        "unmapped, cookies, decoders, http, snmp, devices, aggregate, families, "
	        "max_series, classes, liveness_interval, sweep_interval, notify_buffer_kib)\n"
	        "t.yaml:2:3: YAML syntax error: mapping values are not allowed in this context\n");
	/* a reader error: the position is computed from the byte offset */
	expect_errors("interval: 1\nunmapped: \"\xff\"\n",
	              "t.yaml:2:12: YAML syntax error: invalid leading UTF-8 octet\n");
	expect_errors("interval: 15\n---\ninterval: 3\n",
	              "t.yaml:3:1: expected a single YAML document\n");
}

static void test_err_empty_and_top(void **state)
{
	expect_errors("", "t.yaml:1:1: empty configuration\n");
	expect_errors("# only a comment\n\n", "t.yaml:1:1: empty configuration\n");
	expect_errors("- all: true\n",
	              "t.yaml:1:1: expected a mapping at top level, got a sequence\n");
	expect_errors("\n15s\n", "t.yaml:2:1: expected a mapping at top level, got a scalar\n");
}

static void test_err_keys(void **state)
{
	expect_errors("interval: 15\nintervl: 15\n",
	              "t.yaml:2:1: unknown key 'intervl' (expected one of: interval, targets, "
	              "labels, unmapped, cookies, decoders, http, snmp, devices, aggregate, "
	              "families, max_series, classes, liveness_interval, sweep_interval, "
	              "notify_buffer_kib)\n");
	expect_errors("targets:\n  - dev: eth0\n    prent: ingress\n",
	              "t.yaml:3:5: unknown key 'prent' in target (expected one of: all, dev, "
	              "parent, block, netns)\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: ascii, label: a, size: 3}\n",
	              "t.yaml:3:29: unknown key 'size' in decoder (expected one of: type, label, "
	              "length, prefix, layout, fields)\n");
	expect_errors(
	        "labels: [a]\ndecoders:\n  - type: fields\n    fields: [{label: a, "
	        "bytes: 2, width: 2}]\n",
	        "t.yaml:4:35: unknown key 'width' in field (expected one of: label, bytes)\n");
	expect_errors("labels: [a]\ninterval: 1\nlabels: [b]\n",
	              "t.yaml:3:1: duplicate key 'labels' (first at 1:1)\n");
	expect_errors("targets:\n  - dev: eth0\n    dev: eth1\n",
	              "t.yaml:3:5: duplicate key 'dev' (first at 2:5)\n");
	expect_errors("? [a]\n: 1\n", "t.yaml:1:3: expected a scalar key, got a sequence\n");
}

/* Every value check of every section, each with its message (the handlers
 * share duration_value(), uint_value(), string_value() and keep()). */
/* aggregate, families, max_series: what they keep, and their defaults. */
static void test_aggregate_families(void **state)
{
	struct tcx_config *cfg = load_ok("aggregate: {by: [tenant, device, rule]}\n"
	                                 "labels: [tenant, zone, rule]\n"
	                                 "families: {hw: auto, flags: on, drops: off}\n"
	                                 "max_series: 1000\n");

	assert_int_equal(cfg->aggregate.mode, TCX_AGG_BY);
	assert_int_equal(cfg->aggregate.builtin, 1u << TCX_BL_DEVICE);
	assert_int_equal(cfg->aggregate.user, 1u << 0 | 1u << 2);
	assert_int_equal(cfg->families.mode[TCX_SW_HW], TCX_FAM_AUTO);
	assert_int_equal(cfg->families.mode[TCX_SW_FLAGS], TCX_FAM_ON);
	assert_int_equal(cfg->families.mode[TCX_SW_DROPS], TCX_FAM_OFF);
	assert_int_equal(cfg->families.mode[TCX_SW_OVERLIMITS], TCX_FAM_DEFAULT);
	assert_int_equal(cfg->max_series, 1000);
	assert_int_equal(cfg->notify_buffer_kib, 4096); /* the default: 4 MiB */
	tcx_config_unref(cfg);

	cfg = load_ok("aggregate: {by: [device]}\nnotify_buffer_kib: 64\n");
	assert_int_equal(cfg->notify_buffer_kib, 64);
	tcx_config_unref(cfg);

	cfg = load_ok(
	        "labels: [tenant, rule]\naggregate:\n  without: [handle, order, pref, rule]\n");
	assert_int_equal(cfg->aggregate.mode, TCX_AGG_WITHOUT);
	assert_int_equal(cfg->aggregate.builtin,
	                 ((1u << TCX_BL__MAX) - 1) &
	                         ~(1u << TCX_BL_HANDLE | 1u << TCX_BL_ORDER | 1u << TCX_BL_PREF));
	assert_int_equal(cfg->aggregate.user, 1u << 0);
	tcx_config_unref(cfg);

	cfg = load_ok("interval: 5s\n");
	assert_int_equal(cfg->aggregate.mode, TCX_AGG_NONE);
	assert_int_equal(cfg->max_series, 0);
	assert_int_equal(cfg->families.mode[TCX_SW_HW], TCX_FAM_DEFAULT);
	tcx_config_unref(cfg);
}

/* The row of t (tin 0: fields, 1: tin_fields) named name, or -1. */
static int xs_row(const struct tcx_xstats_table *t, int tin, const char *name)
{
	const struct tcx_xstat *rows = tin ? t->tin_fields : t->fields;
	unsigned n = tin ? t->n_tin_fields : t->n_fields;

	for (unsigned f = 0; f < n; f++) {
		size_t len;
		const char *fn = tcx_xstat_name(t, &rows[f], &len);

		if (len == strlen(name) && !strncmp(fn, name, len))
			return (int)f;
	}
	return -1;
}

/* families: xstats as a map of kinds: the fields each kind keeps. */
static void test_families_xstats(void **state)
{
	const struct tcx_xstats_table *cake = tcx_xstats_lookup("cake", 0);
	const struct tcx_xstats_table *cake_c = tcx_xstats_lookup("cake", 1);
	const struct tcx_xstats_table *htb = tcx_xstats_lookup("htb", 1);
	const struct tcx_xstats_table *fq = tcx_xstats_lookup("fq", 0);
	const struct tcx_xstats_table *fqc = tcx_xstats_lookup("fq_codel", 0);
	const struct tcx_xstats_table *fqc_c = tcx_xstats_lookup("fq_codel", 1);
	const struct tcx_xstats_table *sfq = tcx_xstats_lookup("sfq", 1);
	const struct tcx_xstats_table *hfsc = tcx_xstats_lookup("hfsc", 1);
	const char *chosen[] = {"tin_sent_bytes", "tin_dropped_packets", "tin_ecn_marked_packets",
	                        "tin_avg_delay_seconds"};
	struct tcx_xstats_choice zero = {{0}, {0}};
	const struct tcx_xstats_choice *ch;
	uint32_t keep = 0;
	struct tcx_config *cfg;

	cfg = load_ok("families:\n"
	              "  xstats: {cake: [tin_sent_bytes, tin_dropped_packets, "
	              "tin_ecn_marked_packets, tin_avg_delay_seconds, memory_used_bytes, "
	              "deficit_bytes], fq_codel: all, htb: none, sfq: [], fq: [band_drops]}\n");
	ch = &cfg->families.xstats;
	assert_int_equal(cfg->families.mode[TCX_SW_XSTATS], TCX_FAM_ON);
	/* cake: its qdisc's memory_used_bytes, the four tin fields, its
	 * class's deficit_bytes; nothing else */
	assert_int_equal(ch->off[tcx_xstats_id(cake)],
	                 ((1u << cake->n_fields) - 1) &
	                         ~(1u << xs_row(cake, 0, "memory_used_bytes")));
	for (unsigned i = 0; i < 4; i++) {
		assert_true(xs_row(cake, 1, chosen[i]) >= 0);
		keep |= 1u << xs_row(cake, 1, chosen[i]);
	}
	assert_int_equal(ch->tin_off[tcx_xstats_id(cake)],
	                 ((1u << cake->n_tin_fields) - 1) & ~keep);
	assert_int_equal(ch->off[tcx_xstats_id(cake_c)],
	                 ((1u << cake_c->n_fields) - 1) &
	                         ~(1u << xs_row(cake_c, 0, "deficit_bytes")));
	assert_false(tcx_xstats_none(cake, ch));
	assert_false(tcx_xstats_none(cake_c, ch));
	/* fq_codel: all, its qdisc's and its class's */
	assert_int_equal(ch->off[tcx_xstats_id(fqc)], 0);
	assert_int_equal(ch->off[tcx_xstats_id(fqc_c)], 0);
	/* htb none, sfq []: nothing */
	assert_true(tcx_xstats_none(htb, ch));
	assert_true(tcx_xstats_none(sfq, ch));
	/* fq: band_drops names its three elements */
	assert_int_equal(ch->off[tcx_xstats_id(fq)],
	                 ((1u << fq->n_fields) - 1) & ~(7u << xs_row(fq, 0, "band_drops")));
	/* a kind not named keeps every field */
	assert_int_equal(ch->off[tcx_xstats_id(hfsc)], 0);
	assert_false(tcx_xstats_none(hfsc, ch));
	tcx_config_unref(cfg);

	/* The default, an empty map and on: every field of every kind. */
	cfg = load_ok("interval: 5s\n");
	assert_memory_equal(&cfg->families.xstats, &zero, sizeof(zero));
	assert_int_equal(cfg->families.mode[TCX_SW_XSTATS], TCX_FAM_DEFAULT);
	tcx_config_unref(cfg);
	cfg = load_ok("families: {xstats: {}}\n");
	assert_memory_equal(&cfg->families.xstats, &zero, sizeof(zero));
	assert_int_equal(cfg->families.mode[TCX_SW_XSTATS], TCX_FAM_ON);
	tcx_config_unref(cfg);
	cfg = load_ok("families: {xstats: off}\n");
	assert_int_equal(cfg->families.mode[TCX_SW_XSTATS], TCX_FAM_OFF);
	tcx_config_unref(cfg);
}

static void test_err_families_xstats(void **state)
{
	expect_errors("families:\n  xstats: {cake: all, bogus: all}\n",
	              "t.yaml:2:23: unknown kind 'bogus' in families xstats (expected one of: htb, "
	              "hfsc, fq_codel, fq, fq_pie, codel, pie, red, choke, sfb, sfq, cake)\n");
	expect_errors("families:\n  xstats:\n    htb: [lends, tokens, borrows]\n",
	              "t.yaml:3:18: unknown field 'tokens' of htb in families xstats (expected one "
	              "of: lends, borrows, giants, tokens_seconds, ctokens_seconds)\n");
	/* an array's elements are one name; the _total of a counter is no part of it */
	expect_errors("families: {xstats: {fq: [band_drops_total]}}\n",
	              "t.yaml:1:26: unknown field 'band_drops_total' of fq in families xstats "
	              "(expected one of: gc_flows, highprio_packets, tcp_retrans, throttled, "
	              "flows_plimit, pkts_too_long, allocation_errors, "
	              "time_next_delayed_flow_seconds, flows, inactive_flows, throttled_flows, "
	              "unthrottle_latency_seconds, ce_mark, horizon_drops, horizon_caps, "
	              "fastpath_packets, "
	              "band_drops, band_pkt_count_packets)\n");
	expect_errors("families: {xstats: {htb: [lends, lends]}}\n",
	              "t.yaml:1:34: field 'lends' of htb given twice in families xstats\n");
	expect_errors("families: {xstats: {htb: all, htb: none}}\n",
	              "t.yaml:1:31: duplicate kind 'htb' (first at 1:21)\n");
	expect_errors("families: {xstats: {htb: some, sfq: {allot: 1}, cake: [[a]]}}\n",
	              "t.yaml:1:26: invalid htb 'some' in families xstats (expected all, none or a "
	              "list of fields)\n"
	              "t.yaml:1:37: sfq in families xstats must be all, none or a list of "
	              "fields, got a mapping\n"
	              "t.yaml:1:56: field name must be a scalar, got a sequence\n");
	expect_errors("families: {xstats: maybe}\n",
	              "t.yaml:1:20: invalid xstats 'maybe' in families (expected on, off or a map "
	              "of kinds)\n");
}

static void test_err_aggregate(void **state)
{
	expect_errors("labels: [tenant]\naggregate: {by: [tenant, dev, rule]}\n",
	              "t.yaml:2:26: unknown label 'dev' in aggregate (expected one of: device, "
	              "parent, block, netns, chain, protocol, pref, kind, handle, order, action, "
	              "cookie, or a label of 'labels')\n"
	              "t.yaml:2:31: unknown label 'rule' in aggregate (expected one of: device, "
	              "parent, block, netns, chain, protocol, pref, kind, handle, order, action, "
	              "cookie, or a label of 'labels')\n");
	expect_errors("aggregate:\n  by: [device]\n  without: [handle]\n",
	              "t.yaml:3:3: aggregate takes one of 'by' and 'without', not both\n");
	expect_errors("aggregate: {}\n",
	              "t.yaml:1:12: aggregate needs 'by' or 'without' (a list of labels)\n");
	expect_errors("aggregate: {by: device}\n", "t.yaml:1:17: 'by' must be a sequence, got a "
	                                           "scalar\n");
	expect_errors("aggregate: {by: [pref, pref]}\n",
	              "t.yaml:1:24: label 'pref' given twice in aggregate\n");
	expect_errors("aggregate: {by: [pref], sum: [x]}\n",
	              "t.yaml:1:25: unknown key 'sum' in aggregate (expected one of: by, "
	              "without)\n");
	expect_errors("notify_buffer_kib: 3\nnotify_buffer_kib: 4M\n",
	              "t.yaml:1:20: invalid notify_buffer_kib '3': must be an integer from 4 to "
	              "1048576\n"
	              "t.yaml:2:1: duplicate key 'notify_buffer_kib' (first at 1:1)\n");
	expect_errors("notify_buffer_kib: 1048577\n",
	              "t.yaml:1:20: invalid notify_buffer_kib '1048577': must be an integer from "
	              "4 to 1048576\n");
	expect_errors("notify_buffer_kib: 4M\n",
	              "t.yaml:1:20: invalid notify_buffer_kib '4M': must be an integer from 4 to "
	              "1048576\n");
	expect_errors("max_series: 0\n",
	              "t.yaml:1:13: invalid max_series '0': must be an integer from 1 to "
	              "4294967295\n");
	expect_errors("families: {hw: maybe, flags: auto, drops: 1}\n",
	              "t.yaml:1:16: invalid hw 'maybe' in families (expected auto, on or off)\n"
	              "t.yaml:1:30: invalid flags 'auto' in families (expected on or off)\n"
	              "t.yaml:1:43: invalid drops '1' in families (expected on or off)\n");
}

static void test_err_values(void **state)
{
	expect_errors(
	        "interval: 0.1ms\n"
	        "targets:\n"
	        "  - block: 0\n"
	        "  - block: 4294967295\n"
	        "  - dev: eth0\n"
	        "    parent: x\n"
	        "labels: [a]\n"
	        "decoders:\n"
	        "  - {type: fields, length: 17, fields: [{label: a, bytes: 9}]}\n"
	        "  - {type: uuid, label: [a], layout: 3}\n"
	        "  - {type: ascii, label: a, layout: ovs, fields: []}\n"
	        "http:\n"
	        "  web_config: \"\"\n"
	        "  max_connections: 0\n"
	        "  max_connections_per_ip: 65537\n"
	        "  timeout: 0.5s\n"
	        "snmp:\n"
	        "  agentx_socket: \"\"\n"
	        "  ping_interval: 1.5s\n",
	        "t.yaml:1:11: invalid interval '0.1ms': must be a duration between 1ms and 24h "
	        "such as 15s, 500ms, 2m\n"
	        "t.yaml:3:12: invalid block '0': must be an integer from 1 to 4294967294\n"
	        "t.yaml:4:12: invalid block '4294967295': must be an integer from 1 to 4294967294\n"
	        "t.yaml:6:13: invalid parent 'x': expected ingress, egress, root or a handle such "
	        "as 1: or 1:10\n"
	        "t.yaml:13:15: invalid web_config '': must be a file name\n"
	        "t.yaml:14:20: invalid max_connections '0': must be an integer from 1 to 65536\n"
	        "t.yaml:15:27: invalid max_connections_per_ip '65537': must be an integer from 1 "
	        "to 65536\n"
	        "t.yaml:16:12: invalid timeout '0.5s': must be a duration between 1s and 24h such "
	        "as 10s\n"
	        "t.yaml:18:18: invalid agentx_socket '': expected a path or an address such as "
	        "tcp:localhost:705\n"
	        "t.yaml:19:18: invalid ping_interval '1.5s': must be whole seconds from 1s to 1h "
	        "such as 5s\n"
	        "t.yaml:9:28: invalid length '17': must be an integer from 1 to 16\n"
	        "t.yaml:9:59: invalid bytes '9': must be an integer from 1 to 8\n"
	        "t.yaml:10:25: 'label' must be a scalar, got a sequence\n"
	        "t.yaml:10:38: invalid layout '3' (expected ovs or rfc4122)\n"
	        "t.yaml:11:29: 'layout' applies only to uuid decoders\n"
	        "t.yaml:11:42: 'fields' applies only to fields decoders\n");
	expect_errors("http:\n  listen: [[a]]\n",
	              "t.yaml:2:12: listen address must be a scalar, got a sequence\n");
}

static void test_err_types(void **state)
{
	expect_errors("targets: all\n",
	              "t.yaml:1:10: 'targets' must be a sequence, got a scalar\n");
	expect_errors("interval: {s: 1}\n",
	              "t.yaml:1:11: 'interval' must be a scalar, got a mapping\n");
	expect_errors("labels: tenant\n",
	              "t.yaml:1:9: 'labels' must be a sequence, got a scalar\n");
	expect_errors("cookies: [a]\n",
	              "t.yaml:1:10: 'cookies' must be a mapping, got a sequence\n");
	expect_errors("decoders: {}\n",
	              "t.yaml:1:11: 'decoders' must be a sequence, got a mapping\n");
	expect_errors("unmapped: [drop]\n",
	              "t.yaml:1:11: 'unmapped' must be a scalar, got a sequence\n");
	expect_errors("targets:\n  - dev: [eth0]\n",
	              "t.yaml:2:10: 'dev' must be a scalar, got a sequence\n");
	expect_errors("targets:\n  - eth0\n",
	              "t.yaml:2:5: target must be a mapping, got a scalar\n");
	expect_errors("labels: [a, [b]]\n",
	              "t.yaml:1:13: label name must be a scalar, got a sequence\n");
	expect_errors("labels: [a]\ndecoders: [ascii]\n",
	              "t.yaml:2:12: decoder must be a mapping, got a scalar\n");
	expect_errors("labels: [a]\ndecoders: [{type: fields, fields: {label: a}}]\n",
	              "t.yaml:2:35: 'fields' must be a sequence, got a mapping\n");
	expect_errors("labels: [a]\ndecoders: [{type: fields, fields: [a]}]\n",
	              "t.yaml:2:36: field must be a mapping, got a scalar\n");
}

static void test_err_integers(void **state)
{
	expect_errors("targets:\n  - block: 0\n",
	              "t.yaml:2:12: invalid block '0': must be an integer from 1 to 4294967294\n");
	expect_errors("targets:\n  - block: 4294967295\n", "t.yaml:2:12: invalid block "
	                                                   "'4294967295': must be an integer from "
	                                                   "1 to 4294967294\n");
	expect_errors(
	        "targets:\n  - block: 0x16\n",
	        "t.yaml:2:12: invalid block '0x16': must be an integer from 1 to 4294967294\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: ascii, label: a, length: 17}\n",
	              "t.yaml:3:37: invalid length '17': must be an integer from 1 to 16\n");
	expect_errors(
	        "labels: [a]\ndecoders:\n  - {type: fields, fields: [{label: a, bytes: 9}]}\n",
	        "t.yaml:3:47: invalid bytes '9': must be an integer from 1 to 8\n");
}

static void test_err_parent(void **state)
{
	expect_errors("targets:\n  - dev: eth0\n    parent: foo\n",
	              "t.yaml:3:13: invalid parent 'foo': expected ingress, egress, root or a "
	              "handle such as 1: or 1:10\n");
	expect_errors("targets:\n  - dev: eth0\n    parent: \"12345:\"\n",
	              "t.yaml:3:13: invalid parent '12345:': expected ingress, egress, root or a "
	              "handle such as 1: or 1:10\n");
	expect_errors("targets:\n  - dev: eth0\n    parent: \":1\"\n",
	              "t.yaml:3:13: invalid parent ':1': expected ingress, egress, root or a "
	              "handle such as 1: or 1:10\n");
	expect_errors("targets:\n  - block: 5\n    parent: ingress\n",
	              "t.yaml:3:5: 'parent' needs 'dev'\n");
	expect_errors("targets:\n  - all: true\n    parent: root\n",
	              "t.yaml:3:5: 'parent' needs 'dev'\n");
}

static void test_err_hex(void **state)
{
	expect_errors("labels: [a]\ncookies:\n  zz: [x]\n",
	              "t.yaml:3:3: invalid hex cookie 'zz': not a hex digit\n");
	expect_errors("labels: [a]\ncookies:\n  \"abc\": [x]\n",
	              "t.yaml:3:3: invalid hex cookie 'abc': odd number of hex digits\n");
	expect_errors("labels: [a]\ncookies:\n  \"0x\": [x]\n",
	              "t.yaml:3:3: invalid hex cookie '0x': empty\n");
	expect_errors("labels: [a]\ncookies:\n  \"000102030405060708090a0b0c0d0e0f10\": [x]\n",
	              "t.yaml:3:3: invalid hex cookie '000102030405060708090a0b0c0d0e0f10': longer "
	              "than 16 bytes\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: ascii, label: a, prefix: \"5g\"}\n",
	              "t.yaml:3:37: invalid hex prefix '5g': not a hex digit\n");
	expect_errors("labels: [a]\ncookies:\n  \"0x00AA\": [x]\n  \"00aa\": [y]\n",
	              "t.yaml:4:3: duplicate cookie '00aa' (first at 3:3)\n");
}

static void test_err_label_names(void **state)
{
	expect_errors("labels: [1abc]\n",
	              "t.yaml:1:10: invalid label name '1abc': must match [a-zA-Z_][a-zA-Z0-9_]* "
	              "and not start with __\n");
	expect_errors("labels: [__x]\n",
	              "t.yaml:1:10: invalid label name '__x': must match [a-zA-Z_][a-zA-Z0-9_]* "
	              "and not start with __\n");
	expect_errors("labels: [tenant, device]\n",
	              "t.yaml:1:18: label name 'device' clashes with a built-in label\n");
	/* every name the exposition writes itself (test_expo.c checks the
	 * list against the renderer) */
	expect_errors("labels: [tenant, tin]\n",
	              "t.yaml:1:18: label name 'tin' clashes with a built-in label\n");
	expect_errors("classes: {}\nlabels:\n  - band\n  - code\n",
	              "t.yaml:3:5: label name 'band' clashes with a built-in label\n"
	              "t.yaml:4:5: label name 'code' clashes with a built-in label\n");
	for (size_t i = 0; i < TCX_BL__MAX + tcx_n_reserved_labels; i++) {
		const char *name = i < TCX_BL__MAX ? tcx_builtin_labels[i]
		                                   : tcx_reserved_labels[i - TCX_BL__MAX];
		char yaml[96], msg[128];

		snprintf(yaml, sizeof(yaml), "labels: [a, %s]\n", name);
		snprintf(msg, sizeof(msg),
		         "t.yaml:1:13: label name '%s' clashes with a built-in label\n", name);
		expect_errors(yaml, msg);
	}
	expect_errors("labels: [tenant, job]\n",
	              "t.yaml:1:18: label name 'job' is set by Prometheus on every series it "
	              "scrapes (it would rename this one exported_job)\n");
	expect_errors("labels: [instance]\n",
	              "t.yaml:1:10: label name 'instance' is set by Prometheus on every series it "
	              "scrapes (it would rename this one exported_instance)\n");
	expect_errors("labels: [rule, tenant, rule]\n",
	              "t.yaml:1:24: duplicate label name 'rule'\n");
	expect_errors("labels: [l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, "
	              "l15, l16, l17, l18, l19, l20, l21, l22, l23, l24, l25, l26, l27, l28, l29, "
	              "l30, l31, l32, l33]\n",
	              "t.yaml:1:160: too many labels (at most 32)\n");
}

/* A NUL byte ("\\0") in any scalar, key or value, is refused where the
 * scalar starts, before any use reads the text up to it as the whole. */
static void test_err_nul(void **state)
{
	expect_errors("labels: [a]\nclasses:\n  \"dev\\0x 1:10\": [x]\n",
	              "t.yaml:3:3: key 'dev' holds a NUL byte (its byte 4)\n");
	expect_errors("labels: [a]\ncookies:\n  \"01\": {a: \"v\\0\"}\n",
	              "t.yaml:3:13: value 'v' holds a NUL byte (its byte 2)\n");
	expect_errors("labels: [\"a\\0b\"]\n",
	              "t.yaml:1:10: value 'a' holds a NUL byte (its byte 2)\n");
	expect_errors("devices:\n  exclude: \"a\\0b\"\n",
	              "t.yaml:2:12: value 'a' holds a NUL byte (its byte 2)\n");
	expect_errors("\"\\0interval\": 5s\n",
	              "t.yaml:1:1: key '' holds a NUL byte (its byte 1)\n");
}

static void test_err_cookie_values(void **state)
{
	expect_errors("labels: [tenant, rule]\ncookies:\n  \"0011aa\": {tenant: acme}\n",
	              "t.yaml:3:13: cookie '0011aa': missing value for label 'rule'\n");
	expect_errors(
	        "labels: [tenant, rule]\ncookies:\n  \"0011aa\": {tenant: a, rule: b, foo: c}\n",
	        "t.yaml:3:34: cookie '0011aa': unknown label 'foo'\n");
	expect_errors("labels: [tenant, rule]\ncookies:\n  \"0011aa\": [acme]\n",
	              "t.yaml:3:13: cookie '0011aa': expected 2 values, got 1\n");
	expect_errors("labels: [tenant, rule]\ncookies:\n  \"0011aa\": [acme, [web]]\n",
	              "t.yaml:3:20: cookie '0011aa': label values must be scalars\n");
	expect_errors("labels: [tenant, rule]\ncookies:\n  \"0011AA\": {tenant: a, rule: {x: y}}\n",
	              "t.yaml:3:31: cookie '0011aa': label values must be scalars\n");
	expect_errors(
	        "cookies:\n  \"0011aa\": [acme]\n",
	        "t.yaml:2:13: cookie '0011aa': no labels are declared (add a 'labels' list)\n");
	expect_errors(
	        "labels: []\ncookies:\n  \"0011aa\": {}\n",
	        "t.yaml:3:13: cookie '0011aa': no labels are declared (add a 'labels' list)\n");
	expect_errors("labels: [a, b]\ncookies:\n  \"01\": {a: x, a: y, b: z}\n",
	              "t.yaml:3:16: duplicate key 'a' (first at 3:10)\n");
}

static void test_err_decoders(void **state)
{
	expect_errors("labels: [a]\ndecoders:\n  - type: foo\n    label: a\n",
	              "t.yaml:3:11: unknown decoder type 'foo' (expected ascii, fields or uuid)\n");
	expect_errors("labels: [a]\ndecoders:\n  - label: a\n",
	              "t.yaml:3:5: decoder needs 'type'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: ascii\n",
	              "t.yaml:3:5: decoder 'ascii' needs 'label'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: uuid\n",
	              "t.yaml:3:5: decoder 'uuid' needs 'label'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: ascii\n    label: x\n",
	              "t.yaml:4:12: decoder label 'x' is not declared in 'labels'\n");
	expect_errors(
	        "labels: [a]\ndecoders:\n  - type: fields\n    fields: [{label: x, bytes: 1}]\n",
	        "t.yaml:4:22: decoder label 'x' is not declared in 'labels'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n",
	              "t.yaml:3:5: decoder 'fields' needs a non-empty 'fields' list\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    fields: []\n",
	              "t.yaml:4:13: decoder 'fields' needs a non-empty 'fields' list\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    fields:\n"
	              "      - {label: a, bytes: 8}\n      - {bytes: 8}\n      - {bytes: 4}\n",
	              "t.yaml:5:7: fields cover 20 bytes, more than a cookie's 16\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    fields: [{bytes: 1}]\n",
	              "t.yaml:4:13: decoder 'fields' needs at least one field with a 'label'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    fields: [{label: a}]\n",
	              "t.yaml:4:14: field needs 'bytes'\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    fields: [{bytes: 1, label: a},"
	              " {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1},"
	              " {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1},"
	              " {bytes: 1}, {bytes: 1}, {bytes: 1}, {bytes: 1}]\n",
	              "t.yaml:4:216: too many fields (at most 16)\n"
	              "t.yaml:4:13: fields cover 17 bytes, more than a cookie's 16\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: uuid, label: a, layout: x}\n",
	              "t.yaml:3:36: invalid layout 'x' (expected ovs or rfc4122)\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: ascii, label: a, layout: ovs}\n",
	              "t.yaml:3:29: 'layout' applies only to uuid decoders\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: uuid, label: a, fields: [{label: a, "
	              "bytes: 1}]}\n",
	              "t.yaml:3:28: 'fields' applies only to fields decoders\n");
	expect_errors("labels: [a]\ndecoders:\n  - type: fields\n    label: a\n"
	              "    fields: [{label: a, bytes: 1}]\n",
	              "t.yaml:4:5: decoder 'fields' takes labels from its fields, not 'label'\n");
	/* Decoders no cookie of their length could match (found by the config
	 * fuzzer: tests/fuzz/regressions/config/). */
	expect_errors("labels: [a]\ndecoders:\n  - {type: fields, length: 1,"
	              " fields: [{label: a, bytes: 2}]}\n",
	              "t.yaml:3:5: decoder's fields cover 2 bytes, more than its length 1\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: ascii, label: a, prefix: \"0a0b\","
	              " length: 1}\n",
	              "t.yaml:3:5: decoder's prefix is 2 bytes, longer than its length 1\n");
	expect_errors("labels: [a]\ndecoders:\n  - {type: uuid, label: a, length: 8}\n",
	              "t.yaml:3:5: decoder 'uuid' takes 16-byte cookies, not length 8\n");
}

static void test_err_unmapped(void **state)
{
	expect_errors("unmapped: keep\n",
	              "t.yaml:1:11: invalid unmapped policy 'keep' (expected export or drop)\n");
}

static void test_err_targets(void **state)
{
	expect_errors("targets: []\n", "t.yaml:1:10: targets must not be empty\n");
	expect_errors("targets:\n  - {}\n",
	              "t.yaml:2:5: target needs exactly one of 'all', 'dev' or 'block'\n");
	expect_errors("targets:\n  - dev: eth0\n    block: 3\n",
	              "t.yaml:2:5: target needs exactly one of 'all', 'dev' or 'block'\n");
	expect_errors("targets:\n  - netns: blue\n",
	              "t.yaml:2:5: target needs exactly one of 'all', 'dev' or 'block'\n");
	expect_errors("targets:\n  - dev: a/b\n",
	              "t.yaml:2:10: invalid device name 'a/b': must be 1 to 15 characters without "
	              "'/' or whitespace\n");
	expect_errors("targets:\n  - dev: abcdefghijklmnop\n",
	              "t.yaml:2:10: invalid device name 'abcdefghijklmnop': must be 1 to 15 "
	              "characters without '/' or whitespace\n");
	expect_errors("targets:\n  - dev: \"a b\"\n",
	              "t.yaml:2:10: invalid device name 'a b': must be 1 to 15 characters without "
	              "'/' or whitespace\n");
	expect_errors("targets:\n  - dev:\n",
	              "t.yaml:2:9: invalid device name '': must be 1 to 15 characters without "
	              "'/' or whitespace\n");
	expect_errors("targets:\n  - all: true\n    netns: x/y\n",
	              "t.yaml:3:12: invalid netns 'x/y': must be a name under /run/netns\n");
	expect_errors("targets:\n  - all: true\n    netns: ..\n",
	              "t.yaml:3:12: invalid netns '..': must be a name under /run/netns\n");
	expect_errors("targets:\n  - all: false\n",
	              "t.yaml:2:10: all: false is meaningless; remove the entry\n");
	expect_errors("targets:\n  - all: maybe\n",
	              "t.yaml:2:10: invalid boolean 'maybe' for 'all'\n");
}

/* netns globs: on `all` targets only; one that matches no namespace yet is a
 * warning (kept in cfg->warnings, FILE:LINE:COL), not an error. */
static void test_netns_glob(void **state)
{
	struct tcx_config *cfg =
	        load_ok("targets:\n  - all: true\n    netns: \"tcx-no-such-ns-*\"\n"
	                "  - {all: true, netns: \"tcx-no[0-9]?\"}\n"
	                "  - {all: true, netns: tcx-plain}\n");

	assert_int_equal(cfg->n_targets, 3);
	assert_int_equal(cfg->targets[0].netns_glob, 1);
	assert_int_equal(cfg->targets[1].netns_glob, 1);
	assert_int_equal(cfg->targets[2].netns_glob, 0);
	assert_int_equal(cfg->n_warnings, 2);
	assert_string_equal(cfg->warnings[0], "t.yaml:3:12: netns 'tcx-no-such-ns-*' matches no "
	                                      "namespace in /run/netns yet");
	assert_string_equal(cfg->warnings[1], "t.yaml:4:24: netns 'tcx-no[0-9]?' matches no "
	                                      "namespace in /run/netns yet");
	tcx_config_unref(cfg);

	expect_errors("targets:\n  - {dev: eth0, netns: \"tenant-*\"}\n",
	              "t.yaml:2:24: netns 'tenant-*' is a glob: it needs 'all: true' (a device "
	              "or block is named in one namespace)\n");
	expect_errors("targets:\n  - {block: 3, netns: \"*\"}\n",
	              "t.yaml:2:23: netns '*' is a glob: it needs 'all: true' (a device "
	              "or block is named in one namespace)\n");
}

/* devices: include/exclude are POSIX extended regexes; a bad one is an
 * error naming it and regerror()'s message. */
static void test_devices(void **state)
{
	struct tcx_config *cfg = load_ok("devices:\n  include: \"^(eth|ens|bond)\"\n"
	                                 "  exclude: \"^eth9$\"\n");

	assert_true(tcx_config_device_wanted(cfg, "eth0"));
	assert_true(tcx_config_device_wanted(cfg, "bond12"));
	assert_false(tcx_config_device_wanted(cfg, "eth9"));
	assert_false(tcx_config_device_wanted(cfg, "veth0"));
	tcx_config_unref(cfg);
	cfg = load_ok("devices: {exclude: veth}\n");
	assert_true(tcx_config_device_wanted(cfg, "eth0"));
	assert_false(tcx_config_device_wanted(cfg, "myveth1"));
	tcx_config_unref(cfg);
	cfg = load_ok("interval: 1s\n");
	assert_true(tcx_config_device_wanted(cfg, "anything"));
	tcx_config_unref(cfg);

	expect_errors("devices:\n  include: \"^(eth\"\n  exclude: \"[a\"\n",
	              "t.yaml:2:12: invalid include regex '^(eth': Unmatched ( or \\(\n"
	              "t.yaml:3:12: invalid exclude regex '[a': Unmatched [, [^, [:, [., or [=\n");
	expect_errors("devices: {include: [eth]}\n",
	              "t.yaml:1:20: 'include' must be a scalar, got a sequence\n");
	expect_errors("devices: {incl: eth}\n",
	              "t.yaml:1:11: unknown key 'incl' in devices (expected one of: include, "
	              "exclude)\n");
	expect_errors("devices: eth\n", "t.yaml:1:10: 'devices' must be a mapping, got a scalar\n");
}

/* Every problem is reported, including the deferred cookie/decoder checks. */
static void test_http_section(void **state)
{
	struct tcx_config *cfg = load_ok("targets: [{all: true}]\n");
	char host[64];
	unsigned port;

	/* defaults */
	assert_int_equal(cfg->http.n_listen, 1);
	assert_string_equal(cfg->http.listen[0], "[::]:9591");
	assert_null(cfg->http.web_config);
	assert_int_equal(cfg->http.max_connections, 512);
	assert_int_equal(cfg->http.max_connections_per_ip, 64);
	assert_true(cfg->http.timeout_s == 10);
	assert_int_equal(cfg->http.max_stale_mib, 256);
	assert_int_equal(cfg->http.renders_per_ip, 1);
	assert_int_equal(cfg->http.renders, 8);
	assert_int_equal(cfg->http.password_checks_per_ip, 4);
	assert_int_equal(cfg->http.password_checks, 32);
	tcx_config_unref(cfg);
	cfg = load_ok("http: {renders_per_ip: 20, renders: 10, password_checks_per_ip: 1, "
	              "password_checks: 1024}\n");
	assert_int_equal(cfg->http.renders_per_ip, 10); /* capped */
	assert_int_equal(cfg->http.renders, 10);
	assert_int_equal(cfg->http.password_checks_per_ip, 1);
	assert_int_equal(cfg->http.password_checks, 1024);
	tcx_config_unref(cfg);
	expect_errors("http: {renders: 0, password_checks_per_ip: 1025}\n",
	              "t.yaml:1:17: invalid renders '0': must be an integer from 1 to 1024\n"
	              "t.yaml:1:44: invalid password_checks_per_ip '1025': must be an integer "
	              "from 1 to 1024\n");

	cfg = tcx_config_load_buffer(
	        "/etc/tcx/main.yaml",
	        "http:\n  listen: [\"127.0.0.1:9100\", \"[::1]:9101\", "
	        "\":9102\"]\n  web_config: web.yml\n"
	        "  max_connections: 100\n  max_connections_per_ip: 300\n"
	        "  timeout: 30s\n  max_stale_mib: 1048576\n",
	        strlen("http:\n  listen: [\"127.0.0.1:9100\", \"[::1]:9101\", "
	               "\":9102\"]\n  web_config: web.yml\n"
	               "  max_connections: 100\n  max_connections_per_ip: 300\n"
	               "  timeout: 30s\n  max_stale_mib: 1048576\n"),
	        NULL, NULL);
	assert_non_null(cfg);
	assert_int_equal(cfg->http.n_listen, 3);
	assert_string_equal(cfg->http.listen[1], "[::1]:9101");
	assert_string_equal(cfg->http.web_config, "/etc/tcx/web.yml");
	assert_int_equal(cfg->http.max_connections, 100);
	assert_int_equal(cfg->http.max_connections_per_ip, 100); /* capped */
	assert_true(cfg->http.timeout_s == 30);
	assert_int_equal(cfg->http.max_stale_mib, 1048576);
	/* the command line's --web.listen-address and --web.config.file
	 * replace what they set, and only that */
	{
		struct tcx_http_override none = {0}, web = {.web_config = "other.yml"};
		struct tcx_http_override two = {{"127.0.0.1:1", "[::1]:2"}, 2, NULL};

		assert_int_equal(tcx_config_override_http(cfg, NULL), 0);
		assert_int_equal(tcx_config_override_http(cfg, &none), 0);
		assert_int_equal(cfg->http.n_listen, 3);
		assert_string_equal(cfg->http.web_config, "/etc/tcx/web.yml");
		assert_int_equal(tcx_config_override_http(cfg, &web), 0);
		assert_int_equal(cfg->http.n_listen, 3);
		assert_string_equal(cfg->http.web_config, "other.yml");
		assert_int_equal(tcx_config_override_http(cfg, &two), 0);
		assert_int_equal(cfg->http.n_listen, 2);
		assert_string_equal(cfg->http.listen[0], "127.0.0.1:1");
		assert_string_equal(cfg->http.listen[1], "[::1]:2");
		assert_string_equal(cfg->http.web_config, "other.yml");
	}
	tcx_config_unref(cfg);

	cfg = load_ok("http: {listen: \"0.0.0.0:80\"}\n");
	assert_int_equal(cfg->http.n_listen, 1);
	assert_string_equal(cfg->http.listen[0], "0.0.0.0:80");
	tcx_config_unref(cfg);

	assert_int_equal(tcx_listen_split("[::]:9591", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::");
	assert_int_equal(port, 9591);
	assert_int_equal(tcx_listen_split(":80", host, sizeof(host), &port), 0);
	assert_string_equal(host, "");
	assert_int_equal(tcx_listen_split("localhost:65535", host, sizeof(host), &port), 0);
	assert_string_equal(host, "localhost");
	assert_int_equal(tcx_listen_split("::1:80", host, sizeof(host), &port), -1);
	assert_int_equal(tcx_listen_split("host:0", host, sizeof(host), &port), -1);
	assert_int_equal(tcx_listen_split("host:65536", host, sizeof(host), &port), -1);
	assert_int_equal(tcx_listen_split("host", host, sizeof(host), &port), -1);
	assert_int_equal(tcx_listen_split("[::1]80", host, sizeof(host), &port), -1);

	expect_errors("http:\n  listen: [\"nope\"]\n  timeout: 0s\n  bogus: 1\n"
	              "  max_connections: 0\n  max_stale_mib: 0\n",
	              "t.yaml:2:12: invalid listen address 'nope': expected HOST:PORT, "
	              "[IPV6]:PORT or :PORT\n"
	              "t.yaml:3:12: invalid timeout '0s': must be a duration between 1s and 24h "
	              "such as 10s\n"
	              "t.yaml:4:3: unknown key 'bogus' in http (expected one of: listen, "
	              "web_config, max_connections, max_connections_per_ip, timeout, "
	              "max_stale_mib, renders_per_ip, renders, password_checks_per_ip, "
	              "password_checks)\n"
	              "t.yaml:5:20: invalid max_connections '0': must be an integer from 1 to "
	              "65536\n"
	              "t.yaml:6:18: invalid max_stale_mib '0': must be an integer from 1 to "
	              "1048576\n");
	expect_errors("http:\n  max_stale_mib: 1048577\n",
	              "t.yaml:2:18: invalid max_stale_mib '1048577': must be an integer from 1 to "
	              "1048576\n");
	expect_errors("http:\n  max_stale_mib: 64MiB\n",
	              "t.yaml:2:18: invalid max_stale_mib '64MiB': must be an integer from 1 to "
	              "1048576\n");
	expect_errors("http:\n  listen: []\n", "t.yaml:2:11: listen must not be empty\n");
	expect_errors("http: [1]\n", "t.yaml:1:7: 'http' must be a mapping, got a sequence\n");
}

static void test_err_all_reported(void **state)
{
	expect_errors("interval: 0\n"
	              "cookies:\n"
	              "  \"01\": [x]\n"
	              "decoders:\n"
	              "  - {type: ascii, label: b}\n"
	              "targets:\n"
	              "  - dev: eth0\n"
	              "    block: 7\n"
	              "  - block: 0\n"
	              "labels: [a, a]\n"
	              "unmapped: nope\n",
	              "t.yaml:1:11: invalid interval '0': must be a duration between 1ms and 24h "
	              "such as 15s, 500ms, 2m\n"
	              "t.yaml:7:5: target needs exactly one of 'all', 'dev' or 'block'\n"
	              "t.yaml:9:12: invalid block '0': must be an integer from 1 to 4294967294\n"
	              "t.yaml:10:13: duplicate label name 'a'\n"
	              "t.yaml:11:11: invalid unmapped policy 'nope' (expected export or drop)\n");
	/* with valid labels, the deferred checks report too */
	expect_errors("cookies:\n"
	              "  \"01\": [x]\n"
	              "  \"0g\": [x]\n"
	              "decoders:\n"
	              "  - {type: ascii, label: b}\n"
	              "labels: [a, c]\n",
	              "t.yaml:2:9: cookie '01': expected 2 values, got 1\n"
	              "t.yaml:3:3: invalid hex cookie '0g': not a hex digit\n"
	              "t.yaml:5:26: decoder label 'b' is not declared in 'labels'\n");
}

/* ---- classes ------------------------------------------------------------------ */

/* The values of the class entry found, joined by ',' ("-" when none). */
static const char *class_values(const struct tcx_config *cfg, const char *netns, const char *dev,
                                uint32_t classid)
{
	static char out[256];
	const struct tcx_class_entry *e = tcx_config_class_labels(cfg, netns, dev, classid);
	size_t len = 0;

	if (!e)
		return "-";
	out[0] = '\0';
	for (size_t i = 0; i < cfg->n_labels; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%s", i ? "," : "",
		                        e->values[i]);
	return out;
}

/* Both forms, quoted or plain keys, the class id normalised, and the lookup:
 * NETNS/DEV first, then DEV in every namespace, nothing else. */
static void test_class_forms(void **state)
{
	struct tcx_config *cfg = load_ok("labels: [tenant, rule]\n"
	                                 "classes:\n"
	                                 "  \"eth0 1:10\": {tenant: acme, rule: gold}\n"
	                                 "  eth0 1:0A: [acme, silver]\n"
	                                 "  \"eth0 0001:000b\": [\"\", \"x y\"]\n"
	                                 "  \"eth0 ffff:ffff\": {rule: null, tenant: }\n"
	                                 "  \"blue/eth0 1:10\": [blue, only]\n"
	                                 "  \"blue/eth1 2:1\": [blue, eth1]\n"
	                                 "  \"abcdefghijklmno 1:1\": [long, name]\n"
	                                 "  \"eth0.100@x 1:1\": [vlan, \"1\"]\n"
	                                 "cookies: {\"0a\": [c, d]}\n");
	const struct tcx_class_entry *e;
	char key[TCX_CLASS_KEY_MAX];

	assert_int_equal(cfg->classes.n, 8);
	assert_int_equal(cfg->classes.n_slots, 16);
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10010), "acme,gold");
	assert_string_equal(class_values(cfg, "", "eth0", 0x10010), "acme,gold");
	assert_string_equal(class_values(cfg, "red", "eth0", 0x10010), "acme,gold");
	assert_string_equal(class_values(cfg, "blue", "eth0", 0x10010), "blue,only");
	/* 1:0A is 1:a; 0001:000b is 1:b */
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x1000a), "acme,silver");
	assert_string_equal(class_values(cfg, "blue", "eth0", 0x1000a), "acme,silver");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x1000b), ",x y");
	/* a YAML null is an empty value, the word "null" in plain style is text */
	assert_string_equal(class_values(cfg, NULL, "eth0", 0xffffffff), ",null");
	assert_string_equal(class_values(cfg, "blue", "eth1", 0x20001), "blue,eth1");
	assert_string_equal(class_values(cfg, NULL, "abcdefghijklmno", 0x10001), "long,name");
	assert_string_equal(class_values(cfg, NULL, "eth0.100@x", 0x10001), "vlan,1");
	/* misses: another id, device, namespace; a major or minor alone */
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10011), "-");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x100000), "-");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10), "-");
	assert_string_equal(class_values(cfg, NULL, "eth1", 0x10010), "-");
	assert_string_equal(class_values(cfg, NULL, "eth1", 0x20001), "-");
	assert_string_equal(class_values(cfg, "red", "eth1", 0x20001), "-");
	assert_string_equal(class_values(cfg, "blue2", "eth1", 0x20001), "-");
	assert_string_equal(class_values(cfg, NULL, "eth", 0x10010), "-");
	assert_string_equal(class_values(cfg, NULL, "abcdefghijklmnop", 0x10001), "-");
	assert_string_equal(class_values(cfg, NULL, "", 0x10010), "-");
	assert_null(tcx_config_class_labels(cfg, NULL, NULL, 0x10010));
	/* the entry found is the entry, its key as tc writes it */
	e = tcx_config_class_labels(cfg, "blue", "eth0", 0x10010);
	assert_ptr_equal(e, &cfg->classes.v[4]);
	assert_string_equal(e->netns, "blue");
	assert_string_equal(e->dev, "eth0");
	tcx_class_key_format(e, key);
	assert_string_equal(key, "blue/eth0 1:10");
	tcx_class_key_format(&cfg->classes.v[1], key);
	assert_string_equal(key, "eth0 1:a");
	tcx_class_key_format(&cfg->classes.v[3], key);
	assert_string_equal(key, "eth0 ffff:ffff");
	/* both blue entries share one netns string */
	assert_ptr_equal(cfg->classes.v[4].netns, cfg->classes.v[5].netns);
	assert_int_equal(cfg->classes.n_netns, 2);
	/* cookies are not classes, nor the other way round */
	assert_int_equal(cfg->n_cookies, 1);
	tcx_config_unref(cfg);

	/* flow style; no classes: nothing is found */
	cfg = load_ok("labels: [a]\nclasses: {eth0 1:1: [x], \"eth0 1:2\": {a: y}}\n");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10001), "x");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10002), "y");
	tcx_config_unref(cfg);
	cfg = load_ok("labels: [a]\nclasses: {}\n");
	assert_int_equal(cfg->classes.n, 0);
	assert_null(tcx_config_class_labels(cfg, NULL, "eth0", 0x10001));
	tcx_config_unref(cfg);
	cfg = tcx_config_default();
	assert_null(tcx_config_class_labels(cfg, "blue", "eth0", 0x10001));
	tcx_config_unref(cfg);
}

/* classes before labels: the same result as labels first; once labels are
 * known they are taken as they are parsed, and an anchor serves a later
 * alias. */
static void test_classes_before_labels(void **state)
{
	static const char *const yaml[] = {
	        "labels: [tenant, rule]\n"
	        "classes:\n"
	        "  \"eth0 1:1\": &v {rule: r, tenant: t}\n"
	        "  \"eth0 1:2\": *v\n",
	        "classes:\n"
	        "  \"eth0 1:1\": &v {rule: r, tenant: t}\n"
	        "  \"eth0 1:2\": *v\n"
	        "labels: [tenant, rule]\n",
	};

	for (size_t i = 0; i < 2; i++) {
		struct tcx_config *cfg = load_ok(yaml[i]);

		assert_int_equal(cfg->classes.n, 2);
		assert_string_equal(class_values(cfg, NULL, "eth0", 0x10001), "t,r");
		assert_string_equal(class_values(cfg, "x", "eth0", 0x10002), "t,r");
		tcx_config_unref(cfg);
	}
}

/* A reload is a new configuration: the old one, still held by the snapshots
 * made with it, keeps its classes; the new one has its own. */
static void test_classes_reload(void **state)
{
	struct tcx_config *old = load_ok("labels: [t]\nclasses: {\"eth0 1:1\": [a]}\n");
	struct tcx_config *cfg = load_ok("labels: [t]\nclasses: {\"eth0 1:1\": [b], "
	                                 "\"eth0 1:2\": [c]}\n");

	assert_string_equal(class_values(old, NULL, "eth0", 0x10001), "a");
	assert_string_equal(class_values(old, NULL, "eth0", 0x10002), "-");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10001), "b");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10002), "c");
	tcx_config_unref(old);
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x10001), "b");
	tcx_config_unref(cfg);
}

/* 100k classes, LibreQoS's shape (one device, majors of 65535 minors), and
 * 1000 more in namespaces: every one found again (the time it takes:
 * tests/bench/config_bench.sh). */
static void test_many_classes(void **state)
{
	enum { N = 100000, NS = 1000 };
	size_t cap = (size_t)(N + NS) * 48 + 64, len = 0, i;
	char *yaml = malloc(cap), want[32];
	struct errs e = {0};
	struct tcx_config *cfg;

	assert_non_null(yaml);
	len += (size_t)snprintf(yaml + len, cap - len, "labels: [id]\nclasses:\n");
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(yaml + len, cap - len, "  \"eth0 %zx:%zx\": [v%zu]\n",
		                        1 + i / 0xffff, 1 + i % 0xffff, i);
	for (i = 0; i < NS; i++)
		len += (size_t)snprintf(yaml + len, cap - len, "  \"ns%zu/eth0 1:%zx\": [n%zu]\n",
		                        i % 10, 1 + i, i);
	cfg = tcx_config_load_buffer("big.yaml", yaml, len, collect, &e);
	assert_null(e.text);
	assert_non_null(cfg);
	assert_int_equal(cfg->classes.n, N + NS);
	assert_int_equal(cfg->classes.n_netns, NS);
	for (i = 0; i < N; i++) {
		uint32_t id = (uint32_t)((1 + i / 0xffff) << 16 | (1 + i % 0xffff));

		snprintf(want, sizeof(want), "v%zu", i);
		assert_string_equal(class_values(cfg, NULL, "eth0", id), want);
		if (i >= NS) /* a namespace without an entry of its own */
			assert_string_equal(class_values(cfg, "ns3", "eth0", id), want);
	}
	for (i = 0; i < NS; i++) {
		char ns[8];

		snprintf(ns, sizeof(ns), "ns%zu", i % 10);
		snprintf(want, sizeof(want), "n%zu", i);
		assert_string_equal(class_values(cfg, ns, "eth0", (uint32_t)(0x10001 + i)), want);
	}
	assert_string_equal(class_values(cfg, NULL, "eth1", 0x10001), "-");
	assert_string_equal(class_values(cfg, NULL, "eth0", 0x30000 | (N % 0xffff + 1)), "-");
	tcx_config_unref(cfg);
	free(yaml);
}

static void test_err_classes(void **state)
{
	/* the key */
	expect_errors("labels: [a]\nclasses:\n  eth0: [x]\n",
	              "t.yaml:3:3: class 'eth0': expected \"DEVICE CLASSID\" or \"NETNS/DEVICE "
	              "CLASSID\", such as \"eth0 1:10\"\n");
	expect_errors("labels: [a]\nclasses:\n  \"eth0 \": [x]\n",
	              "t.yaml:3:3: class 'eth0 ': expected \"DEVICE CLASSID\" or \"NETNS/DEVICE "
	              "CLASSID\", such as \"eth0 1:10\"\n");
	expect_errors("labels: [a]\nclasses:\n  \"eth0  1:1\": [x]\n  \"eth0 1:1 \": [x]\n"
	              "  \"eth0\\t1:1\": [x]\n",
	              "t.yaml:3:3: class 'eth0  1:1': expected one space between the device and "
	              "the class id\n"
	              "t.yaml:4:3: class 'eth0 1:1 ': expected one space between the device and "
	              "the class id\n"
	              "t.yaml:5:3: class 'eth0\t1:1': expected one space between the device and "
	              "the class id\n");
	expect_errors("labels: [a]\nclasses:\n  \" 1:1\": [x]\n  \"abcdefghijklmnop 1:1\": [x]\n"
	              "  \"x/y/z 1:1\": [x]\n",
	              "t.yaml:3:3: class ' 1:1': invalid device name '': must be 1 to 15 "
	              "characters without '/' or whitespace\n"
	              "t.yaml:4:3: class 'abcdefghijklmnop 1:1': invalid device name "
	              "'abcdefghijklmnop': must be 1 to 15 characters without '/' or "
	              "whitespace\n"
	              "t.yaml:5:3: class 'x/y/z 1:1': invalid device name 'y/z': must be 1 to 15 "
	              "characters without '/' or whitespace\n");
	expect_errors("labels: [a]\nclasses:\n  \"/eth0 1:1\": [x]\n  \"../eth0 1:1\": [x]\n"
	              "  \"tenant-*/eth0 1:1\": [x]\n",
	              "t.yaml:3:3: class '/eth0 1:1': invalid netns '': must be a name under "
	              "/run/netns\n"
	              "t.yaml:4:3: class '../eth0 1:1': invalid netns '..': must be a name under "
	              "/run/netns\n"
	              "t.yaml:5:3: class 'tenant-*/eth0 1:1': netns 'tenant-*' is a glob: a class "
	              "names one namespace, or every one without NETNS/\n");
	expect_errors("labels: [a]\nclasses:\n  \"eth0 1:\": [x]\n  \"eth0 0:10\": [x]\n"
	              "  \"eth0 a:0\": [x]\n  \"eth0 1:10000\": [x]\n  \"eth0 root\": [x]\n"
	              "  \"eth0 :10\": [x]\n  \"eth0 0x1:0x10\": [x]\n  \"eth0 1:2:3\": [x]\n",
	              "t.yaml:3:3: class 'eth0 1:': '1:' is a qdisc handle; a class id has a "
	              "minor too, such as 1:10\n"
	              "t.yaml:4:3: class 'eth0 0:10': '0:10' has major 0; the major is the handle "
	              "of the class's qdisc, 1 to ffff\n"
	              "t.yaml:5:3: class 'eth0 a:0': 'a:0' is the qdisc a: itself; a class's "
	              "minor is 1 to ffff\n"
	              "t.yaml:6:3: class 'eth0 1:10000': invalid class id '1:10000': expected "
	              "MAJOR:MINOR, 1 to 4 hex digits each, such as 1:10\n"
	              "t.yaml:7:3: class 'eth0 root': invalid class id 'root': expected "
	              "MAJOR:MINOR, 1 to 4 hex digits each, such as 1:10\n"
	              "t.yaml:8:3: class 'eth0 :10': invalid class id ':10': expected "
	              "MAJOR:MINOR, 1 to 4 hex digits each, such as 1:10\n"
	              "t.yaml:9:3: class 'eth0 0x1:0x10': invalid class id '0x1:0x10': expected "
	              "MAJOR:MINOR, 1 to 4 hex digits each, such as 1:10\n"
	              "t.yaml:10:3: class 'eth0 1:2:3': invalid class id '1:2:3': expected "
	              "MAJOR:MINOR, 1 to 4 hex digits each, such as 1:10\n");
	expect_errors("labels: [a]\nclasses:\n  [eth0]: [x]\n",
	              "t.yaml:3:3: expected a scalar key, got a sequence\n");
	/* duplicates, after normalisation; the same class in another namespace
	 * is another entry */
	expect_errors("labels: [a]\nclasses:\n  \"eth0 1:a\": [x]\n  \"blue/eth0 1:a\": [x]\n"
	              "  \"eth0 0001:000A\": [y]\n  blue/eth0 1:A: [y]\n",
	              "t.yaml:5:3: duplicate class 'eth0 1:a' (first at 3:3)\n"
	              "t.yaml:6:3: duplicate class 'blue/eth0 1:a' (first at 4:3)\n");
	/* the values, as for cookies */
	expect_errors("labels: [tenant, rule]\nclasses:\n  \"eth0 1:0a\": {tenant: acme}\n",
	              "t.yaml:3:16: class 'eth0 1:a': missing value for label 'rule'\n");
	expect_errors("labels: [tenant, rule]\nclasses:\n  \"eth0 1:a\": {tenant: a, rule: b, "
	              "foo: c}\n",
	              "t.yaml:3:36: class 'eth0 1:a': unknown label 'foo'\n");
	expect_errors("labels: [tenant, rule]\nclasses:\n  \"eth0 1:a\": [acme]\n",
	              "t.yaml:3:15: class 'eth0 1:a': expected 2 values, got 1\n");
	expect_errors("labels: [tenant, rule]\nclasses:\n  \"eth0 1:a\": [acme, [web]]\n",
	              "t.yaml:3:22: class 'eth0 1:a': label values must be scalars\n");
	expect_errors("labels: [tenant, rule]\nclasses:\n  \"eth0 1:a\": acme\n",
	              "t.yaml:3:15: class 'eth0 1:a': expected a mapping or a sequence of label "
	              "values, got a scalar\n");
	expect_errors("labels: [a]\nclasses:\n  \"eth0 1:a\": [\"x\\0y\"]\n",
	              "t.yaml:3:16: value 'x' holds a NUL byte (its byte 2)\n");
	expect_errors("labels: [a, b]\nclasses:\n  \"eth0 1:a\": {a: x, a: y, b: z}\n",
	              "t.yaml:3:22: duplicate key 'a' (first at 3:16)\n");
	expect_errors("classes:\n  \"eth0 1:a\": [acme]\n",
	              "t.yaml:2:15: class 'eth0 1:a': no labels are declared (add a 'labels' "
	              "list)\n");
	expect_errors("labels: [a]\nclasses: [\"eth0 1:a\"]\n",
	              "t.yaml:2:10: 'classes' must be a mapping, got a sequence\n");
	/* every problem at once: those of classes before labels once labels are
	 * known, after those found as the document is parsed */
	expect_errors("classes:\n  \"eth0 1:\": [x]\n  \"eth0 1:1\": [x, y]\n"
	              "labels: [a]\n"
	              "cookies: {\"0g\": [x]}\n",
	              "t.yaml:5:11: invalid hex cookie '0g': not a hex digit\n"
	              "t.yaml:2:3: class 'eth0 1:': '1:' is a qdisc handle; a class id has a "
	              "minor too, such as 1:10\n"
	              "t.yaml:3:15: class 'eth0 1:1': expected 1 values, got 2\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_example_file),
	        cmocka_unit_test(test_default),
	        cmocka_unit_test(test_minimal_defaults),
	        cmocka_unit_test(test_intervals),
	        cmocka_unit_test(test_targets),
	        cmocka_unit_test(test_cookie_forms),
	        cmocka_unit_test(test_label_order_independent),
	        cmocka_unit_test(test_decoders_parsed),
	        cmocka_unit_test(test_refcount),
	        cmocka_unit_test(test_many_cookies),
	        cmocka_unit_test(test_err_file),
	        cmocka_unit_test(test_err_file_kind_and_size),
	        cmocka_unit_test(test_err_deep_nesting),
	        cmocka_unit_test(test_cookies_streamed),
	        cmocka_unit_test(test_fast_path_same),
	        cmocka_unit_test(test_fast_path_random),
	        cmocka_unit_test(test_err_syntax),
	        cmocka_unit_test(test_err_empty_and_top),
	        cmocka_unit_test(test_err_keys),
	        cmocka_unit_test(test_liveness_interval),
	        cmocka_unit_test(test_sweep_interval),
	        cmocka_unit_test(test_err_types),
	        cmocka_unit_test(test_err_values),
	        cmocka_unit_test(test_err_integers),
	        cmocka_unit_test(test_err_parent),
	        cmocka_unit_test(test_err_hex),
	        cmocka_unit_test(test_err_label_names),
	        cmocka_unit_test(test_err_nul),
	        cmocka_unit_test(test_err_cookie_values),
	        cmocka_unit_test(test_err_decoders),
	        cmocka_unit_test(test_err_unmapped),
	        cmocka_unit_test(test_err_targets),
	        cmocka_unit_test(test_netns_glob),
	        cmocka_unit_test(test_devices),
	        cmocka_unit_test(test_http_section),
	        cmocka_unit_test(test_err_all_reported),
	        cmocka_unit_test(test_aggregate_families),
	        cmocka_unit_test(test_err_aggregate),
	        cmocka_unit_test(test_families_xstats),
	        cmocka_unit_test(test_err_families_xstats),
	        cmocka_unit_test(test_class_forms),
	        cmocka_unit_test(test_classes_before_labels),
	        cmocka_unit_test(test_classes_reload),
	        cmocka_unit_test(test_many_classes),
	        cmocka_unit_test(test_err_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
