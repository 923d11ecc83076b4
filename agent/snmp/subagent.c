/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The AgentX subagent.
 *
 * One thread owns every net-snmp call (net-snmp is not thread-safe). It
 * sleeps in agent_check_and_process(); the collector wakes it through an
 * eventfd registered with register_readfd() when it publishes a snapshot,
 * and the thread then builds the rows of its tables (agent/snmp/rows.c:
 * actions, qdiscs, classes, filters) from it. Requests are answered by one handler
 * over the whole tcxObjects subtree, with binary searches over the rows: a
 * walk costs O(n log n).
 *
 * Reconnection: the AgentX ping interval is set after init_agent() (which
 * resets it), sessions time out after a second with no retry, and a master
 * that is absent at start or restarts is found again on the next ping. Each
 * connection measures the master's sysUpTime anew, for the TimeStamps; the
 * failures in between are logged once per cause (connect_failed()). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/agent/net-snmp-agent-includes.h>
#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/agent/agent_sysORTable.h>

#include "lib/buf.h"
#include "agent/log.h"
#include "agent/snmp/mib.h"
#include "agent/snmp/subagent.h"
#include "agent/snmp/rows.h"
#include "collectors/names.h"
#include "lib/clock.h"

struct tcx_snmp {
	pthread_t thread;
	int efd;
	atomic_int stop;
	char *socket;
	int ping_interval;
	/* highest column of each table with counters (tcxActionEntry, ...) */
	unsigned max_col[TCX_SNMP__TABLES];
	struct tcx_snapshot *(*current)(void *arg); /* a reference to the latest snapshot */
	void *current_arg;
	/* owned by the thread */
	struct tcx_snmp_ids ids[TCX_SNMP__TABLES];
	struct tcx_snmp_rows rows[TCX_SNMP__TABLES]; /* of one snapshot */
	int have_rows;
	int64_t uptime_offset; /* the master's sysUpTime minus clock_now() */
	/* the connection to the master, for the log */
	unsigned failures;   /* attempts failed since the last connection */
	uint64_t down_since; /* clock_now() of the first of them */
	uint64_t warned_at;  /* clock_now() of the last warning */
	int warned_errno;    /* and its cause */
};

static const oid objects_oid[] = {TCX_MIB_OBJECTS};
static const oid scalars_oid[] = {TCX_MIB_SCALARS};
static oid mib_oid[] = {TCX_MIB_ROOT}; /* net-snmp takes it non-const */

#define N_OID(a) (sizeof(a) / sizeof((a)[0]))

#define LAST_SCALAR TCX_SCALAR_FILTER_TABLE_LAST_CHANGE

/* ---- time ------------------------------------------------------------------------------- */

/* Now on the clock of the rows' times (agent/snmp/rows.h). */
static uint64_t clock_now(void)
{
	return tcx_clock_ms(CLOCK_MONOTONIC) / 10;
}

/* Measure the offset between the master's sysUpTime and the rows' clock.
 * net-snmp sets the subagent's sysUpTime to the master's from the response to
 * each AgentX Open, so this runs when the subagent (re)connects: after the
 * master restarted, the times are rebased on its new start, and those from
 * before it become 0 (RFC 2579). One measure per connection keeps the
 * TimeStamps still between connections, as managers compare them across
 * polls. The one hundredth subtracted covers the rounding of both clocks:
 * a TimeStamp is never later than the master's sysUpTime. */
static void measure_uptime_offset(struct tcx_snmp *sn)
{
	uint64_t now = clock_now();

	sn->uptime_offset = (int64_t)netsnmp_get_agent_uptime() - (int64_t)now - 1;
}

/* ---- logging and the connection to the master ------------------------------------------ */

/* While the master cannot be reached, net-snmp tries again every ping
 * interval and logs every failure. The first one is logged with its cause,
 * then the same cause at most every WARN_REPEAT_S, a new cause at once, and
 * one line when the subagent connects again. */
#define WARN_REPEAT_S 600

static const char *master_name(const struct tcx_snmp *sn)
{
	return sn->socket ? sn->socket : NETSNMP_AGENTX_SOCKET;
}

