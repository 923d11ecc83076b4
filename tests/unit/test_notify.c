/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Deletion notifications (collectors/notify.c) over a receive function that
 * hands out datagrams made with nlbuild.c: the final rows of deleted
 * filters, messages that are not kept, malformed and cut messages, and
 * notifications the kernel dropped (ENOBUFS). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_gact.h>
#include <linux/tc_act/tc_mirred.h>
#include <string.h>

#include "collectors/notify.h"
#include "collectors/names.h"
#include "tests/unit/nlbuild.h"

#define IFI   7
#define BLOCK 22

/* What the fake socket hands out, in order: a datagram, or an error. */
struct item {
	const void *buf;
	size_t len;
	int err; /* -errno to return instead */
};

struct feed {
	struct item items[16];
	size_t n, next;
	int reads;
};

static ssize_t feed_recv(void *ctx, void *buf, size_t len, uint64_t dropped[TCX_NLDROP__MAX])
{
	struct feed *f = ctx;
	const struct item *it;

	(void)dropped;
	f->reads++;
	if (f->next == f->n)
		return -EAGAIN;
	it = &f->items[f->next++];
	if (it->err)
		return it->err;
	assert_true(it->len <= len);
	memcpy(buf, it->buf, it->len);
	return (ssize_t)it->len;
}

static void feed_msg(struct feed *f, const struct nlmsghdr *nlh)
{
	f->items[f->n++] = (struct item){.buf = nlh, .len = nlh->nlmsg_len};
}

static void feed_err(struct feed *f, int err)
{
	f->items[f->n++] = (struct item){.err = err};
}

/* A u32 filter deleted by handle, as tfilter_del_notify() sends it: its
 * options with the actions and their stats. */
static struct nlmsghdr *del_u32(void *buf, uint16_t pref, uint32_t handle, uint64_t bytes1,
                                uint64_t packets1, uint64_t bytes2, uint64_t packets2)
{
	static const uint8_t c1[] = {0x0a, 0x0b}, c2[] = {0xff, 0x07, 0x01, 0x02};
	struct nlb_stats s1 = {.bytes = bytes1, .packets = packets1};
	struct nlb_stats s2 = {.bytes = bytes2, .packets = packets2};
	struct nlmsghdr *nlh =
	        nlb_filter(buf, IFI, TCX_PARENT_INGRESS, handle, pref, ETH_P_IP, "u32", 2);
	struct nlattr *opt, *acts;

	nlh->nlmsg_type = RTM_DELTFILTER;
	nlh->nlmsg_flags = 0;
	opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	acts = mnl_attr_nest_start(nlh, TCA_U32_ACT);
	nlb_action(nlh, 1, "mirred", c1, sizeof(c1), &s1, TCA_MIRRED_PARMS, 3);
	nlb_action(nlh, 2, "gact", c2, sizeof(c2), &s2, TCA_GACT_PARMS, 4);
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	return nlh;
}

static struct tcx_snapshot *drain(struct feed *f)
{
	struct tcx_notify *n = tcx_notify_new("tn", feed_recv, f);
	struct tcx_snapshot *s;

	assert_non_null(n);
	s = tcx_notify_drain(n, NULL);
	assert_non_null(s);
	tcx_notify_close(n);
	return s;
}

