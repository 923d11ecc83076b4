/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/snmp/mib.h"
#include "agent/snmp/rows.h"
#include "collectors/plans.h"
#include "lib/hash.h"

#define MAX2(a, b)   ((int)(a) > (int)(b) ? (int)(a) : (int)(b))
#define MAX_COUNTERS MAX2(MAX2(TCX_ACT_CTR__MAX, TCX_QSTAT__MAX), TCX_FCTR__MAX)

/* A row identity of any table, zeroed past its member: compared and hashed
 * whole. A filter's is an action's without the action (tcx_filter_id_of). */
union tcx_snmp_key {
	struct tcx_row_id act;
	struct tcx_qrow_id q;
};

/* One identity seen so far, and its index. */
struct tcx_snmp_id {
	union tcx_snmp_key id;
	uint64_t hash;
	uint64_t discontinuity;
	uint64_t c[MAX_COUNTERS]; /* its counters when last seen, to see replacements */
	uint32_t index;
	uint32_t act_index; /* an action's kernel index when known, likewise */
	uint32_t generation;
};

static const struct tcx_counter_table *const table_counters[TCX_SNMP__TABLES] = {
        [TCX_SNMP_ACTIONS] = &tcx_action_counters,
        [TCX_SNMP_QDISCS] = &tcx_qdisc_counters,
        [TCX_SNMP_CLASSES] = &tcx_class_counters,
        [TCX_SNMP_FILTERS] = &tcx_filter_counters,
};

void tcx_snmp_ids_init(struct tcx_snmp_ids *ids, enum tcx_snmp_table table)
{
	memset(ids, 0, sizeof(*ids));
	ids->table = table;
	ids->next_index = 1;
}

void tcx_snmp_ids_free(struct tcx_snmp_ids *ids)
{
	free(ids->e);
	free(ids->slots);
	memset(ids, 0, sizeof(*ids));
}

/* The slot of id (hash h) in the index: its entry's, or the empty one it
 * would take. */
static uint32_t *slot_for(const struct tcx_snmp_ids *ids, const union tcx_snmp_key *id, uint64_t h)
{
	size_t mask = ids->n_slots - 1, i = h & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t *slot = &ids->slots[i];

		if (!*slot || (ids->e[*slot - 1].hash == h &&
		               !memcmp(&ids->e[*slot - 1].id, id, sizeof(*id))))
			return slot;
	}
}

/* Index the entries anew in n_slots slots, keeping those of the current
 * generation only when prune is set. */
static int reindex(struct tcx_snmp_ids *ids, size_t n_slots, int prune)
{
	uint32_t *slots = calloc(n_slots, sizeof(*slots));
	size_t kept = 0;

	if (!slots)
		return -ENOMEM;
	free(ids->slots);
	ids->slots = slots;
	ids->n_slots = n_slots;
	for (size_t i = 0; i < ids->n; i++) {
		if (prune && ids->e[i].generation != ids->generation)
			continue;
		ids->e[kept] = ids->e[i];
		*slot_for(ids, &ids->e[kept].id, ids->e[kept].hash) = (uint32_t)kept + 1;
		kept++;
	}
	ids->n = kept;
	return 0;
}

