/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The collection strategy against a fake kernel that behaves as the real
 * ones do (tc-netlink.md, section 1): flower answers terse dumps; matchall is
 * silently left out of them (5.8-6.1); u32 and the rest abort them with
 * EMSGSIZE; a kernel older than 5.8 ignores the flag. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_gact.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/render/render.h"
#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/liveness.h"
#include "lib/buf.h"
#include "collectors/notify.h"
#include "tests/unit/nlbuild.h"

#define MAGIC_BLOCK 0xFFFFFFFFU

struct ftp {
	uint32_t chain;
	uint16_t pref;
	uint16_t proto;
	const char *kind;
	int n; /* filters */
	/* u32 only: */
	uint32_t htid;  /* its hash table, 0x800 when 0 */
	int dup_from;   /* filters from this one on get the handle htid::fff (0: none) */
	int no_cookie;  /* its actions have no cookie */
	int table_only; /* a table made with `divisor`: not a tp, only listed by tps */
	uint64_t bytes; /* its filters' bytes (+ i), when not 0 */
	uint32_t index; /* its actions' first index (+ i), when not 0 */
	/* its filters' action is a legacy policer (u32 or basic only; 2: with
	 * a TCA_STATS too short for its counters) */
	int old_police;
	int no_action; /* its filters have no action (u32 flowid only) */
};

struct funit {
	uint32_t ifindex; /* MAGIC_BLOCK for a block */
	uint32_t parent;  /* block index for a block */
	struct ftp tps[80];
	int n_tps;
};

struct flink {
	uint32_t ifindex;
	const char *name;
};

struct fqdisc {
	uint32_t ifindex, handle, parent;
	const char *kind;
	uint32_t ingress_block, egress_block;
};

struct fake {
	int old_kernel;
	struct flink links[8];
	int n_links;
	struct fqdisc qdiscs[8];
	int n_qdiscs;
	struct fqdisc classes[8]; /* handle: the class id */
	uint32_t class_rate[8];   /* an HTB class's rate in bytes/s (its plans); 0: no options */
	int n_classes;
	int class_status;            /* class dumps end with this status */
	uint32_t class_fail_ifindex; /* ... those of this device only, when not 0 */
	int class_fail_after;        /* ... after sending this many of its classes */
	uint32_t bad_stats_handle;   /* this qdisc's or class's TCA_STATS2 is malformed */
	int class_reqs;
	struct funit units[8];
	int n_units;
	uint32_t gone_ifindex;   /* listed, but gone by the time filters are dumped */
	uint32_t corrupt_handle; /* this filter's message is malformed */
	int u32_shared;          /* u32 tps list every table of their pref, as cls_u32 does */
	int root_gets;           /* GETs of a u32 tp's root table */
	int fail_status;         /* full dumps end with this status */
	int terse_reqs, full_reqs;
	const char *missing_netns;
	int notify_buf;                    /* the receive buffer open() was given */
	uint64_t dropped[TCX_NLDROP__MAX]; /* what the source reports it dropped */
	/* Deletion notifications queued for the next drain (an empty one:
	 * ENOBUFS), and the subscription, when a source was opened with it. */
	union {
		struct nlmsghdr h;
		char b[2048];
	} notes[16];
	int n_notes, next_note;
	struct tcx_notify *notify;
	/* Additions queued for the next read (ifindex, parent as the kernel
	 * names them), whether some were lost before, and whether a source was
	 * opened for them. */
	uint32_t adds[8][2];
	int n_adds, adds_lost, adds_open;
	char buf[16384];
};

/* ---- the fake source ---------------------------------------------------------------------- */

/* The notification socket: what is queued, then -EAGAIN. */
static ssize_t f_recv(void *ctx, void *buf, size_t len, uint64_t dropped[TCX_NLDROP__MAX])
{
	struct fake *k = ctx;
	const struct nlmsghdr *nlh;

	(void)dropped;
	if (k->next_note == k->n_notes)
		return -EAGAIN;
	nlh = &k->notes[k->next_note++].h;
	if (!nlh->nlmsg_len)
		return -ENOBUFS;
	assert_true(nlh->nlmsg_len <= len);
	memcpy(buf, nlh, nlh->nlmsg_len);
	return (ssize_t)nlh->nlmsg_len;
}

static void *f_open(void *opaque, const char *netns, int notify, int adds, char *err, size_t errlen)
{
	struct fake *k = opaque;

	if (k->missing_netns && strcmp(netns, k->missing_netns) == 0) {
		snprintf(err, errlen,
		         "netns '%s': cannot open /run/netns/%s: No such file or "
		         "directory",
		         netns, netns);
		errno = ENOENT;
		return NULL;
	}
	k->adds_open = adds;
	k->notify_buf = notify;
	if (notify) {
		assert_null(k->notify); /* one namespace, opened once */
		k->notify = tcx_notify_new(netns, f_recv, k);
		assert_non_null(k->notify);
	}
	return k;
}

static void f_close(void *src)
{
	struct fake *k = src;

	tcx_notify_close(k->notify);
	k->notify = NULL;
}

static struct tcx_snapshot *f_drain(void *src)
{
	struct fake *k = src;

	assert_non_null(k->notify);
	return tcx_notify_drain(k->notify, NULL);
}

static uint32_t u32_htid(const struct ftp *tp)
{
	return (tp->htid ? tp->htid : 0x800) << 20;
}

static uint32_t filter_handle(const struct ftp *tp, int i)
{
	if (strcmp(tp->kind, "u32") != 0)
		return (uint32_t)i + 1;
	if (tp->dup_from && i >= tp->dup_from)
		return u32_htid(tp) | 0xfff; /* cls_u32's gen_new_kid() out of ids */
	return u32_htid(tp) | (0x800U + (uint32_t)i);
}

/* The counters the fake kernel reports for filter i of tp. */
static uint64_t fbytes(const struct ftp *tp, int i)
{
	if (tp->bytes)
		return tp->bytes + (uint64_t)i;
	return (uint64_t)tp->pref * 100000 + tp->chain * 1000 + (uint64_t)i;
}

/* Filter i of tp, in the dump of the tp `as` of unit u (tp itself, but for
 * u32's shared tables). */
static int emit_filter_as(struct fake *k, const struct funit *u, const struct ftp *as,
                          const struct ftp *tp, int i, int terse, mnl_cb_t cb, void *data)
{
	struct nlmsghdr *nlh = nlb_filter(k->buf, u->ifindex, u->parent, filter_handle(tp, i),
	                                  as->pref, as->proto, as->kind, as->chain);
	struct nlb_stats st = {.bytes = fbytes(tp, i), .packets = (uint64_t)i + 1};
	uint8_t cookie[4] = {(uint8_t)tp->pref, (uint8_t)tp->chain, (uint8_t)i, 0xcc};
	uint16_t act_attr = strcmp(tp->kind, "flower") == 0     ? TCA_FLOWER_ACT
	                    : strcmp(tp->kind, "matchall") == 0 ? TCA_MATCHALL_ACT
	                                                        : TCA_U32_ACT;
	struct nlattr *opt = mnl_attr_nest_start(nlh, TCA_OPTIONS), *acts;

	if (tp->old_police) {
		nlb_old_police(nlh,
		               strcmp(tp->kind, "u32") == 0 ? TCA_U32_POLICE : TCA_BASIC_POLICE,
		               (tp->index ? tp->index : 100) + (uint32_t)i);
		mnl_attr_nest_end(nlh, opt);
		if (tp->old_police == 2)
			mnl_attr_put(nlh, TCA_STATS, sizeof(st.bytes), &st.bytes);
		else
			nlb_old_stats(nlh, &st);
		return cb(nlh, data);
	}
	if (tp->no_action) {
		mnl_attr_nest_end(nlh, opt);
		return cb(nlh, data);
	}
	acts = mnl_attr_nest_start(nlh, act_attr);
	/* a full dump's times: installed 1000 + i ticks ago, last used 100 +
	 * i ago, first used 500 + i ago (odd i) or never (even i) */
	nlb_action_tm(nlh, 1, "gact", tp->no_cookie ? NULL : cookie,
	              tp->no_cookie ? 0 : sizeof(cookie), &st, 2,
	              terse ? 0 : (tp->index ? tp->index : 100) + (uint32_t)i, TCA_GACT_TM,
	              &(struct tcf_t){.install = 1000 + (uint64_t)i,
	                              .lastuse = 100 + (uint64_t)i,
	                              .firstuse = i % 2 ? 500 + (uint64_t)i : 0});
	mnl_attr_nest_end(nlh, acts);
	mnl_attr_nest_end(nlh, opt);
	if (k->corrupt_handle && filter_handle(tp, i) == k->corrupt_handle)
		acts->nla_len = 3; /* shorter than an attribute header */
	return cb(nlh, data);
}

static int emit_filter(struct fake *k, const struct funit *u, const struct ftp *tp, int i,
                       int terse, mnl_cb_t cb, void *data)
{
	return emit_filter_as(k, u, tp, tp, i, terse, cb, data);
}

/* Units that share u32's tables (a tc_u_common): the same block, or the
 * same device (its clsact). */
static int same_common(const struct funit *a, const struct funit *b)
{
	return a->ifindex == b->ifindex && (a->ifindex != MAGIC_BLOCK || a->parent == b->parent);
}

/* The dump of u32 tp `as` of unit u: every table of its pref in the shared
 * tables, newest first, each a table row (handle htid:) and its filters. */
static void emit_u32_tables(struct fake *k, const struct funit *u, const struct ftp *as,
                            mnl_cb_t cb, void *data)
{
	for (int ui = k->n_units - 1; ui >= 0; ui--) {
		const struct funit *o = &k->units[ui];

		if (!same_common(o, u))
			continue;
		for (int t = o->n_tps - 1; t >= 0; t--) {
			const struct ftp *tp = &o->tps[t];

			if (strcmp(tp->kind, "u32") != 0 || tp->pref != as->pref)
				continue;
			cb(nlb_filter(k->buf, u->ifindex, u->parent, u32_htid(tp), as->pref,
			              as->proto, "u32", as->chain),
			   data);
			for (int i = 0; i < tp->n; i++)
				emit_filter_as(k, u, as, tp, i, 0, cb, data);
		}
	}
}

static int match_tp(const struct ftp *tp, uint32_t info, int has_chain, uint32_t chain)
{
	if (TC_H_MAJ(info) && TC_H_MAJ(info) >> 16 != tp->pref)
		return 0;
	if (TC_H_MIN(info) && ntohs((uint16_t)TC_H_MIN(info)) != tp->proto)
		return 0;
	return !has_chain || chain == tp->chain;
}

struct req_attrs {
	int has_chain, terse;
	uint32_t chain;
};

static int req_attr_cb(const struct nlattr *a, void *data)
{
	struct req_attrs *r = data;

	if (mnl_attr_get_type(a) == TCA_CHAIN) {
		r->has_chain = 1;
		r->chain = mnl_attr_get_u32(a);
	} else if (mnl_attr_get_type(a) == TCA_DUMP_FLAGS) {
		const struct nla_bitfield32 *bf = mnl_attr_get_payload(a);

		r->terse = (bf->value & bf->selector & TCA_DUMP_FLAGS_TERSE) != 0;
	}
	return MNL_CB_OK;
}

/* A GET of u32's handle fff: on a tp answers with its root table. */
static int get_u32_root(struct fake *k, struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(req);
	struct req_attrs r = {0};

	k->root_gets++;
	mnl_attr_parse(req, sizeof(*tcm), req_attr_cb, &r);
	for (int ui = 0; ui < k->n_units; ui++) {
		const struct funit *u = &k->units[ui];

		if (u->ifindex != (uint32_t)tcm->tcm_ifindex || u->parent != tcm->tcm_parent)
			continue;
		for (int t = 0; t < u->n_tps; t++) {
			const struct ftp *tp = &u->tps[t];

			if (tp->table_only || strcmp(tp->kind, "u32") != 0 ||
			    tcm->tcm_handle != 0xFFF00000U ||
			    !match_tp(tp, tcm->tcm_info, r.has_chain, r.chain))
				continue;
			cb(nlb_filter(k->buf, u->ifindex, u->parent, u32_htid(tp), tp->pref,
			              tp->proto, "u32", tp->chain),
			   data);
			return 0;
		}
	}
	return -ENOENT;
}