static void test_final_rows(void **state)
{
	char m1[2048], m2[1024], m3[1024], m4[1024];
	struct feed f = {0};
	struct nlb_stats st = {.bytes = 77, .packets = 1};
	struct nlmsghdr *nlh;
	struct tcx_snapshot *s;
	char h[32];

	(void)state;
	/* A filter with two actions and cookies; 64-bit packets in the second. */
	feed_msg(&f, del_u32(m1, 10, 0x80000800, 1000, 10, 6000000000ULL, 5000000000ULL));
	/* A pref deleted whole: a header, no counters. */
	nlh = nlb_filter(m2, IFI, TCX_PARENT_INGRESS, 0, 20, ETH_P_IP, "u32", 0);
	nlh->nlmsg_type = RTM_DELTFILTER;
	feed_msg(&f, nlh);
	/* A filter added: not a deletion. */
	feed_msg(&f, del_u32(m3, 30, 0x80100800, 5, 5, 5, 5));
	((struct nlmsghdr *)m3)->nlmsg_type = RTM_NEWTFILTER;
	/* A flower filter of a shared block. */
	nlh = nlb_filter(m4, TCM_IFINDEX_MAGIC_BLOCK, BLOCK, 1, 40, ETH_P_ALL, "flower", 0);
	nlh->nlmsg_type = RTM_DELTFILTER;
	{
		struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
		struct nlattr *acts = mnl_attr_nest_start(nlh, TCA_FLOWER_ACT);

		nlb_action(nlh, 1, "gact", NULL, 0, &st, 0, 0);
		mnl_attr_nest_end(nlh, acts);
		mnl_attr_nest_end(nlh, opt);
	}
	feed_msg(&f, nlh);

	s = drain(&f);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 0);
	assert_int_equal(s->notifications_lost, 0);
	assert_int_equal(s->n_targets, 2);
	assert_string_equal(s->targets[0].netns, "tn");
	assert_string_equal(s->targets[0].dev, "if7"); /* no socket to look the name up */
	assert_int_equal(s->targets[0].ifindex, IFI);
	assert_int_equal(s->targets[0].block, 0);
	assert_int_equal(s->targets[0].parent, TCX_PARENT_INGRESS);
	assert_string_equal(s->targets[0].parent_name, "ingress");
	assert_int_equal(s->targets[0].ok, 1);
	assert_int_equal(s->targets[1].block, BLOCK);
	assert_int_equal(s->targets[1].ifindex, 0);
	assert_string_equal(s->targets[1].dev, "");
	assert_string_equal(s->targets[1].parent_name, "block");

	assert_int_equal(s->n_filters, 2);
	assert_int_equal(s->filters[0].target, 0);
	assert_int_equal(s->filters[0].chain, 2);
	assert_int_equal(s->filters[0].pref, 10);
	assert_int_equal(s->filters[0].protocol, ETH_P_IP);
	assert_string_equal(tcx_kind_name(s, s->filters[0].kind), "u32");
	tcx_format_handle("u32", s->filters[0].handle, h, sizeof(h));
	assert_string_equal(h, "800::800");
	assert_int_equal(s->filters[0].n_actions, 2);
	assert_int_equal(s->filters[1].target, 1);
	assert_int_equal(s->filters[1].pref, 40);
	assert_string_equal(tcx_kind_name(s, s->filters[1].kind), "flower");

	assert_int_equal(s->n_actions, 3);
	assert_int_equal(s->actions[0].filter, 0);
	assert_int_equal(s->actions[0].order, 1);
	assert_string_equal(tcx_kind_name(s, s->actions[0].kind), "mirred");
	assert_int_equal(s->actions[0].index, 3);
	assert_int_equal(s->actions[0].cookie_len, 2);
	assert_memory_equal(s->actions[0].cookie, "\x0a\x0b", 2);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES], 1000);
	assert_int_equal(s->actions[0].c[TCX_ACT_PACKETS], 10);
	assert_int_equal(s->actions[1].order, 2);
	assert_string_equal(tcx_kind_name(s, s->actions[1].kind), "gact");
	assert_int_equal(s->actions[1].cookie_len, 4);
	assert_memory_equal(s->actions[1].cookie, "\xff\x07\x01\x02", 4);
	assert_int_equal(s->actions[1].c[TCX_ACT_BYTES], 6000000000ULL);
	assert_int_equal(s->actions[1].c[TCX_ACT_PACKETS], 5000000000ULL);
	assert_int_equal(s->actions[2].filter, 1);
	assert_int_equal(s->actions[2].cookie_len, 0);
	assert_int_equal(s->actions[2].c[TCX_ACT_BYTES], 77);
	tcx_snapshot_unref(s);
}

/* The parent as the collector names the unit, however the deletion spelt
 * it: the kernel echoes the request's. */
