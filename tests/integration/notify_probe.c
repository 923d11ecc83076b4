/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A test driver of collectors/notify.c, alone (the daemon drains it through
 * the collector; tests/daemon/notify_final.sh):
 *
 *   notify_probe [-r BYTES] [NETNS]
 *
 * subscribes to the deletion notifications of the namespace it runs in
 * (`ip netns exec NETNS notify_probe NETNS`), their rows labelled NETNS, with a receive queue of BYTES (SO_RCVBUF, which the kernel
 * doubles) when -r is given, prints "ready", then for each line read on stdin drains
 * what is queued and prints its final rows as `--format json` prints rows,
 * one per line, then one line of counts:
 *   {"drained":ACTIONS,"filters":N,"lost":N,"malformed":N,"io":N,"dropped_sender":N,"dropped_length":N}
 * It exits at the end of stdin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/buf.h"
#include "agent/render/json.h"
#include "collectors/notify.h"

static int drain_once(struct tcx_notify *n)
{
	struct tcx_snapshot *s = tcx_notify_drain(n, NULL);
	struct tcx_buf out;
	int ret;

	if (!s) {
		fprintf(stderr, "notify_probe: out of memory\n");
		return -1;
	}
	fflush(stdout);
	if (tcx_buf_init_fd(&out, STDOUT_FILENO) < 0) {
		tcx_snapshot_unref(s);
		return -1;
	}
	ret = tcx_render_json(s, &out);
	if (!ret)
		ret = tcx_buf_flush(&out);
	tcx_buf_free(&out);
	printf("{\"drained\":%zu,\"filters\":%zu,\"lost\":%llu,\"malformed\":%llu,\"io\":%llu,"
	       "\"dropped_sender\":%llu,\"dropped_length\":%llu}\n",
	       s->n_actions, s->n_filters, (unsigned long long)s->notifications_lost,
	       (unsigned long long)s->errors[TCX_ERR_MALFORMED],
	       (unsigned long long)s->errors[TCX_ERR_IO],
	       (unsigned long long)s->netlink_dropped[TCX_NLDROP_SENDER],
	       (unsigned long long)s->netlink_dropped[TCX_NLDROP_LENGTH]);
	fflush(stdout);
	tcx_snapshot_unref(s);
	return ret;
}

int main(int argc, char **argv)
{
	struct tcx_notify *n;
	char err[256], line[64];
	int ret = 0, rcvbuf = 0;

	if (argc > 2 && strcmp(argv[1], "-r") == 0) {
		rcvbuf = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc > 2 || (argc > 1 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: notify_probe [-r BYTES] [NETNS]\n");
		return 2;
	}
	n = tcx_notify_open(argc > 1 ? argv[1] : NULL, 0, err, sizeof(err));
	if (!n) {
		fprintf(stderr, "notify_probe: %s\n", err);
		return 1;
	}
	if (rcvbuf &&
	    setsockopt(tcx_notify_fd(n), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0) {
		perror("notify_probe: SO_RCVBUF");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!ret && fgets(line, sizeof(line), stdin))
		ret = drain_once(n);
	tcx_notify_close(n);
	return ret ? 1 : 0;
}
