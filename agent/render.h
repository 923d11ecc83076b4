/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renderers: a snapshot in, text out. No I/O besides the buffer's own. */
#ifndef TCX_RENDER_H
#define TCX_RENDER_H

#include "agent/buf.h"
#include "collectors/snapshot.h"

enum tcx_format {
	TCX_FMT_PROMETHEUS = 0, /* text exposition 0.0.4 */
	TCX_FMT_OPENMETRICS,    /* OpenMetrics 1.0.0 text */
	TCX_FMT_JSON,           /* one JSON object per action row and line */
};

int tcx_format_parse(const char *name, enum tcx_format *fmt);

/* The Prometheus label text of a snapshot's rows (their label sets'
 * user labels included), formatted once per snapshot and shared by every
 * rendering of the text formats. NULL when out of memory. */
struct tcx_rowlabels;
struct tcx_rowlabels *tcx_rowlabels_build(const struct tcx_snapshot *s);
void tcx_rowlabels_free(struct tcx_rowlabels *l);

/* Render the snapshot, the text formats from labels, s's label text, or
 * from label text formatted for this rendering when labels is NULL; returns
 * 0, or -errno when the buffer failed. */
int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt,
               const struct tcx_rowlabels *labels, struct tcx_buf *b);
/* The text formats (openmetrics: 0 or 1), plus the daemon's own counters
 * when st is not NULL, from labels as tcx_render() does. */
struct tcx_selfstats;
int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int openmetrics,
                             const struct tcx_selfstats *st, const struct tcx_rowlabels *labels,
                             struct tcx_buf *b);
int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b);

const char *tcx_mode_name(enum tcx_dump_mode m);

#endif
