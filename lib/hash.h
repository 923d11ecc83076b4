/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hashing for the in-memory indices (header only, no dependencies): not
 * cryptographic, fast on short keys, good enough for open addressing. */
#ifndef TCX_LIB_HASH_H
#define TCX_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Fold the word v into the hash h. */
static inline uint64_t tcx_hash_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* Fold len bytes at p into h, eight at a time. */
static inline uint64_t tcx_hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;
	size_t i;

	h = tcx_hash_mix(h, len);
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		h = tcx_hash_mix(h, w);
	}
	for (w = 0; i < len; i++)
		w = w << 8 | b[i];
	return tcx_hash_mix(h, w);
}

#endif