static int cmp_index(const void *a, const void *b)
{
	const struct tcx_snmp_row *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static size_t n_objects(const struct tcx_snapshot *s, enum tcx_snmp_table t)
{
	return t == TCX_SNMP_ACTIONS   ? s->n_actions
	       : t == TCX_SNMP_QDISCS  ? s->n_qdiscs
	       : t == TCX_SNMP_CLASSES ? s->n_classes
	                               : s->n_filters;
}

/* Row i of table t: 0 when it is not shown, else 1 with its identity,
 * counters, the counters it has (present) and (actions) kernel index. A
 * filter is shown when it is not merged and has hit counters; those it
 * lacks are 0 in its values (tcx_snapshot_add_hvals()). */
static int object_of(const struct tcx_snapshot *s, enum tcx_snmp_table t, size_t i,
                     union tcx_snmp_key *id, const uint64_t **c, uint32_t *present,
                     uint32_t *act_index)
{
	memset(id, 0, sizeof(*id));
	*act_index = 0;
	*present = (1u << table_counters[t]->n) - 1;
	switch (t) {
	case TCX_SNMP_ACTIONS:
		if (!tcx_action_shown(&s->actions[i]))
			return 0;
		tcx_row_id_of(s, i, &id->act);
		*c = s->actions[i].c;
		*act_index = s->actions[i].index;
		return 1;
	case TCX_SNMP_FILTERS:
		if (s->filters[i].merged || !s->filters[i].hv_present)
			return 0;
		tcx_filter_id_of(s, i, &id->act);
		*c = s->hvals + s->filters[i].hv;
		*present = s->filters[i].hv_present;
		return 1;
	default:
		tcx_qrow_id_of(s, t == TCX_SNMP_CLASSES, i, &id->q);
		*c = (t == TCX_SNMP_CLASSES ? s->classes : s->qdiscs)[i].c;
		return 1;
	}
}

/* Is the row's object another than the one last seen under its identity? */
static int replaced(enum tcx_snmp_table t, const struct tcx_snmp_id *e, const uint64_t *c,
                    uint32_t act_index)
{
	if (t == TCX_SNMP_ACTIONS)
		return tcx_action_replaced(e->c, e->act_index, c, act_index);
	return tcx_counters_replaced(table_counters[t], e->c, c);
}

/* Could rows of the table be missing from s for a failure rather than
 * gone? A failed target; for qdiscs and classes, a device whose classes
 * could not be dumped. */
static int partial(const struct tcx_snapshot *s, enum tcx_snmp_table t)
{
	int qrows = t == TCX_SNMP_QDISCS || t == TCX_SNMP_CLASSES;

	if (tcx_snapshot_failed_targets(s))
		return 1;
	for (size_t i = 0; qrows && i < s->n_qdevs; i++)
		if (!s->qdevs[i].ok)
			return 1;
	return 0;
}

int tcx_snmp_rows_build(struct tcx_snmp_ids *ids, struct tcx_snapshot *snap, uint64_t now,
                        const struct tcx_snmp_rows *prev, struct tcx_snmp_rows *out)
{
	enum tcx_snmp_table t = ids->table;
	size_t n_obj = n_objects(snap, t);
	int first = ids->generation == 0;

	memset(out, 0, sizeof(*out));
	out->table = t;
	out->rows = malloc((n_obj ? n_obj : 1) * sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	ids->generation++;
	for (size_t i = 0; i < n_obj; i++) {
		struct tcx_snmp_id *e;
		union tcx_snmp_key id;
		const uint64_t *c;
		uint32_t *slot, present, act_index;
		uint64_t h;

		if (!object_of(snap, t, i, &id, &c, &present, &act_index))
			continue;
		if ((ids->n + 1) * 2 > ids->n_slots &&
		    reindex(ids, ids->n_slots ? ids->n_slots * 2 : 1024, 0) < 0)
			goto oom;
		h = tcx_hash_bytes(0, &id, sizeof(id));
		slot = slot_for(ids, &id, h);
		if (!*slot) {
			if (ids->n == ids->cap) {
				size_t cap = ids->cap ? 2 * ids->cap : 1024;
				void *p = realloc(ids->e, cap * sizeof(*ids->e));

				if (!p)
					goto oom;
				ids->e = p;
				ids->cap = cap;
			}
			e = &ids->e[ids->n];
			*slot = (uint32_t)++ids->n;
			e->id = id;
			e->hash = h;
			e->index = ids->next_index++;
			/* A row that appears after the first collection starts
			 * its counters then. */
			e->discontinuity = first ? 0 : now;
		} else if ((e = &ids->e[*slot - 1])->generation == ids->generation) {
			continue; /* the same identity twice (targets that overlap): once */
		} else if (replaced(t, e, c, act_index)) {
			/* Replaced under the same identity: new counters. */
			e->discontinuity = now;
		}
		memcpy(e->c, c, table_counters[t]->n * sizeof(*c));
		e->act_index = act_index;
		e->generation = ids->generation;
		out->rows[out->n++] = (struct tcx_snmp_row){
		        e->index, (uint32_t)i, e->discontinuity, present,
		        t == TCX_SNMP_ACTIONS ? snap->actions[i].tm_present : 0};
	}
	/* Identities gone from a complete snapshot are forgotten; after a failed
	 * target they are kept, so that its rows keep their indices when it
	 * comes back. */
	if (!partial(snap, t) && ids->n > out->n && reindex(ids, ids->n_slots, 1) < 0)
		goto oom;
	qsort(out->rows, out->n, sizeof(*out->rows), cmp_index);
	out->snap = tcx_snapshot_ref(snap);
	out->last_change = now;
	out->built_at = now;
	if (prev && prev->n == out->n) {
		size_t k = 0;

		while (k < out->n && prev->rows[k].index == out->rows[k].index)
			k++;
		if (k == out->n)
			out->last_change = prev->last_change;
	}
	return 0;
oom:
	free(out->rows);
	memset(out, 0, sizeof(*out));
	return -ENOMEM;
}

void tcx_snmp_rows_free(struct tcx_snmp_rows *r)
{
	tcx_snapshot_unref(r->snap);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

uint32_t tcx_snmp_timestamp(uint64_t event, int64_t offset)
{
	int64_t t = (int64_t)event + offset;

	/* (TimeTicks wrap after 497 days, as the master's sysUpTime does.) */
	return event && t > 0 ? (uint32_t)t : 0;
}

/* The first row whose index is > index (or >= when inclusive). */
static size_t lower(const struct tcx_snmp_rows *r, uint32_t index, int inclusive)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->rows[mid].index < index || (!inclusive && r->rows[mid].index == index))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct tcx_snmp_row *tcx_snmp_rows_find(const struct tcx_snmp_rows *r, uint32_t index)
{
	size_t i = lower(r, index, 1);

	return i < r->n && r->rows[i].index == index ? &r->rows[i] : NULL;
}

const char *tcx_snmp_label_value(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row,
                                 uint32_t label)
{
	const struct tcx_snapshot *s = r->snap;
	uint32_t set;

	if (label < 1 || label > s->sets.n_labels ||
	    (r->table != TCX_SNMP_ACTIONS && r->table != TCX_SNMP_CLASSES))
		return "";
	set = r->table == TCX_SNMP_ACTIONS ? s->actions[row->obj].labels
	                                   : s->classes[row->obj].labels;
	return tcx_labelset_value(s, set, label - 1);
}

/* The bit in a row's present of the counter in column col of table t; 0
 * when col is not a counter's (every row has it). */
static uint32_t counter_bit(enum tcx_snmp_table t, unsigned col)
{
	const struct tcx_counter_table *ct = table_counters[t];

	for (unsigned k = 0; k < ct->n; k++)
		if (ct->def[k].snmp && ct->def[k].snmp_col == col)
			return 1u << k;
	return 0;
}

/* The plans' columns of the qdisc and class tables: the role each
 * shows, and whether it is a TcxGauge64 (rates and bursts may pass 2^32). */
struct plan_col {
	unsigned col;
	enum tcx_plan_role role;
	int wide;
};

static const struct plan_col qdisc_plan_cols[] = {
        {TCX_COL_QDISC_RATE, TCX_ROLE_RATE, 1},
        {TCX_COL_QDISC_BURST, TCX_ROLE_BURST, 1},
        {TCX_COL_QDISC_LIMIT_PACKETS, TCX_ROLE_LIMIT_PACKETS, 0},
        {TCX_COL_QDISC_LIMIT_BYTES, TCX_ROLE_LIMIT_BYTES, 0},
        {TCX_COL_QDISC_DEFAULT_CLASS, TCX_ROLE_DEFAULT_CLASS, 0},
};

static const struct plan_col class_plan_cols[] = {
        {TCX_COL_CLASS_RATE, TCX_ROLE_RATE, 1},   {TCX_COL_CLASS_CEIL, TCX_ROLE_CEIL, 1},
        {TCX_COL_CLASS_BURST, TCX_ROLE_BURST, 1}, {TCX_COL_CLASS_CBURST, TCX_ROLE_CBURST, 1},
        {TCX_COL_CLASS_PRIO, TCX_ROLE_PRIO, 0},   {TCX_COL_CLASS_QUANTUM, TCX_ROLE_QUANTUM, 0},
        {TCX_COL_CLASS_LEVEL, TCX_ROLE_LEVEL, 0},
};

/* The plan column col of table t, or NULL. */
static const struct plan_col *plan_col(enum tcx_snmp_table t, unsigned col)
{
	const struct plan_col *pc = t == TCX_SNMP_QDISCS    ? qdisc_plan_cols
	                            : t == TCX_SNMP_CLASSES ? class_plan_cols
	                                                    : NULL;
	size_t n = t == TCX_SNMP_QDISCS    ? sizeof(qdisc_plan_cols) / sizeof(*pc)
	           : t == TCX_SNMP_CLASSES ? sizeof(class_plan_cols) / sizeof(*pc)
	                                   : 0;

	for (size_t i = 0; i < n; i++)
		if (pc[i].col == col)
			return &pc[i];
	return NULL;
}

int tcx_snmp_is_plan_col(enum tcx_snmp_table t, unsigned col)
{
	return plan_col(t, col) != NULL;
}

int tcx_snmp_plan(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row, unsigned col,
                  uint64_t *out, int *wide)
{
	const struct plan_col *pc = plan_col(r->table, col);
	const struct tcx_qrow *q;

	if (!pc)
		return 0;
	q = r->table == TCX_SNMP_CLASSES ? &r->snap->classes[row->obj] : &r->snap->qdiscs[row->obj];
	if (!q->pt_id ||
	    !tcx_plans_role(tcx_qrow_pt(q), r->snap->xvals + q->pl, q->pl_present, pc->role, out))
		return 0;
	*wide = pc->wide;
	return 1;
}

/* The bit in an action row's tm_present that column col of table t needs:
 * the time it shows, or for tcxActionNeverUsed the install time (the times
 * are known); 0 when col is not a column of an action's times. */
static uint8_t time_bit(enum tcx_snmp_table t, unsigned col)
{
	if (t != TCX_SNMP_ACTIONS)
		return 0;
	switch (col) {
	case TCX_COL_ACTION_INSTALL_TIME:
	case TCX_COL_ACTION_NEVER_USED:
		return 1u << TCX_TM_INSTALLED;
	case TCX_COL_ACTION_LAST_USE_TIME:
		return 1u << TCX_TM_LAST_USED;
	default:
		return 0;
	}
}

/* 9999-12-31 23:59:59.999 UTC in ms of Unix time: a later time (which no
 * kernel gives) shows as this one rather than with a year past 9999. */
#define DATE_AND_TIME_MAX_MS 253402300799999LL

void tcx_snmp_date_and_time(int64_t ms, uint8_t out[TCX_SNMP_DATE_AND_TIME_LEN])
{
	time_t secs;
	struct tm tm;

	if (ms < 0)
		ms = 0;
	else if (ms > DATE_AND_TIME_MAX_MS)
		ms = DATE_AND_TIME_MAX_MS;
	secs = (time_t)(ms / 1000);
	if (!gmtime_r(&secs, &tm)) /* (cannot fail in that range) */
		memset(&tm, 0, sizeof(tm));
	out[0] = (uint8_t)((tm.tm_year + 1900) >> 8);
	out[1] = (uint8_t)((tm.tm_year + 1900) & 0xff);
	out[2] = (uint8_t)(tm.tm_mon + 1);
	out[3] = (uint8_t)tm.tm_mday;
	out[4] = (uint8_t)tm.tm_hour;
	out[5] = (uint8_t)tm.tm_min;
	out[6] = (uint8_t)tm.tm_sec; /* (60 never: Unix time has no leap seconds) */
	out[7] = (uint8_t)(ms % 1000 / 100);
	out[8] = '+';
	out[9] = 0;
	out[10] = 0;
}

int tcx_snmp_action_time(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row,
                         unsigned col, uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN], int *truth)
{
	uint8_t bit = time_bit(r->table, col);
	const struct tcx_action *a;

	if (!bit || !(row->tm_present & bit))
		return 0;
	a = &r->snap->actions[row->obj];
	if (col == TCX_COL_ACTION_NEVER_USED)
		*truth = a->tm_present & (1u << TCX_TM_FIRST_USED) ? TCX_SNMP_FALSE : TCX_SNMP_TRUE;
	else
		tcx_snmp_date_and_time(a->tm[col == TCX_COL_ACTION_INSTALL_TIME ? TCX_TM_INSTALLED
		                                                                : TCX_TM_LAST_USED],
		                       dt);
	return 1;
}

int tcx_snmp_has(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row, unsigned col)
{
	uint32_t bit = counter_bit(r->table, col);
	uint8_t tbit = time_bit(r->table, col);
	uint64_t v;
	int wide;

	if (plan_col(r->table, col))
		return tcx_snmp_plan(r, row, col, &v, &wide);
	if (tbit)
		return (row->tm_present & tbit) != 0;
	return !bit || (row->present & bit);
}

int tcx_snmp_next(const struct tcx_snmp_rows *r, unsigned min_col, unsigned max_col, unsigned col,
                  uint32_t index, unsigned *ncol, const struct tcx_snmp_row **nrow)
{
	if (!r->n)
		return 0;
	if (col < min_col) {
		col = min_col;
		index = 0;
	}
	for (; col <= max_col; col++, index = 0) {
		uint32_t bit = counter_bit(r->table, col);
		uint8_t tbit = time_bit(r->table, col);
		size_t i = lower(r, index, 0);
		uint64_t v;
		int wide;

		/* (successive calls go on from where the last stopped: a walk
		 * of a column passes each row once; a counter's or a time's
		 * column tests a bit per row, as a million action rows want) */
		if (tcx_snmp_is_plan_col(r->table, col))
			while (i < r->n && !tcx_snmp_plan(r, &r->rows[i], col, &v, &wide))
				i++;
		else if (tbit)
			while (i < r->n && !(r->rows[i].tm_present & tbit))
				i++;
		else if (bit)
			while (i < r->n && !(r->rows[i].present & bit))
				i++;
		if (i < r->n) {
			*ncol = col;
			*nrow = &r->rows[i];
			return 1;
		}
	}
	return 0;
}

int tcx_snmp_label_next(const struct tcx_snmp_rows *r, unsigned n_labels, unsigned min_col,
                        unsigned max_col, unsigned col, uint32_t index, uint32_t label,
                        unsigned *ncol, const struct tcx_snmp_row **nrow, uint32_t *nlabel)
{
	if (!r->n || !n_labels)
		return 0;
	if (col < min_col) {
		col = min_col;
		index = 0;
		label = 0;
	}
	for (; col <= max_col; col++, index = 0, label = 0) {
		size_t i = lower(r, index, 1);

		if (i < r->n && r->rows[i].index == index && label < n_labels) {
			*ncol = col;
			*nrow = &r->rows[i];
			*nlabel = label + 1;
			return 1;
		}
		if (i < r->n && r->rows[i].index == index)
			i++;
		if (i < r->n) {
			*ncol = col;
			*nrow = &r->rows[i];
			*nlabel = 1;
			return 1;
		}
	}
	return 0;
}
