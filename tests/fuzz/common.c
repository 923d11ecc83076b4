/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fuzz harnesses share (tests/fuzz/fuzz.h). */
#include "agent/render/render.h"
#include "tests/fuzz/fuzz.h"

/* A check, not code under test: left out of the coverage that guides the
 * fuzzer (it also cost a quarter of each run, every byte a traced compare). */
#ifdef __clang__
__attribute__((no_sanitize("coverage")))
#endif
int fuzz_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		unsigned c = p[i], n, cp, min;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (len - i <= n)
			return 0;
		for (unsigned k = 1; k <= n; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

void fuzz_render(const struct tcx_snapshot *s, int fmt, const struct tcx_rowlabels *labels,
                 struct tcx_buf *b)
{
	tcx_buf_init_mem(b);
	FUZZ_CHECK(tcx_render(s, (enum tcx_format)fmt, labels, b) == 0);
	FUZZ_CHECK(fuzz_utf8_valid(b->p, b->len));
}