static void connect_failed(struct tcx_snmp *sn, int err)
{
	uint64_t now = clock_now();
	char cause[512];

	if (!sn->failures++)
		sn->down_since = now;
	else if (err == sn->warned_errno && now - sn->warned_at < WARN_REPEAT_S * 100)
		return;
	sn->warned_at = now;
	sn->warned_errno = err;
	if (err == EACCES)
		snprintf(cause, sizeof(cause),
		         "permission denied: uid %u may not search the socket's directory or "
		         "write to the socket (a stock snmpd makes its directory 0700 root; "
		         "'agentXPerms 0660 0755 root GROUP' in snmpd.conf, GROUP being "
		         "tcexporter's, opens the socket; an existing directory must be made 0755 "
		         "by hand)",
		         (unsigned)geteuid());
	else if (err)
		snprintf(cause, sizeof(cause), "%s", strerror(err));
	else
		snprintf(cause, sizeof(cause), "net-snmp gave no cause");
	if (sn->failures == 1)
		log_warnx("snmp: cannot connect to the AgentX master at %s: %s; trying again "
		          "every %d s, this warning repeats at most every %d minutes",
		          master_name(sn), cause, sn->ping_interval, WARN_REPEAT_S / 60);
	else
		log_warnx("snmp: still cannot connect to the AgentX master at %s: %s (%u attempts "
		          "failed in %llu s)",
		          master_name(sn), cause, sn->failures,
		          (unsigned long long)(now - sn->down_since) / 100);
}

/* SNMPD_CALLBACK_INDEX_START: the subagent has connected to the master. */
static int on_connect(int major, int minor, void *server_arg, void *client_arg)
{
	struct tcx_snmp *sn = client_arg;

	measure_uptime_offset(sn);
	if (sn->failures)
		log_info("snmp: connected to the AgentX master at %s after %u failed attempts in "
		         "%llu s",
		         master_name(sn), sn->failures,
		         (unsigned long long)(clock_now() - sn->down_since) / 100);
	else
		log_info("snmp: connected to the AgentX master at %s", master_name(sn));
	sn->failures = 0;
	return 0;
}

static int log_cb(int major, int minor, void *server_arg, void *client_arg)
{
	/* net-snmp logs a failed connection right after the failed connect(),
	 * with no cause in the message: errno still holds it. */
	int err = errno;
	const struct snmp_log_message *m = server_arg;
	char msg[512];
	size_t n;

	if (!m || !m->msg)
		return 0;
	if (strstr(m->msg, "Failed to connect to the agentx master agent")) {
		connect_failed(client_arg, err);
		return 0;
	}
	if (strstr(m->msg, "AgentX subagent connected"))
		return 0; /* on_connect() says it */
	snprintf(msg, sizeof(msg), "%s", m->msg);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	if (n)
		tcx_log(m->priority <= LOG_ERR ? LOG_WARNING : m->priority, "snmp: %s", msg);
	return 0;
}

/* ---- values ---------------------------------------------------------------------------- */

/* A name or label value, by the exposition's rule for bytes that are not
 * UTF-8 (tcx_buf_escape()). */
static void set_str(netsnmp_variable_list *v, const char *s)
{
	struct tcx_buf b;

	tcx_buf_init_mem(&b);
	tcx_buf_escape(&b, s, TCX_ESC_NONE);
	if (b.err) /* out of memory: an empty string rather than bytes that are not UTF-8 */
		b.len = 0;
	snmp_set_var_typed_value(v, ASN_OCTET_STR, b.len ? b.p : "", b.len);
	tcx_buf_free(&b);
}

static void set_u32(netsnmp_variable_list *v, u_char type, uint32_t x)
{
	u_long l = x;

	snmp_set_var_typed_value(v, type, &l, sizeof(l));
}

static void set_c64(netsnmp_variable_list *v, uint64_t x)
{
	struct counter64 c = {.high = (u_long)(x >> 32), .low = (u_long)(x & 0xffffffffu)};

	snmp_set_var_typed_value(v, ASN_COUNTER64, &c, sizeof(c));
}

static void set_timestamp(struct tcx_snmp *sn, netsnmp_variable_list *v, uint64_t t)
{
	set_u32(v, ASN_TIMETICKS, tcx_snmp_timestamp(t, sn->uptime_offset));
}

/* The counter of table t in column col, of a row's counters c. */
static void counter_value(const struct tcx_counter_table *t, const uint64_t *c, unsigned col,
                          netsnmp_variable_list *v)
{
	for (unsigned k = 0; k < t->n; k++) {
		if (t->def[k].snmp_col != col)
			continue;
		switch (t->def[k].snmp) {
		case TCX_SNMP_COUNTER64:
			set_c64(v, c[k]);
			break;
		case TCX_SNMP_COUNTER32:
			set_u32(v, ASN_COUNTER, (uint32_t)c[k]);
			break;
		case TCX_SNMP_GAUGE32:
			set_u32(v, ASN_GAUGE, c[k] > UINT32_MAX ? UINT32_MAX : (uint32_t)c[k]);
			break;
		case TCX_SNMP_NONE:
			break;
		}
		return;
	}
}

