/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What gzip costs the daemon: the OpenMetrics body of a synthetic snapshot
 * of N rows (tests/bench/synth.h; 100k by default) compressed whole, as one
 * buffer, by zlib and by libdeflate at levels 1, 3 and 6. Prints, for each,
 * the median over RUNS (default 5) of the CPU time of the compression (the
 * thread's, which the machine's load disturbs less than wall time) and of
 * the wall time, the throughput in MB/s of input per CPU second, and the
 * ratio (input bytes / output bytes). Each output is decompressed by zlib
 * and compared with the input: a wrong output fails (exit 1).
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
#include "lib/clock.h"
#include "tests/bench/synth.h"

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

/* Does out[0..n) decompress to in[0..len)? */
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
	return r == Z_STREAM_END && z.total_out == len && memcmp(tmp, in, len) == 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		size_t (*fn)(int, const char *, size_t, char *, size_t);
		int level;
	} codecs[] = {
	        {"zlib", zlib_gzip, 1},
	        {"zlib", zlib_gzip, 3},
	        {"zlib", zlib_gzip, 6},
	        {"libdeflate", libdeflate_gzip, 1},
	        {"libdeflate", libdeflate_gzip, 3},
	        {"libdeflate", libdeflate_gzip, 6},
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
	cap = (size_t)compressBound((uLong)body.len) + 64;
	out = malloc(cap);
	tmp = malloc(body.len + 1);
	if (!out || !tmp) {
		fprintf(stderr, "gzip_bench: out of memory\n");
		return 1;
	}
	printf("rows=%zu runs=%d body=%zu bytes (OpenMetrics), whole-buffer gzip; medians\n", n,
	       runs, body.len);
	printf("%-10s %5s %9s %9s %8s %7s %10s\n", "codec", "level", "cpu_ms", "wall_ms", "MB/s",
	       "ratio", "bytes");
	for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
		size_t len = 0;

		for (int r = 0; r < runs; r++) {
			double c0 = tcx_clock_s(CLOCK_THREAD_CPUTIME_ID),
			       w0 = tcx_clock_s(CLOCK_MONOTONIC);

			len = codecs[c].fn(codecs[c].level, body.p, body.len, out, cap);
			cpu[r] = tcx_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall[r] = tcx_clock_s(CLOCK_MONOTONIC) - w0;
			if (!len || !roundtrip_ok(body.p, body.len, out, len, tmp)) {
				fprintf(stderr, "gzip_bench: %s level %d: wrong output\n",
				        codecs[c].name, codecs[c].level);
				ret = 1;
				break;
			}
		}
		if (ret)
			break;
		qsort(cpu, (size_t)runs, sizeof(double), cmp);
		qsort(wall, (size_t)runs, sizeof(double), cmp);
		printf("%-10s %5d %9.1f %9.1f %8.0f %7.1f %10zu\n", codecs[c].name, codecs[c].level,
		       cpu[runs / 2] * 1e3, wall[runs / 2] * 1e3,
		       (double)body.len / 1e6 / cpu[runs / 2], (double)body.len / (double)len, len);
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
