/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon: threads, signals, reloads.
 *
 * Signals are blocked in every thread and taken synchronously by the main
 * thread (sigwaitinfo), so no handler runs in an arbitrary thread. SIGHUP
 * reloads the configuration and the web configuration: a new configuration
 * that does not load is logged and rejected, and the running one stays. A
 * change of listen addresses, limits or TLS material starts the new HTTP
 * servers before the old ones stop, on the old ones' listen sockets where
 * the address stays, so /metrics keeps answering. SIGTERM and SIGINT stop
 * the collector, the servers and the SNMP subagent, join every thread and
 * exit 0. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/buf.h"
#include "agent/daemon.h"
#include "agent/state.h"
#include "agent/http/http.h"
#include "agent/log.h"
#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/liveness.h"
#include "collectors/qrates.h"
#include "collectors/nl.h"
#include "build.h"
#include "lib/clock.h"
#include "lib/fds.h"
#ifdef HAVE_SNMP
#include "agent/snmp/subagent.h"
#endif

struct daemon {
	struct tcx_state st;
	const char *config_path;                       /* NULL: the built-in configuration */
	const struct tcx_http_override *http_override; /* the command line's */
	struct tcx_config *http_cfg; /* one whose http section the servers run with */
	pthread_t collector;
	int ready_sent;
#ifdef HAVE_SNMP
	struct tcx_snmp *snmp;
#endif
	/* failures logged by the previous pass, to log changes only */
	char *failed;
};

/* ---- systemd notification (the plain notify-socket protocol) --------------------------- */

static void sd_notify_msg(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len;
	int fd;

	if (!path || !*path)
		return;
	len = strlen(path);
	if (len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@'))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract namespace */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
	           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		log_warnx("sd_notify: %s", strerror(errno));
	close(fd);
}

/* ---- the collector thread --------------------------------------------------------------- */

/* Log target failures when they change, not on every pass. */
static void log_failures(struct daemon *d, const struct tcx_snapshot *s)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	tcx_snapshot_failures(s, &b);
	tcx_buf_putc(&b, '\0');
	if (b.err) {
		tcx_buf_free(&b);
		return;
	}
	if (!d->failed || strcmp(d->failed, b.p) != 0) {
		char *line = b.p, *nl;

		if (!b.p[0] && d->failed && d->failed[0])
			log_info("every target collected again");
		for (; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			log_err("%s", line);
			*nl = '\n';
		}
		free(d->failed);
		d->failed = b.p;
	} else {
		tcx_buf_free(&b);
	}
}

