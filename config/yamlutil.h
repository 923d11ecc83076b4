/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two YAML loaders share (config/config.c, agent/webconfig.c): a
 * whole document is loaded with libyaml's document API, then walked with
 * {key, handler} tables; every problem is reported as "FILE:LINE:COL: message"
 * (or "FILE: message") through a tcx_config_err_fn, and counted, and the walk
 * goes on.
 *
 * A loader keeps its state in its own ctx, whose FIRST member is a struct
 * tcx_yaml named `y`: the short names at the end of this file take that ctx,
 * and a struct tcx_yaml * handed back by tcx_yaml_walk() or tcx_yaml_load()
 * converts to it. */
#ifndef TCX_YAMLUTIL_H
#define TCX_YAMLUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "config/config.h" /* tcx_config_err_fn */

#define TCX_YAML_MAX_KEYS 32 /* keys of one table given to tcx_yaml_walk() */

struct tcx_yaml {
	const char *name; /* the file, for messages */
	tcx_config_err_fn errfn;
	void *arg;
	yaml_document_t *doc; /* while it is walked */
	unsigned errors;      /* problems reported so far */
};

/* ---- error reporting ------------------------------------------------------ */

/* "NAME:LINE:COL: msg" at the start of n. */
__attribute__((format(printf, 3, 4))) void tcx_yaml_err_at(struct tcx_yaml *y, const yaml_node_t *n,
                                                           const char *fmt, ...);
/* "NAME:LINE:COL: msg" at m, "NAME: msg" when m is NULL. */
__attribute__((format(printf, 3, 4))) void
tcx_yaml_err_mark(struct tcx_yaml *y, const yaml_mark_t *m, const char *fmt, ...);
/* A problem of a file the document names: "PATH: msg". */
__attribute__((format(printf, 3, 4))) void tcx_yaml_err_file(struct tcx_yaml *y, const char *path,
                                                             const char *fmt, ...);
/* "duplicate WHAT 'NAME' (first at LINE:COL)" at n, first being the earlier one. */
void tcx_yaml_err_dup(struct tcx_yaml *y, const yaml_node_t *n, const char *what, const char *name,
                      const yaml_node_t *first);
/* "NAME: out of memory"; returns -1. */
int tcx_yaml_oom(struct tcx_yaml *y);

/* ---- nodes ---------------------------------------------------------------- */

/* "a mapping", "a sequence" or "a scalar". */
const char *tcx_yaml_kind_name(yaml_node_type_t t);

