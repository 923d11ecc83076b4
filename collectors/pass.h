/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Private to the module collectors/collect (collect.c and collect.h): the
 * types of one collection pass and the functions its files share, collect.c
 * (the pass, the namespaces' sources, the filter dumps), discover.c (links,
 * qdiscs and classes), units.c (the dump units, netns globs and the sweeps)
 * and u32.c (u32's filters). Only they include it; collect.h is the
 * collector's interface. */
#ifndef TCX_PASS_H
#define TCX_PASS_H

#include <linux/rtnetlink.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/collect.h"

#ifndef TCM_IFINDEX_MAGIC_BLOCK
#define TCM_IFINDEX_MAGIC_BLOCK 0xFFFFFFFFU
#endif

/* A source kept open from one pass to the next, while its namespace is
 * collected and still there (ns_release_stale()). */
struct ns_source {
	char name[64];
	void *src;
	int used;      /* by the current pass */
	int notify;    /* opened with its deletion notifications: their buffer */
	int adds;      /* opened with its additions (sweeps): their buffer */
	uint64_t lost; /* notifications it lost, as of the end of the last pass */
	/* The parents that held filters at its last collection, sorted, and
	 * whether that is all of them (sweeps: pass_ns.held). */
	struct parent_key *held;
	size_t n_held;
	int known;
};

/* Notifications lost by the sources of a namespace closed since the
 * collector was made (those of the open ones are in ns_source.lost). */
struct ns_loss {
	char name[64];
	uint64_t lost;
};

/* A dump unit as the sweeps remember it, from pass to pass. */
struct parent_key {
	uint32_t ifindex, block, parent;
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
	/* Liveness passes (tcx_snapshot.liveness_pass): the monotonic time
	 * of the last one (0: none yet); with `once`, every pass is one. */
	double liveness_at;
	/* The targets the last pass dumped terse, by target_key(), sorted: a
	 * liveness pass dumps them in full alone, and keeps their mode. */
	struct terse_seen *terse;
	size_t n_terse, cap_terse;
	/* Sweeps: tcexporter --once (every pass one, no additions socket);
	 * the monotonic time of the last sweep for sweep_interval, the
	 * generation of the configuration it was for, and the count of each
	 * reason. */
	int once;
	double swept_at;
	unsigned long swept_generation;
	uint64_t sweeps[TCX_SWEEP__MAX];
};

/* ---- per-namespace state of one pass ---------------------------------------------- */

struct pass_ns;

struct link {
	const struct pass_ns *ns;
	uint32_t ifindex;
	char name[IFNAMSIZ];
	int classes_listed; /* 1: its classes are in pass_ns.classes; -1: failed */
	int want_rows;      /* its qdisc and class rows go in the snapshot */
	int gone;           /* 0: not asked yet; 1: there; 2: gone (tcx_pass_link_gone()) */
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
	int opened; /* src was asked for (tcx_pass_ns_get()) */
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
	/* Sweeps: whether every parent is asked for its filters this pass;
	 * else only those that held some at the last (held, sorted, taken
	 * from its ns_source) and those the kernel said filters were added to
	 * since (added: ifindex and parent as it names them, sorted). The
	 * parents found to hold filters this pass (holds) are the next pass's
	 * held, unless a listing failed (unknown); so are, between sweeps,
	 * those held and those filters were added to (exact: the parent
	 * itself, as unit_key() names it) that no unit of this pass is (a
	 * listing that missed one, a filter on a leaf class that a child
	 * class makes a unit later). lost: the deletion notifications its
	 * namespace lost since the collector was made, once lost_read. */
	int sweep;
	int unknown;
	struct parent_key *held, *holds, *added, *exact;
	size_t n_held, n_holds, cap_holds, n_added, cap_added, n_exact, cap_exact;
	int lost_read;
	uint64_t lost;
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
	int sweep_all; /* tcx_pass_sweep_due() */
	/* The plans written into the snapshot's xvals this pass, by value
	 * (discover.c): rows with the same ones share them. */
	struct plan_slot *plans;
	size_t plans_mask, n_plans; /* slots - 1; plans NULL: none yet */
};

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

/* ---- shared between the collector's files ------------------------------------------------ */

/* collect.c: namespace sources and the pass's namespaces. */
void tcx_pass_ns_keep(struct tcx_collector *c, const char *name);
int tcx_pass_no_resource(int e);
struct pass_ns *tcx_pass_ns_find(struct pass *p, const char *name);
struct pass_ns *tcx_pass_ns_get(struct pass *p, const char *name);

/* discover.c: links, qdiscs and classes. */
int tcx_pass_ns_list(struct pass *p, struct pass_ns *ns);
void tcx_pass_want_rows(struct pass_ns *ns, uint32_t ifindex);
const struct link *tcx_pass_link_by_name(const struct pass_ns *ns, const char *name);
const struct link *tcx_pass_link_by_index(const struct pass_ns *ns, uint32_t ifindex);
const struct qinfo *tcx_pass_qdisc_find(const struct pass_ns *ns, uint32_t ifindex,
                                        const char *kind, uint32_t handle, int root);
int tcx_pass_block_exists(const struct pass_ns *ns, uint32_t block);
int tcx_pass_link_gone(struct pass *p, const struct unit *u);
int tcx_pass_cmp_u32(const void *x, const void *y);
int tcx_pass_list_classes(struct pass *p, struct pass_ns *ns, struct link *l);
void tcx_pass_collect_rows(struct pass *p);

/* units.c: the dump units and the sweeps. */
void tcx_pass_globs_release_unused(struct tcx_collector *c);
int tcx_pass_expand_config_target(struct pass *p, struct units *us,
                                  const struct tcx_target_cfg *tc);
int tcx_pass_sweep_due(struct tcx_collector *c, const struct tcx_config *cfg, double now);
void tcx_pass_sweep_or_not(struct pass *p, struct pass_ns *ns, struct ns_source *src);
int tcx_pass_may_hold(const struct unit *u);
int tcx_pass_was_held(const struct unit *u);
void tcx_pass_sweep_note(struct pass_ns *ns, const struct unit *u);
void tcx_pass_sweeps_done(struct pass *p, const struct units *us);

/* u32.c */
void tcx_pass_u32_attribute(struct pass *p);

#endif