static int dump_filters(struct fake *k, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
                        size_t errlen)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(req);
	struct req_attrs r = {0};

	mnl_attr_parse(req, sizeof(*tcm), req_attr_cb, &r);
	if (r.terse)
		k->terse_reqs++;
	else
		k->full_reqs++;
	if (k->old_kernel)
		r.terse = 0;
	if (!r.terse && k->fail_status) {
		snprintf(err, errlen, "fake kernel says no");
		return k->fail_status;
	}
	for (int ui = 0; ui < k->n_units; ui++) {
		const struct funit *u = &k->units[ui];

		if (u->ifindex != (uint32_t)tcm->tcm_ifindex || u->parent != tcm->tcm_parent)
			continue;
		if ((uint32_t)tcm->tcm_ifindex == k->gone_ifindex)
			return 0; /* the kernel answers an empty dump */
		for (int t = 0; t < u->n_tps; t++) {
			const struct ftp *tp = &u->tps[t];

			if (tp->table_only || !match_tp(tp, tcm->tcm_info, r.has_chain, r.chain))
				continue;
			/* the per-tp header */
			cb(nlb_filter(k->buf, u->ifindex, u->parent, 0, tp->pref, tp->proto,
			              tp->kind, tp->chain),
			   data);
			if (r.terse && strcmp(tp->kind, "matchall") == 0)
				continue; /* silently skipped */
			if (r.terse && strcmp(tp->kind, "flower") != 0)
				return -EMSGSIZE; /* aborted */
			if (k->u32_shared && strcmp(tp->kind, "u32") == 0) {
				emit_u32_tables(k, u, tp, cb, data);
				continue;
			}
			for (int i = 0; i < tp->n; i++)
				emit_filter(k, u, tp, i, r.terse, cb, data);
		}
	}
	return 0;
}

static int f_dump(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
                  size_t errlen)
{
	struct fake *k = src;

	err[0] = '\0';
	switch (req->nlmsg_type) {
	case RTM_GETLINK:
		if (!(req->nlmsg_flags & NLM_F_DUMP)) {
			const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(req);

			for (int i = 0; i < k->n_links; i++)
				if ((uint32_t)ifi->ifi_index == k->links[i].ifindex &&
				    k->links[i].ifindex != k->gone_ifindex)
					return 0;
			return -ENODEV;
		}
		for (int i = 0; i < k->n_links; i++)
			cb(nlb_link(k->buf, k->links[i].ifindex, k->links[i].name), data);
		return 0;
	case RTM_GETQDISC:
		for (int i = 0; i < k->n_qdiscs; i++) {
			const struct fqdisc *q = &k->qdiscs[i];

			struct nlmsghdr *nlh =
			        nlb_qdisc(k->buf, q->ifindex, q->handle, q->parent, q->kind,
			                  q->ingress_block, q->egress_block);

			if (k->bad_stats_handle && q->handle == k->bad_stats_handle)
				mnl_attr_put(nlh, TCA_STATS2, 2, "xy"); /* 2 trailing bytes */
			cb(nlh, data);
		}
		return 0;
	case RTM_GETTCLASS: {
		const struct tcmsg *tcm = mnl_nlmsg_get_payload(req);

		int fails =
		        k->class_status && (!k->class_fail_ifindex ||
		                            k->class_fail_ifindex == (uint32_t)tcm->tcm_ifindex);
		int sent = 0;

		k->class_reqs++;
		if (fails && !k->class_fail_after)
			return k->class_status;
		for (int i = 0; i < k->n_classes; i++) {
			const struct fqdisc *c = &k->classes[i];
			struct nlmsghdr *nlh;

			if (c->ifindex != (uint32_t)tcm->tcm_ifindex)
				continue;
			if (fails && sent++ == k->class_fail_after)
				return k->class_status;
			nlh = nlb_qdisc(k->buf, c->ifindex, c->handle, c->parent, c->kind, 0, 0);
			nlh->nlmsg_type = RTM_NEWTCLASS;
			if (k->class_rate[i]) {
				struct tc_htb_opt o = {.rate.rate = k->class_rate[i],
				                       .ceil.rate = 2 * k->class_rate[i]};
				struct nlattr *opts = mnl_attr_nest_start(nlh, TCA_OPTIONS);

				mnl_attr_put(nlh, TCA_HTB_PARMS, sizeof(o), &o);
				mnl_attr_nest_end(nlh, opts);
			}
			if (k->bad_stats_handle && c->handle == k->bad_stats_handle)
				mnl_attr_put(nlh, TCA_STATS2, 2, "xy");
			cb(nlh, data);
		}
		return 0;
	}
	case RTM_GETTFILTER:
		if (!(req->nlmsg_flags & NLM_F_DUMP))
			return get_u32_root(k, req, cb, data);
		return dump_filters(k, req, cb, data, err, errlen);
	default:
		return -EOPNOTSUPP;
	}
}

static void f_dropped(void *src, uint64_t counts[TCX_NLDROP__MAX], uint64_t *lost)
{
	struct fake *k = src;

	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++)
		counts[i] += k->dropped[i];
	if (k->notify)
		*lost += tcx_notify_counts(k->notify, counts);
}

static int f_added(void *src, void (*fn)(void *arg, uint32_t ifindex, uint32_t parent), void *arg)
{
	struct fake *k = src;
	int lost = k->adds_lost || !k->adds_open;

	for (int i = 0; i < k->n_adds; i++)
		fn(arg, k->adds[i][0], k->adds[i][1]);
	k->n_adds = 0;
	k->adds_lost = 0;
	return lost;
}

static const struct tcx_source_ops fake_ops = {.open = f_open,
                                               .dump = f_dump,
                                               .close = f_close,
                                               .dropped = f_dropped,
                                               .drain = f_drain,
                                               .added = f_added};

/* Queue the deletion notification of filter i of tp in unit u, with its
 * counters now, as tfilter_del_notify() sends it (a full filter message). */
static int note_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fake *k = data;
	struct nlmsghdr *copy;

	assert_true(k->n_notes < (int)(sizeof(k->notes) / sizeof(k->notes[0])));
	assert_true(nlh->nlmsg_len <= sizeof(k->notes[0]));
	copy = &k->notes[k->n_notes++].h;
	memcpy(copy, nlh, nlh->nlmsg_len);
	copy->nlmsg_type = RTM_DELTFILTER;
	copy->nlmsg_flags = 0;
	return MNL_CB_OK;
}

static void queue_deletion(struct fake *k, const struct funit *u, const struct ftp *tp, int i)
{
	emit_filter(k, u, tp, i, 0, note_cb, k);
}

static void queue_enobufs(struct fake *k)
{
	k->notes[k->n_notes++].h.nlmsg_len = 0;
}

/* ---- fixtures ------------------------------------------------------------------------------ */

static void add_link(struct fake *k, uint32_t ifindex, const char *name)
{
	k->links[k->n_links++] = (struct flink){ifindex, name};
}

static void add_qdisc(struct fake *k, uint32_t ifindex, const char *kind, uint32_t iblock,
                      uint32_t eblock)
{
	k->qdiscs[k->n_qdiscs++] =
	        (struct fqdisc){ifindex, 0xFFFF0000, 0xFFFFFFF1, kind, iblock, eblock};
}

static struct funit *add_unit(struct fake *k, uint32_t ifindex, uint32_t parent)
{
	struct funit *u;

	assert_true(k->n_units < (int)(sizeof(k->units) / sizeof(k->units[0])));
	u = &k->units[k->n_units++];

	u->ifindex = ifindex;
	u->parent = parent;
	return u;
}

static void add_tp(struct funit *u, uint32_t chain, uint16_t pref, const char *kind, int n)
{
	u->tps[u->n_tps++] =
	        (struct ftp){.chain = chain, .pref = pref, .proto = 0x0800, .kind = kind, .n = n};
}

static void config_err(void *arg, const char *msg)
{
	fail_msg("config error: %s", msg);
}

/* The tests of the dump strategy count dumps: no liveness passes in them
 * (test_liveness_passes has its own). */
static struct tcx_config *config(const char *yaml)
{
	struct tcx_config *cfg =
	        tcx_config_load_buffer("test.yaml", yaml, strlen(yaml), config_err, NULL);

	assert_non_null(cfg);
	cfg->liveness_interval_s = 0;
	return cfg;
}

static struct tcx_snapshot *collect(struct fake *k, const char *yaml)
{
	struct tcx_config *cfg = config(yaml);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, k);
	struct tcx_snapshot *s = tcx_collect(c, cfg);

	assert_non_null(s);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
	return s;
}

/* Every filter of every tp of unit u must be in the snapshot exactly once,
 * under target t, with its counters. */
static void assert_unit_rows(const struct tcx_snapshot *s, const struct funit *u, size_t t)
{
	size_t expect = 0;

	for (int ti = 0; ti < u->n_tps; ti++) {
		const struct ftp *tp = &u->tps[ti];

		for (int i = 0; i < tp->n; i++) {
			int found = 0;

			for (size_t a = 0; a < s->n_actions; a++) {
				const struct tcx_action *act = &s->actions[a];
				const struct tcx_filter *f = &s->filters[act->filter];

				if (f->target != t || f->chain != tp->chain ||
				    f->pref != tp->pref || f->handle != filter_handle(tp, i))
					continue;
				found++;
				assert_string_equal(tcx_kind_name(s, f->kind), tp->kind);
				assert_int_equal(act->c[TCX_ACT_BYTES], fbytes(tp, i));
				assert_int_equal(act->c[TCX_ACT_PACKETS], (uint64_t)i + 1);
				assert_int_equal(act->cookie_len, 4);
				assert_int_equal(act->cookie[2], (uint8_t)i);
			}
			assert_int_equal(found, 1);
			expect++;
		}
	}
	assert_int_equal(s->targets[t].n_actions, expect);
}

static const char *one_dev = "targets:\n  - dev: eth0\n    parent: ingress\n";

static void setup_eth0(struct fake *k)
{
	add_link(k, 2, "eth0");
	add_qdisc(k, 2, "clsact", 0, 0);
}

/* eth0 with an HTB root 1: and its classes 1:1 and 1:10 (1:1's child). */
static void setup_htb(struct fake *k)
{
	add_link(k, 2, "eth0");
	k->qdiscs[k->n_qdiscs++] = (struct fqdisc){2, 0x10000, TC_H_ROOT, "htb", 0, 0};
	k->classes[k->n_classes++] = (struct fqdisc){2, 0x10001, TC_H_ROOT, "htb", 0, 0};
	k->classes[k->n_classes++] = (struct fqdisc){2, 0x10010, 0x10001, "htb", 0, 0};
}

/* The devices of the snapshot's qdisc and class rows, in order: names
 * separated by one space. */
static void assert_qdevs(const struct tcx_snapshot *s, const char *want)
{
	char got[256] = "";
	size_t n = 0;

	for (size_t i = 0; i < s->n_qdevs; i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s", i ? " " : "",
		                      s->qdevs[i].dev);
	assert_string_equal(got, want);
}

/* ---- tests --------------------------------------------------------------------------------- */

/* The times of action row a of s as the fake sent them for filter i: ages
 * of (1000, 100, 500) + i ticks of 10 ms, as of the clock read with the
 * reply; firstuse 0 for even i, whose rows counted packets (i + 1) all the
 * same: their first use is their last. */
