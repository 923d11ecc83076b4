/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One collection pass.
 *
 * Targets from the config are expanded into dump units (a device parent or a
 * shared block) per network namespace, using one link dump and one qdisc
 * dump per namespace, and one class dump per device whose root qdisc has a
 * handle (filters can hang off its classes); a netns glob, into each namespace it matches in
 * /run/netns now. Each unit is then dumped with this strategy, which
 * loses no row whatever the classifiers are (see tc-netlink.md, section 1):
 *
 *  1. Ask for a terse dump of the whole unit. Only flower implements terse
 *     dumps; a kernel older than 5.8 ignores the flag and answers in full,
 *     which parses the same way.
 *  2. The dump ended cleanly: every tp that is flower, or that sent rows
 *     (full answers), is complete. A non-flower tp whose header came with no
 *     rows was skipped by the kernel (matchall on 5.8-6.1 increments its walk
 *     count past the failing filter): re-dump each such tp in full, selected
 *     by chain, pref and protocol.
 *  3. The dump was aborted (EMSGSIZE, or EOPNOTSUPP from newer kernels, when
 *     it reached a classifier without terse support; EINVAL from a kernel
 *     that rejects the flag): drop what it gave and dump the unit in full.
 *
 * This file holds the pass (tcx_collect()), the namespaces' sources and the
 * filter dumps; discovery of links, qdiscs and classes is in discover.c, the
 * dump units and the sweeps in units.c, u32's rules in u32.c, and the types
 * they share in pass.h.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <stdarg.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/agg.h"
#include "collectors/collect.h"
#include "collectors/pass.h"
#include "collectors/qdisc_parse.h"
#include "collectors/tc_parse.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"

/* Above this many prefs to repair, one full dump is cheaper than many. */
#define MAX_REPAIR_PREFS 64

struct terse_seen {
	uint64_t key;
	enum tcx_dump_mode mode;
};

struct tcx_collector *tcx_collector_new(const struct tcx_source_ops *ops, void *opaque)
{
	struct tcx_collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ops = ops;
	c->opaque = opaque;
	return c;
}

void tcx_collector_free(struct tcx_collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_ns; i++) {
		if (c->ns[i].src)
			c->ops->close(c->ns[i].src);
		free(c->ns[i].held);
	}
	free(c->ns);
	free(c->losses);
	free(c->terse);
	for (size_t i = 0; i < c->n_globs; i++) {
		free(c->globs[i].glob);
		tcx_netns_names_free(c->globs[i].names);
	}
	free(c->globs);
	free(c);
}

void tcx_collector_once(struct tcx_collector *c)
{
	c->once = 1;
}

static void set_error(struct tcx_snapshot *s, struct tcx_target *t, enum tcx_err_cause cause,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void set_error(struct tcx_snapshot *s, struct tcx_target *t, enum tcx_err_cause cause,
                      const char *fmt, ...)
{
	va_list ap;

	s->errors[cause]++;
	t->ok = 0;
	va_start(ap, fmt);
	vsnprintf(t->error, sizeof(t->error), fmt, ap);
	va_end(ap);
}

static int loss_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ns_loss *)a)->name, ((const struct ns_loss *)b)->name);
}

/* The entry of namespace name in losses[n] (sorted by name), or NULL. */
static struct ns_loss *loss_find(struct ns_loss *losses, size_t n, const char *name)
{
	struct ns_loss key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return n ? bsearch(&key, losses, n, sizeof(*losses), loss_cmp) : NULL;
}

/* The notifications lost by the closed sources of namespace name (c->losses
 * is kept sorted by name), added when add is set (NULL out of memory). */
static uint64_t *closed_loss(struct tcx_collector *c, const char *name, int add)
{
	struct ns_loss *l = loss_find(c->losses, c->n_losses, name);
	size_t at = 0;

	if (l || !add)
		return l ? &l->lost : NULL;
	if (tcx_grow(&c->losses, &c->cap_losses, c->n_losses + 1, sizeof(*c->losses), 4) < 0)
		return NULL;
	while (at < c->n_losses && strcmp(c->losses[at].name, name) < 0)
		at++;
	memmove(&c->losses[at + 1], &c->losses[at], (c->n_losses - at) * sizeof(*c->losses));
	c->n_losses++;
	snprintf(c->losses[at].name, sizeof(c->losses[at].name), "%s", name);
	c->losses[at].lost = 0;
	return &c->losses[at].lost;
}

