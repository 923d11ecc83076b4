/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/render/gzip.h"
#include "build.h"

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

/* Room made in out before each call of the codec. */
#define OUT_STEP 65536
/* The most input given to the codec at once (its counts are 32-bit). */
#define IN_STEP ((size_t)1 << 30)

/* ---- the codec: init, input, step, end ------------------------------------------------- */

#ifdef HAVE_ISAL
/* Level 1: igzip's fastest level that looks for matches (level 0 is as
 * fast and compresses about half as well), with the level buffer of the
 * size igzip suggests (tests/bench/gzip_bench). */
struct tcx_gzip_stream {
	struct isal_zstream z;
	uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
};

static int codec_init(struct tcx_gzip_stream *s)
{
	isal_deflate_init(&s->z);
	s->z.level = 1;
	s->z.level_buf = s->level_buf;
	s->z.level_buf_size = sizeof(s->level_buf);
	s->z.gzip_flag = IGZIP_GZIP;
	return 0;
}

static void codec_input(struct tcx_gzip_stream *s, const char *p, size_t len)
{
	s->z.next_in = (uint8_t *)(uintptr_t)p;
	s->z.avail_in = (uint32_t)len;
}

static size_t codec_pending(const struct tcx_gzip_stream *s)
{
	return s->z.avail_in;
}

/* Compress into out[0..room): sets *wrote, returns 1 when done (the input
 * taken; with fin, the member ended), 0 to be called again, or -EIO. */
static int codec_step(struct tcx_gzip_stream *s, char *out, size_t room, int fin, size_t *wrote)
{
	s->z.next_out = (uint8_t *)out;
	s->z.avail_out = (uint32_t)room;
	s->z.end_of_stream = (uint16_t)fin;
	if (isal_deflate(&s->z) != COMP_OK)
		return -EIO;
	*wrote = room - s->z.avail_out;
	return fin ? s->z.internal_state.state == ZSTATE_END : s->z.avail_in == 0;
}

static void codec_end(struct tcx_gzip_stream *s)
{
}

const char *tcx_gzip_codec(void)
{
	return "isa-l/" TCX_ISAL_VERSION;
}
#else
/* Level 1: the least CPU per byte of zlib's levels (level 3 is as fast, 6
 * three times slower: tests/bench/gzip_bench). */
struct tcx_gzip_stream {
	z_stream z;
};

static int codec_init(struct tcx_gzip_stream *s)
{
	memset(&s->z, 0, sizeof(s->z));
	return deflateInit2(&s->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0
	                                                                                  : -ENOMEM;
}

static void codec_input(struct tcx_gzip_stream *s, const char *p, size_t len)
{
	s->z.next_in = (Bytef *)(uintptr_t)p;
	s->z.avail_in = (uInt)len;
}

static size_t codec_pending(const struct tcx_gzip_stream *s)
{
	return s->z.avail_in;
}

static int codec_step(struct tcx_gzip_stream *s, char *out, size_t room, int fin, size_t *wrote)
{
	int r;

	s->z.next_out = (Bytef *)out;
	s->z.avail_out = (uInt)room;
	r = deflate(&s->z, fin ? Z_FINISH : Z_NO_FLUSH);
	*wrote = room - s->z.avail_out;
	if (r == Z_STREAM_END && fin)
		return 1;
	if (r != Z_OK && r != Z_BUF_ERROR)
		return -EIO;
	return !fin && s->z.avail_in == 0;
}

static void codec_end(struct tcx_gzip_stream *s)
{
	deflateEnd(&s->z);
}

const char *tcx_gzip_codec(void)
{
	return "zlib/" ZLIB_VERSION;
}
#endif

/* ---- the same for both ----------------------------------------------------------------- */

/* Compress p[0..len) into g->out; with fin, then end the member. */
static int gz_run(struct tcx_gzip *g, const char *p, size_t len, int fin)
{
	do {
		size_t n = len < IN_STEP ? len : IN_STEP;
		int done;

		codec_input(g->z, p, n);
		p += n;
		len -= n;
		do {
			size_t room, wrote = 0, pending = codec_pending(g->z);

			if (tcx_buf_reserve(g->out, OUT_STEP) < 0)
				return -ENOMEM;
			room = g->out->cap - g->out->len;
			if (room > IN_STEP)
				room = IN_STEP;
			done = codec_step(g->z, g->out->p + g->out->len, room, fin && !len, &wrote);
			if (done < 0)
				return done;
			g->out->len += wrote;
			/* (with room to write, every call takes input or writes) */
			if (!done && !wrote && codec_pending(g->z) == pending)
				return -EIO;
		} while (!done);
	} while (len);
	return 0;
}

static int gz_write(void *arg, const char *p, size_t len)
{
	return gz_run(arg, p, len, 0);
}

int tcx_gzip_open(struct tcx_gzip *g, struct tcx_buf *text, struct tcx_buf *out)
{
	memset(g, 0, sizeof(*g));
	g->out = out;
	g->z = malloc(sizeof(*g->z));
	if (!g->z)
		return -ENOMEM;
	if (codec_init(g->z) < 0) {
		free(g->z);
		return -ENOMEM;
	}
	if (tcx_buf_init_sink(text, gz_write, g) < 0) {
		codec_end(g->z);
		free(g->z);
		return -ENOMEM;
	}
	return 0;
}

int tcx_gzip_close(struct tcx_gzip *g, struct tcx_buf *text, int err)
{
	if (!err)
		err = tcx_buf_flush(text);
	if (!err)
		err = gz_run(g, NULL, 0, 1);
	codec_end(g->z);
	free(g->z);
	tcx_buf_free(text);
	return err;
}
