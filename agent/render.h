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

struct tcx_rowlabels;
/* Render the snapshot, the text formats from labels formatted ahead when
 * labels is not NULL; returns 0, or -errno when the buffer failed. */
int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt, struct tcx_rowlabels *labels,
               struct tcx_buf *b);
int tcx_render_prometheus(const struct tcx_snapshot *s, int openmetrics, struct tcx_buf *b);
/* The label sets of a snapshot's rows, formatted once for the Prometheus
 * text formats. A render formats them itself, unless it is given these:
 * then the formatting can run ahead, while the collector still dumps (call
 * tcx_rowlabels_update() and tcx_rowlabels_drop() from its observer). They
 * belong to one snapshot (and its configuration). */
struct tcx_rowlabels *tcx_rowlabels_new(void);
void tcx_rowlabels_free(struct tcx_rowlabels *l);
/* Format the rows of s not formatted yet: 0, or -ENOMEM. */
int tcx_rowlabels_update(struct tcx_rowlabels *l, const struct tcx_snapshot *s);
/* Forget the rows from filter nf and action na on (dropped from s). */
void tcx_rowlabels_drop(struct tcx_rowlabels *l, size_t nf, size_t na);
/* The collector's observer that keeps l up to date (tcx_collect_observed()). */
struct tcx_collect_observer;
struct tcx_collect_observer tcx_rowlabels_observer(struct tcx_rowlabels *l);

/* The same as tcx_render_prometheus(), plus the daemon's own counters when
 * st is not NULL, from the rows' labels formatted ahead when labels is not
 * NULL (it is brought up to date first). */
struct tcx_selfstats;
int tcx_render_prometheus_ex(const struct tcx_snapshot *s, int openmetrics,
                             const struct tcx_selfstats *st, struct tcx_rowlabels *labels,
                             struct tcx_buf *b);
int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b);

const char *tcx_mode_name(enum tcx_dump_mode m);
/* "skip_hw,in_hw" style list of filter flags, "" for none. */
void tcx_flags_string(uint32_t flags, char *out, size_t outlen);

#endif
