/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The live source (collectors/nl.c) against the kernel, in a private
 * network namespace (unshare(CLONE_NEWNET): root, else the test skips, or
 * fails with TCX_REQUIRE_ROOT=1): a reply of several datagrams, received
 * whole; and one that the callback stops, or fails, in its first datagram,
 * after which the next dump on the same source gets its own reply, not the
 * rest of the old one, from the same namespace (a named one too). The reply is an address dump: N /32 addresses on lo,
 * some 80 bytes each, several 32 KiB datagrams. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collectors/nl.h"
#include "collectors/notify.h"

#define N_ADDRS 1500 /* ~120 KB of reply: 4 datagrams or more */
#define LO      1    /* lo's ifindex in a new namespace */

/* Adds 10.1.x.y/32 (i = x * 256 + y) to lo, acked one by one. */
static void add_addrs(void)
{
	struct mnl_socket *sk = mnl_socket_open(NETLINK_ROUTE);
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned seq = (unsigned)time(NULL);

	assert_non_null(sk);
	assert_int_equal(mnl_socket_bind(sk, 0, MNL_SOCKET_AUTOPID), 0);
	for (int i = 0; i < N_ADDRS; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct ifaddrmsg *ifa;
		uint32_t a = htonl(0x0a010000u + (uint32_t)i);
		ssize_t n;

		nlh->nlmsg_type = RTM_NEWADDR;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
		nlh->nlmsg_seq = ++seq;
		ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
		ifa->ifa_family = AF_INET;
		ifa->ifa_prefixlen = 32;
		ifa->ifa_index = LO;
		mnl_attr_put_u32(nlh, IFA_LOCAL, a);
		mnl_attr_put_u32(nlh, IFA_ADDRESS, a);
		assert_true(mnl_socket_sendto(sk, nlh, nlh->nlmsg_len) > 0);
		n = mnl_socket_recvfrom(sk, buf, sizeof(buf));
		assert_true(n > 0);
		if (mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(sk), NULL, NULL) < 0)
			fail_msg("adding address %d to lo: %s", i, strerror(errno));
	}
	mnl_socket_close(sk);
}

struct count {
	int seen;     /* our addresses seen */
	int stop_at;  /* > 0: MNL_CB_STOP on that message */
	int fail_at;  /* > 0: MNL_CB_ERROR (errno ENOMSG) on that message */
	uint8_t *got; /* N_ADDRS flags: each address seen once */
};

