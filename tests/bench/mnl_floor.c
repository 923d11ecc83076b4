/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmark floor: the least work that any libmnl TC exporter must do.
 *
 * One RTM_GETTFILTER dump of one device parent, with the request, buffer and
 * socket options that tcexporter ends up using on a kernel whose classifier
 * has no terse dump (a full dump, no TCA_DUMP_FLAGS). Each reply is run
 * through libmnl's callback loop with a data callback that walks the top-level
 * attributes and counts the messages; nothing is decoded or printed besides
 * the count, on standard error.
 *
 * With --terse the request carries TCA_DUMP_FLAGS = TCA_DUMP_FLAGS_TERSE, as
 * tcexporter's first dump of a target does: the floor for flower filters
 * (tests/vm/bench.sh).
 *
 * With --qdisc-class: one RTM_GETQDISC dump of the namespace and one
 * RTM_GETTCLASS dump of DEV, as tcexporter's qdisc and class collection does
 * (tests/bench/qdisc.sh); it prints the sum of the two counts.
 *
 * Usage: mnl_floor [--terse] DEV [ingress|egress]
 *        mnl_floor --qdisc-class DEV */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "config/config.h" /* TCX_PARENT_INGRESS, TCX_PARENT_EGRESS */

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif

#define NL_BUFSZ     (64 * 1024) /* as tcexporter: > the kernel's 32 KiB dump chunks */
#define NL_RCVBUF    (1024 * 1024)
#define NL_TIMEOUT_S 10

struct floor_ctx {
	uint16_t msg_type; /* the messages counted */
	unsigned long msgs;
	unsigned long attrs;
	int done;
	int status; /* errno of NLMSG_DONE or NLMSG_ERROR, negative */
};

static char buf[NL_BUFSZ];

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct floor_ctx *f = data;

	if (mnl_attr_type_valid(attr, TCA_MAX) < 0)
		return MNL_CB_OK; /* newer than our headers: skip, as an exporter would */
	f->attrs++;
	return MNL_CB_OK;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct floor_ctx *f = data;

	if (nlh->nlmsg_type != f->msg_type)
		return MNL_CB_OK;
	if (mnl_attr_parse(nlh, sizeof(struct tcmsg), attr_cb, f) < 0)
		return MNL_CB_ERROR;
	f->msgs++;
	return MNL_CB_OK;
}

/* libmnl's own NLMSG_DONE handler ignores the errno the kernel may put in
 * the payload, so DONE and ERROR get a callback of their own. */
static int ctl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct floor_ctx *f = data;
	const int *errp = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(int))) {
		f->status = -EBADMSG;
	} else if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
			f->status = -EBADMSG;
		else
			f->status = e->error;
	} else {
		f->status = *errp;
	}
	f->done = 1;
	return MNL_CB_STOP;
}

static int ctl_noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static mnl_cb_t ctl_cbs[NLMSG_MIN_TYPE] = {
        [NLMSG_NOOP] = ctl_noop_cb,
        [NLMSG_ERROR] = ctl_done_cb,
        [NLMSG_DONE] = ctl_done_cb,
        [NLMSG_OVERRUN] = ctl_noop_cb,
};

static struct mnl_socket *open_sock(void)
{
	int one = 1, rcvbuf = NL_RCVBUF;
	struct timeval tv = {.tv_sec = NL_TIMEOUT_S};
	struct mnl_socket *sk = mnl_socket_open(NETLINK_ROUTE);
	int fd;

	if (!sk) {
		perror("mnl_floor: netlink socket");
		return NULL;
	}
	fd = mnl_socket_get_fd(sk);
	/* The same options as tcexporter, best effort as there. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("mnl_floor: netlink bind");
		mnl_socket_close(sk);
		return NULL;
	}
	return sk;
}

/* One dump of type on sk: each reply through libmnl's callback loop.
 * Returns the number of messages of msg_type, or -1 (said on stderr). */
static long dump(struct mnl_socket *sk, uint16_t type, uint16_t msg_type, unsigned int ifindex,
                 uint32_t parent, int terse)
{
	struct floor_ctx f = {.msg_type = msg_type};
	unsigned int portid = mnl_socket_get_portid(sk), seq = (unsigned int)time(NULL);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = (int)ifindex;
	tcm->tcm_parent = parent;
	if (terse) {
		struct nla_bitfield32 bf = {TCA_DUMP_FLAGS_TERSE, TCA_DUMP_FLAGS_TERSE};

		mnl_attr_put(nlh, TCA_DUMP_FLAGS, sizeof(bf), &bf);
	}
	if (mnl_socket_sendto(sk, nlh, nlh->nlmsg_len) < 0) {
		perror("mnl_floor: netlink send");
		return -1;
	}
	while (!f.done) {
		ssize_t n = mnl_socket_recvfrom(sk, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("mnl_floor: netlink receive");
			return -1;
		}
		ret = mnl_cb_run2(buf, (size_t)n, seq, portid, data_cb, &f, ctl_cbs,
		                  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_ERROR) {
			perror("mnl_floor: netlink dump");
			return -1;
		}
		if (ret == MNL_CB_STOP)
			break;
	}
	if (f.status < 0) {
		fprintf(stderr, "mnl_floor: dump failed: %s\n", strerror(-f.status));
		return -1;
	}
	return (long)f.msgs;
}

int main(int argc, char **argv)
{
	struct mnl_socket *sk;
	unsigned int ifindex;
	uint32_t parent = TCX_PARENT_INGRESS;
	int terse = 0, qdisc_class = 0;
	long msgs, classes = 0;

	if (argc > 1 && strcmp(argv[1], "--terse") == 0) {
		terse = 1;
		argv++;
		argc--;
	} else if (argc > 1 && strcmp(argv[1], "--qdisc-class") == 0) {
		qdisc_class = 1;
		argv++;
		argc--;
	}
	if (argc < 2 || argc > 3 || (qdisc_class && argc != 2)) {
		fprintf(stderr, "Usage: mnl_floor [--terse] DEV [ingress|egress]\n"
		                "       mnl_floor --qdisc-class DEV\n");
		return 2;
	}
	if (argc == 3) {
		if (strcmp(argv[2], "egress") == 0) {
			parent = TCX_PARENT_EGRESS;
		} else if (strcmp(argv[2], "ingress") != 0) {
			fprintf(stderr, "mnl_floor: parent must be ingress or egress\n");
			return 2;
		}
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "mnl_floor: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	sk = open_sock();
	if (!sk)
		return 1;
	if (qdisc_class) {
		/* As tcexporter lists them: every qdisc of the namespace, then
		 * the classes of the device. */
		msgs = dump(sk, RTM_GETQDISC, RTM_NEWQDISC, 0, 0, 0);
		if (msgs >= 0)
			classes = dump(sk, RTM_GETTCLASS, RTM_NEWTCLASS, ifindex, 0, 0);
		if (classes < 0)
			msgs = -1;
		else
			msgs += classes;
	} else {
		msgs = dump(sk, RTM_GETTFILTER, RTM_NEWTFILTER, ifindex, parent, terse);
	}
	mnl_socket_close(sk);
	if (msgs < 0)
		return 1;
	fprintf(stderr, "%ld\n", msgs);
	return 0;
}
