/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bump allocator: blocks that never move, freed all at once. A mark taken
 * with tcx_arena_mark() lets everything allocated after it be released. A
 * zeroed struct tcx_arena is an empty one. */
#ifndef TCX_LIB_ARENA_H
#define TCX_LIB_ARENA_H

#include <stddef.h>

struct tcx_arena_block;
struct tcx_arena {
	struct tcx_arena_block *head;  /* the block being filled, newest first */
	struct tcx_arena_block *spare; /* released, kept for the next one */
};

struct tcx_arena_mark {
	struct tcx_arena_block *head;
	size_t used;
};

/* size bytes aligned for any type, or NULL. */
void *tcx_arena_alloc(struct tcx_arena *a, size_t size);
struct tcx_arena_mark tcx_arena_mark(const struct tcx_arena *a);
void tcx_arena_release(struct tcx_arena *a, struct tcx_arena_mark m);
void tcx_arena_free(struct tcx_arena *a);

#endif
