/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-kind statistics of qdiscs and classes (TCA_STATS_APP): one table
 * per kind and object, each row one family. config/xstats.c holds the
 * tables and their naming rule; collectors/qdisc_parse.c decodes a message
 * with them. No I/O, nothing allocated. */
#ifndef TCX_XSTATS_H
#define TCX_XSTATS_H

#include <stddef.h>
#include <stdint.h>

#define TCX_XSTATS_MAX      32 /* rows of the longest table (a uint32_t mask) */
#define TCX_XSTATS_TINS     8  /* cake's TC_CAKE_MAX_TINS */
#define TCX_XSTATS_N_TABLES 14 /* tcx_xstats_n_tables, for arrays indexed by table */

enum tcx_xstat_type {
	TCX_XSTAT_COUNTER, /* an event count: the family ends in _total */
	TCX_XSTAT_GAUGE,   /* a level, a maximum, a setting or a time */
};

/* Row flags. */
#define TCX_XSTAT_SIGNED   0x1 /* two's complement: raw holds it sign-extended */
#define TCX_XSTAT_POSITIVE 0x2 /* present only when above 0 (tc prints it so) */

/* One field of a kind's statistics. Its value is raw / div, where raw is the
 * kernel's integer (read as uint64_t, sign-extended when TCX_XSTAT_SIGNED):
 * div is 1 for a plain count or size, and turns a time into seconds or a
 * fixed-point probability into a ratio from 0 to 1. When div is 1 the value
 * is the integer raw itself, exactly (int64_t when signed). */
struct tcx_xstat {
	const char *family; /* the full name: tc_qdisc_fq_codel_ecn_mark_total */
	const char *help;
	const char *unit;        /* for people: "seconds", "bytes", "packets", ... or "" */
	const char *label;       /* NULL, or the label of an array element ("band") */
	const char *label_value; /* its value ("0") */
	double div;
	uint16_t src;  /* byte offset in the struct, or attribute type (nested tables) */
	uint8_t size;  /* 4 or 8 bytes */
	uint8_t type;  /* enum tcx_xstat_type */
	uint8_t flags; /* TCX_XSTAT_* */
};

enum tcx_xstats_layout {
	TCX_XSTATS_STRUCT, /* a C struct: fields by offset; a short one has fewer */
	TCX_XSTATS_NESTED, /* nested attributes: fields by type (cake) */
};

struct tcx_xstats_table {
	const char *kind; /* TCA_KIND */
	uint8_t is_class; /* of RTM_NEWTCLASS messages; else of RTM_NEWQDISC */
	uint8_t layout;   /* enum tcx_xstats_layout */
	/* STRUCT: when has_type, the struct opens with a u32 that must equal
	 * type (fq_codel's qdisc and class variants); otherwise no statistics
	 * are decoded. */
	uint8_t has_type;
	uint32_t type;
	const struct tcx_xstat *fields;
	uint8_t n_fields;
	/* NESTED: the attribute holding one nest per tin (types 1..8, tin
	 * label = type - 1), each decoded with tin_fields; 0 when none. */
	uint16_t tins_attr;
	const char *tin_label;
	const struct tcx_xstat *tin_fields;
	uint8_t n_tin_fields;
};

/* The table for a kind's qdisc (is_class 0) or class (1) messages, or NULL. */
const struct tcx_xstats_table *tcx_xstats_lookup(const char *kind, int is_class);

/* Every table, for what lists the families (documentation, renderers). */
extern const struct tcx_xstats_table *const tcx_xstats_tables[];
extern const size_t tcx_xstats_n_tables;

/* A table's place in tcx_xstats_tables[]: 0 .. TCX_XSTATS_N_TABLES - 1. */
unsigned tcx_xstats_id(const struct tcx_xstats_table *t);

/* A field's name, as `families: xstats:` takes it and the JSON format keys
 * it: its family without tc_<object>_<kind>_ and, for a counter, _total
 * (tc_qdisc_cake_tin_sent_bytes_total: tin_sent_bytes). Returns where it
 * starts in f->family, its length in *len. f is a row of t (fields or
 * tin_fields). */
const char *tcx_xstat_name(const struct tcx_xstats_table *t, const struct tcx_xstat *f,
                           size_t *len);

/* The fields chosen of each table (`families: xstats:`), by table id: bit
 * i of off[id] leaves out row fields[i], of tin_off[id] row tin_fields[i].
 * All zero: every field of every kind. The collector applies it when it
 * stores a row (collectors/discover.c): a field left out is not present for
 * any format, a table left out whole is no table (tcx_xstats_none()). */
struct tcx_xstats_choice {
	uint32_t off[TCX_XSTATS_N_TABLES];
	uint32_t tin_off[TCX_XSTATS_N_TABLES];
};

/* 1 when ch leaves out every field of t. */
int tcx_xstats_none(const struct tcx_xstats_table *t, const struct tcx_xstats_choice *ch);

/* raw / div, signed when the field is. */
double tcx_xstat_value(const struct tcx_xstat *f, uint64_t raw);

/* The value as text: the integer exactly when div is 1, else a double. */
struct tcx_buf;
void tcx_xstat_put(struct tcx_buf *b, const struct tcx_xstat *f, uint64_t raw);

#endif
