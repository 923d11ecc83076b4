/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's own counters, which /metrics exports with the snapshot:
 * collections, their errors, and HTTP requests by status. */
#ifndef TCX_SELFSTATS_H
#define TCX_SELFSTATS_H

#include <stdint.h>

#include "collectors/snapshot.h"

/* HTTP statuses counted in tc_exporter_http_requests_total: the handler's,
 * and the ones libmicrohttpd answers itself (400, 413, 414, 431, 505). */
#define TCX_HTTP_CODES 12
extern const unsigned tcx_http_codes[TCX_HTTP_CODES]; /* the last one, 0, is "other" */
/* The index of code in tcx_http_codes (the last one for any other code). */
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

#endif