static inline const char *tcx_yaml_sval(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static inline size_t tcx_yaml_slen(const yaml_node_t *n)
{
	return n->data.scalar.length;
}

/* The scalar holds a NUL byte (e.g. "a\0b"): it cannot be a C string. */
static inline int tcx_yaml_has_nul(const yaml_node_t *n)
{
	return memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL;
}

/* An empty plain scalar: YAML's null (`key:` with nothing after it). */
static inline int tcx_yaml_is_null(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static inline size_t tcx_yaml_n_items(const yaml_node_t *seq)
{
	return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

static inline size_t tcx_yaml_n_pairs(const yaml_node_t *map)
{
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

static inline yaml_node_t *tcx_yaml_node(struct tcx_yaml *y, int id)
{
	return yaml_document_get_node(y->doc, id);
}

/* ---- values ----------------------------------------------------------------- */

/* Check the value of `key` is of type t; report "'key' must be ..." if not. */
int tcx_yaml_expect(struct tcx_yaml *y, const yaml_node_t *key, const yaml_node_t *val,
                    yaml_node_type_t t);
/* A copy of s[0..len) with a NUL after it, or NULL after a report. */
char *tcx_yaml_strndup(struct tcx_yaml *y, const char *s, size_t len);
/* true/yes or false/no, any case. */
int tcx_yaml_bool(struct tcx_yaml *y, const yaml_node_t *k, const yaml_node_t *v, int *out);
/* A decimal integer in [min, max], digits only. */
int tcx_yaml_uint(struct tcx_yaml *y, const yaml_node_t *k, const yaml_node_t *v, uint64_t min,
                  uint64_t max, uint64_t *out);
/* `name` relative to the directory of the file y->name, as a new string. */
char *tcx_yaml_resolve(struct tcx_yaml *y, const char *name);

/* ---- walking mappings ------------------------------------------------------- */

/* A loader's {key, handler} table: n rows of `size` bytes, each starting with
 * its key (a const char *). tcx_yaml_walk() calls call(y, row, obj, key, val)
 * for each key found, which passes them on to the row's handler. Rows for
 * which listed(row) is false are accepted but not offered in "expected one
 * of"; listed may be NULL. */
struct tcx_yaml_keys {
	const void *rows;
	size_t n, size;
	int (*call)(struct tcx_yaml *y, const void *row, void *obj, yaml_node_t *key,
	            yaml_node_t *val);
	int (*listed)(const void *row);
};

/* Walk a mapping, dispatching each key through keys and reporting keys that
 * are not scalars, unknown, or given twice. `where` names the mapping in
 * messages (" in target"), empty at the top level. -1 when anything failed. */
int tcx_yaml_walk(struct tcx_yaml *y, yaml_node_t *map, const struct tcx_yaml_keys *keys,
                  const char *where, void *obj);

/* ---- files and documents ------------------------------------------------------ */

/* The whole file as a C string, or NULL after a report naming it ("cannot
 * WHAT: ...", and "larger than N MiB" if max, a multiple of 1 MiB, is not 0).
 * Buffers are wiped before they are released: the file may hold a key. */
char *tcx_yaml_read_file(struct tcx_yaml *y, const char *path, const char *what, size_t max,
                         size_t *lenp);

/* Parse buf as one YAML document and, if its root is a mapping, call
 * walk(y, root) with y->doc set. A syntax error, a root that is not a mapping
 * and a second document are reported. An empty document is reported as
 * `empty` at 1:1, or is fine (walk is not called) when `empty` is NULL. When
 * walk returns -1, a second document is not looked for. */
void tcx_yaml_load(struct tcx_yaml *y, const char *buf, size_t len, const char *empty,
                   int (*walk)(struct tcx_yaml *y, yaml_node_t *root));

/* ---- short names, for the loaders --------------------------------------------- */

/* Those taking c take the loader's ctx (see the top of this file). */
#define err_at(c, ...)     tcx_yaml_err_at(&(c)->y, __VA_ARGS__)
#define err_mark(c, ...)   tcx_yaml_err_mark(&(c)->y, __VA_ARGS__)
#define err_file(c, ...)   tcx_yaml_err_file(&(c)->y, __VA_ARGS__)
#define err_dup(c, ...)    tcx_yaml_err_dup(&(c)->y, __VA_ARGS__)
#define oom(c)             tcx_yaml_oom(&(c)->y)
#define node(c, id)        tcx_yaml_node(&(c)->y, id)
#define expect(c, ...)     tcx_yaml_expect(&(c)->y, __VA_ARGS__)
#define xstrndup(c, ...)   tcx_yaml_strndup(&(c)->y, __VA_ARGS__)
#define parse_bool(c, ...) tcx_yaml_bool(&(c)->y, __VA_ARGS__)
#define uint_value(c, ...) tcx_yaml_uint(&(c)->y, __VA_ARGS__)
#define resolve(c, name)   tcx_yaml_resolve(&(c)->y, name)
#define kind_name(t)       tcx_yaml_kind_name(t)
#define sval(n)            tcx_yaml_sval(n)
#define slen(n)            tcx_yaml_slen(n)
#define has_nul(n)         tcx_yaml_has_nul(n)
#define is_null(n)         tcx_yaml_is_null(n)
#define n_items(n)         tcx_yaml_n_items(n)
#define n_pairs(n)         tcx_yaml_n_pairs(n)

#endif
