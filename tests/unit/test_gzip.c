/* SPDX-License-Identifier: GPL-2.0-or-later */
/* agent/render/gzip.c, with whichever codec configure chose: every body,
 * fed in pieces as the renderers write it, comes out as one gzip member
 * that zlib inflates to the same bytes. Bodies of no bytes, of exactly one
 * piece, of one piece and one byte, of many pieces of text, and of random
 * bytes (which do not compress: the output outgrows each step's room). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "agent/render/gzip.h"
#include "build.h"

/* The size of a piece: what the text buffer holds before it flushes. */
static size_t piece_size(void)
{
	struct tcx_gzip g;
	struct tcx_buf text, out;
	size_t n;

	tcx_buf_init_mem(&out);
	assert_int_equal(tcx_gzip_open(&g, &text, &out), 0);
	n = text.cap;
	assert_int_equal(tcx_gzip_close(&g, &text, 0), 0);
	tcx_buf_free(&out);
	assert_true(n >= 4096);
	return n;
}

/* in[0..len) inflated by zlib must be want[0..wlen), from one gzip member
 * that ends where the input does. */
static void assert_gunzips_to(const char *in, size_t len, const char *want, size_t wlen)
{
	z_stream z;
	char *out = malloc(wlen + 1);

	assert_non_null(out);
	assert_true(len >= 18 && (unsigned char)in[0] == 0x1f && (unsigned char)in[1] == 0x8b);
	memset(&z, 0, sizeof(z));
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)wlen + 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.avail_in, 0); /* no second member, nothing after it */
	assert_int_equal(z.total_out, wlen);
	assert_memory_equal(out, want, wlen);
	inflateEnd(&z);
	free(out);
}

/* body[0..len) through the gzip module, written in slices of at most
 * chunk bytes (as the renderers write lines); checked by zlib. */
static void roundtrip(const char *body, size_t len, size_t chunk)
{
	struct tcx_gzip g;
	struct tcx_buf text, out;

	tcx_buf_init_mem(&out);
	assert_int_equal(tcx_gzip_open(&g, &text, &out), 0);
	for (size_t off = 0; off < len; off += chunk)
		tcx_buf_put(&text, body + off, len - off < chunk ? len - off : chunk);
	assert_int_equal(text.err, 0);
	assert_int_equal(tcx_gzip_close(&g, &text, 0), 0);
	assert_int_equal(out.err, 0);
	assert_null(text.p); /* freed */
	assert_gunzips_to(out.p, out.len, body, len);
	tcx_buf_free(&out);
}

/* Exposition-like text: n bytes of lines that differ in their numbers. */
static char *text_body(size_t n)
{
	char *p = malloc(n + 64);
	size_t len = 0;

	assert_non_null(p);
	for (unsigned i = 0; len < n; i++)
		len += (size_t)sprintf(p + len,
		                       "tc_action_bytes_total{device=\"e%u\",handle=\"%u\"} %u\n",
		                       i % 7, i, i * 2654435761u);
	return p;
}

static void test_empty(void **state)
{
	roundtrip("", 0, 1);
}

static void test_one_piece(void **state)
{
	size_t n = piece_size();
	char *body = text_body(n);

	/* one write that fills the text buffer exactly, flushed by close */
	roundtrip(body, n, n);
	/* the same bytes in lines: the buffer flushes before it is full */
	roundtrip(body, n, 61);
	/* one byte more than a piece: the second piece holds one byte */
	free(body);
	body = text_body(n + 1);
	roundtrip(body, n + 1, n + 1);
	roundtrip(body, n + 1, n);
	free(body);
}

static void test_many_pieces(void **state)
{
	size_t n = 9 * piece_size() + 12345;
	char *body = text_body(n);

	roundtrip(body, n, 61);
	roundtrip(body, n, 4096);
	/* writes of two pieces at once */
	roundtrip(body, n, 2 * piece_size() + 3);
	free(body);
}

static void test_incompressible(void **state)
{
	size_t n = 5 * piece_size() + 7;
	char *body = malloc(n);
	uint64_t x = 88172645463325252u;

	assert_non_null(body);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		body[i] = (char)(x >> 32);
	}
	roundtrip(body, n, 1000);
	roundtrip(body, n, n);
	free(body);
}

/* A rendering that failed: its error comes back, nothing is compressed
 * further, and everything is freed (the sanitizer build checks leaks). */
static void test_render_error(void **state)
{
	struct tcx_gzip g;
	struct tcx_buf text, out;

	tcx_buf_init_mem(&out);
	assert_int_equal(tcx_gzip_open(&g, &text, &out), 0);
	tcx_buf_puts(&text, "partial\n");
	assert_int_equal(tcx_gzip_close(&g, &text, -ENOMEM), -ENOMEM);
	assert_null(text.p);
	tcx_buf_free(&out);
}

/* The codec is named with its version, as build info gives it. */
static void test_codec_name(void **state)
{
	const char *c = tcx_gzip_codec();

#ifdef HAVE_ISAL
	assert_true(strncmp(c, "isa-l/", 6) == 0);
#else
	assert_string_equal(c, "zlib/" ZLIB_VERSION);
#endif
	assert_true(strlen(c) > 6 && !strchr(c, ' '));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_empty),        cmocka_unit_test(test_one_piece),
	        cmocka_unit_test(test_many_pieces),  cmocka_unit_test(test_incompressible),
	        cmocka_unit_test(test_render_error), cmocka_unit_test(test_codec_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
