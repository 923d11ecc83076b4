/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the YAML configuration (config/yamlutil.h).
 *
 * Each top-level key is handled as soon as it is parsed. Keys of every
 * mapping are dispatched through {key, handler} tables, so a new key is one
 * table row and one function. `cookies`, `classes` and `decoders` depend on
 * `labels`: the entries of `cookies` and `classes` are taken one by one as
 * they are parsed, and their nodes released, once `labels` is known (it
 * usually comes first); what came before it is validated after the
 * document. Every problem is reported
 * and the walk goes on; the config is returned only if there was none. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config/config.h"
#include "config/yamlutil.h"
#include "lib/grow.h"

#define TCX_INTERVAL_DEFAULT          15.0
#define TCX_LIVENESS_INTERVAL_DEFAULT 60.0
#define TCX_SWEEP_INTERVAL_DEFAULT    300.0

/* Configurations loaded so far: each one's generation. */
static atomic_ulong generations;
#define TCX_BLOCK_MAX  4294967294u
#define TCX_NETNS_MAX  63
#define TCX_IFNAME_MAX 15 /* IFNAMSIZ - 1 */

#define TC_PARENT_ROOT 0u /* a dump's "root qdisc" selector */

/* A key and its value, kept to be checked once their mapping is read. */
struct kept {
	tcx_ynode_t *k, *v;
};

/* Where a cookie or class was written, for "duplicate" messages. */
struct mark {
	uint32_t line, column;
};

struct ctx {
	struct tcx_yaml y; /* first: see config/yamlutil.h */
	struct tcx_config *cfg;
	int labels_seen;           /* `labels` was read: cookies are taken as they come */
	int labels_bad;            /* `labels` had errors: skip checks against it */
	tcx_ynode_t *cookies;      /* those that came before `labels` */
	tcx_ynode_t *decoders;     /* deferred until `labels` is known */
	size_t cap_cookies;        /* of cfg->cookies[] */
	struct mark *cookie_marks; /* of cfg->cookies[] */
	size_t cap_marks;
	tcx_ynode_t *classes;     /* those that came before `labels` */
	struct mark *class_marks; /* of cfg->classes.v[] */
	size_t cap_class_marks;
	const char *class_netns;         /* the netns of the last class that had one */
	struct kept agg_by, agg_without; /* checked once `labels` is known */
};

typedef int (*key_fn)(struct ctx *c, void *obj, tcx_ynode_t *key, tcx_ynode_t *val);

struct key_handler {
	const char *key; /* first: tcx_yaml_walk() reads it */
	key_fn fn;
};

/* ---- small helpers -------------------------------------------------------- */

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Hex bytes, optionally with 0x. Returns NULL or the reason it is invalid. */
static const char *parse_hex(const char *s, size_t len, uint8_t *out, unsigned *out_len)
{
	size_t i;

	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len == 0)
		return "empty";
	for (i = 0; i < len; i++)
		if (hexval(s[i]) < 0)
			return "not a hex digit";
	if (len > 2 * TCX_COOKIE_MAX)
		return "longer than 16 bytes";
	if (len % 2)
		return "odd number of hex digits";
	for (i = 0; i < len / 2; i++)
		out[i] = (uint8_t)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	*out_len = (unsigned)(len / 2);
	return NULL;
}

/* "15", "0.5" (seconds) or a number with a unit: ms, s, m, h. */
static int parse_interval(const char *s, size_t len, double *out)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
	uint64_t mant = 0;
	unsigned int_digits = 0, frac_digits = 0;
	const char *p = s, *end = s + len;
	double ms, scale = 1;
	size_t i;
	int dot = 0;

	for (; p < end; p++) {
		if (*p >= '0' && *p <= '9') {
			if (mant >= 100000000000000ULL) /* keep it exact in a double */
				return -1;
			mant = mant * 10 + (uint64_t)(*p - '0');
			if (dot)
				frac_digits++;
			else
				int_digits++;
		} else if (*p == '.' && !dot) {
			dot = 1;
		} else {
			break;
		}
	}
	if (int_digits == 0 || (dot && frac_digits == 0))
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if ((size_t)(end - p) == strlen(units[i].unit) &&
		    !memcmp(p, units[i].unit, end - p))
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -1;
	while (frac_digits--)
		scale *= 10;
	ms = (double)mant * units[i].ms / scale;
	if (ms < 1 || ms > 86400000)
		return -1;
	*out = ms / 1000;
	return 0;
}

static int find_label(const struct tcx_config *cfg, const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_labels; i++)
		if (!strcmp(cfg->labels[i], name))
			return (int)i;
	return -1;
}

static int call_handler(struct tcx_yaml *y, const void *row, void *obj, tcx_ynode_t *k,
                        tcx_ynode_t *v)
{
	return ((const struct key_handler *)row)->fn((struct ctx *)y, obj, k, v);
}

/* Walk a mapping, dispatching each key through tab. `where` names the mapping
 * in messages (" in target"), empty at the top level. */
static int walk_mapping(struct ctx *c, tcx_ynode_t *map, const struct key_handler *tab, size_t n,
                        const char *where, void *obj)
{
	const struct tcx_yaml_keys keys = {tab, n, sizeof(*tab), call_handler, NULL};

	return tcx_yaml_walk(&c->y, map, &keys, where, obj);
}

/* A section (`http:`, `snmp:`): a mapping whose keys are in tab. */
static int section(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, const struct key_handler *tab,
                   size_t n, const char *where)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_MAPPING_NODE))
		return -1;
	return walk_mapping(c, v, tab, n, where, NULL);
}

/* A decimal integer in [min, max]. */
static int uint_value(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, unsigned min, unsigned max,
                      unsigned *out)
{
	uint64_t x;

	if (tcx_yaml_uint(&c->y, k, v, min, max, &x))
		return -1;
	*out = (unsigned)x;
	return 0;
}

/* A duration (parse_interval()) of min_s to max_s seconds, whole seconds
 * when whole; else "invalid KEY 'VALUE': expected". */
static int duration_value(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, double min_s, double max_s,
                          int whole, const char *expected, double *out)
{
	double s;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (parse_interval(tcx_yaml_sval(v), tcx_yaml_slen(v), &s) || s < min_s || s > max_s ||
	    (whole && s != (double)(int)s)) {
		tcx_yaml_err_at(&c->y, v, "invalid %s '%s': %s", tcx_yaml_sval(k), tcx_yaml_sval(v),
		                expected);
		return -1;
	}
	*out = s;
	return 0;
}

/* A non-empty string without NUL, copied; else "invalid KEY 'VALUE':
 * expected". */
static int string_value(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, const char *expected,
                        char **out)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (tcx_yaml_slen(v) == 0) {
		tcx_yaml_err_at(&c->y, v, "invalid %s '%s': %s", tcx_yaml_sval(k), tcx_yaml_sval(v),
		                expected);
		return -1;
	}
	*out = tcx_yaml_strndup(&c->y, tcx_yaml_sval(v), tcx_yaml_slen(v));
	return *out ? 0 : -1;
}

static int keep(struct ctx *c, struct kept *kept, tcx_ynode_t *k, tcx_ynode_t *v,
                yaml_node_type_t t)
{
	kept->k = k;
	kept->v = v;
	return tcx_yaml_expect(&c->y, k, v, t);
}

/* ---- interval, unmapped ------------------------------------------------------ */

static int top_interval(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return duration_value(c, k, v, 0, 86400, 0,
	                      "must be a duration between 1ms and 24h such as 15s, 500ms, 2m",
	                      &c->cfg->interval_s);
}

/* A duration, or 0 (a meaning of its own, said in how). */
static int zero_or_duration(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, const char *how,
                            double *out)
{
	if (v->type == YAML_SCALAR_NODE && tcx_yaml_slen(v) == 1 && tcx_yaml_sval(v)[0] == '0') {
		*out = 0;
		return 0;
	}
	return duration_value(c, k, v, 0, 86400, 0, how, out);
}

/* How often the rows of terse targets are dumped in full, for their
 * action times: a duration, or 0 for never. */
static int top_liveness_interval(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return zero_or_duration(c, k, v,
	                        "must be 0 (off) or a duration between 1ms and 24h such as 60s, 5m",
	                        &c->cfg->liveness_interval_s);
}

/* How often the daemon asks every qdisc and class for its filters, not only
 * those known to hold some: a duration, or 0 for every collection. */
static int top_sweep_interval(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return zero_or_duration(c, k, v,
	                        "must be 0 (every collection) or a duration between 1ms and 24h "
	                        "such as 5m, 1h",
	                        &c->cfg->sweep_interval_s);
}

static int top_unmapped(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (!strcasecmp(tcx_yaml_sval(v), "export")) {
		c->cfg->unmapped = TCX_UNMAPPED_EXPORT;
	} else if (!strcasecmp(tcx_yaml_sval(v), "drop")) {
		c->cfg->unmapped = TCX_UNMAPPED_DROP;
	} else {
		tcx_yaml_err_at(&c->y, v, "invalid unmapped policy '%s' (expected export or drop)",
		                tcx_yaml_sval(v));
		return -1;
	}
	return 0;
}

/* ---- targets ---------------------------------------------------------------- */

