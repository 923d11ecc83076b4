/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz harness: netlink replies through the collector and the renderers.
 *
 * Input: one byte that picks a configuration (configs[] below), then the
 * kernel's replies, back to back, in the order the collector sends its
 * requests (link dump, qdisc dump, then filter dumps and the lookups between
 * them). Each request takes the messages up to and including the next
 * NLMSG_DONE or NLMSG_ERROR, walked by the collector's own walker
 * (tcx_nlmsg_reply(), as collectors/nl.c does); a reply cut short by the end
 * of the input fails as a socket that stops answering would, and one with a
 * message whose length does not fit fails as malformed. tests/fuzz/mkseeds.c writes seeds in this
 * form.
 *
 * Each reply is handed over in a buffer of exactly its size, aligned as the
 * kernel's are (malloc()'s alignment), so that ASan sees any read past it. The snapshot is checked
 * for consistency, then rendered in every format: the Prometheus text must
 * be the same whether its label text was built once for every variant or
 * for the one render, and all output must be UTF-8.
 *
 * The same replies then go, datagram by datagram, to a deletion notification
 * socket (collectors/notify.c), every filter message in them made an
 * RTM_DELTFILTER (the kernel lays both out alike); its final rows are
 * checked and rendered as JSON.
 *
 * Every qdisc and class message in the input, wherever it is, also goes to
 * the qdisc and class decoder (collectors/qdisc_parse.c) in a buffer of
 * exactly its length: a refusal must say why, and a decoded message must
 * point only at rows its kind's table has.
 *
 * With FUZZ_TRACE set in the environment, each request and the status of
 * its reply, then the Prometheus text, go to stderr (for writing seeds). */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <math.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/render/prom.h"
#include "agent/render/render.h"
#include "collectors/collect.h"
#include "collectors/nlmsg.h"
#include "collectors/notify.h"
#include "collectors/qdisc_parse.h"
#include "collectors/tc_parse.h"
#include "tests/fuzz/fuzz.h"

static const char *const configs[] = {
        NULL, /* the built-in default: every qdisc and shared block */
        "labels: [tenant, rule]\n"
        "cookies:\n"
        "  \"0a0b\": {tenant: acme, rule: allow-dns}\n"
        "  \"0a0c\": [\"ac\\u00e9me\", \"deny\\nall\"]\n"
        "decoders:\n"
        "  - type: fields\n"
        "    prefix: \"ff\"\n"
        "    length: 4\n"
        "    fields: [{bytes: 1}, {label: tenant, bytes: 1}, {label: rule, bytes: 2}]\n"
        "  - {type: uuid, label: rule, layout: ovs}\n"
        "  - {type: uuid, label: tenant, layout: rfc4122, prefix: \"00\"}\n"
        "  - {type: ascii, label: rule}\n",
        "targets:\n"
        "  - {dev: eth0, parent: ingress}\n"
        "  - {dev: eth0, parent: egress}\n"
        "  - {dev: eth1}\n"
        "  - {dev: eth1, parent: root}\n"
        "  - {dev: eth1, parent: \"1:\"}\n"
        "  - {block: 22}\n"
        "  - {all: true, netns: blue}\n"
        "labels: [rule]\n"
        "unmapped: drop\n"
        "decoders:\n"
        "  - {type: ascii, label: rule}\n",
};
#define N_CONFIGS (sizeof(configs) / sizeof(configs[0]))

static void config_err(void *arg, const char *msg)
{
	fprintf(stderr, "fuzz_netlink: built-in configuration: %s\n", msg);
	abort();
}

static struct tcx_config *config(unsigned i)
{
	static struct tcx_config *loaded[N_CONFIGS];

	if (!loaded[i])
		loaded[i] = configs[i]
		                    ? tcx_config_load_buffer("fuzz.yaml", configs[i],
		                                             strlen(configs[i]), config_err, NULL)
		                    : tcx_config_default();
	FUZZ_CHECK(loaded[i]);
	return loaded[i];
}