static void assert_fake_times(const struct tcx_snapshot *s, size_t a, int i)
{
	const struct tcx_action *act = &s->actions[a];

	assert_int_equal(s->tm_hz, 100);
	assert_int_equal(act->tm_present & (1u << TCX_TM_INSTALLED | 1u << TCX_TM_LAST_USED),
	                 1u << TCX_TM_INSTALLED | 1u << TCX_TM_LAST_USED);
	assert_int_equal(s->tm_clock_ms - act->tm[TCX_TM_INSTALLED], (1000 + i) * 10);
	assert_int_equal(s->tm_clock_ms - act->tm[TCX_TM_LAST_USED], (100 + i) * 10);
	assert_true(act->tm_present & (1u << TCX_TM_FIRST_USED));
	if (i % 2) /* even i: firstuse 0, but it counted packets: its last use */
		assert_int_equal(s->tm_clock_ms - act->tm[TCX_TM_FIRST_USED], (500 + i) * 10);
	else
		assert_int_equal(act->tm[TCX_TM_FIRST_USED], act->tm[TCX_TM_LAST_USED]);
}

/* Liveness passes (issue #25): the first pass and one every
 * liveness_interval dump the terse targets in full, for the action times,
 * and keep their mode: the first after its terse dump, the next ones at
 * once (the last pass said terse); the passes between are terse alone, and
 * their rows take the times of the pass before (collectors/liveness.h),
 * but a row whose counters went down (another action) and a row new since.
 * --once's collector makes every pass one, a full dump alone. */
static void test_liveness_passes(void **state)
{
	struct fake k = {0};
	struct funit *u;
	struct tcx_config *cfg = config(one_dev);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_liveness *lv = tcx_liveness_new();
	struct tcx_snapshot *s1, *s2, *s3;

	cfg->liveness_interval_s = 60;
	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 3);
	s1 = tcx_collect(c, cfg);
	assert_non_null(s1);
	assert_true(s1->liveness_pass);
	assert_int_equal(k.terse_reqs, 1);
	assert_int_equal(k.full_reqs, 1);
	assert_int_equal(s1->targets[0].mode, TCX_MODE_TERSE);
	assert_int_equal(s1->targets[0].full_dumps, 1);
	assert_unit_rows(s1, u, 0);
	for (int i = 0; i < 3; i++)
		assert_fake_times(s1, (size_t)i, i);
	assert_int_equal(tcx_liveness_update(lv, s1), 0);

	/* the next pass is within the interval: terse, the times kept */
	u->tps[0].n = 4; /* a filter new since */
	s2 = tcx_collect(c, cfg);
	assert_false(s2->liveness_pass);
	assert_int_equal(k.terse_reqs, 2);
	assert_int_equal(k.full_reqs, 1);
	assert_unit_rows(s2, u, 0);
	for (size_t a = 0; a < 4; a++)
		assert_int_equal(s2->actions[a].tm_present, 0);
	assert_int_equal(tcx_liveness_update(lv, s2), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s2->actions[i].tm_present, s1->actions[i].tm_present);
		assert_memory_equal(s2->actions[i].tm, s1->actions[i].tm,
		                    sizeof(s1->actions[i].tm));
	}
	assert_int_equal(s2->actions[3].tm_present, 0);

	/* counters lower: other actions under the same identities */
	u->tps[0].bytes = 1;
	s3 = tcx_collect(c, cfg);
	assert_int_equal(tcx_liveness_update(lv, s3), 0);
	for (size_t a = 0; a < 4; a++)
		assert_int_equal(s3->actions[a].tm_present, 0);
	tcx_snapshot_unref(s1);
	tcx_snapshot_unref(s2);
	tcx_snapshot_unref(s3);

	/* a liveness pass after terse passes: the full dump alone, the mode
	 * kept (its series stays) */
	cfg->liveness_interval_s = 1e-9;
	cfg->interval_s = 0;
	s1 = tcx_collect(c, cfg);
	assert_true(s1->liveness_pass);
	assert_int_equal(k.terse_reqs, 3);
	assert_int_equal(k.full_reqs, 2);
	assert_int_equal(s1->targets[0].mode, TCX_MODE_TERSE);
	assert_int_equal(s1->targets[0].terse_dumps, 0);
	assert_int_equal(s1->targets[0].full_dumps, 1);
	assert_fake_times(s1, 3, 3);
	tcx_snapshot_unref(s1);

	/* --once: the full dump alone, mode full */
	tcx_collector_free(c);
	c = tcx_collector_new(&fake_ops, &k);
	tcx_collector_once(c);
	s1 = tcx_collect(c, cfg);
	assert_true(s1->liveness_pass);
	assert_int_equal(k.terse_reqs, 3);
	assert_int_equal(k.full_reqs, 3);
	assert_int_equal(s1->targets[0].mode, TCX_MODE_FULL);
	assert_fake_times(s1, 1, 1);
	tcx_snapshot_unref(s1);

	/* `families: {liveness: off}`: none */
	cfg->families.mode[TCX_SW_LIVENESS] = TCX_FAM_OFF;
	s1 = tcx_collect(c, cfg);
	assert_false(s1->liveness_pass);
	assert_int_equal(k.full_reqs, 3);
	tcx_snapshot_unref(s1);
	tcx_liveness_free(lv);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

static void test_all_flower_is_one_terse_dump(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 50);
	add_tp(u, 0, 2, "flower", 30);
	add_tp(u, 4, 1, "flower", 7);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_int_equal(s->n_targets, 1);
	assert_true(s->targets[0].ok);
	assert_int_equal(s->targets[0].mode, TCX_MODE_TERSE);
	assert_int_equal(k.terse_reqs, 1);
	assert_int_equal(k.full_reqs, 0);
	assert_int_equal(s->targets[0].terse_dumps, 1);
	assert_int_equal(s->targets[0].full_dumps, 0);
	assert_unit_rows(s, u, 0);
	assert_int_equal(s->n_actions, 87);
	assert_int_equal(s->actions[0].index, 0); /* terse: no index */
	tcx_snapshot_unref(s);
}

/* `devices:` include/exclude filter the devices of `all` targets; a device
 * named by a target of its own is collected whatever they say. */
static void test_all_devices_filtered(void **state)
{
	static const char *const names[] = {"eth0", "eth1", "veth0", "bond0"};
	struct fake k = {0};
	struct tcx_snapshot *s;

	for (uint32_t i = 0; i < 4; i++) {
		add_link(&k, 2 + i, names[i]);
		add_qdisc(&k, 2 + i, "clsact", 0, 0);
		add_tp(add_unit(&k, 2 + i, TCX_PARENT_INGRESS), 0, 1, "flower", 2);
	}
	s = collect(&k, "devices: {include: \"^(eth|veth)\", exclude: \"^veth\"}\n"
	                "targets: [{all: true}]\n");
	assert_int_equal(s->n_targets, 2);
	assert_string_equal(s->targets[0].dev, "eth0");
	assert_string_equal(s->targets[1].dev, "eth1");
	assert_unit_rows(s, &k.units[0], 0);
	assert_unit_rows(s, &k.units[1], 1);
	assert_qdevs(s, "eth0 eth1");
	tcx_snapshot_unref(s);

	s = collect(&k, "devices: {exclude: \"0$\"}\n"
	                "targets: [{all: true}, {dev: veth0, parent: ingress}]\n");
	assert_int_equal(s->n_targets, 2);
	assert_string_equal(s->targets[0].dev, "eth1");
	assert_string_equal(s->targets[1].dev, "veth0");
	assert_qdevs(s, "eth1 veth0");
	tcx_snapshot_unref(s);

	s = collect(&k, "devices: {include: \"^bond\"}\n");
	assert_int_equal(s->n_targets, 1);
	assert_string_equal(s->targets[0].dev, "bond0");
	assert_qdevs(s, "bond0");
	tcx_snapshot_unref(s);
}

/* `devices:` decides the qdisc and class rows of `all` targets as it does
 * their filters: an HTB device left out has no qdisc, class or device row,
 * one let in has them all. */
static void test_all_devices_filter_qdisc_rows(void **state)
{
	struct fake k = {0};
	struct tcx_snapshot *s;

	setup_htb(&k); /* eth0, ifindex 2 */
	add_link(&k, 3, "veth0");
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0x10000, TC_H_ROOT, "htb", 0, 0};
	k.classes[k.n_classes++] = (struct fqdisc){3, 0x10001, TC_H_ROOT, "htb", 0, 0};
	add_qdisc(&k, 3, "clsact", 0, 0);
	add_tp(add_unit(&k, 3, 0x10000), 0, 10, "u32", 2);
	s = collect(&k, "devices: {exclude: \"^veth\"}\ntargets: [{all: true}]\n");
	assert_qdevs(s, "eth0");
	assert_int_equal(s->n_qdiscs, 1);
	assert_int_equal(s->n_classes, 2);
	for (size_t i = 0; i < s->n_qdiscs; i++)
		assert_string_equal(s->qdevs[s->qdiscs[i].qdev].dev, "eth0");
	for (size_t i = 0; i < s->n_classes; i++)
		assert_string_equal(s->qdevs[s->classes[i].qdev].dev, "eth0");
	assert_int_equal(k.class_reqs, 1); /* veth0's classes are not even dumped */
	assert_int_equal(s->n_filters, 0);
	tcx_snapshot_unref(s);

	k.class_reqs = 0;
	s = collect(&k, "devices: {include: \"^veth\"}\ntargets: [{all: true}]\n");
	assert_qdevs(s, "veth0");
	assert_int_equal(s->qdevs[0].n_qdiscs, 2);
	assert_int_equal(s->qdevs[0].n_classes, 1);
	assert_int_equal(s->n_qdiscs, 2);
	assert_int_equal(s->n_classes, 1);
	assert_int_equal(s->classes[0].handle, 0x10001);
	assert_int_equal(k.class_reqs, 1);
	assert_unit_rows(s, &k.units[0], 0);
	tcx_snapshot_unref(s);
}

static void test_matchall_silent_omission_is_repaired(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 20);
	add_tp(u, 0, 2, "matchall", 1);
	add_tp(u, 0, 3, "flower", 5);
	add_tp(u, 2, 9, "matchall", 1);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_int_equal(s->targets[0].mode, TCX_MODE_TERSE_REPAIR);
	assert_int_equal(s->targets[0].repaired_prefs, 2);
	assert_int_equal(k.terse_reqs, 1);
	assert_int_equal(k.full_reqs, 2);
	assert_unit_rows(s, u, 0);
	assert_int_equal(s->n_actions, 27);
	tcx_snapshot_unref(s);
}

static void test_u32_abort_falls_back_to_full(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 10);
	add_tp(u, 0, 2, "matchall", 1);
	add_tp(u, 0, 3, "u32", 6);
	add_tp(u, 1, 1, "flower", 4);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_int_equal(s->targets[0].mode, TCX_MODE_FULL);
	assert_int_equal(k.terse_reqs, 1);
	assert_int_equal(k.full_reqs, 1);
	/* No duplicates of the flower rows the aborted terse dump gave. */
	assert_unit_rows(s, u, 0);
	assert_int_equal(s->n_actions, 21);
	assert_int_equal(s->actions[0].index, 100); /* full: index from the parms */
	tcx_snapshot_unref(s);
}

static void test_old_kernel_ignores_terse(void **state)
{
	struct fake k = {.old_kernel = 1};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "u32", 3);
	add_tp(u, 0, 2, "matchall", 2);
	add_tp(u, 0, 3, "flower", 2);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_int_equal(s->targets[0].mode, TCX_MODE_TERSE);
	assert_int_equal(k.terse_reqs + k.full_reqs, 1);
	assert_unit_rows(s, u, 0);
	tcx_snapshot_unref(s);
}

static void test_many_matchall_prefs_use_one_full_dump(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	for (int i = 0; i < 70; i++)
		add_tp(u, 0, (uint16_t)(i + 1), "matchall", 1);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_int_equal(s->targets[0].mode, TCX_MODE_FULL);
	assert_int_equal(k.full_reqs, 1);
	assert_unit_rows(s, u, 0);
	assert_int_equal(s->n_actions, 70);
	tcx_snapshot_unref(s);
}

