/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Command line: option parsing, the --once and --check-config modes, and the
 * start of the daemon (agent/daemon.h). */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/buildinfo.h"
#include "agent/cli.h"
#include "agent/daemon.h"
#include "agent/log.h"
#include "agent/render/render.h"
#include "agent/http/webconfig.h"
#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/nl.h"
#include "build.h"
#include "lib/fds.h"

struct cli_opts {
	const char *config;
	struct tcx_http_override http; /* --web.listen-address, --web.config.file */
	const char *check;
	int once;
	int syslog;
	int format_given;
	enum tcx_format format;
};

static void usage(FILE *out)
{
	fprintf(out,
	        "Usage: tcexporter [OPTIONS]\n"
	        "Export the counters of Linux TC filter actions, labelled by action cookie,\n"
	        "and of every qdisc and class.\n"
	        "\n"
	        "  -1, --once                collect once, print to standard output and exit;\n"
	        "                            with `aggregate`, the sums of the rows of that one\n"
	        "                            collection (no history: what deleted rows counted,\n"
	        "                            and rows before a reset, is not in them)\n"
	        "  -c, --config FILE         configuration file (default: the built-in one,\n"
	        "                            which collects every qdisc and shared block)\n"
	        "  -f, --format FORMAT       output of --once: prometheus (default), openmetrics\n"
	        "                            or json (one object per action row, or aggregate,\n"
	        "                            and line)\n"
	        "  -t, --check-config FILE   validate FILE, report every problem and exit\n"
	        "  -s, --syslog              the daemon: log to syslog instead of standard error\n"
	        "      --web.listen-address=ADDRESS\n"
	        "                            the daemon: listen on ADDRESS (HOST:PORT,\n"
	        "                            [IPV6]:PORT or :PORT) instead of http.listen;\n"
	        "                            repeat it for more addresses (at most %d)\n"
	        "      --web.config.file=FILE\n"
	        "                            the daemon and --check-config: the web config\n"
	        "                            (TLS, basic auth, headers) instead of\n"
	        "                            http.web_config\n"
	        "  -h, --help                show this help and exit\n"
	        "  -V, --version             show the version and exit\n"
	        "\n"
	        "Exit status: 0 when every target was collected, 1 when some target, or the\n"
	        "classes of some device, failed (the output still holds the others) or output\n"
	        "could not be written, 2 for bad usage or a bad configuration.\n"
	        "\n"
	        "See tcexporter(8). The configuration that the systemd unit passes to --config:\n"
	        "  %s/tcexporter/tcexporter.yaml\n"
	        "an example with every key, commented:\n"
	        "  %s/tcexporter.yaml\n",
	        TCX_MAX_LISTEN, SYSCONFDIR, EXAMPLESDIR);
}

/* tcexporter VERSION (revision R, libmnl X, libmicrohttpd Y, net-snmp Z):
 * what tc_exporter_build_info says. */
static void print_version(void)
{
	const char *v[TCX_BUILD__MAX];

	tcx_build_info(v);
	printf("tcexporter %s (", v[TCX_BUILD_VERSION]);
	for (unsigned i = TCX_BUILD_VERSION + 1; i < TCX_BUILD__MAX; i++)
		printf("%s%s %s", i > TCX_BUILD_VERSION + 1 ? ", " : "", tcx_build_names[i], v[i]);
	printf(")\n");
}

enum { OPT_LISTEN = 256, OPT_WEB_CONFIG };