/* ---- the fake kernel: replies from the input ---------------------------------------------- */

struct feed {
	const uint8_t *p;
	size_t left;
};

static void *feed_open(void *opaque, const char *netns, int notify, int adds, char *err,
                       size_t errlen)
{
	return opaque; /* every namespace answers from the same input */
}

static void feed_close(void *src)
{
}

/* The next reply: the messages up to and including the first NLMSG_DONE or
 * NLMSG_ERROR, or all that is left (also when a length does not fit: the
 * collector's own walker, tcx_nlmsg_reply(), then finds it). */
static size_t reply_len(const uint8_t *p, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;

	while ((nlh = tcx_nlmsg_next(p, len, &off)))
		if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR)
			return off;
	return len;
}

static int has_dump_flags(const struct nlattr *a, void *arg)
{
	return mnl_attr_get_type(a) == TCA_DUMP_FLAGS ? MNL_CB_STOP : MNL_CB_OK;
}

static void trace(const struct nlmsghdr *req, size_t len, int status, const char *err)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(req);

	if (!getenv("FUZZ_TRACE"))
		return;
	fprintf(stderr, "request type %u", req->nlmsg_type);
	if (req->nlmsg_type == RTM_GETTFILTER)
		fprintf(stderr, " ifindex %d parent %08x info %08x%s", tcm->tcm_ifindex,
		        tcm->tcm_parent, tcm->tcm_info,
		        mnl_attr_parse(req, sizeof(*tcm), has_dump_flags, NULL) == MNL_CB_STOP
		                ? " terse"
		                : "");
	fprintf(stderr, ": %zu bytes, status %d %s\n", len, status, err);
}

static int feed_dump(void *src, struct nlmsghdr *req, mnl_cb_t cb, void *data, char *err,
                     size_t errlen)
{
	struct feed *f = src;
	struct tcx_nlreply r = {.cb = cb, .data = data, .err = err, .errlen = errlen};
	size_t len = reply_len(f->p, f->left);
	void *buf;
	int ret;

	err[0] = '\0';
	if (!len) {
		snprintf(err, errlen, "netlink receive: timed out");
		trace(req, len, -EAGAIN, err);
		return -EAGAIN;
	}
	buf = malloc(len);
	FUZZ_CHECK(buf);
	memcpy(buf, f->p, len);
	f->p += len;
	f->left -= len;
	/* As nl.c walks each datagram (sequence and port unchecked: 0). */
	ret = tcx_nlmsg_reply(&r, buf, len);
	free(buf);
	if (ret == 0) {
		snprintf(err, errlen, "netlink receive: timed out"); /* nothing more comes */
		ret = -EAGAIN;
	} else if (ret > 0) {
		ret = r.status;
	}
	trace(req, len, ret, err);
	return ret;
}

static const struct tcx_source_ops feed_ops = {
        .open = feed_open, .dump = feed_dump, .close = feed_close};

/* ---- checks ------------------------------------------------------------------------------- */

static void check_snapshot(const struct tcx_snapshot *s)
{
	size_t rows_f = 0;

	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];

		FUZZ_CHECK(memchr(t->error, '\0', sizeof(t->error)));
		FUZZ_CHECK(memchr(t->dev, '\0', sizeof(t->dev)));
		FUZZ_CHECK(t->ok || t->n_filters == 0);
		if (t->n_filters)
			FUZZ_CHECK(t->first_filter + (size_t)t->n_filters <= s->n_filters);
		rows_f += t->n_filters;
	}
	FUZZ_CHECK(rows_f == s->n_filters);
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];

		FUZZ_CHECK(f->target < s->n_targets);
		FUZZ_CHECK(f->kind < s->n_kinds);
		FUZZ_CHECK(f->first_action + (size_t)f->n_actions <= s->n_actions);
	}
	for (size_t i = 0; i < s->n_actions; i++) {
		const struct tcx_action *a = &s->actions[i];

		FUZZ_CHECK(a->filter < s->n_filters);
		FUZZ_CHECK(a->kind < s->n_kinds);
		FUZZ_CHECK(a->cookie_len <= TCX_COOKIE_MAX);
	}
	for (unsigned k = 0; k < s->n_kinds; k++)
		FUZZ_CHECK(memchr(s->kinds[k], '\0', TCX_KIND_MAX));
}

