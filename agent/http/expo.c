/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/http/expo.h"
#include "agent/render/gzip.h"
#include "agent/render/prom.h"
#include "lib/grow.h"

struct tcx_expo *tcx_expo_new(struct tcx_snapshot *snap, void (*resp_free)(void *),
                              const struct tcx_expo *prev)
{
	struct tcx_expo *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	atomic_init(&e->refcnt, 1);
	atomic_init(&e->asked, 0);
	for (unsigned v = 0; v < TCX_VAR__MAX; v++)
		atomic_init(&e->len[v], 0);
	atomic_init(&e->bytes, tcx_alloc_size(e) + tcx_snapshot_bytes(snap));
	pthread_mutex_init(&e->lock, NULL);
	e->seq = prev ? prev->seq + 1 : 1;
	e->snap = tcx_snapshot_ref(snap);
	e->resp_free = resp_free;
	if (prev) {
		e->asked_before = atomic_load_explicit(&prev->asked, memory_order_relaxed);
		/* A variant starts being rendered ahead once asked of each of
		 * the two expositions before, and stops once asked of neither:
		 * a collection a reload makes at once, during which the
		 * server restarts and nobody asks, does not drop it. */
		e->ahead = (e->asked_before & prev->asked_before) |
		           (prev->ahead & (e->asked_before | prev->asked_before));
	}
	return e;
}

struct tcx_expo *tcx_expo_ref(struct tcx_expo *e)
{
	if (e)
		atomic_fetch_add_explicit(&e->refcnt, 1, memory_order_relaxed);
	return e;
}