struct target_ps {
	struct tcx_target_cfg *t;
	int n_kinds;   /* how many of all, dev, block were written */
	int dev_given; /* `dev` was written (even if invalid) */
	tcx_ynode_t *parent_key;
	tcx_ynode_t *netns_val;
};

static int tgt_all(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct target_ps *ps = obj;
	int b;

	ps->n_kinds++;
	if (tcx_yaml_bool(&c->y, k, v, &b))
		return -1;
	if (!b) {
		tcx_yaml_err_at(&c->y, v, "all: false is meaningless; remove the entry");
		return -1;
	}
	ps->t->all = 1;
	return 0;
}

static int is_space(char ch)
{
	return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

/* A device name of a target or class, s[0, len): else DEV_NAME_RULE. */
#define DEV_NAME_RULE "must be 1 to 15 characters without '/' or whitespace"
static int dev_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > TCX_IFNAME_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == '\0' || is_space(s[i]))
			return 0;
	return 1;
}

/* A named namespace of a target or class, s[0, len) (a glob too): else
 * "must be a name under " TCX_NETNS_DIR. */
static int netns_name_ok(const char *s, size_t len)
{
	return len > 0 && len <= TCX_NETNS_MAX && !memchr(s, '\0', len) && !memchr(s, '/', len) &&
	       !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

static int tgt_dev(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct target_ps *ps = obj;

	ps->n_kinds++;
	ps->dev_given = 1;
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (!dev_name_ok(tcx_yaml_sval(v), tcx_yaml_slen(v))) {
		tcx_yaml_err_at(&c->y, v, "invalid device name '%s': " DEV_NAME_RULE,
		                tcx_yaml_sval(v));
		return -1;
	}
	ps->t->dev = tcx_yaml_strndup(&c->y, tcx_yaml_sval(v), tcx_yaml_slen(v));
	return ps->t->dev ? 0 : -1;
}

/* A handle as tc writes it, MAJ:MIN in hex, 1 to 4 digits each (any case,
 * leading zeros allowed), MIN possibly empty (a qdisc's, "1:"): 0, setting
 * *nmin to the digits of MIN, or -1. */
static int parse_handle(const char *s, size_t len, uint32_t *out, size_t *nmin_out)
{
	uint32_t maj = 0, min = 0;
	size_t i, nmaj = 0, nmin = 0;

	for (i = 0; i < len && s[i] != ':'; i++, nmaj++) {
		if (hexval(s[i]) < 0 || nmaj == 4)
			return -1;
		maj = maj << 4 | (uint32_t)hexval(s[i]);
	}
	if (i == len || nmaj == 0)
		return -1;
	for (i++; i < len; i++, nmin++) {
		if (hexval(s[i]) < 0 || nmin == 4)
			return -1;
		min = min << 4 | (uint32_t)hexval(s[i]);
	}
	*out = maj << 16 | min;
	*nmin_out = nmin;
	return 0;
}

static int parse_parent(const char *s, size_t len, uint32_t *out)
{
	static const struct {
		const char *name;
		uint32_t parent;
	} names[] = {
	        {"ingress", TCX_PARENT_INGRESS},
	        {"egress", TCX_PARENT_EGRESS},
	        {"root", TC_PARENT_ROOT},
	};
	size_t i, nmin;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (len == strlen(names[i].name) && !strncasecmp(s, names[i].name, len)) {
			*out = names[i].parent;
			return 0;
		}
	}
	return parse_handle(s, len, out, &nmin);
}

static int tgt_parent(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct target_ps *ps = obj;
	size_t i;

	ps->parent_key = k;
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (parse_parent(tcx_yaml_sval(v), tcx_yaml_slen(v), &ps->t->parent)) {
		tcx_yaml_err_at(&c->y, v,
		                "invalid parent '%s': expected ingress, egress, root or a handle "
		                "such as 1: "
		                "or 1:10",
		                tcx_yaml_sval(v));
		return -1;
	}
	ps->t->has_parent = 1;
	ps->t->parent_str = tcx_yaml_strndup(&c->y, tcx_yaml_sval(v), tcx_yaml_slen(v));
	if (!ps->t->parent_str)
		return -1;
	if (!strchr(ps->t->parent_str, ':'))
		for (i = 0; ps->t->parent_str[i]; i++)
			if (ps->t->parent_str[i] >= 'A' && ps->t->parent_str[i] <= 'Z')
				ps->t->parent_str[i] = (char)(ps->t->parent_str[i] - 'A' + 'a');
	return 0;
}

static int tgt_block(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct target_ps *ps = obj;

	ps->n_kinds++;
	if (uint_value(c, k, v, 1, TCX_BLOCK_MAX, &ps->t->block))
		return -1;
	ps->t->has_block = 1;
	return 0;
}

/* ---- named namespaces ---------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **tcx_netns_glob(const char *glob)
{
	DIR *d = opendir(TCX_NETNS_DIR);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (!d && errno != ENOENT)
		return NULL; /* errno says why */
	if (tcx_grow(&names, &cap, 1, sizeof(*names), 16) < 0) {
		err = ENOMEM;
		goto fail;
	}
	names[0] = NULL;
	while (d) {
		errno = 0;
		if (!(e = readdir(d))) {
			err = errno; /* 0 at the end */
			break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    strlen(e->d_name) > TCX_NETNS_MAX || fnmatch(glob, e->d_name, 0) != 0)
			continue;
		if (tcx_grow(&names, &cap, n + 2, sizeof(*names), 16) < 0 ||
		    !(names[n] = strdup(e->d_name))) {
			err = ENOMEM;
			break;
		}
		names[++n] = NULL;
	}
	if (err)
		goto fail;
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	return names;
fail:
	if (d)
		closedir(d);
	tcx_netns_names_free(names);
	errno = err;
	return NULL;
}

void tcx_netns_names_free(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* Keep a warning (tcx_yaml_msg_at()) in cfg->warnings. */
static void keep_warning(struct ctx *c, char *msg)
{
	struct tcx_config *cfg = c->cfg;
	char **w;

	if (!msg)
		return;
	w = realloc(cfg->warnings, (cfg->n_warnings + 1) * sizeof(*w));
	if (!w) {
		free(msg);
		tcx_yaml_oom(&c->y);
		return;
	}
	cfg->warnings = w;
	cfg->warnings[cfg->n_warnings++] = msg;
}

/* A glob that matches no namespace yet is fine (they come and go, and are
 * looked for at every collection), but may be a typo. */
static void netns_glob_check(struct ctx *c, const tcx_ynode_t *v, const char *glob)
{
	char **names = tcx_netns_glob(glob);

	if (!names) {
		/* collection reads it again, and says so when it cannot */
		keep_warning(c, tcx_yaml_msg_at(&c->y, v,
		                                "netns '%s': cannot read " TCX_NETNS_DIR ": %s",
		                                glob, strerror(errno)));
		return;
	}
	if (!names[0])
		keep_warning(c, tcx_yaml_msg_at(&c->y, v,
		                                "netns '%s' matches no namespace in " TCX_NETNS_DIR
		                                " yet",
		                                glob));
	tcx_netns_names_free(names);
}

static int tgt_netns(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct target_ps *ps = obj;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (!netns_name_ok(tcx_yaml_sval(v), tcx_yaml_slen(v))) {
		tcx_yaml_err_at(&c->y, v, "invalid netns '%s': must be a name under " TCX_NETNS_DIR,
		                tcx_yaml_sval(v));
		return -1;
	}
	ps->t->netns = tcx_yaml_strndup(&c->y, tcx_yaml_sval(v), tcx_yaml_slen(v));
	if (!ps->t->netns)
		return -1;
	ps->t->netns_glob = strpbrk(ps->t->netns, "*?[") != NULL;
	ps->netns_val = v;
	return 0;
}

static const struct key_handler target_keys[] = {
        {"all", tgt_all},     {"dev", tgt_dev},     {"parent", tgt_parent},
        {"block", tgt_block}, {"netns", tgt_netns},
};

static int top_targets(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_config *cfg = c->cfg;
	tcx_ynode_t **it;
	int ret = 0;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SEQUENCE_NODE))
		return -1;
	if (tcx_yaml_n_items(v) == 0) {
		tcx_yaml_err_at(&c->y, v, "targets must not be empty");
		return -1;
	}
	cfg->targets = calloc(tcx_yaml_n_items(v), sizeof(*cfg->targets));
	if (!cfg->targets)
		return tcx_yaml_oom(&c->y);
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		tcx_ynode_t *e = *it;
		struct target_ps ps = {.t = &cfg->targets[cfg->n_targets++]};

		ps.t->line = (int)e->start_mark.line + 1;
		if (tcx_yaml_expect_item(&c->y, e, YAML_MAPPING_NODE, "target")) {
			ret = -1;
			continue;
		}
		if (walk_mapping(c, e, target_keys, sizeof(target_keys) / sizeof(target_keys[0]),
		                 " in target", &ps))
			ret = -1;
		if (ps.n_kinds != 1) {
			tcx_yaml_err_at(&c->y, e,
			                "target needs exactly one of 'all', 'dev' or 'block'");
			ret = -1;
		} else if (ps.parent_key && !ps.dev_given) {
			tcx_yaml_err_at(&c->y, ps.parent_key, "'parent' needs 'dev'");
			ret = -1;
		} else if (ps.t->netns_glob && !ps.t->all) {
			tcx_yaml_err_at(&c->y, ps.netns_val,
			                "netns '%s' is a glob: it needs 'all: true' (a device or "
			                "block is named in one namespace)",
			                ps.t->netns);
			ret = -1;
		} else if (ps.t->netns_glob) {
			netns_glob_check(c, ps.netns_val, ps.t->netns);
		}
	}
	return ret;
}