/* Close the i-th kept source; what it dropped and lost is still counted,
 * its losses for its namespace's targets too. */
static void ns_close(struct tcx_collector *c, size_t i)
{
	uint64_t lost = 0, *l;

	if (c->ops->dropped)
		c->ops->dropped(c->ns[i].src, c->dropped_closed, &lost);
	c->lost_closed += lost;
	if (lost && (l = closed_loss(c, c->ns[i].name, 1)))
		*l += lost;
	else if (lost)
		c->lost_unnamed += lost;
	c->ops->close(c->ns[i].src);
	free(c->ns[i].held);
	c->ns[i] = c->ns[--c->n_ns];
}

/* Before a pass: close the sources whose namespace is gone (its name was
 * deleted, or now names another namespace). An open socket keeps its
 * namespace alive, with every device and filter in it: `ip netns del` alone
 * does not free it. */
static void ns_release_stale(struct tcx_collector *c)
{
	for (size_t i = c->n_ns; i-- > 0;) {
		c->ns[i].used = 0;
		if (c->ops->gone && c->ops->gone(c->ns[i].src))
			ns_close(c, i);
	}
}

/* After a pass: close the sources it did not use (a namespace no target
 * names any more, or that a glob no longer matches). */
static void ns_release_unused(struct tcx_collector *c)
{
	for (size_t i = c->n_ns; i-- > 0;)
		if (!c->ns[i].used)
			ns_close(c, i);
}

/* Keep the source of a namespace open through this pass, unused: its
 * target failed for want of a read of TCX_NETNS_DIR. Its notifications wait
 * in its socket for the next pass that collects it. */
void tcx_pass_ns_keep(struct tcx_collector *c, const char *name)
{
	for (size_t i = 0; i < c->n_ns; i++)
		if (strcmp(c->ns[i].name, name) == 0)
			c->ns[i].used = 1;
}

/* Did a call fail with errno e for want of fds or kernel memory? */
int tcx_pass_no_resource(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM;
}

/* The source of a namespace, opened with its deletion notifications
 * (notify: their buffer, 0 none) and its additions (adds: likewise) as
 * asked (a source opened otherwise is opened again). */
static struct ns_source *ns_source(struct tcx_collector *c, const char *name, int notify, int adds,
                                   char *err, size_t errlen)
{
	struct ns_source *n;

	for (size_t i = 0; i < c->n_ns; i++) {
		if (strcmp(c->ns[i].name, name) != 0)
			continue;
		if (c->ns[i].notify == notify && c->ns[i].adds == adds) {
			c->ns[i].used = 1;
			return &c->ns[i];
		}
		ns_close(c, i);
		break;
	}
	if (tcx_grow(&c->ns, &c->cap_ns, c->n_ns + 1, sizeof(*c->ns), 16) < 0) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	void *src = c->ops->open(c->opaque, name, notify, adds, err, errlen);

	if (!src)
		return NULL; /* not cached: the namespace may appear later */
	n = &c->ns[c->n_ns++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->src = src;
	n->used = 1;
	n->notify = notify;
	n->adds = adds;
	return n;
}

/* ---- filter dumps ------------------------------------------------------------------------ */

struct tp_seen {
	struct tcx_tp_key key;
	uint32_t rows;
};

struct fdump_ctx {
	struct tcx_snapshot *s;
	uint32_t target;
	/* tps in the order the reply named them */
	struct tp_seen *tps;
	size_t n_tps, cap_tps;
	/* restrict kept rows to one tp (repair dumps) */
	const struct tcx_tp_key *only;
	uint64_t bad;
	char err[256];
	int oom;
	unsigned msgs; /* read since the dump started */
};

static int same_tp(const struct tcx_tp_key *a, const struct tcx_tp_key *b)
{
	return a->chain == b->chain && a->pref == b->pref && a->protocol == b->protocol &&
	       tcx_kind_eq(a->kind, b->kind);
}

static int filter_msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct fdump_ctx *fc = arg;
	struct tcx_tp_key key;
	size_t mark_f = fc->s->n_filters, mark_a = fc->s->n_actions;
	enum tcx_parse_result r;
	char err[256];

	if (fc->oom)
		return MNL_CB_OK;
	/* The action times in a reply are ages as of when the kernel wrote
	 * it, just before it was read: the clock is read once per 32 messages
	 * (a 32 KiB chunk holds about 60 of a full dump), which costs little
	 * and is late by the decoding of 31 messages at most, a few
	 * microseconds against the kernel's 10 ms ticks. */
	if (!(fc->msgs++ & 31))
		tcx_snapshot_clock(fc->s);
	r = tcx_parse_filter(nlh, fc->s, fc->target, &key, err, sizeof(err));
	if (r == TCX_PARSE_ERROR) {
		/* Keep reading to the end of the dump so the socket stays in
		 * step; the unit fails as a whole. */
		if (!fc->bad++)
			snprintf(fc->err, sizeof(fc->err), "%s", err);
		return MNL_CB_OK;
	}
	if (r == TCX_PARSE_SKIP)
		return MNL_CB_OK;
	if (fc->only && !same_tp(fc->only, &key)) {
		tcx_snapshot_truncate(fc->s, mark_f, mark_a);
		return MNL_CB_OK;
	}
	if (!fc->n_tps || !same_tp(&fc->tps[fc->n_tps - 1].key, &key)) {
		if (tcx_grow(&fc->tps, &fc->cap_tps, fc->n_tps + 1, sizeof(*fc->tps), 16) < 0) {
			fc->oom = 1;
			return MNL_CB_OK;
		}
		fc->tps[fc->n_tps].key = key;
		fc->tps[fc->n_tps].rows = 0;
		fc->n_tps++;
	}
	if (r == TCX_PARSE_ROW)
		fc->tps[fc->n_tps - 1].rows++;
	return MNL_CB_OK;
}

