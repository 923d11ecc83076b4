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
#include "collectors/qdisc_parse.h"
#include "collectors/tc_parse.h"
#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/hash.h"

#ifndef TCM_IFINDEX_MAGIC_BLOCK
#define TCM_IFINDEX_MAGIC_BLOCK 0xFFFFFFFFU
#endif

/* Above this many prefs to repair, one full dump is cheaper than many. */
#define MAX_REPAIR_PREFS 64

/* A source kept open from one pass to the next, while its namespace is
 * collected and still there (ns_release_stale()). */
struct ns_source {
	char name[64];
	void *src;
	int used;      /* by the current pass */
	int notify;    /* opened with its deletion notifications: their buffer */
	uint64_t lost; /* notifications it lost, as of the end of the last pass */
};

/* Notifications lost by the sources of a namespace closed since the
 * collector was made (those of the open ones are in ns_source.lost). */
struct ns_loss {
	char name[64];
	uint64_t lost;
};

/* The namespaces a netns glob matched at its last read of TCX_NETNS_DIR:
 * when the directory cannot be read, they are its targets still (failed). */
struct glob_seen {
	char *glob;
	char **names;
	int used; /* by the current pass */
};

struct tcx_collector {
	const struct tcx_source_ops *ops;
	void *opaque;
	struct ns_source *ns;
	size_t n_ns, cap_ns;
	struct glob_seen *globs;
	size_t n_globs, cap_globs;
	uint64_t dropped_closed[TCX_NLDROP__MAX]; /* by the sources closed since */
	uint64_t lost_closed;                     /* notifications lost by them */
	/* ... by namespace (the names that lost some), and those of no known
	 * name (out of memory when they were counted: every target's). */
	struct ns_loss *losses;
	size_t n_losses, cap_losses;
	uint64_t lost_unnamed;
	/* Liveness passes (tcx_snapshot.liveness_pass): every pass, or the
	 * monotonic time of the last one (0: none yet). */
	int liveness_every_pass;
	double liveness_at;
	/* The targets the last pass dumped terse, by target_key(), sorted: a
	 * liveness pass dumps them in full alone, and keeps their mode. */
	struct terse_seen *terse;
	size_t n_terse, cap_terse;
};

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
	for (size_t i = 0; i < c->n_ns; i++)
		if (c->ns[i].src)
			c->ops->close(c->ns[i].src);
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

/* ---- per-namespace state of one pass ---------------------------------------------- */

struct pass_ns;

struct link {
	const struct pass_ns *ns;
	uint32_t ifindex;
	char name[IFNAMSIZ];
	int classes_listed; /* 1: its classes are in pass_ns.classes; -1: failed */
	int want_rows;      /* its qdisc and class rows go in the snapshot */
	int gone;           /* 0: not asked yet; 1: there; 2: gone (link_gone()) */
	uint32_t id;        /* its rows' qdev until keep_rows() (pass.ids); 0: none yet */
	uint32_t qdev;      /* its qdev, once keep_rows() made one; UINT32_MAX: none */
	uint32_t *flows;    /* the majors of its flow qdiscs (flow_kind()), sorted */
	size_t n_flows, cap_flows;
	char class_err[256];
};

/* What discovery keeps of a qdisc or a class (handle: the class id). */
struct qinfo {
	uint32_t ifindex, handle, parent;
	char kind[TCX_KIND_MAX];
	uint32_t ingress_block, egress_block;
};

struct pass_ns {
	char name[64]; /* "" for our own namespace */
	void *src;
	int opened; /* src was asked for (pass_ns_get()) */
	char open_err[256];
	enum tcx_err_cause open_cause;
	struct link *links;
	size_t n_links, cap_links;
	struct qinfo *qdiscs;
	size_t n_qdiscs, cap_qdiscs;
	struct qinfo *classes; /* of the devices listed so far (link.classes_listed) */
	size_t n_classes, cap_classes;
	struct link *last; /* of the last qdisc or class message (they come by device) */
	int listed;        /* links and qdiscs were dumped */
	char list_err[256];
};

struct pass {
	struct tcx_collector *c;
	const struct tcx_config *cfg;
	struct tcx_snapshot *s;
	struct pass_ns **ns; /* stable addresses: units point at them */
	size_t n_ns, cap_ns;
	/* The links whose qdiscs or classes were listed, by link.id (from 1):
	 * each row is written straight into the snapshot as it is read, its
	 * qdev the link's id, until keep_rows() knows which devices the
	 * targets name. ns->links does not move once listed. */
	struct link **ids;
	size_t n_ids, cap_ids;
};

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

/* The notifications lost by the closed sources of namespace name. */
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
static void ns_keep(struct tcx_collector *c, const char *name)
{
	for (size_t i = 0; i < c->n_ns; i++)
		if (strcmp(c->ns[i].name, name) == 0)
			c->ns[i].used = 1;
}

/* Did a call fail with errno e for want of fds or kernel memory? */
static int no_resource(int e)
{
	return e == EMFILE || e == ENFILE || e == ENOMEM;
}

/* The source of a namespace, opened with its deletion notifications when
 * notify is set (a source opened otherwise is opened again). */
static void *ns_source(struct tcx_collector *c, const char *name, int notify, char *err,
                       size_t errlen)
{
	struct ns_source *n;

	for (size_t i = 0; i < c->n_ns; i++) {
		if (strcmp(c->ns[i].name, name) != 0)
			continue;
		if (c->ns[i].notify == notify) {
			c->ns[i].used = 1;
			return c->ns[i].src;
		}
		ns_close(c, i);
		break;
	}
	if (tcx_grow(&c->ns, &c->cap_ns, c->n_ns + 1, sizeof(*c->ns), 16) < 0) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	void *src = c->ops->open(c->opaque, name, notify, err, errlen);

	if (!src)
		return NULL; /* not cached: the namespace may appear later */
	n = &c->ns[c->n_ns++];
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->src = src;
	n->used = 1;
	n->notify = notify;
	n->lost = 0;
	return src;
}

/* ---- link and qdisc listing --------------------------------------------------------- */

struct list_ctx {
	struct pass *p;
	struct pass_ns *ns;
	int bad;
	char err[256];
};

static int link_msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct list_ctx *lc = arg;
	struct pass_ns *ns = lc->ns;
	struct link l = {.ns = ns};

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	if (tcx_parse_link(nlh, &l.ifindex, l.name, lc->err, sizeof(lc->err)) < 0) {
		lc->bad++;
		return MNL_CB_OK;
	}
	if (tcx_grow(&ns->links, &ns->cap_links, ns->n_links + 1, sizeof(*ns->links), 16) < 0)
		return MNL_CB_ERROR;
	ns->links[ns->n_links++] = l;
	return MNL_CB_OK;
}