static int parse_args(int argc, char **argv, struct cli_opts *o)
{
	static const struct option longopts[] = {
	        {"once", no_argument, NULL, '1'},
	        {"config", required_argument, NULL, 'c'},
	        {"format", required_argument, NULL, 'f'},
	        {"check-config", required_argument, NULL, 't'},
	        {"syslog", no_argument, NULL, 's'},
	        {"help", no_argument, NULL, 'h'},
	        {"version", no_argument, NULL, 'V'},
	        {"web.listen-address", required_argument, NULL, OPT_LISTEN},
	        {"web.config.file", required_argument, NULL, OPT_WEB_CONFIG},
	        {NULL, 0, NULL, 0},
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":1c:f:t:shV", longopts, NULL)) != -1) {
		switch (c) {
		case '1':
			o->once = 1;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'f':
			o->format_given = 1;
			if (tcx_format_parse(optarg, &o->format) < 0) {
				log_err("unknown format '%s' (expected prometheus, openmetrics or "
				        "json)",
				        optarg);
				return -1;
			}
			break;
		case 't':
			o->check = optarg;
			break;
		case 's':
			o->syslog = 1;
			break;
		case OPT_LISTEN: {
			char host[256];
			unsigned port;

			if (tcx_listen_split(optarg, host, sizeof(host), &port) < 0) {
				log_err("invalid --web.listen-address '%s': expected HOST:PORT, "
				        "[IPV6]:PORT or :PORT",
				        optarg);
				return -1;
			}
			if (o->http.n_listen == TCX_MAX_LISTEN) {
				log_err("too many --web.listen-address (at most %d)",
				        TCX_MAX_LISTEN);
				return -1;
			}
			o->http.listen[o->http.n_listen++] = optarg;
			break;
		}
		case OPT_WEB_CONFIG:
			if (!optarg[0]) {
				log_err("--web.config.file needs a file name");
				return -1;
			}
			o->http.web_config = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			print_version();
			return 1;
		case ':':
			log_err("option '%s' needs an argument", argv[optind - 1]);
			return -1;
		default:
			log_err("unknown option '%s'", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (o->format_given && !o->once) {
		log_err("--format applies to --once only (the daemon negotiates per request)");
		return -1;
	}
	if (o->once && (o->http.n_listen || o->http.web_config)) {
		log_err("--web.listen-address and --web.config.file apply to the daemon, not to "
		        "--once");
		return -1;
	}
	return 0;
}

/* Everything the daemon would refuse of the configuration at path: the file,
 * and the web config it names (or --web.config.file). */
static int check_config(const char *path, const struct tcx_http_override *http)
{
	int nerr = 0;
	struct tcx_config *cfg = tcx_config_load_file(path, tcx_log_config_error, &nerr);
	struct tcx_webconfig *web = NULL;

	tcx_log_config_warnings(cfg);
	if (cfg && tcx_config_override_http(cfg, http) < 0) {
		log_err("out of memory");
		tcx_config_unref(cfg);
		return TCX_EXIT_USAGE;
	}
	if (cfg && cfg->http.web_config)
		web = tcx_webconfig_load(cfg->http.web_config, tcx_log_config_error, &nerr);
#ifndef HAVE_SNMP
	if (cfg && cfg->snmp.enabled) {
		log_err("%s: snmp is enabled, but this tcexporter was built without net-snmp "
		        "(configure --with-snmp)",
		        path);
		nerr++;
	}
#endif
	if (nerr) {
		log_err("%s: %d problem%s found", path, nerr, nerr == 1 ? "" : "s");
		tcx_webconfig_unref(web);
		tcx_config_unref(cfg);
		return TCX_EXIT_USAGE;
	}
	printf("%s: configuration is valid (%zu target%s, %zu label%s, %zu cookie%s, %zu "
	       "class%s, %zu decoder%s%s)\n",
	       path, cfg->n_targets, cfg->n_targets == 1 ? "" : "s", cfg->n_labels,
	       cfg->n_labels == 1 ? "" : "s", cfg->n_cookies, cfg->n_cookies == 1 ? "" : "s",
	       cfg->classes.n, cfg->classes.n == 1 ? "" : "es", cfg->n_decoders,
	       cfg->n_decoders == 1 ? "" : "s", web ? ", and its web_config" : "");
	tcx_webconfig_unref(web);
	tcx_config_unref(cfg);
	return TCX_EXIT_OK;
}

/* Returns the number of targets and devices that failed. */
static size_t report_failures(const struct tcx_snapshot *s)
{
	struct tcx_buf b;
	size_t n;

	tcx_buf_init_mem(&b);
	n = tcx_snapshot_failures(s, &b);
	tcx_buf_putc(&b, '\0');
	for (char *line = b.err ? NULL : b.p, *nl; line && (nl = strchr(line, '\n'));
	     line = nl + 1) {
		*nl = '\0';
		log_err("%s", line);
	}
	if (b.err)
		log_err("%zu targets or devices failed (out of memory to say which)", n);
	tcx_buf_free(&b);
	if (s->incomplete)
		log_err("collection incomplete: out of memory");
	if (s->merged_filters || s->merged_actions)
		log_warnx("%" PRIu64 " filter and %" PRIu64
		          " action rows had the labels of an earlier "
		          "row and were merged into it (tc_exporter_merged_rows)",
		          s->merged_filters, s->merged_actions);
	return n;
}

static int run_once(const struct cli_opts *o)
{
	struct tcx_config *cfg;
	struct tcx_collector *c;
	struct tcx_snapshot *s = NULL;
	struct tcx_buf out;
	int nerr = 0, ret = TCX_EXIT_PARTIAL, err;
	rlim_t before, after;

	/* A namespace costs 2 or 3 fds (README.md): room for them all. When
	 * it cannot be raised, the targets that do not fit fail (cause
	 * resource) and say why. */
	tcx_fd_raise_limit(&before, &after);
	cfg = o->config ? tcx_config_load_file(o->config, tcx_log_config_error, &nerr)
	                : tcx_config_default();
	if (!cfg)
		return TCX_EXIT_USAGE;
	tcx_log_config_warnings(cfg);
	c = tcx_collector_new(&tcx_netlink_source, NULL);
	if (c) {
		tcx_collector_once(c); /* every row has its times; every parent asked */
		s = tcx_collect(c, cfg);
	}
	/* With `aggregate`: the sums of the rows of this one pass. */
	if (s && tcx_agg_sum(s) < 0) {
		log_err("out of memory");
		goto out;
	}
	if (!s || tcx_buf_init_fd(&out, STDOUT_FILENO) < 0) {
		log_err("out of memory");
		goto out;
	}
	ret = TCX_EXIT_OK;
	err = tcx_render(s, o->format, NULL, &out);
	if (!err)
		err = tcx_buf_flush(&out);
	if (err) {
		log_err("cannot write output: %s", strerror(-err));
		ret = TCX_EXIT_PARTIAL;
	}
	tcx_buf_free(&out);
	if (report_failures(s) || s->incomplete)
		ret = TCX_EXIT_PARTIAL;
out:
	tcx_snapshot_unref(s);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
	return ret;
}

int tcx_main(int argc, char **argv)
{
	struct cli_opts o = {0};
	int r;

#ifdef M_MMAP_THRESHOLD
	/* Rows and their label text live in a few large arrays that grow
	 * (lib/grow.h) as they fill. A fixed threshold keeps them mmap()ed (glibc's moving one
	 * rises with every large block freed, and then serves them from the
	 * heap): growing moves pages instead of copying them, and a freed
	 * snapshot goes back to the system at once. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	r = parse_args(argc, argv, &o);

	if (r < 0) {
		fprintf(stderr, "Try 'tcexporter --help' for more information.\n");
		return TCX_EXIT_USAGE;
	}
	if (r > 0)
		return TCX_EXIT_OK;
	if (o.check)
		return check_config(o.check, &o.http);
	if (o.once)
		return run_once(&o);
	if (o.syslog)
		tcx_log_use_syslog();
	return tcx_daemon_main(o.config, &o.http);
}
