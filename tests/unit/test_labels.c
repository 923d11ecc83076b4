/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of cookie -> label resolution (config/labels.c), and of the
 * label sets a snapshot interns with it (tcx_snapshot_classify()). Linked
 * with -Wl,--wrap=tcx_labels_resolve: every call is counted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "agent/render/prom.h"
#include "agent/render/render.h"
#include "agent/snmp/rows.h"
#include "collectors/snapshot.h"
#include "config/config.h"

/* Calls of tcx_labels_resolve(), from anywhere. */
static unsigned resolve_calls;

enum tcx_map_kind __real_tcx_labels_resolve(const struct tcx_config *cfg, const uint8_t *cookie,
                                            size_t len, const char **values,
                                            struct tcx_label_buf *buf);
enum tcx_map_kind __wrap_tcx_labels_resolve(const struct tcx_config *cfg, const uint8_t *cookie,
                                            size_t len, const char **values,
                                            struct tcx_label_buf *buf);
enum tcx_map_kind __wrap_tcx_labels_resolve(const struct tcx_config *cfg, const uint8_t *cookie,
                                            size_t len, const char **values,
                                            struct tcx_label_buf *buf)
{
	resolve_calls++;
	return __real_tcx_labels_resolve(cfg, cookie, len, values, buf);
}

static void print_msg(void *arg, const char *msg)
{
	fprintf(stderr, "config error: %s\n", msg);
}

static struct tcx_config *cfg_from(const char *yaml)
{
	struct tcx_config *cfg =
	        tcx_config_load_buffer("t.yaml", yaml, strlen(yaml), print_msg, NULL);

	assert_non_null(cfg);
	return cfg;
}

/* Resolve and check the kind; values land in v. */
#define RESOLVE(cfg, kind, ...)                                                                    \
	do {                                                                                       \
		const uint8_t c_[] = {__VA_ARGS__};                                                \
		assert_int_equal(tcx_labels_resolve(cfg, c_, sizeof(c_), v, &buf), kind);          \
	} while (0)

static void test_exact(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [tenant, rule]\n"
	                                  "cookies:\n"
	                                  "  \"01\": [one, byte]\n"
	                                  "  \"0001\": [two, bytes]\n"
	                                  "  \"000102030405060708090a0b0c0d0e0f\": [sixteen, max]\n"
	                                  "  \"ff\": {rule: r, tenant: t}\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_EXACT, 0x01);
	assert_string_equal(v[0], "one");
	assert_string_equal(v[1], "byte");
	/* same trailing byte, different length: a different cookie */
	RESOLVE(cfg, TCX_MAP_EXACT, 0x00, 0x01);
	assert_string_equal(v[0], "two");
	assert_string_equal(v[1], "bytes");
	RESOLVE(cfg, TCX_MAP_EXACT, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	assert_string_equal(v[0], "sixteen");
	assert_string_equal(v[1], "max");
	RESOLVE(cfg, TCX_MAP_EXACT, 0xff);
	assert_string_equal(v[0], "t");
	assert_string_equal(v[1], "r");
	/* misses, no decoders: unmapped, values empty */
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0x00, 0x00, 0x01);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "");
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0x02);
	assert_string_equal(v[0], "");
	tcx_config_unref(cfg);
}

static void test_none(void **state)
{
	struct tcx_config *cfg =
	        cfg_from("labels: [a, b]\n"
	                 "decoders: [{type: fields, fields: [{label: a, bytes: 1}]}]\n");
	const char *v[TCX_MAX_LABELS] = {"junk", "junk"};
	struct tcx_label_buf buf;
	const uint8_t c = 0;

	assert_int_equal(tcx_labels_resolve(cfg, &c, 0, v, &buf), TCX_MAP_NONE);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "");
	tcx_config_unref(cfg);
}

/* A config without labels resolves without touching values. */
static void test_no_labels(void **state)
{
	struct tcx_config *cfg = tcx_config_default();
	const char *v[1] = {"untouched"};
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0xaa, 0xbb);
	assert_string_equal(v[0], "untouched");
	tcx_config_unref(cfg);
}

