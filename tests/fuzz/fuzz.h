/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libFuzzer entry point every harness under tests/fuzz/ defines. Each
 * harness is linked twice: with libFuzzer (`make fuzz`, clang only), and with
 * tests/fuzz/replay.c, which runs it over the committed corpus and the
 * regression inputs in `make check` (any compiler, the ASan build, valgrind).
 * tests/fuzz/common.c holds what the harnesses share. */
#ifndef TCX_FUZZ_H
#define TCX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Always returns 0. A bug is a crash: abort(), or a sanitizer's report. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* abort() with a message when cond is false: the harnesses' own checks. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			tcx_fuzz_fail(__FILE__, __LINE__, #cond);                                  \
	} while (0)

static inline __attribute__((noreturn)) void tcx_fuzz_fail(const char *file, int line,
                                                           const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

/* Strict UTF-8 (no overlong forms, surrogates, or code points past
 * U+10FFFF): 1 or 0. */
int fuzz_utf8_valid(const char *p, size_t len);

/* Render s in format fmt (enum tcx_format) into b, a new memory buffer that
 * the caller frees with tcx_buf_free(), from labels, the label text built
 * once, when not NULL. Aborts unless the render succeeds and is UTF-8. */
struct tcx_snapshot;
struct tcx_rowlabels;
struct tcx_buf;
void fuzz_render(const struct tcx_snapshot *s, int fmt, const struct tcx_rowlabels *labels,
                 struct tcx_buf *b);

#endif
