/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An immutable, reference-counted result of one collection pass. */
#ifndef TCX_SNAPSHOT_H
#define TCX_SNAPSHOT_H

#include <net/if.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "collectors/counters.h"
#include "collectors/plans.h"
#include "config/config.h"
#include "lib/hash.h"

#define TCX_KIND_MAX  16 /* IFNAMSIZ: kinds are short kernel strings */
#define TCX_MAX_KINDS 255

/* Filter flags (TCA_CLS_FLAGS_*). */
#define TCX_FLAG_SKIP_HW   0x1
#define TCX_FLAG_SKIP_SW   0x2
#define TCX_FLAG_IN_HW     0x4
#define TCX_FLAG_NOT_IN_HW 0x8

/* How the rows of one target were obtained. */
enum tcx_dump_mode {
	TCX_MODE_NONE = 0,
	TCX_MODE_TERSE,        /* one terse dump covered every filter */
	TCX_MODE_TERSE_REPAIR, /* terse, plus full dumps of non-terse prefs */
	TCX_MODE_FULL,         /* full dump */
};

/* One dump unit: a device parent or a shared block, in a namespace. */
struct tcx_target {
	char netns[64]; /* "" for the collector's own namespace */
	char dev[IFNAMSIZ];
	uint32_t ifindex; /* 0 for a block */
	uint32_t block;   /* shared block index, 0 for a device */
	uint32_t parent;  /* tcm_parent requested */
	char parent_name[24];
	int ok;
	char error[256];
	double duration_s;
	enum tcx_dump_mode mode;
	uint32_t terse_dumps, full_dumps; /* netlink dump requests */
	uint32_t repaired_prefs;          /* prefs re-dumped in full */
	uint32_t n_filters, n_actions;    /* rows kept for this target */
	uint32_t first_filter;            /* its filters are contiguous */
	/* With `aggregate`: the deletion notifications its namespace lost
	 * since the collector was made (collect.c): a final that was not
	 * folded, its aggregates a lower bound when nonzero. */
	uint64_t notifications_lost;
};

/* A filter. Its hit counters (collectors/counters.h, tcx_filter_counters),
 * when its classifier keeps some, are in hvals[hv ...]: TCX_FCTR__MAX values
 * (bit k of hv_present: value k is the kernel's; the others are absent),
 * then n_keys hits of its u32 keys. */
struct tcx_filter {
	uint32_t target; /* index into targets[] */
	uint32_t chain;
	uint32_t handle;
	uint16_t pref;
	uint16_t protocol; /* host order */
	uint8_t flags;     /* TCX_FLAG_*, 0 when the classifier reports none */
	uint8_t kind;      /* index into kinds[] */
	uint8_t has_flags;
	uint8_t merged; /* the same identity as an earlier filter: not shown */
	uint16_t n_actions;
	uint8_t hv_present; /* 0: no hit counters */
	uint8_t n_keys;
	uint32_t first_action;
	uint32_t hv;
};

/* The times of an action (the kernel's struct tcf_t), each in milliseconds
 * of Unix time: when it was installed, last used and first used. The
 * kernel gives their ages in USER_HZ ticks as of its reply; the decoder
 * subtracts them from the wall clock read with the reply
 * (tcx_snapshot_clock()). A full dump has them (TCA_<KIND>_TM in the
 * action's options), a terse one does not: collectors/liveness.h keeps the
 * times of terse rows from one full dump to the next. */
enum tcx_tm {
	TCX_TM_INSTALLED = 0,
	TCX_TM_LAST_USED,  /* the install time while never used (the kernel's) */
	TCX_TM_FIRST_USED, /* absent while never used (firstuse 0 and no packet) */
	TCX_TM__MAX,
};