static void *collector_main(void *arg)
{
	struct daemon *d = arg;
	struct tcx_state *st = &d->st;
	struct tcx_collector *c = tcx_collector_new(&tcx_netlink_source, NULL);
	/* The aggregates (`aggregate:`), of the actions and of the filters'
	 * hit counters, kept from pass to pass: this thread's alone. */
	struct tcx_agg *agg = tcx_agg_new(), *hits = tcx_agg_new_hits();
	/* The qdiscs' and classes' counters of the last collection, for the
	 * rates of the next (collectors/qrates.h): this thread's alone. */
	struct tcx_qrates *qr = tcx_qrates_new();
	/* The action times of terse targets between liveness passes
	 * (collectors/liveness.h): this thread's alone. */
	struct tcx_liveness *lv = tcx_liveness_new();

	if (!c || !agg || !hits || !qr || !lv) {
		log_err("collector: out of memory");
		tcx_collector_free(c);
		tcx_agg_free(agg);
		tcx_agg_free(hits);
		tcx_qrates_free(qr);
		tcx_liveness_free(lv);
		return NULL;
	}
	for (;;) {
		struct tcx_config *cfg;
		struct tcx_snapshot *s;
		struct tcx_expo *e, *old;
		struct timespec deadline;
		double interval, started;

		pthread_mutex_lock(&st->lock);
		if (st->stop) {
			pthread_mutex_unlock(&st->lock);
			break;
		}
		cfg = tcx_config_ref(st->cfg);
		pthread_mutex_unlock(&st->lock);

		started = tcx_clock_s(CLOCK_MONOTONIC);
		s = tcx_collect(c, cfg);
		if (s) {
			tcx_liveness_update(lv, s);
			tcx_agg_update(agg, s);
			tcx_agg_update(hits, s);
			tcx_qrates_update(qr, s, started);
		}
		interval = cfg->interval_s;
		tcx_config_unref(cfg);
		old = tcx_state_expo(st); /* what was asked of it: what e renders ahead */
		e = s ? tcx_expo_new(s, tcx_http_response_free, old) : NULL;
		tcx_expo_unref(old);
		if (e) {
			/* Count this pass first: its own exposition includes it. */
			pthread_mutex_lock(&st->lock);
			st->collections_total++;
			for (unsigned i = 0; i < TCX_ERR__MAX; i++)
				st->collection_errors_total[i] += s->errors[i];
			pthread_mutex_unlock(&st->lock);
			tcx_http_prerender(st, e);
			log_failures(d, s);
			pthread_mutex_lock(&st->lock);
			old = st->expo;
			st->expo = e;
			clock_gettime(CLOCK_MONOTONIC, &st->last_publish);
			tcx_http_published(st->http, e);
			pthread_mutex_unlock(&st->lock);
			tcx_expo_unref(old);
#ifdef HAVE_SNMP
			tcx_snmp_notify(d->snmp);
#endif
			if (!d->ready_sent) {
				sd_notify_msg("READY=1\nSTATUS=serving");
				d->ready_sent = 1;
			}
		} else {
			log_err("collection failed: out of memory; serving the previous snapshot");
		}
		tcx_snapshot_unref(s);

		/* On the monotonic clock (st->wake's): a wall clock stepped back
		 * by NTP must not hold the next collection back as long. */
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline = tcx_ts_add(deadline, interval);
		pthread_mutex_lock(&st->lock);
		while (!st->stop && !st->collect_now &&
		       pthread_cond_timedwait(&st->wake, &st->lock, &deadline) != ETIMEDOUT)
			;
		st->collect_now = 0;
		pthread_mutex_unlock(&st->lock);
	}
	tcx_collector_free(c);
	tcx_agg_free(agg);
	tcx_agg_free(hits);
	tcx_qrates_free(qr);
	tcx_liveness_free(lv);
	return NULL;
}

#ifdef HAVE_SNMP
/* For the SNMP thread: the latest snapshot. */
static struct tcx_snapshot *current_snapshot(void *arg)
{
	struct tcx_state *st = arg;
	struct tcx_expo *e = tcx_state_expo(st);
	struct tcx_snapshot *s = e ? tcx_snapshot_ref(e->snap) : NULL;

	tcx_expo_unref(e);
	return s;
}
#endif

/* ---- configuration ---------------------------------------------------------------------- */