static void test_parents(void **state)
{
	static const struct {
		uint32_t sent, unit;
		const char *name;
	} cases[] = {
	        {TCX_PARENT_INGRESS, TCX_PARENT_INGRESS, "ingress"},         /* tc ... ingress */
	        {TC_H_MAKE(TC_H_INGRESS, 0), TCX_PARENT_INGRESS, "ingress"}, /* parent ffff: */
	        {TC_H_INGRESS, TCX_PARENT_INGRESS, "ingress"},               /* parent ffff:fff1 */
	        {TCX_PARENT_EGRESS, TCX_PARENT_EGRESS, "egress"},
	        {TC_H_MAKE(0x10000, 1), TC_H_MAKE(0x10000, 1), "1:1"},
	        {0x10000, 0x10000, "1:"},
	};
	char m[16][1024];
	struct feed f = {0};
	struct tcx_snapshot *s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nlmsghdr *nlh = nlb_filter(m[i], IFI, cases[i].sent, 0x800 + (uint32_t)i,
		                                  (uint16_t)(10 + i), ETH_P_ALL, "basic", 0);

		nlh->nlmsg_type = RTM_DELTFILTER;
		feed_msg(&f, nlh);
	}
	s = drain(&f);
	assert_int_equal(s->n_filters, sizeof(cases) / sizeof(cases[0]));
	/* ingress three times over, egress, 1:1, 1: */
	assert_int_equal(s->n_targets, 4);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcx_target *t = &s->targets[s->filters[i].target];

		assert_int_equal(t->parent, cases[i].unit);
		assert_string_equal(t->parent_name, cases[i].name);
	}
	tcx_snapshot_unref(s);
}

/* A message cut inside its actions is malformed: counted, nothing of it
 * kept; a datagram shorter than its message is dropped and counted; one
 * longer than the buffer (ENOSPC) too; the notifications after them are
 * read. Each is a notification lost. */
static void test_malformed(void **state)
{
	char m1[2048], m2[2048], m3[2048];
	struct feed f = {0};
	struct nlmsghdr *nlh;
	struct tcx_snapshot *s;

	(void)state;
	nlh = del_u32(m1, 10, 0x80000800, 1, 1, 2, 2);
	nlh->nlmsg_len -= 24; /* TCA_OPTIONS now runs past the message */
	feed_msg(&f, nlh);
	nlh = del_u32(m2, 11, 0x80000801, 1, 1, 2, 2);
	f.items[f.n++] = (struct item){.buf = nlh, .len = nlh->nlmsg_len - 40};
	feed_err(&f, -ENOSPC);
	feed_msg(&f, del_u32(m3, 12, 0x80000802, 30, 3, 40, 4));

	s = drain(&f);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 1);
	assert_int_equal(s->netlink_dropped[TCX_NLDROP_LENGTH], 1);
	assert_int_equal(s->notifications_lost, 3);
	assert_int_equal(s->n_filters, 1);
	assert_int_equal(s->filters[0].pref, 12);
	assert_int_equal(s->n_actions, 2);
	assert_int_equal(s->actions[0].filter, 0);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES], 30);
	assert_int_equal(s->actions[1].c[TCX_ACT_PACKETS], 4);
	tcx_snapshot_unref(s);
}

/* ENOBUFS: counted as lost, and what comes after is read, in this drain and
 * the next; a receive error ends a drain, and the next goes on. */
