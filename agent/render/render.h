/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Renderers: a snapshot in, text out. No I/O besides the buffer's own. The
 * formats of --once, each rendered by its own file (prom.c, json.c); /metrics
 * renders the text formats through agent/http/expo.h. */
#ifndef TCX_RENDER_H
#define TCX_RENDER_H

#include "lib/buf.h"
#include "collectors/snapshot.h"

enum tcx_format {
	TCX_FMT_PROMETHEUS = 0, /* text exposition 0.0.4 */
	TCX_FMT_OPENMETRICS,    /* OpenMetrics 1.0.0 text */
	TCX_FMT_JSON,           /* one JSON object per action row and line */
};

int tcx_format_parse(const char *name, enum tcx_format *fmt);

/* Render the snapshot, the text formats from labels, s's label text
 * (agent/render/prom.h), or from label text formatted for this rendering
 * when labels is NULL; returns 0, or -errno when the buffer failed. */
struct tcx_rowlabels;
int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt,
               const struct tcx_rowlabels *labels, struct tcx_buf *b);

#endif
