/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gzip (RFC 1952) as a text is rendered: a buffer whose every flush (a 256
 * KiB window, lib/buf.h) is compressed into another, so that the plain text
 * is never whole in memory. */
#ifndef TCX_RENDER_GZIP_H
#define TCX_RENDER_GZIP_H

#include <zlib.h>

#include "lib/buf.h"

struct tcx_gzip {
	z_stream z;
	struct tcx_buf *out;
};

/* Make text a buffer that g compresses into out. Returns 0, or -ENOMEM. */
int tcx_gzip_open(struct tcx_gzip *g, struct tcx_buf *text, struct tcx_buf *out);
/* With err, the result of rendering into text (0 or -errno): flush text
 * and end the stream when err is 0, then free text and g. Returns err, or
 * the -errno that flushing or ending failed with. */
int tcx_gzip_close(struct tcx_gzip *g, struct tcx_buf *text, int err);

#endif
