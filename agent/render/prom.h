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
/* The memory that l holds (0 for NULL). */
size_t tcx_rowlabels_bytes(const struct tcx_rowlabels *l);

/* The text formats (openmetrics: 0 or 1), plus the daemon's own counters
 * when st is not NULL, from labels as tcx_render() does. */
struct tcx_selfstats;
int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int openmetrics,
                             const struct tcx_selfstats *st, const struct tcx_rowlabels *labels,
                             struct tcx_buf *b);

/* The same, rendered piece by piece, for a body that is sent as it
 * renders: a rendering that stops between two sample lines once the buffer
 * holds `limit` bytes, and goes on from there on the next call. The pieces,
 * one after the other, are the bytes tcx_render_prometheus_ex() writes.
 * st and labels (NULL: made for this rendering) must outlive it. NULL when
 * out of memory. */
struct tcx_prom_render;
struct tcx_prom_render *tcx_prom_render_new(const struct tcx_snapshot *s, int openmetrics,
                                            const struct tcx_selfstats *st,
                                            const struct tcx_rowlabels *labels);
/* Render on into b until b->len reaches limit, or to the end. It looks
 * before each row of a family: past the limit by a row's samples at most,
 * and the HELP and TYPE of the families begun, but at the end, where the
 * snapshot's and the daemon's own families (a few KiB) do not pause.
 * Returns 1 when more is to come, 0 at the end, -errno when b failed. */
int tcx_prom_render_next(struct tcx_prom_render *r, struct tcx_buf *b, size_t limit);
void tcx_prom_render_free(struct tcx_prom_render *r);

const char *tcx_mode_name(enum tcx_dump_mode m);
/* A cause of tc_exporter_snapshot_errors: "malformed", "kernel", ... */
const char *tcx_err_cause_name(enum tcx_err_cause c);

#endif
