/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Expositions: what /metrics serves for one snapshot, in up to four variants
 * (text 0.0.4 or OpenMetrics 1.0.0, each plain or gzip), each rendered at
 * most once, on first use. No HTTP here: the server attaches its own
 * response object to each variant. */
#ifndef TCX_EXPO_H
#define TCX_EXPO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/buf.h"
#include "collectors/snapshot.h"

enum tcx_variant {
	TCX_VAR_TEXT = 0,
	TCX_VAR_TEXT_GZ,
	TCX_VAR_OM,
	TCX_VAR_OM_GZ,
	TCX_VAR__MAX,
};

/* HTTP statuses counted in tc_exporter_http_requests_total: the handler's,
 * and the ones libmicrohttpd answers itself (400, 413, 414, 431, 505). */
#define TCX_HTTP_CODES 12
extern const unsigned tcx_http_codes[TCX_HTTP_CODES]; /* the last one, 0, is "other" */
unsigned tcx_http_code_slot(unsigned code);

/* The daemon's own counters, as of the moment a variant is rendered. */
struct tcx_selfstats {
	uint64_t collections_total;
	uint64_t collection_errors_total[TCX_ERR__MAX];
	uint64_t http_requests_total[TCX_HTTP_CODES];
	double snapshot_age_s;
	int last_reload_ok;
	double last_reload_ts; /* Unix time of the last successful (re)load */
};

struct tcx_expo {
	atomic_uint refcnt;
	struct tcx_snapshot *snap;
	pthread_mutex_t lock;     /* serialises the first render of each variant */
	void *resp[TCX_VAR__MAX]; /* the server's response objects */
	void (*resp_free)(void *resp);
};

struct tcx_expo *tcx_expo_new(struct tcx_snapshot *snap, void (*resp_free)(void *));
struct tcx_expo *tcx_expo_ref(struct tcx_expo *e);
void tcx_expo_unref(struct tcx_expo *e);

/* Pick the variant for an Accept and an Accept-Encoding header (either may
 * be NULL), as Prometheus negotiates: OpenMetrics 1.0.0 when the client
 * prefers it to text 0.0.4 (higher q), gzip when accepted with q > 0. */
enum tcx_variant tcx_negotiate(const char *accept, const char *accept_encoding);
const char *tcx_variant_content_type(enum tcx_variant v);
int tcx_variant_is_gzip(enum tcx_variant v);

/* Large output buffers, kept for the next render: a fresh buffer of a
 * hundred megabytes costs more in page faults and zeroing than rendering
 * into it does. Thread-safe. */
#define TCX_BUFPOOL_SLOTS 4
struct tcx_bufpool {
	pthread_mutex_t lock;
	struct {
		char *p;
		size_t cap;
	} slot[TCX_BUFPOOL_SLOTS];
};

void tcx_bufpool_init(struct tcx_bufpool *pool);
void tcx_bufpool_destroy(struct tcx_bufpool *pool);
/* A buffer of at least want bytes (its size in *cap), or NULL. */
char *tcx_bufpool_get(struct tcx_bufpool *pool, size_t want, size_t *cap);
/* Give a buffer back (pool may be NULL: then it is freed). */
void tcx_bufpool_put(struct tcx_bufpool *pool, char *p, size_t cap);

/* A rendered variant. */
struct tcx_rendered {
	char *p;
	size_t len, cap;
};

/* Render one variant of a snapshot, into a buffer from pool (may be NULL).
 * st may be NULL. The body is followed by a NUL that len does not count.
 * Give the buffer back with tcx_bufpool_put(). gzip variants
 * are compressed as they are rendered: the plain text is never whole in
 * memory. */
int tcx_expo_render(const struct tcx_snapshot *s, const struct tcx_selfstats *st,
                    enum tcx_variant v, struct tcx_bufpool *pool, struct tcx_rendered *out);

#endif