struct tcx_action {
	uint32_t filter; /* index into filters[] */
	uint32_t index;  /* action index, 0 when the dump does not carry it */
	uint16_t order;
	uint8_t kind; /* index into kinds[] */
	uint8_t cookie_len;
	uint8_t cookie[TCX_COOKIE_MAX];
	uint8_t drop;       /* dropped by `unmapped: drop` */
	uint8_t merged;     /* added to an earlier action of the same identity: not shown */
	uint8_t tm_present; /* bit (1 << enum tcx_tm): tm[k] is known */
	uint32_t labels;    /* its label set, set by tcx_snapshot_classify() */
	uint64_t c[TCX_ACT_CTR__MAX]; /* its counters (tcx_action_counters) */
	int64_t tm[TCX_TM__MAX];      /* its times (enum tcx_tm), ms of Unix time */
};

/* Copy a cookie of n <= TCX_COOKIE_MAX bytes as at most two overlapping
 * copies of fixed size. GCC makes a memcpy() of a variable size this small
 * a `rep movs` (a quarter of tcx_parse_filter()'s own time at 100k u32
 * rules), or a byte loop with configure's -mmemcpy-strategy. */
static inline void tcx_cookie_copy(uint8_t *to, const uint8_t *from, size_t n)
{
	if (n >= 8) {
		memcpy(to, from, 8);
		memcpy(to + n - 8, from + n - 8, 8);
	} else if (n >= 4) {
		memcpy(to, from, 4);
		memcpy(to + n - 4, from + n - 4, 4);
	} else {
		for (size_t k = 0; k < n; k++)
			to[k] = from[k];
	}
}

/* Fold the times of b into a, as rows of one identity and aggregates
 * combine them: the earliest install and first use, the latest last use. */
static inline void tcx_times_fold(uint8_t *a_present, int64_t *a, uint8_t b_present,
                                  const int64_t *b)
{
	for (unsigned k = 0; k < TCX_TM__MAX; k++) {
		int later = k == TCX_TM_LAST_USED;

		if (!(b_present & (1u << k)))
			continue;
		if (!(*a_present & (1u << k)) || (later ? b[k] > a[k] : b[k] < a[k]))
			a[k] = b[k];
		*a_present |= (uint8_t)(1u << k);
	}
}

/* Why a netlink message or target failed, counted by cause. */
enum tcx_err_cause {
	TCX_ERR_MALFORMED = 0, /* message failed validation */
	TCX_ERR_KERNEL,        /* kernel returned an error */
	TCX_ERR_NOTFOUND,      /* device, qdisc, block or netns missing */
	TCX_ERR_IO,            /* socket error, or TCX_NETNS_DIR unreadable */
	TCX_ERR_NOMEM,
	TCX_ERR_RESOURCE, /* no fd or kernel memory left (EMFILE, ENFILE, ENOMEM; lib/fds.h) */
	TCX_ERR__MAX,
};

/* Received netlink datagrams dropped, by cause. */
/* Why a pass asked every qdisc and class of a namespace for its filters,
 * not only those known to hold some: the namespace is new to the collector
 * (its first pass, or its source opened again), an addition notification
 * may have been lost, the configuration was reloaded, or sweep_interval. */
enum tcx_sweep_reason {
	TCX_SWEEP_NEW = 0,
	TCX_SWEEP_LOST,
	TCX_SWEEP_RELOAD,
	TCX_SWEEP_INTERVAL,
	TCX_SWEEP__MAX,
};

enum tcx_nldrop_cause {
	TCX_NLDROP_SENDER = 0, /* not sent by the kernel: dropped unread */
	TCX_NLDROP_LENGTH,     /* a message length that does not fit: the rest dropped */
	TCX_NLDROP__MAX,
};

/* The user label values of the rows, interned by tcx_snapshot_classify():
 * each distinct cookie is resolved once, into a set of its own when
 * something maps it; actions without a cookie share set
 * TCX_LABELSET_NONE, actions whose cookie nothing maps share set
 * TCX_LABELSET_UNMAPPED (every value empty in both). */
#define TCX_LABELSET_NONE     0
#define TCX_LABELSET_UNMAPPED 1
struct tcx_labelsets {
	size_t n, cap;   /* sets */
	size_t n_labels; /* values per set: the configuration's labels */
	uint8_t *map;    /* each set's enum tcx_map_kind */
	uint32_t *value; /* n * n_labels offsets into text */
	char *text;      /* the values, each NUL-terminated; "" at offset 0 */
	size_t text_len, text_cap;
};