void tcx_expo_unref(struct tcx_expo *e)
{
	if (!e || atomic_fetch_sub_explicit(&e->refcnt, 1, memory_order_acq_rel) != 1)
		return;
	for (unsigned v = 0; v < TCX_VAR__MAX; v++)
		if (e->resp[v] && e->resp_free)
			e->resp_free(e->resp[v]);
	tcx_rowlabels_free(e->labels);
	tcx_snapshot_unref(e->snap);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

size_t tcx_expo_bytes(const struct tcx_expo *e)
{
	return atomic_load_explicit(&e->bytes, memory_order_relaxed);
}

/* With e->lock held: the rows' label text, made once for every variant
 * (NULL when that fails: each rendering then makes its own). */
static const struct tcx_rowlabels *labels_locked(struct tcx_expo *e)
{
	if (!e->labels) {
		e->labels = tcx_rowlabels_build(e->snap);
		atomic_fetch_add_explicit(&e->bytes, tcx_rowlabels_bytes(e->labels),
		                          memory_order_relaxed);
	}
	return e->labels;
}

/* With e->lock held: the shared response of v, made if need be. */
static int response_locked(struct tcx_expo *e, enum tcx_variant v, tcx_expo_make_fn make, void *arg)
{
	size_t bytes = 0;
	int err;

	if (e->resp[v])
		return 0;
	labels_locked(e);
	err = make(arg, e, v, 0, &e->resp[v], &bytes);
	if (!err) {
		atomic_fetch_add_explicit(&e->bytes, bytes, memory_order_relaxed);
		atomic_store_explicit(&e->len[v], bytes, memory_order_relaxed);
	}
	return err;
}

void tcx_expo_ask(struct tcx_expo *e, enum tcx_variant v)
{
	atomic_fetch_or_explicit(&e->asked, 1u << v, memory_order_relaxed);
}

size_t tcx_expo_body_size(const struct tcx_expo *e, enum tcx_variant v, size_t *largest)
{
	*largest = 0;
	for (unsigned i = 0; i < TCX_VAR__MAX; i++) {
		size_t n = atomic_load_explicit(&e->len[i], memory_order_relaxed);

		if (n > *largest)
			*largest = n;
	}
	return atomic_load_explicit(&e->len[v], memory_order_relaxed);
}

int tcx_expo_response(struct tcx_expo *e, enum tcx_variant v, int head, tcx_expo_make_fn make,
                      void *arg, void **resp, int *own)
{
	int err = 0;

	*resp = NULL;
	*own = !(e->ahead & (1u << v));
	if (!*own) {
		pthread_mutex_lock(&e->lock);
		if (!head)
			err = response_locked(e, v, make, arg);
		*resp = e->resp[v];
		pthread_mutex_unlock(&e->lock);
		if (*resp || err)
			return err;
		*own = 1; /* a HEAD of a variant whose prerendering failed */
	}
	return make(arg, e, v, head ? -1 : 1, resp, NULL);
}

int tcx_expo_prerender(struct tcx_expo *e, tcx_expo_make_fn make, void *arg)
{
	int err = 0;

	pthread_mutex_lock(&e->lock);
	for (unsigned v = 0; v < TCX_VAR__MAX; v++) {
		int r = e->ahead & (1u << v) ? response_locked(e, (enum tcx_variant)v, make, arg)
		                             : 0;

		if (r < 0 && !err)
			err = r;
	}
	/* The label text has served the bodies rendered ahead, which are what
	 * is scraped. Nobody else holds e yet (it is not published): it goes,
	 * and a request of another variant makes it again, once. The exposition
	 * served kept its own while the next one was rendered: at 100k qdiscs
	 * and classes, freeing it (its offsets; its text's arena is kept for
	 * the next, tcx_rowlabels_free()) lowered the daemon's peak by 4-6 MB. */
	if (e->labels && atomic_load_explicit(&e->refcnt, memory_order_acquire) == 1) {
		atomic_fetch_sub_explicit(&e->bytes, tcx_rowlabels_bytes(e->labels),
		                          memory_order_relaxed);
		tcx_rowlabels_free(e->labels);
		e->labels = NULL;
	}
	pthread_mutex_unlock(&e->lock);
	return err;
}

/* ---- rendering ------------------------------------------------------------------------- */

/* A variant rendered a piece at a time (TCX_EXPO_PIECE bytes of text), each
 * appended to out: the body of a streamed response, read as it is sent, or
 * a gzip variant rendered whole. */
struct tcx_expo_stream {
	struct tcx_expo *e; /* a reference; NULL for tcx_expo_render() */
	const struct tcx_snapshot *s;
	const struct tcx_rowlabels *labels;
	const struct tcx_selfstats *st; /* &own_st, the caller's, or NULL */
	struct tcx_selfstats own_st;
	enum tcx_variant v;
	struct tcx_prom_render *r; /* NULL until the first piece */
	struct tcx_gzip g;         /* gzip variants, while gz_open: text into out */
	struct tcx_buf text;
	int gz_open;
	struct tcx_buf out; /* out.p[off..len): rendered, not read yet */
	size_t off;
	int more; /* 1: more to render; 0: all rendered; -errno: failed */
};

/* Before the first piece: the renderer, and the compressor of a gzip
 * variant. Returns 1, or -ENOMEM. */
static int stream_start(struct tcx_expo_stream *x)
{
	int om = x->v == TCX_VAR_OM || x->v == TCX_VAR_OM_GZ;

	if (x->e) {
		pthread_mutex_lock(&x->e->lock);
		x->labels = labels_locked(x->e);
		pthread_mutex_unlock(&x->e->lock);
	}
	x->r = tcx_prom_render_new(x->s, om, x->st, x->labels);
	if (!x->r)
		return -ENOMEM;
	if (tcx_variant_is_gzip(x->v)) {
		if (tcx_gzip_open(&x->g, &x->text, &x->out) < 0)
			return -ENOMEM;
		x->gz_open = 1;
	}
	return 1;
}

/* The next piece, appended to x->out (gzip: what the compressor gives out
 * for it, maybe nothing; the member ends with the last). Returns 1 when
 * more follows, 0 after the last, or -errno. */
static int stream_step(struct tcx_expo_stream *x)
{
	int r;

	if (!x->gz_open)
		return tcx_prom_render_next(x->r, &x->out, x->out.len + TCX_EXPO_PIECE);
	r = tcx_prom_render_next(x->r, &x->text, TCX_EXPO_PIECE);
	if (r > 0 && (r = tcx_buf_flush(&x->text)) == 0)
		return 1;
	x->gz_open = 0;
	return tcx_gzip_close(&x->g, &x->text, r);
}

static void stream_end(struct tcx_expo_stream *x)
{
	if (x->gz_open)
		tcx_gzip_close(&x->g, &x->text, -ECANCELED);
	tcx_prom_render_free(x->r);
	tcx_buf_free(&x->out);
}

struct tcx_expo_stream *tcx_expo_stream_new(struct tcx_expo *e, enum tcx_variant v,
                                            const struct tcx_selfstats *st)
{
	struct tcx_expo_stream *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->e = tcx_expo_ref(e);
	x->s = e->snap;
	x->v = v;
	if (st) {
		x->own_st = *st;
		x->st = &x->own_st;
	}
	tcx_buf_init_mem(&x->out);
	x->more = 1;
	return x;
}

ssize_t tcx_expo_stream_read(struct tcx_expo_stream *x, char *buf, size_t max)
{
	size_t n;

	if (!x->r && x->more > 0)
		x->more = stream_start(x);
	while (x->more > 0 && x->off == x->out.len) {
		x->out.len = x->off = 0;
		x->more = stream_step(x);
	}
	if (x->more < 0)
		return x->more;
	n = x->out.len - x->off < max ? x->out.len - x->off : max;
	if (n)
		memcpy(buf, x->out.p + x->off, n);
	x->off += n;
	return (ssize_t)n;
}

void tcx_expo_stream_free(struct tcx_expo_stream *x)
{
	if (!x)
		return;
	stream_end(x);
	tcx_expo_unref(x->e);
	free(x);
}

int tcx_expo_render(const struct tcx_snapshot *s, const struct tcx_rowlabels *labels,
                    const struct tcx_selfstats *st, enum tcx_variant v, struct tcx_rendered *out)
{
	struct tcx_expo_stream x = {.s = s, .labels = labels, .st = st, .v = v};
	int r;

	tcx_buf_init_mem(&x.out);
	if (tcx_variant_is_gzip(v)) {
		/* in the pieces of a streamed body, into one buffer */
		for (r = stream_start(&x); r > 0;)
			r = stream_step(&x);
	} else {
		r = tcx_render_prometheus_ex(s, v == TCX_VAR_OM, st, labels, &x.out);
	}
	if (!r && tcx_buf_reserve(&x.out, 1) < 0)
		r = -ENOMEM;
	if (r < 0) {
		stream_end(&x);
		return r;
	}
	x.out.p[x.out.len] = '\0'; /* not part of the body: for tests and logs */
	out->p = x.out.p;
	out->len = x.out.len;
	x.out.p = NULL;
	stream_end(&x);
	return 0;
}
