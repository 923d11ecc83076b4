/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Array growth for every part of the tree (header only, no dependencies). */
#ifndef TCX_LIB_GROW_H
#define TCX_LIB_GROW_H

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Room for `want` elements of `elem` bytes in the array whose address is
 * arrp (a T **, the array NULL or from malloc()) and whose capacity is *cap.
 * A full array grows by half again, to at least `want`, and to at least
 * `first` from empty: appending n elements one by one costs O(n) in all. By
 * half, not double: glibc mmap()s large blocks (cli.c fixes the threshold),
 * realloc() moves their pages instead of copying them, and the peak stays
 * near the final size. Returns 0, or -1 when out of memory or when the size
 * does not fit in a size_t; *arrp and *cap are then unchanged. */
static inline int tcx_grow(void *arrp, size_t *cap, size_t want, size_t elem, size_t first)
{
	size_t ncap = *cap + *cap / 2;
	void *arr, *n;

	if (want <= *cap)
		return 0;
	if (ncap < first)
		ncap = first;
	if (ncap < want)
		ncap = want;
	if (elem && ncap > SIZE_MAX / elem)
		return -1;
	memcpy(&arr, arrp, sizeof(arr)); /* arrp is a T **, not a void ** */
	n = realloc(arr, ncap * elem);
	if (!n)
		return -1;
	memcpy(arrp, &n, sizeof(n));
	*cap = ncap;
	return 0;
}

/* The bytes that free(p) gives back (0 for NULL): what a structure holds,
 * counted over the same pointers as its free function. */
static inline size_t tcx_alloc_size(const void *p)
{
	return p ? malloc_usable_size((void *)p) : 0;
}

#endif