/* A device whose qdiscs and classes the pass collected (by an `all` or a
 * `dev` target). Its rows are contiguous in qdiscs[] and classes[]. */
struct tcx_qdev {
	char netns[64];
	char dev[IFNAMSIZ];
	uint32_t ifindex;
	int ok; /* 0: its classes could not be dumped (error says why) */
	char error[256];
	uint32_t first_qdisc, n_qdiscs, first_class, n_classes;
};

struct tcx_xstats_table;

/* The rates of a qdisc or class row, from two collections' counters. */
enum tcx_qrate {
	TCX_QRATE_BYTES = 0, /* bytes per second */
	TCX_QRATE_PACKETS,
	TCX_QRATE_DROPS,
	TCX_QRATE__MAX,
};

/* A qdisc or a class. Its per-kind statistics (tcx_qrow_xt()'s fields)
 * are in xvals[xs ...]: its table's n_fields values, then for each of
 * n_tins tins its present mask and the table's n_tin_fields values. 128
 * bytes: two snapshots of rows are alive while one is built and the other
 * served (50k HTB leaves with their qdiscs: 12.8 MB each). */
struct tcx_qrow {
	uint32_t qdev;   /* index into qdevs[] */
	uint32_t handle; /* qdisc 1: = 0x10000; class 1:10 = 0x10010 */
	uint32_t parent; /* TC_H_ROOT, TC_H_INGRESS (ingress, clsact), a class */
	uint32_t labels; /* a class's label set (`classes:`); TCX_LABELSET_NONE */
	/* A class: the qdisc attached to it, its index into qdiscs[] + 1, or
	 * 0 when none is listed (HTB's and hfsc's default leaf qdisc is not).
	 * Set by tcx_snapshot_link_classes(), as inner. */
	uint32_t child_qdisc;
	uint32_t xs_present; /* bit i: xvals[xs + i] */
	uint32_t xs;
	/* Its plans (collectors/plans.h): tcx_qrow_pt()'s n values at
	 * xvals[pl ...] (shared by rows with the same plans), bit i of
	 * pl_present for row i. */
	uint32_t pl, pl_present;
	uint16_t stats_present; /* bit (1 << enum tcx_qstat) */
	uint8_t kind;           /* index into kinds[] */
	uint8_t n_tins;
	/* A class: 1 when another class of its device hangs from it (an inner
	 * class), else 0 (a leaf). */
	uint8_t inner;
	uint8_t rates_present; /* bit k: rates[k] (enum tcx_qrate) */
	uint8_t xt_id;         /* tcx_xstats_tables[xt_id - 1]; 0: no per-kind statistics */
	uint8_t pt_id;         /* tcx_plans_tables[pt_id - 1]; 0: no plans */
	/* Its bytes, packets and drops per second between the collection
	 * before and this one (collectors/qrates.h): absent in a first
	 * collection, for a row new since the one before, or one whose
	 * counters went down (another object of the same identity). Shown by
	 * the landing page. */
	float rates[TCX_QRATE__MAX];
	uint64_t c[TCX_QSTAT__MAX];
};

_Static_assert(sizeof(struct tcx_qrow) == 128, "a qdisc or class row in 128 bytes");
_Static_assert(TCX_XSTATS_N_TABLES < UINT8_MAX, "xt_id: a table's place + 1 in a byte");

static inline const struct tcx_xstats_table *tcx_qrow_xt(const struct tcx_qrow *r)
{
	return r->xt_id ? tcx_xstats_tables[r->xt_id - 1] : NULL;
}

static inline const struct tcx_plans_table *tcx_qrow_pt(const struct tcx_qrow *r)
{
	return r->pt_id ? tcx_plans_tables[r->pt_id - 1] : NULL;
}

struct tcx_aggregates;
struct tcx_finals;