/* The highest column of a table whose own highest is col, and whose
 * counters are those of t. */
static unsigned max_col(unsigned col, const struct tcx_counter_table *t)
{
	for (unsigned k = 0; k < t->n; k++)
		if (t->def[k].snmp && t->def[k].snmp_col > col)
			col = t->def[k].snmp_col;
	return col;
}

/* The ifIndex of a device: only an interface of the agent's own namespace
 * joins IF-MIB. */
static void set_ifindex(netsnmp_variable_list *v, const char *netns, uint32_t ifindex)
{
	long ifi = netns[0] ? 0 : (long)ifindex;

	snmp_set_var_typed_value(v, ASN_INTEGER, &ifi, sizeof(ifi));
}

/* A column of a filter's identity, in tcxActionEntry's numbering (those of
 * tcxFilterEntry are the same): 1, or 0 when col is not one. */
static int filter_column(const struct tcx_snapshot *s, const struct tcx_filter *f, unsigned col,
                         netsnmp_variable_list *v)
{
	const struct tcx_target *t = &s->targets[f->target];
	char buf[64];

	_Static_assert((int)TCX_COL_FILTER_NETNS == (int)TCX_COL_ACTION_NETNS &&
	                       (int)TCX_COL_FILTER_DEVICE == (int)TCX_COL_ACTION_DEVICE &&
	                       (int)TCX_COL_FILTER_IF_INDEX == (int)TCX_COL_ACTION_IF_INDEX &&
	                       (int)TCX_COL_FILTER_BLOCK == (int)TCX_COL_ACTION_BLOCK &&
	                       (int)TCX_COL_FILTER_PARENT == (int)TCX_COL_ACTION_PARENT &&
	                       (int)TCX_COL_FILTER_CHAIN == (int)TCX_COL_ACTION_CHAIN &&
	                       (int)TCX_COL_FILTER_PREF == (int)TCX_COL_ACTION_PREF &&
	                       (int)TCX_COL_FILTER_PROTOCOL == (int)TCX_COL_ACTION_PROTOCOL &&
	                       (int)TCX_COL_FILTER_CLASSIFIER == (int)TCX_COL_ACTION_CLASSIFIER &&
	                       (int)TCX_COL_FILTER_HANDLE == (int)TCX_COL_ACTION_HANDLE,
	               "tcxFilterEntry's identity columns are tcxActionEntry's");
	switch (col) {
	case TCX_COL_ACTION_NETNS:
		set_str(v, t->netns);
		break;
	case TCX_COL_ACTION_DEVICE:
		set_str(v, t->block ? "" : t->dev);
		break;
	case TCX_COL_ACTION_IF_INDEX:
		set_ifindex(v, t->netns, t->block ? 0 : t->ifindex);
		break;
	case TCX_COL_ACTION_BLOCK:
		set_u32(v, ASN_UNSIGNED, t->block);
		break;
	case TCX_COL_ACTION_PARENT:
		set_str(v, t->parent_name);
		break;
	case TCX_COL_ACTION_CHAIN:
		set_u32(v, ASN_UNSIGNED, f->chain);
		break;
	case TCX_COL_ACTION_PREF:
		set_u32(v, ASN_UNSIGNED, f->pref);
		break;
	case TCX_COL_ACTION_PROTOCOL:
		set_str(v, tcx_protocol_name(f->protocol, buf, sizeof(buf)));
		break;
	case TCX_COL_ACTION_CLASSIFIER:
		set_str(v, tcx_kind_name(s, f->kind));
		break;
	case TCX_COL_ACTION_HANDLE:
		tcx_format_handle(tcx_kind_name(s, f->kind), f->handle, buf, sizeof(buf));
		set_str(v, buf);
		break;
	default:
		return 0;
	}
	return 1;
}

/* An action's column: its filter's identity, its own, its counters, its
 * discontinuity time, its times (those the row has: the caller checks
 * tcx_snmp_has()). */
