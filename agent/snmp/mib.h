/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The OIDs of TCEXPORTER-MIB (mibs/TCEXPORTER-MIB.txt), as comma-separated
 * integers for net-snmp `oid` arrays:
 *
 *	static const oid action_entry[] = {TCX_MIB_ACTION_ENTRY};
 *
 * Every OID derives from TCX_MIB_ROOT: moving the module (to the project's
 * own IANA Private Enterprise Number, for instance) is a change of that one
 * #define plus the `::=` line of the MODULE-IDENTITY in the MIB.
 *
 * Names follow the MIB mechanically so that tests/integration/smilint.sh can
 * check them against it: tcxFooBar is TCX_COL_FOO_BAR (a column),
 * TCX_SCALAR_FOO_BAR (a scalar) or TCX_MIB_FOO_BAR (a subtree);
 * TCX_<TABLE>_MIN_COL/MAX_COL bound a table's accessible columns; an
 * enumeration value name(n) of tcxFooBar is TCX_FOO_BAR_NAME. The columns
 * of counters are not here but in their counter table (collectors/
 * counters.h): tcx<Object><Key> is the column snmp_col of the counter of
 * that key (tcxActionHwBytes: "hw_bytes"), and a table with such columns
 * has no MAX_COL, its highest column being its own or a counter's. */
#ifndef TCX_MIB_H
#define TCX_MIB_H

/* The root of TCEXPORTER-MIB: netSnmpPlaypen.4242, net-snmp's arc for
 * private experimentation (1.3.6.1.4.1.8072.9999.9999), a development
 * placement until the project has an IANA Private Enterprise Number. */
#define TCX_MIB_ROOT 1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 4242

#define TCX_MIB_OBJECTS      TCX_MIB_ROOT, 1
#define TCX_MIB_SCALARS      TCX_MIB_OBJECTS, 1
#define TCX_MIB_ACTION_TABLE TCX_MIB_OBJECTS, 2
#define TCX_MIB_ACTION_ENTRY TCX_MIB_ACTION_TABLE, 1
#define TCX_MIB_LABEL_TABLE  TCX_MIB_OBJECTS, 3
#define TCX_MIB_LABEL_ENTRY  TCX_MIB_LABEL_TABLE, 1

/* Scalars, under TCX_MIB_SCALARS (instance suffix .0). */
enum {
	TCX_SCALAR_ACTION_ROWS = 1,              /* Gauge32 */
	TCX_SCALAR_ACTION_TABLE_LAST_CHANGE = 2, /* TimeStamp */
	TCX_SCALAR_LAST_COLLECTION_TIME = 3,     /* TimeStamp */
	TCX_SCALAR_LAST_COLLECTION_STATUS = 4,   /* INTEGER, TCX_LAST_COLLECTION_STATUS_* */
	TCX_SCALAR_TARGETS_FAILED = 5,           /* Gauge32 */
};

/* tcxLastCollectionStatus. */
enum {
	TCX_LAST_COLLECTION_STATUS_OK = 1,
	TCX_LAST_COLLECTION_STATUS_PARTIAL = 2, /* some targets failed */
	TCX_LAST_COLLECTION_STATUS_FAILED = 3,
};

/* Columns of tcxActionEntry, INDEX { tcxActionIndex }, but for the
 * counters' (tcx_action_counters' snmp_col): the highest column is this
 * table's or a counter's (agent/snmp/subagent.c). From INSTALL_TIME on,
 * the action's times (collectors/snapshot.h's enum tcx_tm; agent/snmp/
 * rows.c): no instance in a row whose times are unknown. */
enum {
	TCX_COL_ACTION_INDEX = 1,               /* Unsigned32, not-accessible */
	TCX_COL_ACTION_NETNS = 2,               /* SnmpAdminString (SIZE(0..63)) */
	TCX_COL_ACTION_DEVICE = 3,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_ACTION_IF_INDEX = 4,            /* InterfaceIndexOrZero */
	TCX_COL_ACTION_BLOCK = 5,               /* Unsigned32 */
	TCX_COL_ACTION_PARENT = 6,              /* DisplayString (SIZE(0..23)) */
	TCX_COL_ACTION_CHAIN = 7,               /* Unsigned32 */
	TCX_COL_ACTION_PREF = 8,                /* Unsigned32 (0..65535) */
	TCX_COL_ACTION_PROTOCOL = 9,            /* DisplayString (SIZE(0..15)) */
	TCX_COL_ACTION_CLASSIFIER = 10,         /* DisplayString (SIZE(0..15)) */
	TCX_COL_ACTION_HANDLE = 11,             /* DisplayString (SIZE(0..31)) */
	TCX_COL_ACTION_ORDER = 12,              /* Unsigned32 (1..32) */
	TCX_COL_ACTION_KIND = 13,               /* DisplayString (SIZE(0..15)) */
	TCX_COL_ACTION_COOKIE = 14,             /* OCTET STRING (SIZE(0..16)) */
	TCX_COL_ACTION_DISCONTINUITY_TIME = 21, /* TimeStamp */
	TCX_COL_ACTION_INSTALL_TIME = 22,       /* DateAndTime: TCX_TM_INSTALLED */
	TCX_COL_ACTION_LAST_USE_TIME = 23,      /* DateAndTime: TCX_TM_LAST_USED */
	TCX_COL_ACTION_NEVER_USED = 24,         /* TruthValue: no TCX_TM_FIRST_USED */
	TCX_ACTION_MIN_COL = TCX_COL_ACTION_NETNS,
};

