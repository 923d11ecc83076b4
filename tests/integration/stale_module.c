/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A daemon module of another version, for tests/integration/cli.sh: the
 * executable must refuse it without calling anything in it. */
#include <stdio.h>

#include "agent/module.h"

const char tcx_module_id[] = "tcexporter 0.0.0-stale daemon-abi " TCX_STR(TCX_DAEMON_ABI);

int tcx_module_daemon_main(const struct tcx_daemon_opts *o)
{
	fprintf(stderr, "the stale module ran\n");
	return 99;
}