static int default_targets(struct ctx *c)
{
	struct tcx_config *cfg = c->cfg;

	cfg->targets = calloc(1, sizeof(*cfg->targets));
	if (!cfg->targets)
		return tcx_yaml_oom(&c->y);
	cfg->targets[0].all = 1;
	cfg->n_targets = 1;
	return 0;
}

/* ---- labels ----------------------------------------------------------------- */

static int top_labels(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_config *cfg = c->cfg;
	tcx_ynode_t **it;
	size_t n;

	c->labels_seen = 1;
	if (tcx_yaml_expect(&c->y, k, v, YAML_SEQUENCE_NODE)) {
		c->labels_bad = 1;
		return -1;
	}
	n = tcx_yaml_n_items(v);
	cfg->labels = calloc(n < TCX_MAX_LABELS ? n : TCX_MAX_LABELS, sizeof(char *));
	if (n && !cfg->labels) {
		c->labels_bad = 1;
		return tcx_yaml_oom(&c->y);
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		tcx_ynode_t *e = *it;

		if (tcx_yaml_expect_item(&c->y, e, YAML_SCALAR_NODE, "label name"))
			goto bad;
		if (!tcx_label_name_valid(tcx_yaml_sval(e))) {
			tcx_yaml_err_at(&c->y, e,
			                "invalid label name '%s': must match "
			                "[a-zA-Z_][a-zA-Z0-9_]* and not "
			                "start with __",
			                tcx_yaml_sval(e));
			goto bad;
		}
		if (!strcmp(tcx_yaml_sval(e), "job") || !strcmp(tcx_yaml_sval(e), "instance")) {
			tcx_yaml_err_at(&c->y, e,
			                "label name '%s' is set by Prometheus on every series it "
			                "scrapes (it would rename this one exported_%s)",
			                tcx_yaml_sval(e), tcx_yaml_sval(e));
			goto bad;
		}
		if (tcx_label_name_reserved(tcx_yaml_sval(e))) {
			tcx_yaml_err_at(&c->y, e, "label name '%s' clashes with a built-in label",
			                tcx_yaml_sval(e));
			goto bad;
		}
		if (find_label(cfg, tcx_yaml_sval(e)) >= 0) {
			tcx_yaml_err_at(&c->y, e, "duplicate label name '%s'", tcx_yaml_sval(e));
			goto bad;
		}
		if (cfg->n_labels == TCX_MAX_LABELS) {
			tcx_yaml_err_at(&c->y, e, "too many labels (at most %d)", TCX_MAX_LABELS);
			c->labels_bad = 1;
			return -1;
		}
		cfg->labels[cfg->n_labels] =
		        tcx_yaml_strndup(&c->y, tcx_yaml_sval(e), tcx_yaml_slen(e));
		if (!cfg->labels[cfg->n_labels])
			goto bad;
		cfg->n_labels++;
		continue;
bad:
		c->labels_bad = 1;
	}
	return c->labels_bad ? -1 : 0;
}

/* ---- cookies ---------------------------------------------------------------- */

static int defer_cookies(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_MAPPING_NODE))
		return -1;
	c->cookies = v;
	return 0;
}

/* Collect the value nodes of one cookie or class (what: "cookie", "class";
 * name: its key, normalised), in label order, into vals[]. */
static int label_values(struct ctx *c, const char *what, const char *name, const tcx_ynode_t *v,
                        tcx_ynode_t **vals)
{
	struct tcx_config *cfg = c->cfg;
	tcx_ynode_t *first[TCX_MAX_LABELS] = {NULL}; /* key of each value, for messages */
	struct tcx_ypair *p;
	tcx_ynode_t **it;
	size_t i;
	int ret = 0;

	if (cfg->n_labels == 0) {
		tcx_yaml_err_at(&c->y, v, "%s '%s': no labels are declared (add a 'labels' list)",
		                what, name);
		return -1;
	}
	if (v->type == YAML_SEQUENCE_NODE) {
		if (tcx_yaml_n_items(v) != cfg->n_labels) {
			tcx_yaml_err_at(&c->y, v, "%s '%s': expected %zu values, got %zu", what,
			                name, cfg->n_labels, tcx_yaml_n_items(v));
			return -1;
		}
		for (i = 0, it = v->data.sequence.items.start; it < v->data.sequence.items.top;
		     it++, i++)
			vals[i] = *it;
	} else if (v->type == YAML_MAPPING_NODE) {
		for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
			tcx_ynode_t *lk = p->key;
			int l;

			if (tcx_yaml_expect_scalar_key(&c->y, lk)) {
				ret = -1;
				continue;
			}
			l = find_label(cfg, tcx_yaml_sval(lk));
			if (l < 0) {
				tcx_yaml_err_at(&c->y, lk, "%s '%s': unknown label '%s'", what,
				                name, tcx_yaml_sval(lk));
				ret = -1;
				continue;
			}
			if (vals[l]) {
				tcx_yaml_err_dup(&c->y, lk, "key", tcx_yaml_sval(lk),
				                 &first[l]->start_mark);
				ret = -1;
				continue;
			}
			first[l] = lk;
			vals[l] = p->value;
		}
		for (i = 0; i < cfg->n_labels; i++) {
			if (!vals[i]) {
				tcx_yaml_err_at(&c->y, v, "%s '%s': missing value for label '%s'",
				                what, name, cfg->labels[i]);
				ret = -1;
			}
		}
	} else {
		tcx_yaml_err_at(&c->y, v,
		                "%s '%s': expected a mapping or a sequence of label values, got %s",
		                what, name, tcx_yaml_kind_name(v->type));
		return -1;
	}
	for (i = 0; i < cfg->n_labels; i++) {
		if (!vals[i])
			continue;
		if (vals[i]->type != YAML_SCALAR_NODE) {
			tcx_yaml_err_at(&c->y, vals[i], "%s '%s': label values must be scalars",
			                what, name);
			ret = -1;
		}
	}
	return ret;
}

/* n pointers followed by the strings they point to, in cfg->cookie_mem. */
static char **values_block(struct ctx *c, tcx_ynode_t **vals, size_t n)
{
	size_t i, size = n * sizeof(char *);
	char **out, *s;

	for (i = 0; i < n; i++)
		size += tcx_yaml_slen(vals[i]) + 1;
	out = tcx_arena_alloc(&c->cfg->cookie_mem, size);
	if (!out) {
		tcx_yaml_oom(&c->y);
		return NULL;
	}
	s = (char *)(out + n);
	for (i = 0; i < n; i++) {
		memcpy(s, tcx_yaml_sval(vals[i]), tcx_yaml_slen(vals[i]) + 1);
		out[i] = s;
		s += tcx_yaml_slen(vals[i]) + 1;
	}
	return out;
}

/* The slot of a cookie in the index: where it is, or the empty one where it
 * would go. */
static size_t cookie_slot(const struct tcx_config *cfg, const uint8_t *bytes, unsigned len)
{
	size_t i, mask = cfg->n_slots - 1;

	for (i = tcx_cookie_hash(bytes, len) & mask; cfg->slots[i] != UINT32_MAX;
	     i = (i + 1) & mask) {
		const struct tcx_cookie_entry *o = &cfg->cookies[cfg->slots[i]];

		if (o->len == len && !memcmp(o->bytes, bytes, len))
			break;
	}
	return i;
}

#define PREFETCH_AHEAD 16

/* The index of cookies[], at most half full, made once they are all known:
 * a cookie given twice is reported there. */
static void index_cookies(struct ctx *c)
{
	struct tcx_config *cfg = c->cfg;
	size_t i, n_slots = 2;

	while (n_slots < 2 * cfg->n_cookies)
		n_slots <<= 1;
	cfg->slots = malloc(n_slots * sizeof(*cfg->slots));
	if (!cfg->slots) {
		tcx_yaml_oom(&c->y);
		return;
	}
	cfg->n_slots = n_slots;
	memset(cfg->slots, 0xff, n_slots * sizeof(*cfg->slots));
	for (i = 0; i < cfg->n_cookies; i++) {
		const struct tcx_cookie_entry *e = &cfg->cookies[i];
		size_t slot;

		/* the slots are read in random order: ask for those of a later
		 * cookie now, so that its cache miss overlaps with this one's */
		if (i + PREFETCH_AHEAD < cfg->n_cookies) {
			const struct tcx_cookie_entry *a = &cfg->cookies[i + PREFETCH_AHEAD];

			__builtin_prefetch(
			        &cfg->slots[tcx_cookie_hash(a->bytes, a->len) & (n_slots - 1)]);
		}
		slot = cookie_slot(cfg, e->bytes, e->len);

		if (cfg->slots[slot] != UINT32_MAX) {
			const struct mark *m = &c->cookie_marks[i],
			                  *f = &c->cookie_marks[cfg->slots[slot]];
			yaml_mark_t at = {.line = m->line, .column = m->column};
			char hex[2 * TCX_COOKIE_MAX + 1];

			tcx_cookie_hex(e->bytes, e->len, hex);
			tcx_yaml_err_mark(&c->y, &at, "duplicate cookie '%s' (first at %lu:%lu)",
			                  hex, (unsigned long)f->line + 1,
			                  (unsigned long)f->column + 1);
			continue;
		}
		cfg->slots[slot] = (uint32_t)i;
	}
}

