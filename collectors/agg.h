/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Aggregation (`aggregate: {by|without: [...]}`): counters summed over the
 * action rows that share the kept labels, that never go backwards while the
 * process runs.
 *
 * The state (struct tcx_agg) is kept across snapshots by its one owner (the
 * daemon's collector thread; --once makes one for its single pass). Each
 * aggregate is the sum of its members, the action rows by their identity
 * (struct tcx_row_id, the identity of tcx_snapshot_merge()):
 * - a member counts from 0 when it first appears (all of its counters);
 * - a member that disappears leaves its last seen values in its aggregate;
 * - a member whose bytes or packets go down (another action under its
 *   identity: `tc filter replace`, or a filter made again) leaves the old
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

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/snapshot.h"
#include "config/config.h"

enum tcx_counter {
	TCX_CTR_BYTES = 0,
	TCX_CTR_PACKETS,
	TCX_CTR_HW_BYTES,
	TCX_CTR_HW_PACKETS,
	TCX_CTR_DROPS,
	TCX_CTR_OVERLIMITS,
	TCX_CTR__MAX,
};

struct tcx_counters {
	uint64_t v[TCX_CTR__MAX];
};

/* An action row's identity, by value (indices into a snapshot's tables do
 * not last from one snapshot to the next). Zero it before filling it in:
 * rows are compared and hashed as bytes. */
struct tcx_row_id {
	char netns[64];
	char dev[IFNAMSIZ];        /* "" for a block */
	char parent[24];           /* as the parent label: "ingress", "1:", "block" */
	char kind[TCX_KIND_MAX];   /* classifier */
	char action[TCX_KIND_MAX]; /* action kind */
	uint32_t block, chain, handle;
	uint16_t pref, protocol, order;
	uint8_t cookie_len;
	uint8_t cookie[TCX_COOKIE_MAX];
	uint8_t pad[5]; /* zero: the size is a multiple of 8 */
};

/* The identity and the counters of action row i of s. */
void tcx_row_id_of(const struct tcx_snapshot *s, size_t i, struct tcx_row_id *id);
void tcx_counters_of(const struct tcx_action *a, struct tcx_counters *c);

/* The final rows of deleted filters that a pass drained (s->finals), by
 * value: identity, counters and action index (0 when unknown). */
struct tcx_final {
	struct tcx_row_id id;
	struct tcx_counters c;
	uint32_t index;
};

struct tcx_finals {
	struct tcx_final *f;
	size_t n, cap;
};

/* Append action row i of s (a drained snapshot) to *fs, made when NULL.
 * Returns 0, or -1 when out of memory. */
int tcx_finals_add(struct tcx_finals **fs, const struct tcx_snapshot *s, size_t i);
void tcx_finals_free(struct tcx_finals *fs);

/* What the renderers read: one snapshot's aggregates, immutable. */
struct tcx_aggregates {
	size_t n;        /* aggregates */
	size_t n_labels; /* kept labels, each aggregate has a value for each */
	/* The kept labels in output order: the built-in ones first (in the
	 * order of enum tcx_builtin_label), then the user ones. */
	const char *names[TCX_BL__MAX + TCX_MAX_LABELS];
	/* The label is left out of an aggregate whose value is empty (device
	 * and parent for a block, block for a device, netns outside one), as
	 * the same labels are on the rows. */
	uint8_t optional[TCX_BL__MAX + TCX_MAX_LABELS];
	uint32_t *value; /* n * n_labels offsets into text */
	char *text;
	struct tcx_counters *c; /* n */
	double *created;        /* n: when it first appeared in this process (Unix time) */
	int has_hw;             /* some aggregate has hardware counters */
};

static inline const char *tcx_aggregate_value(const struct tcx_aggregates *g, size_t i, size_t k)
{
	return g->text + g->value[i * g->n_labels + k];
}

void tcx_aggregates_free(struct tcx_aggregates *g);

struct tcx_agg;
struct tcx_agg *tcx_agg_new(void);
void tcx_agg_free(struct tcx_agg *a);

/* Fold the final rows of s->finals (tcx_agg_fold_final()), then the shown
 * rows of s (a complete snapshot, classified) into the state, and set
 * s->aggs to the aggregates (NULL when s->cfg does not aggregate: the state
 * is then emptied). s->finals is freed: they count once. A configuration
 * whose kept labels differ from the state's starts the state over. Returns
 * 0, or -1 when out of memory (s->aggs NULL, s incomplete). */
int tcx_agg_update(struct tcx_agg *a, struct tcx_snapshot *s);

/* The sums of s's current rows into s->aggs, with no state (--once: no
 * history, each row counts its counters as they are; no member is kept, so
 * it costs a fraction of a first tcx_agg_update()). Returns as it does. */
int tcx_agg_sum(struct tcx_snapshot *s);

/* The final counters of a deleted row, from the kernel's deletion
 * notification, in the order of deletion: counted whole in the row's
 * aggregate (the configuration of the last tcx_agg_update() says which;
 * before the first, nothing is folded), in the place of the oldest values
 * its member still counts for an action that may be this one (agg.c).
 * index is its action's index (0 when unknown): another than the one last
 * seen is not that action's final. Returns 0, or -1 when out of memory. */
int tcx_agg_fold_final(struct tcx_agg *a, const struct tcx_row_id *id,
                       const struct tcx_counters *final, uint32_t index);

#endif