static void test_all_dumps_shared_block_once(void **state)
{
	struct fake k = {0};
	struct funit *b, *e;

	add_link(&k, 2, "eth0");
	add_link(&k, 3, "eth1");
	add_link(&k, 4, "eth2");
	add_qdisc(&k, 2, "ingress", 22, 0);
	add_qdisc(&k, 3, "clsact", 22, 0);
	add_qdisc(&k, 4, "clsact", 0, 0);
	b = add_unit(&k, MAGIC_BLOCK, 22);
	add_tp(b, 0, 1, "flower", 3);
	e = add_unit(&k, 4, TCX_PARENT_EGRESS);
	add_tp(e, 0, 1, "u32", 2);
	struct tcx_snapshot *s = collect(&k, "targets:\n  - all: true\n");

	/* block 22 once; eth1 egress and eth2 ingress hold no filters and are
	 * left out; eth2 egress is dumped. */
	assert_int_equal(s->n_targets, 2);
	assert_int_equal(s->targets[0].block, 22);
	assert_string_equal(s->targets[0].parent_name, "block");
	assert_unit_rows(s, b, 0);
	assert_string_equal(s->targets[1].dev, "eth2");
	assert_string_equal(s->targets[1].parent_name, "egress");
	assert_unit_rows(s, e, 1);
	assert_int_equal(tcx_snapshot_failed_targets(s), 0);
	tcx_snapshot_unref(s);
}

static void test_named_device_without_parent(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	add_link(&k, 3, "eth1");
	add_qdisc(&k, 3, "clsact", 0, 0);
	add_tp(add_unit(&k, 3, TCX_PARENT_INGRESS), 0, 1, "flower", 4);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 2);
	struct tcx_snapshot *s = collect(&k, "targets:\n  - dev: eth0\n");

	/* Both parents of the clsact qdisc, the empty egress included; nothing
	 * of eth1. */
	assert_int_equal(s->n_targets, 2);
	assert_string_equal(s->targets[0].parent_name, "ingress");
	assert_unit_rows(s, u, 0);
	assert_string_equal(s->targets[1].parent_name, "egress");
	assert_true(s->targets[1].ok);
	assert_int_equal(s->targets[1].n_filters, 0);
	assert_int_equal(s->n_actions, 2);
	tcx_snapshot_unref(s);
}

static void test_missing_targets_fail_alone(void **state)
{
	struct fake k = {.missing_netns = "red"};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 2);
	struct tcx_snapshot *s = collect(&k, "targets:\n"
	                                     "  - dev: nope\n"
	                                     "  - dev: eth0\n    parent: egress\n"
	                                     "  - dev: eth0\n    parent: ingress\n"
	                                     "  - block: 9\n"
	                                     "  - dev: eth0\n    parent: \"5:\"\n"
	                                     "  - all: true\n    netns: red\n");

	assert_int_equal(s->n_targets, 6);
	assert_false(s->targets[0].ok);
	assert_string_equal(s->targets[0].error, "device 'nope' not found");
	assert_true(s->targets[1].ok); /* clsact has an egress, with no filters */
	assert_int_equal(s->targets[1].n_filters, 0);
	assert_true(s->targets[2].ok);
	assert_unit_rows(s, u, 2);
	assert_false(s->targets[3].ok);
	assert_string_equal(s->targets[3].error, "shared block 9 not found");
	assert_false(s->targets[4].ok);
	assert_string_equal(s->targets[4].error, "device 'eth0' has no qdisc 5:");
	assert_false(s->targets[5].ok);
	assert_string_equal(s->targets[5].netns, "red");
	assert_string_equal(s->targets[5].error,
	                    "netns 'red': cannot open /run/netns/red: No such file or directory");
	assert_int_equal(tcx_snapshot_failed_targets(s), 4);
	assert_int_equal(s->errors[TCX_ERR_NOTFOUND], 4);
	tcx_snapshot_unref(s);
}

/* A collection's row arrays are those of the last one freed, already as
 * large as its rows; the rows written over them are the new pass's own. */
static void test_next_pass_reuses_row_arrays(void **state)
{
	struct fake k = {0};
	struct funit *u;
	struct tcx_snapshot *s, *t;
	const void *actions;
	size_t n;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 1, "flower", 300);
	s = collect(&k, one_dev);
	actions = s->actions;
	n = s->n_actions;
	assert_int_equal(n, 300);
	tcx_snapshot_unref(s);

	t = tcx_snapshot_new(NULL); /* not a collection's: takes nothing */
	assert_int_equal(t->cap_actions, 0);
	s = tcx_snapshot_new(NULL);
	tcx_snapshot_reuse(s);
	assert_ptr_equal(s->actions, actions);
	assert_int_equal(s->cap_actions, n);
	assert_int_equal(s->n_actions, 0);
	tcx_snapshot_unref(s);
	tcx_snapshot_unref(t);

	u->tps[0].n = 200; /* fewer rows: none of the last pass's is left */
	s = collect(&k, one_dev);
	assert_int_equal(s->n_actions, 200);
	assert_unit_rows(s, u, 0);
	tcx_snapshot_unref(s);
}

static void test_device_vanishing_is_a_failure(void **state)
{
	struct fake k = {.gone_ifindex = 2};

	setup_eth0(&k);
	add_tp(add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "flower", 2);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_false(s->targets[0].ok);
	assert_string_equal(s->targets[0].error, "device 'eth0' vanished during collection");
	assert_int_equal(s->n_actions, 0);
	tcx_snapshot_unref(s);
}

static void test_malformed_message_fails_its_target_only(void **state)
{
	struct fake k = {.corrupt_handle = 2};
	struct funit *e;

	setup_eth0(&k);
	add_tp(add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "flower", 3);
	e = add_unit(&k, 2, TCX_PARENT_EGRESS);
	add_tp(e, 0, 7, "u32", 2); /* u32 handles: 0x80000800.., never 2 */
	struct tcx_snapshot *s = collect(&k, "targets:\n"
	                                     "  - dev: eth0\n    parent: ingress\n"
	                                     "  - dev: eth0\n    parent: egress\n");

	assert_false(s->targets[0].ok);
	assert_string_equal(s->targets[0].error,
	                    "malformed netlink message: TCA_OPTIONS: attribute 3 has length 3, "
	                    "outside 4..96");
	assert_int_equal(s->targets[0].n_actions, 0);
	assert_true(s->targets[1].ok);
	assert_unit_rows(s, e, 1);
	assert_int_equal(s->n_actions, 2);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 1);
	tcx_snapshot_unref(s);
}

/* Filters attached to a class are only listed by a dump with the class as
 * parent: `all` and `dev` find them through one class dump of the device.
 * Only inner classes are dumped: a leaf's filters are never consulted
 * (HTB, HFSC). A class that holds no filter is no target. */
static void test_filters_on_classes(void **state)
{
	static const char *yamls[] = {"targets: [{all: true}]\n", "targets: [{dev: eth0}]\n"};

	for (size_t y = 0; y < 2; y++) {
		struct fake k = {0};
		struct funit *q, *c;

		setup_htb(&k);
		add_tp(q = add_unit(&k, 2, 0x10000), 0, 10, "u32", 2);
		add_tp(c = add_unit(&k, 2, 0x10001), 0, 20, "u32", 3);
		add_tp(add_unit(&k, 2, 0x10010), 0, 30, "u32", 1); /* on the leaf */
		struct tcx_snapshot *s = collect(&k, yamls[y]);

		assert_int_equal(k.class_reqs, 1);
		assert_int_equal(s->n_targets, 2);
		assert_string_equal(s->targets[0].parent_name, "1:");
		assert_string_equal(s->targets[1].parent_name, "1:1");
		assert_unit_rows(s, q, 0);
		assert_unit_rows(s, c, 1);
		/* The rows of the qdisc and both classes, from the same dumps. */
		assert_int_equal(s->n_qdevs, 1);
		assert_true(s->qdevs[0].ok);
		assert_int_equal(s->n_qdiscs, 1);
		assert_int_equal(s->qdiscs[0].handle, 0x10000);
		assert_int_equal(s->n_classes, 2);
		assert_int_equal(s->classes[1].handle, 0x10010);
		assert_int_equal(s->classes[1].parent, 0x10001);
		tcx_snapshot_unref(s);
	}
}

/* Sweeps: after the first pass, the daemon asks only the parents that held
 * filters at its last pass and those the kernel said filters were added to
 * (the same qdisc major of the device; a shared block directly, or through
 * a device whose clsact qdisc is bound to it); every parent again when an
 * addition may have been lost, on a reload, and every sweep_interval.
 * --once sweeps and opens no additions socket. */
static void test_sweeps(void **state)
{
	static const char yaml[] = "targets: [{all: true}]\n";
	struct tcx_config *cfg = config(yaml), *again;
	struct fake k = {0};
	struct tcx_collector *c;
	struct tcx_snapshot *s;
	struct funit *fq, *cl, *blk;

	(void)state;
	setup_htb(&k);
	k.classes[k.n_classes++] = (struct fqdisc){2, 0x10020, 0x10010, "htb", 0, 0};
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x40000, 0x10020, "fq_codel", 0, 0};
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x50000, 0x10020, "fq_codel", 0, 0};
	add_link(&k, 3, "eth1");
	add_qdisc(&k, 3, "clsact", 7, 0);
	add_tp(add_unit(&k, 2, 0x10000), 0, 10, "u32", 2);
	fq = add_unit(&k, 2, 0x40000);
	cl = add_unit(&k, 2, 0x10010);
	blk = add_unit(&k, MAGIC_BLOCK, 7);
	/* eth0: 1:, the inner classes 1:1 and 1:10, fq_codel 4: and 5:;
	 * block 7; and eth1's egress, not bound to a block */
	c = tcx_collector_new(&fake_ops, &k);
	s = tcx_collect(c, cfg);
	assert_int_equal(k.terse_reqs, 7);
	assert_int_equal(s->n_targets, 1);
	assert_int_equal(s->sweeps[TCX_SWEEP_NEW], 1);
	tcx_snapshot_unref(s);

	/* held: 1: alone */
	s = tcx_collect(c, cfg);
	assert_int_equal(k.terse_reqs, 8);
	assert_int_equal(s->n_targets, 1);
	tcx_snapshot_unref(s);

	/* added to fq_codel 4: (by parent 4:0) and to block 7 (through the
	 * block: the kernel takes no filter of a shared block through a
	 * device); then to 1:1 (a class of 1:: asks 1: and both classes) */
	add_tp(fq, 0, 1, "u32", 1);
	add_tp(blk, 0, 1, "u32", 1);
	k.adds[k.n_adds][0] = 2;
	k.adds[k.n_adds++][1] = 0x40000;
	k.adds[k.n_adds][0] = MAGIC_BLOCK;
	k.adds[k.n_adds++][1] = 7;
	s = tcx_collect(c, cfg);
	assert_int_equal(k.terse_reqs, 11);
	assert_int_equal(s->n_targets, 3);
	assert_int_equal(s->sweeps[TCX_SWEEP_NEW] + s->sweeps[TCX_SWEEP_LOST], 1);
	tcx_snapshot_unref(s);
	add_tp(cl, 0, 1, "u32", 1);
	k.adds[k.n_adds][0] = 2;
	k.adds[k.n_adds++][1] = 0x10010;
	s = tcx_collect(c, cfg);
	assert_int_equal(k.terse_reqs, 16); /* 1:, 1:1, 1:10, 4:, block 7 */
	assert_int_equal(s->n_targets, 4);
	tcx_snapshot_unref(s);

	/* a filter on 5: whose addition was lost: a sweep finds it */
	add_tp(add_unit(&k, 2, 0x50000), 0, 1, "u32", 1);
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 4); /* not asked */
	tcx_snapshot_unref(s);
	k.adds_lost = 1;
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 5);
	assert_int_equal(s->sweeps[TCX_SWEEP_LOST], 1);
	tcx_snapshot_unref(s);

	/* a filter added to the leaf class 1:20 (no unit: classification
	 * ends at a leaf) is asked for once a child class makes it one */
	k.adds[k.n_adds][0] = 2;
	k.adds[k.n_adds++][1] = 0x10020;
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 5);
	tcx_snapshot_unref(s);
	add_tp(add_unit(&k, 2, 0x10020), 0, 1, "u32", 1);
	k.classes[k.n_classes++] = (struct fqdisc){2, 0x10030, 0x10020, "htb", 0, 0};
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 6);
	assert_int_equal(s->sweeps[TCX_SWEEP_LOST], 1); /* no sweep */
	tcx_snapshot_unref(s);

	/* a held parent that one listing misses is asked when it is back */
	k.qdiscs[2].ifindex = 9; /* 5: on a device the link dump did not list */
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 5);
	tcx_snapshot_unref(s);
	k.qdiscs[2].ifindex = 2;
	s = tcx_collect(c, cfg);
	assert_int_equal(s->n_targets, 6);
	assert_int_equal(s->sweeps[TCX_SWEEP_LOST], 1);
	tcx_snapshot_unref(s);

	/* a reload sweeps; so does sweep_interval: 0 */
	again = config(yaml);
	s = tcx_collect(c, again);
	assert_int_equal(s->sweeps[TCX_SWEEP_RELOAD], 1);
	tcx_snapshot_unref(s);
	tcx_config_unref(again);
	again = config("targets: [{all: true}]\nsweep_interval: 0\n");
	s = tcx_collect(c, again);
	assert_int_equal(s->sweeps[TCX_SWEEP_RELOAD], 2);
	tcx_snapshot_unref(s);
	s = tcx_collect(c, again);
	assert_int_equal(s->sweeps[TCX_SWEEP_INTERVAL], 1);
	tcx_snapshot_unref(s);
	tcx_config_unref(again);
	tcx_collector_free(c);

	/* --once: a sweep, no additions socket */
	c = tcx_collector_new(&fake_ops, &k);
	tcx_collector_once(c);
	s = tcx_collect(c, cfg);
	assert_false(k.adds_open);
	assert_int_equal(s->n_targets, 6);
	assert_int_equal(s->sweeps[TCX_SWEEP_NEW], 1);
	tcx_snapshot_unref(s);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* A qdisc that takes no filter (pfifo, tbf: no tcf_block in the kernel) is
 * not dumped: 10k pfifo leaves under HTB cost 10k empty dumps otherwise. A
 * qdisc that does (fq_codel) is, and a named device's root always is, to
 * report its state. */