static void action_value(struct tcx_snmp *sn, const struct tcx_snmp_row *row, unsigned col,
                         netsnmp_variable_list *v)
{
	const struct tcx_snapshot *s = sn->rows[TCX_SNMP_ACTIONS].snap;
	const struct tcx_action *a = &s->actions[row->obj];
	uint8_t dt[TCX_SNMP_DATE_AND_TIME_LEN];
	int truth = 0;
	long l;

	if (filter_column(s, &s->filters[a->filter], col, v))
		return;
	switch (col) {
	case TCX_COL_ACTION_ORDER:
		set_u32(v, ASN_UNSIGNED, a->order);
		break;
	case TCX_COL_ACTION_KIND:
		set_str(v, tcx_kind_name(s, a->kind));
		break;
	case TCX_COL_ACTION_COOKIE:
		snmp_set_var_typed_value(v, ASN_OCTET_STR, a->cookie, a->cookie_len);
		break;
	case TCX_COL_ACTION_DISCONTINUITY_TIME:
		set_timestamp(sn, v, row->discontinuity);
		break;
	case TCX_COL_ACTION_INSTALL_TIME:
	case TCX_COL_ACTION_LAST_USE_TIME:
		if (tcx_snmp_action_time(&sn->rows[TCX_SNMP_ACTIONS], row, col, dt, &truth))
			snmp_set_var_typed_value(v, ASN_OCTET_STR, dt, sizeof(dt));
		break;
	case TCX_COL_ACTION_NEVER_USED:
		if (tcx_snmp_action_time(&sn->rows[TCX_SNMP_ACTIONS], row, col, dt, &truth)) {
			l = truth;
			snmp_set_var_typed_value(v, ASN_INTEGER, &l, sizeof(l));
		}
		break;
	default:
		counter_value(&tcx_action_counters, a->c, col, v);
		break;
	}
}

/* A filter's column: its identity, its hit counters (those it has: the
 * caller checks tcx_snmp_has()), its discontinuity time. */
static void filter_value(struct tcx_snmp *sn, const struct tcx_snmp_row *row, unsigned col,
                         netsnmp_variable_list *v)
{
	const struct tcx_snapshot *s = sn->rows[TCX_SNMP_FILTERS].snap;
	const struct tcx_filter *f = &s->filters[row->obj];

	if (filter_column(s, f, col, v))
		return;
	if (col == TCX_COL_FILTER_DISCONTINUITY_TIME)
		set_timestamp(sn, v, row->discontinuity);
	else
		counter_value(&tcx_filter_counters, s->hvals + f->hv, col, v);
}

/* A qdisc's (t TCX_SNMP_QDISCS) or a class's column; the two tables have
 * the same columns up to the discontinuity time; then their plans (those
 * the row has: the caller checks tcx_snmp_has()). */
static void qrow_value(struct tcx_snmp *sn, enum tcx_snmp_table t, const struct tcx_snmp_row *row,
                       unsigned col, netsnmp_variable_list *v)
{
	const struct tcx_snapshot *s = sn->rows[t].snap;
	const struct tcx_qrow *q =
	        t == TCX_SNMP_CLASSES ? &s->classes[row->obj] : &s->qdiscs[row->obj];
	const struct tcx_qdev *d = &s->qdevs[q->qdev];
	char buf[32];
	uint64_t x;
	int wide;

	_Static_assert((int)TCX_COL_CLASS_DISCONTINUITY_TIME ==
	                               (int)TCX_COL_QDISC_DISCONTINUITY_TIME &&
	                       (int)TCX_COL_CLASS_PARENT == (int)TCX_COL_QDISC_PARENT,
	               "tcxClassEntry's columns are tcxQdiscEntry's");
	switch (col) {
	case TCX_COL_QDISC_NETNS:
		set_str(v, d->netns);
		break;
	case TCX_COL_QDISC_DEVICE:
		set_str(v, d->dev);
		break;
	case TCX_COL_QDISC_IF_INDEX:
		set_ifindex(v, d->netns, d->ifindex);
		break;
	case TCX_COL_QDISC_KIND:
		set_str(v, tcx_kind_name(s, q->kind));
		break;
	case TCX_COL_QDISC_HANDLE:
		tcx_format_qhandle(q->handle, buf, sizeof(buf));
		set_str(v, buf);
		break;
	case TCX_COL_QDISC_PARENT:
		tcx_format_qparent(q->parent, tcx_kind_name(s, q->kind), buf, sizeof(buf));
		set_str(v, buf);
		break;
	case TCX_COL_QDISC_DISCONTINUITY_TIME:
		set_timestamp(sn, v, row->discontinuity);
		break;
	default:
		if (tcx_snmp_plan(&sn->rows[t], row, col, &x, &wide)) {
			if (wide)
				set_c64(v, x);
			else /* (a 32-bit field of the kernel's: never above) */
				set_u32(v, ASN_UNSIGNED, x > UINT32_MAX ? UINT32_MAX : (uint32_t)x);
			break;
		}
		counter_value(t == TCX_SNMP_CLASSES ? &tcx_class_counters : &tcx_qdisc_counters,
		              q->c, col, v);
		break;
	}
}

/* A column of a label table (tcxLabelEntry, tcxClassLabelEntry) of the rows
 * r: the label's name, or its value. */