static void test_ascii(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [tenant, rule]\n"
	                                  "decoders:\n"
	                                  "  - {type: ascii, label: rule}\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;
	uint8_t big[TCX_LABEL_VALUE_MAX];

	RESOLVE(cfg, TCX_MAP_DECODED, 'w', 'e', 'b', ' ', '~');
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "web ~");
	/* non-printable byte: the decoder fails, nothing else matches */
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 'w', 'e', 'b', 0x7f);
	assert_string_equal(v[1], "");
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0x1f, 'a');
	/* longer than a label value can hold: fails (cookies are at most 16 bytes
	 * from the kernel, but the resolver must not overflow) */
	memset(big, 'x', sizeof(big));
	assert_int_equal(tcx_labels_resolve(cfg, big, sizeof(big), v, &buf), TCX_MAP_UNMAPPED);
	assert_int_equal(tcx_labels_resolve(cfg, big, sizeof(big) - 1, v, &buf), TCX_MAP_DECODED);
	assert_int_equal(strlen(v[1]), TCX_LABEL_VALUE_MAX - 1);
	tcx_config_unref(cfg);
}

/* The ascii decoder fails on a non-printable byte: the next decoder gets it. */
static void test_ascii_falls_through(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [tenant, rule]\n"
	                                  "decoders:\n"
	                                  "  - {type: ascii, label: rule}\n"
	                                  "  - type: fields\n"
	                                  "    fields: [{label: tenant, bytes: 2}]\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_DECODED, 'A', 'B');
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "AB");
	RESOLVE(cfg, TCX_MAP_DECODED, 'A', 0x00);
	assert_string_equal(v[0], "16640"); /* 0x4100 */
	assert_string_equal(v[1], "");
	tcx_config_unref(cfg);
}

static void test_fields(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [tenant, rule, big]\n"
	                                  "decoders:\n"
	                                  "  - type: fields\n"
	                                  "    length: 8\n"
	                                  "    fields: [{label: big, bytes: 8}]\n"
	                                  "  - type: fields\n"
	                                  "    fields:\n"
	                                  "      - {label: tenant, bytes: 4}\n"
	                                  "      - {bytes: 2}\n"
	                                  "      - {label: rule, bytes: 2}\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_DECODED, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "");
	assert_string_equal(v[2], "18446744073709551615");
	RESOLVE(cfg, TCX_MAP_DECODED, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08);
	assert_string_equal(v[2], "72623859790382856");

	/* 9 bytes: the 8-byte decoder is skipped; big-endian, padding skipped,
	 * the trailing byte ignored */
	RESOLVE(cfg, TCX_MAP_DECODED, 0x00, 0x00, 0x01, 0x02, 0xde, 0xad, 0x00, 0x07, 0x99);
	assert_string_equal(v[0], "258");
	assert_string_equal(v[1], "7");
	assert_string_equal(v[2], "");
	RESOLVE(cfg, TCX_MAP_DECODED, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0);
	assert_string_equal(v[0], "4294967295");
	assert_string_equal(v[1], "65535");
	/* shorter than the fields: no match */
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0, 0, 0, 1, 0, 0, 0);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "");
	tcx_config_unref(cfg);
}

/* This test assumes a little-endian host (x86_64): the ovs layout reads the
 * cookie as four host-order u32 words. */
static void test_uuid(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [flow, raw]\n"
	                                  "decoders:\n"
	                                  "  - {type: uuid, label: flow, prefix: \"00\"}\n"
	                                  "  - {type: uuid, label: raw, layout: rfc4122}\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;
	const uint16_t probe = 1;

	if (*(const uint8_t *)&probe != 1)
		skip(); /* big-endian: the expected ovs string below would differ */

	/* ovs: w0=0x03020100 w1=0x07060504 w2=0x0b0a0908 w3=0x0f0e0d0c */
	RESOLVE(cfg, TCX_MAP_DECODED, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
	        0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f);
	assert_string_equal(v[0], "03020100-0706-0504-0b0a-09080f0e0d0c");
	assert_string_equal(v[1], "");
	RESOLVE(cfg, TCX_MAP_DECODED, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
	        0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0xff);
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "10111213-1415-1617-1819-1a1b1c1d1eff");
	/* not 16 bytes: neither matches */
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
	        0x0a, 0x0b, 0x0c, 0x0d, 0x0e);
	RESOLVE(cfg, TCX_MAP_UNMAPPED, 0x00);
	tcx_config_unref(cfg);
}