/* One `cookies:` entry, as it is parsed (config_entry()) or after the
 * document when `labels` came later. */
static void cookie_entry(struct ctx *c, const struct tcx_ypair *p)
{
	struct tcx_config *cfg = c->cfg;
	tcx_ynode_t *k = p->key, *v = p->value;
	tcx_ynode_t *vals[TCX_MAX_LABELS] = {NULL};
	char hex[2 * TCX_COOKIE_MAX + 1];
	struct tcx_cookie_entry *e;
	const char *why;
	unsigned len;

	if (tcx_yaml_expect_scalar_key(&c->y, k))
		return;
	if (tcx_grow(&cfg->cookies, &c->cap_cookies, cfg->n_cookies + 1, sizeof(*cfg->cookies),
	             64) < 0 ||
	    tcx_grow(&c->cookie_marks, &c->cap_marks, cfg->n_cookies + 1, sizeof(*c->cookie_marks),
	             64) < 0 ||
	    c->cap_cookies > UINT32_MAX) {
		tcx_yaml_oom(&c->y);
		return;
	}
	e = &cfg->cookies[cfg->n_cookies];
	memset(e, 0, sizeof(*e));
	why = parse_hex(tcx_yaml_sval(k), tcx_yaml_slen(k), e->bytes, &len);
	if (why) {
		tcx_yaml_err_at(&c->y, k, "invalid hex cookie '%s': %s", tcx_yaml_sval(k), why);
		return;
	}
	e->len = (uint8_t)len;
	c->cookie_marks[cfg->n_cookies++] =
	        (struct mark){(uint32_t)k->start_mark.line, (uint32_t)k->start_mark.column};
	tcx_cookie_hex(e->bytes, len, hex);
	if (c->labels_bad || label_values(c, "cookie", hex, v, vals))
		return;
	if (c->y.errors)
		return; /* the config is lost anyway; save the allocations */
	e->values = values_block(c, vals, cfg->n_labels);
}

static void load_cookies(struct ctx *c)
{
	struct tcx_ypair *p;

	for (p = c->cookies->data.mapping.pairs.start; p < c->cookies->data.mapping.pairs.top; p++)
		cookie_entry(c, p);
}

/* ---- classes ---------------------------------------------------------------- */

static int defer_classes(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_MAPPING_NODE))
		return -1;
	c->classes = v;
	return 0;
}

/* The class id of class key k, s[0, len), as tc writes it (parse_handle()),
 * major and minor 1 to ffff: 0, or -1 after a report. */
static int class_id(struct ctx *c, const tcx_ynode_t *k, const char *s, size_t len, uint32_t *out)
{
	const char *key = tcx_yaml_sval(k);
	int n = (int)len;
	size_t nmin;

	if (parse_handle(s, len, out, &nmin))
		tcx_yaml_err_at(&c->y, k,
		                "class '%s': invalid class id '%.*s': expected MAJOR:MINOR, 1 to 4 "
		                "hex digits each, such as 1:10",
		                key, n, s);
	else if (nmin == 0)
		tcx_yaml_err_at(&c->y, k,
		                "class '%s': '%.*s' is a qdisc handle; a class id has a minor too, "
		                "such as 1:10",
		                key, n, s);
	else if (TC_H_MAJ(*out) == 0)
		tcx_yaml_err_at(&c->y, k,
		                "class '%s': '%.*s' has major 0; the major is the handle of the "
		                "class's qdisc, 1 to ffff",
		                key, n, s);
	else if (TC_H_MIN(*out) == 0)
		tcx_yaml_err_at(&c->y, k,
		                "class '%s': '%.*s' is the qdisc %x: itself; a class's minor is 1 "
		                "to ffff",
		                key, n, s, TC_H_MAJ(*out) >> 16);
	else
		return 0;
	return -1;
}

/* The netns of a class, in cfg->cookie_mem: the same string as the last one
 * given when it is the same name (classes come in runs of one namespace). */
static const char *class_netns(struct ctx *c, const char *s, size_t len)
{
	char *p;

	if (c->class_netns && !strncmp(c->class_netns, s, len) && !c->class_netns[len])
		return c->class_netns;
	p = tcx_arena_alloc(&c->cfg->cookie_mem, len + 1);
	if (!p) {
		tcx_yaml_oom(&c->y);
		return NULL;
	}
	memcpy(p, s, len);
	p[len] = '\0';
	return c->class_netns = p;
}

/* A `classes:` key, [NETNS/]DEV CLASSID, into e: 0, or -1 after a report
 * naming what is wrong. */
static int class_key(struct ctx *c, const tcx_ynode_t *k, struct tcx_class_entry *e)
{
	const char *s = tcx_yaml_sval(k), *slash, *dev;
	size_t len = tcx_yaml_slen(k), sp, i, dev_len;

	for (sp = 0; sp < len && !is_space(s[sp]); sp++)
		;
	for (i = sp + 1; i < len && !is_space(s[i]); i++)
		;
	if (sp + 1 >= len) {
		tcx_yaml_err_at(&c->y, k,
		                "class '%s': expected \"DEVICE CLASSID\" or \"NETNS/DEVICE "
		                "CLASSID\", such as \"eth0 1:10\"",
		                s);
		return -1;
	}
	if (s[sp] != ' ' || i < len) {
		tcx_yaml_err_at(
		        &c->y, k,
		        "class '%s': expected one space between the device and the class id", s);
		return -1;
	}
	slash = memchr(s, '/', sp);
	dev = slash ? slash + 1 : s;
	dev_len = sp - (size_t)(dev - s);
	if (slash) {
		size_t ns_len = (size_t)(slash - s);

		if (!netns_name_ok(s, ns_len)) {
			tcx_yaml_err_at(&c->y, k,
			                "class '%s': invalid netns '%.*s': must be a name "
			                "under " TCX_NETNS_DIR,
			                s, (int)ns_len, s);
			return -1;
		}
		if (strcspn(s, "*?[") < ns_len) {
			tcx_yaml_err_at(&c->y, k,
			                "class '%s': netns '%.*s' is a glob: a class names one "
			                "namespace, or every one without NETNS/",
			                s, (int)ns_len, s);
			return -1;
		}
		if (!(e->netns = class_netns(c, s, ns_len)))
			return -1;
	}
	if (!dev_name_ok(dev, dev_len)) {
		tcx_yaml_err_at(&c->y, k, "class '%s': invalid device name '%.*s': " DEV_NAME_RULE,
		                s, (int)dev_len, dev);
		return -1;
	}
	memcpy(e->dev, dev, dev_len);
	return class_id(c, k, s + sp + 1, len - sp - 1, &e->classid);
}

/* One `classes:` entry, as it is parsed (config_entry()) or after the
 * document when `labels` came later. */
static void class_entry(struct ctx *c, const struct tcx_ypair *p)
{
	struct tcx_classes *cl = &c->cfg->classes;
	tcx_ynode_t *k = p->key, *v = p->value;
	tcx_ynode_t *vals[TCX_MAX_LABELS] = {NULL};
	struct tcx_class_entry e = {.netns = ""}, *ne;
	char name[TCX_CLASS_KEY_MAX];

	if (tcx_yaml_expect_scalar_key(&c->y, k) || class_key(c, k, &e))
		return;
	ne = tcx_grow(&c->class_marks, &c->cap_class_marks, cl->n + 1, sizeof(*c->class_marks), 64)
	             ? NULL
	             : tcx_classes_add(cl);
	if (!ne) {
		tcx_yaml_oom(&c->y);
		return;
	}
	*ne = e;
	c->class_marks[cl->n - 1] =
	        (struct mark){(uint32_t)k->start_mark.line, (uint32_t)k->start_mark.column};
	tcx_class_key_format(ne, name);
	if (c->labels_bad || label_values(c, "class", name, v, vals))
		return;
	if (c->y.errors)
		return; /* the config is lost anyway; save the allocations */
	ne->values = (const char **)values_block(c, vals, c->cfg->n_labels);
}

static void load_classes(struct ctx *c)
{
	struct tcx_ypair *p;

	for (p = c->classes->data.mapping.pairs.start; p < c->classes->data.mapping.pairs.top; p++)
		class_entry(c, p);
}

static void class_dup(void *arg, size_t i, size_t first)
{
	struct ctx *c = arg;
	const struct mark *m = &c->class_marks[i], *f = &c->class_marks[first];
	yaml_mark_t at = {.line = m->line, .column = m->column};
	char name[TCX_CLASS_KEY_MAX];

	tcx_class_key_format(&c->cfg->classes.v[i], name);
	tcx_yaml_err_mark(&c->y, &at, "duplicate class '%s' (first at %lu:%lu)", name,
	                  (unsigned long)f->line + 1, (unsigned long)f->column + 1);
}

