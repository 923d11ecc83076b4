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
	if (!o || o->abi != TCX_DAEMON_ABI) {
		/* The executable checks tcx_module_id first: only a caller that
		 * does not can get here. */
		log_err("daemon module: options of ABI %u, expected %u", o ? o->abi : 0,
		        TCX_DAEMON_ABI);
		return 1;
	}
	/* This module's log state is its own, not the executable's. */
	if (o->syslog)
		tcx_log_use_syslog();
	tcx_log_set_level(o->log_level);
	return tcx_daemon_main(o);
}
