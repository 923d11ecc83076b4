/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The configuration used when no file is given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

const char tcx_default_config_yaml[] =
        "# tcexporter built-in default: every qdisc and shared block of the\n"
        "# current network namespace, every 15 seconds.\n"
        "interval: 15s\n"
        "targets:\n"
        "  - all: true\n"
        "unmapped: export\n";

static void default_err(void *arg, const char *msg)
{
	fprintf(stderr, "tcexporter: built-in configuration: %s\n", msg);
}

struct tcx_config *tcx_config_default(void)
{
	struct tcx_config *cfg;

	cfg = tcx_config_load_buffer("<default>", tcx_default_config_yaml,
	                             strlen(tcx_default_config_yaml), default_err, NULL);
	if (!cfg)
		abort(); /* a program bug (or out of memory at start-up) */
	return cfg;
}