static struct nlmsghdr *filter_req(char *buf, const struct unit *u, int terse,
                                   const struct tcx_tp_key *only)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;

	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	if (u->block) {
		tcm->tcm_ifindex = (int)TCM_IFINDEX_MAGIC_BLOCK;
		tcm->tcm_parent = u->block;
	} else {
		tcm->tcm_ifindex = (int)u->ifindex;
		tcm->tcm_parent = u->parent;
	}
	if (only) {
		tcm->tcm_info = TC_H_MAKE((uint32_t)only->pref << 16, htons(only->protocol));
		mnl_attr_put_u32(nlh, TCA_CHAIN, only->chain);
	}
	if (terse) {
		struct nla_bitfield32 bf = {TCA_DUMP_FLAGS_TERSE, TCA_DUMP_FLAGS_TERSE};

		mnl_attr_put(nlh, TCA_DUMP_FLAGS, sizeof(bf), &bf);
	}
	return nlh;
}

/* Run one filter dump into the snapshot. Returns the kernel's status. */
static int run_filter_dump(struct pass *p, const struct unit *u, struct tcx_target *t,
                           struct fdump_ctx *fc, int terse, const struct tcx_tp_key *only,
                           char *err, size_t errlen)
{
	char buf[256];
	struct nlmsghdr *nlh = filter_req(buf, u, terse, only);

	fc->only = only;
	fc->msgs = 0;
	if (terse)
		t->terse_dumps++;
	else
		t->full_dumps++;
	return p->c->ops->dump(u->ns->src, nlh, filter_msg_cb, fc, err, errlen);
}

static int dump_aborted_terse(int status)
{
	return status == -EMSGSIZE || status == -EOPNOTSUPP || status == -EINVAL;
}

/* A target's identity (its namespace, device or block, parent), hashed. */
static uint64_t target_key(const struct tcx_target *t)
{
	uint64_t h = tcx_hash_bytes(t->ifindex, t->netns, strlen(t->netns));

	return tcx_hash_mix(tcx_hash_mix(h, t->block), t->parent);
}