/* ---- decoders --------------------------------------------------------------- */

static int defer_decoders(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	if (tcx_yaml_expect(&c->y, k, v, YAML_SEQUENCE_NODE))
		return -1;
	c->decoders = v;
	return 0;
}

/* Key and value nodes of one decoder, checked once its type is known. */
struct dec_ps {
	struct tcx_decoder *d;
	struct kept type, label, layout, fields;
};

static int dec_type(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &((struct dec_ps *)obj)->type, k, v, YAML_SCALAR_NODE);
}

static int dec_label(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &((struct dec_ps *)obj)->label, k, v, YAML_SCALAR_NODE);
}

static int dec_length(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, TCX_COOKIE_MAX, &((struct dec_ps *)obj)->d->length);
}

static int dec_prefix(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct dec_ps *ps = obj;
	const char *why;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	why = parse_hex(tcx_yaml_sval(v), tcx_yaml_slen(v), ps->d->prefix, &ps->d->prefix_len);
	if (why) {
		tcx_yaml_err_at(&c->y, v, "invalid hex prefix '%s': %s", tcx_yaml_sval(v), why);
		return -1;
	}
	return 0;
}

static int dec_layout(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &((struct dec_ps *)obj)->layout, k, v, YAML_SCALAR_NODE);
}

static int dec_fields(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &((struct dec_ps *)obj)->fields, k, v, YAML_SEQUENCE_NODE);
}

static const struct key_handler decoder_keys[] = {
        {"type", dec_type},     {"label", dec_label},   {"length", dec_length},
        {"prefix", dec_prefix}, {"layout", dec_layout}, {"fields", dec_fields},
};

/* A decoder's label: the index of a declared label, or -1 after a report. */
static int decoder_label(struct ctx *c, const tcx_ynode_t *v)
{
	int l = find_label(c->cfg, tcx_yaml_sval(v));

	if (l < 0 && !c->labels_bad)
		tcx_yaml_err_at(&c->y, v, "decoder label '%s' is not declared in 'labels'",
		                tcx_yaml_sval(v));
	return l;
}

struct field_ps {
	struct tcx_field *f;
	int has_label, has_bytes;
};

static int fld_label(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct field_ps *ps = obj;

	ps->has_label = 1;
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	ps->f->label = decoder_label(c, v);
	return ps->f->label < 0 ? -1 : 0;
}

static int fld_bytes(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct field_ps *ps = obj;

	ps->has_bytes = 1;
	return uint_value(c, k, v, 1, 8, &ps->f->width);
}

static const struct key_handler field_keys[] = {
        {"label", fld_label},
        {"bytes", fld_bytes},
};

static int decoder_fields(struct ctx *c, struct dec_ps *ps)
{
	struct tcx_decoder *d = ps->d;
	tcx_ynode_t *seq = ps->fields.v;
	tcx_ynode_t **it;
	unsigned total = 0;
	int ret = 0, labelled = 0, too_many = 0;

	if (tcx_yaml_n_items(seq) == 0) {
		tcx_yaml_err_at(&c->y, seq, "decoder 'fields' needs a non-empty 'fields' list");
		return -1;
	}
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		tcx_ynode_t *e = *it;
		struct tcx_field f = {.label = -1};
		struct field_ps fp = {.f = &f};

		if (tcx_yaml_expect_item(&c->y, e, YAML_MAPPING_NODE, "field")) {
			ret = -1;
			continue;
		}
		if (walk_mapping(c, e, field_keys, sizeof(field_keys) / sizeof(field_keys[0]),
		                 " in field", &fp))
			ret = -1;
		if (!fp.has_bytes) {
			tcx_yaml_err_at(&c->y, e, "field needs 'bytes'");
			ret = -1;
		}
		labelled |= fp.has_label;
		total += f.width;
		if (d->n_fields == TCX_MAX_FIELDS) {
			if (!too_many)
				tcx_yaml_err_at(&c->y, e, "too many fields (at most %d)",
				                TCX_MAX_FIELDS);
			too_many = 1;
			ret = -1;
			continue;
		}
		d->fields[d->n_fields++] = f;
	}
	if (total > TCX_COOKIE_MAX) {
		tcx_yaml_err_at(&c->y, seq, "fields cover %u bytes, more than a cookie's %d", total,
		                TCX_COOKIE_MAX);
		ret = -1;
	}
	if (!labelled && ret == 0) {
		tcx_yaml_err_at(&c->y, seq,
		                "decoder 'fields' needs at least one field with a 'label'");
		ret = -1;
	}
	return ret;
}

static int load_decoder(struct ctx *c, tcx_ynode_t *e, struct tcx_decoder *d)
{
	static const char *const types[] = {"ascii", "fields", "uuid"};
	struct dec_ps ps = {.d = d};
	int type = -1, ret = 0;
	size_t i;

	d->label = -1;
	d->line = (int)e->start_mark.line + 1;
	if (tcx_yaml_expect_item(&c->y, e, YAML_MAPPING_NODE, "decoder"))
		return -1;
	if (walk_mapping(c, e, decoder_keys, sizeof(decoder_keys) / sizeof(decoder_keys[0]),
	                 " in decoder", &ps))
		ret = -1;

	if (!ps.type.v) {
		tcx_yaml_err_at(&c->y, e, "decoder needs 'type'");
		ret = -1;
	} else if (ps.type.v->type == YAML_SCALAR_NODE) {
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(tcx_yaml_sval(ps.type.v), types[i]))
				type = (int)i;
		if (type < 0) {
			tcx_yaml_err_at(
			        &c->y, ps.type.v,
			        "unknown decoder type '%s' (expected ascii, fields or uuid)",
			        tcx_yaml_sval(ps.type.v));
			ret = -1;
		}
	}
	d->type = type < 0 ? TCX_DEC_ASCII : (enum tcx_decoder_type)type;

	/* label */
	if (type == TCX_DEC_FIELDS && ps.label.k) {
		tcx_yaml_err_at(&c->y, ps.label.k,
		                "decoder 'fields' takes labels from its fields, not 'label'");
		ret = -1;
	} else if (ps.label.v && ps.label.v->type == YAML_SCALAR_NODE) {
		d->label = decoder_label(c, ps.label.v);
		if (d->label < 0)
			ret = -1;
	} else if (!ps.label.k && (type == TCX_DEC_ASCII || type == TCX_DEC_UUID)) {
		tcx_yaml_err_at(&c->y, e, "decoder '%s' needs 'label'", types[type]);
		ret = -1;
	}

	/* layout */
	if (ps.layout.k && type >= 0 && type != TCX_DEC_UUID) {
		tcx_yaml_err_at(&c->y, ps.layout.k, "'layout' applies only to uuid decoders");
		ret = -1;
	} else if (ps.layout.v && ps.layout.v->type == YAML_SCALAR_NODE) {
		if (!strcasecmp(tcx_yaml_sval(ps.layout.v), "ovs")) {
			d->layout = TCX_UUID_OVS;
		} else if (!strcasecmp(tcx_yaml_sval(ps.layout.v), "rfc4122")) {
			d->layout = TCX_UUID_RFC4122;
		} else {
			tcx_yaml_err_at(&c->y, ps.layout.v,
			                "invalid layout '%s' (expected ovs or rfc4122)",
			                tcx_yaml_sval(ps.layout.v));
			ret = -1;
		}
	}

	/* fields */
	if (ps.fields.k && type >= 0 && type != TCX_DEC_FIELDS) {
		tcx_yaml_err_at(&c->y, ps.fields.k, "'fields' applies only to fields decoders");
		ret = -1;
	} else if (type == TCX_DEC_FIELDS && !ps.fields.k) {
		tcx_yaml_err_at(&c->y, e, "decoder 'fields' needs a non-empty 'fields' list");
		ret = -1;
	} else if (ps.fields.v && ps.fields.v->type == YAML_SEQUENCE_NODE) {
		if (decoder_fields(c, &ps))
			ret = -1;
	}

	/* A decoder that no cookie of its length could match is a mistake. */
	if (ret == 0 && d->length) {
		unsigned fields = 0;

		for (i = 0; i < d->n_fields; i++)
			fields += d->fields[i].width;
		if (d->prefix_len > d->length) {
			tcx_yaml_err_at(&c->y, e,
			                "decoder's prefix is %u bytes, longer than its length %u",
			                d->prefix_len, d->length);
			ret = -1;
		} else if (fields > d->length) {
			tcx_yaml_err_at(&c->y, e,
			                "decoder's fields cover %u bytes, more than its length %u",
			                fields, d->length);
			ret = -1;
		} else if (type == TCX_DEC_UUID && d->length != 16) {
			tcx_yaml_err_at(&c->y, e,
			                "decoder 'uuid' takes 16-byte cookies, not length %u",
			                d->length);
			ret = -1;
		}
	}
	return ret;
}

