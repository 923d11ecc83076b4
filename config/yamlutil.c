/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two YAML loaders share: see yamlutil.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config/yamlutil.h"
#include "lib/grow.h"

/* ---- error reporting ------------------------------------------------------ */

/* "NAME:LINE:COL: msg" with a mark, "NAME: msg" without, or NULL. */
__attribute__((format(printf, 3, 0))) static char *vformat(const char *name, const yaml_mark_t *m,
                                                           const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL;
	int r;

	if (vasprintf(&msg, fmt, ap) < 0)
		return NULL;
	if (m)
		r = asprintf(&line, "%s:%lu:%lu: %s", name, (unsigned long)m->line + 1,
		             (unsigned long)m->column + 1, msg);
	else
		r = asprintf(&line, "%s: %s", name, msg);
	free(msg);
	return r < 0 ? NULL : line;
}

__attribute__((format(printf, 4, 0))) static void
vreport(struct tcx_yaml *y, const char *name, const yaml_mark_t *m, const char *fmt, va_list ap)
{
	char *line = vformat(name, m, fmt, ap);

	y->errors++;
	if (y->errfn)
		y->errfn(y->arg, line ? line : "out of memory");
	free(line);
}

char *tcx_yaml_msg_at(struct tcx_yaml *y, const tcx_ynode_t *n, const char *fmt, ...)
{
	va_list ap;
	char *line;

	va_start(ap, fmt);
	line = vformat(y->name, &n->start_mark, fmt, ap);
	va_end(ap);
	if (!line)
		tcx_yaml_oom(y);
	return line;
}

void tcx_yaml_err_at(struct tcx_yaml *y, const tcx_ynode_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(y, y->name, &n->start_mark, fmt, ap);
	va_end(ap);
}

void tcx_yaml_err_mark(struct tcx_yaml *y, const yaml_mark_t *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(y, y->name, m, fmt, ap);
	va_end(ap);
}

void tcx_yaml_err_file(struct tcx_yaml *y, const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(y, path, NULL, fmt, ap);
	va_end(ap);
}

void tcx_yaml_err_dup(struct tcx_yaml *y, const tcx_ynode_t *n, const char *what, const char *name,
                      const yaml_mark_t *first)
{
	tcx_yaml_err_at(y, n, "duplicate %s '%s' (first at %lu:%lu)", what, name,
	                (unsigned long)first->line + 1, (unsigned long)first->column + 1);
}

int tcx_yaml_oom(struct tcx_yaml *y)
{
	tcx_yaml_err_mark(y, NULL, "out of memory");
	return -1;
}

/* ---- nodes and values ------------------------------------------------------- */

const char *tcx_yaml_kind_name(yaml_node_type_t t)
{
	switch (t) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	default:
		return "a scalar";
	}
}

int tcx_yaml_expect(struct tcx_yaml *y, const tcx_ynode_t *key, const tcx_ynode_t *val,
                    yaml_node_type_t t)
{
	if (val->type == t)
		return 0;
	tcx_yaml_err_at(y, val, "'%s' must be %s, got %s", tcx_yaml_sval(key),
	                tcx_yaml_kind_name(t), tcx_yaml_kind_name(val->type));
	return -1;
}

int tcx_yaml_expect_item(struct tcx_yaml *y, const tcx_ynode_t *n, yaml_node_type_t t,
                         const char *what)
{
	if (n->type == t)
		return 0;
	tcx_yaml_err_at(y, n, "%s must be %s, got %s", what, tcx_yaml_kind_name(t),
	                tcx_yaml_kind_name(n->type));
	return -1;
}

int tcx_yaml_expect_scalar_key(struct tcx_yaml *y, const tcx_ynode_t *k)
{
	if (k->type == YAML_SCALAR_NODE)
		return 0;
	tcx_yaml_err_at(y, k, "expected a scalar key, got %s", tcx_yaml_kind_name(k->type));
	return -1;
}

