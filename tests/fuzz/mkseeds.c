/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writes the seed corpus of the netlink harness (tests/fuzz/netlink.c) into
 * DIR: `mkseeds DIR`. Each seed is a configuration byte and the kernel's
 * replies to the requests the collector sends for it, in order, made with
 * tests/unit/nlbuild.c. `make fuzz-seeds` writes them into
 * tests/fuzz/corpus/netlink; tests/fuzz/replay.sh checks that it holds them. */
#include <errno.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h" /* TCX_PARENT_INGRESS, TCX_PARENT_EGRESS */
#include "tests/unit/nlbuild.h"

#define ETH0   2
#define ETH1   3
#define BLOCK  0xFFFFFFFFU /* TCM_IFINDEX_MAGIC_BLOCK */
#define CLSACT 0xFFFFFFF1U
#define ROOT   0xFFFFFFFFU
#define IP     0x0800

/* The configurations of tests/fuzz/netlink.c, by index. */
enum { CFG_ALL = 0, CFG_LABELS = 1, CFG_TARGETS = 2 };

struct seed {
	uint8_t data[65536];
	size_t len;
};

static union {
	char b[8192];
	struct nlmsghdr align;
} scratch;

static void put(struct seed *s, const struct nlmsghdr *nlh)
{
	size_t len = MNL_ALIGN(nlh->nlmsg_len);

	if (s->len + len > sizeof(s->data)) {
		fprintf(stderr, "mkseeds: seed too long\n");
		exit(1);
	}
	memcpy(s->data + s->len, nlh, len);
	s->len += len;
}

static void done(struct seed *s, int status)
{
	put(s, nlb_done(scratch.b, status));
}

/* The reply to the lookup of a link that has no filters: it still exists. */
static void link_ack(struct seed *s)
{
	put(s, nlb_error(scratch.b, 0, RTM_GETLINK, NULL));
}

static void tp_header(struct seed *s, uint32_t ifindex, uint32_t parent, uint16_t pref,
                      const char *kind)
{
	put(s, nlb_filter(scratch.b, ifindex, parent, 0, pref, IP, kind, 0));
}

/* A filter with n actions: gact, mirred, police..., the first with cookie
 * (cookie_len bytes), each with the given counters; full dumps carry the
 * actions' parms (their index). */
static void filter(struct seed *s, uint32_t ifindex, uint32_t parent, uint32_t handle,
                   uint16_t pref, const char *kind, int full, int n, const void *cookie,
                   size_t cookie_len, const struct nlb_stats *st)
{
	static const char *const acts[] = {"gact", "mirred", "police", "skbedit"};
	struct nlmsghdr *nlh = nlb_filter(scratch.b, ifindex, parent, handle, pref, IP, kind, 0);
	uint16_t act_attr = strcmp(kind, "flower") == 0     ? TCA_FLOWER_ACT
	                    : strcmp(kind, "matchall") == 0 ? TCA_MATCHALL_ACT
	                                                    : TCA_U32_ACT;
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS);
	struct nlattr *list = mnl_attr_nest_start(nlh, act_attr);

	for (int i = 0; i < n; i++)
		nlb_action(nlh, (uint16_t)(i + 1), acts[i % 4], i ? NULL : cookie,
		           i ? 0 : cookie_len, st, 2, full ? handle * 10 + (uint32_t)i : 0);
	mnl_attr_nest_end(nlh, list);
	mnl_attr_nest_end(nlh, opt);
	put(s, nlh);
}

static void links(struct seed *s, int both)
{
	put(s, nlb_link(scratch.b, 1, "lo"));
	put(s, nlb_link(scratch.b, ETH0, "eth0"));
	if (both)
		put(s, nlb_link(scratch.b, ETH1, "eth1"));
	done(s, 0);
}

static const struct nlb_stats st_small = {.bytes = 1500, .packets = 1};
static const struct nlb_stats st_big = {.bytes = UINT64_MAX - 1,
                                        .packets = 0x100000001ULL,
                                        .hw_bytes = 1ULL << 40,
                                        .hw_packets = 0x200000000ULL,
                                        .drops = UINT32_MAX,
                                        .overlimits = 7};
static const struct nlb_stats st_old = {.bytes = 64, .packets = 1, .no_hw = 1};

/* Every qdisc kind of the `all` expansion: clsact, a root qdisc and its
 * handle-less child; flower rows, an empty parent, and u32 aborting the
 * terse dump (EMSGSIZE) so that it is dumped again in full. */
static void seed_all(struct seed *s)
{
	static const uint8_t c2[2] = {0x0a, 0x0b};
	static const uint8_t c16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0x10000, ROOT, "htb", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0, 0x10001, "pfifo", 0, 0));
	done(s, 0);
	/* eth0 ingress: flower, terse */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c2, sizeof(c2), &st_small);
	filter(s, ETH0, TCX_PARENT_INGRESS, 2, 1, "flower", 0, 2, c16, sizeof(c16), &st_big);
	filter(s, ETH0, TCX_PARENT_INGRESS, 3, 1, "flower", 0, 1, NULL, 0, &st_old);
	done(s, 0);
	/* eth0 egress: nothing, and the link is still there */
	done(s, 0);
	link_ack(s);
	/* eth1 1: u32 aborts the terse dump, then the full one */
	tp_header(s, ETH1, 0x10000, 10, "u32");
	done(s, -EMSGSIZE);
	tp_header(s, ETH1, 0x10000, 10, "u32");
	filter(s, ETH1, 0x10000, 0x80000800U, 10, "u32", 1, 3, c2, sizeof(c2), &st_small);
	done(s, 0);
}

