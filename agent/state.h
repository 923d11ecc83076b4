/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the daemon's threads share: the running configurations, the current
 * exposition and the counters. The daemon (agent/daemon.c) writes it, the
 * HTTP servers (agent/http/http.c) read it. */
#ifndef TCX_STATE_H
#define TCX_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "agent/http/expo.h"
#include "agent/http/webconfig.h"
#include "agent/selfstats.h"
#include "config/config.h"

struct tcx_http;

/* Pointers are swapped under `lock`; readers take a reference under it and
 * use the object without the lock. */
struct tcx_state {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the collector waits on it between passes */
	struct tcx_config *cfg;
	struct tcx_webconfig *web; /* NULL: no TLS, no auth */
	struct tcx_expo *expo;     /* NULL until the first pass is published */
	/* The HTTP servers, told of each new exposition under the lock; the
	 * main thread, which alone replaces them, reads it without. */
	struct tcx_http *http;
	struct timespec last_publish; /* CLOCK_MONOTONIC */
	int stop;
	int collect_now;
	/* counters */
	uint64_t collections_total;
	uint64_t collection_errors_total[TCX_ERR__MAX];
	atomic_uint_fast64_t http_requests[TCX_HTTP_CODES];
	atomic_uint_fast64_t http_cut[TCX_CUT__MAX];        /* responses of /metrics cut short */
	atomic_uint_fast64_t http_refused[TCX_REFUSE__MAX]; /* requests refused with 429 */
	atomic_uint_fast64_t http_accept_errors[TCX_ACCEPT_CAUSES];
	int last_reload_ok;
	double last_reload_ts;
};

/* A reference to each, taken under the lock. */
struct tcx_expo *tcx_state_expo(struct tcx_state *st);
struct tcx_webconfig *tcx_state_web(struct tcx_state *st);
void tcx_state_selfstats(struct tcx_state *st, const struct tcx_snapshot *snap,
                         struct tcx_selfstats *out);
/* Seconds since the last publish, or -1 before the first. */
double tcx_state_age(struct tcx_state *st, double *interval_s);

#endif
