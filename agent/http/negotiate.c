/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Content negotiation for /metrics: which variant a request gets. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/http/negotiate.h"

/* The q of one list element ("type/sub;a=b;q=0.5"), 1 when absent. */
static double elem_q(const char *params, size_t len)
{
	const char *p = params, *end = params + len;

	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;

		while (p < stop && isspace((unsigned char)*p))
			p++;
		if (stop - p > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
			return strtod(p + 2, NULL);
		p = semi ? semi + 1 : end;
	}
	return 1;
}

/* Does a parameter list carry version=VALUE, or no version at all? */
static int version_ok(const char *params, size_t len, const char *want)
{
	const char *p = params, *end = params + len;
	size_t wl = strlen(want);

	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;

		while (p < stop && isspace((unsigned char)*p))
			p++;
		if (stop - p >= 8 && strncasecmp(p, "version=", 8) == 0) {
			const char *v = p + 8;
			size_t vl = (size_t)(stop - v);

			while (vl && isspace((unsigned char)v[vl - 1]))
				vl--;
			return vl == wl && strncmp(v, want, wl) == 0;
		}
		p = semi ? semi + 1 : end;
	}
	return 1;
}

static int type_is(const char *t, size_t tl, const char *want)
{
	return tl == strlen(want) && strncasecmp(t, want, tl) == 0;
}

/* One element of a comma-separated header list ("type/sub;a=b;q=0.5"). */
struct elem {
	const char *t; /* the value before any ';', without surrounding spaces */
	size_t tl;
	const char *params; /* after the ';' (empty when none) */
	size_t plen;
};

/* Split off the element at p; returns where the next one starts, or NULL
 * after the last. */
static const char *next_elem(const char *p, struct elem *e)
{
	const char *comma = strchr(p, ',');
	size_t len = comma ? (size_t)(comma - p) : strlen(p);
	const char *semi = memchr(p, ';', len);

	e->t = p;
	e->tl = semi ? (size_t)(semi - p) : len;
	e->params = semi ? semi + 1 : p + len;
	e->plen = semi ? len - e->tl - 1 : 0;
	while (e->tl && isspace((unsigned char)*e->t)) {
		e->t++;
		e->tl--;
	}
	while (e->tl && isspace((unsigned char)e->t[e->tl - 1]))
		e->tl--;
	return comma ? comma + 1 : NULL;
}

enum tcx_variant tcx_negotiate(const char *accept, const char *accept_encoding)
{
	double q_om = 0, q_text = 0, q_any = -1, q_gzip = 0, q_enc_any = -1;
	const char *p;

	for (p = accept; p && *p;) {
		struct elem e;
		double q;

		p = next_elem(p, &e);
		q = elem_q(e.params, e.plen);
		if (type_is(e.t, e.tl, "application/openmetrics-text")) {
			if (version_ok(e.params, e.plen, "1.0.0") && q > q_om)
				q_om = q;
		} else if (type_is(e.t, e.tl, "text/plain")) {
			if (version_ok(e.params, e.plen, "0.0.4") && q > q_text)
				q_text = q;
		} else if (type_is(e.t, e.tl, "*/*") || type_is(e.t, e.tl, "text/*")) {
			if (q > q_any)
				q_any = q;
		}
	}
	if (!accept || !*accept)
		q_text = 1;
	if (q_any >= 0 && q_text == 0)
		q_text = q_any; /* text is what a wildcard gets */
	for (p = accept_encoding; p && *p;) {
		struct elem e;
		double q;

		p = next_elem(p, &e);
		q = elem_q(e.params, e.plen);
		if (type_is(e.t, e.tl, "gzip") || type_is(e.t, e.tl, "x-gzip"))
			q_gzip = q;
		else if (type_is(e.t, e.tl, "*"))
			q_enc_any = q;
	}
	if (q_gzip == 0 && q_enc_any > 0 && !(accept_encoding && strstr(accept_encoding, "gzip")))
		q_gzip = q_enc_any;
	if (q_om > 0 && q_om > q_text)
		return q_gzip > 0 ? TCX_VAR_OM_GZ : TCX_VAR_OM;
	return q_gzip > 0 ? TCX_VAR_TEXT_GZ : TCX_VAR_TEXT;
}

const char *tcx_variant_content_type(enum tcx_variant v)
{
	return v == TCX_VAR_OM || v == TCX_VAR_OM_GZ
	               ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
	               : "text/plain; version=0.0.4; charset=utf-8";
}

int tcx_variant_is_gzip(enum tcx_variant v)
{
	return v == TCX_VAR_TEXT_GZ || v == TCX_VAR_OM_GZ;
}
