/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Discovery for one collection pass (collect.c): the link and qdisc dump of
 * each namespace, the class dump of a device, and the qdisc and class rows
 * they put in the snapshot. */

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pass.h"
#include "collectors/qdisc_parse.h"
#include "collectors/tc_parse.h"
#include "lib/grow.h"
#include "lib/hash.h"

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

/* A plans vector written into xvals: its table, which rows it has, where.
 * Classes of a shaping tree share a few plans (LibreQoS: a rate and a ceil
 * per subscriber tier), so each distinct one is written once per pass; at
 * 50k HTB leaves, 80 bytes a class less in each snapshot. */
struct plan_slot {
	const struct tcx_plans_table *pt; /* NULL: free */
	uint32_t present;
	uint32_t off;
};

#define PLANS_SHARED_MAX 4096 /* distinct plans kept for sharing, a pass */

/* Where the plans of m are in s->xvals already, or the free slot for them
 * (NULL when there is no table and none can be made, or it is full). */
static struct plan_slot *plan_slot(struct pass *p, const struct tcx_qdisc_msg *m, size_t np)
{
	uint64_t h = tcx_hash_bytes((uintptr_t)m->pt ^ m->pl_present, m->pl, np * sizeof(*m->pl));
	size_t i;

	if (!p->plans) {
		if (!(p->plans = calloc(2 * PLANS_SHARED_MAX, sizeof(*p->plans))))
			return NULL;
		p->plans_mask = 2 * PLANS_SHARED_MAX - 1;
	}
	for (i = (size_t)h & p->plans_mask; p->plans[i].pt; i = (i + 1) & p->plans_mask) {
		const struct plan_slot *e = &p->plans[i];

		if (e->pt == m->pt && e->present == m->pl_present &&
		    memcmp(p->s->xvals + e->off, m->pl, np * sizeof(*m->pl)) == 0)
			return &p->plans[i];
	}
	return p->n_plans < PLANS_SHARED_MAX ? &p->plans[i] : NULL;
}

/* Forget the plans shared so far: the xvals they were in are taken back. */
static void plans_forget(struct pass *p)
{
	if (p->plans)
		memset(p->plans, 0, (p->plans_mask + 1) * sizeof(*p->plans));
	p->n_plans = 0;
}

/* Append m's row to the snapshot's qdiscs or classes, its qdev the id of
 * its link. Returns 0, or -1 when out of memory. */
static int add_row(struct pass *p, struct pass_ns *ns, const struct tcx_qdisc_msg *m)
{
	struct tcx_snapshot *s = p->s;
	/* The fields `families: xstats:` chose: a kind left out whole has no
	 * values stored, a field left out is not present (for every format). */
	const struct tcx_xstats_choice *ch = &p->cfg->families.xstats;
	const struct tcx_xstats_table *xt = m->xt && !tcx_xstats_none(m->xt, ch) ? m->xt : NULL;
	uint32_t off = xt ? ch->off[tcx_xstats_id(xt)] : 0;
	uint32_t tin_off = xt ? ch->tin_off[tcx_xstats_id(xt)] : 0;
	size_t nx = xt ? xt->n_fields + (size_t)m->n_tins * (1 + xt->n_tin_fields) : 0;
	size_t np = m->pl_present ? m->pt->n : 0;
	int kind = tcx_snapshot_kind_padded(s, m->kind);
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
	                       .n_tins = xt ? m->n_tins : 0,
	                       .stats_present = m->stats_present,
	                       .xs_present = xt ? m->xs_present & ~off : 0,
	                       .xs = (uint32_t)s->n_xvals,
	                       .xt_id = (uint8_t)(xt ? tcx_xstats_id(xt) + 1 : 0),
	                       .pt_id = (uint8_t)(np ? tcx_plans_id(m->pt) + 1 : 0),
	                       .pl_present = m->pl_present};
	for (unsigned i = 0; i < TCX_QSTAT__MAX; i++)
		if (m->stats_present & 1u << i)
			r->c[i] = m->stats[i];
	if (np) { /* the plans first: xs ends the row's values */
		struct plan_slot *ps = plan_slot(p, m, np);

		if (ps && ps->pt) {
			r->pl = ps->off;
		} else {
			r->pl = (uint32_t)s->n_xvals;
			memcpy(s->xvals + s->n_xvals, m->pl, np * sizeof(*s->xvals));
			s->n_xvals += np;
			r->xs = (uint32_t)s->n_xvals;
			if (ps) {
				*ps = (struct plan_slot){m->pt, m->pl_present, r->pl};
				p->n_plans++;
			}
		}
	}
	if (!nx)
		return 0;
	x = s->xvals + s->n_xvals;
	s->n_xvals += nx;
	memcpy(x, m->xs, xt->n_fields * sizeof(*x));
	x += xt->n_fields;
	for (unsigned t = 0; t < m->n_tins; t++) {
		*x++ = m->tin_present[t] & ~tin_off;
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

int tcx_pass_ns_list(struct pass *p, struct pass_ns *ns)
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
void tcx_pass_want_rows(struct pass_ns *ns, uint32_t ifindex)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			ns->links[i].want_rows = 1;
}