/* The link of device ifindex in ns, or NULL; quick for a run of messages
 * of one device. */
static struct link *link_of(struct pass_ns *ns, uint32_t ifindex)
{
	struct link *l = ns->last;

	if (l && l->ifindex == ifindex)
		return l;
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			return ns->last = &ns->links[i];
	return NULL;
}

/* The id of the link of device ifindex in ns (its rows' qdev until
 * keep_rows()), or 0 when the link dump did not list it (a device made
 * since: its rows are left out). Returns -1 when out of memory. */
static int64_t link_id(struct pass *p, struct pass_ns *ns, uint32_t ifindex)
{
	struct link *l = link_of(ns, ifindex);

	if (!l)
		return 0;
	if (!l->id) {
		if (tcx_grow(&p->ids, &p->cap_ids, p->n_ids + 2, sizeof(*p->ids), 16) < 0)
			return -1;
		if (!p->n_ids)
			p->ids[p->n_ids++] = NULL; /* ids start at 1 */
		l->id = (uint32_t)p->n_ids;
		p->ids[p->n_ids++] = l;
	}
	return l->id;
}

/* Append m's row to the snapshot's qdiscs or classes, its qdev the id of
 * its link. Returns 0, or -1 when out of memory. */
static int add_row(struct pass *p, struct pass_ns *ns, const struct tcx_qdisc_msg *m)
{
	struct tcx_snapshot *s = p->s;
	const struct tcx_xstats_table *xt = m->xt;
	size_t nx = xt ? xt->n_fields + (size_t)m->n_tins * (1 + xt->n_tin_fields) : 0;
	size_t np = m->pl_present ? m->pt->n : 0;
	int kind = tcx_snapshot_kind(s, m->kind);
	struct tcx_qrow **rows = m->is_class ? &s->classes : &s->qdiscs;
	size_t *n = m->is_class ? &s->n_classes : &s->n_qdiscs;
	size_t *cap = m->is_class ? &s->cap_classes : &s->cap_qdiscs;
	int64_t id = link_id(p, ns, m->ifindex);
	struct tcx_qrow *r;
	uint64_t *x;

	if (id < 0 || kind < 0 || tcx_grow(rows, cap, *n + 1, sizeof(**rows), 64) < 0 ||
	    tcx_grow(&s->xvals, &s->cap_xvals, s->n_xvals + nx + np, sizeof(*s->xvals), 256) < 0)
		return -1;
	s->errors[TCX_ERR_MALFORMED] += m->pl_bad;
	r = &(*rows)[(*n)++];
	*r = (struct tcx_qrow){.qdev = (uint32_t)id,
	                       .handle = m->handle,
	                       .parent = m->parent,
	                       .labels = TCX_LABELSET_NONE,
	                       .kind = (uint8_t)kind,
	                       .n_tins = m->n_tins,
	                       .stats_present = m->stats_present,
	                       .xs_present = m->xs_present,
	                       .xs = (uint32_t)s->n_xvals,
	                       .xt = xt,
	                       .pt = np ? m->pt : NULL,
	                       .pl_present = m->pl_present};
	for (unsigned i = 0; i < TCX_QSTAT__MAX; i++)
		if (m->stats_present & 1u << i)
			r->c[i] = m->stats[i];
	if (np) { /* the plans first: xs ends the row's values */
		r->pl = (uint32_t)s->n_xvals;
		memcpy(s->xvals + s->n_xvals, m->pl, np * sizeof(*s->xvals));
		s->n_xvals += np;
		r->xs = (uint32_t)s->n_xvals;
	}
	if (!nx)
		return 0;
	x = s->xvals + s->n_xvals;
	s->n_xvals += nx;
	memcpy(x, m->xs, xt->n_fields * sizeof(*x));
	x += xt->n_fields;
	for (unsigned t = 0; t < m->n_tins; t++) {
		*x++ = m->tin_present[t];
		memcpy(x, m->tin[t], xt->n_tin_fields * sizeof(*x));
		x += xt->n_tin_fields;
	}
	return 0;
}

/* A qdisc or a class: kept for discovery, its row added. A message that
 * cannot be read drops that row alone, counted as malformed. */
static int tcobj_msg_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct list_ctx *lc = arg;
	struct pass_ns *ns = lc->ns;
	struct tcx_qdisc_msg m;
	struct qinfo **arr;
	size_t *n, *cap;
	char err[256];
	int bad;

	if (nlh->nlmsg_type != RTM_NEWQDISC && nlh->nlmsg_type != RTM_NEWTCLASS)
		return MNL_CB_OK;
	bad = tcx_parse_qdisc_msg(nlh, &m, err, sizeof(err)) < 0;
	/* Statistics that cannot be read lose the row, not the qdisc or
	 * class: its filters, and a root's classes, are still found. */
	if (bad) {
		lc->p->s->errors[TCX_ERR_MALFORMED]++;
		if (!m.identity)
			return MNL_CB_OK;
	}
	arr = m.is_class ? &ns->classes : &ns->qdiscs;
	n = m.is_class ? &ns->n_classes : &ns->n_qdiscs;
	cap = m.is_class ? &ns->cap_classes : &ns->cap_qdiscs;
	if (tcx_grow(arr, cap, *n + 1, sizeof(**arr), 16) < 0 ||
	    (!bad && add_row(lc->p, ns, &m) < 0))
		return MNL_CB_ERROR;
	(*arr)[(*n)++] =
	        (struct qinfo){m.ifindex, m.handle, m.parent, "", m.ingress_block, m.egress_block};
	memcpy((*arr)[*n - 1].kind, m.kind, sizeof(m.kind)); /* both TCX_KIND_MAX, terminated */
	return MNL_CB_OK;
}

/* Dump type (of device ifindex, 0 for every one) with cb; on failure, err
 * says why and the error is counted in errors (by cause). */
static int list_dump(struct pass *p, struct pass_ns *ns, uint16_t type, uint32_t ifindex,
                     mnl_cb_t cb, const char *what, char *err, size_t errlen,
                     uint64_t errors[TCX_ERR__MAX])
{
	char buf[64];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct list_ctx lc = {.p = p, .ns = ns};
	char kerr[256];
	int ret;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	if (type == RTM_GETLINK) {
		mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
	} else {
		struct tcmsg *tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));

		tcm->tcm_ifindex = (int)ifindex;
	}
	ret = p->c->ops->dump(ns->src, nlh, cb, &lc, kerr, sizeof(kerr));
	if (ret < 0) {
		snprintf(err, errlen, "%s dump failed: %s%s%s", what, strerror(-ret),
		         kerr[0] ? ": " : "", kerr);
		errors[TCX_ERR_KERNEL]++;
		return -1;
	}
	if (lc.bad) {
		errors[TCX_ERR_MALFORMED] += (uint64_t)lc.bad;
		snprintf(err, errlen, "malformed %s message: %s", what, lc.err);
		return -1;
	}
	return 0;
}

