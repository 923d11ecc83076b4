/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTTP servers (agent/http/http.c): one libmicrohttpd daemon per listen
 * address, serving /metrics from the daemon's current exposition, / and
 * /healthz. */
#ifndef TCX_HTTP_H
#define TCX_HTTP_H

#include <stddef.h>

#include "agent/http/expo.h"
#include "agent/http/webconfig.h"
#include "config/config.h"

struct tcx_http;
struct tcx_state;

/* Start the servers of cfg. With prev, a server for an address prev already
 * serves takes over prev's listen socket (prev stops accepting there).
 * Returns NULL with the cause in err. */
struct tcx_http *tcx_http_start(struct tcx_state *st, const struct tcx_http_cfg *cfg,
                                struct tcx_webconfig *web, struct tcx_http *prev, char *err,
                                size_t errlen);
/* Did tcx_http_start() take any listen socket over from h? */
int tcx_http_handed_over(const struct tcx_http *h);
/* Stop; servers that handed their socket over finish their requests first. */
void tcx_http_stop(struct tcx_http *h);
/* e has just been published: while the collections before it that answers
 * still being sent hold take more than max_stale_mib, the connections
 * reading the oldest of them are closed. Called with the state's lock held
 * (it takes no lock but h's own); h may be NULL. */
void tcx_http_published(struct tcx_http *h, const struct tcx_expo *e);
/* Frees a response the servers made (the resp_free of their expositions). */
void tcx_http_response_free(void *resp);
/* Render, in the calling thread, every variant an exposition that is not
 * published yet renders ahead: the first request for it then waits for
 * nothing. */
void tcx_http_prerender(struct tcx_state *st, struct tcx_expo *e);

#endif