/* First matching decoder wins; the exact map beats every decoder;
 * `length` and `prefix` select. */
static void test_precedence(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [a, b, c]\n"
	                                  "cookies:\n"
	                                  "  \"4142\": [exact, e, e]\n"
	                                  "decoders:\n"
	                                  "  - {type: ascii, label: a, prefix: \"5258\"}\n"
	                                  "  - {type: ascii, label: b, length: 3}\n"
	                                  "  - {type: ascii, label: c}\n"
	                                  "  - type: fields\n"
	                                  "    fields: [{label: a, bytes: 1}]\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_EXACT, 'A', 'B');
	assert_string_equal(v[0], "exact");
	/* prefix "RX" */
	RESOLVE(cfg, TCX_MAP_DECODED, 'R', 'X', 'Y');
	assert_string_equal(v[0], "RXY");
	assert_string_equal(v[1], "");
	assert_string_equal(v[2], "");
	/* the prefix itself, nothing after it */
	RESOLVE(cfg, TCX_MAP_DECODED, 'R', 'X');
	assert_string_equal(v[0], "RX");
	/* only the first prefix byte: decoder 1 skipped, length 3 matches decoder 2 */
	RESOLVE(cfg, TCX_MAP_DECODED, 'R', 'Y', 'Z');
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "RYZ");
	assert_string_equal(v[2], "");
	/* shorter than the prefix, not length 3: decoder 3 */
	RESOLVE(cfg, TCX_MAP_DECODED, 'R');
	assert_string_equal(v[0], "");
	assert_string_equal(v[1], "");
	assert_string_equal(v[2], "R");
	RESOLVE(cfg, TCX_MAP_DECODED, 'a', 'b', 'c', 'd');
	assert_string_equal(v[2], "abcd");
	/* no ascii decoder takes a non-printable cookie: the fields decoder */
	RESOLVE(cfg, TCX_MAP_DECODED, 0x80, 0x00, 0x01);
	assert_string_equal(v[0], "128");
	assert_string_equal(v[1], "");
	assert_string_equal(v[2], "");
	tcx_config_unref(cfg);
}

/* A decoded value lives in buf; an exact one in cfg. */
static void test_values_storage(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [a]\n"
	                                  "cookies: {\"01\": [x]}\n"
	                                  "decoders: [{type: ascii, label: a}]\n");
	const char *v[TCX_MAX_LABELS];
	struct tcx_label_buf buf;

	RESOLVE(cfg, TCX_MAP_EXACT, 0x01);
	assert_ptr_equal(v[0], cfg->cookies[0].values[0]);
	RESOLVE(cfg, TCX_MAP_DECODED, 'q');
	assert_ptr_equal(v[0], buf.v[0]);
	assert_string_equal(v[0], "q");
	tcx_config_unref(cfg);
}

static void test_cookie_hex(void **state)
{
	const uint8_t c[] = {0x00, 0x1a, 0xff, 0x09, 0xa0};
	char out[2 * TCX_COOKIE_MAX + 1];

	memset(out, 'X', sizeof(out));
	tcx_cookie_hex(c, sizeof(c), out);
	assert_string_equal(out, "001aff09a0");
	tcx_cookie_hex(c, 0, out);
	assert_string_equal(out, "");
	tcx_cookie_hex((const uint8_t *)"\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad"
	                                "\xbe\xef",
	               16, out);
	assert_string_equal(out, "deadbeefdeadbeefdeadbeefdeadbeef");
	/* Every byte value at every place of every length, against printf. */
	for (unsigned v = 0; v < 256; v++)
		for (size_t len = 1; len <= TCX_COOKIE_MAX; len++)
			for (size_t at = 0; at < len; at++) {
				uint8_t in[TCX_COOKIE_MAX];
				char want[2 * TCX_COOKIE_MAX + 1];

				for (size_t k = 0; k < len; k++) {
					in[k] = (uint8_t)(k == at ? v : 0x5a + 37 * k);
					snprintf(want + 2 * k, 3, "%02x", in[k]);
				}
				memset(out, 'X', sizeof(out));
				tcx_cookie_hex(in, len, out);
				assert_string_equal(out, want);
			}
}