static void label_value(const struct tcx_snmp_rows *r, const struct tcx_snmp_row *row, unsigned col,
                        uint32_t label, netsnmp_variable_list *v)
{
	_Static_assert((int)TCX_COL_LABEL_NAME == (int)TCX_COL_CLASS_LABEL_NAME &&
	                       (int)TCX_COL_LABEL_VALUE == (int)TCX_COL_CLASS_LABEL_VALUE,
	               "the label tables have the same columns");
	if (col == TCX_COL_LABEL_NAME) {
		set_str(v, r->snap->cfg->labels[label - 1]);
		return;
	}
	set_str(v, tcx_snmp_label_value(r, row, label));
}

static void scalar_value(struct tcx_snmp *sn, unsigned which, netsnmp_variable_list *v)
{
	const struct tcx_snmp_rows *r = sn->rows;
	const struct tcx_snapshot *s = r[TCX_SNMP_ACTIONS].snap;
	size_t failed = tcx_snapshot_failed_targets(s);
	long status;

	switch (which) {
	case TCX_SCALAR_ACTION_ROWS:
		set_u32(v, ASN_GAUGE, (uint32_t)r[TCX_SNMP_ACTIONS].n);
		break;
	case TCX_SCALAR_ACTION_TABLE_LAST_CHANGE:
		set_timestamp(sn, v, r[TCX_SNMP_ACTIONS].last_change);
		break;
	case TCX_SCALAR_LAST_COLLECTION_TIME:
		set_timestamp(sn, v, r[TCX_SNMP_ACTIONS].built_at);
		break;
	case TCX_SCALAR_LAST_COLLECTION_STATUS:
		status = !failed                 ? TCX_LAST_COLLECTION_STATUS_OK
		         : failed < s->n_targets ? TCX_LAST_COLLECTION_STATUS_PARTIAL
		                                 : TCX_LAST_COLLECTION_STATUS_FAILED;
		snmp_set_var_typed_value(v, ASN_INTEGER, &status, sizeof(status));
		break;
	case TCX_SCALAR_TARGETS_FAILED:
		set_u32(v, ASN_GAUGE, (uint32_t)failed);
		break;
	case TCX_SCALAR_QDISC_ROWS:
		set_u32(v, ASN_GAUGE, (uint32_t)r[TCX_SNMP_QDISCS].n);
		break;
	case TCX_SCALAR_QDISC_TABLE_LAST_CHANGE:
		set_timestamp(sn, v, r[TCX_SNMP_QDISCS].last_change);
		break;
	case TCX_SCALAR_CLASS_ROWS:
		set_u32(v, ASN_GAUGE, (uint32_t)r[TCX_SNMP_CLASSES].n);
		break;
	case TCX_SCALAR_CLASS_TABLE_LAST_CHANGE:
		set_timestamp(sn, v, r[TCX_SNMP_CLASSES].last_change);
		break;
	case TCX_SCALAR_FILTER_ROWS:
		set_u32(v, ASN_GAUGE, (uint32_t)r[TCX_SNMP_FILTERS].n);
		break;
	case TCX_SCALAR_FILTER_TABLE_LAST_CHANGE:
		set_timestamp(sn, v, r[TCX_SNMP_FILTERS].last_change);
		break;
	default:
		break;
	}
}

/* ---- GET / GETNEXT over the tcxObjects subtree -------------------------------------------- */

/* The tables of tcxObjects, in OID order: an entry, its rows, its columns,
 * and for a label table, INDEX (row index, label number). */
struct table {
	oid entry[MAX_OID_LEN];
	size_t entry_len;
	enum tcx_snmp_table rows;
	unsigned min_col, max_col; /* max_col 0: sn->max_col[rows] */
	int labels;
};

#define ENTRY(...) {__VA_ARGS__}, N_OID(((const oid[]){__VA_ARGS__}))
static const struct table tables[] = {
        {ENTRY(TCX_MIB_ACTION_ENTRY), TCX_SNMP_ACTIONS, TCX_ACTION_MIN_COL, 0, 0},
        {ENTRY(TCX_MIB_LABEL_ENTRY), TCX_SNMP_ACTIONS, TCX_LABEL_MIN_COL, TCX_LABEL_MAX_COL, 1},
        {ENTRY(TCX_MIB_QDISC_ENTRY), TCX_SNMP_QDISCS, TCX_QDISC_MIN_COL, 0, 0},
        {ENTRY(TCX_MIB_CLASS_ENTRY), TCX_SNMP_CLASSES, TCX_CLASS_MIN_COL, 0, 0},
        {ENTRY(TCX_MIB_CLASS_LABEL_ENTRY), TCX_SNMP_CLASSES, TCX_CLASS_LABEL_MIN_COL,
         TCX_CLASS_LABEL_MAX_COL, 1},
        {ENTRY(TCX_MIB_FILTER_ENTRY), TCX_SNMP_FILTERS, TCX_FILTER_MIN_COL, 0, 0},
};
#undef ENTRY

