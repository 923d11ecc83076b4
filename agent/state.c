/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "agent/state.h"
#include "lib/clock.h"

struct tcx_expo *tcx_state_expo(struct tcx_state *st)
{
	struct tcx_expo *e;

	pthread_mutex_lock(&st->lock);
	e = tcx_expo_ref(st->expo);
	pthread_mutex_unlock(&st->lock);
	return e;
}

struct tcx_webconfig *tcx_state_web(struct tcx_state *st)
{
	struct tcx_webconfig *w;

	pthread_mutex_lock(&st->lock);
	w = tcx_webconfig_ref(st->web);
	pthread_mutex_unlock(&st->lock);
	return w;
}

void tcx_state_selfstats(struct tcx_state *st, const struct tcx_snapshot *snap,
                         struct tcx_selfstats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&st->lock);
	out->collections_total = st->collections_total;
	memcpy(out->collection_errors_total, st->collection_errors_total,
	       sizeof(out->collection_errors_total));
	out->last_reload_ok = st->last_reload_ok;
	out->last_reload_ts = st->last_reload_ts;
	pthread_mutex_unlock(&st->lock);
	for (unsigned i = 0; i < TCX_HTTP_CODES; i++)
		out->http_requests_total[i] =
		        atomic_load_explicit(&st->http_requests[i], memory_order_relaxed);
	for (unsigned i = 0; i < TCX_CUT__MAX; i++)
		out->http_responses_cut_total[i] =
		        atomic_load_explicit(&st->http_cut[i], memory_order_relaxed);
	for (unsigned i = 0; i < TCX_REFUSE__MAX; i++)
		out->http_requests_refused_total[i] =
		        atomic_load_explicit(&st->http_refused[i], memory_order_relaxed);
	for (unsigned i = 0; i < TCX_ACCEPT_CAUSES; i++)
		out->http_accept_errors_total[i] =
		        atomic_load_explicit(&st->http_accept_errors[i], memory_order_relaxed);
	out->snapshot_age_s = tcx_clock_s(CLOCK_REALTIME) - tcx_ts_s(snap->taken);
	if (out->snapshot_age_s < 0)
		out->snapshot_age_s = 0;
	tcx_process_stats_read(&out->process);
}

double tcx_state_age(struct tcx_state *st, double *interval_s)
{
	double age = -1;

	pthread_mutex_lock(&st->lock);
	*interval_s = st->cfg->interval_s;
	if (st->expo)
		age = tcx_clock_s(CLOCK_MONOTONIC) - tcx_ts_s(st->last_publish);
	pthread_mutex_unlock(&st->lock);
	return age;
}