char *tcx_yaml_strndup(struct tcx_yaml *y, const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (!p) {
		tcx_yaml_oom(y);
		return NULL;
	}
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

int tcx_yaml_bool(struct tcx_yaml *y, const tcx_ynode_t *k, const tcx_ynode_t *v, int *out)
{
	if (tcx_yaml_expect(y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (!strcasecmp(tcx_yaml_sval(v), "true") || !strcasecmp(tcx_yaml_sval(v), "yes")) {
		*out = 1;
		return 0;
	}
	if (!strcasecmp(tcx_yaml_sval(v), "false") || !strcasecmp(tcx_yaml_sval(v), "no")) {
		*out = 0;
		return 0;
	}
	tcx_yaml_err_at(y, v, "invalid boolean '%s' for '%s'", tcx_yaml_sval(v), tcx_yaml_sval(k));
	return -1;
}

static int parse_uint(const tcx_ynode_t *v, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s = tcx_yaml_sval(v);
	size_t i, len = tcx_yaml_slen(v);
	uint64_t x = 0;

	if (len == 0 || len > 20)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x < min || x > max)
		return -1;
	*out = x;
	return 0;
}

int tcx_yaml_uint(struct tcx_yaml *y, const tcx_ynode_t *k, const tcx_ynode_t *v, uint64_t min,
                  uint64_t max, uint64_t *out)
{
	if (tcx_yaml_expect(y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (parse_uint(v, min, max, out) == 0)
		return 0;
	tcx_yaml_err_at(y, v, "invalid %s '%s': must be an integer from %llu to %llu",
	                tcx_yaml_sval(k), tcx_yaml_sval(v), (unsigned long long)min,
	                (unsigned long long)max);
	return -1;
}

char *tcx_yaml_resolve(struct tcx_yaml *y, const char *name)
{
	const char *slash = strrchr(y->name, '/');
	char *p;

	if (name[0] == '/' || !slash)
		return tcx_yaml_strndup(y, name, strlen(name));
	if (asprintf(&p, "%.*s/%s", (int)(slash - y->name), y->name, name) < 0) {
		tcx_yaml_oom(y);
		return NULL;
	}
	return p;
}

/* ---- walking mappings ------------------------------------------------------- */

static const void *row(const struct tcx_yaml_keys *keys, size_t i)
{
	return (const char *)keys->rows + i * keys->size;
}

static const char *row_key(const struct tcx_yaml_keys *keys, size_t i)
{
	return *(const char *const *)row(keys, i);
}

void tcx_yaml_walk_pair(struct tcx_yaml *y, struct tcx_yaml_walker *w, struct tcx_ypair *p)
{
	const struct tcx_yaml_keys *keys = w->keys;
	tcx_ynode_t *k = p->key, *v = p->value;
	char expected[512];
	size_t i, off = 0;

	if (keys->n > TCX_YAML_MAX_KEYS)
		abort(); /* a program bug: raise TCX_YAML_MAX_KEYS */
	if (tcx_yaml_expect_scalar_key(y, k)) {
		w->ret = -1;
		return;
	}
	for (i = 0; i < keys->n; i++)
		if (!strcmp(tcx_yaml_sval(k), row_key(keys, i)))
			break;
	if (i == keys->n) {
		expected[0] = '\0';
		for (i = 0; i < keys->n && off < sizeof(expected); i++)
			if (!keys->listed || keys->listed(row(keys, i)))
				off += (size_t)snprintf(expected + off, sizeof(expected) - off,
				                        "%s%s", off ? ", " : "", row_key(keys, i));
		tcx_yaml_err_at(y, k, "unknown key '%s'%s (expected one of: %s)", tcx_yaml_sval(k),
		                w->where, expected);
		w->ret = -1;
		return;
	}
	if (w->seen[i]) {
		tcx_yaml_err_dup(y, k, "key", tcx_yaml_sval(k), &w->seen[i]->start_mark);
		w->ret = -1;
		return;
	}
	w->seen[i] = k;
	if (keys->call(y, row(keys, i), w->obj, k, v))
		w->ret = -1;
}

int tcx_yaml_walk(struct tcx_yaml *y, tcx_ynode_t *map, const struct tcx_yaml_keys *keys,
                  const char *where, void *obj)
{
	struct tcx_yaml_walker w = {.keys = keys, .where = where, .obj = obj};
	struct tcx_ypair *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		tcx_yaml_walk_pair(y, &w, p);
	return w.ret;
}

/* ---- files ------------------------------------------------------------------- */

static void free_wiped(char *buf, size_t len)
{
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
}

char *tcx_yaml_read_file(struct tcx_yaml *y, const char *path, const char *what, size_t max,
                         size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0, cap;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		tcx_yaml_err_file(y, path, "cannot %s: %s", what, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		tcx_yaml_err_file(y, path, "cannot %s: %s", what, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		tcx_yaml_err_file(y, path, "cannot %s: not a regular file", what);
		goto fail;
	}
	if ((uint64_t)st.st_size > max) {
		tcx_yaml_err_file(y, path, "cannot %s: larger than %zu MiB", what, max >> 20);
		goto fail;
	}
	/* One byte more than the size: a file that grew meanwhile is seen. */
	cap = (size_t)st.st_size + 2;
	buf = malloc(cap);
	if (!buf) {
		tcx_yaml_oom(y);
		goto fail;
	}
	while ((n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			tcx_yaml_err_file(y, path, "cannot read: %s", strerror(errno));
			goto fail;
		}
		len += (size_t)n;
		if (len == cap - 1) {
			tcx_yaml_err_file(y, path, "cannot %s: it changed while it was read", what);
			goto fail;
		}
	}
	buf[len] = '\0';
	close(fd);
	*lenp = len;
	return buf;
fail:
	free_wiped(buf, len);
	close(fd);
	return NULL;
}

/* ---- documents ------------------------------------------------------------------ */

static void syntax_error(struct tcx_yaml *y, const yaml_parser_t *parser, const char *buf,
                         size_t len)
{
	const char *problem = parser->problem ? parser->problem : "out of memory";
	yaml_mark_t m = parser->problem_mark;

	if (parser->error == YAML_READER_ERROR) {
		/* the reader gives a byte offset, not a mark */
		size_t i, end = parser->problem_offset < len ? parser->problem_offset : len;

		m.line = m.column = 0;
		for (i = 0; i < end; i++) {
			if (buf[i] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
	}
	if (parser->context)
		tcx_yaml_err_mark(y, &m, "YAML syntax error: %s %s", problem, parser->context);
	else
		tcx_yaml_err_mark(y, &m, "YAML syntax error: %s", problem);
}

#define MAX_ANCHORS 1024 /* looked up one by one: keep it short */

struct anchor {
	char *name;
	tcx_ynode_t *node;
};

/* A collection being parsed: its children so far are pending[first..]. */
struct frame {
	tcx_ynode_t *node;
	size_t first;
	/* The value of a top-level key, whose pairs go to y->entry: */
	const tcx_ynode_t *topkey;
	struct tcx_arena_mark pair_mark; /* before the key of the pair being parsed */
	size_t pair_anchors;             /* n_anchors then */
};

struct builder {
	struct tcx_yaml *y;
	struct frame stack[TCX_YAML_MAX_DEPTH];
	size_t depth;
	tcx_ynode_t **pending;
	size_t n_pending, cap_pending;
	struct anchor anchors[MAX_ANCHORS];
	size_t n_anchors;
	tcx_ynode_t *root;
};

static tcx_ynode_t *new_node(struct builder *b, yaml_node_type_t type, const yaml_mark_t *m)
{
	tcx_ynode_t *n = tcx_arena_alloc(&b->y->mem, sizeof(*n));

	if (!n)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->type = type;
	n->start_mark = *m;
	return n;
}

static int push_pending(struct builder *b, tcx_ynode_t *n)
{
	if (tcx_grow(&b->pending, &b->cap_pending, b->n_pending + 1, sizeof(*b->pending), 256) < 0)
		return tcx_yaml_oom(b->y);
	b->pending[b->n_pending++] = n;
	return 0;
}

/* A node is about to start: where a pair of an entry mapping starts, mark
 * the arena, to release the pair once y->entry took it. */
static void node_starts(struct builder *b)
{
	struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;

	if (f && f->topkey && (b->n_pending - f->first) % 2 == 0) {
		f->pair_mark = tcx_arena_mark(&b->y->mem);
		f->pair_anchors = b->n_anchors;
	}
}

/* A node is complete: it is the root or its parent's child. */
static int node_done(struct builder *b, tcx_ynode_t *n)
{
	struct tcx_yaml *y = b->y;
	struct frame *f;
	struct tcx_ypair pair;
	size_t have;

	if (!b->depth) {
		b->root = n;
		return 0;
	}
	if (push_pending(b, n))
		return -1;
	f = &b->stack[b->depth - 1];
	have = b->n_pending - f->first;
	if (f->node->type != YAML_MAPPING_NODE || have % 2)
		return 0;
	pair.key = b->pending[b->n_pending - 2];
	pair.value = n;
	if (b->depth == 1) {
		tcx_yaml_walk_pair(y, &y->walk_top, &pair);
	} else if (f->topkey && y->entry(y, f->topkey, &pair)) {
		b->n_pending -= 2;
		if (b->n_anchors == f->pair_anchors) /* nothing can refer to it */
			tcx_arena_release(&y->mem, f->pair_mark);
	}
	return 0;
}

/* Name a node that has just started, for the aliases that follow. */
static int anchor(struct builder *b, const yaml_char_t *name, tcx_ynode_t *n, const yaml_mark_t *m)
{
	size_t len;
	char *copy;

	if (!name)
		return 0;
	if (b->n_anchors == MAX_ANCHORS) {
		tcx_yaml_err_mark(b->y, m, "more than %d anchors", MAX_ANCHORS);
		return -1;
	}
	len = strlen((const char *)name);
	copy = tcx_arena_alloc(&b->y->mem, len + 1);
	if (!copy)
		return tcx_yaml_oom(b->y);
	memcpy(copy, name, len + 1);
	b->anchors[b->n_anchors++] = (struct anchor){copy, n};
	return 0;
}

static int collection_start(struct builder *b, const yaml_event_t *e)
{
	int map = e->type == YAML_MAPPING_START_EVENT;
	const yaml_char_t *name =
	        map ? e->data.mapping_start.anchor : e->data.sequence_start.anchor;
	struct frame *f;
	tcx_ynode_t *n;

	if (b->depth == TCX_YAML_MAX_DEPTH) {
		tcx_yaml_err_mark(b->y, &e->start_mark, "nested deeper than %d levels",
		                  TCX_YAML_MAX_DEPTH);
		return -1;
	}
	node_starts(b);
	n = new_node(b, map ? YAML_MAPPING_NODE : YAML_SEQUENCE_NODE, &e->start_mark);
	if (!n)
		return tcx_yaml_oom(b->y);
	f = &b->stack[b->depth];
	memset(f, 0, sizeof(*f));
	f->node = n;
	f->first = b->n_pending;
	/* the value of a top-level key (whose key is the last pending node) */
	if (b->depth == 1 && map && b->y->entry && b->stack[0].node->type == YAML_MAPPING_NODE &&
	    (b->n_pending - b->stack[0].first) % 2 == 1)
		f->topkey = b->pending[b->n_pending - 1];
	b->depth++;
	return anchor(b, name, n, &e->start_mark);
}

static int collection_end(struct builder *b)
{
	struct frame *f = &b->stack[--b->depth];
	size_t n = b->n_pending - f->first;
	tcx_ynode_t **items = NULL;

	if (n) {
		items = tcx_arena_alloc(&b->y->mem, n * sizeof(*items));
		if (!items)
			return tcx_yaml_oom(b->y);
		memcpy(items, b->pending + f->first, n * sizeof(*items));
	}
	b->n_pending = f->first;
	/* (An empty collection has no items: NULL, and no arithmetic on it.) */
	if (f->node->type == YAML_SEQUENCE_NODE) {
		f->node->data.sequence.items.start = items;
		f->node->data.sequence.items.top = n ? items + n : items;
	} else {
		/* a pair is two node pointers, key then value */
		struct tcx_ypair *pairs = (struct tcx_ypair *)items;

		f->node->data.mapping.pairs.start = pairs;
		f->node->data.mapping.pairs.top = n ? pairs + n / 2 : pairs;
	}
	return node_done(b, f->node);
}

/* Every scalar of a loader is a C string: one holding a NUL byte (a "\0"
 * escape) ends the document, at its start, before any use reads the text
 * up to the NUL as the whole. */
static int scalar_nul(struct builder *b, const yaml_event_t *e)
{
	const char *v = (const char *)e->data.scalar.value;
	const char *nul = memchr(v, '\0', e->data.scalar.length);
	const struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
	int key = f && f->node->type == YAML_MAPPING_NODE && (b->n_pending - f->first) % 2 == 0;

	if (!nul)
		return 0;
	tcx_yaml_err_mark(b->y, &e->start_mark, "%s '%s' holds a NUL byte (its byte %zu)",
	                  key ? "key" : "value", v, (size_t)(nul - v) + 1);
	return -1;
}

static int scalar(struct builder *b, const yaml_event_t *e)
{
	tcx_ynode_t *n;
	char *v;

	if (scalar_nul(b, e))
		return -1;
	node_starts(b);
	n = new_node(b, YAML_SCALAR_NODE, &e->start_mark);
	v = n ? tcx_arena_alloc(&b->y->mem, e->data.scalar.length + 1) : NULL;
	if (!v)
		return tcx_yaml_oom(b->y);
	memcpy(v, e->data.scalar.value, e->data.scalar.length);
	v[e->data.scalar.length] = '\0';
	n->data.scalar.value = v;
	n->data.scalar.length = e->data.scalar.length;
	n->data.scalar.style = e->data.scalar.style;
	if (anchor(b, e->data.scalar.anchor, n, &e->start_mark))
		return -1;
	return node_done(b, n);
}

static int alias(struct builder *b, const yaml_event_t *e)
{
	const char *name = (const char *)e->data.alias.anchor;
	size_t i = b->n_anchors;

	while (i-- > 0) /* the latest definition wins */
		if (!strcmp(b->anchors[i].name, name))
			break;
	if (i == (size_t)-1) {
		tcx_yaml_err_mark(b->y, &e->start_mark, "undefined alias '%s'", name);
		return -1;
	}
	node_starts(b);
	return node_done(b, b->anchors[i].node);
}

/* One event of the document: 1 at its end, 0 to go on, -1 after a report. */
static int event(struct builder *b, const yaml_event_t *e)
{
	switch (e->type) {
	case YAML_SCALAR_EVENT:
		return scalar(b, e);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		return collection_start(b, e);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return collection_end(b);
	case YAML_ALIAS_EVENT:
		return alias(b, e);
	case YAML_DOCUMENT_END_EVENT:
		return 1;
	default:
		return 0;
	}
}

/* The next event, or -1 after a report. */
static int next_event(struct tcx_yaml *y, yaml_parser_t *p, yaml_event_t *e, const char *buf,
                      size_t len)
{
	if (yaml_parser_parse(p, e))
		return 0;
	syntax_error(y, p, buf, len);
	return -1;
}

/* After the first document: only empty ones ("---" alone) may follow. */
static void no_more_documents(struct tcx_yaml *y, yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_event_t e;

	for (;;) {
		yaml_event_type_t t;

		if (next_event(y, p, &e, buf, len))
			return;
		t = e.type;
		if (t == YAML_SCALAR_EVENT && e.data.scalar.length == 0 &&
		    e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			/* a trailing "---" alone is harmless */
		} else if (t != YAML_DOCUMENT_START_EVENT && t != YAML_DOCUMENT_END_EVENT &&
		           t != YAML_STREAM_END_EVENT) {
			tcx_yaml_err_mark(y, &e.start_mark, "expected a single YAML document");
			t = YAML_STREAM_END_EVENT;
		}
		yaml_event_delete(&e);
		if (t == YAML_STREAM_END_EVENT)
			return;
	}
}

/* ---- the fast path of a large block ---------------------------------------------
 *
 * libyaml's scanner, not what is built from its events, is what a large
 * `cookies:` block costs: about 1.2 s of CPU for a million entries, more than
 * the whole load may take. So the block of the top-level key y->fast_key is
 * read here instead, when every line of it has this narrow form, at one
 * indentation of n >= 1 spaces:
 *
 *     KEY: [S, S, ...]        KEY: {L: S, L: S, ...}        ([] and {} too)
 *
 * KEY being "Q" or a plain [A-Za-z0-9_]{1,64}, S "Q" or a plain
 * [A-Za-z0-9_][A-Za-z0-9_./@+-]*, L a plain [A-Za-z0-9_]{1,64}, Q printable
 * ASCII but for " and \ (so no escapes, and at most 64 of them in a KEY),
 * single spaces where shown and none elsewhere; blank lines and full-line
 * comments may come between them. It is taken only when, besides, the whole
 * file is printable ASCII, tabs and LF or CRLF line breaks (so that libyaml
 * can fail nowhere inside the block, and its lines and columns are those
 * counted here), the key line is `KEY:` at column 1, alone or followed by
 * spaces and a comment, and the only one, libyaml reads it as a key of the
 * root block mapping (fast_top_key()), and the block ends at the end of the file
 * or at a line `name:` at column 1 (whose scanning cannot fail either).
 *
 * libyaml is then given the file with the block's entries left out but for
 * a `{}` where the first one starts (every line break is kept), and the
 * entries, read here, are handed to the builder after that `{` as the events
 * libyaml would have produced for them, with the same marks. The invariant,
 * which the differential tests of tests/unit/test_config.c check: for every
 * input, the loaders see the same nodes and report the same messages with
 * or without the fast path. Anything else goes through libyaml as a whole. */

int tcx_yaml_no_fast_path;
unsigned long tcx_yaml_fast_blocks;

struct fast {
	const char *buf;
	size_t len, pos; /* of the buffer, and how much of it libyaml has read */
	size_t first;    /* where the first entry starts: `{}` there */
	size_t bol;      /* where its line starts */
	size_t end;      /* of the block */
	size_t line;     /* of the first entry, 0-based */
};

/* The classes of the characters of the grammar: W [a-zA-Z0-9_], P what a plain
 * S holds after its first character, Q what a "Q" holds. */
enum { FAST_W = 1, FAST_P = 2, FAST_Q = 4 };
#define W_(c)                                                                                      \
	(((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || ((c) >= '0' && (c) <= '9') || \
	 (c) == '_')
#define P_(c)      (W_(c) || (c) == '.' || (c) == '/' || (c) == '@' || (c) == '+' || (c) == '-')
#define Q_(c)      ((c) >= 0x20 && (c) <= 0x7e && (c) != '"' && (c) != '\\')
#define CLASS(c)   ((W_(c) ? FAST_W : 0) | (P_(c) ? FAST_P : 0) | (Q_(c) ? FAST_Q : 0))
#define CLASS4(c)  CLASS(c), CLASS((c) + 1), CLASS((c) + 2), CLASS((c) + 3)
#define CLASS16(c) CLASS4(c), CLASS4((c) + 4), CLASS4((c) + 8), CLASS4((c) + 12)
static const unsigned char fast_class[256] = {CLASS16(0),  CLASS16(16), CLASS16(32), CLASS16(48),
                                              CLASS16(64), CLASS16(80), CLASS16(96), CLASS16(112)};
#undef W_
#undef P_
#undef Q_
#undef CLASS
#undef CLASS4
#undef CLASS16

static int word_char(char ch)
{
	return fast_class[(unsigned char)ch] & FAST_W;
}

/* Reading one entry line, [pos, end) of buf, and with b handing its events to
 * the builder. */
struct fast_line {
	struct builder *b;
	const char *buf;
	size_t pos, end, bol, line;
};

static int fast_event(struct fast_line *l, yaml_event_type_t type, size_t at, size_t len,
                      int quoted)
{
	yaml_event_t e;

	if (!l->b)
		return 0;
	memset(&e, 0, sizeof(e));
	e.type = type;
	e.start_mark = (yaml_mark_t){at, l->line, at - l->bol};
	if (type == YAML_SCALAR_EVENT) {
		e.data.scalar.value = (yaml_char_t *)(l->buf + at + quoted);
		e.data.scalar.length = len;
		e.data.scalar.style =
		        quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE;
	}
	return event(l->b, &e) < 0 ? -1 : 0;
}

/* A scalar of the grammar (a KEY or L when max, an S otherwise): 0, or -1. */
static int fast_scalar(struct fast_line *l, size_t max)
{
	size_t at = l->pos, n;

	if (at < l->end && l->buf[at] == '"') {
		for (n = 0; at + 1 + n < l->end && l->buf[at + 1 + n] != '"'; n++)
			if (!(fast_class[(unsigned char)l->buf[at + 1 + n]] & FAST_Q))
				return -1;
		if (at + 1 + n == l->end || (max && n > max))
			return -1;
		l->pos = at + n + 2;
		return fast_event(l, YAML_SCALAR_EVENT, at, n, 1);
	}
	for (n = 0; at + n < l->end; n++)
		if (!(fast_class[(unsigned char)l->buf[at + n]] &
		      (n == 0 || max ? FAST_W : FAST_P)))
			break;
	if (n == 0 || (max && n > max))
		return -1;
	l->pos = at + n;
	return fast_event(l, YAML_SCALAR_EVENT, at, n, 0);
}

static int fast_lit(struct fast_line *l, const char *s)
{
	size_t n = strlen(s);

	if (l->end - l->pos < n || memcmp(l->buf + l->pos, s, n))
		return -1;
	l->pos += n;
	return 0;
}

/* KEY: [S, ...] or KEY: {L: S, ...} from l->pos to the end of the line. */
static int fast_entry(struct fast_line *l)
{
	int map;
	size_t i;

	if (fast_scalar(l, 64) || fast_lit(l, ": ") || l->pos == l->end)
		return -1;
	map = l->buf[l->pos] == '{';
	if (!map && l->buf[l->pos] != '[')
		return -1;
	if (fast_event(l, map ? YAML_MAPPING_START_EVENT : YAML_SEQUENCE_START_EVENT, l->pos, 0, 0))
		return -1;
	l->pos++;
	for (i = 0; fast_lit(l, map ? "}" : "]"); i++) {
		if ((i && fast_lit(l, ", ")) ||
		    (map && (fast_scalar(l, 64) || fast_lit(l, ": "))) || fast_scalar(l, 0))
			return -1;
	}
	if (l->pos != l->end)
		return -1;
	return fast_event(l, map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT, l->pos, 0, 0);
}

/* The line at *pos: its end without the line break, *pos moved to the next. */
static size_t fast_next_line(const char *buf, size_t len, size_t *pos)
{
	const char *nl = memchr(buf + *pos, '\n', len - *pos);
	size_t end = nl ? (size_t)(nl - buf) : len;

	*pos = nl ? end + 1 : len;
	return end > 0 && nl && buf[end - 1] == '\r' ? end - 1 : end;
}

/* Its indentation, or (size_t)-1 when it is blank or a comment. */
static size_t fast_indent(const char *buf, size_t bol, size_t end)
{
	size_t i = bol;

	while (i < end && buf[i] == ' ')
		i++;
	return i == end || buf[i] == '#' ? (size_t)-1 : i - bol;
}

/* `key:` then the end of the line, or spaces then nothing or a comment. */
static int fast_key_line(const char *buf, size_t bol, size_t end, const char *key)
{
	size_t n = strlen(key), i = bol + n + 1;

	if (end - bol < n + 1 || memcmp(buf + bol, key, n) || buf[bol + n] != ':')
		return 0;
	if (i == end)
		return 1;
	while (i < end && buf[i] == ' ')
		i++;
	return i > bol + n + 1 && (i == end || buf[i] == '#');
}

/* Does libyaml read `key` at the start of line `line`, the last of buf[0, len),
 * as a key of the root mapping of the first document, a block mapping? */
static int fast_top_key(const char *buf, size_t len, size_t line, const char *key)
{
	yaml_parser_t p;
	yaml_event_t e;
	size_t depth = 0, n = 0; /* children of the root so far */
	int root_map = 0, docs = 0, found = 0, done = 0;

	if (!yaml_parser_initialize(&p))
		return 0;
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done && yaml_parser_parse(&p, &e)) {
		if (e.type == YAML_SCALAR_EVENT && depth == 1 && root_map && n % 2 == 0 &&
		    e.start_mark.line == line && e.start_mark.column == 0 &&
		    e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    e.data.scalar.length == strlen(key) &&
		    !memcmp(e.data.scalar.value, key, strlen(key)))
			found = 1;
		switch (e.type) {
		case YAML_STREAM_START_EVENT:
			break;
		case YAML_DOCUMENT_START_EVENT:
			done = ++docs > 1;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth == 0) /* a block mapping: outside any flow collection */
				root_map = e.type == YAML_MAPPING_START_EVENT &&
				           e.data.mapping_start.style == YAML_BLOCK_MAPPING_STYLE;
			n += depth == 1;
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			break;
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			n += depth == 1;
			break;
		default: /* the end of the document or of the stream */
			done = 1;
		}
		done |= found || e.start_mark.line > line;
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return found;
}

/* Printable ASCII and tabs. */
static int fast_ascii(const char *buf, size_t bol, size_t end)
{
	for (; bol < end; bol++)
		if (((unsigned char)buf[bol] < 0x20 && buf[bol] != '\t') ||
		    (unsigned char)buf[bol] > 0x7e)
			return 0;
	return 1;
}

/* The lines from pos: where the key line starts, or len after the last line;
 * (size_t)-1 at a line that is not fast_ascii(). *line counts them. */
static size_t fast_text(const char *buf, size_t len, size_t pos, const char *key, size_t *line)
{
	size_t bol, end;

	for (; pos < len; (*line)++) {
		bol = pos;
		end = fast_next_line(buf, len, &pos);
		if (!fast_ascii(buf, bol, end))
			return (size_t)-1;
		if (fast_key_line(buf, bol, end, key))
			return bol;
	}
	return len;
}

/* Is the block of `key` in buf one for the fast path? Then f describes it. */
static int fast_prepare(struct fast *f, const char *buf, size_t len, const char *key)
{
	size_t pos, i, line = 0, key_line, key_end, indent = 0;

	/* the key line, and what comes before it */
	pos = fast_text(buf, len, 0, key, &line);
	if (pos >= len)
		return 0;
	key_line = line;
	fast_next_line(buf, len, &pos);
	key_end = pos;
	/* the block, up to the end or to `name:` at column 1 */
	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->len = len;
	f->end = len;
	for (line = key_line + 1; pos < len; line++) {
		struct fast_line l = {.buf = buf, .bol = pos, .line = line};
		size_t n;

		l.end = fast_next_line(buf, len, &pos);
		n = fast_indent(buf, l.bol, l.end);
		if (n == 0) {
			for (i = l.bol; i < l.end && word_char(buf[i]); i++)
				;
			if (i == l.bol || i == l.end || buf[i] != ':' ||
			    (i + 1 < l.end && buf[i + 1] != ' '))
				return 0;
			f->end = l.bol;
			break;
		}
		if (n == (size_t)-1) {
			if (!fast_ascii(buf, l.bol, l.end))
				return 0;
			continue;
		}
		if (!f->first) {
			f->first = l.bol + n;
			f->bol = l.bol;
			f->line = line;
			indent = n;
		}
		l.pos = l.bol + n;
		if (n != indent || fast_entry(&l))
			return 0;
	}
	/* what comes after it: no other key line */
	return f->first && fast_text(buf, len, f->end, key, &line) == len &&
	       fast_top_key(buf, key_end, key_line, key);
}

/* What libyaml reads: buf with the block's entries left out but for a `{}`
 * where the first one starts, and its line breaks (the lines and columns of
 * the rest are unchanged; a mark's index is not: nothing reads it). */
static int fast_read(void *data, unsigned char *out, size_t size, size_t *n)
{
	struct fast *f = data;
	size_t k = 0, m;
	const char *nl;

	while (k < size && f->pos < f->len) {
		if (f->pos < f->first || f->pos >= f->end) {
			m = (f->pos < f->first ? f->first : f->len) - f->pos;
			m = m < size - k ? m : size - k;
			memcpy(out + k, f->buf + f->pos, m);
			k += m;
			f->pos += m;
		} else if (f->pos < f->first + 2 || f->buf[f->pos] == '\r' ||
		           f->buf[f->pos] == '\n') {
			out[k++] = f->pos == f->first       ? '{'
			           : f->pos == f->first + 1 ? '}'
			                                    : (unsigned char)f->buf[f->pos];
			f->pos++;
		} else { /* to the next line break */
			nl = memchr(f->buf + f->pos, '\n', f->end - f->pos);
			f->pos = nl ? (size_t)(nl - f->buf) - (nl[-1] == '\r') : f->end;
		}
	}
	*n = k;
	return 1;
}

/* libyaml has just given the `{` that stands for the block: its entries. */
static int fast_entries(struct builder *b, const struct fast *f)
{
	size_t pos = f->bol, line;

	if (b->depth != 2)
		abort(); /* a program bug: fast_top_key() found a top-level key */
	tcx_yaml_fast_blocks++;
	for (line = f->line; pos < f->end; line++) {
		struct fast_line l = {.b = b, .buf = f->buf, .bol = pos, .line = line};
		size_t n;

		l.end = fast_next_line(f->buf, f->len, &pos);
		n = fast_indent(f->buf, l.bol, l.end);
		if (n == (size_t)-1)
			continue;
		l.pos = l.bol + n;
		if (fast_entry(&l))
			return -1; /* the builder failed, after a report */
	}
	return 0;
}

static void load(struct tcx_yaml *y, const char *buf, size_t len, const char *empty,
                 void (*finish)(struct tcx_yaml *y, tcx_ynode_t *root))
{
	const yaml_mark_t start = {0, 0, 0};
	struct builder *b = calloc(1, sizeof(*b));
	struct fast fast = {0};
	int fast_path =
	        y->fast_key && !tcx_yaml_no_fast_path && fast_prepare(&fast, buf, len, y->fast_key);
	yaml_parser_t parser;
	yaml_event_t e;
	int r = 0, started = 0;

	if (!b) {
		tcx_yaml_oom(y);
		return;
	}
	b->y = y;
	y->walk_top = (struct tcx_yaml_walker){.keys = y->top, .where = ""};
	if (!yaml_parser_initialize(&parser)) {
		free(b);
		tcx_yaml_oom(y);
		return;
	}
	if (fast_path)
		yaml_parser_set_input(&parser, fast_read, &fast);
	else
		yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	/* up to the end of the first document, or of the stream when it has none */
	while (r == 0) {
		if (next_event(y, &parser, &e, buf, len))
			goto out;
		if (e.type == YAML_DOCUMENT_START_EVENT)
			started = 1;
		r = e.type == YAML_STREAM_END_EVENT ? 1 : event(b, &e);
		if (r == 0 && fast_path && e.type == YAML_MAPPING_START_EVENT &&
		    e.start_mark.index == fast.first)
			r = fast_entries(b, &fast);
		yaml_event_delete(&e);
	}
	if (r < 0)
		goto out;
	if (!b->root || tcx_yaml_is_null(b->root)) {
		if (empty)
			tcx_yaml_err_mark(y, &start, "%s", empty);
	} else if (b->root->type != YAML_MAPPING_NODE) {
		tcx_yaml_err_at(y, b->root, "expected a mapping at top level, got %s",
		                tcx_yaml_kind_name(b->root->type));
	}
	if (started)
		no_more_documents(y, &parser, buf, len);
	if (finish && b->root && b->root->type == YAML_MAPPING_NODE)
		finish(y, b->root);
out:
	yaml_parser_delete(&parser);
	free(b->pending);
	free(b);
	tcx_arena_free(&y->mem);
}

void tcx_yaml_load(struct tcx_yaml *y, const char *buf, size_t len, const char *empty,
                   void (*finish)(struct tcx_yaml *y, tcx_ynode_t *root))
{
	char *file = NULL;

	if (!buf && !(buf = file = tcx_yaml_read_file(y, y->name, "open", y->max_file, &len)))
		return;
	load(y, buf, len, empty, finish);
	free_wiped(file, len);
}
