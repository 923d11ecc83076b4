/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Expositions: what /metrics serves for one snapshot, in up to four variants
 * (agent/http/negotiate.h), and their rendering. No HTTP here: the server makes
 * its own response objects (struct tcx_expo). */
#ifndef TCX_EXPO_H
#define TCX_EXPO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/http/negotiate.h"
#include "agent/selfstats.h"
#include "collectors/snapshot.h"

/* What /metrics serves of one snapshot. What is scraped is rendered ahead:
 * an exposition renders, before it is published, the variants that were
 * asked for during each of the two intervals before it (of the two
 * expositions it follows), as Prometheus's is, scraping every interval, and
 * goes on rendering one until it was asked of neither (a collection that a
 * reload starts at once, with no request in between, does not drop it),
 * each once, into a response every request for it shares, freed with the
 * exposition (once the next snapshot is published and the last request using
 * it is done). Any other variant is streamed: each request for it gets a
 * response of its own that renders the body as it is sent, a piece at a time
 * (struct tcx_expo_stream), and holds a reference to the exposition until it
 * ends. So an occasional scrape of another variant costs one rendering and
 * a few hundred KiB while it is sent, not its body in memory, and a variant
 * nobody asks for any more is neither rendered nor kept. */
struct tcx_expo {
	atomic_uint refcnt;
	uint64_t seq; /* 1 for the first, then the one it follows + 1 */
	struct tcx_snapshot *snap;
	/* The memory it holds: its snapshot, the label text and the bodies
	 * rendered ahead, from when each is made (tcx_expo_bytes()). */
	atomic_size_t bytes;
	pthread_mutex_t lock;            /* serialises the rendering of each variant */
	void *resp[TCX_VAR__MAX];        /* the server's response objects, once made */
	atomic_size_t len[TCX_VAR__MAX]; /* the size of each body rendered ahead, once made */
	void (*resp_free)(void *resp);
	unsigned ahead;        /* bit v: variant v is rendered ahead */
	unsigned asked_before; /* the variants asked of the exposition this one follows */
	atomic_uint asked;     /* the variants asked of this one */
	/* The rows' label text, made for the first variant rendered, for all;
	 * freed once those rendered ahead are made (tcx_expo_prerender()). */
	struct tcx_rowlabels *labels;
};

/* prev: the exposition this one follows (NULL for the first); what was
 * asked of it and of its own predecessor decides what this one renders
 * ahead. */
struct tcx_expo *tcx_expo_new(struct tcx_snapshot *snap, void (*resp_free)(void *),
                              const struct tcx_expo *prev);
struct tcx_expo *tcx_expo_ref(struct tcx_expo *e);
void tcx_expo_unref(struct tcx_expo *e);
/* What e holds in memory, freed with it: its snapshot's rows, the label
 * text and the bodies rendered ahead (from any thread, without a lock). */
size_t tcx_expo_bytes(const struct tcx_expo *e);

/* Makes the server's response object for variant v of e's snapshot into
 * *resp: with stream 1, one for a single request, whose body is a
 * tcx_expo_stream; with stream -1, one for a single HEAD, with the headers
 * alone; with 0, one that every request shares, rendered whole
 * (tcx_expo_render()), whose memory it sets in *bytes. Returns 0 or
 * -errno. */
typedef int (*tcx_expo_make_fn)(void *arg, struct tcx_expo *e, enum tcx_variant v, int stream,
                                void **resp, size_t *bytes);

/* Record v as asked of e: the next exposition renders it ahead if it was
 * asked of e and of e's predecessor. */
void tcx_expo_ask(struct tcx_expo *e, enum tcx_variant v);
/* The size of v's body rendered ahead (0 until it is made) and, in
 * *largest, that of the largest body e has rendered ahead. */
size_t tcx_expo_body_size(const struct tcx_expo *e, enum tcx_variant v, size_t *largest);
/* The response for a request of variant v. For a variant e renders ahead,
 * the shared one (for a GET, made now if its prerendering failed), which
 * stays e's: *own = 0. For any other, a streamed one made for this request,
 * which the caller releases once it has queued it: *own = 1. A HEAD (head)
 * renders nothing: the shared response if it is made, else one with the
 * headers alone. Returns 0 or -errno. */
int tcx_expo_response(struct tcx_expo *e, enum tcx_variant v, int head, tcx_expo_make_fn make,
                      void *arg, void **resp, int *own);
/* Make every variant e renders ahead (before e is published, so that no
 * request waits for it), then free the label text when nobody else holds
 * e: a request of another variant makes it again. Returns 0 or the first
 * -errno; a variant that fails is made again on request. */
int tcx_expo_prerender(struct tcx_expo *e, tcx_expo_make_fn make, void *arg);

/* A rendered variant. */
struct tcx_rendered {
	char *p; /* free() it */
	size_t len;
};

/* Render one variant of a snapshot from labels, its label text (NULL: made
 * for this rendering); st may be NULL. The body is followed by a NUL that
 * len does not count. gzip variants are compressed (igzip or zlib, level 1)
 * as they are rendered (agent/render/gzip.h): the plain text is never whole
 * in memory. Whole-buffer compression (libdeflate) costs less CPU per byte
 * than zlib, but faulting in the whole text for it every collection costs the
 * daemon more than that saves, and the text's size in memory; igzip streamed
 * costs less than either (tests/bench/gzip_bench). */
struct tcx_rowlabels;
int tcx_expo_render(const struct tcx_snapshot *s, const struct tcx_rowlabels *labels,
                    const struct tcx_selfstats *st, enum tcx_variant v, struct tcx_rendered *out);

/* Text rendered per piece of a body that is rendered as it is sent; with
 * gzip, compressed into less (tcx_expo_render() compresses in the same
 * pieces: the same bytes). */
#define TCX_EXPO_PIECE (192 * 1024)

/* Variant v of e's snapshot for one response, rendered as it is read, a
 * piece at a time: never whole in memory. It holds a reference to e until it
 * is freed, and renders nothing before the first read (a HEAD request reads
 * none). The rows' label text is e's, made by the first body that needs it
 * (a streamed one, or one rendered whole). st: the daemon's counters to
 * render (copied), or NULL. NULL when out of memory. */
struct tcx_expo_stream;
struct tcx_expo_stream *tcx_expo_stream_new(struct tcx_expo *e, enum tcx_variant v,
                                            const struct tcx_selfstats *st);
/* Up to max bytes of the body into buf: returns how many, 0 at its end, or
 * -errno when rendering failed (what was read is then not the whole body,
 * and no more can be). */
ssize_t tcx_expo_stream_read(struct tcx_expo_stream *x, char *buf, size_t max);
void tcx_expo_stream_free(struct tcx_expo_stream *x);

#endif
