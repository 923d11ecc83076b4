/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/log.h"
#include "config/config.h"

/* The one piece of process-wide state: where log lines go, stderr until
 * tcx_log_use_syslog(). */
static int use_syslog;

void tcx_log_use_syslog(void)
{
	openlog("tcexporter", LOG_PID, LOG_DAEMON);
	use_syslog = 1;
}

void tcx_log_config_error(void *arg, const char *msg)
{
	int *n = arg;

	(*n)++;
	log_err("%s", msg);
}

void tcx_log_config_warnings(const struct tcx_config *cfg)
{
	for (size_t i = 0; cfg && i < cfg->n_warnings; i++)
		log_warnx("%s", cfg->warnings[i]);
}

static const char *level_name(int prio)
{
	switch (prio) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_NOTICE:
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

/* Whether stderr is the journal: systemd sets JOURNAL_STREAM to the
 * "DEVICE:INODE" of the stream it connects to stderr, and a stderr that is
 * still that stream takes sd-daemon(3)'s "<N>" priority prefixes. Checked
 * at each line, which is rare: stderr may be redirected after startup. */
static int stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	int end = 0;

	if (!env || sscanf(env, "%ju:%ju%n", &dev, &ino, &end) != 2 || env[end])
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

void tcx_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (prio > LOG_INFO)
		return; /* log_debug(): not logged */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (use_syslog)
		syslog(prio, "%s", msg);
	else if (stderr_is_journal())
		fprintf(stderr, "<%d>tcexporter: %s: %s\n", prio, level_name(prio), msg);
	else
		fprintf(stderr, "tcexporter: %s: %s\n", level_name(prio), msg);
}
