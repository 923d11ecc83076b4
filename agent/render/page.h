/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The landing page (GET /): a live view of one snapshot in HTML. Per device,
 * the tree of its qdiscs and classes with their rates (collectors/qrates.h),
 * backlogs, and for the rows with a rate and a ceil (HTB classes, hfsc's,
 * tbf's rate) those in bit/s and the share of the ceil in use; the age of
 * the collection, the last reload's result and the targets with their
 * errors. One self-contained document: inline CSS, no script, a meta
 * refresh at the collection interval. No HTTP here (agent/http/http.c
 * serves it). */
#ifndef TCX_PAGE_H
#define TCX_PAGE_H

#include <stddef.h>

#include "collectors/snapshot.h"
#include "lib/buf.h"

/* A device with more classes than this has its tree folded (a closed
 * <details> element); at most TCX_PAGE_MAX_ROWS rows of one device's tree
 * are shown, then how many were left out. */
#define TCX_PAGE_FOLD_CLASSES 100
#define TCX_PAGE_MAX_ROWS     20000

/* What the page shows besides the snapshot. */
struct tcx_page_info {
	const char *version;
	double now;            /* Unix time of the rendering: the collection's age */
	double interval_s;     /* the collection interval: the page's refresh */
	int reload_ok;         /* the last load of the configuration (start, reload) succeeded */
	double loaded_ts;      /* Unix time of the last successful one */
	unsigned fold_classes; /* 0: TCX_PAGE_FOLD_CLASSES */
	size_t max_rows;       /* 0: TCX_PAGE_MAX_ROWS */
};

/* Render the page of s (NULL: no collection has completed yet) into b.
 * Returns 0, or -1 when out of memory (b's error is set too). */
int tcx_page_render(struct tcx_buf *b, const struct tcx_snapshot *s,
                    const struct tcx_page_info *pi);

/* s with & < > " escaped, for HTML text and attribute values in double
 * quotes (the only ones the page has). */
void tcx_html_escape(struct tcx_buf *b, const char *s);

#endif