static void test_filterless_qdiscs_not_dumped(void **state)
{
	static const struct {
		const char *yaml;
		int dumps, targets;
	} cases[] = {
	        /* 1:, 1:1 and fq_codel's 4: on eth0; nothing on eth1 */
	        {"targets: [{all: true}]\n", 3, 0},
	        /* the same, and eth1's pfifo_fast root; each named device's
	         * root is a target (fq_codel's 4: and the class 1:1, found by
	         * discovery, hold no filter) */
	        {"targets: [{dev: eth0}, {dev: eth1}]\n", 4, 2},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake k = {0};
		struct tcx_snapshot *s;

		setup_htb(&k);
		k.classes[k.n_classes++] = (struct fqdisc){2, 0x10020, 0x10001, "htb", 0, 0};
		k.classes[k.n_classes++] = (struct fqdisc){2, 0x10030, 0x10001, "htb", 0, 0};
		k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x20000, 0x10010, "pfifo", 0, 0};
		k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x30000, 0x10020, "tbf", 0, 0};
		k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x40000, 0x10030, "fq_codel", 0, 0};
		add_link(&k, 3, "eth1");
		k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0, TC_H_ROOT, "pfifo_fast", 0, 0};
		s = collect(&k, cases[i].yaml);
		assert_int_equal(k.terse_reqs + k.full_reqs, cases[i].dumps);
		assert_int_equal(s->n_targets, cases[i].targets);
		/* every qdisc and class is still a row */
		assert_int_equal(s->n_qdiscs, 5);
		assert_int_equal(s->n_classes, 4);
		tcx_snapshot_unref(s);
	}
}

/* A qdisc or class dump resumes by count: after a change between two
 * chunks it can list an object twice. Each is one row (the first), so that
 * no series is exported twice; mq's children, which all have handle 0:,
 * differ by parent and stay. */
static void test_qdisc_listed_twice_is_one_row(void **state)
{
	struct fake k = {0};
	struct tcx_snapshot *s;

	setup_htb(&k);
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x20000, 0x10010, "pfifo", 0, 0};
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x20000, 0x10010, "pfifo", 0, 0};
	k.classes[k.n_classes++] = (struct fqdisc){2, 0x10010, 0x10001, "htb", 0, 0};
	add_link(&k, 3, "eth1");
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0x80000000, TC_H_ROOT, "mq", 0, 0};
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0, 0x80000001, "pfifo_fast", 0, 0};
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0, 0x80000002, "pfifo_fast", 0, 0};
	s = collect(&k, "targets: [{all: true}]\n");
	assert_int_equal(s->n_qdevs, 2);
	assert_int_equal(s->qdevs[0].n_qdiscs, 2); /* htb 1:, pfifo 2: */
	assert_int_equal(s->qdevs[0].n_classes, 2);
	assert_int_equal(s->qdevs[1].n_qdiscs, 3);
	assert_int_equal(s->n_qdiscs, 5);
	assert_int_equal(s->n_classes, 2);
	assert_int_equal(s->qdiscs[1].handle, 0x20000);
	assert_int_equal(s->classes[1].handle, 0x10010);
	tcx_snapshot_unref(s);
}

/* A class dump that fails fails the device's classes, counted once: its
 * qdiscs, its qdisc's filters and every other device are still collected. */
static void test_class_dump_failure(void **state)
{
	struct fake k = {.class_status = -EPERM};
	struct funit *q;

	setup_htb(&k);
	add_tp(q = add_unit(&k, 2, 0x10000), 0, 10, "u32", 2);
	add_tp(add_unit(&k, 2, 0x10001), 0, 20, "u32", 3);
	struct tcx_snapshot *s = collect(&k, "targets: [{all: true}]\n");

	assert_int_equal(s->n_targets, 1);
	assert_true(s->targets[0].ok);
	assert_unit_rows(s, q, 0);
	assert_int_equal(s->n_qdevs, 1);
	assert_false(s->qdevs[0].ok);
	assert_string_equal(s->qdevs[0].dev, "eth0");
	assert_string_equal(s->qdevs[0].error, "class dump failed: Operation not permitted");
	/* what --once and the daemon log, and why --once exits with 1 */
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_snapshot_failures(s, &b), 1);
	tcx_buf_putc(&b, '\0');
	assert_false(b.err);
	assert_string_equal(b.p, "device eth0: class dump failed: Operation not permitted\n");
	tcx_buf_free(&b);
	assert_int_equal(s->qdevs[0].n_qdiscs, 1);
	assert_int_equal(s->n_qdiscs, 1);
	assert_int_equal(s->n_classes, 0);
	assert_int_equal(s->errors[TCX_ERR_KERNEL], 1);
	tcx_snapshot_unref(s);
}

/* A device that vanishes between the listing and its class dump (ENODEV)
 * fails its own classes only: the other device's qdiscs, classes and
 * filters (those on its class too), and its own qdiscs, are collected. */
/* The failed targets that share a reason are one line of
 * tcx_snapshot_failures(), in the order of the first: 300 namespaces short
 * of fds are not 300 lines a pass. */
static void test_failures_share_a_line(void **state)
{
	static const char *const ns[] = {"a", "b", "c", "d", "e", "f"};
	static const char *const why[] = {"fds", "other", "fds", "fds", "fds", "gone"};
	struct tcx_snapshot *s = tcx_snapshot_new(NULL);
	struct tcx_buf b;

	(void)state;
	assert_non_null(s);
	for (size_t i = 0; i < 6; i++) {
		struct tcx_target *t = tcx_snapshot_add_target(s);

		assert_non_null(t);
		tcx_target_init(t, ns[i], "", 0, 0, 0);
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "%s", why[i]);
	}
	s->targets[5].ok = 1;
	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_snapshot_failures(s, &b), 5);
	tcx_buf_putc(&b, '\0');
	assert_false(b.err);
	assert_string_equal(b.p,
	                    "4 targets: fds (all netns a, all netns c, all netns d and 1 more)\n"
	                    "target all netns b: other\n");
	tcx_buf_free(&b);
	tcx_snapshot_unref(s);
}

/* Classes with the same plans share them in xvals, each distinct one
 * written once a pass; those of a class dump that failed are taken back,
 * and not shared with a later class. */
static void add_rated_class(struct fake *k, uint32_t ifindex, uint32_t handle, uint32_t parent,
                            uint32_t rate)
{
	k->class_rate[k->n_classes] = rate;
	k->classes[k->n_classes++] = (struct fqdisc){ifindex, handle, parent, "htb", 0, 0};
}

static void test_plans_shared(void **state)
{
	struct fake k = {.class_status = -EINTR, .class_fail_ifindex = 3, .class_fail_after = 1};
	const struct tcx_qrow *c;
	struct tcx_snapshot *s;

	(void)state;
	add_link(&k, 2, "eth0");
	add_link(&k, 3, "eth1");
	add_link(&k, 4, "eth2");
	for (uint32_t i = 2; i <= 4; i++)
		k.qdiscs[k.n_qdiscs++] = (struct fqdisc){i, 0x10000, TC_H_ROOT, "htb", 0, 0};
	add_rated_class(&k, 2, 0x10001, TC_H_ROOT, 1000);
	add_rated_class(&k, 2, 0x10010, 0x10001, 2000);
	add_rated_class(&k, 2, 0x10011, 0x10001, 2000);
	add_rated_class(&k, 2, 0x10012, 0x10001, 1000);
	/* eth1's dump fails after its first class (3000: written, taken back) */
	add_rated_class(&k, 3, 0x10001, TC_H_ROOT, 3000);
	add_rated_class(&k, 3, 0x10010, 0x10001, 3000);
	/* eth2's 3000 is written again, where 4000 would overwrite a share */
	add_rated_class(&k, 4, 0x10001, TC_H_ROOT, 3000);
	add_rated_class(&k, 4, 0x10010, 0x10001, 4000);
	s = collect(&k, "targets: [{all: true}]\n");
	assert_int_equal(s->n_classes, 6);
	c = s->classes;
	for (size_t i = 0; i < s->n_classes; i++) {
		static const uint64_t want[] = {1000, 2000, 2000, 1000, 3000, 4000};

		assert_int_not_equal(c[i].pt_id, 0);
		assert_true(c[i].pl_present & 1u);
		assert_int_equal(s->xvals[c[i].pl], want[i]);
	}
	assert_int_equal(c[1].pl, c[2].pl);
	assert_int_equal(c[0].pl, c[3].pl);
	assert_int_not_equal(c[0].pl, c[1].pl);
	tcx_snapshot_unref(s);
}