static unsigned table_max_col(const struct tcx_snmp *sn, const struct table *t)
{
	return t->max_col ? t->max_col : sn->max_col[t->rows];
}

static size_t n_labels(const struct tcx_snmp *sn)
{
	const struct tcx_snapshot *s = sn->rows[TCX_SNMP_ACTIONS].snap;

	return s->cfg ? s->cfg->n_labels : 0;
}

/* The value of a table's column of a row (and label). */
static void table_value(struct tcx_snmp *sn, const struct table *t, const struct tcx_snmp_row *row,
                        unsigned col, uint32_t label, netsnmp_variable_list *v)
{
	if (t->labels)
		label_value(&sn->rows[t->rows], row, col, label, v);
	else if (t->rows == TCX_SNMP_ACTIONS)
		action_value(sn, row, col, v);
	else if (t->rows == TCX_SNMP_FILTERS)
		filter_value(sn, row, col, v);
	else
		qrow_value(sn, t->rows, row, col, v);
}

/* Does oid o (len n) start with prefix p (len pn)? */
static int has_prefix(const oid *o, size_t n, const oid *p, size_t pn)
{
	return n >= pn && netsnmp_oid_equals(o, pn, p, pn) == 0;
}

/* Answer one GET: 0, or -1 when there is no such instance. */
static int do_get(struct tcx_snmp *sn, netsnmp_variable_list *v)
{
	const oid *o = v->name;
	size_t n = v->name_length;

	if (!sn->have_rows)
		return -1;
	if (has_prefix(o, n, scalars_oid, N_OID(scalars_oid))) {
		size_t k = N_OID(scalars_oid);

		if (n != k + 2 || o[k + 1] != 0 || o[k] < 1 || o[k] > LAST_SCALAR)
			return -1;
		scalar_value(sn, (unsigned)o[k], v);
		return 0;
	}
	for (size_t i = 0; i < N_OID(tables); i++) {
		const struct table *t = &tables[i];
		size_t k = t->entry_len, nidx = t->labels ? 2 : 1;
		const struct tcx_snmp_row *row;

		if (!has_prefix(o, n, t->entry, k))
			continue;
		if (n != k + 1 + nidx || o[k] < t->min_col || o[k] > table_max_col(sn, t) ||
		    o[k + 1] > UINT32_MAX ||
		    (t->labels && (o[k + 2] < 1 || o[k + 2] > n_labels(sn))) ||
		    !(row = tcx_snmp_rows_find(&sn->rows[t->rows], (uint32_t)o[k + 1])) ||
		    (!t->labels && !tcx_snmp_has(&sn->rows[t->rows], row, (unsigned)o[k])))
			return -1;
		table_value(sn, t, row, (unsigned)o[k], t->labels ? (uint32_t)o[k + 2] : 0, v);
		return 0;
	}
	return -1;
}

/* Where a request OID stands relative to a table entry prefix: the
 * (column, index...) to search strictly after. Returns -1 when the OID is
 * past the whole table. */
static int table_cursor(const oid *o, size_t n, const oid *entry, size_t en, unsigned max_col,
                        unsigned nidx, uint32_t *col, uint32_t idx[2])
{
	int c = snmp_oid_compare(o, n < en ? n : en, entry, en);

	idx[0] = idx[1] = 0;
	*col = 0;
	if (c < 0 || (c == 0 && n <= en))
		return 0; /* before the table: start at its beginning */
	if (c > 0)
		return -1;
	if (o[en] > max_col)
		return -1;
	*col = (uint32_t)o[en];
	for (unsigned i = 0; i < nidx; i++) {
		if (n <= en + 1 + i)
			return 0;
		if (o[en + 1 + i] > UINT32_MAX) {
			/* past every index of this column */
			idx[0] = UINT32_MAX;
			idx[1] = UINT32_MAX;
			return 0;
		}
		idx[i] = (uint32_t)o[en + 1 + i];
	}
	/* An OID longer than a whole instance is after that instance: for the
	 * label table, (index, label) already compares as "after". */
	return 0;
}

static void set_name(netsnmp_variable_list *v, const oid *prefix, size_t pn, const oid *tail,
                     size_t tn)
{
	oid name[MAX_OID_LEN];

	memcpy(name, prefix, pn * sizeof(oid));
	memcpy(name + pn, tail, tn * sizeof(oid));
	snmp_set_var_objid(v, name, pn + tn);
}

