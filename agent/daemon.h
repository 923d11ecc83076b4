/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The long-running exporter: one collector thread publishes snapshots, the
 * HTTP server (libmicrohttpd's threads) serves expositions of the current
 * one (agent/state.h: what they share), and the main thread handles
 * signals. */
#ifndef TCX_DAEMON_H
#define TCX_DAEMON_H

#include "config/config.h"

/* Run the daemon with the configuration file config_path (NULL: the built-in
 * configuration), its http section overridden by http_override (NULL: none)
 * at every load; logging is already set up. Returns the exit status. */
int tcx_daemon_main(const char *config_path, const struct tcx_http_override *http_override);

#endif
