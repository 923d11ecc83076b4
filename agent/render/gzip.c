/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "agent/render/gzip.h"

static int gz_write(void *arg, const char *p, size_t len)
{
	struct tcx_gzip *g = arg;

	g->z.next_in = (Bytef *)(uintptr_t)p;
	g->z.avail_in = (uInt)len;
	while (g->z.avail_in) {
		if (tcx_buf_reserve(g->out, 65536) < 0)
			return -ENOMEM;
		g->z.next_out = (Bytef *)g->out->p + g->out->len;
		g->z.avail_out = (uInt)(g->out->cap - g->out->len);
		if (deflate(&g->z, Z_NO_FLUSH) == Z_STREAM_ERROR)
			return -EIO;
		g->out->len = g->out->cap - g->z.avail_out;
	}
	return 0;
}

static int gz_finish(struct tcx_gzip *g)
{
	int r;

	do {
		if (tcx_buf_reserve(g->out, 65536) < 0)
			return -ENOMEM;
		g->z.next_out = (Bytef *)g->out->p + g->out->len;
		g->z.avail_out = (uInt)(g->out->cap - g->out->len);
		r = deflate(&g->z, Z_FINISH);
		g->out->len = g->out->cap - g->z.avail_out;
	} while (r == Z_OK || r == Z_BUF_ERROR);
	return r == Z_STREAM_END ? 0 : -EIO;
}

int tcx_gzip_open(struct tcx_gzip *g, struct tcx_buf *text, struct tcx_buf *out)
{
	memset(g, 0, sizeof(*g));
	g->out = out;
	/* Level 1: the least CPU per byte of zlib's levels (level 3 is as
	 * fast, 6 three times slower), at a ratio of 29 (tests/bench/gzip_bench). */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	if (tcx_buf_init_sink(text, gz_write, g) < 0) {
		deflateEnd(&g->z);
		return -ENOMEM;
	}
	return 0;
}

int tcx_gzip_close(struct tcx_gzip *g, struct tcx_buf *text, int err)
{
	if (!err)
		err = tcx_buf_flush(text);
	if (!err)
		err = gz_finish(g);
	deflateEnd(&g->z);
	tcx_buf_free(text);
	return err;
}
