/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Aggregation (`aggregate: {by|without: [...]}`): counters summed over the
 * rows that share the kept labels, that never go backwards while the
 * process runs. A state sums one kind of rows: the actions
 * (tcx_action_counters, into s->aggs), or the filters' hit counters
 * (tcx_agg_new_hits(): tcx_filter_counters, into s->hit_aggs; the filters
 * shown that have some, their user label values all empty: a filter has no
 * cookie; an aggregate has the counters some member or final of it had,
 * the others absent: a group of matchall filters has no lookups).
 *
 * The state (struct tcx_agg) is kept across snapshots by its one owner (the
 * daemon's collector thread; --once makes one for its single pass). Each
 * aggregate is the sum of its members, the rows by their identity (struct
 * tcx_row_id, collectors/snapshot.h; a filter's is tcx_filter_id_of()'s):
 * - a member counts from 0 when it first appears (all of its counters);
 * - a member that disappears leaves its last seen values in its aggregate;
 * - a member replaced (tcx_action_replaced(): another action under its
 *   identity, `tc filter replace` or a filter made again) leaves the old
 *   action's counters in its aggregate and counts on from the new values;
 *   another counter that goes down alone leaves its value before the reset;
 * - a member that moves to another aggregate (a reloaded cookie map) leaves
 *   its contribution so far in the old one and counts in the new one from
 *   its current value;
 * - the final counters of a deleted filter (tcx_agg_fold_final(), drained
 *   before the pass's dumps) count once, in the place of the last values
 *   seen of its row (agg.c says how, with identities the kernel reuses);
 * - the value published never goes down.
 * Memory: one member per live row, one entry per aggregate (an aggregate
 * stays for the life of the process; a gone member leaves nothing but its
 * contribution). Nothing here knows about an output format: after each pass
 * tcx_agg_update() gives the snapshot its aggregates (struct tcx_aggregates),
 * label values and counters, which the renderers read. */
#ifndef TCX_AGG_H
#define TCX_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/snapshot.h"
#include "config/config.h"

struct tcx_agg;
/* A state of the actions' aggregates; of the filters' hit counters. */
struct tcx_agg *tcx_agg_new(void);
struct tcx_agg *tcx_agg_new_hits(void);
void tcx_agg_free(struct tcx_agg *a);

/* Fold the final rows of s->finals (tcx_agg_fold_final()), then the shown
 * rows of s (a complete snapshot, classified) into the state, and set
 * s->aggs to the aggregates (NULL when s->cfg does not aggregate: the state
 * is then emptied). s->finals is freed: they count once. A configuration
 * whose kept labels differ from the state's starts the state over. Returns
 * 0, or -1 when out of memory (s->aggs NULL, s incomplete). A state of hit
 * counters does the same with s->hit_finals, the filters and s->hit_aggs. */
int tcx_agg_update(struct tcx_agg *a, struct tcx_snapshot *s);

/* The sums of s's current rows into s->aggs and s->hit_aggs, with no state
 * (--once: no history, each row counts its counters as they are; no member
 * is kept, so it costs a fraction of a first tcx_agg_update()). Returns as
 * it does. */
int tcx_agg_sum(struct tcx_snapshot *s);

/* The final counters of a deleted row (f, of the kind the state sums), from
 * the kernel's deletion notification, in the order of deletion: counted
 * whole in the row's aggregate (the configuration of the last
 * tcx_agg_update() says which; before the first, nothing is folded), in
 * the place of the oldest values its member still counts for a row that
 * may be this one (agg.c). f->index is its action's index (0 when unknown,
 * and for a filter): another than the one last seen is not that action's
 * final. Returns 0, or -1 when out of memory. */
int tcx_agg_fold_final(struct tcx_agg *a, const struct tcx_final *f);

#endif