/* ---- the same filters, deleted: notify.c's drain ----------------------------------------- */

/* The next reply as one datagram, its filter messages made deletions. */
static ssize_t notify_recv(void *ctx, void *buf, size_t len, uint64_t dropped[TCX_NLDROP__MAX])
{
	struct feed *f = ctx;
	size_t n = reply_len(f->p, f->left), off = 0;
	struct nlmsghdr *nlh;

	if (!n)
		return -EAGAIN;
	f->p += n;
	f->left -= n;
	if (n > len)
		return -ENOSPC; /* as a datagram longer than the buffer */
	memcpy(buf, f->p - n, n);
	while ((nlh = (struct nlmsghdr *)tcx_nlmsg_next(buf, n, &off)))
		if (nlh->nlmsg_type == RTM_NEWTFILTER)
			nlh->nlmsg_type = RTM_DELTFILTER;
	return (ssize_t)n;
}

/* Rows in the order of deletion: every filter points at a target, its
 * actions follow it. */
static void check_final_rows(const struct tcx_snapshot *s)
{
	for (size_t i = 0; i < s->n_targets; i++) {
		FUZZ_CHECK(memchr(s->targets[i].dev, '\0', sizeof(s->targets[i].dev)));
		FUZZ_CHECK(s->targets[i].ok);
	}
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];

		FUZZ_CHECK(f->target < s->n_targets);
		FUZZ_CHECK(f->kind < s->n_kinds);
		FUZZ_CHECK(f->first_action + (size_t)f->n_actions <= s->n_actions);
		for (size_t a = f->first_action; a < f->first_action + (size_t)f->n_actions; a++)
			FUZZ_CHECK(s->actions[a].filter == i);
	}
	for (size_t i = 0; i < s->n_actions; i++) {
		FUZZ_CHECK(s->actions[i].filter < s->n_filters);
		FUZZ_CHECK(s->actions[i].kind < s->n_kinds);
		FUZZ_CHECK(s->actions[i].cookie_len <= TCX_COOKIE_MAX);
	}
}

static void deletions(const uint8_t *replies, size_t len, struct tcx_config *cfg)
{
	struct feed f = {.p = replies, .left = len};
	struct tcx_notify *n = tcx_notify_new("blue", notify_recv, &f);
	struct tcx_snapshot *s;
	struct tcx_buf b;

	FUZZ_CHECK(n);
	s = tcx_notify_drain(n, cfg);
	FUZZ_CHECK(s);
	check_final_rows(s);
	fuzz_render(s, TCX_FMT_JSON, NULL, &b);
	tcx_buf_free(&b);
	tcx_snapshot_unref(s);
	tcx_notify_close(n);
}

/* ---- qdisc and class messages: collectors/qdisc_parse.c ------------------------------------ */

