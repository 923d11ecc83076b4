/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The formats of --once, and the renderer of each. */
#include <string.h>

#include "agent/render/json.h"
#include "agent/render/prom.h"
#include "agent/render/render.h"

int tcx_format_parse(const char *name, enum tcx_format *fmt)
{
	if (strcmp(name, "prometheus") == 0 || strcmp(name, "text") == 0)
		*fmt = TCX_FMT_PROMETHEUS;
	else if (strcmp(name, "openmetrics") == 0)
		*fmt = TCX_FMT_OPENMETRICS;
	else if (strcmp(name, "json") == 0)
		*fmt = TCX_FMT_JSON;
	else
		return -1;
	return 0;
}

int tcx_render(const struct tcx_snapshot *s, enum tcx_format fmt,
               const struct tcx_rowlabels *labels, struct tcx_buf *b)
{
	if (fmt == TCX_FMT_JSON)
		return tcx_render_json(s, b);
	return tcx_render_prometheus_ex(s, fmt == TCX_FMT_OPENMETRICS, NULL, labels, b);
}