static int load_decoders(struct ctx *c)
{
	struct tcx_config *cfg = c->cfg;
	tcx_ynode_t *seq = c->decoders;
	tcx_ynode_t **it;
	int ret = 0;

	if (tcx_yaml_n_items(seq) == 0)
		return 0;
	cfg->decoders = calloc(tcx_yaml_n_items(seq), sizeof(*cfg->decoders));
	if (!cfg->decoders)
		return tcx_yaml_oom(&c->y);
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++)
		if (load_decoder(c, *it, &cfg->decoders[cfg->n_decoders++]))
			ret = -1;
	return ret;
}

/* ---- http ------------------------------------------------------------------- */

int tcx_listen_split(const char *addr, char *host, size_t hostlen, unsigned *port)
{
	const char *colon, *h = addr, *hend;
	uint64_t p = 0;

	if (addr[0] == '[') {
		hend = strchr(addr, ']');
		if (!hend || hend[1] != ':')
			return -1;
		h = addr + 1;
		colon = hend + 1;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || memchr(addr, ':', (size_t)(colon - addr)))
			return -1; /* none, or a bare IPv6 address without brackets */
		hend = colon;
	}
	if ((size_t)(hend - h) >= hostlen)
		return -1;
	for (const char *q = colon + 1; *q; q++) {
		if (*q < '0' || *q > '9' || p > 65535)
			return -1;
		p = p * 10 + (uint64_t)(*q - '0');
	}
	if (!colon[1] || p == 0 || p > 65535)
		return -1;
	memcpy(host, h, (size_t)(hend - h));
	host[hend - h] = '\0';
	*port = (unsigned)p;
	return 0;
}

static int listen_one(struct ctx *c, tcx_ynode_t *v)
{
	struct tcx_http_cfg *h = &c->cfg->http;
	char host[256];
	unsigned port;

	if (tcx_yaml_expect_item(&c->y, v, YAML_SCALAR_NODE, "listen address"))
		return -1;
	if (tcx_listen_split(tcx_yaml_sval(v), host, sizeof(host), &port)) {
		tcx_yaml_err_at(
		        &c->y, v,
		        "invalid listen address '%s': expected HOST:PORT, [IPV6]:PORT or :PORT",
		        tcx_yaml_sval(v));
		return -1;
	}
	if (h->n_listen == TCX_MAX_LISTEN) {
		tcx_yaml_err_at(&c->y, v, "too many listen addresses (at most %d)", TCX_MAX_LISTEN);
		return -1;
	}
	h->listen[h->n_listen] = tcx_yaml_strndup(&c->y, tcx_yaml_sval(v), tcx_yaml_slen(v));
	return h->listen[h->n_listen++] ? 0 : -1;
}

static int http_listen(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	tcx_ynode_t **it;
	int ret = 0;

	if (v->type == YAML_SCALAR_NODE)
		return listen_one(c, v);
	if (tcx_yaml_expect(&c->y, k, v, YAML_SEQUENCE_NODE))
		return -1;
	if (tcx_yaml_n_items(v) == 0) {
		tcx_yaml_err_at(&c->y, v, "listen must not be empty");
		return -1;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++)
		if (listen_one(c, *it))
			ret = -1;
	return ret;
}

static int http_web_config(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return string_value(c, k, v, "must be a file name", &c->cfg->http.web_config);
}

static int http_max_conn(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 65536, &c->cfg->http.max_connections);
}

static int http_max_conn_ip(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 65536, &c->cfg->http.max_connections_per_ip);
}

static int http_timeout(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return duration_value(c, k, v, 1, 86400, 0,
	                      "must be a duration between 1s and 24h such as 10s",
	                      &c->cfg->http.timeout_s);
}

static int http_max_stale(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 1048576, &c->cfg->http.max_stale_mib);
}

static int http_renders_ip(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 1024, &c->cfg->http.renders_per_ip);
}

static int http_renders(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 1024, &c->cfg->http.renders);
}

static int http_checks_ip(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 1024, &c->cfg->http.password_checks_per_ip);
}

static int http_checks(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, 1, 1024, &c->cfg->http.password_checks);
}

static const struct key_handler http_keys[] = {
        {"listen", http_listen},
        {"web_config", http_web_config},
        {"max_connections", http_max_conn},
        {"max_connections_per_ip", http_max_conn_ip},
        {"timeout", http_timeout},
        {"max_stale_mib", http_max_stale},
        {"renders_per_ip", http_renders_ip},
        {"renders", http_renders},
        {"password_checks_per_ip", http_checks_ip},
        {"password_checks", http_checks},
};

static int top_http(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return section(c, k, v, http_keys, sizeof(http_keys) / sizeof(http_keys[0]), " in http");
}

/* Defaults for whatever `http:` did not set; web_config relative to the file. */
static int http_defaults(struct ctx *c)
{
	struct tcx_http_cfg *h = &c->cfg->http;
	char *full;

	if (!h->n_listen) {
		h->listen[0] = strdup(TCX_LISTEN_DEFAULT);
		if (!h->listen[0])
			return tcx_yaml_oom(&c->y);
		h->n_listen = 1;
	}
	if (!h->max_connections)
		h->max_connections = 512;
	if (!h->max_connections_per_ip)
		h->max_connections_per_ip = 64;
	if (h->max_connections_per_ip > h->max_connections)
		h->max_connections_per_ip = h->max_connections;
	if (h->timeout_s == 0)
		h->timeout_s = 10;
	if (!h->max_stale_mib)
		h->max_stale_mib = 256;
	if (!h->renders)
		h->renders = 8;
	if (!h->renders_per_ip)
		h->renders_per_ip = 1;
	if (h->renders_per_ip > h->renders)
		h->renders_per_ip = h->renders;
	if (!h->password_checks)
		h->password_checks = 32;
	if (!h->password_checks_per_ip)
		h->password_checks_per_ip = 4;
	if (h->password_checks_per_ip > h->password_checks)
		h->password_checks_per_ip = h->password_checks;
	if (!c->cfg->snmp.ping_interval_s)
		c->cfg->snmp.ping_interval_s = 5;
	if (h->web_config) {
		full = tcx_yaml_resolve(&c->y, h->web_config);
		if (!full)
			return -1;
		free(h->web_config);
		h->web_config = full;
	}
	return 0;
}

int tcx_config_override_http(struct tcx_config *cfg, const struct tcx_http_override *o)
{
	struct tcx_http_cfg *h = &cfg->http;
	char *list[TCX_MAX_LISTEN] = {0}, *web = NULL;

	if (!o)
		return 0;
	for (size_t i = 0; i < o->n_listen; i++)
		if (!(list[i] = strdup(o->listen[i])))
			goto oom;
	if (o->web_config && !(web = strdup(o->web_config)))
		goto oom;
	if (o->n_listen) {
		for (size_t i = 0; i < h->n_listen; i++)
			free(h->listen[i]);
		memcpy(h->listen, list, sizeof(list));
		h->n_listen = o->n_listen;
	}
	if (web) {
		free(h->web_config);
		h->web_config = web;
	}
	return 0;
oom:
	for (size_t i = 0; i < o->n_listen; i++)
		free(list[i]);
	return -ENOMEM;
}

/* ---- snmp ------------------------------------------------------------------- */

static int snmp_enabled(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return tcx_yaml_bool(&c->y, k, v, &c->cfg->snmp.enabled);
}

static int snmp_socket(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return string_value(c, k, v, "expected a path or an address such as tcp:localhost:705",
	                    &c->cfg->snmp.agentx_socket);
}

static int snmp_ping(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	double s;

	if (duration_value(c, k, v, 1, 3600, 1, "must be whole seconds from 1s to 1h such as 5s",
	                   &s))
		return -1;
	c->cfg->snmp.ping_interval_s = (int)s;
	return 0;
}

static const struct key_handler snmp_keys[] = {
        {"enabled", snmp_enabled},
        {"agentx_socket", snmp_socket},
        {"ping_interval", snmp_ping},
};

static int top_snmp(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return section(c, k, v, snmp_keys, sizeof(snmp_keys) / sizeof(snmp_keys[0]), " in snmp");
}

/* ---- devices ----------------------------------------------------------------- */

static int devices_regex(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, regex_t *re, int *has)
{
	char msg[256];
	int r;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	r = regcomp(re, tcx_yaml_sval(v), REG_EXTENDED | REG_NOSUB);
	if (r) {
		regerror(r, re, msg, sizeof(msg));
		tcx_yaml_err_at(&c->y, v, "invalid %s regex '%s': %s", tcx_yaml_sval(k),
		                tcx_yaml_sval(v), msg);
		return -1;
	}
	*has = 1;
	return 0;
}

static int devices_include(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_devices_cfg *d = &c->cfg->devices;

	return devices_regex(c, k, v, &d->include, &d->has_include);
}

static int devices_exclude(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_devices_cfg *d = &c->cfg->devices;

	return devices_regex(c, k, v, &d->exclude, &d->has_exclude);
}

static const struct key_handler devices_keys[] = {
        {"include", devices_include},
        {"exclude", devices_exclude},
};

static int top_devices(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return section(c, k, v, devices_keys, sizeof(devices_keys) / sizeof(devices_keys[0]),
	               " in devices");
}