struct tcx_snapshot {
	atomic_uint refcnt;
	struct tcx_config *cfg; /* labels are resolved through it; a reference is held */
	struct timespec taken;  /* CLOCK_REALTIME at the start of the pass */
	/* The clocks the decoder reads action times against
	 * (tcx_snapshot_clock()): the wall clock and the time since boot, in
	 * milliseconds, and USER_HZ. */
	int64_t tm_clock_ms, tm_boot_ms;
	long tm_hz;
	/* Action ages longer than the time since boot, clamped to it (a
	 * kernel's reply cannot hold one). */
	uint64_t tm_clamped;
	/* 1: every filter was dumped in full, the rows of terse targets
	 * too, for their times (`liveness_interval`, tcx_collect()). */
	int liveness_pass;
	double duration_s;
	/* Seconds between the start of the collection before and this one's,
	 * over which the rows' rates are (tcx_qrow.rates); 0: no rates. */
	double rates_interval_s;

	struct tcx_target *targets;
	size_t n_targets, cap_targets;
	struct tcx_filter *filters;
	size_t n_filters, cap_filters;
	struct tcx_action *actions;
	size_t n_actions, cap_actions;
	/* Qdiscs and classes, by device (tcx_qdev). */
	struct tcx_qdev *qdevs;
	size_t n_qdevs, cap_qdevs;
	struct tcx_qrow *qdiscs;
	size_t n_qdiscs, cap_qdiscs;
	struct tcx_qrow *classes;
	size_t n_classes, cap_classes;
	uint64_t *xvals;
	size_t n_xvals, cap_xvals;
	uint64_t *hvals; /* the filters' hit counters (tcx_filter.hv) */
	size_t n_hvals, cap_hvals;

	char kinds[TCX_MAX_KINDS][TCX_KIND_MAX];
	unsigned n_kinds;
	uint8_t kind_hint[2]; /* the kinds interned last, tried first */
	int reuse;            /* its row arrays go to the next collection (tcx_snapshot_reuse) */

	struct tcx_labelsets sets;

	uint64_t errors[TCX_ERR__MAX];
	uint64_t unmapped_cookies; /* actions whose cookie nothing maps */
	uint64_t dropped_rows;     /* actions dropped by `unmapped: drop` */
	/* Datagrams the collector's sockets dropped since it was made. */
	uint64_t netlink_dropped[TCX_NLDROP__MAX];
	/* Deletion notifications lost since the collector was made (notify.h:
	 * the kernel's queue full, or not readable), over every namespace,
	 * those of sockets closed since included. */
	uint64_t notifications_lost;
	/* Namespaces whose every qdisc and class the collector asked for
	 * filters since it was made, by reason (units.c, sweeps). */
	uint64_t sweeps[TCX_SWEEP__MAX];
	uint64_t merged_filters; /* filters merged by tcx_snapshot_merge() */
	uint64_t merged_actions;
	int incomplete; /* the pass could not finish (out of memory) */
	/* With `aggregate`: the aggregates as of this pass (collectors/agg.h),
	 * set by tcx_agg_update(); NULL otherwise. */
	struct tcx_aggregates *aggs;
	/* With `aggregate`: the final rows of the filters deleted by handle,
	 * drained before the pass's dumps, of its dump units (collect.h); folded
	 * and freed by tcx_agg_update(). NULL when there are none. */
	struct tcx_finals *finals;
	/* With `aggregate`: the aggregates of the filters' hit counters
	 * (tcx_agg_new_hits()), and the final hit counters of those filters
	 * deleted by handle that had some, as aggs and finals. */
	struct tcx_aggregates *hit_aggs;
	struct tcx_finals *hit_finals;
};

struct tcx_snapshot *tcx_snapshot_new(struct tcx_config *cfg);
/* s, new and empty, is a collection's: its row arrays are those of the last
 * collection's snapshot freed, if any, and go back for the next one when s
 * is freed (see snapshot.c). */
void tcx_snapshot_reuse(struct tcx_snapshot *s);
struct tcx_snapshot *tcx_snapshot_ref(struct tcx_snapshot *s);
void tcx_snapshot_unref(struct tcx_snapshot *s);
/* The memory that s holds (its rows, label sets and aggregates; not its
 * configuration, which snapshots share). */
size_t tcx_snapshot_bytes(const struct tcx_snapshot *s);

