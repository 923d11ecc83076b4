/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renderers: a snapshot in, text out. No I/O besides the buffer's own. */
#ifndef TCX_RENDER_H
#define TCX_RENDER_H

#include "agent/buf.h"
#include "collectors/snapshot.h"

#ifndef TCX_VERSION
#define TCX_VERSION PACKAGE_VERSION
#endif

enum tcx_format {
	TCX_FMT_PROMETHEUS = 0, /* text exposition 0.0.4 */
	TCX_FMT_OPENMETRICS,    /* OpenMetrics 1.0.0 text */
	TCX_FMT_JSON,           /* one JSON object per action row and line */
};

int tcx_format_parse(const char *name, enum tcx_format *fmt);

/* Render the snapshot; returns 0, or -errno when the buffer failed. */
int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt, struct tcx_buf *b);
int tcx_render_prometheus(const struct tcx_snapshot *s, int openmetrics, struct tcx_buf *b);
/* The same, plus the daemon's own counters when st is not NULL. */
struct tcx_selfstats;
int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int openmetrics,
                             const struct tcx_selfstats *st, struct tcx_buf *b);
/* How to render: threads 0 picks (two threads for a large snapshot rendered
 * to a sink, when two CPUs are available), 1 forces one, 2 forces two (a
 * sink only; a growing buffer is always written by one); chunk_rows 0 is
 * the default size of the chunks the two threads take in turn. */
struct tcx_render_opts {
	unsigned threads;
	size_t chunk_rows;
};
int tcx_render_prometheus_opts(const struct tcx_snapshot *s, int openmetrics,
                               const struct tcx_selfstats *st, struct tcx_buf *b,
                               const struct tcx_render_opts *o);
int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b);

const char *tcx_mode_name(enum tcx_dump_mode m);
/* "skip_hw,in_hw" style list of filter flags, "" for none. */
void tcx_flags_string(uint32_t flags, char *out, size_t outlen);

#endif