static void test_class_dump_vanished_device_alone(void **state)
{
	struct fake k = {.class_status = -ENODEV, .class_fail_ifindex = 2};
	struct funit *q0, *q1, *c1;

	setup_htb(&k); /* eth0 */
	add_link(&k, 3, "eth1");
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){3, 0x10000, TC_H_ROOT, "htb", 0, 0};
	k.classes[k.n_classes++] = (struct fqdisc){3, 0x10001, TC_H_ROOT, "htb", 0, 0};
	k.classes[k.n_classes++] = (struct fqdisc){3, 0x10010, 0x10001, "htb", 0, 0};
	add_tp(q0 = add_unit(&k, 2, 0x10000), 0, 10, "u32", 2);
	add_tp(q1 = add_unit(&k, 3, 0x10000), 0, 10, "u32", 2);
	add_tp(c1 = add_unit(&k, 3, 0x10001), 0, 20, "u32", 3);
	struct tcx_snapshot *s = collect(&k, "targets: [{all: true}]\n");

	assert_int_equal(tcx_snapshot_failed_targets(s), 0);
	assert_int_equal(s->n_targets, 3);
	assert_unit_rows(s, q0, 0);
	assert_unit_rows(s, q1, 1);
	assert_unit_rows(s, c1, 2);
	assert_string_equal(s->targets[2].parent_name, "1:1");
	assert_qdevs(s, "eth0 eth1");
	assert_false(s->qdevs[0].ok);
	assert_string_equal(s->qdevs[0].error, "class dump failed: No such device");
	assert_int_equal(s->qdevs[0].n_qdiscs, 1);
	assert_int_equal(s->qdevs[0].n_classes, 0);
	assert_true(s->qdevs[1].ok);
	assert_int_equal(s->qdevs[1].n_qdiscs, 1);
	assert_int_equal(s->qdevs[1].n_classes, 2);
	assert_int_equal(s->n_qdiscs, 2);
	assert_int_equal(s->n_classes, 2);
	for (size_t i = 0; i < s->n_classes; i++)
		assert_string_equal(s->qdevs[s->classes[i].qdev].dev, "eth1");
	assert_int_equal(s->errors[TCX_ERR_KERNEL], 1);
	tcx_snapshot_unref(s);
}

/* A qdisc message that cannot be read drops that row alone, counted as
 * malformed: the device's other qdiscs and its filters are collected. */
static void test_malformed_qdisc_drops_its_row(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	/* an empty TCA_KIND: refused by the decoder */
	k.qdiscs[k.n_qdiscs++] = (struct fqdisc){2, 0x10000, TC_H_ROOT, "", 0, 0};
	add_tp(u = add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "flower", 2);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 1);
	assert_true(s->targets[0].ok);
	assert_unit_rows(s, u, 0);
	assert_int_equal(s->n_qdevs, 1);
	assert_true(s->qdevs[0].ok);
	assert_int_equal(s->n_qdiscs, 1);
	assert_string_equal(tcx_kind_name(s, s->qdiscs[0].kind), "clsact");
	tcx_snapshot_unref(s);
}

/* Statistics that cannot be read (TCA_STATS2 with trailing bytes) drop the
 * row of that qdisc or class alone, counted as malformed: its identity was
 * read, so the filters attached to it, the device's classes and the other
 * rows are collected. (Before the qdisc rows, discovery read no statistics,
 * and such a message lost nothing.) */
static void test_malformed_stats_drop_the_row_only(void **state)
{
	/* the root qdisc 1:, the inner class 1:1, the root of a device that
	 * has no other qdisc */
	static const uint32_t bad[] = {0x10000, 0x10001, 0x10000};

	for (size_t b = 0; b < 3; b++) {
		struct fake k = {.bad_stats_handle = bad[b]};
		struct funit *q, *c, *i = NULL;
		int has_clsact = b < 2;

		setup_htb(&k);
		if (has_clsact)
			add_qdisc(&k, 2, "clsact", 0, 0);
		add_tp(q = add_unit(&k, 2, 0x10000), 0, 10, "u32", 2);
		add_tp(c = add_unit(&k, 2, 0x10001), 0, 20, "u32", 3);
		if (has_clsact)
			add_tp(i = add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "flower", 2);
		struct tcx_snapshot *s = collect(&k, "targets: [{all: true}]\n");

		assert_int_equal(s->errors[TCX_ERR_MALFORMED], 1);
		assert_int_equal(tcx_snapshot_failed_targets(s), 0);
		assert_int_equal(s->n_targets, 2 + has_clsact);
		assert_unit_rows(s, q, 0);
		assert_unit_rows(s, c, 1);
		assert_string_equal(s->targets[1].parent_name, "1:1");
		if (i)
			assert_unit_rows(s, i, 2);
		assert_qdevs(s, "eth0");
		assert_true(s->qdevs[0].ok);
		if (bad[b] == 0x10000) {
			assert_int_equal(s->n_qdiscs, has_clsact); /* the root's row is gone */
			assert_int_equal(s->n_classes, 2);
		} else {
			assert_int_equal(s->n_qdiscs, 2);
			assert_int_equal(s->n_classes, 1);
			assert_int_equal(s->classes[0].handle, 0x10010);
		}
		tcx_snapshot_unref(s);
	}
}

static void test_kernel_error_is_reported(void **state)
{
	struct fake k = {.fail_status = -EPERM};

	setup_eth0(&k);
	add_tp(add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "u32", 2);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_false(s->targets[0].ok);
	assert_string_equal(s->targets[0].error,
	                    "filter dump failed: Operation not permitted: fake kernel says no");
	assert_int_equal(s->errors[TCX_ERR_KERNEL], 1);
	assert_int_equal(s->n_filters, 0);
	tcx_snapshot_unref(s);
}

/* A reply the source could not walk (tcx_nlmsg_reply(): -EBADMSG) is a
 * malformed message, not a kernel error; the datagrams the source dropped
 * are in the snapshot. */
static void test_bad_reply_is_malformed_and_drops_counted(void **state)
{
	struct fake k = {.fail_status = -EBADMSG, .dropped = {3, 1}};

	setup_eth0(&k);
	add_tp(add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "u32", 2);
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_false(s->targets[0].ok);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 1);
	assert_int_equal(s->errors[TCX_ERR_KERNEL], 0);
	assert_int_equal(s->netlink_dropped[TCX_NLDROP_SENDER], 3);
	assert_int_equal(s->netlink_dropped[TCX_NLDROP_LENGTH], 1);
	tcx_snapshot_unref(s);
}

static void test_unmapped_policy_counts(void **state)
{
	struct fake k = {0};

	setup_eth0(&k);
	add_tp(add_unit(&k, 2, TCX_PARENT_INGRESS), 0, 1, "flower", 3);
	/* Cookies are {pref, chain, i, 0xcc}: map the first, drop the rest. */
	struct tcx_snapshot *s = collect(&k, "targets:\n  - dev: eth0\n    parent: ingress\n"
	                                     "labels: [rule]\n"
	                                     "unmapped: drop\n"
	                                     "cookies:\n  \"010000cc\": [first]\n");

	assert_int_equal(s->n_actions, 3);
	assert_int_equal(tcx_labelset_map(s, s->actions[0].labels), TCX_MAP_EXACT);
	assert_false(s->actions[0].drop);
	assert_true(s->actions[1].drop);
	assert_true(s->actions[2].drop);
	assert_int_equal(s->unmapped_cookies, 2);
	assert_int_equal(s->dropped_rows, 2);
	tcx_snapshot_unref(s);
}

/* ---- no two rows with one series identity ------------------------------------------------ */

static char *render_fmt(const struct tcx_snapshot *s, enum tcx_format fmt)
{
	struct tcx_buf b;
	char *out;

	tcx_buf_init_mem(&b);
	assert_int_equal(tcx_render(s, fmt, NULL, &b), 0);
	out = calloc(1, b.len + 1);
	memcpy(out, b.p, b.len);
	tcx_buf_free(&b);
	return out;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Cut from line what is not identity: a sample's value, or a JSON row's
 * flags, index and counters. */
static void identity_of(char *line, int json)
{
	if (!json) {
		char *sp = strrchr(line, ' ');

		if (sp)
			*sp = '\0';
		return;
	}
	for (const char *key = "\"flags\":"; key;
	     key = strcmp(key, "\"index\":") ? "\"index\":" : NULL) {
		char *k = strstr(line, key), *end;

		assert_non_null(k);
		end = strchr(k, ',');
		assert_non_null(end);
		memmove(k, end + 1, strlen(end + 1) + 1);
	}
	*strstr(line, ",\"bytes\":") = '\0';
}

/* No two samples (or JSON rows) of out share a series identity. */
static void assert_unique_series(const char *out, int json)
{
	char *copy = strdup(out), **lines = NULL, *save = NULL;
	size_t n = 0;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (l[0] == '#')
			continue;
		/* the action rows (not the filters, qdiscs, targets...) */
		if (json && strncmp(l, "{\"type\":\"action\",", 17) != 0)
			continue;
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		identity_of(l, json);
		lines[n++] = l;
	}
	assert_true(n > 0);
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 1; i < n; i++)
		if (strcmp(lines[i - 1], lines[i]) == 0)
			fail_msg("two rows with the identity %s", lines[i]);
	free(lines);
	free(copy);
}

static void assert_unique_everywhere(const struct tcx_snapshot *s)
{
	for (int fmt = TCX_FMT_PROMETHEUS; fmt <= TCX_FMT_JSON; fmt++) {
		char *out = render_fmt(s, (enum tcx_format)fmt);

		assert_unique_series(out, fmt == TCX_FMT_JSON);
		free(out);
	}
}

/* u32 tps of one pref in chains 0 and 1 of ingress, and in egress, share
 * their hash tables: each lists the others' filters too. Each filter is kept
 * once, under the tp whose root table holds it; a table that is no tp's root
 * goes with the first of them. Prefs with one tp need no GET. */
static void test_u32_shared_tables_listed_once(void **state)
{
	struct fake k = {.u32_shared = 1};
	struct funit *in, *eg;
	struct tcx_snapshot *s;

	setup_eth0(&k);
	in = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(in, 0, 50, "u32", 3);
	add_tp(in, 1, 50, "u32", 2);
	in->tps[1].htid = 0x801;
	add_tp(in, 0, 60, "u32", 2);
	in->tps[2].htid = 0x803;
	add_tp(in, 0, 50, "u32", 2); /* a table of its own, 7:, linked to */
	in->tps[3].htid = 0x7;
	in->tps[3].table_only = 1;
	eg = add_unit(&k, 2, TCX_PARENT_EGRESS);
	add_tp(eg, 0, 50, "u32", 1);
	eg->tps[0].htid = 0x802;
	s = collect(&k, "targets:\n  - dev: eth0\n");

	assert_int_equal(s->n_targets, 2);
	assert_string_equal(s->targets[0].parent_name, "ingress");
	assert_unit_rows(s, in, 0);
	assert_unit_rows(s, eg, 1);
	/* each table's row once too: 800:, 801:, 803:, 7: and 802: */
	assert_int_equal(s->n_filters, 5 + 3 + 2 + 2 + 2 + 1);
	assert_int_equal(k.root_gets, 3);
	for (size_t i = 0; i < s->n_actions; i++) {
		const struct tcx_filter *f = &s->filters[s->actions[i].filter];

		/* cookies are {pref, chain, i, 0xcc} of the tp that made them */
		assert_int_equal(s->actions[i].cookie[1], f->chain);
	}
	assert_unique_everywhere(s);
	tcx_snapshot_unref(s);
}

/* Shared tables of u32 rules without actions (flowid only, as shaping
 * scripts write them): each knode once, no action row; the snapshot has no
 * action at all (its action array is never made: the VM's 6.1 found
 * memmove(NULL, NULL, 0) there under UBSan). */
static void test_u32_shared_tables_without_actions(void **state)
{
	struct fake k = {.u32_shared = 1};
	struct funit *u;
	/* takes the row arrays that earlier tests' snapshots left spare, so
	 * that the collection starts with none, as --once does */
	struct tcx_snapshot *hold = tcx_snapshot_new(NULL), *s;
	char *out;

	assert_non_null(hold);
	tcx_snapshot_reuse(hold);
	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 3);
	add_tp(u, 1, 10, "u32", 2);
	u->tps[1].htid = 0x801;
	u->tps[0].no_action = u->tps[1].no_action = 1;
	s = collect(&k, "targets:\n  - dev: eth0\n");

	assert_int_equal(s->n_targets, 2); /* ingress, and egress with no filter */
	/* 800: and its 3 knodes, 801: and its 2, each once */
	assert_int_equal(s->n_filters, 1 + 3 + 1 + 2);
	assert_int_equal(s->n_actions, 0);
	assert_int_equal(s->targets[0].n_filters, 7);
	assert_int_equal(s->targets[0].n_actions, 0);
	out = render_fmt(s, TCX_FMT_PROMETHEUS); /* (JSON: no action line) */
	assert_unique_series(out, 0);
	free(out);
	tcx_snapshot_unref(s);
	tcx_snapshot_unref(hold);
}