static int ns_list(struct pass *p, struct pass_ns *ns)
{
	if (ns->listed)
		return ns->list_err[0] ? -1 : 0;
	ns->listed = 1;
	if (list_dump(p, ns, RTM_GETLINK, 0, link_msg_cb, "link", ns->list_err,
	              sizeof(ns->list_err), p->s->errors) < 0)
		return -1;
	if (list_dump(p, ns, RTM_GETQDISC, 0, tcobj_msg_cb, "qdisc", ns->list_err,
	              sizeof(ns->list_err), p->s->errors) < 0)
		return -1;
	return 0;
}

/* The qdiscs and classes of device ifindex go in the snapshot. */
static void want_rows(struct pass_ns *ns, uint32_t ifindex)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			ns->links[i].want_rows = 1;
}

static const struct link *link_by_name(const struct pass_ns *ns, const char *name)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (strcmp(ns->links[i].name, name) == 0)
			return &ns->links[i];
	return NULL;
}

static const struct link *link_by_index(const struct pass_ns *ns, uint32_t ifindex)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			return &ns->links[i];
	return NULL;
}

static const struct qinfo *qdisc_find(const struct pass_ns *ns, uint32_t ifindex, const char *kind,
                                      uint32_t handle, int root)
{
	for (size_t i = 0; i < ns->n_qdiscs; i++) {
		const struct qinfo *q = &ns->qdiscs[i];

		if (q->ifindex != ifindex)
			continue;
		if (kind && strcmp(q->kind, kind) == 0)
			return q;
		if (!kind && root && q->parent == TC_H_ROOT)
			return q;
		if (!kind && !root && q->handle == handle)
			return q;
	}
	return NULL;
}

static int block_exists(const struct pass_ns *ns, uint32_t block)
{
	for (size_t i = 0; i < ns->n_qdiscs; i++)
		if (ns->qdiscs[i].ingress_block == block || ns->qdiscs[i].egress_block == block)
			return 1;
	return 0;
}

/* ---- dump units ------------------------------------------------------------------------- */

struct unit {
	struct pass_ns *ns;
	uint32_t ifindex; /* 0 = block */
	uint32_t block;
	uint32_t parent;
	char dev[IFNAMSIZ];
	int implicit; /* found by discovery: dropped again when it has no filters */
	char error[256];
	enum tcx_err_cause cause;
};

/* The units of a pass, in the order they were found, each once: a hash
 * of their positions + 1 (0: empty), by what they dump. A device with 10k
 * fq_codel leaves has 10k units. */
struct units {
	struct unit *u;
	size_t n, cap;
	uint32_t *slot;
	size_t n_slots; /* a power of two, at least twice n */
};

static uint64_t unit_hash(const struct unit *u)
{
	uint64_t h = tcx_hash_mix((uint64_t)(uintptr_t)u->ns, u->ifindex);

	return tcx_hash_mix(tcx_hash_mix(h, u->block), u->parent);
}

/* An error is a unit of its own, but for the same error again (two targets
 * that name the same missing device): it reports what failed, once. */
static int same_unit(const struct unit *a, const struct unit *b)
{
	return a->ns == b->ns && a->ifindex == b->ifindex && a->block == b->block &&
	       a->parent == b->parent && !a->error[0] == !b->error[0] &&
	       (!a->error[0] || strcmp(a->dev, b->dev) == 0);
}

static int units_rehash(struct units *us, size_t n_slots)
{
	uint32_t *slot = calloc(n_slots, sizeof(*slot));

	if (!slot)
		return -1;
	free(us->slot);
	us->slot = slot;
	us->n_slots = n_slots;
	for (size_t i = 0; i < us->n; i++) {
		size_t k = unit_hash(&us->u[i]) & (n_slots - 1);

		while (slot[k])
			k = (k + 1) & (n_slots - 1);
		slot[k] = (uint32_t)i + 1;
	}
	return 0;
}

/* Add u, or fold it into the same unit found before. */
static int unit_add(struct units *us, const struct unit *u)
{
	size_t k;

	if (2 * (us->n + 1) > us->n_slots &&
	    units_rehash(us, us->n_slots ? 2 * us->n_slots : 64) < 0)
		return -1;
	for (k = unit_hash(u) & (us->n_slots - 1); us->slot[k]; k = (k + 1) & (us->n_slots - 1)) {
		struct unit *o = &us->u[us->slot[k] - 1];

		if (same_unit(o, u)) {
			o->implicit &= u->implicit;
			return 0;
		}
	}
	if (tcx_grow(&us->u, &us->cap, us->n + 1, sizeof(*us->u), 16) < 0)
		return -1;
	us->slot[k] = (uint32_t)us->n + 1;
	us->u[us->n++] = *u;
	return 0;
}

static int unit_error(struct units *us, struct pass_ns *ns, const char *dev, uint32_t block,
                      uint32_t parent, enum tcx_err_cause cause, const char *msg)
{
	struct unit u = {.ns = ns, .block = block, .parent = parent, .cause = cause};

	snprintf(u.dev, sizeof(u.dev), "%s", dev ? dev : "");
	snprintf(u.error, sizeof(u.error), "%s", msg);
	return unit_add(us, &u);
}

/* The name of device ifindex, or ifN when the link dump did not list it. */
static void dev_name(const struct pass_ns *ns, uint32_t ifindex, char name[IFNAMSIZ])
{
	const struct link *l = link_by_index(ns, ifindex);

	if (l)
		snprintf(name, IFNAMSIZ, "%s", l->name);
	else
		snprintf(name, IFNAMSIZ, "if%u", ifindex);
}

/* A qdisc kind whose class operations have no tcf_block, or that has none:
 * the kernel answers a filter dump of it with nothing (tc_dump_tfilter()),
 * and no filter can be added to it (__tcf_qdisc_find(): EINVAL or
 * EOPNOTSUPP). Read in net/sched/sch_*.c of Linux 6.18. An unknown kind is
 * dumped. */
static int filterless_kind(const char *kind)
{
	static const char *const kinds[] = {"bfifo",
	                                    "blackhole",
	                                    "cake_mq",
	                                    "cbs",
	                                    "choke",
	                                    "codel",
	                                    "etf",
	                                    "fq",
	                                    "fq_pie",
	                                    "gred",
	                                    "hhf",
	                                    "mq",
	                                    "mqprio",
	                                    "netem",
	                                    "noop",
	                                    "noqueue",
	                                    "pfifo",
	                                    "pfifo_fast",
	                                    "pfifo_head_drop",
	                                    "pie",
	                                    "plug",
	                                    "red",
	                                    "skbprio",
	                                    "taprio",
	                                    "tbf"};

	/* Once per qdisc: 10k of them under HTB. */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i][0] == kind[0] && strcmp(kind, kinds[i]) == 0)
			return 1;
	return 0;
}