/* Answer one GETNEXT: 0, or -1 when nothing follows in our subtree. */
static int do_getnext(struct tcx_snmp *sn, netsnmp_variable_list *v)
{
	const oid *o = v->name;
	size_t n = v->name_length;

	if (!sn->have_rows)
		return -1;
	/* scalars */
	for (unsigned s = 1; s <= LAST_SCALAR; s++) {
		oid inst[2] = {s, 0};
		oid full[MAX_OID_LEN];

		memcpy(full, scalars_oid, sizeof(scalars_oid));
		memcpy(full + N_OID(scalars_oid), inst, sizeof(inst));
		if (snmp_oid_compare(full, N_OID(scalars_oid) + 2, o, n) > 0) {
			set_name(v, scalars_oid, N_OID(scalars_oid), inst, 2);
			scalar_value(sn, s, v);
			return 0;
		}
	}
	for (size_t i = 0; i < N_OID(tables); i++) {
		const struct table *t = &tables[i];
		const struct tcx_snmp_rows *r = &sn->rows[t->rows];
		unsigned max = table_max_col(sn, t), ncol;
		const struct tcx_snmp_row *row;
		uint32_t col, idx[2], nlabel = 0;
		int found;

		if (table_cursor(o, n, t->entry, t->entry_len, max, t->labels ? 2 : 1, &col, idx) <
		    0)
			continue;
		if (t->labels)
			found = tcx_snmp_label_next(r, (unsigned)n_labels(sn), t->min_col, max, col,
			                            idx[0], idx[1], &ncol, &row, &nlabel);
		else
			found = tcx_snmp_next(r, t->min_col, max, col, idx[0], &ncol, &row);
		if (found) {
			oid tail[3] = {ncol, row->index, nlabel};

			set_name(v, t->entry, t->entry_len, tail, t->labels ? 3 : 2);
			table_value(sn, t, row, ncol, nlabel, v);
			return 0;
		}
	}
	return -1;
}

static int handler(netsnmp_mib_handler *h, netsnmp_handler_registration *reg,
                   netsnmp_agent_request_info *info, netsnmp_request_info *requests)
{
	struct tcx_snmp *sn = h->myvoid;

	for (netsnmp_request_info *r = requests; r; r = r->next) {
		if (r->processed)
			continue;
		switch (info->mode) {
		case MODE_GET:
			if (do_get(sn, r->requestvb) < 0)
				netsnmp_set_request_error(info, r, SNMP_NOSUCHINSTANCE);
			break;
		case MODE_GETNEXT:
			/* Nothing after it here: leave it for the next subtree. */
			do_getnext(sn, r->requestvb);
			break;
		default:
			netsnmp_set_request_error(info, r, SNMP_ERR_NOTWRITABLE);
			break;
		}
	}
	return SNMP_ERR_NOERROR;
}

/* ---- the thread ------------------------------------------------------------------------- */

static void free_rows(struct tcx_snmp_rows *rows, size_t n)
{
	for (size_t t = 0; t < n; t++)
		tcx_snmp_rows_free(&rows[t]);
}

static void refresh(struct tcx_snmp *sn)
{
	struct tcx_snapshot *s = sn->current(sn->current_arg);
	struct tcx_snmp_rows nr[TCX_SNMP__TABLES];
	uint64_t now = clock_now();

	if (!s)
		return;
	for (size_t t = 0; t < TCX_SNMP__TABLES; t++) {
		if (tcx_snmp_rows_build(&sn->ids[t], s, now, sn->have_rows ? &sn->rows[t] : NULL,
		                        &nr[t]) < 0) {
			log_err("snmp: out of memory; serving the previous rows");
			free_rows(nr, t);
			tcx_snapshot_unref(s);
			return;
		}
	}
	tcx_snapshot_unref(s);
	if (sn->have_rows)
		free_rows(sn->rows, TCX_SNMP__TABLES);
	memcpy(sn->rows, nr, sizeof(nr));
	sn->have_rows = 1;
}

static void on_event(int fd, void *arg)
{
	struct tcx_snmp *sn = arg;
	uint64_t x;

	if (read(fd, &x, sizeof(x)) < 0 && errno != EAGAIN)
		log_warnx("snmp: eventfd: %s", strerror(errno));
	if (!atomic_load(&sn->stop))
		refresh(sn);
}

