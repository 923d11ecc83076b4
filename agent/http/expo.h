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

#include "agent/http/negotiate.h"
#include "agent/selfstats.h"
#include "collectors/snapshot.h"

/* What /metrics serves of one snapshot. Each variant is rendered at most
 * once per snapshot, into a response every request for it shares, freed
 * with the exposition (once the next snapshot is published and the last
 * request using it is done). What is scraped is rendered ahead: an
 * exposition renders, before it is published, the variants that were asked
 * for during each of the two intervals before it (of the two expositions it
 * follows), as Prometheus's is, scraping every interval. Any other variant is
 * rendered on the first request for it: an occasional scrape of another
 * variant costs one rendering and memory until the next snapshot, and a
 * variant nobody asks for any more is neither rendered nor kept. */
struct tcx_expo {
	atomic_uint refcnt;
	struct tcx_snapshot *snap;
	pthread_mutex_t lock;     /* serialises the rendering of each variant */
	void *resp[TCX_VAR__MAX]; /* the server's response objects, once made */
	void (*resp_free)(void *resp);
	unsigned ahead;        /* bit v: variant v is rendered ahead */
	unsigned asked_before; /* the variants asked of the exposition this one follows */
	atomic_uint asked;     /* the variants asked of this one */
	/* The rows' label text, made before the first variant, for all. */
	struct tcx_rowlabels *labels;
};

/* prev: the exposition this one follows (NULL for the first); what was
 * asked of it and of its own predecessor decides what this one renders
 * ahead. */
struct tcx_expo *tcx_expo_new(struct tcx_snapshot *snap, void (*resp_free)(void *),
                              const struct tcx_expo *prev);
struct tcx_expo *tcx_expo_ref(struct tcx_expo *e);
void tcx_expo_unref(struct tcx_expo *e);

/* Makes the server's response object for variant v of e's snapshot into
 * *resp; returns 0 or -errno. */
typedef int (*tcx_expo_make_fn)(void *arg, struct tcx_expo *e, enum tcx_variant v, void **resp);

/* The response for a request of variant v (recorded as asked), made now if
 * it is not yet; it stays e's. Returns 0 or -errno. */
int tcx_expo_response(struct tcx_expo *e, enum tcx_variant v, tcx_expo_make_fn make, void *arg,
                      void **resp);
/* Make every variant e renders ahead (before e is published, so that no
 * request waits for it). Returns 0 or the first -errno; a variant that
 * fails is made again on request. */
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

#endif
