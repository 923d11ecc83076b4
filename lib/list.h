/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An intrusive doubly-linked list (header only, no dependencies), as the
 * kernel's, lldpd's or Open vSwitch's: a struct tcx_list node is embedded in
 * the element, and tcx_list_entry() gets the element back from it. A list is
 * a head node, circular: an empty list's head points to itself. Nothing here
 * allocates or locks. */
#ifndef TCX_LIB_LIST_H
#define TCX_LIB_LIST_H

#include <stddef.h>

struct tcx_list {
	struct tcx_list *prev, *next;
};

/* The element of type `type` whose member `member` is at ptr. */
#define tcx_list_entry(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* An empty list (a head, or a node on no list). */
static inline void tcx_list_init(struct tcx_list *l)
{
	l->prev = l->next = l;
}

static inline int tcx_list_empty(const struct tcx_list *l)
{
	return l->next == l;
}

/* e into the list just after pos (a head: at the front). */
static inline void tcx_list_insert_after(struct tcx_list *pos, struct tcx_list *e)
{
	e->prev = pos;
	e->next = pos->next;
	pos->next->prev = e;
	pos->next = e;
}

static inline void tcx_list_push_front(struct tcx_list *l, struct tcx_list *e)
{
	tcx_list_insert_after(l, e);
}

static inline void tcx_list_push_back(struct tcx_list *l, struct tcx_list *e)
{
	tcx_list_insert_after(l->prev, e);
}

/* e off its list; it is then an empty list of its own (removing it again
 * does nothing). */
static inline void tcx_list_remove(struct tcx_list *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	tcx_list_init(e);
}

/* The first element of l, of type `type` linked by `member`; NULL
 * when l is empty. */
#define tcx_list_first(l, type, member)                                                            \
	(tcx_list_empty(l) ? NULL : tcx_list_entry((l)->next, type, member))

/* Every element e (a pointer to `type`) of l, first to last (for_each) or
 * last to first (for_each_reverse). e must stay on the list until the
 * loop moves on from it. */
#define tcx_list_for_each(e, l, type, member)                                                      \
	for (e = tcx_list_entry((l)->next, type, member); &e->member != (l);                       \
	     e = tcx_list_entry(e->member.next, type, member))
#define tcx_list_for_each_reverse(e, l, type, member)                                              \
	for (e = tcx_list_entry((l)->prev, type, member); &e->member != (l);                       \
	     e = tcx_list_entry(e->member.prev, type, member))

#endif
