/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/grow.h"

#define FD_BUFSZ (256 * 1024)

void tcx_buf_init_mem(struct tcx_buf *b)
{
	memset(b, 0, sizeof(*b));
}

int tcx_buf_init_sink(struct tcx_buf *b, tcx_buf_sink sink, void *arg)
{
	memset(b, 0, sizeof(*b));
	b->sink = sink;
	b->sink_arg = arg;
	b->p = malloc(FD_BUFSZ);
	if (!b->p)
		return -ENOMEM;
	b->cap = FD_BUFSZ;
	return 0;
}

static int fd_sink(void *arg, const char *p, size_t len)
{
	int fd = (int)(intptr_t)arg;
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

int tcx_buf_init_fd(struct tcx_buf *b, int fd)
{
	return tcx_buf_init_sink(b, fd_sink, (void *)(intptr_t)fd);
}

int tcx_buf_flush(struct tcx_buf *b)
{
	int e;

	if (!b->sink || b->err)
		return -b->err;
	if (b->len && (e = b->sink(b->sink_arg, b->p, b->len)) != 0) {
		b->err = -e;
		return e;
	}
	b->len = 0;
	return 0;
}

void tcx_buf_free(struct tcx_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int tcx_buf_reserve(struct tcx_buf *b, size_t n)
{
	if (b->err)
		return -b->err;
	if (b->cap - b->len >= n && b->p)
		return 0;
	if (b->sink) {
		if (tcx_buf_flush(b) < 0)
			return -b->err;
		if (b->cap >= n)
			return 0;
	}
	/* (a buffer that has no memory yet gets some, even for n = 0) */
	if (n > SIZE_MAX - b->len - 1 ||
	    tcx_grow(&b->p, &b->cap, b->len + (n ? n : 1), 1, 4096) < 0) {
		b->err = ENOMEM;
		return -ENOMEM;
	}
	if (b->cap >= ((size_t)8 << 20)) {
		/* Large outputs are written once, front to back: 2 MiB pages
		 * save most of the page faults (where THP is in madvise mode). */
		uintptr_t lo =
		        ((uintptr_t)b->p + b->len + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
		uintptr_t hi = ((uintptr_t)b->p + b->cap) & ~(uintptr_t)((2u << 20) - 1);

		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
	return 0;
}

size_t tcx_fmt_u64(char *out, uint64_t v)
{
	static const char pairs[] =
	        "00010203040506070809101112131415161718192021222324252627282930"
	        "31323334353637383940414243444546474849505152535455565758596061"
	        "6263646566676869707172737475767778798081828384858687888990919293"
	        "949596979899";
	size_t n = 1;
	char *p;

	/* Count the digits, then write them from the last, two at a time,
	 * in place. */
	for (uint64_t p10 = 10; n < 20 && v >= p10; p10 *= 10)
		n++;
	p = out + n;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		*--p = pairs[d + 1];
		*--p = pairs[d];
	}
	if (v >= 10) {
		*--p = pairs[v * 2 + 1];
		*--p = pairs[v * 2];
	} else {
		*--p = (char)('0' + v);
	}
	return n;
}

size_t tcx_fmt_double(char *out, double v)
{
	int n = 0;

	if (isnan(v)) {
		memcpy(out, "NaN", 4);
		return 3;
	}
	if (isinf(v)) {
		memcpy(out, v > 0 ? "+Inf" : "-Inf", 5);
		return 4;
	}
	/* Whole numbers a double holds exactly print as integers (no exponent). */
	if (v == floor(v) && fabs(v) <= 9007199254740992.0)
		return (size_t)snprintf(out, TCX_FMT_DOUBLE_MAX, "%.0f", v);
	/* 17 significant digits always read back the same double; fewer often
	 * do, and the fewest that do is what the reader meant. When that is 15
	 * or fewer, %.15g prints exactly it: v is within half an ulp (2^-53 of
	 * v) of it, well inside half a unit of the 15th digit (5e-16 of v), so
	 * rounding v to 15 digits gives it, and %g drops the trailing zeros.
	 * So only 16 and 17 need trying after 15. A subnormal has fewer bits,
	 * and is searched from 1. */
	for (int prec = fabs(v) >= DBL_MIN ? 15 : 1; prec <= 17; prec++) {
		n = snprintf(out, TCX_FMT_DOUBLE_MAX, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			break;
	}
	return (size_t)n;
}

void tcx_buf_fixed(struct tcx_buf *b, uint64_t v, unsigned digits)
{
	char frac[20];
	uint64_t scale = 1;
	unsigned n = digits;

	for (unsigned i = 0; i < digits; i++)
		scale *= 10;
	tcx_buf_u64(b, v / scale);
	v %= scale;
	for (unsigned i = digits; i-- > 0; v /= 10)
		frac[i] = (char)('0' + v % 10);
	while (n && frac[n - 1] == '0')
		n--;
	if (!n)
		return;
	tcx_buf_putc(b, '.');
	tcx_buf_put(b, frac, n);
}

void tcx_buf_double(struct tcx_buf *b, double v)
{
	if (b->cap - b->len < TCX_FMT_DOUBLE_MAX && tcx_buf_reserve(b, TCX_FMT_DOUBLE_MAX) < 0)
		return;
	b->len += tcx_fmt_double(b->p + b->len, v);
}

void tcx_buf_printf(struct tcx_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || tcx_buf_reserve(b, (size_t)n + 1) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* The length of the valid UTF-8 sequence at s (2 to 4), or 0 when s does
 * not start one: no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* One character of the rule's text, escaped for the format. */
static void put_escaped(struct tcx_buf *b, unsigned char c, enum tcx_escape how)
{
	static const char hexd[] = "0123456789abcdef";

	if (how == TCX_ESC_NONE) {
		tcx_buf_putc(b, (char)c);
	} else if (c == '\\' || c == '"') {
		tcx_buf_putc(b, '\\');
		tcx_buf_putc(b, (char)c);
	} else if (how == TCX_ESC_JSON && c < 0x20) {
		char u[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};

		tcx_buf_put(b, u, sizeof(u));
	} else if (c == '\n') {
		tcx_buf_put(b, "\\n", 2);
	} else {
		tcx_buf_putc(b, (char)c);
	}
}

void tcx_buf_escape(struct tcx_buf *b, const char *str, enum tcx_escape how)
{
	static const char hexd[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *run = s;

	while (*s) {
		size_t n;

		/* Runs of characters that need nothing are copied at once. */
		if (*s >= 0x20 && *s < 0x80 && *s != '\\' && *s != '"') {
			s++;
			continue;
		}
		if (*s < 0x80 && *s != '\\' && how == TCX_ESC_NONE) {
			s++;
			continue;
		}
		if (*s >= 0x80 && (n = utf8_seq(s)) != 0) {
			s += n;
			continue;
		}
		if (s > run)
			tcx_buf_put(b, (const char *)run, (size_t)(s - run));
		if (*s >= 0x80) { /* not UTF-8: \xHH */
			put_escaped(b, '\\', how);
			put_escaped(b, 'x', how);
			put_escaped(b, (unsigned char)hexd[*s >> 4], how);
			put_escaped(b, (unsigned char)hexd[*s & 15], how);
		} else if (*s == '\\') {
			/* Doubled where it would read as the start of an escape
			 * (before x, another backslash, or a byte written \xHH). */
			put_escaped(b, '\\', how);
			if (s[1] == 'x' || s[1] == '\\' || (s[1] >= 0x80 && !utf8_seq(s + 1)))
				put_escaped(b, '\\', how);
		} else {
			put_escaped(b, *s, how);
		}
		run = ++s;
	}
	if (s > run)
		tcx_buf_put(b, (const char *)run, (size_t)(s - run));
}
