/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What gzip costs the daemon: the OpenMetrics body of a synthetic snapshot
 * of N rows (tests/bench/synth.h; 100k by default) compressed into one gzip
 * member by each codec: whole, as one buffer (zlib and libdeflate at levels
 * 1, 3 and 6), and streamed, fed in pieces of 192 KiB as the daemon renders
 * them (TCX_EXPO_PIECE): zlib at level 1, igzip (ISA-L, where the
 * build has libisal) at levels 0 and 1, and the daemon's own code
 * (agent/render/gzip.c, with the codec this build chose). Prints, for each,
 * the median and the best over RUNS (default 5) of the CPU time of the
 * compression (the thread's, which the machine's load disturbs less than
 * wall time), the median wall time, the throughput in MB/s of input per CPU
 * second of the best run, and the ratio (input bytes / output bytes). Each
 * output is inflated by zlib and compared with the input, and must be a
 * single member: a wrong output fails (exit 1).
 *
 *   tests/bench/gzip_bench [N [RUNS]] */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "agent/http/expo.h"
#include "agent/render/gzip.h"
#include "build.h"
#include "lib/clock.h"
#include "tests/bench/synth.h"

#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

/* The daemon's piece of text (agent/http/expo.h). */
#define PIECE TCX_EXPO_PIECE

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One gzip member of in[0..len) into out (cap bytes); returns its size, 0 on
 * failure. */
static size_t zlib_gzip(int level, const char *in, size_t len, char *out, size_t cap)
{
	z_stream z;
	size_t n = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) == Z_STREAM_END)
		n = z.total_out;
	deflateEnd(&z);
	return n;
}

static size_t zlib_stream(int level, const char *in, size_t len, char *out, size_t cap)
{
	z_stream z;
	size_t n = 0, off = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	for (;;) {
		size_t k = len - off < PIECE ? len - off : PIECE;
		int fin = off + k == len, r;

		z.next_in = (Bytef *)(uintptr_t)(in + off);
		z.avail_in = (uInt)k;
		r = deflate(&z, fin ? Z_FINISH : Z_NO_FLUSH);
		off += k;
		if (fin) {
			if (r == Z_STREAM_END)
				n = z.total_out;
			break;
		}
		if (r != Z_OK || z.avail_in)
			break;
	}
	deflateEnd(&z);
	return n;
}

static size_t libdeflate_gzip(int level, const char *in, size_t len, char *out, size_t cap)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
	size_t n;

	if (!c)
		return 0;
	n = libdeflate_gzip_compress(c, in, len, out, cap);
	libdeflate_free_compressor(c);
	return n;
}

#ifdef HAVE_ISAL
static size_t igzip_stream(int level, const char *in, size_t len, char *out, size_t cap)
{
	struct isal_zstream *z = malloc(sizeof(*z));
	uint8_t *lb = malloc(ISAL_DEF_LVL1_DEFAULT);
	size_t n = 0, off = 0;

	if (!z || !lb)
		goto out;
	isal_deflate_init(z);
	z->level = (uint32_t)level;
	if (level) {
		z->level_buf = lb;
		z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	}
	z->gzip_flag = IGZIP_GZIP;
	z->next_out = (uint8_t *)out;
	z->avail_out = (uint32_t)cap;
	for (;;) {
		size_t k = len - off < PIECE ? len - off : PIECE;
		int fin = off + k == len;

		z->next_in = (uint8_t *)(uintptr_t)(in + off);
		z->avail_in = (uint32_t)k;
		z->end_of_stream = (uint16_t)fin;
		if (isal_deflate(z) != COMP_OK || z->avail_in)
			break;
		off += k;
		if (fin) {
			if (z->internal_state.state == ZSTATE_END)
				n = z->total_out;
			break;
		}
	}
out:
	free(lb);
	free(z);
	return n;
}
#endif

/* agent/render/gzip.c as the daemon uses it, the text written into its
 * buffer a piece at a time, into out (which is large enough never to grow). */
static size_t daemon_gzip(int level, const char *in, size_t len, char *out, size_t cap)
{
	struct tcx_gzip g;
	struct tcx_buf text, o = {.p = out, .cap = cap};

	if (tcx_gzip_open(&g, &text, &o) < 0)
		return 0;
	for (size_t off = 0; off < len; off += PIECE)
		tcx_buf_put(&text, in + off, len - off < PIECE ? len - off : PIECE);
	if (tcx_gzip_close(&g, &text, 0) < 0 || o.p != out)
		return 0;
	return o.len;
}

