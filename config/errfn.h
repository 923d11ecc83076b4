/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the loaders (config/config.c, agent/http/webconfig.c, through
 * config/yamlutil.c) report problems. */
#ifndef TCX_ERRFN_H
#define TCX_ERRFN_H

/* Error sink: each problem is reported once as "FILE:LINE:COL: message". */
typedef void (*tcx_config_err_fn)(void *arg, const char *msg);

#endif