/* Past 4095 filters in one table, u32 gives each new one the handle
 * htid::fff. Rows that are the same series are merged into the first, their
 * counters added, and counted. */
static void test_u32_reused_handle_merged(void **state)
{
	struct fake k = {0};
	struct funit *u;
	struct tcx_snapshot *s;
	char *out, want[256];
	uint64_t sum = 0;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 10);
	u->tps[0].dup_from = 6;
	u->tps[0].no_cookie = 1;
	s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_unique_everywhere(s);
	for (int i = 6; i < 10; i++)
		sum += fbytes(&u->tps[0], i);
	out = render_fmt(s, TCX_FMT_PROMETHEUS);
	snprintf(want, sizeof(want),
	         "\ntc_action_bytes_total{device=\"eth0\",parent=\"ingress\",chain=\"0\","
	         "protocol=\"ip\",pref=\"10\",kind=\"u32\",handle=\"800::fff\",order=\"1\","
	         "action=\"gact\",cookie=\"\"} %" PRIu64 "\n",
	         sum);
	if (!strstr(out, want))
		fail_msg("missing:%s", want);
	assert_non_null(strstr(out, "\ntc_exporter_merged_rows{row=\"filter\"} 3\n"));
	assert_non_null(strstr(out, "\ntc_exporter_merged_rows{row=\"action\"} 3\n"));
	assert_non_null(strstr(out, "\ntc_action_packets_total{device=\"eth0\",parent=\"ingress\","
	                            "chain=\"0\",protocol=\"ip\",pref=\"10\",kind=\"u32\","
	                            "handle=\"800::fff\",order=\"1\",action=\"gact\",cookie=\"\"} "
	                            "34\n")); /* 7 + 8 + 9 + 10 */
	free(out);
	tcx_snapshot_unref(s);
}

/* Targets that name one filter list under one name are one unit, so that no
 * series is there twice: ffff:fff1 and ffff:ffff, which the kernel takes
 * for the ingress qdisc's list (as it does ffff:fff2) and which print as
 * ingress and root, are the ingress; a missing device named twice is one
 * failed target. */
static void test_target_aliases_one_unit(void **state)
{
	struct fake k = {0};
	struct funit *in, *root;
	struct tcx_snapshot *s;

	setup_htb(&k);
	add_qdisc(&k, 2, "ingress", 0, 0);
	in = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(in, 0, 10, "flower", 3);
	k.units[k.n_units++] = (struct funit){.ifindex = 2, .parent = TC_H_INGRESS};
	k.units[k.n_units++] = (struct funit){.ifindex = 2, .parent = TC_H_ROOT};
	memcpy(k.units[1].tps, in->tps, sizeof(in->tps));
	memcpy(k.units[2].tps, in->tps, sizeof(in->tps));
	k.units[1].n_tps = k.units[2].n_tps = in->n_tps;
	root = add_unit(&k, 2, 0); /* the same filters at the HTB root */
	add_tp(root, 0, 10, "flower", 3);
	s = collect(&k, "targets:\n"
	                "  - {dev: eth0, parent: ingress}\n"
	                "  - {dev: eth0, parent: \"ffff:fff1\"}\n"
	                "  - {dev: eth0, parent: root}\n"
	                "  - {dev: eth0, parent: \"ffff:ffff\"}\n"
	                "  - {dev: nosuch, parent: ingress}\n"
	                "  - {dev: nosuch, parent: \"ffff:fff1\"}\n");

	assert_int_equal(s->n_targets, 3);
	assert_int_equal(s->targets[0].parent, TCX_PARENT_INGRESS);
	assert_int_equal(s->targets[1].parent, 0);
	assert_string_equal(s->targets[2].dev, "nosuch");
	assert_false(s->targets[2].ok);
	assert_unit_rows(s, in, 0);
	assert_unit_rows(s, root, 1);
	assert_unique_everywhere(s);
	tcx_snapshot_unref(s);
}

/* ---- deletion notifications, folded into the aggregates ------------------------------------ */

static const char *agg_all = "aggregate: {by: []}\n";

/* One pass through collector c and aggregation state a: the bytes of the one
 * aggregate (`by: []`), and the notifications lost so far. */
static uint64_t agg_pass(struct tcx_collector *c, struct tcx_agg *a, struct tcx_config *cfg,
                         uint64_t *lost)
{
	struct tcx_snapshot *s = tcx_collect(c, cfg);
	uint64_t v;

	assert_non_null(s);
	assert_int_equal(tcx_agg_update(a, s), 0);
	assert_null(s->finals); /* folded, and freed */
	assert_non_null(s->aggs);
	assert_int_equal(s->aggs->n, 1);
	v = s->aggs->c[0].v[TCX_ACT_BYTES];
	if (lost)
		*lost = s->notifications_lost;
	tcx_snapshot_unref(s);
	return v;
}

/* A filter deleted by handle between two passes: its bytes since the last
 * pass are in the aggregate (the next dump no longer has it), once. */
static void test_final_folded_row_gone(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u;
	uint64_t first, lost;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	add_tp(u, 0, 20, "u32", 1);
	u->tps[1].bytes = 1000;
	first = agg_pass(c, a, cfg, NULL);
	assert_int_equal(first, fbytes(&u->tps[0], 0) + 1000);
	assert_non_null(k.notify);

	u->tps[1].bytes = 1500; /* 500 bytes, then deleted */
	queue_deletion(&k, u, &u->tps[1], 0);
	u->n_tps = 1;
	assert_int_equal(agg_pass(c, a, cfg, &lost), first + 500);
	assert_int_equal(lost, 0);
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 500);
	tcx_agg_free(a);
	tcx_collector_free(c);
	assert_null(k.notify); /* closed with its source */
	tcx_config_unref(cfg);
}

/* Make-before-break churn, as software switches replace a rule: the new
 * filter is added at the other pref, then the old one deleted by handle. The
 * kernel gives the next filter at a pref the handle and action index of the
 * one deleted there, so every other round reuses an identity whole, and a
 * pass may drain several finals of one identity; each counts once, and each
 * new filter from 0. */
static void test_final_identity_reused(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u;
	/* the rounds between two passes, and each round's final */
	static const int rounds[] = {1, 3, 2, 4};
	uint64_t sum = 100, fin = 100, r = 0;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	u->tps[0].bytes = 100;
	u->tps[0].index = 5;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 100);
	for (size_t p = 0; p < sizeof(rounds) / sizeof(rounds[0]); p++) {
		sum -= u->tps[0].bytes; /* the last seen: replaced by a final */
		for (int n = 0; n < rounds[p]; n++, r++) {
			add_tp(u, 0, r % 2 ? 10 : 20, "u32", 1); /* make */
			u->tps[1].index = r % 2 ? 5 : 6;
			u->tps[0].bytes = fin += 7;
			sum += fin;
			queue_deletion(&k, u, &u->tps[0], 0); /* break */
			u->tps[0] = u->tps[1];
			u->n_tps = 1;
			u->tps[0].bytes = 1 + r;
		}
		sum += u->tps[0].bytes;
		assert_int_equal(agg_pass(c, a, cfg, NULL), sum);
	}
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* A filter deleted during a dump, before the dump read its identity, which
 * then showed the next filter there (the kernel gave it the same handle):
 * its final, drained by the next pass, takes the place of what the dump saw
 * of the next one, which that pass's dump shows again. Counted once each,
 * whether the dump saw the next one below the old one's count (a replace:
 * pending) or past it. */
static void test_final_during_dump(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u;
	struct ftp old;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	u->tps[0].bytes = 100;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 100);
	/* the next one seen below the old one's count */
	u->tps[0].bytes = 40;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 140); /* 100 pending */
	old = u->tps[0];
	old.bytes = 120; /* its final: 20 bytes after the last pass */
	queue_deletion(&k, u, &old, 0);
	u->tps[0].bytes = 60;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 120 + 60);
	/* the next one seen past the old one's count */
	u->tps[0].bytes = 500;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 120 + 500);
	/* ...it was a new one: the old one (at 500 when read) ended at 510,
	 * and the dump saw the new one at 520 */
	u->tps[0].bytes = 520;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 120 + 520);
	old.bytes = 510;
	queue_deletion(&k, u, &old, 0);
	u->tps[0].bytes = 530;
	assert_int_equal(agg_pass(c, a, cfg, NULL), 120 + 510 + 530);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* Deleted after a pass's dump: the next pass drains its final before it
 * dumps, and the final takes the place of what the dump saw. */
static void test_final_folded_row_still_dumped(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u;
	uint64_t first;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	add_tp(u, 0, 20, "u32", 1);
	u->tps[1].bytes = 1000;
	first = agg_pass(c, a, cfg, NULL);
	u->tps[1].bytes = 1200;
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 200);

	u->tps[1].bytes = 1500;
	queue_deletion(&k, u, &u->tps[1], 0);
	u->n_tps = 1;
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 500);
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 500);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* A filter made and deleted between two passes: no dump saw it, its final
 * counts. One on a device no target collects does not. */
static void test_final_folded_row_unseen(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u, other = {.ifindex = 9, .parent = TCX_PARENT_INGRESS};
	struct ftp brief = {.pref = 30, .proto = 0x0800, .kind = "u32", .n = 1, .bytes = 777};
	uint64_t first;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	first = agg_pass(c, a, cfg, NULL);

	queue_deletion(&k, u, &brief, 0);
	queue_deletion(&k, &other, &brief, 0); /* device 9: not collected */
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 777);
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 777);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* Deleted, then made again under the same identity (a new action index)
 * before the next pass: the deleted one's final counts, and the new one
 * from 0; neither again. */
static void test_final_folded_row_made_again(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct funit *u;
	uint64_t first;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	add_tp(u, 0, 20, "u32", 1);
	u->tps[1].bytes = 1000;
	first = agg_pass(c, a, cfg, NULL);

	u->tps[1].bytes = 1500;
	queue_deletion(&k, u, &u->tps[1], 0);
	u->tps[1].bytes = 50; /* the new filter: a new action */
	u->tps[1].index = 300;
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 500 + 50);
	u->tps[1].bytes = 80;
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 500 + 80);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* ENOBUFS: counted in notifications_lost (the kernel's count where it has
 * one; this fake has none: one each), and what follows is still folded. The
 * count stays when the source is closed and opened again (a configuration
 * without `aggregate`, then with it again). */
static void test_final_lost_counted(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all), *plain = config(one_dev);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct tcx_snapshot *s;
	struct funit *u;
	uint64_t first, lost;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 1);
	add_tp(u, 0, 20, "u32", 1);
	u->tps[1].bytes = 1000;
	first = agg_pass(c, a, cfg, &lost);
	assert_int_equal(lost, 0);

	queue_enobufs(&k);
	u->tps[1].bytes = 1100;
	queue_deletion(&k, u, &u->tps[1], 0);
	u->n_tps = 1;
	assert_int_equal(agg_pass(c, a, cfg, &lost), first + 100);
	assert_int_equal(lost, 1);

	s = tcx_collect(c, plain); /* no aggregate: no subscription */
	assert_non_null(s);
	assert_null(k.notify);
	assert_null(s->finals);
	assert_int_equal(s->notifications_lost, 1);
	assert_int_equal(tcx_agg_update(a, s), 0); /* the state emptied */
	tcx_snapshot_unref(s);
	assert_int_equal(agg_pass(c, a, cfg, &lost), fbytes(&u->tps[0], 0)); /* started over */
	assert_non_null(k.notify);
	assert_int_equal(lost, 1);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(plain);
	tcx_config_unref(cfg);
}

/* Two namespaces, a and b, each a fake kernel of its own (and its own
 * notification socket). */
struct two_ns {
	struct fake *a, *b;
};

