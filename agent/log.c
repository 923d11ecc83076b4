/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "agent/log.h"

/* The one piece of process-wide state: where log lines go. */
static struct {
	tcx_log_fn fn;
	void *arg;
	int level;
	int syslog;
} log_sink = {NULL, NULL, LOG_INFO, 0};

void tcx_log_use_syslog(void)
{
	openlog("tcexporter", LOG_PID, LOG_DAEMON);
	log_sink.syslog = 1;
}

void tcx_log_register(tcx_log_fn fn, void *arg)
{
	log_sink.fn = fn;
	log_sink.arg = arg;
}

void tcx_log_config_error(void *arg, const char *msg)
{
	int *n = arg;

	(*n)++;
	log_err("%s", msg);
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

void tcx_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (prio > log_sink.level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_sink.fn)
		log_sink.fn(prio, msg, log_sink.arg);
	else if (log_sink.syslog)
		syslog(prio, "%s", msg);
	else
		fprintf(stderr, "tcexporter: %s: %s\n", level_name(prio), msg);
}
