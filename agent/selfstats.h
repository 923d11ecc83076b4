/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon's own counters, which /metrics exports with the snapshot:
 * collections, their errors, HTTP requests by status, and the process_*
 * metrics. */
#ifndef TCX_SELFSTATS_H
#define TCX_SELFSTATS_H

#include <stdint.h>

#include "collectors/snapshot.h"

/* HTTP statuses counted in tc_exporter_http_requests_total: the handler's,
 * and the ones libmicrohttpd answers itself (400, 413, 414, 431, 505). */
#define TCX_HTTP_CODES 13
extern const unsigned tcx_http_codes[TCX_HTTP_CODES]; /* the last one, 0, is "other" */
/* The index of code in tcx_http_codes (the last one for any other code). */
unsigned tcx_http_code_slot(unsigned code);

/* The causes of tc_exporter_http_accept_errors_total: no descriptor or
 * memory left (EMFILE, ENFILE, ENOMEM, ENOBUFS), anything else. */
#define TCX_ACCEPT_CAUSES 2
extern const char *const tcx_accept_causes[TCX_ACCEPT_CAUSES];
/* Why a response of /metrics was cut short (its connection closed), the
 * reason label of tc_exporter_http_responses_cut_total. */
enum tcx_cut_reason {
	TCX_CUT_RENDER = 0, /* its rendering failed once its status had been sent */
	TCX_CUT_MEMORY,     /* too slow: it held a replaced collection past max_stale_mib */
	TCX_CUT__MAX,
};
extern const char *const tcx_cut_reasons[TCX_CUT__MAX];
/* Why a request was refused with 429, the reason label of
 * tc_exporter_http_requests_refused_total. */
enum tcx_refuse_reason {
	TCX_REFUSE_RENDER = 0,     /* its address had had its renders of the collection */
	TCX_REFUSE_PASSWORD_QUEUE, /* too many password checks waiting */
	TCX_REFUSE_PASSWORD_RATE,  /* its address had spent its failed checks (rate_limit) */
	TCX_REFUSE_BYTES,          /* its address had been sent its bodies of the collection */
	TCX_REFUSE__MAX,
};
extern const char *const tcx_refuse_reasons[TCX_REFUSE__MAX];

/* The process_* metrics the official Prometheus clients export, read from
 * /proc/self. */
struct tcx_process_stats {
	int ok;                    /* read: exported only then */
	double cpu_seconds;        /* user + system time */
	uint64_t resident_bytes;   /* rss */
	uint64_t virtual_bytes;    /* vsize */
	uint64_t open_fds;         /* entries of /proc/self/fd */
	uint64_t max_fds;          /* the soft RLIMIT_NOFILE */
	double start_time_seconds; /* Unix time */
};

/* Parse /proc/self/stat's text (stat) into cpu_seconds, resident_bytes,
 * virtual_bytes and start_time_seconds: ticks is sysconf(_SC_CLK_TCK), page
 * the page size, boot_time /proc/stat's btime. Returns 0, or -1 when the text
 * is not a stat line. */
int tcx_process_parse_stat(const char *stat, long ticks, long page, double boot_time,
                           struct tcx_process_stats *out);
/* Read them all from /proc/self; out->ok tells whether it could. */
void tcx_process_stats_read(struct tcx_process_stats *out);

/* The daemon's own counters, as of the moment a variant is rendered. */
struct tcx_selfstats {
	uint64_t collections_total;
	uint64_t collection_errors_total[TCX_ERR__MAX];
	uint64_t http_requests_total[TCX_HTTP_CODES];
	uint64_t http_responses_cut_total[TCX_CUT__MAX];
	uint64_t http_requests_refused_total[TCX_REFUSE__MAX];
	uint64_t http_accept_errors_total[TCX_ACCEPT_CAUSES];
	double snapshot_age_s;
	int last_reload_ok;
	double last_reload_ts; /* Unix time of the last successful (re)load */
	struct tcx_process_stats process;
};

#endif
