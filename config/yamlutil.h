/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two YAML loaders share (config/config.c, agent/http/webconfig.c): a
 * document is built from libyaml's events into a compact tree (struct
 * tcx_ynode, in one arena) and walked with {key, handler} tables, each
 * top-level pair as soon as it is parsed; every problem is reported as
 * "FILE:LINE:COL: message" (or "FILE: message") through a tcx_config_err_fn,
 * and counted, and the walk goes on.
 *
 * The events, not libyaml's document API: a node costs a fraction of a
 * yaml_node_t, nesting deeper than TCX_YAML_MAX_DEPTH is refused as soon as
 * it is seen (before libyaml's scanner, superlinear in the nesting of flow
 * collections, spends seconds on it), and the entries of a large top-level
 * mapping (the cookies) can be consumed as they are parsed and their nodes
 * released (struct tcx_yaml.entry).
 *
 * A loader keeps its state in its own ctx, whose FIRST member is a struct
 * tcx_yaml named `y`: a struct tcx_yaml * handed to a loader's callbacks
 * converts to it. */
#ifndef TCX_YAMLUTIL_H
#define TCX_YAMLUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "config/errfn.h"
#include "lib/arena.h"

#define TCX_YAML_MAX_KEYS  32 /* keys of one table given to tcx_yaml_walk() */
#define TCX_YAML_MAX_DEPTH 64 /* nested collections in a document */
/* The largest file a loader reads: 2M cookies written as in README.md,
 * `  "0a0b0c0d": {tenant: t1234567, rule: r1234567}`, weigh 91 MiB. */
#define TCX_YAML_MAX_FILE (128u << 20)

struct tcx_yaml;

/* ---- the document ------------------------------------------------------------ */

/* A node, shaped like libyaml's yaml_node_t so that the loaders read it the
 * same way, with pointers where yaml_node_t has node ids. */
typedef struct tcx_ynode tcx_ynode_t;
struct tcx_ypair {
	tcx_ynode_t *key, *value;
};
struct tcx_ynode {
	yaml_node_type_t type;
	yaml_mark_t start_mark;
	union {
		struct {
			char *value; /* NUL-terminated, no NUL before (yamlutil.c refuses one) */
			size_t length;
			yaml_scalar_style_t style;
		} scalar;
		struct {
			struct {
				tcx_ynode_t **start, **top;
			} items;
		} sequence;
		struct {
			struct {
				struct tcx_ypair *start, *top;
			} pairs;
		} mapping;
	} data;
};

/* A loader's {key, handler} table: n rows of `size` bytes, each starting with
 * its key (a const char *). The walk calls call(y, row, obj, key, val) for
 * each key found, which passes them on to the row's handler. Rows for which
 * listed(row) is false are accepted but not offered in "expected one of";
 * listed may be NULL. */
struct tcx_yaml_keys {
	const void *rows;
	size_t n, size;
	int (*call)(struct tcx_yaml *y, const void *row, void *obj, tcx_ynode_t *key,
	            tcx_ynode_t *val);
	int (*listed)(const void *row);
};

/* The walk of one mapping, pair by pair. */
struct tcx_yaml_walker {
	const struct tcx_yaml_keys *keys;
	const char *where; /* " in target", "" at the top level */
	void *obj;
	const tcx_ynode_t *seen[TCX_YAML_MAX_KEYS]; /* first occurrence of each key */
	int ret;                                    /* -1 once anything failed */
};

struct tcx_yaml {
	const char *name; /* the file, for messages */
	tcx_config_err_fn errfn;
	void *arg;
	unsigned errors; /* problems reported so far */
	/* Set by the loader for tcx_yaml_load(): */
	const struct tcx_yaml_keys *top; /* the top-level keys */
	size_t max_file;                 /* the largest file it reads (no buf) */
	/* When not NULL: each pair of a mapping that is the value of a
	 * top-level key `topkey`, as soon as it is parsed. Returns 1 when it
	 * took the pair (its nodes are released then, and the mapping is
	 * left without it), 0 to leave it in the mapping. */
	int (*entry)(struct tcx_yaml *y, const tcx_ynode_t *topkey, struct tcx_ypair *pair);
	/* When not NULL: the top-level key whose block may be read without
	 * libyaml's scanner, with the same result (the fast path: yamlutil.c). */
	const char *fast_key;
	/* Internal to tcx_yaml_load(). */
	struct tcx_arena mem;
	struct tcx_yaml_walker walk_top;
};

/* ---- error reporting ------------------------------------------------------ */

/* "NAME:LINE:COL: msg" at the start of n. */
__attribute__((format(printf, 3, 4))) void tcx_yaml_err_at(struct tcx_yaml *y, const tcx_ynode_t *n,
                                                           const char *fmt, ...);
/* "NAME:LINE:COL: msg" at m, "NAME: msg" when m is NULL. */
__attribute__((format(printf, 3, 4))) void
tcx_yaml_err_mark(struct tcx_yaml *y, const yaml_mark_t *m, const char *fmt, ...);
/* A problem of a file the document names: "PATH: msg". */
__attribute__((format(printf, 3, 4))) void tcx_yaml_err_file(struct tcx_yaml *y, const char *path,
                                                             const char *fmt, ...);