/* Keeps the IFA_LOCAL attribute. */
static int local_cb(const struct nlattr *a, void *arg)
{
	if (mnl_attr_get_type(a) == IFA_LOCAL && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		*(const struct nlattr **)arg = a;
	return MNL_CB_OK;
}

static int count_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct count *c = arg;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *local = NULL;
	uint32_t i;

	if (nlh->nlmsg_type != RTM_NEWADDR || ifa->ifa_family != AF_INET)
		return MNL_CB_OK;
	assert_int_equal(mnl_attr_parse(nlh, sizeof(*ifa), local_cb, &local), MNL_CB_OK);
	assert_non_null(local);
	i = ntohl(mnl_attr_get_u32(local)) - 0x0a010000u;
	if (i >= N_ADDRS)
		return MNL_CB_OK;
	c->seen++;
	assert_int_equal(c->got[i], 0);
	c->got[i] = 1;
	if (c->stop_at && c->seen == c->stop_at)
		return MNL_CB_STOP;
	if (c->fail_at && c->seen == c->fail_at) {
		errno = ENOMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

/* One address dump through the source: its return value. */
static int dump(void *src, struct count *c, char *err, size_t errlen)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_INET;
	memset(c->got, 0, N_ADDRS);
	c->seen = 0;
	return tcx_netlink_source.dump(src, nlh, count_cb, c, err, errlen);
}

/* A whole dump, then one cut short by the callback (stop: MNL_CB_STOP,
 * else MNL_CB_ERROR) in its first datagram, then whole ones again; through a
 * source opened in the named namespace netns (NULL: our own), which holds
 * the addresses. */
static void cut_short(int stop, const char *netns)
{
	uint64_t dropped[TCX_NLDROP__MAX] = {0}, lost = 0;
	struct count c = {.got = malloc(N_ADDRS)};
	struct tcx_snapshot *finals;
	char err[256];
	void *src;

	assert_non_null(c.got);
	/* with its deletion notifications: made with it, kept over the cut */
	src = tcx_netlink_source.open(NULL, netns, TCX_NOTIFY_RCVBUF, 0, err, sizeof(err));
	if (!src)
		fail_msg("open: %s", err);

	assert_int_equal(dump(src, &c, err, sizeof(err)), 0);
	assert_int_equal(c.seen, N_ADDRS);

	if (stop) {
		c.stop_at = 3;
		assert_int_equal(dump(src, &c, err, sizeof(err)), 0);
	} else {
		c.fail_at = 3;
		assert_int_equal(dump(src, &c, err, sizeof(err)), -ENOMSG);
		assert_non_null(strstr(err, strerror(ENOMSG)));
	}
	assert_int_equal(c.seen, 3);
	c.stop_at = c.fail_at = 0;

	/* The rest of the cut reply is not taken for this one's. */
	for (int i = 0; i < 2; i++) {
		int ret = dump(src, &c, err, sizeof(err));

		if (ret)
			fail_msg("dump after the cut one: %d (%s)", ret, err);
		assert_int_equal(c.seen, N_ADDRS);
	}
	finals = tcx_netlink_source.drain(src);
	assert_non_null(finals);
	assert_int_equal(finals->n_actions, 0);
	assert_int_equal(finals->errors[TCX_ERR_IO], 0);
	tcx_snapshot_unref(finals);
	tcx_netlink_source.dropped(src, dropped, &lost);
	for (int i = 0; i < TCX_NLDROP__MAX; i++)
		assert_int_equal(dropped[i], 0);
	assert_int_equal(lost, 0);
	tcx_netlink_source.close(src);
	free(c.got);
}

static void test_stopped_reply(void **state)
{
	(void)state;
	cut_short(1, NULL);
}

static void test_failed_reply(void **state)
{
	(void)state;
	cut_short(0, NULL);
}

/* The same through a source in a named namespace, from another one: the
 * socket made again after the cut is made in the named namespace too, not
 * in ours (which has none of the addresses). The namespace holding the
 * addresses is bind-mounted as TCX_NETNS_DIR/NETNS_NAME in a private mount
 * namespace, over a private TCX_NETNS_DIR. */
#define NETNS_NAME "tcx-test-nl"
static void test_cut_reply_in_named_netns(void **state)
{
	const char *path = TCX_NETNS_DIR "/" NETNS_NAME;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), fd;

	(void)state;
	assert_true(home >= 0);
	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		fail_msg("cannot make a private mount namespace: %s", strerror(errno));
	if (mount("tcx-test-netns", access(TCX_NETNS_DIR, F_OK) == 0 ? TCX_NETNS_DIR : "/run",
	          "tmpfs", 0, NULL) < 0)
		fail_msg("cannot mount a private " TCX_NETNS_DIR ": %s", strerror(errno));
	mkdir(TCX_NETNS_DIR, 0755);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	if (mount("/proc/self/ns/net", path, "none", MS_BIND, NULL) < 0)
		fail_msg("cannot bind-mount our namespace on %s: %s", path, strerror(errno));
	assert_int_equal(unshare(CLONE_NEWNET), 0); /* elsewhere: no addresses */
	cut_short(1, NETNS_NAME);
	cut_short(0, NETNS_NAME);
	assert_int_equal(setns(home, CLONE_NEWNET), 0);
	close(home);
}

static int setup_netns(void **state)
{
	(void)state;
	add_addrs();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_stopped_reply),
	        cmocka_unit_test(test_failed_reply),
	        cmocka_unit_test(test_cut_reply_in_named_netns),
	};
	const char *req = getenv("TCX_REQUIRE_ROOT");

	if (unshare(CLONE_NEWNET) < 0) {
		int must = req && strcmp(req, "1") == 0;

		fprintf(stderr, "%s: cannot make a network namespace (unshare): %s%s\n",
		        must ? "FAIL" : "SKIP", strerror(errno),
		        must ? ", and TCX_REQUIRE_ROOT=1" : "");
		return must ? 1 : 77;
	}
	return cmocka_run_group_tests(tests, setup_netns, NULL);
}
