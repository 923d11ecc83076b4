/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The interface between the executable and the daemon module.
 *
 * The executable (--once, --check-config, --help, --version) links libmnl,
 * libyaml, and GnuTLS and libcrypt (the web config loader, which
 * --check-config runs), so that it starts fast. The daemon (HTTP with
 * libmicrohttpd, zlib, and the net-snmp AgentX subagent, whose libraries take
 * milliseconds to load) is tcexporter-daemon.so, which the executable
 * dlopen()s only to run as a daemon, as tc(8) loads its q_*.so modules. The
 * module has its own copy of the core code (collectors, configuration,
 * renderers, logging) and shares no symbol with the executable: what the
 * daemon needs from the command line, logging choices included, travels in
 * struct tcx_daemon_opts. */
#ifndef TCX_MODULE_H
#define TCX_MODULE_H

/* Bump on any change of struct tcx_daemon_opts or of the entry point. */
#define TCX_DAEMON_ABI 1

/* The module's identity, exported as tcx_module_id: the executable refuses a
 * module whose identity differs from its own (one left over from another
 * version, or of another ABI), before it calls anything in it. */
#define TCX_STR_(x)   #x
#define TCX_STR(x)    TCX_STR_(x)
#define TCX_MODULE_ID "tcexporter " PACKAGE_VERSION " daemon-abi " TCX_STR(TCX_DAEMON_ABI)

#define TCX_MODULE_NAME "tcexporter-daemon.so"
/* A module to load instead of the usual one (tests, debugging). */
#define TCX_MODULE_ENV "TCEXPORTER_MODULE"

struct tcx_daemon_opts {
	const char *config_path; /* NULL: the built-in configuration */
	int syslog;              /* log to syslog(3) instead of standard error */
	int log_level;           /* messages above this syslog priority are dropped */
};

/* ---- defined in the module, looked up with dlsym() ---------------------------------------- */

#define TCX_MODULE_EXPORT __attribute__((visibility("default")))

TCX_MODULE_EXPORT extern const char tcx_module_id[];
/* Runs the daemon; returns the exit status. */
TCX_MODULE_EXPORT int tcx_module_daemon_main(const struct tcx_daemon_opts *o);
typedef int tcx_module_daemon_main_fn(const struct tcx_daemon_opts *o);

/* ---- in the executable ---------------------------------------------------------------------- */

/* Load the module and run the daemon: the module named by $TCEXPORTER_MODULE,
 * else tcexporter-daemon.so next to the executable (a build tree), else the
 * one in PKGLIBDIR. Returns the exit status: 1 when the module cannot be
 * loaded. */
int tcx_run_daemon_module(const struct tcx_daemon_opts *o);

#endif