static int cmp_terse(const void *x, const void *y)
{
	const struct terse_seen *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

/* The mode of target t in the last pass when it was dumped terse, else
 * TCX_MODE_NONE. */
static enum tcx_dump_mode terse_before(const struct tcx_collector *c, const struct tcx_target *t)
{
	struct terse_seen k = {.key = target_key(t)}, *f;

	f = c->n_terse ? bsearch(&k, c->terse, c->n_terse, sizeof(k), cmp_terse) : NULL;
	return f ? f->mode : TCX_MODE_NONE;
}

/* Remember the targets of s dumped terse, for the next pass. */
static void keep_terse(struct tcx_collector *c, const struct tcx_snapshot *s)
{
	c->n_terse = 0;
	for (size_t i = 0; i < s->n_targets; i++) {
		const struct tcx_target *t = &s->targets[i];

		if (!t->ok || (t->mode != TCX_MODE_TERSE && t->mode != TCX_MODE_TERSE_REPAIR))
			continue;
		if (tcx_grow(&c->terse, &c->cap_terse, c->n_terse + 1, sizeof(*c->terse), 16) < 0)
			break; /* the next liveness pass dumps the rest terse first */
		c->terse[c->n_terse++] = (struct terse_seen){target_key(t), t->mode};
	}
	if (c->n_terse) /* (qsort() of NULL is undefined, even of 0 elements) */
		qsort(c->terse, c->n_terse, sizeof(*c->terse), cmp_terse);
}

/* Dump one unit into the snapshot; on failure its rows are removed again.
 * In a liveness pass, a unit that needs a full dump for its times gets it
 * at once: --once's (mode full), or one the last pass dumped terse (its
 * mode kept: no series of tc_scrape_collector_mode_info comes and goes);
 * another is dumped as always, then again in full if it came out terse. */
static void dump_unit(struct pass *p, struct unit *u, uint32_t tidx)
{
	struct tcx_snapshot *s = p->s;
	struct tcx_target *t = &s->targets[tidx];
	struct fdump_ctx fc = {.s = s, .target = tidx};
	size_t mark_f = s->n_filters, mark_a = s->n_actions;
	struct tcx_tp_key repair[MAX_REPAIR_PREFS];
	size_t n_repair = 0;
	char err[256];
	int status;

	if (s->liveness_pass) {
		enum tcx_dump_mode was = p->c->once ? TCX_MODE_FULL : terse_before(p->c, t);

		if (was != TCX_MODE_NONE) {
			t->mode = was;
			status = run_filter_dump(p, u, t, &fc, 0, NULL, err, sizeof(err));
			goto done;
		}
	}
	status = run_filter_dump(p, u, t, &fc, 1, NULL, err, sizeof(err));
	if (status == 0 && !fc.bad) {
		for (size_t i = 0; i < fc.n_tps; i++) {
			if (fc.tps[i].rows || tcx_cls_supports_terse(fc.tps[i].key.kind))
				continue;
			if (n_repair == MAX_REPAIR_PREFS) {
				status = -EMSGSIZE; /* too many: one full dump instead */
				break;
			}
			repair[n_repair++] = fc.tps[i].key;
		}
	}
	if (status == 0 && !fc.bad && s->liveness_pass && s->n_actions > mark_a) {
		/* A liveness pass: the rows again, in full, for their times.
		 * The unit's mode stays what the terse dump found. */
		t->mode = n_repair ? TCX_MODE_TERSE_REPAIR : TCX_MODE_TERSE;
		tcx_snapshot_truncate(p->s, mark_f, mark_a);
		fc.n_tps = 0;
		status = run_filter_dump(p, u, t, &fc, 0, NULL, err, sizeof(err));
	} else if (status == 0 && !fc.bad) {
		t->mode = n_repair ? TCX_MODE_TERSE_REPAIR : TCX_MODE_TERSE;
		for (size_t i = 0; i < n_repair && status == 0 && !fc.bad; i++) {
			status = run_filter_dump(p, u, t, &fc, 0, &repair[i], err, sizeof(err));
			t->repaired_prefs++;
		}
	} else if (dump_aborted_terse(status) && !fc.bad) {
		tcx_snapshot_truncate(p->s, mark_f, mark_a);
		fc.n_tps = 0;
		t->mode = TCX_MODE_FULL;
		status = run_filter_dump(p, u, t, &fc, 0, NULL, err, sizeof(err));
	}
done:
	if (fc.oom) {
		set_error(s, t, TCX_ERR_NOMEM, "out of memory");
	} else if (fc.bad) {
		s->errors[TCX_ERR_MALFORMED] += fc.bad - 1; /* set_error adds one */
		set_error(s, t, TCX_ERR_MALFORMED, "malformed netlink message: %s", fc.err);
	} else if (status < 0) {
		set_error(s, t,
		          status == -ENODEV || status == -ENOENT ? TCX_ERR_NOTFOUND
		          : status == -EBADMSG                   ? TCX_ERR_MALFORMED
		                                                 : TCX_ERR_KERNEL,
		          "filter dump failed: %s%s%s", strerror(-status), err[0] ? ": " : "", err);
	}
	free(fc.tps);
	if (!t->ok)
		tcx_snapshot_truncate(p->s, mark_f, mark_a);
}

/* ---- the pass ------------------------------------------------------------------------------ */

/* The namespace of the pass of that name, added (with no source) if new. */
struct pass_ns *tcx_pass_ns_find(struct pass *p, const char *name)
{
	struct pass_ns *n;

	for (size_t i = 0; i < p->n_ns; i++)
		if (strcmp(p->ns[i]->name, name) == 0)
			return p->ns[i];
	if (tcx_grow(&p->ns, &p->cap_ns, p->n_ns + 1, sizeof(*p->ns), 16) < 0)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	p->ns[p->n_ns++] = n;
	snprintf(n->name, sizeof(n->name), "%s", name);
	return n;
}

/* The receive buffer of a notification socket, in bytes
 * (notify_buffer_kib). */
static int notify_buffer(const struct tcx_config *cfg)
{
	return (int)((cfg->notify_buffer_kib ? cfg->notify_buffer_kib
	                                     : TCX_NOTIFY_BUFFER_KIB_DEFAULT) *
	             1024u);
}

/* The namespace of the pass of that name, with its source (NULL when it
 * cannot be opened: open_err and open_cause say why). */
struct pass_ns *tcx_pass_ns_get(struct pass *p, const char *name)
{
	struct pass_ns *n = tcx_pass_ns_find(p, name);
	struct ns_source *src;

	if (!n || n->opened)
		return n;
	n->opened = 1;
	/* The deletions with `aggregate`, the additions but for --once. */
	src = ns_source(p->c, name,
	                p->cfg->aggregate.mode == TCX_AGG_NONE ? 0 : notify_buffer(p->cfg),
	                p->c->once ? 0 : notify_buffer(p->cfg), n->open_err, sizeof(n->open_err));
	if (!src) {
		n->open_cause = tcx_pass_no_resource(errno) ? TCX_ERR_RESOURCE : TCX_ERR_NOTFOUND;
		return n;
	}
	n->src = src->src;
	tcx_pass_sweep_or_not(p, n, src);
	return n;
}

static void fill_target(struct tcx_target *t, const struct unit *u)
{
	tcx_target_init(t, u->ns->name, u->dev, u->ifindex, u->block, u->parent);
}

/* The unit of the pass that target t of a drained snapshot (of namespace
 * ns) is, or NULL. */
static const struct unit *final_unit(const struct units *us, const char *ns,
                                     const struct tcx_target *t)
{
	for (size_t k = 0; k < us->n; k++) {
		const struct unit *u = &us->u[k];

		if (!u->error[0] && strcmp(u->ns->name, ns) == 0 && u->block == t->block &&
		    u->ifindex == t->ifindex && (u->block || u->parent == t->parent))
			return u;
	}
	return NULL;
}

/* Before the dumps: the deletion notifications of every namespace the pass
 * uses, so that every action a dump shows was deleted after the finals
 * folded before it (collectors/agg.c relies on that order). Only the rows
 * of the pass's units are kept (the notifications name every device of the
 * namespace), their device named as the pass's link dump names it, as
 * their rows are. */
static void drain_finals(struct pass *p, const struct units *us)
{
	struct tcx_collector *c = p->c;

	if (p->cfg->aggregate.mode == TCX_AGG_NONE || !c->ops->drain)
		return;
	/* Those opened by the pass: a source kept but not collected
	 * (tcx_pass_ns_keep()) keeps its notifications for the next pass. */
	for (size_t i = 0; i < p->n_ns; i++) {
		const struct pass_ns *ns = p->ns[i];
		struct tcx_snapshot *f;

		if (!ns->src)
			continue;
		if (!(f = c->ops->drain(ns->src)))
			goto oom;
		for (unsigned e = 0; e < TCX_ERR__MAX; e++)
			p->s->errors[e] += f->errors[e];
		for (size_t t = 0; t < f->n_targets; t++) {
			const struct unit *u = final_unit(us, ns->name, &f->targets[t]);

			if (u) /* as fill_target() names it */
				fill_target(&f->targets[t], u);
			else
				f->targets[t].ok = 0; /* not collected: left out */
		}
		for (size_t a = 0; a < f->n_actions; a++)
			if (f->targets[f->filters[f->actions[a].filter].target].ok &&
			    tcx_finals_add(&p->s->finals, f, a) < 0) {
				tcx_snapshot_unref(f);
				goto oom;
			}
		/* The filters' own hit counters come whole in the notification
		 * too (u32, basic, matchall). */
		for (size_t fi = 0; fi < f->n_filters; fi++)
			if (f->filters[fi].hv_present && f->targets[f->filters[fi].target].ok &&
			    tcx_hit_finals_add(&p->s->hit_finals, f, fi) < 0) {
				tcx_snapshot_unref(f);
				goto oom;
			}
		tcx_snapshot_unref(f);
	}
	return;
oom:
	p->s->errors[TCX_ERR_NOMEM]++;
	p->s->incomplete = 1;
}

static void count_rows(struct tcx_snapshot *s, struct tcx_target *t, size_t mark_f, size_t mark_a)
{
	t->first_filter = (uint32_t)mark_f;
	t->n_filters = (uint32_t)(s->n_filters - mark_f);
	t->n_actions = (uint32_t)(s->n_actions - mark_a);
}

/* The notifications lost by the pass's namespace ns since the collector was
 * made, its open source counted when first asked (once a pass: each asks
 * the kernel). */
static uint64_t ns_lost(struct tcx_collector *c, struct pass_ns *ns)
{
	uint64_t lost = c->lost_unnamed, drops[TCX_NLDROP__MAX] = {0};
	const uint64_t *closed;

	if (ns->lost_read)
		return ns->lost;
	closed = closed_loss(c, ns->name, 0);
	if (ns->src && c->ops->dropped)
		c->ops->dropped(ns->src, drops, &lost);
	ns->lost_read = 1;
	return ns->lost = lost + (closed ? *closed : 0);
}

/* The notifications lost since the collector was made: in all, and by
 * each target's namespace (tcx_target.notifications_lost: the sources of
 * that name, open or closed). The open sources that lost some are sorted
 * by name, and each target looks its namespace up there and in c->losses;
 * out of memory, each target walks the open sources. */
static void count_lost(struct tcx_collector *c, struct tcx_snapshot *s)
{
	struct ns_loss *open = NULL;
	size_t n_open = 0;

	s->notifications_lost = c->lost_closed;
	for (size_t i = 0; i < c->n_ns && c->ops->dropped; i++) {
		c->ns[i].lost = 0;
		c->ops->dropped(c->ns[i].src, s->netlink_dropped, &c->ns[i].lost);
		s->notifications_lost += c->ns[i].lost;
		n_open += c->ns[i].lost != 0;
	}
	if (!s->notifications_lost)
		return;
	if (n_open && (open = malloc(n_open * sizeof(*open)))) {
		n_open = 0;
		for (size_t i = 0; i < c->n_ns; i++)
			if (c->ns[i].lost) {
				memcpy(open[n_open].name, c->ns[i].name, sizeof(open[0].name));
				open[n_open++].lost = c->ns[i].lost;
			}
		qsort(open, n_open, sizeof(*open), loss_cmp);
	}
	for (size_t t = 0; t < s->n_targets; t++) {
		struct tcx_target *tg = &s->targets[t];
		const uint64_t *closed = closed_loss(c, tg->netns, 0);
		const struct ns_loss *l;

		tg->notifications_lost = c->lost_unnamed + (closed ? *closed : 0);
		if (open) {
			if ((l = loss_find(open, n_open, tg->netns)))
				tg->notifications_lost += l->lost;
			continue;
		}
		for (size_t i = 0; n_open && i < c->n_ns; i++)
			if (strcmp(c->ns[i].name, tg->netns) == 0)
				tg->notifications_lost += c->ns[i].lost;
	}
	free(open);
}

/* Is the pass starting at now (monotonic seconds) a liveness pass? One is
 * due liveness_interval after the last, give or take half a collection
 * interval (collections are not to the millisecond), and at the first. */
static int liveness_due(struct tcx_collector *c, const struct tcx_config *cfg, double now)
{
	if (tcx_switch_mode(TCX_SW_LIVENESS, cfg->families.mode[TCX_SW_LIVENESS], 0) == TCX_FAM_OFF)
		return 0;
	if (c->once)
		return 1;
	if (cfg->liveness_interval_s <= 0 ||
	    (c->liveness_at &&
	     now - c->liveness_at < cfg->liveness_interval_s - cfg->interval_s / 2))
		return 0;
	c->liveness_at = now;
	return 1;
}

struct tcx_snapshot *tcx_collect(struct tcx_collector *c, struct tcx_config *cfg)
{
	struct tcx_snapshot *s = tcx_snapshot_new(cfg);
	struct pass p = {.c = c, .cfg = cfg, .s = s};
	struct units us = {0};
	double t0 = tcx_clock_s(CLOCK_MONOTONIC);

	if (!s)
		return NULL;
	tcx_snapshot_reuse(s);
	s->liveness_pass = liveness_due(c, cfg, t0);
	p.sweep_all = tcx_pass_sweep_due(c, cfg, t0);
	ns_release_stale(c);
	for (size_t i = 0; i < cfg->n_targets; i++)
		if (tcx_pass_expand_config_target(&p, &us, &cfg->targets[i]) < 0)
			goto oom;
	drain_finals(&p, &us);
	for (size_t i = 0; i < us.n; i++) {
		struct unit *u = &us.u[i];
		size_t mark_f = s->n_filters, mark_a = s->n_actions;
		struct tcx_target *t;
		double t1;

		if (!u->error[0] && !tcx_pass_may_hold(u))
			continue;
		if (!(t = tcx_snapshot_add_target(s)))
			goto oom;
		t1 = tcx_clock_s(CLOCK_MONOTONIC);
		fill_target(t, u);
		if (u->error[0]) {
			set_error(s, t, u->cause, "%s", u->error);
		} else {
			dump_unit(&p, u, (uint32_t)(s->n_targets - 1));
			if (t->ok && u->ifindex && s->n_filters == mark_f &&
			    tcx_pass_link_gone(&p, u))
				set_error(s, t, TCX_ERR_NOTFOUND,
				          "device '%s' vanished during collection", u->dev);
		}
		count_rows(s, t, mark_f, mark_a);
		t->duration_s = tcx_clock_s(CLOCK_MONOTONIC) - t1;
		/* Parents found by discovery that hold no filter are noise,
		 * unless they held some at the last pass and their namespace
		 * lost notifications: their aggregates stay, and so does the
		 * mark that they may lack finals
		 * (tc_scrape_collector_finals_lost); they are asked again
		 * (sweeps) as long as they stay. */
		if (u->implicit && t->ok && t->n_filters == 0 &&
		    (cfg->aggregate.mode == TCX_AGG_NONE || !tcx_pass_was_held(u) ||
		     !ns_lost(c, u->ns)))
			s->n_targets--;
		else if (!u->error[0])
			tcx_pass_sweep_note(u->ns, u);
	}
	goto out;
oom:
	s->errors[TCX_ERR_NOMEM]++;
	s->incomplete = 1;
out:
	tcx_pass_u32_attribute(&p);
	tcx_pass_collect_rows(&p);
	tcx_pass_sweeps_done(&p, &us);
	for (size_t i = 0; i < p.n_ns; i++) {
		for (size_t k = 0; k < p.ns[i]->n_links; k++)
			free(p.ns[i]->links[k].flows);
		free(p.ns[i]->links);
		free(p.ns[i]->qdiscs);
		free(p.ns[i]->classes);
		free(p.ns[i]);
	}
	free(p.ns);
	free(p.ids);
	free(p.plans);
	free(us.u);
	free(us.slot);
	ns_release_unused(c);
	tcx_pass_globs_release_unused(c);
	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++)
		s->netlink_dropped[i] += c->dropped_closed[i];
	count_lost(c, s);
	memcpy(s->sweeps, c->sweeps, sizeof(s->sweeps));
	keep_terse(c, s);
	tcx_snapshot_merge(s);
	tcx_snapshot_classify(s);
	tcx_snapshot_seal(s);
	s->duration_s = tcx_clock_s(CLOCK_MONOTONIC) - t0;
	return s;
}
