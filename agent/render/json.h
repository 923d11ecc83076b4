/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON lines: one object per action row (see tcexporter(8), "JSON OUTPUT"). */
#ifndef TCX_RENDER_JSON_H
#define TCX_RENDER_JSON_H

#include "lib/buf.h"
#include "collectors/snapshot.h"

/* Returns 0, or -errno when the buffer failed. */
int tcx_render_json(const struct tcx_snapshot *s, struct tcx_buf *b);

#endif