static void *two_open(void *opaque, const char *netns, int notify, int adds, char *err,
                      size_t errlen)
{
	struct two_ns *t = opaque;

	return f_open(strcmp(netns, "a") == 0 ? t->a : t->b, netns, notify, adds, err, errlen);
}

static const struct tcx_source_ops two_ops = {
        .open = two_open, .dump = f_dump, .close = f_close, .dropped = f_dropped, .drain = f_drain};

/* The notifications lost by the namespace of s's target in netns ns. */
static uint64_t target_lost(const struct tcx_snapshot *s, const char *ns)
{
	for (size_t i = 0; i < s->n_targets; i++)
		if (strcmp(s->targets[i].netns, ns) == 0)
			return s->targets[i].notifications_lost;
	fail_msg("no target in netns %s", ns);
	return 0;
}

/* One pass over cfg: the notifications lost in all, and by the targets of
 * namespaces a and b (NO_TARGET: cfg has none in b). */
#define NO_TARGET UINT64_MAX
static void lost_pass(struct tcx_collector *c, struct tcx_agg *ag, struct tcx_config *cfg,
                      uint64_t all, uint64_t a, uint64_t b)
{
	struct tcx_snapshot *s = tcx_collect(c, cfg);

	assert_non_null(s);
	assert_int_equal(tcx_agg_update(ag, s), 0);
	assert_int_equal(s->notifications_lost, all);
	assert_int_equal(target_lost(s, "a"), a);
	if (b != NO_TARGET)
		assert_int_equal(target_lost(s, "b"), b);
	tcx_snapshot_unref(s);
}

/* A lost notification marks the targets of its namespace (their aggregates
 * may lack a final), not the others; the mark stays when the namespace's
 * source is closed and opened again. notify_buffer_kib reaches open(). */
static void test_finals_lost_by_namespace(void **state)
{
	static const char *both = "targets:\n"
	                          "  - {dev: eth0, parent: ingress, netns: a}\n"
	                          "  - {dev: eth0, parent: ingress, netns: b}\n"
	                          "aggregate: {by: [netns]}\nnotify_buffer_kib: 16\n";
	static const char *only_a = "targets: [{dev: eth0, parent: ingress, netns: a}]\n"
	                            "aggregate: {by: [netns]}\n";
	struct fake ka = {0}, kb = {0};
	struct two_ns two = {&ka, &kb};
	static const char *all = "targets: [{all: true, netns: a}, {all: true, netns: b}]\n"
	                         "aggregate: {by: [netns]}\nnotify_buffer_kib: 16\n";
	static const char *plain = "targets: [{all: true, netns: a}, {all: true, netns: b}]\n";
	struct tcx_config *cfg = config(both), *cfg_a = config(only_a), *cfg_all = config(all),
	                  *cfg_plain = config(plain);
	struct tcx_snapshot *s;
	struct tcx_collector *c = tcx_collector_new(&two_ops, &two);
	struct tcx_agg *ag = tcx_agg_new();

	for (int i = 0; i < 2; i++) {
		struct fake *k = i ? &kb : &ka;

		setup_eth0(k);
		add_tp(add_unit(k, 2, TCX_PARENT_INGRESS), 0, 10, "u32", 1);
	}
	lost_pass(c, ag, cfg, 0, 0, 0);
	assert_int_equal(ka.notify_buf, 16 * 1024);
	assert_int_equal(kb.notify_buf, 16 * 1024);

	queue_enobufs(&kb);
	queue_enobufs(&kb);
	lost_pass(c, ag, cfg, 2, 0, 2);
	lost_pass(c, ag, cfg, 2, 0, 2); /* it stays */

	lost_pass(c, ag, cfg_a, 2, 0, NO_TARGET); /* b closed: its count kept */
	assert_null(kb.notify);
	assert_int_equal(ka.notify_buf, TCX_NOTIFY_BUFFER_KIB_DEFAULT * 1024); /* opened again */
	lost_pass(c, ag, cfg, 2, 0, 2); /* b opened again: marked still */
	queue_enobufs(&ka);
	lost_pass(c, ag, cfg, 3, 1, 2);

	/* Parents found by discovery with no filter are left out: eth0's
	 * egress, which never held one. One that held filters at the last
	 * pass and holds none now (b's ingress, its flows expired) stays
	 * where the namespace lost notifications: its aggregates may lack
	 * finals, and the mark stays with them. */
	ka.n_notes = ka.next_note = 0; /* a's one lost, b's two stay */
	s = tcx_collect(c, cfg_all);
	assert_non_null(s);
	assert_int_equal(tcx_agg_update(ag, s), 0);
	assert_int_equal(s->n_targets, 2);
	for (size_t i = 0; i < s->n_targets; i++) {
		assert_int_equal(s->targets[i].parent, TCX_PARENT_INGRESS);
		assert_int_equal(s->targets[i].notifications_lost,
		                 strcmp(s->targets[i].netns, "a") == 0 ? 1 : 2);
	}
	tcx_snapshot_unref(s);
	kb.units[0].n_tps = 0;
	for (int pass = 0; pass < 2; pass++) { /* and at the pass after */
		s = tcx_collect(c, cfg_all);
		assert_non_null(s);
		assert_int_equal(tcx_agg_update(ag, s), 0);
		assert_int_equal(s->n_targets, 2);
		assert_string_equal(s->targets[1].netns, "b");
		assert_int_equal(s->targets[1].n_filters, 0);
		assert_int_equal(s->targets[1].notifications_lost, 2);
		tcx_snapshot_unref(s);
	}
	s = tcx_collect(c, cfg_plain); /* without aggregate: no mark, left out */
	assert_non_null(s);
	assert_int_equal(s->n_targets, 1);
	assert_string_equal(s->targets[0].netns, "a");
	tcx_snapshot_unref(s);
	tcx_agg_free(ag);
	tcx_collector_free(c);
	tcx_config_unref(cfg_plain);
	tcx_config_unref(cfg_all);
	tcx_config_unref(cfg_a);
	tcx_config_unref(cfg);
}

/* ---- legacy policers ----------------------------------------------------------------------- */

/* u32 filters with a legacy policer (`police` without `action`) next to
 * one with an action: every filter has its row, the policers kind police,
 * and the aggregate sums them with the other action rows, deletions
 * included. */
static void test_old_police_rows_aggregated(void **state)
{
	struct fake k = {0};
	struct tcx_config *cfg = config(agg_all);
	struct tcx_collector *c = tcx_collector_new(&fake_ops, &k);
	struct tcx_agg *a = tcx_agg_new();
	struct tcx_snapshot *s;
	struct funit *u;
	uint64_t first;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 2);
	u->tps[0].old_police = 1;
	add_tp(u, 0, 20, "u32", 1);
	u->tps[1].bytes = 1000;
	add_tp(u, 0, 30, "basic", 1);
	u->tps[2].old_police = 1;
	u->tps[2].bytes = 7;

	s = collect(&k, one_dev);
	assert_true(s->targets[0].ok);
	assert_int_equal(s->n_filters, 4);
	assert_int_equal(s->n_actions, 4);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 0);
	for (size_t i = 0; i < 4; i++) {
		const struct tcx_action *act = &s->actions[i];
		const struct tcx_filter *f = &s->filters[act->filter];
		uint32_t nth = f->pref == 10 ? (f->handle & 0xfff) - 0x800 : 0;

		assert_int_equal(f->n_actions, 1);
		assert_string_equal(tcx_kind_name(s, act->kind), f->pref == 20 ? "gact" : "police");
		assert_int_equal(act->order, 1);
		assert_int_equal(act->index, 100 + nth);
		assert_int_equal(act->c[TCX_ACT_BYTES],
		                 fbytes(&u->tps[f->pref / 10 - 1], (int)nth));
	}
	tcx_snapshot_unref(s);

	first = agg_pass(c, a, cfg, NULL);
	assert_int_equal(first, fbytes(&u->tps[0], 0) + fbytes(&u->tps[0], 1) + 1000 + 7);
	u->tps[2].bytes = 57; /* 50 bytes, then deleted */
	queue_deletion(&k, u, &u->tps[2], 0);
	u->n_tps = 2;
	assert_int_equal(agg_pass(c, a, cfg, NULL), first + 50);
	tcx_agg_free(a);
	tcx_collector_free(c);
	tcx_config_unref(cfg);
}

/* A policer whose statistics cannot be read loses its row alone, counted as
 * malformed: the filters, the other rows and the target stay. */
static void test_malformed_old_police_drops_its_row(void **state)
{
	struct fake k = {0};
	struct funit *u;

	setup_eth0(&k);
	u = add_unit(&k, 2, TCX_PARENT_INGRESS);
	add_tp(u, 0, 10, "u32", 2);
	u->tps[0].old_police = 2;
	add_tp(u, 0, 20, "basic", 1);
	u->tps[1].old_police = 1;
	struct tcx_snapshot *s = collect(&k, one_dev);

	assert_true(s->targets[0].ok);
	assert_int_equal(s->errors[TCX_ERR_MALFORMED], 2);
	assert_int_equal(s->n_filters, 3);
	assert_int_equal(s->n_actions, 1);
	assert_int_equal(s->filters[s->actions[0].filter].pref, 20);
	assert_int_equal(s->actions[0].c[TCX_ACT_BYTES], fbytes(&u->tps[1], 0));
	tcx_snapshot_unref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_all_flower_is_one_terse_dump),
	        cmocka_unit_test(test_liveness_passes),
	        cmocka_unit_test(test_matchall_silent_omission_is_repaired),
	        cmocka_unit_test(test_u32_abort_falls_back_to_full),
	        cmocka_unit_test(test_old_kernel_ignores_terse),
	        cmocka_unit_test(test_many_matchall_prefs_use_one_full_dump),
	        cmocka_unit_test(test_all_dumps_shared_block_once),
	        cmocka_unit_test(test_named_device_without_parent),
	        cmocka_unit_test(test_missing_targets_fail_alone),
	        cmocka_unit_test(test_next_pass_reuses_row_arrays),
	        cmocka_unit_test(test_device_vanishing_is_a_failure),
	        cmocka_unit_test(test_malformed_message_fails_its_target_only),
	        cmocka_unit_test(test_kernel_error_is_reported),
	        cmocka_unit_test(test_bad_reply_is_malformed_and_drops_counted),
	        cmocka_unit_test(test_unmapped_policy_counts),
	        cmocka_unit_test(test_u32_shared_tables_listed_once),
	        cmocka_unit_test(test_u32_shared_tables_without_actions),
	        cmocka_unit_test(test_u32_reused_handle_merged),
	        cmocka_unit_test(test_target_aliases_one_unit),
	        cmocka_unit_test(test_all_devices_filtered),
	        cmocka_unit_test(test_all_devices_filter_qdisc_rows),
	        cmocka_unit_test(test_final_folded_row_gone),
	        cmocka_unit_test(test_final_folded_row_still_dumped),
	        cmocka_unit_test(test_final_folded_row_unseen),
	        cmocka_unit_test(test_final_folded_row_made_again),
	        cmocka_unit_test(test_final_identity_reused),
	        cmocka_unit_test(test_final_during_dump),
	        cmocka_unit_test(test_final_lost_counted),
	        cmocka_unit_test(test_finals_lost_by_namespace),
	        cmocka_unit_test(test_filters_on_classes),
	        cmocka_unit_test(test_sweeps),
	        cmocka_unit_test(test_filterless_qdiscs_not_dumped),
	        cmocka_unit_test(test_qdisc_listed_twice_is_one_row),
	        cmocka_unit_test(test_class_dump_failure),
	        cmocka_unit_test(test_failures_share_a_line),
	        cmocka_unit_test(test_class_dump_vanished_device_alone),
	        cmocka_unit_test(test_plans_shared),
	        cmocka_unit_test(test_malformed_qdisc_drops_its_row),
	        cmocka_unit_test(test_malformed_stats_drop_the_row_only),
	        cmocka_unit_test(test_old_police_rows_aggregated),
	        cmocka_unit_test(test_malformed_old_police_drops_its_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