static void test_lost(void **state)
{
	char m1[2048], m2[2048], m3[2048];
	struct feed f = {0};
	struct tcx_notify *n;
	struct tcx_snapshot *s;

	(void)state;
	feed_msg(&f, del_u32(m1, 10, 0x80000800, 100, 1, 0, 0));
	feed_err(&f, -ENOBUFS);
	feed_msg(&f, del_u32(m2, 11, 0x80000801, 200, 2, 0, 0));
	feed_err(&f, -EAGAIN);
	feed_err(&f, -ENOBUFS);
	feed_err(&f, -EIO);
	feed_msg(&f, del_u32(m3, 12, 0x80000802, 300, 3, 0, 0));
	n = tcx_notify_new(NULL, feed_recv, &f);
	assert_non_null(n);

	s = tcx_notify_drain(n, NULL);
	assert_int_equal(s->notifications_lost, 1);
	assert_int_equal(s->errors[TCX_ERR_IO], 0);
	assert_int_equal(s->n_filters, 2);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES], 100);
	assert_int_equal(s->actions[2].c[TCX_ACT_BYTES], 200);
	assert_string_equal(s->targets[0].netns, "");
	tcx_snapshot_unref(s);

	s = tcx_notify_drain(n, NULL);
	assert_int_equal(s->notifications_lost, 2); /* since the socket was opened */
	assert_int_equal(s->errors[TCX_ERR_IO], 1);
	assert_int_equal(s->n_filters, 0);
	tcx_snapshot_unref(s);

	s = tcx_notify_drain(n, NULL);
	assert_int_equal(s->notifications_lost, 2);
	assert_int_equal(s->errors[TCX_ERR_IO], 0);
	assert_int_equal(s->n_filters, 1);
	assert_int_equal(s->filters[0].pref, 12);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES], 300);
	tcx_snapshot_unref(s);
	tcx_notify_close(n);
}

/* Additions (tcx_notify_adds()): each RTM_NEWTFILTER's device and parent,
 * anything else skipped; 1 when one may have been lost since the last call
 * (an overrun, a receive error), else 0. */
struct seen {
	uint32_t ifindex[8], parent[8];
	int n;
};

static void on_add(void *arg, uint32_t ifindex, uint32_t parent)
{
	struct seen *w = arg;

	assert_true(w->n < 8);
	w->ifindex[w->n] = ifindex;
	w->parent[w->n++] = parent;
}

static void test_adds(void **state)
{
	char m1[2048], m2[2048], m3[2048], m4[2048];
	struct nlmsghdr *add1 = nlb_filter(m1, IFI, 0x10000, 0x800, 1, ETH_P_IP, "u32", 0);
	struct nlmsghdr *add2 = nlb_filter(m3, 0xFFFFFFFFU, BLOCK, 0x800, 1, ETH_P_IP, "u32", 0);
	struct nlmsghdr *add3 =
	        nlb_filter(m4, IFI, TCX_PARENT_EGRESS, 0x800, 1, ETH_P_IP, "u32", 0);
	struct feed f = {0};
	struct seen w = {0};
	struct tcx_notify *n;

	(void)state;
	feed_msg(&f, add1);
	feed_msg(&f, del_u32(m2, 10, 0x80000800, 100, 1, 0, 0)); /* not an addition */
	feed_msg(&f, add2);
	feed_err(&f, -EAGAIN);
	feed_err(&f, -ENOBUFS);
	feed_msg(&f, add3);
	feed_err(&f, -EAGAIN);
	feed_err(&f, -EIO);
	n = tcx_notify_new(NULL, feed_recv, &f);
	assert_non_null(n);

	assert_int_equal(tcx_notify_adds(n, on_add, &w), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.ifindex[0], IFI);
	assert_int_equal(w.parent[0], 0x10000);
	assert_int_equal(w.ifindex[1], 0xFFFFFFFFU);
	assert_int_equal(w.parent[1], BLOCK);
	assert_int_equal(tcx_notify_adds(n, on_add, &w), 1); /* the overrun */
	assert_int_equal(w.n, 3);
	assert_int_equal(w.parent[2], TCX_PARENT_EGRESS);
	assert_int_equal(tcx_notify_adds(n, on_add, &w), 1); /* the receive error */
	assert_int_equal(tcx_notify_adds(n, on_add, &w), 0);
	assert_int_equal(w.n, 3);
	tcx_notify_close(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_final_rows), cmocka_unit_test(test_parents),
	        cmocka_unit_test(test_malformed),  cmocka_unit_test(test_lost),
	        cmocka_unit_test(test_adds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