/* matchall left out of a terse dump (Linux 5.8 to 6.1): its pref is dumped
 * again in full. */
static void seed_repair(struct seed *s)
{
	static const uint8_t c4[4] = {0xff, 0x07, 0x01, 0x02};

	s->data[s->len++] = CFG_ALL;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "ingress", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 5, "matchall");
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 6, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 6, "flower", 0, 1, c4, sizeof(c4), &st_small);
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 5, "matchall");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 5, "matchall", 1, 2, c4, sizeof(c4), &st_big);
	done(s, 0);
}

/* Shared blocks: one with flower rows, one the kernel says is gone (an
 * extended ack). */
static void seed_blocks(struct seed *s)
{
	static const uint8_t c3[3] = {'a', 'b', 'c'};

	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 22, 23));
	put(s, nlb_qdisc(scratch.b, ETH1, 0xFFFF0000U, CLSACT, "ingress", 22, 0));
	done(s, 0);
	tp_header(s, BLOCK, 22, 1, "flower");
	filter(s, BLOCK, 22, 1, 1, "flower", 0, 1, c3, sizeof(c3), &st_small);
	done(s, 0);
	put(s, nlb_error(scratch.b, -ENOENT, RTM_GETTFILTER, "Block does not exist"));
}

/* The qdisc dump fails: every target of the namespace fails with it. */
static void seed_list_error(struct seed *s)
{
	s->data[s->len++] = CFG_ALL;
	links(s, 1);
	put(s, nlb_error(scratch.b, -EPERM, RTM_GETQDISC, "Operation not permitted"));
}

/* Cookies for each way the labels configuration maps them: exact (both
 * forms), the fields decoder, both uuid layouts, ascii, and none. */
static void seed_labels(struct seed *s)
{
	static const struct {
		uint8_t len, b[16];
	} cookies[] = {
	        {2, {0x0a, 0x0b}},
	        {2, {0x0a, 0x0c}},
	        {4, {0xff, 0x07, 0x01, 0x02}},
	        {16, {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}},
	        {16, {0x00, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}},
	        {8, {'R', 'w', 'e', 'b', '0', '0', '0', '1'}},
	        {4, {0xde, 0xad, 0xbe, 0xef}},
	        {0, {0}},
	};

	s->data[s->len++] = CFG_LABELS;
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	for (size_t i = 0; i < sizeof(cookies) / sizeof(cookies[0]); i++)
		filter(s, ETH0, TCX_PARENT_INGRESS, (uint32_t)i + 1, 1, "flower", 0, 1,
		       cookies[i].b, cookies[i].len, i % 2 ? &st_big : &st_small);
	done(s, 0);
	done(s, 0);
	link_ack(s);
}

/* Named devices, parents, a block and a second namespace. */
static void seed_targets(struct seed *s)
{
	static const uint8_t c5[5] = {'d', 'r', 'o', 'p', '!'};
	static const uint8_t cx[2] = {0x01, 0x80};

	s->data[s->len++] = CFG_TARGETS;
	/* the collector's own namespace */
	links(s, 1);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0x10000, ROOT, "prio", 0, 0));
	put(s, nlb_qdisc(scratch.b, ETH1, 0xFFFF0000U, CLSACT, "ingress", 22, 0));
	done(s, 0);
	/* blue */
	links(s, 0);
	put(s, nlb_qdisc(scratch.b, ETH0, 0xFFFF0000U, CLSACT, "clsact", 0, 0));
	done(s, 0);
	/* eth0 ingress, eth0 egress */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	filter(s, ETH0, TCX_PARENT_INGRESS, 2, 1, "flower", 0, 1, cx, sizeof(cx), &st_small);
	done(s, 0);
	tp_header(s, ETH0, TCX_PARENT_EGRESS, 3, "u32");
	done(s, -EOPNOTSUPP);
	tp_header(s, ETH0, TCX_PARENT_EGRESS, 3, "u32");
	filter(s, ETH0, TCX_PARENT_EGRESS, 1, 3, "u32", 1, 1, c5, sizeof(c5), &st_big);
	done(s, 0);
	/* eth1 1:, block 22, eth1 root */
	tp_header(s, ETH1, 0x10000, 2, "u32");
	done(s, -EMSGSIZE);
	done(s, 0);
	link_ack(s);
	tp_header(s, BLOCK, 22, 1, "flower");
	filter(s, BLOCK, 22, 7, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	done(s, 0);
	done(s, 0);
	put(s, nlb_error(scratch.b, -ENODEV, RTM_GETLINK, NULL));
	/* blue: eth0 ingress, eth0 egress */
	tp_header(s, ETH0, TCX_PARENT_INGRESS, 1, "flower");
	filter(s, ETH0, TCX_PARENT_INGRESS, 1, 1, "flower", 0, 1, c5, sizeof(c5), &st_small);
	done(s, 0);
	done(s, 0);
	link_ack(s);
}

static const struct {
	const char *name;
	void (*make)(struct seed *s);
} seeds[] = {
        {"all", seed_all},       {"repair", seed_repair},
        {"blocks", seed_blocks}, {"list-error", seed_list_error},
        {"labels", seed_labels}, {"targets", seed_targets},
};

int main(int argc, char **argv)
{
	static struct seed s;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char path[4096];
		FILE *f;

		s.len = 0;
		seeds[i].make(&s);
		snprintf(path, sizeof(path), "%s/%s", argv[1], seeds[i].name);
		f = fopen(path, "wb");
		if (!f || fwrite(s.data, 1, s.len, f) != s.len || fclose(f) != 0) {
			fprintf(stderr, "mkseeds: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}
