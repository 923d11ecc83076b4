/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz harness: Accept and Accept-Encoding negotiation (tcx_negotiate()).
 *
 * Input: the Accept header, then a NUL byte and the Accept-Encoding header
 * (without a NUL: Accept only). Each header is handed over as a string of
 * exactly its size. The variant must be one there is, its format must
 * depend on Accept alone and its compression on Accept-Encoding alone. */
#include <stdlib.h>
#include <string.h>

#include "agent/http/negotiate.h"
#include "tests/fuzz/fuzz.h"

static char *header(const uint8_t *p, size_t len)
{
	char *s = malloc(len + 1);

	FUZZ_CHECK(s);
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

static int is_om(enum tcx_variant v)
{
	return v == TCX_VAR_OM || v == TCX_VAR_OM_GZ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t alen = nul ? (size_t)(nul - data) : size;
	char *accept = header(data, alen);
	char *enc = nul ? header(nul + 1, strnlen((const char *)nul + 1, size - alen - 1)) : NULL;
	enum tcx_variant v = tcx_negotiate(accept, enc);

	FUZZ_CHECK(v >= TCX_VAR_TEXT && v < TCX_VAR__MAX);
	FUZZ_CHECK(tcx_variant_content_type(v) != NULL);
	FUZZ_CHECK(is_om(v) == is_om(tcx_negotiate(accept, NULL)));
	FUZZ_CHECK(tcx_variant_is_gzip(v) == tcx_variant_is_gzip(tcx_negotiate(NULL, enc)));
	free(accept);
	free(enc);
	return 0;
}
