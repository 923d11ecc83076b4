/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The entry point of the daemon module (tcexporter-daemon.so). Everything
 * else in the module is hidden (-fvisibility=hidden). */
#include "agent/daemon.h"
#include "agent/log.h"
#include "agent/module.h"
#include "config.h"

const char tcx_module_id[] = TCX_MODULE_ID;

int tcx_module_daemon_main(const struct tcx_daemon_opts *o)
{
	/* The executable has checked tcx_module_id, which carries the ABI. */
	if (!o)
		return 1;
	/* This module's log state is its own, not the executable's. */
	if (o->syslog)
		tcx_log_use_syslog();
	tcx_log_set_level(o->log_level);
	return tcx_daemon_main(o);
}
