/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bump allocator: see arena.h. */
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>

#include "lib/arena.h"

/* Above glibc's mmap threshold (fixed at 128 KiB by tcx_main()): a freed
 * configuration goes back to the system at once. */
#define ARENA_BLOCK (256u << 10)

struct tcx_arena_block {
	struct tcx_arena_block *next; /* older */
	size_t size, used;
	alignas(max_align_t) unsigned char data[];
};

void *tcx_arena_alloc(struct tcx_arena *a, size_t size)
{
	struct tcx_arena_block *b = a->head;
	size_t align = alignof(max_align_t);
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (!b || b->size - b->used < size) {
		size_t bsize = size > ARENA_BLOCK ? size : ARENA_BLOCK;

		if (a->spare && a->spare->size >= bsize) {
			b = a->spare;
			bsize = b->size;
			a->spare = NULL;
		} else {
			b = malloc(sizeof(*b) + bsize);
			if (!b)
				return NULL;
		}
		b->next = a->head;
		b->size = bsize;
		b->used = 0;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

struct tcx_arena_mark tcx_arena_mark(const struct tcx_arena *a)
{
	struct tcx_arena_mark m = {a->head, a->head ? a->head->used : 0};

	return m;
}

/* One block released is kept for the next one needed: what is allocated
 * and released over and over across the end of a block (the cookies taken
 * one by one) does not cost a malloc() and a free() each time. */
void tcx_arena_release(struct tcx_arena *a, struct tcx_arena_mark m)
{
	while (a->head != m.head) {
		struct tcx_arena_block *b = a->head;

		a->head = b->next;
		if (a->spare)
			free(b);
		else
			a->spare = b;
	}
	if (a->head)
		a->head->used = m.used;
}

void tcx_arena_free(struct tcx_arena *a)
{
	tcx_arena_release(a, (struct tcx_arena_mark){NULL, 0});
	free(a->spare);
	a->spare = NULL;
}