static void *snmp_main(void *arg)
{
	struct tcx_snmp *sn = arg;
	netsnmp_handler_registration *reg;

	netsnmp_enable_subagent();
	snmp_disable_log();
	snmp_enable_calllog();
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, log_cb, sn);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_PERSIST_STATE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_LOAD_HOST_FILES, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_NO_ROOT_ACCESS, 1);
	/* Alarms run from agent_check_and_process(), not from SIGALRM. */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	if (sn->socket)
		netsnmp_ds_set_string(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_X_SOCKET,
		                      sn->socket);
	/* Better to lose the master than to block on it. */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_TIMEOUT, 1);
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_RETRIES, 0);
	init_agent("tcexporter");
	/* init_agent() resets the ping interval: set it after. */
	netsnmp_ds_set_int(NETSNMP_DS_APPLICATION_ID, NETSNMP_DS_AGENT_AGENTX_PING_INTERVAL,
	                   sn->ping_interval);
	measure_uptime_offset(sn); /* our own sysUpTime, until a master answers */
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START, on_connect,
	                       sn);
	reg = netsnmp_create_handler_registration("tcexporter", handler, objects_oid,
	                                          N_OID(objects_oid), HANDLER_CAN_RONLY);
	if (!reg || !reg->handler) {
		log_err("snmp: cannot create the handler registration");
		goto out;
	}
	reg->handler->myvoid = sn;
	if (netsnmp_register_handler(reg) != MIB_REGISTERED_OK)
		log_err("snmp: cannot register the tcexporter subtree");
	log_info("snmp: AgentX subagent of the master at %s, pinging every %d s", master_name(sn),
	         sn->ping_interval);
	init_snmp("tcexporter");
	register_sysORTable(mib_oid, N_OID(mib_oid),
	                    "TCEXPORTER-MIB: Linux TC action, qdisc, class and filter counters");
	register_readfd(sn->efd, on_event, sn);
	refresh(sn);
	while (!atomic_load(&sn->stop))
		agent_check_and_process(1);
	unregister_readfd(sn->efd);
	unregister_sysORTable(mib_oid, N_OID(mib_oid));
out:
	/* (net-snmp's clear_callback() would free() their argument, sn) */
	snmp_unregister_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START, on_connect,
	                         sn, 1);
	snmp_unregister_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, log_cb, sn, 1);
	snmp_shutdown("tcexporter");
	shutdown_agent();
	if (sn->have_rows)
		free_rows(sn->rows, TCX_SNMP__TABLES);
	for (size_t t = 0; t < TCX_SNMP__TABLES; t++)
		tcx_snmp_ids_free(&sn->ids[t]);
	return NULL;
}

struct tcx_snmp *tcx_snmp_start(const struct tcx_snmp_cfg *cfg,
                                struct tcx_snapshot *(*current)(void *), void *arg)
{
	struct tcx_snmp *sn = calloc(1, sizeof(*sn));

	if (!sn)
		return NULL;
	atomic_init(&sn->stop, 0);
	sn->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sn->socket = cfg->agentx_socket ? strdup(cfg->agentx_socket) : NULL;
	sn->ping_interval = cfg->ping_interval_s;
	sn->max_col[TCX_SNMP_ACTIONS] = max_col(TCX_COL_ACTION_NEVER_USED, &tcx_action_counters);
	sn->max_col[TCX_SNMP_QDISCS] = max_col(TCX_COL_QDISC_DEFAULT_CLASS, &tcx_qdisc_counters);
	sn->max_col[TCX_SNMP_CLASSES] = max_col(TCX_COL_CLASS_LEVEL, &tcx_class_counters);
	sn->max_col[TCX_SNMP_FILTERS] =
	        max_col(TCX_COL_FILTER_DISCONTINUITY_TIME, &tcx_filter_counters);
	sn->current = current;
	sn->current_arg = arg;
	for (size_t t = 0; t < TCX_SNMP__TABLES; t++)
		tcx_snmp_ids_init(&sn->ids[t], (enum tcx_snmp_table)t);
	if (sn->efd < 0 || (cfg->agentx_socket && !sn->socket) ||
	    pthread_create(&sn->thread, NULL, snmp_main, sn) != 0) {
		log_err("snmp: cannot start the subagent thread");
		if (sn->efd >= 0)
			close(sn->efd);
		free(sn->socket);
		free(sn);
		return NULL;
	}
	return sn;
}

void tcx_snmp_notify(struct tcx_snmp *sn)
{
	uint64_t one = 1;

	if (sn && write(sn->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warnx("snmp: cannot wake the subagent: %s", strerror(errno));
}

void tcx_snmp_stop(struct tcx_snmp *sn)
{
	if (!sn)
		return;
	atomic_store(&sn->stop, 1);
	tcx_snmp_notify(sn);
	pthread_join(sn->thread, NULL);
	close(sn->efd);
	free(sn->socket);
	free(sn);
}