/* The dump units for one qdisc. Those found by `all` are implicit: left out
 * of the snapshot when they hold no filter. Those of a named device stay, so
 * that what the operator named always reports its state. */
static int units_from_qdisc(struct units *us, struct pass_ns *ns, const struct qinfo *q,
                            int implicit)
{
	struct unit u = {.ns = ns, .ifindex = q->ifindex, .implicit = implicit};
	int clsact = strcmp(q->kind, "clsact") == 0;

	dev_name(ns, q->ifindex, u.dev);
	if (clsact || strcmp(q->kind, "ingress") == 0) {
		struct unit b = {.ns = ns, .ifindex = 0, .implicit = implicit};

		if (q->ingress_block) {
			b.block = q->ingress_block;
			if (unit_add(us, &b) < 0)
				return -1;
		} else {
			u.parent = TCX_PARENT_INGRESS;
			if (unit_add(us, &u) < 0)
				return -1;
		}
		if (!clsact)
			return 0;
		if (q->egress_block) {
			b.block = q->egress_block;
			return unit_add(us, &b);
		}
		u.parent = TCX_PARENT_EGRESS;
		return unit_add(us, &u);
	}
	/* A qdisc that takes no filter costs a dump (and the kernel a walk of
	 * the device's qdiscs) for nothing: 10k pfifo leaves under HTB. The
	 * root of a named device stays, to report its state. */
	if (filterless_kind(q->kind) && (implicit || q->parent != TC_H_ROOT))
		return 0;
	if (q->parent == TC_H_ROOT)
		u.parent = q->handle; /* 0 for a default root qdisc: "root" */
	else if (q->handle)
		u.parent = q->handle;
	else
		return 0; /* a handle-less child (mq's pfifo_fast): not addressable */
	return unit_add(us, &u);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* List the classes of device l once a pass, into ns->classes and its rows
 * into the snapshot. Returns 0, or -1 with the reason in l->class_err
 * (counted once), its rows removed again. */
static int list_classes(struct pass *p, struct pass_ns *ns, struct link *l)
{
	size_t n = ns->n_classes, nr = p->s->n_classes, nx = p->s->n_xvals;

	if (l->classes_listed)
		return l->classes_listed < 0 ? -1 : 0;
	if (list_dump(p, ns, RTM_GETTCLASS, l->ifindex, tcobj_msg_cb, "class", l->class_err,
	              sizeof(l->class_err), p->s->errors) < 0) {
		ns->n_classes = n;
		p->s->n_classes = nr;
		p->s->n_xvals = nx;
		l->classes_listed = -1;
		return -1;
	}
	l->classes_listed = 1;
	return 0;
}

/* The dump units of the inner classes of device l: a filter attached to a
 * class (`tc filter add dev X parent 1:1`) is listed only by a dump with
 * that class as parent. Only HTB and HFSC take filters on classes, and both
 * consult those of a class with children only (classification ends at a
 * leaf), so a leaf's filters can count nothing, and a dump per leaf would
 * cost a netlink round trip for each of thousands of them. One class dump
 * lists the classes of every qdisc of the device. The units are implicit
 * (left out when they hold no filter), as the configuration names no class. */
static int units_from_classes(struct pass *p, struct units *us, struct pass_ns *ns, struct link *l)
{
	uint32_t *parents;
	size_t n = 0;
	int ret = 0;

	if (list_classes(p, ns, l) < 0)
		return 0; /* its qdev says why: collect_rows() */
	if (!ns->n_classes)
		return 0;
	if (!(parents = malloc(ns->n_classes * sizeof(*parents))))
		return -1;
	for (size_t i = 0; i < ns->n_classes; i++)
		if (ns->classes[i].ifindex == l->ifindex)
			parents[n++] = ns->classes[i].parent;
	qsort(parents, n, sizeof(*parents), cmp_u32);
	for (size_t i = 0; i < ns->n_classes && ret == 0; i++) {
		const struct qinfo *c = &ns->classes[i];
		struct unit u = {
		        .ns = ns, .ifindex = l->ifindex, .parent = c->handle, .implicit = 1};

		if (c->ifindex != l->ifindex || !TC_H_MIN(c->handle) ||
		    !bsearch(&c->handle, parents, n, sizeof(*parents), cmp_u32))
			continue;
		snprintf(u.dev, sizeof(u.dev), "%s", l->name);
		ret = unit_add(us, &u);
	}
	free(parents);
	return ret;
}

/* Only a qdisc with a handle has classes: the class units of each device
 * whose root qdisc has one (a classful qdisc can only sit under another). */
static int units_from_device_classes(struct pass *p, struct units *us, struct pass_ns *ns,
                                     uint32_t ifindex)
{
	const struct qinfo *root = qdisc_find(ns, ifindex, NULL, 0, 1);

	if (!root || !root->handle)
		return 0;
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			return units_from_classes(p, us, ns, &ns->links[i]);
	return 0;
}

/* The parent of a target's unit. ffff:fff1 and ffff:ffff, which print as
 * ingress and root (tcx_format_parent()), select the ingress qdisc's filter
 * list (the major ffff:): its unit is the ingress, so that no two units
 * print alike. */
static uint32_t config_parent(uint32_t parent)
{
	return parent == TC_H_INGRESS || parent == TC_H_ROOT ? TCX_PARENT_INGRESS : parent;
}

static int expand_target(struct pass *p, struct units *us, const struct tcx_target_cfg *t,
                         struct pass_ns *ns)
{
	uint32_t parent = config_parent(t->parent);
	char msg[300];

	if (!ns->src)
		return unit_error(us, ns, t->dev, t->has_block ? t->block : 0, parent,
		                  ns->open_cause, ns->open_err);
	if (ns_list(p, ns) < 0)
		return unit_error(us, ns, t->dev, t->has_block ? t->block : 0, parent,
		                  TCX_ERR_KERNEL, ns->list_err);
	if (t->all) {
		/* The devices `devices:` lets in; a shared block, through any
		 * device bound to it that it lets in. */
		for (size_t i = 0; i < ns->n_qdiscs; i++) {
			char dev[IFNAMSIZ];

			dev_name(ns, ns->qdiscs[i].ifindex, dev);
			if (!tcx_config_device_wanted(p->cfg, dev))
				continue;
			want_rows(ns, ns->qdiscs[i].ifindex);
			if (units_from_qdisc(us, ns, &ns->qdiscs[i], 1) < 0)
				return -1;
			if (ns->qdiscs[i].parent == TC_H_ROOT &&
			    units_from_device_classes(p, us, ns, ns->qdiscs[i].ifindex) < 0)
				return -1;
		}
		return 0;
	}
	if (t->has_block) {
		struct unit u = {.ns = ns, .block = t->block};

		if (!block_exists(ns, t->block)) {
			snprintf(msg, sizeof(msg), "shared block %u not found", t->block);
			return unit_error(us, ns, NULL, t->block, 0, TCX_ERR_NOTFOUND, msg);
		}
		return unit_add(us, &u);
	}

	const struct link *l = link_by_name(ns, t->dev);
	struct unit u = {.ns = ns};

	if (!l) {
		snprintf(msg, sizeof(msg), "device '%s' not found", t->dev);
		return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
	}
	u.ifindex = l->ifindex;
	snprintf(u.dev, sizeof(u.dev), "%s", l->name);
	want_rows(ns, l->ifindex);
	if (!t->has_parent) {
		/* Every parent of the device that has filters. */
		for (size_t i = 0; i < ns->n_qdiscs; i++)
			if (ns->qdiscs[i].ifindex == l->ifindex &&
			    units_from_qdisc(us, ns, &ns->qdiscs[i], 0) < 0)
				return -1;
		return units_from_device_classes(p, us, ns, l->ifindex);
	}
	u.parent = parent;
	if (parent == TCX_PARENT_INGRESS || parent == TCX_PARENT_EGRESS) {
		const struct qinfo *q = qdisc_find(ns, l->ifindex, "clsact", 0, 0);

		if (!q && parent != TCX_PARENT_EGRESS)
			q = qdisc_find(ns, l->ifindex, "ingress", 0, 0);
		if (!q) {
			snprintf(msg, sizeof(msg), "device '%s' has no %s qdisc", t->dev,
			         parent == TCX_PARENT_EGRESS ? "clsact" : "ingress or clsact");
			return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
		}
	} else if (parent == 0) {
		if (!qdisc_find(ns, l->ifindex, NULL, 0, 1)) {
			snprintf(msg, sizeof(msg), "device '%s' has no root qdisc", t->dev);
			return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
		}
	} else if (!qdisc_find(ns, l->ifindex, NULL, TC_H_MAJ(parent), 0)) {
		snprintf(msg, sizeof(msg), "device '%s' has no qdisc %x:", t->dev,
		         TC_H_MAJ(parent) >> 16);
		return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
	}
	return unit_add(us, &u);
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
	       strcmp(a->kind, b->kind) == 0;
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
		enum tcx_dump_mode was =
		        p->c->liveness_every_pass ? TCX_MODE_FULL : terse_before(p->c, t);

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

static int ignore_cb(const struct nlmsghdr *nlh, void *arg)
{
	return MNL_CB_OK;
}

/* A device that disappears between the link dump and its filter dump gives
 * an empty dump, not an error: check that an empty device is still there,
 * once a pass (a device with a hundred empty inner classes asks once). */
static int link_gone(struct pass *p, const struct unit *u)
{
	struct link *l = NULL;
	char buf[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;
	struct list_ctx lc = {.ns = NULL};
	char err[256];
	int status;

	/* A request, not a dump: NLM_F_ACK ends the reply with a status. */
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = (int)u->ifindex;
	for (size_t i = 0; i < u->ns->n_links && !l; i++)
		if (u->ns->links[i].ifindex == u->ifindex)
			l = &u->ns->links[i];
	if (l && l->gone)
		return l->gone == 2;
	status = p->c->ops->dump(u->ns->src, nlh, ignore_cb, &lc, err, sizeof(err));
	if (l)
		l->gone = status == -ENODEV ? 2 : 1;
	return status == -ENODEV;
}

/* ---- u32: each filter under the one tp that holds it ------------------------------------ */

/* u32 keeps its hash tables in one tc_u_common per shared block, or per
 * qdisc otherwise (the ingress and egress of a clsact share one), and the
 * dump of a u32 tp walks every table of its pref in there, whichever tp the
 * table belongs to (net/sched/cls_u32.c, u32_walk()). So u32 filters at the
 * same pref in chains 0 and 1, or in ingress and egress, are each listed
 * under both. Each tp has its own table, its root, and a GET of the handle
 * fff: on a tp answers with its root's handle (u32_get(), TC_U32_ROOT). A
 * filter is therefore kept under the tp whose root table holds it (a filter
 * made in chain 1 is in chain 1's root); one in a table that is no tp's root
 * (made with `divisor` and linked to) is kept under the first of those tps in
 * the output, the kernel keeping no other record of where it was made. Only
 * prefs listed by more than one tp cost the GETs. */

#define U32_HTID(h) ((h)&0xFFF00000U)
#define U32_ROOT    0xFFF00000U

struct u32_tp {
	uint32_t common; /* the first target that shares its tc_u_common */
	uint32_t target, chain, first, n;
	uint16_t pref, protocol;
	uint32_t root; /* handle of its root table, 0 when not known */
};

static int same_u32_common(const struct tcx_target *a, const struct tcx_target *b)
{
	if (strcmp(a->netns, b->netns) != 0 || a->block != b->block)
		return 0;
	return a->block || (a->ifindex == b->ifindex && TC_H_MAJ(a->parent) == TC_H_MAJ(b->parent));
}

static int cmp_u32_tp(const void *x, const void *y)
{
	const struct u32_tp *a = x, *b = y;

	if (a->common != b->common)
		return a->common < b->common ? -1 : 1;
	if (a->pref != b->pref)
		return a->pref < b->pref ? -1 : 1;
	return (a->first > b->first) - (a->first < b->first);
}

static int root_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type == RTM_NEWTFILTER && nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(*tcm))
		*(uint32_t *)arg = tcm->tcm_handle;
	return MNL_CB_OK;
}

/* The handle of tp's root table, or 0. */
static uint32_t u32_root(struct pass *p, const struct u32_tp *tp)
{
	const struct tcx_target *t = &p->s->targets[tp->target];
	char buf[256], err[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct tcmsg *tcm;
	uint32_t root = 0;
	void *src = NULL;

	for (size_t i = 0; i < p->n_ns; i++)
		if (strcmp(p->ns[i]->name, t->netns) == 0)
			src = p->ns[i]->src;
	if (!src)
		return 0;
	nlh->nlmsg_type = RTM_GETTFILTER;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = t->block ? (int)TCM_IFINDEX_MAGIC_BLOCK : (int)t->ifindex;
	tcm->tcm_parent = t->block ? t->block : t->parent;
	tcm->tcm_handle = U32_ROOT;
	tcm->tcm_info = TC_H_MAKE((uint32_t)tp->pref << 16, htons(tp->protocol));
	mnl_attr_put_u32(nlh, TCA_CHAIN, tp->chain);
	if (p->c->ops->dump(src, nlh, root_cb, &root, err, sizeof(err)) < 0)
		return 0;
	return U32_HTID(root) == root ? root : 0;
}

/* Remove the filters marked in gone (none before first_gone), and their
 * actions, keeping the rest in order. */
static void remove_filters(struct pass *p, const uint8_t *gone, size_t first_gone)
{
	struct tcx_snapshot *s = p->s;
	size_t n_f = s->n_filters, nf = first_gone, na = s->filters[first_gone].first_action,
	       pos = 0;

	for (size_t i = first_gone; i < n_f; i++) {
		struct tcx_filter f = s->filters[i];

		if (gone[i])
			continue;
		if (f.n_actions) /* (s->actions is NULL when no filter has one) */
			memmove(&s->actions[na], &s->actions[f.first_action],
			        f.n_actions * sizeof(*s->actions));
		for (size_t a = na; a < na + f.n_actions; a++)
			s->actions[a].filter = (uint32_t)nf;
		f.first_action = (uint32_t)na;
		na += f.n_actions;
		s->filters[nf++] = f;
	}
	s->n_filters = nf;
	s->n_actions = na;
	for (size_t t = 0; t < s->n_targets; t++)
		s->targets[t].n_filters = s->targets[t].n_actions = 0;
	for (size_t i = 0; i < s->n_filters; i++) {
		s->targets[s->filters[i].target].n_filters++;
		s->targets[s->filters[i].target].n_actions += s->filters[i].n_actions;
	}
	for (size_t t = 0; t < s->n_targets; t++) {
		s->targets[t].first_filter = (uint32_t)pos;
		pos += s->targets[t].n_filters;
	}
}

static void u32_attribute(struct pass *p)
{
	struct tcx_snapshot *s = p->s;
	struct u32_tp *tps = NULL;
	uint32_t *common = NULL;
	uint8_t *gone = NULL;
	size_t n = 0, cap = 0, first_gone = SIZE_MAX;
	int k = -1;

	for (unsigned i = 0; i < s->n_kinds; i++)
		if (strcmp(s->kinds[i], "u32") == 0)
			k = (int)i;
	if (k < 0)
		return;
	/* The runs of rows of each u32 tp, in output order. */
	for (size_t i = 0; i < s->n_filters; i++) {
		const struct tcx_filter *f = &s->filters[i];
		struct u32_tp *tp = n ? &tps[n - 1] : NULL;

		if (f->kind != k)
			continue;
		if (tp && tp->target == f->target && tp->chain == f->chain && tp->pref == f->pref &&
		    tp->protocol == f->protocol && tp->first + tp->n == i) {
			tp->n++;
			continue;
		}
		if (tcx_grow(&tps, &cap, n + 1, sizeof(*tps), 16) < 0)
			goto oom;
		tps[n++] = (struct u32_tp){.target = f->target,
		                           .chain = f->chain,
		                           .first = (uint32_t)i,
		                           .n = 1,
		                           .pref = f->pref,
		                           .protocol = f->protocol};
	}
	if (n < 2)
		goto out;
	if (!(common = malloc(s->n_targets * sizeof(*common))))
		goto oom;
	for (size_t t = 0; t < s->n_targets; t++) {
		common[t] = (uint32_t)t;
		for (size_t o = 0; o < t; o++)
			if (same_u32_common(&s->targets[o], &s->targets[t])) {
				common[t] = common[o];
				break;
			}
	}
	for (size_t i = 0; i < n; i++)
		tps[i].common = common[tps[i].target];
	qsort(tps, n, sizeof(*tps), cmp_u32_tp);
	/* Each group of tps that share tables (the same tc_u_common and pref). */
	for (size_t g = 0, end; g < n; g = end) {
		for (end = g + 1;
		     end < n && tps[end].common == tps[g].common && tps[end].pref == tps[g].pref;
		     end++)
			;
		if (end - g < 2)
			continue;
		for (size_t r = g; r < end; r++)
			tps[r].root = u32_root(p, &tps[r]);
		for (size_t r = g; r < end; r++) {
			for (uint32_t i = tps[r].first; i < tps[r].first + tps[r].n; i++) {
				size_t owner = g; /* tables that are no tp's root: the first tp */

				for (size_t q = g; q < end; q++)
					if (tps[q].root &&
					    tps[q].root == U32_HTID(s->filters[i].handle)) {
						owner = q;
						break;
					}
				if (owner == r)
					continue;
				if (!gone && !(gone = calloc(s->n_filters, 1)))
					goto oom;
				gone[i] = 1;
				if (i < first_gone)
					first_gone = i;
			}
		}
	}
	if (gone)
		remove_filters(p, gone, first_gone);
	goto out;
oom:
	s->errors[TCX_ERR_NOMEM]++;
	s->incomplete = 1;
out:
	free(gone);
	free(common);
	free(tps);
}

/* ---- qdisc and class rows ---------------------------------------------------------------- */

/* The classes of fq_codel, sfq and cake are their flows' hash buckets, which
 * come and go with the traffic: collected only with `families: {flows: on}`. */
static int flow_kind(const char *kind)
{
	return strcmp(kind, "fq_codel") == 0 || strcmp(kind, "sfq") == 0 ||
	       strcmp(kind, "cake") == 0;
}

/* The classes of each wanted device whose root qdisc is not noqueue (one
 * class dump each, unless expand_target() made it already). */
static void list_wanted_classes(struct pass *p)
{
	for (size_t i = 0; i < p->n_ns; i++) {
		struct pass_ns *ns = p->ns[i];

		for (size_t k = 0; k < ns->n_links; k++) {
			struct link *l = &ns->links[k];
			const struct qinfo *root;

			if (!l->want_rows || l->classes_listed)
				continue;
			root = qdisc_find(ns, l->ifindex, NULL, 0, 1);
			if (root && strcmp(root->kind, "noqueue") != 0)
				list_classes(p, ns, l); /* its qdev says why it failed */
		}
	}
}

/* A qdev for each wanted device that has a qdisc, in the order of the qdisc
 * dumps (from discovery, so that a device whose qdiscs' statistics could
 * not be read still has its classes), with the majors of its flow qdiscs
 * unless `families: {flows: on}`: the classes of fq_codel, sfq and cake are
 * their flows' hash buckets, which come and go with the traffic. Returns 0,
 * or -1 when out of memory. */
static int make_qdevs(struct pass *p)
{
	struct tcx_snapshot *s = p->s;
	int flows_on =
	        tcx_switch_mode(TCX_SW_FLOWS, p->cfg->families.mode[TCX_SW_FLOWS], 0) == TCX_FAM_ON;

	for (size_t i = 0; i < p->n_ns; i++) {
		struct pass_ns *ns = p->ns[i];

		for (size_t k = 0; k < ns->n_links; k++)
			ns->links[k].qdev = UINT32_MAX;
		for (size_t k = 0; k < ns->n_qdiscs; k++) {
			const struct qinfo *q = &ns->qdiscs[k];
			struct link *l = link_of(ns, q->ifindex);
			struct tcx_qdev *d;

			if (!l || !l->want_rows)
				continue;
			if (!flows_on && flow_kind(q->kind)) {
				if (tcx_grow(&l->flows, &l->cap_flows, l->n_flows + 1,
				             sizeof(*l->flows), 4) < 0)
					return -1;
				l->flows[l->n_flows++] = TC_H_MAJ(q->handle);
			}
			if (l->qdev != UINT32_MAX)
				continue;
			if (tcx_grow(&s->qdevs, &s->cap_qdevs, s->n_qdevs + 1, sizeof(*d), 16) < 0)
				return -1;
			l->qdev = (uint32_t)s->n_qdevs;
			d = memset(&s->qdevs[s->n_qdevs++], 0, sizeof(*d));
			snprintf(d->netns, sizeof(d->netns), "%s", ns->name);
			snprintf(d->dev, sizeof(d->dev), "%s", l->name);
			d->ifindex = l->ifindex;
			d->first_qdisc = d->first_class = UINT32_MAX;
			d->ok = l->classes_listed >= 0;
			if (!d->ok)
				snprintf(d->error, sizeof(d->error), "%s", l->class_err);
		}
		for (size_t k = 0; k < ns->n_links; k++)
			if (ns->links[k].n_flows)
				qsort(ns->links[k].flows, ns->links[k].n_flows,
				      sizeof(*ns->links[k].flows), cmp_u32);
	}
	return 0;
}

/* Has a row with r's series identity (device, kind, handle, parent) been
 * kept already? A qdisc or class dump resumes by count, so an object seen
 * before a change between two chunks can be listed twice; the first is
 * kept. seen has n_seen slots (a power of two, at least twice the rows),
 * each a kept row's index + 1. */
static int seen_before(const struct tcx_qrow *rows, const struct tcx_qrow *r, uint32_t *seen,
                       size_t n_seen, size_t w)
{
	uint64_t h =
	        tcx_hash_mix(tcx_hash_mix(tcx_hash_mix(r->qdev, r->kind), r->handle), r->parent);
	size_t k = h & (n_seen - 1);

	for (; seen[k]; k = (k + 1) & (n_seen - 1)) {
		const struct tcx_qrow *o = &rows[seen[k] - 1];

		if (o->qdev == r->qdev && o->kind == r->kind && o->handle == r->handle &&
		    o->parent == r->parent)
			return 1;
	}
	seen[k] = (uint32_t)w + 1;
	return 0;
}

/* Keep the rows of the devices with a qdev, in the order they were listed,
 * each with its qdev and once, and drop the others (and flow classes), in
 * place. Returns 0, or -1 when out of memory. */
static int keep_rows(struct pass *p, struct tcx_qrow *rows, size_t *n, int is_class)
{
	struct tcx_snapshot *s = p->s;
	size_t w = 0, n_seen = 64;
	uint32_t *seen;

	while (n_seen < 2 * *n)
		n_seen *= 2;
	if (!(seen = calloc(n_seen, sizeof(*seen))))
		return -1;
	for (size_t i = 0; i < *n; i++) {
		struct tcx_qrow r = rows[i];
		struct link *l = r.qdev ? p->ids[r.qdev] : NULL;
		uint32_t major = TC_H_MAJ(r.handle);
		struct tcx_qdev *d;

		if (!l || !l->want_rows || l->qdev == UINT32_MAX ||
		    (is_class && l->n_flows &&
		     bsearch(&major, l->flows, l->n_flows, sizeof(*l->flows), cmp_u32)))
			continue;
		r.qdev = l->qdev;
		if (seen_before(rows, &r, seen, n_seen, w))
			continue;
		d = &s->qdevs[l->qdev];
		if (is_class) {
			if (d->first_class == UINT32_MAX)
				d->first_class = (uint32_t)w;
			d->n_classes++;
		} else {
			if (d->first_qdisc == UINT32_MAX)
				d->first_qdisc = (uint32_t)w;
			d->n_qdiscs++;
		}
		rows[w++] = r;
	}
	*n = w;
	free(seen);
	return 0;
}

static void collect_rows(struct pass *p)
{
	struct tcx_snapshot *s = p->s;

	list_wanted_classes(p);
	if (make_qdevs(p) < 0 || keep_rows(p, s->qdiscs, &s->n_qdiscs, 0) < 0 ||
	    keep_rows(p, s->classes, &s->n_classes, 1) < 0) {
		s->errors[TCX_ERR_NOMEM]++;
		s->incomplete = 1;
		/* No row may name a link: none at all rather than wrong ones. */
		s->n_qdiscs = s->n_classes = s->n_qdevs = 0;
		return;
	}
	for (size_t i = 0; i < s->n_qdevs; i++) {
		if (s->qdevs[i].first_qdisc == UINT32_MAX)
			s->qdevs[i].first_qdisc = (uint32_t)s->n_qdiscs;
		if (s->qdevs[i].first_class == UINT32_MAX)
			s->qdevs[i].first_class = (uint32_t)s->n_classes;
	}
	if (tcx_snapshot_link_classes(s) < 0) {
		s->errors[TCX_ERR_NOMEM]++;
		s->incomplete = 1;
	}
}

/* ---- the pass ------------------------------------------------------------------------------ */

/* The namespace of the pass of that name, added (with no source) if new. */
static struct pass_ns *pass_ns_find(struct pass *p, const char *name)
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

/* The receive buffer of the deletion notifications, in bytes, with
 * `aggregate` (0 without: no notifications). */
static int notify_buffer(const struct tcx_config *cfg)
{
	if (cfg->aggregate.mode == TCX_AGG_NONE)
		return 0;
	return (int)((cfg->notify_buffer_kib ? cfg->notify_buffer_kib
	                                     : TCX_NOTIFY_BUFFER_KIB_DEFAULT) *
	             1024u);
}

/* The namespace of the pass of that name, with its source (NULL when it
 * cannot be opened: open_err and open_cause say why). */
static struct pass_ns *pass_ns_get(struct pass *p, const char *name)
{
	struct pass_ns *n = pass_ns_find(p, name);

	if (!n || n->opened)
		return n;
	n->opened = 1;
	n->src = ns_source(p->c, name, notify_buffer(p->cfg), n->open_err, sizeof(n->open_err));
	if (!n->src)
		n->open_cause = no_resource(errno) ? TCX_ERR_RESOURCE : TCX_ERR_NOTFOUND;
	return n;
}

/* The last names glob matched; with `update` (a fresh read), names
 * replaces them and is taken. NULL when there are none (or out of memory,
 * with `update`). */
static char **glob_names(struct tcx_collector *c, const char *glob, char **update)
{
	struct glob_seen *g = NULL;

	for (size_t i = 0; i < c->n_globs && !g; i++)
		if (strcmp(c->globs[i].glob, glob) == 0)
			g = &c->globs[i];
	if (!g && update) {
		if (tcx_grow(&c->globs, &c->cap_globs, c->n_globs + 1, sizeof(*c->globs), 4) < 0)
			return NULL;
		g = &c->globs[c->n_globs];
		*g = (struct glob_seen){.glob = strdup(glob)};
		if (!g->glob)
			return NULL;
		c->n_globs++;
	}
	if (!g)
		return NULL;
	g->used = 1;
	if (update) {
		tcx_netns_names_free(g->names);
		g->names = update;
	}
	return g->names;
}

/* After a pass: forget the globs no target has any more. */
static void globs_release_unused(struct tcx_collector *c)
{
	for (size_t i = c->n_globs; i-- > 0;) {
		if (c->globs[i].used) {
			c->globs[i].used = 0;
			continue;
		}
		free(c->globs[i].glob);
		tcx_netns_names_free(c->globs[i].names);
		c->globs[i] = c->globs[--c->n_globs];
	}
}

/* A netns glob whose TCX_NETNS_DIR read failed with errno e: its targets are
 * the namespaces it matched at its last read, each failed, their sources
 * kept (nothing is released because a read failed); one target named by
 * the glob when it matched none, or was never read. */
static int glob_failed(struct pass *p, struct units *us, const struct tcx_target_cfg *tc, int e)
{
	char **names = glob_names(p->c, tc->netns, NULL);
	char *none[] = {tc->netns, NULL};
	char msg[256];

	snprintf(msg, sizeof(msg), "cannot read " TCX_NETNS_DIR ": %s", strerror(e));
	if (!names || !names[0])
		names = none;
	for (size_t i = 0; names[i]; i++) {
		struct pass_ns *ns = pass_ns_find(p, names[i]);

		if (!ns)
			return -1;
		ns_keep(p->c, names[i]);
		if (unit_error(us, ns, tc->dev, 0, config_parent(tc->parent),
		               no_resource(e) ? TCX_ERR_RESOURCE : TCX_ERR_IO, msg) < 0)
			return -1;
	}
	return 0;
}

/* The units of one configured target: in its namespace, or in each that its
 * netns glob matches now (none is fine: they come and go). */
static int expand_config_target(struct pass *p, struct units *us, const struct tcx_target_cfg *tc)
{
	struct pass_ns *ns;
	char **names;
	int ret = 0;

	if (!tc->netns_glob) {
		ns = pass_ns_get(p, tc->netns ? tc->netns : "");
		return ns ? expand_target(p, us, tc, ns) : -1;
	}
	names = tcx_netns_glob(tc->netns);
	if (!names)
		return glob_failed(p, us, tc, errno);
	if (!glob_names(p->c, tc->netns, names)) {
		tcx_netns_names_free(names);
		return -1;
	}
	for (size_t i = 0; names[i] && ret == 0; i++) {
		ns = pass_ns_get(p, names[i]);
		ret = ns ? expand_target(p, us, tc, ns) : -1;
	}
	return ret;
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
	 * (ns_keep()) keeps its notifications for the next pass. */
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

/* The notifications lost by namespace name since the collector was made,
 * its open source src (NULL: none) counted now. */
static uint64_t ns_lost(struct tcx_collector *c, const char *name, void *src)
{
	uint64_t lost = c->lost_unnamed, drops[TCX_NLDROP__MAX] = {0};
	const uint64_t *closed = closed_loss(c, name, 0);

	if (src && c->ops->dropped)
		c->ops->dropped(src, drops, &lost);
	return lost + (closed ? *closed : 0);
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

void tcx_collector_liveness_every_pass(struct tcx_collector *c)
{
	c->liveness_every_pass = 1;
}

/* Is the pass starting at now (monotonic seconds) a liveness pass? One is
 * due liveness_interval after the last, give or take half a collection
 * interval (collections are not to the millisecond), and at the first. */
static int liveness_due(struct tcx_collector *c, const struct tcx_config *cfg, double now)
{
	if (tcx_switch_mode(TCX_SW_LIVENESS, cfg->families.mode[TCX_SW_LIVENESS], 0) == TCX_FAM_OFF)
		return 0;
	if (c->liveness_every_pass)
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
	ns_release_stale(c);
	for (size_t i = 0; i < cfg->n_targets; i++)
		if (expand_config_target(&p, &us, &cfg->targets[i]) < 0)
			goto oom;
	drain_finals(&p, &us);
	for (size_t i = 0; i < us.n; i++) {
		struct unit *u = &us.u[i];
		size_t mark_f = s->n_filters, mark_a = s->n_actions;
		struct tcx_target *t = tcx_snapshot_add_target(s);
		double t1 = tcx_clock_s(CLOCK_MONOTONIC);

		if (!t)
			goto oom;
		fill_target(t, u);
		if (u->error[0]) {
			set_error(s, t, u->cause, "%s", u->error);
		} else {
			dump_unit(&p, u, (uint32_t)(s->n_targets - 1));
			if (t->ok && u->ifindex && s->n_filters == mark_f && link_gone(&p, u))
				set_error(s, t, TCX_ERR_NOTFOUND,
				          "device '%s' vanished during collection", u->dev);
		}
		count_rows(s, t, mark_f, mark_a);
		t->duration_s = tcx_clock_s(CLOCK_MONOTONIC) - t1;
		/* Parents found by discovery that hold no filter are noise,
		 * unless their namespace lost notifications: their
		 * aggregates stay, and so does the mark that they may lack
		 * finals (tc_scrape_collector_finals_lost). */
		if (u->implicit && t->ok && t->n_filters == 0 &&
		    (cfg->aggregate.mode == TCX_AGG_NONE || !ns_lost(c, u->ns->name, u->ns->src)))
			s->n_targets--;
	}
	goto out;
oom:
	s->errors[TCX_ERR_NOMEM]++;
	s->incomplete = 1;
out:
	u32_attribute(&p);
	collect_rows(&p);
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
	free(us.u);
	free(us.slot);
	ns_release_unused(c);
	globs_release_unused(c);
	for (unsigned i = 0; i < TCX_NLDROP__MAX; i++)
		s->netlink_dropped[i] += c->dropped_closed[i];
	count_lost(c, s);
	keep_terse(c, s);
	tcx_snapshot_merge(s);
	tcx_snapshot_classify(s);
	tcx_snapshot_seal(s);
	s->duration_s = tcx_clock_s(CLOCK_MONOTONIC) - t0;
	return s;
}
