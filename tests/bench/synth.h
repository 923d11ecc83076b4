/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The synthetic snapshot of the render and compression benchmarks. */
#ifndef TCX_BENCH_SYNTH_H
#define TCX_BENCH_SYNTH_H

#include <stddef.h>

#include "collectors/snapshot.h"
#include "config/config.h"

/* N action rows, one action per u32 filter, a 16-byte cookie each, and two
 * user labels from a cookie map (or, with TCX_BENCH_LABELS=0 in the
 * environment, none; with TCX_BENCH_AGG=by, 1000 tenant and rule pairs from
 * a decoder, aggregated by them; TCX_BENCH_AGG=none, the same not
 * aggregated). *cfg holds the configuration the snapshot uses:
 * unref it after the snapshot. Exits on failure. */
struct tcx_snapshot *tcx_bench_snapshot(size_t n, struct tcx_config **cfg);

#endif
