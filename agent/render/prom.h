/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Prometheus text exposition 0.0.4 and OpenMetrics 1.0.0. */
#ifndef TCX_RENDER_PROM_H
#define TCX_RENDER_PROM_H

#include "lib/buf.h"
#include "collectors/snapshot.h"

/* The Prometheus label text of a snapshot's rows (their label sets'
 * user labels included), formatted once per snapshot and shared by every
 * rendering of the text formats. NULL when out of memory. */
struct tcx_rowlabels;
struct tcx_rowlabels *tcx_rowlabels_build(const struct tcx_snapshot *s);
void tcx_rowlabels_free(struct tcx_rowlabels *l);

/* The text formats (openmetrics: 0 or 1), plus the daemon's own counters
 * when st is not NULL, from labels as tcx_render() does. */
struct tcx_selfstats;
int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int openmetrics,
                             const struct tcx_selfstats *st, const struct tcx_rowlabels *labels,
                             struct tcx_buf *b);

const char *tcx_mode_name(enum tcx_dump_mode m);

#endif
