/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rates of the qdiscs and classes (bytes, packets and drops per second)
 * between two collections, for the landing page.
 *
 * The rows before are those of the snapshot before, which the daemon
 * serves until this one is published anyway: q holds a reference to it
 * until the next collection, and keeps per row only a 64-bit hash of its
 * identity (8 bytes a row, in an array the collector thread alone owns;
 * an index of them is made during an update only when a row is not where
 * it was), and the monotonic time the collection started. Copies of the counters, 40 bytes a row in two
 * tables, took 10 MB at 100k qdiscs and classes. The rates are computed
 * once per collection, before the snapshot is published, into its rows
 * (tcx_qrow.rates): every reader of the page then only formats them, and
 * the kernel's own rate estimator (TCA_STATS_RATE_EST, on the rows as
 * TCX_QSTAT_RATE_BYTES and _PACKETS) is not needed: it exists only where
 * one was configured, and has no drops. */
#ifndef TCX_QRATES_H
#define TCX_QRATES_H

#include "collectors/snapshot.h"

struct tcx_qrates;

struct tcx_qrates *tcx_qrates_new(void);
void tcx_qrates_free(struct tcx_qrates *q);

/* Set the rates of s's qdisc and class rows (tcx_qrow.rates, and
 * s->rates_interval_s) from their counters and those of the collection
 * before (the snapshot q holds); mono_s is when s's collection started
 * (CLOCK_MONOTONIC, in seconds: a wall clock step changes no rate). Then
 * keep a reference to s in q for the next. A row is matched to the one
 * before by its identity (tcx_qrow_id_of()), through a 64-bit hash of it:
 * the row at its own position first, else the first of that identity. Two
 * of 100000 rows share a hash with a probability under 1e-9 (then one of
 * them shows the other's rate for one collection). Returns 0, or -1 when
 * out of memory (then s has no rates, and the next collection none
 * either). */
int tcx_qrates_update(struct tcx_qrates *q, struct tcx_snapshot *s, double mono_s);

#endif