const struct link *tcx_pass_link_by_name(const struct pass_ns *ns, const char *name)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (strcmp(ns->links[i].name, name) == 0)
			return &ns->links[i];
	return NULL;
}

const struct link *tcx_pass_link_by_index(const struct pass_ns *ns, uint32_t ifindex)
{
	for (size_t i = 0; i < ns->n_links; i++)
		if (ns->links[i].ifindex == ifindex)
			return &ns->links[i];
	return NULL;
}

const struct qinfo *tcx_pass_qdisc_find(const struct pass_ns *ns, uint32_t ifindex,
                                        const char *kind, uint32_t handle, int root)
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

int tcx_pass_block_exists(const struct pass_ns *ns, uint32_t block)
{
	for (size_t i = 0; i < ns->n_qdiscs; i++)
		if (ns->qdiscs[i].ingress_block == block || ns->qdiscs[i].egress_block == block)
			return 1;
	return 0;
}

static int ignore_cb(const struct nlmsghdr *nlh, void *arg)
{
	return MNL_CB_OK;
}

/* A device that disappears between the link dump and its filter dump gives
 * an empty dump, not an error: check that an empty device is still there,
 * once a pass (a device with a hundred empty inner classes asks once). */
int tcx_pass_link_gone(struct pass *p, const struct unit *u)
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

int tcx_pass_cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return (a > b) - (a < b);
}

/* List the classes of device l once a pass, into ns->classes and its rows
 * into the snapshot. Returns 0, or -1 with the reason in l->class_err
 * (counted once), its rows removed again. */
int tcx_pass_list_classes(struct pass *p, struct pass_ns *ns, struct link *l)
{
	size_t n = ns->n_classes, nr = p->s->n_classes, nx = p->s->n_xvals;

	if (l->classes_listed)
		return l->classes_listed < 0 ? -1 : 0;
	if (list_dump(p, ns, RTM_GETTCLASS, l->ifindex, tcobj_msg_cb, "class", l->class_err,
	              sizeof(l->class_err), p->s->errors) < 0) {
		ns->n_classes = n;
		p->s->n_classes = nr;
		p->s->n_xvals = nx;
		plans_forget(p);
		l->classes_listed = -1;
		ns->unknown = 1; /* its class units are not known: not swept */
		return -1;
	}
	l->classes_listed = 1;
	return 0;
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
			root = tcx_pass_qdisc_find(ns, l->ifindex, NULL, 0, 1);
			if (root && strcmp(root->kind, "noqueue") != 0)
				tcx_pass_list_classes(p, ns, l); /* its qdev says why it failed */
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
				      sizeof(*ns->links[k].flows), tcx_pass_cmp_u32);
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
		     bsearch(&major, l->flows, l->n_flows, sizeof(*l->flows), tcx_pass_cmp_u32)))
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

void tcx_pass_collect_rows(struct pass *p)
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
