/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The variants of /metrics (text 0.0.4 or OpenMetrics 1.0.0, each plain or
 * gzip) and the content negotiation that picks one for a request. */
#ifndef TCX_NEGOTIATE_H
#define TCX_NEGOTIATE_H

enum tcx_variant {
	TCX_VAR_TEXT = 0,
	TCX_VAR_TEXT_GZ,
	TCX_VAR_OM,
	TCX_VAR_OM_GZ,
	TCX_VAR__MAX,
};

/* Pick the variant for an Accept and an Accept-Encoding header (either may
 * be NULL), as Prometheus negotiates: OpenMetrics 1.0.0 when the client
 * prefers it to text 0.0.4 (higher q), gzip when accepted with q > 0. */
enum tcx_variant tcx_negotiate(const char *accept, const char *accept_encoding);
const char *tcx_variant_content_type(enum tcx_variant v);
int tcx_variant_is_gzip(enum tcx_variant v);

#endif