int tcx_config_device_wanted(const struct tcx_config *cfg, const char *dev)
{
	const struct tcx_devices_cfg *d = &cfg->devices;

	return (!d->has_include || regexec(&d->include, dev, 0, NULL, 0) == 0) &&
	       (!d->has_exclude || regexec(&d->exclude, dev, 0, NULL, 0) != 0);
}

/* ---- aggregate, families, max_series ------------------------------------------- */

static int agg_by(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &c->agg_by, k, v, YAML_SEQUENCE_NODE);
}

static int agg_without(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return keep(c, &c->agg_without, k, v, YAML_SEQUENCE_NODE);
}

static const struct key_handler aggregate_keys[] = {
        {"by", agg_by},
        {"without", agg_without},
};

static int top_aggregate(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	if (section(c, k, v, aggregate_keys, sizeof(aggregate_keys) / sizeof(aggregate_keys[0]),
	            " in aggregate"))
		return -1;
	if (c->agg_by.k && c->agg_without.k) {
		tcx_yaml_err_at(&c->y, c->agg_without.k,
		                "aggregate takes one of 'by' and 'without', not both");
		return -1;
	}
	if (!c->agg_by.k && !c->agg_without.k) {
		tcx_yaml_err_at(&c->y, v, "aggregate needs 'by' or 'without' (a list of labels)");
		return -1;
	}
	c->cfg->aggregate.mode = c->agg_by.k ? TCX_AGG_BY : TCX_AGG_WITHOUT;
	return 0;
}

/* Once `labels` is known: the labels that `by` or `without` name, each a
 * built-in label of the action rows or a configured one. */
static void resolve_aggregate(struct ctx *c)
{
	struct tcx_aggregate_cfg *a = &c->cfg->aggregate;
	tcx_ynode_t *seq = a->mode == TCX_AGG_BY ? c->agg_by.v : c->agg_without.v;
	uint32_t builtin = 0, user = 0;
	tcx_ynode_t **it;

	if (a->mode == TCX_AGG_NONE || !seq || seq->type != YAML_SEQUENCE_NODE)
		return;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		tcx_ynode_t *e = *it;
		const char *name;
		uint32_t bit = 0, *set = &builtin;
		int l = -1;

		if (tcx_yaml_expect_item(&c->y, e, YAML_SCALAR_NODE, "label name"))
			continue;
		name = tcx_yaml_sval(e);
		for (unsigned b = 0; b < TCX_BL__MAX && !bit; b++)
			if (!strcmp(name, tcx_builtin_labels[b]))
				bit = 1u << b;
		if (!bit && (l = find_label(c->cfg, name)) >= 0) {
			bit = 1u << l;
			set = &user;
		}
		if (!bit) {
			if (!c->labels_bad)
				tcx_yaml_err_at(&c->y, e,
				                "unknown label '%s' in aggregate (expected one of: "
				                "device, parent, block, netns, chain, protocol, "
				                "pref, "
				                "kind, handle, order, action, cookie, or a label "
				                "of "
				                "'labels')",
				                name);
			continue;
		}
		if (*set & bit) {
			tcx_yaml_err_at(&c->y, e, "label '%s' given twice in aggregate", name);
			continue;
		}
		*set |= bit;
	}
	if (a->mode == TCX_AGG_BY) {
		a->builtin = builtin;
		a->user = user;
	} else {
		a->builtin = ((1u << TCX_BL__MAX) - 1) & ~builtin;
		a->user = (c->cfg->n_labels >= 32 ? UINT32_MAX : (1u << c->cfg->n_labels) - 1) &
		          ~user;
	}
}

/* ---- families: xstats as a map of kinds (config/xstats.h) ---- */

/* Does the table t hold kind? Tables of one kind are a qdisc's, its tins'
 * and a class's: a name chooses the rows of that name in each. */
static int xs_of_kind(const struct tcx_xstats_table *t, const char *kind)
{
	return strcmp(t->kind, kind) == 0;
}

/* Append ", name" (the first without the comma) to list[len] of size sz,
 * unless the previous appended is the same (the elements of an array). */
static size_t xs_list_add(char *list, size_t sz, size_t len, const char *name, size_t n)
{
	int w;

	if (len >= sz)
		return len;
	w = snprintf(list + len, sz - len, "%s%.*s", len ? ", " : "", (int)n, name);
	return w < 0 ? len : len + (size_t)w;
}

/* The kinds with per-kind statistics, in the tables' order: "htb, hfsc, ...". */
static void xs_kinds(char *list, size_t sz)
{
	size_t len = 0;

	list[0] = 0;
	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const char *kind = tcx_xstats_tables[i]->kind;
		size_t j = 0;

		while (j < i && strcmp(tcx_xstats_tables[j]->kind, kind))
			j++;
		if (j == i)
			len = xs_list_add(list, sz, len, kind, strlen(kind));
	}
}

/* The field names of a kind: "lends, borrows, ...". */
static void xs_fields(const char *kind, char *list, size_t sz)
{
	const char *prev = NULL;
	size_t len = 0, prev_n = 0;

	list[0] = 0;
	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[i];

		for (unsigned tin = 0; xs_of_kind(t, kind) && tin < 2; tin++) {
			const struct tcx_xstat *rows = tin ? t->tin_fields : t->fields;
			unsigned n = tin ? t->n_tin_fields : t->n_fields;

			for (unsigned f = 0; f < n; f++) {
				size_t nl;
				const char *name = tcx_xstat_name(t, &rows[f], &nl);

				if (prev && nl == prev_n && !strncmp(name, prev, nl))
					continue; /* an array's elements: one name */
				len = xs_list_add(list, sz, len, name, nl);
				prev = name;
				prev_n = nl;
			}
		}
	}
}

/* Leave out (off 1) or choose (off 0) the rows named `name` of each table
 * of kind (every row when name is NULL). Returns how many rows matched;
 * *was_on grows by those of them that were chosen already (a name given
 * twice). */
static unsigned xs_set(struct tcx_xstats_choice *ch, const char *kind, const char *name, int off,
                       unsigned *was_on)
{
	unsigned matched = 0;

	for (size_t i = 0; i < tcx_xstats_n_tables; i++) {
		const struct tcx_xstats_table *t = tcx_xstats_tables[i];
		unsigned id = tcx_xstats_id(t);

		for (unsigned tin = 0; xs_of_kind(t, kind) && tin < 2; tin++) {
			const struct tcx_xstat *rows = tin ? t->tin_fields : t->fields;
			unsigned n = tin ? t->n_tin_fields : t->n_fields;
			uint32_t *bits = tin ? &ch->tin_off[id] : &ch->off[id];

			for (unsigned f = 0; f < n; f++) {
				size_t nl;
				const char *fn = tcx_xstat_name(t, &rows[f], &nl);

				if (name && (strlen(name) != nl || strncmp(fn, name, nl)))
					continue;
				matched++;
				*was_on += !(*bits & UINT32_C(1) << f);
				if (off)
					*bits |= UINT32_C(1) << f;
				else
					*bits &= ~(UINT32_C(1) << f);
			}
		}
	}
	return matched;
}

/* One kind's choice: all, none, or a list of its fields ([] is none). */
static int xs_kind_fields(struct ctx *c, const char *kind, tcx_ynode_t *v)
{
	struct tcx_xstats_choice *ch = &c->cfg->families.xstats;
	unsigned on = 0;
	int ret = 0;

	if (v->type == YAML_SCALAR_NODE &&
	    (!strcmp(tcx_yaml_sval(v), "all") || !strcmp(tcx_yaml_sval(v), "none"))) {
		xs_set(ch, kind, NULL, !strcmp(tcx_yaml_sval(v), "none"), &on);
		return 0;
	}
	if (v->type == YAML_SCALAR_NODE) {
		tcx_yaml_err_at(&c->y, v,
		                "invalid %s '%s' in families xstats (expected all, none or a list "
		                "of fields)",
		                kind, tcx_yaml_sval(v));
		return -1;
	}
	if (v->type != YAML_SEQUENCE_NODE) {
		tcx_yaml_err_at(
		        &c->y, v,
		        "%s in families xstats must be all, none or a list of fields, got %s", kind,
		        tcx_yaml_kind_name(v->type));
		return -1;
	}
	xs_set(ch, kind, NULL, 1, &on); /* the list names every field kept */
	for (tcx_ynode_t **it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		const char *name;
		char list[2048];

		if (tcx_yaml_expect_item(&c->y, *it, YAML_SCALAR_NODE, "field name")) {
			ret = -1;
			continue;
		}
		name = tcx_yaml_sval(*it);
		on = 0;
		if (!xs_set(ch, kind, name, 0, &on)) {
			xs_fields(kind, list, sizeof(list));
			tcx_yaml_err_at(&c->y, *it,
			                "unknown field '%s' of %s in families xstats (expected one "
			                "of: %s)",
			                name, kind, list);
			ret = -1;
		} else if (on) {
			tcx_yaml_err_at(&c->y, *it,
			                "field '%s' of %s given twice in families xstats", name,
			                kind);
			ret = -1;
		}
	}
	return ret;
}

/* `xstats: {KIND: FIELDS, ...}`: the kinds named keep the fields chosen,
 * the others every field. */