static void test_label_names(void **state)
{
	static const char *const valid[] = {"a", "_", "_x", "tenant", "Rule_2", "a__b", "A9"};
	static const char *const invalid[] = {"", "1a", "__", "__x", "a-b", "a.b", "a b", "é"};
	static const char *const reserved[] = {
	        "device", "block",  "parent", "chain", "protocol", "pref", "kind",    "handle",
	        "order",  "action", "cookie", "netns", "tin",      "band", "mode",    "code",
	        "reason", "cause",  "row",    "type",  "version",  "le",   "quantile"};
	size_t i;

	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		assert_int_equal(tcx_label_name_valid(valid[i]), 1);
		assert_int_equal(tcx_label_name_reserved(valid[i]), 0);
	}
	for (i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		assert_int_equal(tcx_label_name_valid(invalid[i]), 0);
	assert_int_equal(tcx_label_name_valid(NULL), 0);
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		assert_int_equal(tcx_label_name_reserved(reserved[i]), 1);
		assert_int_equal(tcx_label_name_valid(reserved[i]), 1);
	}
	assert_int_equal(tcx_label_name_reserved("Dev"), 0);
	assert_int_equal(tcx_label_name_reserved("devs"), 0);
	assert_int_equal(tcx_label_name_reserved("de"), 0);
	assert_int_equal(tcx_label_name_reserved("tenant"), 0);
	assert_int_equal(tcx_label_name_reserved("target"), 0); /* no label of the exposition */
}

/* ---- label sets ------------------------------------------------------------------------ */

/* One target and filter; an action per cookie (len 0: none), each cookie
 * given as a string. */
static struct tcx_snapshot *snap_cookies(struct tcx_config *cfg, const char *const *cookies,
                                         size_t n)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct tcx_target *t = tcx_snapshot_add_target(s);
	struct tcx_filter *f = tcx_snapshot_add_filter(s);

	snprintf(t->dev, sizeof(t->dev), "eth0");
	snprintf(t->parent_name, sizeof(t->parent_name), "ingress");
	t->ok = 1;
	f->kind = (uint8_t)tcx_snapshot_kind(s, "flower");
	f->handle = 1;
	f->n_actions = (uint16_t)n;
	for (size_t i = 0; i < n; i++) {
		struct tcx_action *a = tcx_snapshot_add_action(s);

		a->order = (uint16_t)(i + 1);
		a->kind = (uint8_t)tcx_snapshot_kind(s, "gact");
		a->cookie_len = (uint8_t)strlen(cookies[i]);
		memcpy(a->cookie, cookies[i], a->cookie_len);
	}
	return s;
}

static void render_all(const struct tcx_snapshot *s, const struct tcx_rowlabels *l)
{
	for (int fmt = TCX_FMT_PROMETHEUS; fmt <= TCX_FMT_JSON; fmt++) {
		struct tcx_buf b;

		tcx_buf_init_mem(&b);
		assert_int_equal(tcx_render(s, (enum tcx_format)fmt, l, &b), 0);
		tcx_buf_free(&b);
	}
}

/* Each distinct cookie is resolved once, into a set of its own when it
 * maps; actions of the same cookie share the set; actions without a cookie,
 * and those whose cookie nothing maps, share one each. Outputs read the
 * sets: rendering and SNMP label values resolve nothing. */
