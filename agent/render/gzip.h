/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gzip (RFC 1952) as a text is rendered: a buffer whose every flush (a 256
 * KiB window, lib/buf.h) is compressed into another, so that the plain text
 * is never whole in memory. One gzip member, at level 1, by the codec that
 * configure chose: ISA-L's igzip where libisal is installed, zlib otherwise
 * (--without-isal). The one place that knows which. */
#ifndef TCX_RENDER_GZIP_H
#define TCX_RENDER_GZIP_H

#include "lib/buf.h"

struct tcx_gzip_stream; /* the codec's state */

struct tcx_gzip {
	struct tcx_gzip_stream *z;
	struct tcx_buf *out;
};

/* Make text a buffer that g compresses into out. Returns 0, or -ENOMEM. */
int tcx_gzip_open(struct tcx_gzip *g, struct tcx_buf *text, struct tcx_buf *out);
/* With err, the result of rendering into text (0 or -errno): flush text
 * and end the stream when err is 0, then free text and g. Returns err, or
 * the -errno that flushing or ending failed with. */
int tcx_gzip_close(struct tcx_gzip *g, struct tcx_buf *text, int err);

/* The codec and its version, "isa-l/2.30.0" or "zlib/1.2.13": for
 * tc_exporter_build_info and --version. */
const char *tcx_gzip_codec(void);

#endif
