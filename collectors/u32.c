/* SPDX-License-Identifier: GPL-2.0-or-later */
/* u32's rules for one collection pass (collect.c). */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/pass.h"
#include "lib/grow.h"

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

void tcx_pass_u32_attribute(struct pass *p)
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
