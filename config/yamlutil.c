/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two YAML loaders share: see yamlutil.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config/yamlutil.h"

/* ---- error reporting ------------------------------------------------------ */

/* "NAME:LINE:COL: msg" with a mark, "NAME: msg" without. */
__attribute__((format(printf, 4, 0))) static void
vreport(struct tcx_yaml *y, const char *name, const yaml_mark_t *m, const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL;
	int r;

	y->errors++;
	if (vasprintf(&msg, fmt, ap) < 0) {
		msg = NULL;
		goto oom;
	}
	if (m)
		r = asprintf(&line, "%s:%lu:%lu: %s", name, (unsigned long)m->line + 1,
		             (unsigned long)m->column + 1, msg);
	else
		r = asprintf(&line, "%s: %s", name, msg);
	if (r < 0)
		goto oom;
	if (y->errfn)
		y->errfn(y->arg, line);
	free(line);
	free(msg);
	return;
oom:
	free(msg);
	if (y->errfn)
		y->errfn(y->arg, "out of memory");
}

void tcx_yaml_err_at(struct tcx_yaml *y, const yaml_node_t *n, const char *fmt, ...)
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

void tcx_yaml_err_dup(struct tcx_yaml *y, const yaml_node_t *n, const char *what, const char *name,
                      const yaml_node_t *first)
{
	tcx_yaml_err_at(y, n, "duplicate %s '%s' (first at %lu:%lu)", what, name,
	                (unsigned long)first->start_mark.line + 1,
	                (unsigned long)first->start_mark.column + 1);
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

int tcx_yaml_expect(struct tcx_yaml *y, const yaml_node_t *key, const yaml_node_t *val,
                    yaml_node_type_t t)
{
	if (val->type == t)
		return 0;
	tcx_yaml_err_at(y, val, "'%s' must be %s, got %s", sval(key), kind_name(t),
	                kind_name(val->type));
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

int tcx_yaml_bool(struct tcx_yaml *y, const yaml_node_t *k, const yaml_node_t *v, int *out)
{
	if (tcx_yaml_expect(y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (!has_nul(v) && (!strcasecmp(sval(v), "true") || !strcasecmp(sval(v), "yes"))) {
		*out = 1;
		return 0;
	}
	if (!has_nul(v) && (!strcasecmp(sval(v), "false") || !strcasecmp(sval(v), "no"))) {
		*out = 0;
		return 0;
	}
	tcx_yaml_err_at(y, v, "invalid boolean '%s' for '%s'", sval(v), sval(k));
	return -1;
}

static int parse_uint(const yaml_node_t *v, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s = sval(v);
	size_t i, len = slen(v);
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

int tcx_yaml_uint(struct tcx_yaml *y, const yaml_node_t *k, const yaml_node_t *v, uint64_t min,
                  uint64_t max, uint64_t *out)
{
	if (tcx_yaml_expect(y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (parse_uint(v, min, max, out) == 0)
		return 0;
	tcx_yaml_err_at(y, v, "invalid %s '%s': must be an integer from %llu to %llu", sval(k),
	                sval(v), (unsigned long long)min, (unsigned long long)max);
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

int tcx_yaml_walk(struct tcx_yaml *y, yaml_node_t *map, const struct tcx_yaml_keys *keys,
                  const char *where, void *obj)
{
	yaml_node_t *seen[TCX_YAML_MAX_KEYS] = {NULL}; /* first occurrence of each key */
	char expected[512];
	yaml_node_pair_t *p;
	size_t i, off = 0;
	int ret = 0;

	if (keys->n > TCX_YAML_MAX_KEYS)
		abort(); /* a program bug: raise TCX_YAML_MAX_KEYS */
	expected[0] = '\0';
	for (i = 0; i < keys->n && off < sizeof(expected); i++)
		if (!keys->listed || keys->listed(row(keys, i)))
			off += (size_t)snprintf(expected + off, sizeof(expected) - off, "%s%s",
			                        off ? ", " : "", row_key(keys, i));

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = tcx_yaml_node(y, p->key), *v = tcx_yaml_node(y, p->value);

		if (k->type != YAML_SCALAR_NODE) {
			tcx_yaml_err_at(y, k, "expected a scalar key, got %s", kind_name(k->type));
			ret = -1;
			continue;
		}
		for (i = 0; i < keys->n; i++)
			if (!has_nul(k) && !strcmp(sval(k), row_key(keys, i)))
				break;
		if (i == keys->n) {
			tcx_yaml_err_at(y, k, "unknown key '%s'%s (expected one of: %s)", sval(k),
			                where, expected);
			ret = -1;
			continue;
		}
		if (seen[i]) {
			tcx_yaml_err_dup(y, k, "key", sval(k), seen[i]);
			ret = -1;
			continue;
		}
		seen[i] = k;
		if (keys->call(y, row(keys, i), obj, k, v))
			ret = -1;
	}
	return ret;
}

/* ---- files and documents ------------------------------------------------------ */

char *tcx_yaml_read_file(struct tcx_yaml *y, const char *path, const char *what, size_t max,
                         size_t *lenp)
{
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0, n;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		tcx_yaml_err_file(y, path, "cannot %s: %s", what, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (max && cap >= max) {
				tcx_yaml_err_file(y, path, "larger than %zu MiB", max >> 20);
				goto fail;
			}
			nbuf = malloc(cap ? 2 * cap : 16384);
			if (!nbuf) {
				tcx_yaml_oom(y);
				goto fail;
			}
			if (buf) {
				memcpy(nbuf, buf, len);
				explicit_bzero(buf, len);
				free(buf);
			}
			buf = nbuf;
			cap = cap ? 2 * cap : 16384;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		tcx_yaml_err_file(y, path, "cannot read: %s", strerror(errno));
		goto fail;
	}
	buf[len] = '\0';
	fclose(f);
	*lenp = len;
	return buf;
fail:
	if (buf) {
		explicit_bzero(buf, len);
		free(buf);
	}
	fclose(f);
	return NULL;
}

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

void tcx_yaml_load(struct tcx_yaml *y, const char *buf, size_t len, const char *empty,
                   int (*walk)(struct tcx_yaml *y, yaml_node_t *root))
{
	const yaml_mark_t start = {0, 0, 0};
	yaml_document_t doc, extra;
	yaml_parser_t parser;
	yaml_node_t *root;

	if (!yaml_parser_initialize(&parser)) {
		tcx_yaml_oom(y);
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		syntax_error(y, &parser, buf, len);
		goto out;
	}
	y->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root || is_null(root)) {
		if (empty) {
			tcx_yaml_err_mark(y, &start, "%s", empty);
			goto done;
		}
	} else if (root->type != YAML_MAPPING_NODE) {
		tcx_yaml_err_at(y, root, "expected a mapping at top level, got %s",
		                kind_name(root->type));
	} else if (walk(y, root)) {
		goto done;
	}
	/* a second document would be silently ignored: refuse it */
	if (root) {
		if (!yaml_parser_load(&parser, &extra)) {
			syntax_error(y, &parser, buf, len);
		} else {
			yaml_node_t *r = yaml_document_get_root_node(&extra);

			if (r && !is_null(r)) /* a trailing "---" alone is harmless */
				tcx_yaml_err_at(y, r, "expected a single YAML document");
			yaml_document_delete(&extra);
		}
	}
done:
	y->doc = NULL;
	yaml_document_delete(&doc);
out:
	yaml_parser_delete(&parser);
}