/* Does out[0..n) inflate to in[0..len), as one member? */
static int roundtrip_ok(const char *in, size_t len, const char *out, size_t n, char *tmp)
{
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return 0;
	z.next_in = (Bytef *)(uintptr_t)out;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)tmp;
	z.avail_out = (uInt)len + 1;
	r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return r == Z_STREAM_END && z.avail_in == 0 && z.total_out == len &&
	       memcmp(tmp, in, len) == 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name, *mode;
		size_t (*fn)(int, const char *, size_t, char *, size_t);
		int level;
	} codecs[] = {
	        {"zlib", "whole", zlib_gzip, 1},
	        {"zlib", "whole", zlib_gzip, 3},
	        {"zlib", "whole", zlib_gzip, 6},
	        {"libdeflate", "whole", libdeflate_gzip, 1},
	        {"libdeflate", "whole", libdeflate_gzip, 3},
	        {"libdeflate", "whole", libdeflate_gzip, 6},
	        {"zlib", "stream", zlib_stream, 1},
#ifdef HAVE_ISAL
	        {"igzip", "stream", igzip_stream, 0},
	        {"igzip", "stream", igzip_stream, 1},
#endif
	        {"daemon", "stream", daemon_gzip, 1},
	};
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	struct tcx_config *cfg;
	struct tcx_snapshot *s = tcx_bench_snapshot(n, &cfg);
	struct tcx_rendered body;
	double *cpu = calloc((size_t)runs, sizeof(double));
	double *wall = calloc((size_t)runs, sizeof(double));
	size_t cap;
	char *out, *tmp;
	int ret = 0;

	if (runs < 1 || !cpu || !wall || tcx_expo_render(s, NULL, NULL, TCX_VAR_OM, &body) < 0) {
		fprintf(stderr, "gzip_bench: cannot render the body\n");
		return 1;
	}
	cap = (size_t)compressBound((uLong)body.len) + 65536;
	out = malloc(cap);
	tmp = malloc(body.len + 1);
	if (!out || !tmp) {
		fprintf(stderr, "gzip_bench: out of memory\n");
		return 1;
	}
	printf("rows=%zu runs=%d body=%zu bytes (OpenMetrics), pieces of %d KiB; daemon: %s\n", n,
	       runs, body.len, PIECE / 1024, tcx_gzip_codec());
#ifndef HAVE_ISAL
	printf("(no igzip: this build is configured without libisal)\n");
#endif
	printf("%-10s %-6s %5s %8s %8s %8s %6s %7s %10s\n", "codec", "mode", "level", "cpu_med",
	       "cpu_best", "wall_med", "MB/s", "ratio", "bytes");
	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
		size_t len = 0;

		for (int r = 0; r < runs; r++) {
			double c0 = tcx_clock_s(CLOCK_THREAD_CPUTIME_ID),
			       w0 = tcx_clock_s(CLOCK_MONOTONIC);

			len = codecs[c].fn(codecs[c].level, body.p, body.len, out, cap);
			cpu[r] = tcx_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall[r] = tcx_clock_s(CLOCK_MONOTONIC) - w0;
			if (!len || !roundtrip_ok(body.p, body.len, out, len, tmp)) {
				fprintf(stderr, "gzip_bench: %s %s level %d: wrong output\n",
				        codecs[c].name, codecs[c].mode, codecs[c].level);
				ret = 1;
				break;
			}
		}
		if (ret)
			break;
		qsort(cpu, (size_t)runs, sizeof(double), cmp);
		qsort(wall, (size_t)runs, sizeof(double), cmp);
		printf("%-10s %-6s %5d %8.1f %8.1f %8.1f %6.0f %7.1f %10zu\n", codecs[c].name,
		       codecs[c].mode, codecs[c].level, cpu[runs / 2] * 1e3, cpu[0] * 1e3,
		       wall[runs / 2] * 1e3, (double)body.len / 1e6 / cpu[0],
		       (double)body.len / (double)len, len);
	}
	free(out);
	free(tmp);
	free(body.p);
	free(cpu);
	free(wall);
	tcx_snapshot_unref(s);
	tcx_config_unref(cfg);
	return ret;
}