static uint32_t rows_mask(unsigned n)
{
	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

static void check_values(const struct tcx_xstat *rows, unsigned n, const uint64_t *vals,
                         uint32_t present)
{
	FUZZ_CHECK(!(present & ~rows_mask(n)));
	for (unsigned i = 0; i < n; i++) {
		if (!(present & (1u << i)))
			continue;
		FUZZ_CHECK(isfinite(tcx_xstat_value(&rows[i], vals[i])));
		if (rows[i].flags & TCX_XSTAT_POSITIVE)
			FUZZ_CHECK(tcx_xstat_value(&rows[i], vals[i]) > 0);
	}
}

static void check_qdisc_msg(const struct tcx_qdisc_msg *m)
{
	const struct tcx_xstats_table *t = m->xt;

	FUZZ_CHECK(memchr(m->kind, '\0', sizeof(m->kind)) && m->kind[0]);
	FUZZ_CHECK(!(m->stats_present & ~rows_mask(TCX_QSTAT__MAX)));
	FUZZ_CHECK(m->n_tins <= TCX_XSTATS_TINS);
	if (!t) {
		FUZZ_CHECK(m->xs_present == 0 && m->n_tins == 0);
	} else {
		FUZZ_CHECK(t == tcx_xstats_lookup(m->kind, m->is_class));
		FUZZ_CHECK(m->n_tins == 0 || t->tins_attr);
		check_values(t->fields, t->n_fields, m->xs, m->xs_present);
	}
	for (unsigned i = 0; i < TCX_XSTATS_TINS; i++)
		if (i < m->n_tins)
			check_values(t->tin_fields, t->n_tin_fields, m->tin[i], m->tin_present[i]);
		else
			FUZZ_CHECK(m->tin_present[i] == 0);
}

static void qdisc_msgs(const uint8_t *p, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;

	while ((nlh = tcx_nlmsg_next(p, len, &off))) {
		struct tcx_qdisc_msg m;
		char err[256] = "";
		void *msg;

		if (nlh->nlmsg_type != RTM_NEWQDISC && nlh->nlmsg_type != RTM_DELQDISC &&
		    nlh->nlmsg_type != RTM_NEWTCLASS && nlh->nlmsg_type != RTM_DELTCLASS)
			continue;
		msg = malloc(nlh->nlmsg_len);
		FUZZ_CHECK(msg);
		memcpy(msg, nlh, nlh->nlmsg_len);
		if (tcx_parse_qdisc_msg(msg, &m, err, sizeof(err)) < 0)
			FUZZ_CHECK(err[0]);
		else
			check_qdisc_msg(&m);
		if (getenv("FUZZ_TRACE"))
			fprintf(stderr, "%s %08x kind %s: %s\n", m.is_class ? "class" : "qdisc",
			        m.handle, m.kind, err[0] ? err : "decoded");
		free(msg);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feed f;
	uint8_t *feed;
	struct tcx_rowlabels *labels;
	struct tcx_collector *c;
	struct tcx_snapshot *s;
	struct tcx_buf shared, late;

	if (size < 1)
		return 0;
	/* The replies start at data + 1: align them, as the kernel's are. */
	feed = malloc(size);
	FUZZ_CHECK(feed);
	memcpy(feed, data + 1, size - 1);
	f.p = feed;
	f.left = size - 1;
	c = tcx_collector_new(&feed_ops, &f);
	FUZZ_CHECK(c);
	s = tcx_collect(c, config(data[0] % N_CONFIGS));
	FUZZ_CHECK(s);
	labels = tcx_rowlabels_build(s);
	FUZZ_CHECK(labels);
	tcx_collector_free(c);
	deletions(feed, size - 1, config(data[0] % N_CONFIGS));
	qdisc_msgs(feed, size - 1);
	free(feed);
	check_snapshot(s);
	for (size_t i = 0; i < s->n_targets && getenv("FUZZ_TRACE"); i++)
		fprintf(stderr, "target %zu: %s\n", i, s->targets[i].error);

	for (int om = 0; om <= 1; om++) {
		enum tcx_format fmt = om ? TCX_FMT_OPENMETRICS : TCX_FMT_PROMETHEUS;

		fuzz_render(s, fmt, labels, &shared);
		fuzz_render(s, fmt, NULL, &late);
		FUZZ_CHECK(shared.len == late.len && memcmp(shared.p, late.p, late.len) == 0);
		if (!om && getenv("FUZZ_TRACE"))
			fprintf(stderr, "%.*s", (int)late.len, late.p);
		tcx_buf_free(&shared);
		tcx_buf_free(&late);
	}
	fuzz_render(s, TCX_FMT_JSON, NULL, &late);
	tcx_buf_free(&late);

	tcx_rowlabels_free(labels);
	tcx_snapshot_unref(s);
	return 0;
}