/* Columns of tcxLabelEntry, INDEX { tcxActionIndex, tcxLabelNumber }. */
enum {
	TCX_COL_LABEL_NUMBER = 1, /* Unsigned32 (1..32), not-accessible */
	TCX_COL_LABEL_NAME = 2,   /* SnmpAdminString (SIZE(0..255)) */
	TCX_COL_LABEL_VALUE = 3,  /* SnmpAdminString (SIZE(0..255)) */
	TCX_LABEL_MIN_COL = TCX_COL_LABEL_NAME,
	TCX_LABEL_MAX_COL = TCX_COL_LABEL_VALUE,
};

/* The qdisc and class tables, under TCX_MIB_OBJECTS. */
#define TCX_MIB_QDISC_TABLE       TCX_MIB_OBJECTS, 4
#define TCX_MIB_QDISC_ENTRY       TCX_MIB_QDISC_TABLE, 1
#define TCX_MIB_CLASS_TABLE       TCX_MIB_OBJECTS, 5
#define TCX_MIB_CLASS_ENTRY       TCX_MIB_CLASS_TABLE, 1
#define TCX_MIB_CLASS_LABEL_TABLE TCX_MIB_OBJECTS, 6
#define TCX_MIB_CLASS_LABEL_ENTRY TCX_MIB_CLASS_LABEL_TABLE, 1

/* Scalars of the qdisc and class tables, under TCX_MIB_SCALARS. */
enum {
	TCX_SCALAR_QDISC_ROWS = 6,              /* Gauge32 */
	TCX_SCALAR_QDISC_TABLE_LAST_CHANGE = 7, /* TimeStamp */
	TCX_SCALAR_CLASS_ROWS = 8,              /* Gauge32 */
	TCX_SCALAR_CLASS_TABLE_LAST_CHANGE = 9, /* TimeStamp */
};

/* Columns of tcxQdiscEntry, INDEX { tcxQdiscIndex }, but for the counters'
 * (tcx_qdisc_counters' snmp_col). From RATE on, the plans (collectors/
 * plans.h), each the row of a role (agent/snmp/rows.c): no instance where
 * the qdisc's kind has none. */
enum {
	TCX_COL_QDISC_INDEX = 1,               /* Unsigned32, not-accessible */
	TCX_COL_QDISC_NETNS = 2,               /* SnmpAdminString (SIZE(0..63)) */
	TCX_COL_QDISC_DEVICE = 3,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_QDISC_IF_INDEX = 4,            /* InterfaceIndexOrZero */
	TCX_COL_QDISC_KIND = 5,                /* DisplayString (SIZE(0..15)) */
	TCX_COL_QDISC_HANDLE = 6,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_QDISC_PARENT = 7,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_QDISC_DISCONTINUITY_TIME = 15, /* TimeStamp */
	TCX_COL_QDISC_RATE = 16,               /* TcxGauge64: TCX_ROLE_RATE */
	TCX_COL_QDISC_BURST = 17,              /* TcxGauge64: TCX_ROLE_BURST */
	TCX_COL_QDISC_LIMIT_PACKETS = 18,      /* Unsigned32: TCX_ROLE_LIMIT_PACKETS */
	TCX_COL_QDISC_LIMIT_BYTES = 19,        /* Unsigned32: TCX_ROLE_LIMIT_BYTES */
	TCX_COL_QDISC_DEFAULT_CLASS = 20,      /* Unsigned32: TCX_ROLE_DEFAULT_CLASS */
	TCX_QDISC_MIN_COL = TCX_COL_QDISC_NETNS,
};

