/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/http/expo.h"
#include "agent/render/gzip.h"
#include "agent/render/prom.h"

struct tcx_expo *tcx_expo_new(struct tcx_snapshot *snap, void (*resp_free)(void *),
                              const struct tcx_expo *prev)
{
	struct tcx_expo *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	atomic_init(&e->refcnt, 1);
	atomic_init(&e->asked, 0);
	pthread_mutex_init(&e->lock, NULL);
	e->snap = tcx_snapshot_ref(snap);
	e->resp_free = resp_free;
	if (prev) {
		e->asked_before = atomic_load_explicit(&prev->asked, memory_order_relaxed);
		e->ahead = e->asked_before & prev->asked_before;
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

/* With e->lock held: the response of v, made if need be, from the rows'
 * label text, made once for every variant (when that fails, each rendering
 * makes its own). */
static int response_locked(struct tcx_expo *e, enum tcx_variant v, tcx_expo_make_fn make, void *arg)
{
	if (e->resp[v])
		return 0;
	if (!e->labels)
		e->labels = tcx_rowlabels_build(e->snap);
	return make(arg, e, v, &e->resp[v]);
}

int tcx_expo_response(struct tcx_expo *e, enum tcx_variant v, tcx_expo_make_fn make, void *arg,
                      void **resp)
{
	int err;

	atomic_fetch_or_explicit(&e->asked, 1u << v, memory_order_relaxed);
	pthread_mutex_lock(&e->lock);
	err = response_locked(e, v, make, arg);
	*resp = e->resp[v];
	pthread_mutex_unlock(&e->lock);
	return err;
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
	pthread_mutex_unlock(&e->lock);
	return err;
}

/* ---- rendering ------------------------------------------------------------------------- */

int tcx_expo_render(const struct tcx_snapshot *s, const struct tcx_rowlabels *labels,
                    const struct tcx_selfstats *st, enum tcx_variant v, struct tcx_rendered *out)
{
	int om = v == TCX_VAR_OM || v == TCX_VAR_OM_GZ, r;
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	if (tcx_variant_is_gzip(v)) {
		struct tcx_gzip g;
		struct tcx_buf text;

		if (tcx_gzip_open(&g, &text, &b) < 0)
			return -ENOMEM;
		r = tcx_render_prometheus_ex(s, om, st, labels, &text);
		r = tcx_gzip_close(&g, &text, r);
	} else {
		r = tcx_render_prometheus_ex(s, om, st, labels, &b);
	}
	if (!r && b.err)
		r = -b.err;
	if (!r && tcx_buf_reserve(&b, 1) < 0)
		r = -ENOMEM;
	if (r < 0) {
		tcx_buf_free(&b);
		return r;
	}
	b.p[b.len] = '\0'; /* not part of the body: for tests and logs */
	out->p = b.p;
	out->len = b.len;
	return 0;
}
