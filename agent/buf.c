/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/buf.h"

#define FD_BUFSZ (256 * 1024)

void tcx_buf_init_mem(struct tcx_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void tcx_buf_init_mem_with(struct tcx_buf *b, char *p, size_t cap)
{
	tcx_buf_init_mem(b);
	b->p = p;
	b->cap = p ? cap : 0;
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
			return errno;
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
		b->err = e;
		return -e;
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
	size_t ncap;
	char *p;

	if (b->err)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	if (b->sink) {
		if (tcx_buf_flush(b) < 0)
			return -1;
		if (b->cap >= n)
			return 0;
	}
	ncap = b->cap ? b->cap : 4096;
	while (ncap - b->len < n)
		ncap *= 2;
	p = realloc(b->p, ncap);
	if (!p) {
		b->err = ENOMEM;
		return -1;
	}
	if (ncap >= ((size_t)8 << 20)) {
		/* Large outputs are written once, front to back: 2 MiB pages
		 * save most of the page faults (where THP is in madvise mode). */
		uintptr_t lo =
		        ((uintptr_t)p + b->len + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
		uintptr_t hi = ((uintptr_t)p + ncap) & ~(uintptr_t)((2u << 20) - 1);

		if (hi > lo)
			madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
	}
	b->p = p;
	b->cap = ncap;
	return 0;
}

size_t tcx_fmt_u64(char *out, uint64_t v)
{
	static const char pairs[] =
	        "00010203040506070809101112131415161718192021222324252627282930"
	        "31323334353637383940414243444546474849505152535455565758596061"
	        "6263646566676869707172737475767778798081828384858687888990919293"
	        "949596979899";
	char tmp[20];
	int i = 20;

	if (v < 10) {
		out[0] = (char)('0' + v);
		return 1;
	}
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--i] = pairs[d + 1];
		tmp[--i] = pairs[d];
	}
	if (v >= 10) {
		tmp[--i] = pairs[v * 2 + 1];
		tmp[--i] = pairs[v * 2];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	memcpy(out, tmp + i, (size_t)(20 - i));
	return (size_t)(20 - i);
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
	 * do, and the fewest that do is what the reader meant. */
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(out, TCX_FMT_DOUBLE_MAX, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			break;
	}
	return (size_t)n;
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

void tcx_buf_escape_label(struct tcx_buf *b, const char *s)
{
	const char *run = s;

	for (; *s; s++) {
		const char *esc;

		switch (*s) {
		case '\\':
			esc = "\\\\";
			break;
		case '"':
			esc = "\\\"";
			break;
		case '\n':
			esc = "\\n";
			break;
		default:
			continue;
		}
		tcx_buf_put(b, run, (size_t)(s - run));
		tcx_buf_put(b, esc, 2);
		run = s + 1;
	}
	tcx_buf_put(b, run, (size_t)(s - run));
}

void tcx_buf_json_string(struct tcx_buf *b, const char *s)
{
	tcx_buf_putc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			tcx_buf_putc(b, '\\');
			tcx_buf_putc(b, (char)c);
		} else if (c < 0x20) {
			tcx_buf_printf(b, "\\u%04x", c);
		} else {
			tcx_buf_putc(b, (char)c);
		}
	}
	tcx_buf_putc(b, '"');
}
