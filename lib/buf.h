/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An output buffer: either grows in memory, or is flushed to a file
 * descriptor whenever it fills, so that output of any size streams through
 * a fixed amount of memory. */
#ifndef TCX_BUF_H
#define TCX_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where a full buffer goes: returns 0 or -errno. */
typedef int (*tcx_buf_sink)(void *arg, const char *p, size_t len);

struct tcx_buf {
	char *p;
	size_t len, cap;
	tcx_buf_sink sink; /* set: flush through it when full; NULL: grow */
	void *sink_arg;
	int err; /* errno of the first failure; later writes are ignored */
};

void tcx_buf_init_mem(struct tcx_buf *b);
int tcx_buf_init_fd(struct tcx_buf *b, int fd);
int tcx_buf_init_sink(struct tcx_buf *b, tcx_buf_sink sink, void *arg);
/* Flush (fd and sink modes); returns 0 or -errno. */
int tcx_buf_flush(struct tcx_buf *b);
void tcx_buf_free(struct tcx_buf *b);
/* Make room for n more bytes, and allocate the buffer even for n = 0;
 * returns 0 or -errno (b->err holds the errno). */
int tcx_buf_reserve(struct tcx_buf *b, size_t n);

static inline void tcx_buf_put(struct tcx_buf *b, const char *s, size_t n)
{
	/* memcpy() must not see NULL even to copy nothing: an empty slice
	 * (an empty escaped kind) may come from a buffer never written. */
	if (!n || (b->cap - b->len < n && tcx_buf_reserve(b, n) < 0))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void tcx_buf_puts(struct tcx_buf *b, const char *s)
{
	tcx_buf_put(b, s, strlen(s));
}

static inline void tcx_buf_putc(struct tcx_buf *b, char c)
{
	if (b->cap == b->len && tcx_buf_reserve(b, 1) < 0)
		return;
	b->p[b->len++] = c;
}

/* Decimal digits of v into out (at least 20 bytes); returns the count. */
size_t tcx_fmt_u64(char *out, uint64_t v);

static inline void tcx_buf_u64(struct tcx_buf *b, uint64_t v)
{
	if (b->cap - b->len < 20 && tcx_buf_reserve(b, 20) < 0)
		return;
	b->len += tcx_fmt_u64(b->p + b->len, v);
}
/* v * 10^-digits (digits <= 19), exactly, in plain decimal: "0.000064",
 * "1.5", "2"; no trailing zeros. */
void tcx_buf_fixed(struct tcx_buf *b, uint64_t v, unsigned digits);
/* A float as the Prometheus Go client prints one: the shortest decimal that
 * reads back as the same double ("0.1", "1796034030.123", "1e-07"), NaN,
 * +Inf or -Inf. out holds at least TCX_FMT_DOUBLE_MAX bytes; returns the
 * length. The one way every float of every format is printed. */
#define TCX_FMT_DOUBLE_MAX 32
size_t tcx_fmt_double(char *out, double v);
void tcx_buf_double(struct tcx_buf *b, double v);
void tcx_buf_printf(struct tcx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from the kernel or the configuration (names, kinds, label values) is
 * written by one rule, so that every output is valid UTF-8 and distinct
 * strings stay distinct: each byte that is not part of a valid UTF-8
 * sequence is written as \xHH (lower-case hex); valid UTF-8 is kept as it
 * is, except that a backslash followed by x, by another backslash or by a
 * byte written \xHH is written as two (so "\xff" becomes "\\xff", apart from
 * the byte 0xff, "\xff"). The format's own escaping then applies to that text. */
enum tcx_escape {
	TCX_ESC_NONE,  /* the rule only (SNMP strings) */
	TCX_ESC_LABEL, /* then \ " and newline escaped, for the text exposition formats */
	TCX_ESC_JSON,  /* then as a JSON string's contents */
};
void tcx_buf_escape(struct tcx_buf *b, const char *s, enum tcx_escape how);
/* The most bytes one byte becomes with TCX_ESC_LABEL: a byte that is not
 * UTF-8, \xHH with its backslash escaped. */
#define TCX_ESC_LABEL_GROWTH 5

static inline void tcx_buf_escape_label(struct tcx_buf *b, const char *s)
{
	tcx_buf_escape(b, s, TCX_ESC_LABEL);
}

/* A JSON string, with its quotes. */
static inline void tcx_buf_json_string(struct tcx_buf *b, const char *s)
{
	tcx_buf_putc(b, '"');
	tcx_buf_escape(b, s, TCX_ESC_JSON);
	tcx_buf_putc(b, '"');
}

#endif
