/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/buf.h"

#define FD_BUFSZ (256 * 1024)

void tcx_buf_init_mem(struct tcx_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

int tcx_buf_init_fd(struct tcx_buf *b, int fd)
{
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->p = malloc(FD_BUFSZ);
	if (!b->p)
		return -ENOMEM;
	b->cap = FD_BUFSZ;
	return 0;
}

int tcx_buf_flush(struct tcx_buf *b)
{
	size_t off = 0;

	if (b->fd < 0 || b->err)
		return -b->err;
	while (off < b->len) {
		ssize_t n = write(b->fd, b->p + off, b->len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			b->err = errno;
			return -b->err;
		}
		off += (size_t)n;
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
	if (b->fd >= 0) {
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
	b->p = p;
	b->cap = ncap;
	return 0;
}

void tcx_buf_u64(struct tcx_buf *b, uint64_t v)
{
	char tmp[20];
	int i = 20;

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	tcx_buf_put(b, tmp + i, (size_t)(20 - i));
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
