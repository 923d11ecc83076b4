/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dump units of one collection pass (collect.c): the targets of the
 * configuration expanded into a device parent or a shared block each (netns
 * globs, discovery's qdiscs and classes), and the sweeps, which decide which
 * of the parents discovery found are asked for their filters. */

#include <errno.h>
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pass.h"
#include "lib/grow.h"
#include "lib/hash.h"

/* ---- dump units ------------------------------------------------------------------------- */

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
	const struct link *l = tcx_pass_link_by_index(ns, ifindex);

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

/* The dump units for one qdisc. Those found by `all`, and those of a named
 * device but its root and ingress or clsact qdisc, are implicit: left out of
 * the snapshot when they hold no filter, and asked only when they may
 * (sweeps). A named device's root and ingress lists stay, so that what the
 * operator named always reports its state. */
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

	if (tcx_pass_list_classes(p, ns, l) < 0)
		return 0; /* its qdev says why: tcx_pass_collect_rows() */
	if (!ns->n_classes)
		return 0;
	if (!(parents = malloc(ns->n_classes * sizeof(*parents))))
		return -1;
	for (size_t i = 0; i < ns->n_classes; i++)
		if (ns->classes[i].ifindex == l->ifindex)
			parents[n++] = ns->classes[i].parent;
	qsort(parents, n, sizeof(*parents), tcx_pass_cmp_u32);
	for (size_t i = 0; i < ns->n_classes && ret == 0; i++) {
		const struct qinfo *c = &ns->classes[i];
		struct unit u = {
		        .ns = ns, .ifindex = l->ifindex, .parent = c->handle, .implicit = 1};

		if (c->ifindex != l->ifindex || !TC_H_MIN(c->handle) ||
		    !bsearch(&c->handle, parents, n, sizeof(*parents), tcx_pass_cmp_u32))
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
	const struct qinfo *root = tcx_pass_qdisc_find(ns, ifindex, NULL, 0, 1);

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
	if (tcx_pass_ns_list(p, ns) < 0) {
		ns->unknown = 1;
		return unit_error(us, ns, t->dev, t->has_block ? t->block : 0, parent,
		                  TCX_ERR_KERNEL, ns->list_err);
	}
	if (t->all) {
		/* The devices `devices:` lets in; a shared block, through any
		 * device bound to it that it lets in. */
		for (size_t i = 0; i < ns->n_qdiscs; i++) {
			char dev[IFNAMSIZ];

			dev_name(ns, ns->qdiscs[i].ifindex, dev);
			if (!tcx_config_device_wanted(p->cfg, dev))
				continue;
			tcx_pass_want_rows(ns, ns->qdiscs[i].ifindex);
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

		if (!tcx_pass_block_exists(ns, t->block)) {
			snprintf(msg, sizeof(msg), "shared block %u not found", t->block);
			return unit_error(us, ns, NULL, t->block, 0, TCX_ERR_NOTFOUND, msg);
		}
		return unit_add(us, &u);
	}

	const struct link *l = tcx_pass_link_by_name(ns, t->dev);
	struct unit u = {.ns = ns};

	if (!l) {
		snprintf(msg, sizeof(msg), "device '%s' not found", t->dev);
		return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
	}
	u.ifindex = l->ifindex;
	snprintf(u.dev, sizeof(u.dev), "%s", l->name);
	tcx_pass_want_rows(ns, l->ifindex);
	if (!t->has_parent) {
		/* Every parent of the device that has filters: its root qdisc and
		 * its ingress or clsact lists report the device's state; the rest
		 * (10k leaves) are found by discovery, left out when empty. */
		for (size_t i = 0; i < ns->n_qdiscs; i++) {
			const struct qinfo *q = &ns->qdiscs[i];

			if (q->ifindex == l->ifindex &&
			    units_from_qdisc(us, ns, q,
			                     q->parent != TC_H_ROOT && q->parent != TC_H_INGRESS) <
			            0)
				return -1;
		}
		return units_from_device_classes(p, us, ns, l->ifindex);
	}
	u.parent = parent;
	if (parent == TCX_PARENT_INGRESS || parent == TCX_PARENT_EGRESS) {
		const struct qinfo *q = tcx_pass_qdisc_find(ns, l->ifindex, "clsact", 0, 0);

		if (!q && parent != TCX_PARENT_EGRESS)
			q = tcx_pass_qdisc_find(ns, l->ifindex, "ingress", 0, 0);
		if (!q) {
			snprintf(msg, sizeof(msg), "device '%s' has no %s qdisc", t->dev,
			         parent == TCX_PARENT_EGRESS ? "clsact" : "ingress or clsact");
			return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
		}
	} else if (parent == 0) {
		if (!tcx_pass_qdisc_find(ns, l->ifindex, NULL, 0, 1)) {
			snprintf(msg, sizeof(msg), "device '%s' has no root qdisc", t->dev);
			return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
		}
	} else if (!tcx_pass_qdisc_find(ns, l->ifindex, NULL, TC_H_MAJ(parent), 0)) {
		snprintf(msg, sizeof(msg), "device '%s' has no qdisc %x:", t->dev,
		         TC_H_MAJ(parent) >> 16);
		return unit_error(us, ns, t->dev, 0, parent, TCX_ERR_NOTFOUND, msg);
	}
	return unit_add(us, &u);
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
void tcx_pass_globs_release_unused(struct tcx_collector *c)
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
		struct pass_ns *ns = tcx_pass_ns_find(p, names[i]);

		if (!ns)
			return -1;
		tcx_pass_ns_keep(p->c, names[i]);
		if (unit_error(us, ns, tc->dev, 0, config_parent(tc->parent),
		               tcx_pass_no_resource(e) ? TCX_ERR_RESOURCE : TCX_ERR_IO, msg) < 0)
			return -1;
	}
	return 0;
}

/* The units of one configured target: in its namespace, or in each that its
 * netns glob matches now (none is fine: they come and go). */
int tcx_pass_expand_config_target(struct pass *p, struct units *us, const struct tcx_target_cfg *tc)
{
	struct pass_ns *ns;
	char **names;
	int ret = 0;

	if (!tc->netns_glob) {
		ns = tcx_pass_ns_get(p, tc->netns ? tc->netns : "");
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
		ns = tcx_pass_ns_get(p, names[i]);
		ret = ns ? expand_target(p, us, tc, ns) : -1;
	}
	return ret;
}

/* ---- sweeps ------------------------------------------------------------------------------- */

/* A filter dump costs a round trip, and the kernel a walk of the device's
 * qdiscs to find the parent (qdisc_lookup(): a hash of 16 buckets, so 10k
 * leaf qdiscs put some 600 in each). Asking 10k filter-capable leaves that
 * hold nothing cost a pass 3.6 times the qdisc and class dump. So the
 * daemon asks the parents found by discovery (implicit units) only when
 * they held filters at its last pass, or the kernel has said since that a
 * filter was added under their qdisc (RTM_NEWTFILTER, tcx_notify_adds(): of
 * the same device and qdisc major, or the shared block; a filter of a
 * shared block can only be added through the block, cls_api.c refuses it
 * through a device bound to it). It asks every parent of a
 * namespace ("sweeps" it) when it cannot know: at the namespace's first
 * pass (and tcexporter --once's), when an addition may have been lost, when
 * the configuration was reloaded, and every sweep_interval. Named targets
 * are always dumped: what the operator named reports its state. */

static int cmp_key(const void *x, const void *y)
{
	const struct parent_key *a = x, *b = y;

	if (a->ifindex != b->ifindex)
		return a->ifindex < b->ifindex ? -1 : 1;
	if (a->block != b->block)
		return a->block < b->block ? -1 : 1;
	return (a->parent > b->parent) - (a->parent < b->parent);
}

/* The parent an addition dirties: the qdisc (its major) of a device's
 * parent, but an ingress or clsact qdisc's filter list itself. */
static uint32_t added_parent(uint32_t parent)
{
	return TC_H_MAJ(parent) == TC_H_MAJ(TC_H_INGRESS) ? tcx_unit_parent(parent)
	                                                  : TC_H_MAJ(parent);
}

static void on_added(void *arg, uint32_t ifindex, uint32_t parent)
{
	struct pass_ns *ns = arg;
	struct parent_key k = {.ifindex = ifindex, .parent = added_parent(parent)};
	struct parent_key e = {.ifindex = ifindex, .parent = tcx_unit_parent(parent)};

	if (ifindex == TCM_IFINDEX_MAGIC_BLOCK)
		k = e = (struct parent_key){.block = parent};
	if (tcx_grow(&ns->added, &ns->cap_added, ns->n_added + 1, sizeof(*ns->added), 64) < 0 ||
	    tcx_grow(&ns->exact, &ns->cap_exact, ns->n_exact + 1, sizeof(*ns->exact), 64) < 0) {
		ns->sweep = 1; /* what is not kept is as good as lost */
		return;
	}
	ns->added[ns->n_added++] = k;
	ns->exact[ns->n_exact++] = e;
}

/* The reason every namespace is swept this pass (enum tcx_sweep_reason),
 * or -1: a reload, or sweep_interval since the last (give or take half a
 * collection interval, as liveness_due()). */
int tcx_pass_sweep_due(struct tcx_collector *c, const struct tcx_config *cfg, double now)
{
	int why = -1;

	if (c->swept_generation && c->swept_generation != cfg->generation)
		why = TCX_SWEEP_RELOAD;
	else if (cfg->sweep_interval_s <= 0 ||
	         now - c->swept_at >= cfg->sweep_interval_s - cfg->interval_s / 2)
		why = TCX_SWEEP_INTERVAL;
	if (why >= 0 || !c->swept_generation)
		c->swept_at = now;
	c->swept_generation = cfg->generation;
	return why;
}

/* Take the parents src's namespace held filters under at its last pass,
 * read the additions since, and say whether this pass sweeps it. */
void tcx_pass_sweep_or_not(struct pass *p, struct pass_ns *ns, struct ns_source *src)
{
	struct tcx_collector *c = p->c;
	int lost = c->ops->added ? c->ops->added(src->src, on_added, ns) : 1;
	int why = p->sweep_all;
	size_t n = 0;

	if (c->once || !src->known)
		why = TCX_SWEEP_NEW;
	else if (lost || ns->sweep)
		why = TCX_SWEEP_LOST;
	ns->held = src->held;
	ns->n_held = src->n_held;
	src->held = NULL;
	src->n_held = 0;
	src->known = 0; /* until the pass gives it back: tcx_pass_sweeps_done() */
	ns->sweep = why >= 0;
	if (ns->sweep) {
		c->sweeps[why]++;
		return;
	}
	if (ns->n_added) /* NULL when none: qsort() takes no NULL */
		qsort(ns->added, ns->n_added, sizeof(*ns->added), cmp_key);
	for (size_t i = 0; i < ns->n_added; i++)
		if (!n || cmp_key(&ns->added[n - 1], &ns->added[i]) != 0)
			ns->added[n++] = ns->added[i];
	ns->n_added = n;
}

static struct parent_key unit_key(const struct unit *u)
{
	return (struct parent_key){.ifindex = u->ifindex, .block = u->block, .parent = u->parent};
}

static int key_in(const struct parent_key *k, const struct parent_key *set, size_t n)
{
	return n && bsearch(k, set, n, sizeof(*set), cmp_key) != NULL;
}

/* May unit u hold filters, as far as the namespace's sweep state knows? */
int tcx_pass_may_hold(const struct unit *u)
{
	const struct pass_ns *ns = u->ns;
	struct parent_key k = unit_key(u);

	if (!u->implicit || ns->sweep || key_in(&k, ns->held, ns->n_held))
		return 1;
	if (!u->block) {
		k.parent = added_parent(u->parent);
		return key_in(&k, ns->added, ns->n_added);
	}
	k = (struct parent_key){.block = u->block};
	return key_in(&k, ns->added, ns->n_added);
}

/* Did unit u hold filters at its namespace's last pass? */
int tcx_pass_was_held(const struct unit *u)
{
	struct parent_key k = unit_key(u);

	return key_in(&k, u->ns->held, u->ns->n_held);
}

/* After unit u's dump, when its target stays in the snapshot (it holds
 * filters, its dump failed, it was named, or its namespace lost
 * notifications): the next pass asks it again. */
void tcx_pass_sweep_note(struct pass_ns *ns, const struct unit *u)
{
	struct parent_key k = unit_key(u);

	if (tcx_grow(&ns->holds, &ns->cap_holds, ns->n_holds + 1, sizeof(*ns->holds), 64) < 0) {
		ns->unknown = 1;
		return;
	}
	ns->holds[ns->n_holds++] = k;
}

static int cmp_src(const void *x, const void *y)
{
	const struct ns_source *a = *(const struct ns_source *const *)x;
	const struct ns_source *b = *(const struct ns_source *const *)y;

	return (a->src > b->src) - (a->src < b->src);
}

/* Add to ns->holds each of keys[n] that no unit of the pass is (units[nu],
 * sorted): it is asked again at the next pass, until a sweep. Returns 0,
 * or -1 when out of memory. */
static int carry(struct pass_ns *ns, const struct parent_key *keys, size_t n,
                 const struct parent_key *units, size_t nu)
{
	for (size_t i = 0; i < n; i++) {
		if (key_in(&keys[i], units, nu))
			continue;
		if (tcx_grow(&ns->holds, &ns->cap_holds, ns->n_holds + 1, sizeof(*ns->holds), 64) <
		    0)
			return -1;
		ns->holds[ns->n_holds++] = keys[i];
	}
	return 0;
}

/* ns's next held: the parents with filters this pass and, between sweeps,
 * those held or added to that no unit of the pass (us) is. */
static void next_held(struct pass_ns *ns, const struct units *us)
{
	struct parent_key *units = NULL;
	size_t nu = 0, n = 0;

	if (!ns->sweep && (ns->n_held || ns->n_exact)) {
		if (!(units = malloc((us->n + 1) * sizeof(*units)))) {
			ns->unknown = 1;
			return;
		}
		for (size_t i = 0; i < us->n; i++)
			if (us->u[i].ns == ns && !us->u[i].error[0])
				units[nu++] = unit_key(&us->u[i]);
		qsort(units, nu, sizeof(*units), cmp_key);
		if (carry(ns, ns->held, ns->n_held, units, nu) < 0 ||
		    carry(ns, ns->exact, ns->n_exact, units, nu) < 0)
			ns->unknown = 1;
		free(units);
	}
	if (ns->n_holds) /* NULL when none */
		qsort(ns->holds, ns->n_holds, sizeof(*ns->holds), cmp_key);
	for (size_t i = 0; i < ns->n_holds; i++)
		if (!n || cmp_key(&ns->holds[n - 1], &ns->holds[i]) != 0)
			ns->holds[n++] = ns->holds[i];
	ns->n_holds = n;
}

/* At the end of a pass: give each namespace's parents to ask back to its
 * source, for the next pass; all of them only when the pass knows them
 * all (it swept or knew before, and listed every qdisc and class). The
 * sources are found by a sorted index: 20,000 namespaces are 20,000 of
 * each. */
void tcx_pass_sweeps_done(struct pass *p, const struct units *us)
{
	struct ns_source **by_src = malloc((p->c->n_ns + 1) * sizeof(*by_src));

	for (size_t k = 0; by_src && k < p->c->n_ns; k++)
		by_src[k] = &p->c->ns[k];
	if (by_src)
		qsort(by_src, p->c->n_ns, sizeof(*by_src), cmp_src);
	for (size_t i = 0; i < p->n_ns; i++) {
		struct pass_ns *ns = p->ns[i];
		struct ns_source key = {.src = ns->src}, *kp = &key, **found = NULL;

		if (by_src && ns->src && p->c->n_ns)
			found = bsearch(&kp, by_src, p->c->n_ns, sizeof(*by_src), cmp_src);
		if (found && !ns->unknown && !p->s->incomplete)
			next_held(ns, us);
		if (found && !ns->unknown && !p->s->incomplete) {
			free((*found)->held);
			(*found)->held = ns->holds;
			(*found)->n_held = ns->n_holds;
			(*found)->known = 1;
			ns->holds = NULL;
		}
		free(ns->holds);
		free(ns->held);
		free(ns->added);
		free(ns->exact);
	}
	free(by_src);
}