static int load_all(const struct daemon *d, struct tcx_config **cfg, struct tcx_webconfig **web)
{
	int nerr = 0;

	*web = NULL;
	*cfg = d->config_path ? tcx_config_load_file(d->config_path, tcx_log_config_error, &nerr)
	                      : tcx_config_default();
	if (!*cfg)
		return -1;
	if (tcx_config_override_http(*cfg, d->http_override) < 0) {
		log_err("out of memory");
		tcx_config_unref(*cfg);
		*cfg = NULL;
		return -1;
	}
	tcx_log_config_warnings(*cfg);
	if ((*cfg)->http.web_config) {
		*web = tcx_webconfig_load((*cfg)->http.web_config, tcx_log_config_error, &nerr);
		if (!*web) {
			tcx_config_unref(*cfg);
			*cfg = NULL;
			return -1;
		}
	}
	return 0;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Do the HTTP servers have to be restarted for this configuration? */
static int http_changed(const struct daemon *d, const struct tcx_http_cfg *h,
                        const struct tcx_webconfig *w, const struct tcx_webconfig *oldw)
{
	const struct tcx_http_cfg *o = &d->http_cfg->http;

	if (o->n_listen != h->n_listen || o->max_connections != h->max_connections ||
	    o->max_connections_per_ip != h->max_connections_per_ip ||
	    o->timeout_s != h->timeout_s || o->max_stale_mib != h->max_stale_mib ||
	    o->renders_per_ip != h->renders_per_ip || o->renders != h->renders ||
	    o->password_checks_per_ip != h->password_checks_per_ip ||
	    o->password_checks != h->password_checks)
		return 1;
	for (size_t i = 0; i < h->n_listen; i++)
		if (strcmp(o->listen[i], h->listen[i]) != 0)
			return 1;
	if (!w || !oldw)
		return (w && w->cert_pem) || (oldw && oldw->cert_pem);
	return !same_str(w->cert_pem, oldw->cert_pem) || !same_str(w->key_pem, oldw->key_pem) ||
	       !same_str(w->client_ca_pem, oldw->client_ca_pem) ||
	       w->client_auth != oldw->client_auth ||
	       !same_str(w->tls_priorities, oldw->tls_priorities);
}

/* The servers become h (st->http, which the collector reads under the
 * lock); the old ones finish what they have and stop. */
static void replace_http(struct tcx_state *st, struct tcx_http *h)
{
	struct tcx_http *old = st->http;

	pthread_mutex_lock(&st->lock);
	st->http = h;
	pthread_mutex_unlock(&st->lock);
	tcx_http_stop(old);
}

static void reload(struct daemon *d)
{
	struct tcx_state *st = &d->st;
	struct tcx_config *cfg, *oldcfg;
	struct tcx_webconfig *web, *oldweb;
	struct tcx_http *nh = NULL;
	char err[300];

	sd_notify_msg("RELOADING=1");
	log_info("reloading %s", d->config_path ? d->config_path
	                                        : "the built-in "
	                                          "configuration");
	if (load_all(d, &cfg, &web) < 0) {
		log_err("reload rejected: keeping the running configuration");
		pthread_mutex_lock(&st->lock);
		st->last_reload_ok = 0;
		pthread_mutex_unlock(&st->lock);
		sd_notify_msg(
		        "READY=1\nSTATUS=reload rejected, running the previous configuration");
		return;
	}
	pthread_mutex_lock(&st->lock);
	oldweb = tcx_webconfig_ref(st->web);
	pthread_mutex_unlock(&st->lock);
	if (http_changed(d, &cfg->http, web, oldweb)) {
		nh = tcx_http_start(st, &cfg->http, web, st->http, err, sizeof(err));
		if (!nh && tcx_http_handed_over(st->http)) {
			/* Some old servers stopped accepting already: serve the old
			 * settings from fresh servers (on the listen sockets of the
			 * old ones that still accept), then retire the old ones. */
			char err2[300];
			struct tcx_http *again = tcx_http_start(st, &d->http_cfg->http, oldweb,
			                                        st->http, err2, sizeof(err2));

			if (again)
				replace_http(st, again);
			else
				log_err("cannot restore the HTTP servers: %s", err2);
		}
		if (!nh) {
			log_err("reload rejected: %s; keeping the running configuration", err);
			tcx_webconfig_unref(oldweb);
			tcx_webconfig_unref(web);
			tcx_config_unref(cfg);
			pthread_mutex_lock(&st->lock);
			st->last_reload_ok = 0;
			pthread_mutex_unlock(&st->lock);
			sd_notify_msg("READY=1");
			return;
		}
	}
	tcx_webconfig_unref(oldweb);
	if (cfg->snmp.enabled != d->st.cfg->snmp.enabled ||
	    cfg->snmp.ping_interval_s != d->st.cfg->snmp.ping_interval_s ||
	    !same_str(cfg->snmp.agentx_socket, d->st.cfg->snmp.agentx_socket))
		log_warnx("the snmp settings changed: they take effect when tcexporter restarts");
	pthread_mutex_lock(&st->lock);
	oldcfg = st->cfg;
	oldweb = st->web;
	st->cfg = cfg;
	st->web = web;
	st->collect_now = 1;
	st->last_reload_ok = 1;
	st->last_reload_ts = tcx_clock_s(CLOCK_REALTIME);
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	if (nh)
		replace_http(st, nh);
	/* the servers run with cfg's http section (equal to the old one when
	 * they were kept): holding the old configuration would hold its cookies */
	tcx_config_unref(d->http_cfg);
	d->http_cfg = tcx_config_ref(cfg);
	tcx_config_unref(oldcfg);
	tcx_webconfig_unref(oldweb);
	log_info("configuration reloaded");
	sd_notify_msg("READY=1\nSTATUS=serving");
}

/* ---- main ------------------------------------------------------------------------------- */

int tcx_daemon_main(const char *config_path, const struct tcx_http_override *http_override)
{
	struct daemon *d = calloc(1, sizeof(*d));
	struct tcx_state *st;
	sigset_t set;
	char err[300], files[80];
	int ret = 0, sig, raised;
	rlim_t nofile_before, nofile;

	if (!d) {
		log_err("out of memory");
		return 1;
	}
	d->config_path = config_path;
	d->http_override = http_override;
	st = &d->st;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* inherited by every thread made below */
	signal(SIGPIPE, SIG_IGN);
	setenv("MIBS", "", 1); /* net-snmp: numeric OIDs, no MIB files to load */
	raised = tcx_fd_raise_limit(&nofile_before, &nofile);
	if (raised < 0)
		log_warnx("cannot raise the soft open files limit (%ju) to the hard one: %s",
		          (uintmax_t)nofile_before, strerror(-raised));
	snprintf(files, sizeof(files), "%ju open files at most", (uintmax_t)nofile);
	if (nofile != nofile_before)
		snprintf(files + strlen(files), sizeof(files) - strlen(files),
		         " (the soft limit, raised from %ju)", (uintmax_t)nofile_before);

	if (load_all(d, &st->cfg, &st->web) < 0) {
		free(d);
		return 2;
	}
	pthread_mutex_init(&st->lock, NULL);
	tcx_cond_init_monotonic(&st->wake);
	st->last_reload_ok = 1;
	st->last_reload_ts = tcx_clock_s(CLOCK_REALTIME);

	st->http = tcx_http_start(st, &st->cfg->http, st->web, NULL, err, sizeof(err));
	if (!st->http) {
		log_err("%s", err);
		ret = 1;
		goto out;
	}
	d->http_cfg = tcx_config_ref(st->cfg);
	if (st->cfg->snmp.enabled) {
#ifdef HAVE_SNMP
		d->snmp = tcx_snmp_start(&st->cfg->snmp, current_snapshot, st);
		if (!d->snmp) {
			ret = 1;
			goto out;
		}
#else
		log_err("snmp is enabled in the configuration, but this tcexporter was built "
		        "without net-snmp (configure --with-snmp)");
		ret = 2;
		goto out;
#endif
	}
	if (pthread_create(&d->collector, NULL, collector_main, d) != 0) {
		log_err("cannot start the collector thread");
		ret = 1;
		goto out;
	}
	pthread_setname_np(d->collector, "tcx-collector"); /* top -H, /proc: its CPU alone */
	log_info("tcexporter started: %zu target%s, collecting every %.3g s, %s",
	         st->cfg->n_targets, st->cfg->n_targets == 1 ? "" : "s", st->cfg->interval_s,
	         files);

	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			log_err("sigwaitinfo: %s", strerror(errno));
			ret = 1;
			break;
		}
		if (sig == SIGHUP) {
			reload(d);
			continue;
		}
		log_info("%s: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		break;
	}
	sd_notify_msg("STOPPING=1");
	pthread_mutex_lock(&st->lock);
	st->stop = 1;
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
	pthread_join(d->collector, NULL);
out:
#ifdef HAVE_SNMP
	tcx_snmp_stop(d->snmp);
#endif
	tcx_http_stop(st->http);
	tcx_expo_unref(st->expo);
	tcx_webconfig_unref(st->web);
	tcx_config_unref(st->cfg);
	tcx_config_unref(d->http_cfg);
	pthread_cond_destroy(&st->wake);
	pthread_mutex_destroy(&st->lock);
	free(d->failed);
	free(d);
	return ret;
}