/* Builders, used by the collector while the snapshot is still private. */
struct tcx_target *tcx_snapshot_add_target(struct tcx_snapshot *s);
struct tcx_filter *tcx_snapshot_add_filter(struct tcx_snapshot *s);
struct tcx_action *tcx_snapshot_add_action(struct tcx_snapshot *s);
/* Fill the identity of a dump unit (a device parent, or a shared block when
 * block is not 0) and mark it collected: the collector's targets and those
 * of deletion notifications (notify.c) are made alike. */
void tcx_target_init(struct tcx_target *t, const char *netns, const char *dev, uint32_t ifindex,
                     uint32_t block, uint32_t parent);
/* A target for people (log lines, the landing page): "block 22", "dev eth0
 * parent ingress" or "all", then " netns NAME" when with_netns and it has
 * one. Returns out; TCX_TARGET_DESC_MAX holds any target. */
#define TCX_TARGET_DESC_MAX 128
const char *tcx_describe_target(const struct tcx_target *t, int with_netns, char *out,
                                size_t outlen);
/* Read the clocks action times are decoded against (tm_clock_ms,
 * tm_boot_ms): the reply being decoded was read just before. */
void tcx_snapshot_clock(struct tcx_snapshot *s);
/* Kind names compared as NUL-padded arrays of TCX_KIND_MAX bytes (as
 * tcx_attr_str() fills a zeroed array, and kinds[] holds them): two words,
 * not a strcmp() call (1.3% of the daemon's CPU at 100k u32 rules). */
static inline int tcx_kind_eq(const char a[TCX_KIND_MAX], const char b[TCX_KIND_MAX])
{
	return memcmp(a, b, TCX_KIND_MAX) == 0;
}

/* Intern a kind given as a padded array (tcx_kind_eq()); returns its index,
 * or -1 when the table is full. */
int tcx_snapshot_kind_padded(struct tcx_snapshot *s, const char kind[TCX_KIND_MAX]);
/* The same for a kind string (cut to TCX_KIND_MAX - 1 characters): for
 * callers that hold a C string, not a padded array (the unit tests). */
int tcx_snapshot_kind(struct tcx_snapshot *s, const char *kind);
/* Room for the hit counters of filter f, TCX_FCTR__MAX + n_keys values,
 * zeroed: sets f->hv and f->n_keys and returns the values, or NULL when out
 * of memory. The caller sets f->hv_present. */
uint64_t *tcx_snapshot_add_hvals(struct tcx_snapshot *s, struct tcx_filter *f, unsigned n_keys);
/* Drop the rows added after the given marks (a failed target keeps none),
 * and the hit counters of the filters dropped. */
void tcx_snapshot_truncate(struct tcx_snapshot *s, size_t n_filters, size_t n_actions);
/* ---- row identity ---------------------------------------------------------------- */

/* Series identity. A filter is identified by its target, chain, protocol,
 * pref, kind and handle: the labels of tc_filter_flags_info. An action by
 * its filter's identity, its order, its kind and its cookie: the labels of
 * the tc_action_* series (the configured labels follow from the cookie), of
 * a JSON row, and the key of an SNMP row. No two rows shown may share one:
 * tcx_snapshot_merge() keeps the first row of each identity and adds the
 * counters of the others to it, counting them in merged_filters and
 * merged_actions. Two filters of a target share one where u32 gives every
 * filter past the 4095th of a hash table bucket the same handle (800::fff),
 * and where a dump resumed after a change between its chunks lists a filter
 * or a tp again (the kernel resumes filter dumps by count); their actions
 * share one when their order, kind and cookie are the same too. Within one
 * snapshot, it compares targets and kinds by their index (two targets are
 * two dump units, and no two units print alike: units.c). Rows in the kernel's dump order are compared with the
 * row before them only (see snapshot.c). Call it once the rows are
 * complete. Returns 0, or -1 when out of memory (then nothing is merged,
 * and the snapshot is incomplete). */
int tcx_snapshot_merge(struct tcx_snapshot *s);

/* An action row's identity by value, as its labels say it: what outlives
 * the snapshot (indices into its tables do not), for aggregation members,
 * the final rows of deleted filters and SNMP rows. Zero it before filling
 * it in: ids are compared and hashed as bytes. */