/* "duplicate WHAT 'NAME' (first at LINE:COL)" at n, first being where the
 * earlier one starts. */
void tcx_yaml_err_dup(struct tcx_yaml *y, const tcx_ynode_t *n, const char *what, const char *name,
                      const yaml_mark_t *first);
/* "NAME:LINE:COL: msg" at the start of n, as a new string that is not
 * reported (a warning, for the loader to keep), or NULL after reporting that
 * memory ran out. */
__attribute__((format(printf, 3, 4))) char *
tcx_yaml_msg_at(struct tcx_yaml *y, const tcx_ynode_t *n, const char *fmt, ...);
/* "NAME: out of memory"; returns -1. */
int tcx_yaml_oom(struct tcx_yaml *y);

/* ---- nodes ---------------------------------------------------------------- */

/* "a mapping", "a sequence" or "a scalar". */
const char *tcx_yaml_kind_name(yaml_node_type_t t);

static inline const char *tcx_yaml_sval(const tcx_ynode_t *n)
{
	return n->data.scalar.value;
}

static inline size_t tcx_yaml_slen(const tcx_ynode_t *n)
{
	return n->data.scalar.length;
}

/* An empty plain scalar: YAML's null (`key:` with nothing after it). */
static inline int tcx_yaml_is_null(const tcx_ynode_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.length == 0 &&
	       n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static inline size_t tcx_yaml_n_items(const tcx_ynode_t *seq)
{
	return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

static inline size_t tcx_yaml_n_pairs(const tcx_ynode_t *map)
{
	return (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

/* ---- values ----------------------------------------------------------------- */

/* Check the value of `key` is of type t; report "'key' must be ..." if not. */
int tcx_yaml_expect(struct tcx_yaml *y, const tcx_ynode_t *key, const tcx_ynode_t *val,
                    yaml_node_type_t t);
/* An item of a list must be of type t: reports "WHAT must be KIND, got
 * KIND" (-1) if not. */
int tcx_yaml_expect_item(struct tcx_yaml *y, const tcx_ynode_t *n, yaml_node_type_t t,
                         const char *what);
/* A mapping key must be a scalar: reports "expected a scalar key, got KIND"
 * (-1) if not. */
int tcx_yaml_expect_scalar_key(struct tcx_yaml *y, const tcx_ynode_t *k);
/* A copy of s[0..len) with a NUL after it, or NULL after a report. */
char *tcx_yaml_strndup(struct tcx_yaml *y, const char *s, size_t len);
/* true/yes or false/no, any case. */
int tcx_yaml_bool(struct tcx_yaml *y, const tcx_ynode_t *k, const tcx_ynode_t *v, int *out);
/* A decimal integer in [min, max], digits only. */
int tcx_yaml_uint(struct tcx_yaml *y, const tcx_ynode_t *k, const tcx_ynode_t *v, uint64_t min,
                  uint64_t max, uint64_t *out);
/* `name` relative to the directory of the file y->name, as a new string. */
char *tcx_yaml_resolve(struct tcx_yaml *y, const char *name);

/* ---- walking mappings ------------------------------------------------------- */

/* Walk a mapping, dispatching each key through keys and reporting keys that
 * are not scalars, unknown, or given twice. `where` names the mapping in
 * messages (" in target"), empty at the top level. -1 when anything failed. */
int tcx_yaml_walk(struct tcx_yaml *y, tcx_ynode_t *map, const struct tcx_yaml_keys *keys,
                  const char *where, void *obj);
/* The same, one pair at a time: w starts zeroed but for keys, where, obj. */
void tcx_yaml_walk_pair(struct tcx_yaml *y, struct tcx_yaml_walker *w, struct tcx_ypair *p);

/* ---- files and documents ------------------------------------------------------ */

/* The whole file as a C string, or NULL after a report naming it: "cannot
 * WHAT: ...", "not a regular file", "larger than N MiB" (max, a multiple of
 * 1 MiB). Buffers are wiped before they are released: the file may hold a
 * key. */
char *tcx_yaml_read_file(struct tcx_yaml *y, const char *path, const char *what, size_t max,
                         size_t *lenp);

/* Parse buf (NULL: the file y->name, at most y->max_file bytes, read with
 * tcx_yaml_read_file() and wiped when done) as one YAML document whose root
 * must be a mapping, handing each
 * of its pairs, as soon as it is parsed, to the keys of y->top (and the
 * entries of their values to y->entry). Then, if the root is a mapping,
 * finish(y, root) unless finish is NULL; the nodes are valid until it
 * returns. A syntax
 * error, nesting deeper than TCX_YAML_MAX_DEPTH, a root that is not a mapping
 * and a second document are reported. An empty document is reported as
 * `empty` at 1:1, or is fine when `empty` is NULL. */
void tcx_yaml_load(struct tcx_yaml *y, const char *buf, size_t len, const char *empty,
                   void (*finish)(struct tcx_yaml *y, tcx_ynode_t *root));

/* Tests only: nonzero turns the fast path off, to compare the results; the
 * number of blocks it read. */
extern int tcx_yaml_no_fast_path;
extern unsigned long tcx_yaml_fast_blocks;

#endif
