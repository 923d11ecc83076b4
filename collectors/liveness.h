/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The action times of terse targets between liveness passes.
 *
 * A terse dump carries no action options, and so no times (struct tcf_t).
 * A liveness pass (collect.h, every `liveness_interval`) dumps those
 * targets in full; between two, each row of a terse target takes the times
 * its row of the collection before had, matched by identity: kept from one
 * liveness pass to the next, from collection to collection. Nothing is
 * copied out: what is kept is a reference to the collection before's
 * snapshot, which stays published until this one is anyway, and an index
 * of its rows by identity (4 bytes a slot, two slots a row with times). A
 * row whose bytes or packets went down since is another action of the same
 * identity (`tc filter replace`): it has no times until the next liveness
 * pass, as a row new since the last one. The times are the kernel's as of
 * the last liveness pass: last_used moves at the next one. */
#ifndef TCX_LIVENESS_H
#define TCX_LIVENESS_H

#include "collectors/snapshot.h"

struct tcx_liveness;

struct tcx_liveness *tcx_liveness_new(void);
void tcx_liveness_free(struct tcx_liveness *lv);

/* Give the action rows of s's terse targets that have no times those of
 * their rows in the snapshot lv kept, then keep s (a reference) for the
 * next. Call it before the aggregates are updated (they fold the times).
 * Returns 0, or -1 when out of memory (then those rows have no times). */
int tcx_liveness_update(struct tcx_liveness *lv, struct tcx_snapshot *s);

#endif