static int xs_kinds_map(struct ctx *c, tcx_ynode_t *map)
{
	int ret = 0;

	for (struct tcx_ypair *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const struct tcx_ypair *q = map->data.mapping.pairs.start;
		const char *kind;
		char list[256];
		size_t i = 0;

		if (tcx_yaml_expect_scalar_key(&c->y, p->key)) {
			ret = -1;
			continue;
		}
		kind = tcx_yaml_sval(p->key);
		while (i < tcx_xstats_n_tables && !xs_of_kind(tcx_xstats_tables[i], kind))
			i++;
		if (i == tcx_xstats_n_tables) {
			xs_kinds(list, sizeof(list));
			tcx_yaml_err_at(
			        &c->y, p->key,
			        "unknown kind '%s' in families xstats (expected one of: %s)", kind,
			        list);
			ret = -1;
			continue;
		}
		while (q < p &&
		       (q->key->type != YAML_SCALAR_NODE || strcmp(tcx_yaml_sval(q->key), kind)))
			q++;
		if (q < p) {
			tcx_yaml_err_dup(&c->y, p->key, "kind", kind, &q->key->start_mark);
			ret = -1;
			continue;
		}
		if (xs_kind_fields(c, kind, p->value))
			ret = -1;
	}
	return ret;
}

/* A `families:` switch (collectors/counters.h): on or off (true/false,
 * yes/no), or auto where its default is; xstats may also be a map of
 * kinds to the fields kept (xs_kinds_map()). */
static int family_value(struct tcx_yaml *y, const void *row, void *obj, tcx_ynode_t *k,
                        tcx_ynode_t *v)
{
	const struct tcx_family_switch *sw = row;
	struct ctx *c = (struct ctx *)y;
	int auto_ok = sw->dflt == TCX_FAM_AUTO;
	enum tcx_family_mode *out = &c->cfg->families.mode[sw - tcx_family_switches];
	const char *s;

	if (sw - tcx_family_switches == TCX_SW_XSTATS && v->type == YAML_MAPPING_NODE) {
		*out = TCX_FAM_ON;
		return xs_kinds_map(c, v);
	}
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	s = tcx_yaml_sval(v);
	if (!strcasecmp(s, "on") || !strcasecmp(s, "true") || !strcasecmp(s, "yes")) {
		*out = TCX_FAM_ON;
	} else if (!strcasecmp(s, "off") || !strcasecmp(s, "false") || !strcasecmp(s, "no")) {
		*out = TCX_FAM_OFF;
	} else if (auto_ok && !strcasecmp(s, "auto")) {
		*out = TCX_FAM_AUTO;
	} else {
		tcx_yaml_err_at(
		        &c->y, v, "invalid %s '%s' in families (expected %s)", tcx_yaml_sval(k), s,
		        auto_ok                                     ? "auto, on or off"
		        : sw - tcx_family_switches == TCX_SW_XSTATS ? "on, off or a map of kinds"
		                                                    : "on or off");
		return -1;
	}
	return 0;
}

/* Its keys are the switches the counter tables declare. */
static int top_families(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	const struct tcx_yaml_keys keys = {&tcx_family_switches[1], TCX_SW__MAX - 1,
	                                   sizeof(tcx_family_switches[0]), family_value, NULL};

	if (tcx_yaml_expect(&c->y, k, v, YAML_MAPPING_NODE))
		return -1;
	return tcx_yaml_walk(&c->y, v, &keys, " in families", NULL);
}

static int top_max_series(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return tcx_yaml_uint(&c->y, k, v, 1, UINT32_MAX, &c->cfg->max_series);
}

/* The receive buffer of the deletion notification sockets, in KiB (the
 * kernel doubles it; it takes at most INT_MAX bytes). */
static int top_notify_buffer(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return uint_value(c, k, v, TCX_NOTIFY_BUFFER_KIB_MIN, TCX_NOTIFY_BUFFER_KIB_MAX,
	                  &c->cfg->notify_buffer_kib);
}

/* ---- the document ------------------------------------------------------------ */

static const struct key_handler top_keys[] = {
        {"interval", top_interval},
        {"targets", top_targets},
        {"labels", top_labels},
        {"unmapped", top_unmapped},
        {"cookies", defer_cookies},
        {"decoders", defer_decoders},
        {"http", top_http},
        {"snmp", top_snmp},
        {"devices", top_devices},
        {"aggregate", top_aggregate},
        {"families", top_families},
        {"max_series", top_max_series},
        {"classes", defer_classes},
        {"liveness_interval", top_liveness_interval},
        {"sweep_interval", top_sweep_interval},
        {"notify_buffer_kib", top_notify_buffer},
};

static void config_free(struct tcx_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->n_targets; i++) {
		free(cfg->targets[i].dev);
		free(cfg->targets[i].parent_str);
		free(cfg->targets[i].netns);
	}
	free(cfg->targets);
	for (i = 0; i < cfg->n_labels; i++)
		free(cfg->labels[i]);
	free(cfg->labels);
	free(cfg->cookies);
	tcx_arena_free(&cfg->cookie_mem);
	free(cfg->slots);
	free(cfg->decoders);
	tcx_classes_free(&cfg->classes);
	for (i = 0; i < cfg->http.n_listen; i++)
		free(cfg->http.listen[i]);
	free(cfg->http.web_config);
	free(cfg->snmp.agentx_socket);
	if (cfg->devices.has_include)
		regfree(&cfg->devices.include);
	if (cfg->devices.has_exclude)
		regfree(&cfg->devices.exclude);
	for (i = 0; i < cfg->n_warnings; i++)
		free(cfg->warnings[i]);
	free(cfg->warnings);
	free(cfg->path);
	free(cfg);
}

/* A pair of the mapping of top-level key k, as soon as it is parsed. */
static int config_entry(struct tcx_yaml *y, const tcx_ynode_t *k, struct tcx_ypair *p)
{
	struct ctx *c = (struct ctx *)y;

	if (!c->labels_seen)
		return 0;
	if (!strcmp(tcx_yaml_sval(k), "cookies"))
		cookie_entry(c, p);
	else if (!strcmp(tcx_yaml_sval(k), "classes"))
		class_entry(c, p);
	else
		return 0;
	return 1;
}

/* After every top-level key: what depends on others, and defaults. */
static void config_finish(struct tcx_yaml *y, tcx_ynode_t *root)
{
	struct ctx *c = (struct ctx *)y;

	if (!c->cfg->targets)
		default_targets(c);
	if (c->cookies)
		load_cookies(c);
	if (c->cfg->n_cookies)
		index_cookies(c);
	if (c->classes)
		load_classes(c);
	if (c->cfg->classes.n && tcx_classes_index(&c->cfg->classes, class_dup, c) < 0)
		tcx_yaml_oom(&c->y);
	if (c->decoders)
		load_decoders(c);
	resolve_aggregate(c);
	http_defaults(c);
}

static const struct tcx_yaml_keys config_keys = {top_keys, sizeof(top_keys) / sizeof(top_keys[0]),
                                                 sizeof(top_keys[0]), call_handler, NULL};

struct tcx_config *tcx_config_load_buffer(const char *name, const char *buf, size_t len,
                                          tcx_config_err_fn errfn, void *arg)
{
	struct ctx c = {.y = {.name = name,
	                      .errfn = errfn,
	                      .arg = arg,
	                      .top = &config_keys,
	                      .max_file = TCX_YAML_MAX_FILE,
	                      .entry = config_entry,
	                      .fast_key = "cookies"}};
	struct tcx_config *cfg;

	cfg = calloc(1, sizeof(*cfg));
	if (!cfg || !(cfg->path = strdup(name))) {
		free(cfg);
		tcx_yaml_oom(&c.y);
		return NULL;
	}
	atomic_init(&cfg->refcnt, 1);
	cfg->interval_s = TCX_INTERVAL_DEFAULT;
	cfg->liveness_interval_s = TCX_LIVENESS_INTERVAL_DEFAULT;
	cfg->sweep_interval_s = TCX_SWEEP_INTERVAL_DEFAULT;
	cfg->generation = atomic_fetch_add_explicit(&generations, 1, memory_order_relaxed) + 1;
	cfg->notify_buffer_kib = TCX_NOTIFY_BUFFER_KIB_DEFAULT;
	cfg->unmapped = TCX_UNMAPPED_EXPORT;
	c.cfg = cfg;
	tcx_yaml_load(&c.y, buf, len, "empty configuration", config_finish);
	free(c.cookie_marks);
	free(c.class_marks);
	if (c.y.errors) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

struct tcx_config *tcx_config_load_file(const char *path, tcx_config_err_fn errfn, void *arg)
{
	return tcx_config_load_buffer(path, NULL, 0, errfn, arg);
}

struct tcx_config *tcx_config_ref(struct tcx_config *cfg)
{
	if (cfg)
		atomic_fetch_add_explicit(&cfg->refcnt, 1, memory_order_relaxed);
	return cfg;
}

void tcx_config_unref(struct tcx_config *cfg)
{
	if (cfg && atomic_fetch_sub_explicit(&cfg->refcnt, 1, memory_order_acq_rel) == 1)
		config_free(cfg);
}
