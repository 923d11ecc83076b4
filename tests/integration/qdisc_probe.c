/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A test driver of collectors/qdisc_parse.c alone, for
 * tests/integration/qdisc_decode.sh:
 *
 *   qdisc_probe DEV
 *
 * dumps the qdiscs and the classes of DEV in the namespace it runs in and
 * prints each as tcx_parse_qdisc_msg() decodes it, one JSON object a line:
 *   {"object":"class","ifindex":N,"handle":N,"parent":N,"kind":"htb",
 *    "stats":{"bytes":N,...},"xstats":{"tc_class_htb_lends_total":N,...}}
 * with the generic counters that are present, and each per-kind statistic
 * that is present as its raw integer (signed ones signed; an array element
 * or a tin as FAMILY{LABEL="VALUE"}). Exits 1 on a malformed message or a
 * netlink error. */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/qdisc_parse.h"

static const char *const qstat_names[TCX_QSTAT__MAX] = {
        [TCX_QSTAT_BYTES] = "bytes",          [TCX_QSTAT_PACKETS] = "packets",
        [TCX_QSTAT_DROPS] = "drops",          [TCX_QSTAT_OVERLIMITS] = "overlimits",
        [TCX_QSTAT_REQUEUES] = "requeues",    [TCX_QSTAT_BACKLOG_BYTES] = "backlog",
        [TCX_QSTAT_BACKLOG_PACKETS] = "qlen",
};

static void print_value(const struct tcx_xstat *f, const char *label, unsigned label_value,
                        uint64_t raw, int *first)
{
	printf("%s\"%s", *first ? "" : ",", f->family);
	if (f->label)
		printf("{%s=\\\"%s\\\"}", f->label, f->label_value);
	else if (label)
		printf("{%s=\\\"%u\\\"}", label, label_value);
	if (f->flags & TCX_XSTAT_SIGNED)
		printf("\":%lld", (long long)(int64_t)raw);
	else
		printf("\":%llu", (unsigned long long)raw);
	*first = 0;
}

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tcx_qdisc_msg m;
	char err[256];
	int first = 1;

	(void)data;
	if (tcx_parse_qdisc_msg(nlh, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "qdisc_probe: malformed message: %s\n", err);
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	printf("{\"object\":\"%s\",\"ifindex\":%u,\"handle\":%u,\"parent\":%u,\"kind\":\"%s\","
	       "\"stats\":{",
	       m.is_class ? "class" : "qdisc", m.ifindex, m.handle, m.parent, m.kind);
	for (int i = 0; i < TCX_QSTAT__MAX; i++)
		if (m.stats_present & (1u << i)) {
			printf("%s\"%s\":%llu", first ? "" : ",", qstat_names[i],
			       (unsigned long long)m.stats[i]);
			first = 0;
		}
	printf("},\"xstats\":{");
	first = 1;
	for (unsigned i = 0; m.xt && i < m.xt->n_fields; i++)
		if (m.xs_present & (1u << i))
			print_value(&m.xt->fields[i], NULL, 0, m.xs[i], &first);
	for (unsigned t = 0; t < m.n_tins; t++)
		for (unsigned i = 0; i < m.xt->n_tin_fields; i++)
			if (m.tin_present[t] & (1u << i))
				print_value(&m.xt->tin_fields[i], m.xt->tin_label, t, m.tin[t][i],
				            &first);
	printf("}}\n");
	return MNL_CB_OK;
}

static int dump(struct mnl_socket *sk, uint16_t type, int ifindex)
{
	static char buf[32768];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;
	unsigned seq = (unsigned)time(NULL) + type, port = mnl_socket_get_portid(sk);
	ssize_t n;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	if (mnl_socket_sendto(sk, nlh, nlh->nlmsg_len) < 0)
		return -1;
	do {
		n = mnl_socket_recvfrom(sk, buf, sizeof(buf));
		if (n < 0)
			return -1;
		ret = mnl_cb_run(buf, (size_t)n, seq, port, msg_cb, NULL);
	} while (ret > MNL_CB_STOP);
	return ret;
}

int main(int argc, char **argv)
{
	struct mnl_socket *sk;
	int ifindex;

	if (argc != 2) {
		fprintf(stderr, "usage: qdisc_probe DEV\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "qdisc_probe: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	sk = mnl_socket_open(NETLINK_ROUTE);
	if (!sk || mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("qdisc_probe: netlink socket");
		return 1;
	}
	/* (The qdisc dump lists every device's: "ifindex" tells them apart.) */
	if (dump(sk, RTM_GETQDISC, ifindex) < 0 || dump(sk, RTM_GETTCLASS, ifindex) < 0) {
		perror("qdisc_probe: dump");
		return 1;
	}
	mnl_socket_close(sk);
	return 0;
}
