/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging: one line per message, with a level, to stderr by default;
 * log_debug() messages are not logged. When stderr is the journal (systemd's
 * JOURNAL_STREAM), each line starts with its syslog priority as "<N>"
 * (sd-daemon(3)), so that journalctl -p filters by level. */
#ifndef TCX_LOG_H
#define TCX_LOG_H

#include <syslog.h>

/* Send messages to syslog(3) instead of stderr. */
void tcx_log_use_syslog(void);

void tcx_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A tcx_config_err_fn (config/errfn.h) for the command line and the
 * daemon: logs msg as an error and counts it in the int arg points to. */
void tcx_log_config_error(void *arg, const char *msg);

/* Log the warnings of a configuration that loaded (cfg->warnings). */
struct tcx_config;
void tcx_log_config_warnings(const struct tcx_config *cfg);

#define log_err(...)   tcx_log(LOG_ERR, __VA_ARGS__)
#define log_warnx(...) tcx_log(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  tcx_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...) tcx_log(LOG_DEBUG, __VA_ARGS__)

#endif
