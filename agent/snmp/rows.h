/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SNMP view of a snapshot, kept apart from net-snmp so that it can be
 * tested without an agent: stable surrogate indices per row identity
 * (struct tcx_row_id for actions and filters, struct tcx_qrow_id for
 * qdiscs and classes: collectors/snapshot.h), discontinuity times, the
 * counters each row has, and ordered lookups for GET and GETNEXT. One
 * mechanism for the four tables.
 *
 * Times (a row's last reset, the table's last change, a build) are kept on
 * the subagent's own clock: CLOCK_MONOTONIC in hundredths of a second, the
 * clock of net-snmp's netsnmp_get_monotonic_clock(). They become TimeStamps
 * (RFC 2579: the master's sysUpTime at the event) only when served, through
 * tcx_snmp_timestamp(), because the master's sysUpTime starts over when the
 * master restarts. */
#ifndef TCX_SNMP_ROWS_H
#define TCX_SNMP_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/snapshot.h"

/* The tables with surrogate indices, and the snapshot rows they show. */
enum tcx_snmp_table {
	TCX_SNMP_ACTIONS = 0, /* tcxActionTable: s->actions (those shown) */
	TCX_SNMP_QDISCS,      /* tcxQdiscTable: s->qdiscs */
	TCX_SNMP_CLASSES,     /* tcxClassTable: s->classes */
	TCX_SNMP_FILTERS,     /* tcxFilterTable: s->filters shown that have hit counters */
	TCX_SNMP__TABLES,
};

/* The identities of one table seen so far and the indices given to them;
 * lives as long as the agent. An index is never given twice. */
struct tcx_snmp_ids {
	enum tcx_snmp_table table;
	struct tcx_snmp_id *e; /* the identities */
	size_t n, cap;
	uint32_t *slots; /* open addressing: e's position + 1, 0 for none */
	size_t n_slots;
	uint32_t next_index; /* the next index to give, starting at 1 */
	uint32_t generation;
};

struct tcx_snmp_row {
	uint32_t index;
	uint32_t obj;           /* index into the snapshot's actions, qdiscs, classes or filters */
	uint64_t discontinuity; /* time of the last reset; 0: none since the agent started */
	/* Bit k: the row has counter k of its table's counters (a filter's
	 * hv_present; every counter of the other tables). */
	uint32_t present;
	/* An action's times that are known (its tm_present: bit
	 * 1 << enum tcx_tm); 0 in the other tables. */
	uint8_t tm_present;
};

/* The rows of one table of one snapshot, sorted by index. */
struct tcx_snmp_rows {
	enum tcx_snmp_table table;
	struct tcx_snapshot *snap; /* a reference is held */
	struct tcx_snmp_row *rows;
	size_t n;
	uint64_t last_change; /* time a row was last added or removed */
	uint64_t built_at;    /* time these rows were built */
};

void tcx_snmp_ids_init(struct tcx_snmp_ids *ids, enum tcx_snmp_table table);
void tcx_snmp_ids_free(struct tcx_snmp_ids *ids);

/* Build the rows of ids' table of snap. `now` is the current time; prev
 * (may be NULL) are the rows built last time, for last_change. Returns 0 or
 * -ENOMEM. */
int tcx_snmp_rows_build(struct tcx_snmp_ids *ids, struct tcx_snapshot *snap, uint64_t now,
                        const struct tcx_snmp_rows *prev, struct tcx_snmp_rows *out);
void tcx_snmp_rows_free(struct tcx_snmp_rows *r);

/* The TimeStamp of an event at time `event` (0: none): the master's sysUpTime
 * then, `offset` being its sysUpTime minus our time (measured when the
 * subagent connected); 0 when the event came before the master started. */
uint32_t tcx_snmp_timestamp(uint64_t event, int64_t offset);

/* The row with this index, or NULL. */
const struct tcx_snmp_row *tcx_snmp_rows_find(const struct tcx_snmp_rows *r, uint32_t index);

/* Has the row an instance in column col? Not when col is the column of a
 * counter the row lacks (a filter's hit counter its kernel does not keep),
 * nor when it is a plan's column the row's kind has no value for
 * (tcx_snmp_plan), nor when it is a column of an action's times and the
 * row's times are unknown (tcx_snmp_action_time). */
int tcx_snmp_has(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row, unsigned col);

/* The plan (collectors/plans.h) in column col of a qdisc's or a class's
 * row: 1 with its value in *out and *wide set when the column is a
 * TcxGauge64 (Counter64 on the wire; else an Unsigned32); 0 when col is not
 * a plan's column of r's table, or the row has no value for its role (its
 * kind has no such row, or it is unset): the row then has no instance in
 * that column. The value is tcx_plans_role()'s. */
int tcx_snmp_plan(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row, unsigned col,
                  uint64_t *out, int *wide);

/* Is col a plan's column of table t? */
int tcx_snmp_is_plan_col(enum tcx_snmp_table t, unsigned col);

/* SNMPv2-TC's TruthValue. */
enum { TCX_SNMP_TRUE = 1, TCX_SNMP_FALSE = 2 };

/* The length of a DateAndTime with its offset from UTC (RFC 2579). */
#define TCX_SNMP_DATE_AND_TIME_LEN 11

/* The DateAndTime of a time in ms of Unix time: UTC, deci-seconds
 * truncated, direction '+', offset 0 hours 0 minutes. A time before 1970
 * gives 1970-01-01,00:00:00.0 (as the JSON output clamps it to 0), one
 * past the year 9999 9999-12-31,23:59:59.9. */
void tcx_snmp_date_and_time(int64_t ms, uint8_t out[TCX_SNMP_DATE_AND_TIME_LEN]);

/* The value in column col of an action's row when col is a column of the
 * action's times: tcxActionInstallTime and tcxActionLastUseTime, the
 * DateAndTime of TCX_TM_INSTALLED and TCX_TM_LAST_USED in dt;
 * tcxActionNeverUsed, TCX_SNMP_TRUE in *truth when the row has no
 * TCX_TM_FIRST_USED, TCX_SNMP_FALSE when it has one. Returns 1; 0 when col
 * is not such a column of r's table, or the row's times are unknown (no
 * TCX_TM_INSTALLED, or for the last use no TCX_TM_LAST_USED): the row then
 * has no instance in that column. */
int tcx_snmp_action_time(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row,
                         unsigned col, uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN], int *truth);

/* The value of label `label` (1..n_labels) of a row: read from its action's
 * or class's label set ("" for a qdisc). */
const char *tcx_snmp_label_value(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row,
                                 uint32_t label);

/* GETNEXT in a table of columns min_col..max_col, ordered (column, index):
 * the first (column, index) after (col, index) that has an instance
 * (tcx_snmp_has). col 0 / index 0 mean "before everything". Returns 1 and
 * sets the outputs, or 0 past the table's end. */
int tcx_snmp_next(const struct tcx_snmp_rows *r, unsigned min_col, unsigned max_col, unsigned col,
                  uint32_t index, unsigned *ncol, const struct tcx_snmp_row **nrow);

/* The same for a table indexed (row index, label number 1..n_labels). */
int tcx_snmp_label_next(const struct tcx_snmp_rows *r, unsigned n_labels, unsigned min_col,
                        unsigned max_col, unsigned col, uint32_t index, uint32_t label,
                        unsigned *ncol, const struct tcx_snmp_row **nrow, uint32_t *nlabel);

#endif