static void test_sets_interned(void **state)
{
	struct tcx_config *cfg = cfg_from("labels: [tenant, rule]\n"
	                                  "cookies:\n"
	                                  "  \"41\": [acme, first]\n"
	                                  "  \"42\": [acme, second]\n"
	                                  "decoders:\n"
	                                  "  - {type: ascii, label: rule, prefix: \"7a\"}\n");
	static const char *const cookies[] = {"A", "B", "A", "", "zed", "?", "!", "zed", "?", ""};
	struct tcx_snapshot *s = snap_cookies(cfg, cookies, 10);
	const struct tcx_action *a = s->actions;
	struct tcx_rowlabels *l;
	struct tcx_snmp_ids ids;
	struct tcx_snmp_rows rows;

	resolve_calls = 0;
	tcx_snapshot_classify(s);
	/* A, B, zed, ? and ! */
	assert_int_equal(resolve_calls, 5);
	assert_int_equal(a[0].labels, a[2].labels);
	assert_int_not_equal(a[0].labels, a[1].labels);
	assert_int_equal(a[4].labels, a[7].labels);
	assert_int_equal(a[3].labels, TCX_LABELSET_NONE);
	assert_int_equal(a[9].labels, TCX_LABELSET_NONE);
	assert_int_equal(a[5].labels, TCX_LABELSET_UNMAPPED);
	assert_int_equal(a[6].labels, TCX_LABELSET_UNMAPPED);
	assert_int_equal(a[8].labels, TCX_LABELSET_UNMAPPED);
	assert_int_equal(s->sets.n, 5); /* none, unmapped, A, B, zed */
	assert_int_equal(tcx_labelset_map(s, a[0].labels), TCX_MAP_EXACT);
	assert_int_equal(tcx_labelset_map(s, a[4].labels), TCX_MAP_DECODED);
	assert_int_equal(tcx_labelset_map(s, TCX_LABELSET_NONE), TCX_MAP_NONE);
	assert_int_equal(tcx_labelset_map(s, TCX_LABELSET_UNMAPPED), TCX_MAP_UNMAPPED);
	assert_string_equal(tcx_labelset_value(s, a[0].labels, 0), "acme");
	assert_string_equal(tcx_labelset_value(s, a[0].labels, 1), "first");
	assert_string_equal(tcx_labelset_value(s, a[1].labels, 1), "second");
	assert_string_equal(tcx_labelset_value(s, a[4].labels, 0), "");
	assert_string_equal(tcx_labelset_value(s, a[4].labels, 1), "zed");
	assert_string_equal(tcx_labelset_value(s, TCX_LABELSET_UNMAPPED, 1), "");
	assert_int_equal(s->unmapped_cookies, 3);

	/* classified again (as the collector may): the same sets */
	tcx_snapshot_classify(s);
	assert_int_equal(resolve_calls, 10);
	assert_int_equal(s->sets.n, 5);
	assert_int_equal(s->unmapped_cookies, 3);

	/* every output reads the sets */
	l = tcx_rowlabels_build(s);
	assert_non_null(l);
	render_all(s, l);
	render_all(s, NULL);
	tcx_snmp_ids_init(&ids, TCX_SNMP_ACTIONS);
	assert_int_equal(tcx_snmp_rows_build(&ids, s, 100, NULL, &rows), 0);
	for (size_t i = 0; i < rows.n; i++)
		for (uint32_t k = 1; k <= 2; k++)
			tcx_snmp_label_value(&rows, &rows.rows[i], k);
	assert_int_equal(resolve_calls, 10);
	tcx_snmp_rows_free(&rows);
	tcx_snmp_ids_free(&ids);
	tcx_rowlabels_free(l);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
}

/* Without a configuration, cookies are unmapped and resolved by nobody. */
static void test_sets_without_config(void **state)
{
	static const char *const cookies[] = {"A", "", "A"};
	struct tcx_snapshot *s = snap_cookies(NULL, cookies, 3);

	resolve_calls = 0;
	tcx_snapshot_classify(s);
	assert_int_equal(resolve_calls, 0);
	assert_int_equal(s->actions[0].labels, TCX_LABELSET_UNMAPPED);
	assert_int_equal(s->actions[1].labels, TCX_LABELSET_NONE);
	assert_int_equal(s->unmapped_cookies, 2);
	tcx_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_exact),
	        cmocka_unit_test(test_none),
	        cmocka_unit_test(test_no_labels),
	        cmocka_unit_test(test_ascii),
	        cmocka_unit_test(test_ascii_falls_through),
	        cmocka_unit_test(test_fields),
	        cmocka_unit_test(test_uuid),
	        cmocka_unit_test(test_precedence),
	        cmocka_unit_test(test_values_storage),
	        cmocka_unit_test(test_cookie_hex),
	        cmocka_unit_test(test_label_names),
	        cmocka_unit_test(test_sets_interned),
	        cmocka_unit_test(test_sets_without_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