struct tcx_row_id {
	char netns[64];
	char dev[IFNAMSIZ];        /* "" for a block */
	char parent[24];           /* as the parent label: "ingress", "1:", "block" */
	char kind[TCX_KIND_MAX];   /* classifier */
	char action[TCX_KIND_MAX]; /* action kind */
	uint32_t block, chain, handle;
	uint16_t pref, protocol, order;
	uint8_t cookie_len;
	uint8_t cookie[TCX_COOKIE_MAX];
	uint8_t pad[5]; /* zero: the size is a multiple of 8 */
};

/* The identity of action row i of s. */
void tcx_row_id_of(const struct tcx_snapshot *s, size_t i, struct tcx_row_id *id);
/* The identity of filter row i of s: its part of its actions' identities,
 * the action's fields zero (the labels of tc_filter_flags_info), for SNMP
 * filter rows. */
void tcx_filter_id_of(const struct tcx_snapshot *s, size_t i, struct tcx_row_id *id);

static inline uint64_t tcx_row_id_hash(const struct tcx_row_id *id)
{
	return tcx_hash_bytes(0, id, sizeof(*id));
}

static inline int tcx_row_id_equal(const struct tcx_row_id *a, const struct tcx_row_id *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* A qdisc's or class's identity by value, as its labels say it (less a
 * class's parent: a class moved under another parent is the same class),
 * for SNMP rows. Compared and hashed as bytes, as tcx_row_id. */
struct tcx_qrow_id {
	char netns[64];
	char dev[IFNAMSIZ];
	char kind[TCX_KIND_MAX];
	uint32_t handle; /* a qdisc's handle, a class's id */
	uint32_t parent; /* a qdisc's parent; 0 for a class */
};

/* The identity of qdisc row i (classes: 0) or class row i of s. */
void tcx_qrow_id_of(const struct tcx_snapshot *s, int is_class, size_t i, struct tcx_qrow_id *id);

/* A row's counters by value: an action's, indexed as tcx_action_counters,
 * or a filter's hit counters, indexed as tcx_filter_counters in the first
 * TCX_FCTR__MAX (the rest 0). */
struct tcx_counters {
	uint64_t v[TCX_ACT_CTR__MAX];
};
_Static_assert((int)TCX_FCTR__MAX <= (int)TCX_ACT_CTR__MAX,
               "filter hit counters fit in tcx_counters");

static inline void tcx_counters_of(const struct tcx_action *a, struct tcx_counters *c)
{
	memcpy(c->v, a->c, sizeof(c->v));
}

/* Is the action seen now (counters now, action index `index`) another
 * action than the one seen last under its identity (was, was_index)? Its
 * action index changed (both known: full dumps), or a counter that only
 * grows went down (bytes, packets): `tc filter replace`, or a filter made
 * again. Another counter that goes down alone was reset, the action is the
 * same. */
static inline int tcx_action_replaced(const uint64_t *was, uint32_t was_index, const uint64_t *now,
                                      uint32_t index)
{
	return (index && was_index && index != was_index) ||
	       tcx_counters_replaced(&tcx_action_counters, was, now);
}

/* The final rows of deleted filters that a pass drained, by value: an
 * action's (s->finals: identity, counters and action index, 0 when
 * unknown) or a filter's hit counters (s->hit_finals: the filter's
 * identity, index 0). present: bit k, counter k is the kernel's (every
 * counter of an action; a filter's hv_present). */
struct tcx_final {
	struct tcx_row_id id;
	struct tcx_counters c;
	uint32_t index;
	uint32_t present;
	uint8_t tm_present; /* an action's times, as tcx_action's */
	int64_t tm[TCX_TM__MAX];
};

struct tcx_finals {
	struct tcx_final *f;
	size_t n, cap;
};

/* Append action row i of s (a drained snapshot) to *fs, made when NULL.
 * Returns 0, or -1 when out of memory. */
int tcx_finals_add(struct tcx_finals **fs, const struct tcx_snapshot *s, size_t i);
/* The same for the hit counters of filter row i of s (which has some). */
int tcx_hit_finals_add(struct tcx_finals **fs, const struct tcx_snapshot *s, size_t i);
void tcx_finals_free(struct tcx_finals *fs);

/* With `aggregate`: one snapshot's aggregates (collectors/agg.h makes
 * them), immutable: what the renderers read. */
struct tcx_aggregates {
	size_t n;        /* aggregates */
	size_t n_labels; /* kept labels, each aggregate has a value for each */
	/* The kept labels in output order: the built-in ones first (in the
	 * order of enum tcx_builtin_label), then the user ones. */
	const char *names[TCX_BL__MAX + TCX_MAX_LABELS];
	/* The label is left out of an aggregate whose value is empty (device
	 * and parent for a block, block for a device, netns outside one), as
	 * the same labels are on the rows. */
	uint8_t optional[TCX_BL__MAX + TCX_MAX_LABELS];
	uint32_t *value; /* n * n_labels offsets into text */
	char *text;
	struct tcx_counters *c; /* n */
	double *created;        /* n: when it first appeared in this process (Unix time) */
	/* n: bit k, counter k is the aggregate's (some member or final of it
	 * had it: every counter of an action; the hit counters a filter's
	 * classifier keeps). The others are absent, never 0. */
	uint32_t *present;
	uint32_t nonzero; /* bit k: some aggregate has counter k not 0 */
	/* n, of actions (NULL for the hit counters'): the aggregate's times
	 * (tcx_action's), folded over its members and finals by
	 * tcx_times_fold() since it appeared. */
	uint8_t *tm_present;
	int64_t (*tm)[TCX_TM__MAX];
};

static inline const char *tcx_aggregate_value(const struct tcx_aggregates *g, size_t i, size_t k)
{
	return g->text + g->value[i * g->n_labels + k];
}

void tcx_aggregates_free(struct tcx_aggregates *g);

/* Is the action row shown (neither dropped by policy nor merged)? */
static inline int tcx_action_shown(const struct tcx_action *a)
{
	return !a->drop && !a->merged;
}

/* Resolve each distinct cookie of the actions through cfg, once, into the
 * label sets: sets each action's labels and drop, and the unmapped_cookies
 * and dropped_rows counts. The one place where cookies are resolved: every
 * output reads the sets. */
void tcx_snapshot_classify(struct tcx_snapshot *s);

/* Value i (0 .. sets.n_labels - 1) of label set `set`. */
static inline const char *tcx_labelset_value(const struct tcx_snapshot *s, uint32_t set, size_t i)
{
	return set < s->sets.n ? s->sets.text + s->sets.value[set * s->sets.n_labels + i] : "";
}

/* How the cookies of label set `set` were mapped. */
static inline enum tcx_map_kind tcx_labelset_map(const struct tcx_snapshot *s, uint32_t set)
{
	return set < s->sets.n ? (enum tcx_map_kind)s->sets.map[set] : TCX_MAP_NONE;
}
/* Number of targets that failed (plus one when the pass was incomplete). */
size_t tcx_snapshot_failed_targets(const struct tcx_snapshot *s);

/* What failed in s, appended to b one line each, ending in '\n': each
 * failed target, as "target dev eth0 parent ingress netns red: <why>" (the
 * targets that share a reason in one line, in the order of the first: "300
 * targets: <why> (all netns a, all netns b, all netns c and 297 more)"), then
 * each device whose classes could not be dumped, as "device eth0 netns red:
 * <why>". Returns the number of failed targets and devices. */
struct tcx_buf;
size_t tcx_snapshot_failures(const struct tcx_snapshot *s, struct tcx_buf *b);
/* Return spare capacity once the snapshot is complete. */
/* Set each class's inner and child_qdisc from the rows of its device.
 * Returns 0, or -1 when out of memory (then every class is a leaf without
 * a qdisc). */
int tcx_snapshot_link_classes(struct tcx_snapshot *s);
void tcx_snapshot_seal(struct tcx_snapshot *s);

static inline const char *tcx_kind_name(const struct tcx_snapshot *s, uint8_t k)
{
	return k < s->n_kinds ? s->kinds[k] : "";
}

#endif