/* Columns of tcxClassEntry, INDEX { tcxClassIndex }: those of tcxQdiscEntry
 * up to the discontinuity time, the handle being the class id; the
 * counters' are tcx_class_counters'; from RATE on, the plans, as in
 * tcxQdiscEntry but for other roles. */
enum {
	TCX_COL_CLASS_INDEX = 1,               /* Unsigned32, not-accessible */
	TCX_COL_CLASS_NETNS = 2,               /* SnmpAdminString (SIZE(0..63)) */
	TCX_COL_CLASS_DEVICE = 3,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_CLASS_IF_INDEX = 4,            /* InterfaceIndexOrZero */
	TCX_COL_CLASS_KIND = 5,                /* DisplayString (SIZE(0..15)) */
	TCX_COL_CLASS_HANDLE = 6,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_CLASS_PARENT = 7,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_CLASS_DISCONTINUITY_TIME = 15, /* TimeStamp */
	TCX_COL_CLASS_RATE = 16,               /* TcxGauge64: TCX_ROLE_RATE */
	TCX_COL_CLASS_CEIL = 17,               /* TcxGauge64: TCX_ROLE_CEIL */
	TCX_COL_CLASS_BURST = 18,              /* TcxGauge64: TCX_ROLE_BURST */
	TCX_COL_CLASS_CBURST = 19,             /* TcxGauge64: TCX_ROLE_CBURST */
	TCX_COL_CLASS_PRIO = 20,               /* Unsigned32: TCX_ROLE_PRIO */
	TCX_COL_CLASS_QUANTUM = 21,            /* Unsigned32: TCX_ROLE_QUANTUM */
	TCX_COL_CLASS_LEVEL = 22,              /* Unsigned32: TCX_ROLE_LEVEL */
	TCX_CLASS_MIN_COL = TCX_COL_CLASS_NETNS,
};

/* Columns of tcxClassLabelEntry, INDEX { tcxClassIndex, tcxClassLabelNumber }. */
enum {
	TCX_COL_CLASS_LABEL_NUMBER = 1, /* Unsigned32 (1..32), not-accessible */
	TCX_COL_CLASS_LABEL_NAME = 2,   /* SnmpAdminString (SIZE(0..255)) */
	TCX_COL_CLASS_LABEL_VALUE = 3,  /* SnmpAdminString (SIZE(0..255)) */
	TCX_CLASS_LABEL_MIN_COL = TCX_COL_CLASS_LABEL_NAME,
	TCX_CLASS_LABEL_MAX_COL = TCX_COL_CLASS_LABEL_VALUE,
};

/* The filter table, under TCX_MIB_OBJECTS: the filters whose classifier
 * counts its rules. */
#define TCX_MIB_FILTER_TABLE TCX_MIB_OBJECTS, 7
#define TCX_MIB_FILTER_ENTRY TCX_MIB_FILTER_TABLE, 1

/* Scalars of the filter table, under TCX_MIB_SCALARS. */
enum {
	TCX_SCALAR_FILTER_ROWS = 10,              /* Gauge32 */
	TCX_SCALAR_FILTER_TABLE_LAST_CHANGE = 11, /* TimeStamp */
};

/* Columns of tcxFilterEntry, INDEX { tcxFilterIndex }: the filter's part of
 * tcxActionEntry's, the same numbers; the hit counters' are
 * tcx_filter_counters' (a counter the filter lacks has no instance). */
enum {
	TCX_COL_FILTER_INDEX = 1,               /* Unsigned32, not-accessible */
	TCX_COL_FILTER_NETNS = 2,               /* SnmpAdminString (SIZE(0..63)) */
	TCX_COL_FILTER_DEVICE = 3,              /* DisplayString (SIZE(0..15)) */
	TCX_COL_FILTER_IF_INDEX = 4,            /* InterfaceIndexOrZero */
	TCX_COL_FILTER_BLOCK = 5,               /* Unsigned32 */
	TCX_COL_FILTER_PARENT = 6,              /* DisplayString (SIZE(0..23)) */
	TCX_COL_FILTER_CHAIN = 7,               /* Unsigned32 */
	TCX_COL_FILTER_PREF = 8,                /* Unsigned32 (0..65535) */
	TCX_COL_FILTER_PROTOCOL = 9,            /* DisplayString (SIZE(0..15)) */
	TCX_COL_FILTER_CLASSIFIER = 10,         /* DisplayString (SIZE(0..15)) */
	TCX_COL_FILTER_HANDLE = 11,             /* DisplayString (SIZE(0..31)) */
	TCX_COL_FILTER_DISCONTINUITY_TIME = 15, /* TimeStamp */
	TCX_FILTER_MIN_COL = TCX_COL_FILTER_NETNS,
};

#endif
