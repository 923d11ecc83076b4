/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The web configuration file of Prometheus's exporter-toolkit: TLS, mTLS and
 * basic auth. See webconfig.h.
 *
 * Loading follows config/config.c, with the same helpers (config/yamlutil.h):
 * the YAML document is walked with {key, handler} tables as it is parsed;
 * every problem is reported and the walk goes on. Keys that exporter-toolkit
 * knows but tcexporter cannot honour are errors naming the key, never
 * silently ignored. Certificates and
 * keys are read and checked with GnuTLS at load time, so that a bad file is
 * reported at start-up (or reload), not at the first handshake. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <crypt.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <yaml.h>

#include "agent/http/webconfig.h"
#include "config/yamlutil.h"
#include "lib/clock.h"

#define CACHE_MAX   64         /* verified (user, password) pairs kept */
#define DIGEST_LEN  32         /* HMAC-SHA-256 */
#define PEM_MAX     (4u << 20) /* larger than any sane certificate bundle */
#define BCRYPT_LEN  60         /* "$2b$10$" + 22 salt + 31 hash characters */
#define BCRYPT_HELP "htpasswd -nBC 10 \"\" | tr -d ':\\n'"

/* exporter-toolkit's own dummy: unknown users cost one bcrypt too. Its cost
 * is replaced, at load, by the highest cost among the configured users. */
static const char dummy_hash[] = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

struct tcx_auth_cache_entry {
	uint8_t digest[DIGEST_LEN]; /* HMAC(cache_key, len(user) | user | password) */
};

/* A client's token bucket of failed checks (rate_limit). */
struct tcx_auth_bucket {
	struct tcx_client key; /* see tcx_client_key() */
	double tokens;         /* as of `at` */
	double at;             /* CLOCK_MONOTONIC, seconds */
};

enum { TLS10, TLS11, TLS12, TLS13, N_TLS_VERSIONS };

static const char *const tls_version_names[N_TLS_VERSIONS] = {"TLS10", "TLS11", "TLS12", "TLS13"};
static const char *const tls_version_gnutls[N_TLS_VERSIONS] = {"VERS-TLS1.0", "VERS-TLS1.1",
                                                               "VERS-TLS1.2", "VERS-TLS1.3"};

/* In the order of enum tcx_client_auth. */
static const char *const client_auth_names[] = {
        "NoClientCert",
        "RequestClientCert",
        "RequireAnyClientCert",
        "VerifyClientCertIfGiven",
        "RequireAndVerifyClientCert",
};

struct ctx {
	struct tcx_yaml y; /* first: see config/yamlutil.h */
	struct tcx_webconfig *wc;
	int rate_limit;            /* the file sets one */
	yaml_mark_t rate_limit_at; /* where */
};

typedef int (*key_fn)(struct ctx *c, void *obj, tcx_ynode_t *key, tcx_ynode_t *val);

struct key_handler {
	const char *key; /* first: tcx_yaml_walk() reads it */
	key_fn fn;
};

/* ---- small helpers -------------------------------------------------------- */

/* The scalar equals s (and holds no NUL byte). */
static int is(const tcx_ynode_t *n, const char *s)
{
	return !strcmp(tcx_yaml_sval(n), s);
}

/* A mapping, or null which stands for an empty one: 1 when null, 0 when a
 * mapping, -1 after a report. */
static int expect_map(struct ctx *c, const tcx_ynode_t *key, const tcx_ynode_t *val)
{
	if (tcx_yaml_is_null(val))
		return 1;
	return tcx_yaml_expect(&c->y, key, val, YAML_MAPPING_NODE);
}

/* A key of exporter-toolkit that tcexporter cannot honour. */
static int unsupported(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	tcx_yaml_err_at(&c->y, k, "'%s' is not supported by tcexporter; remove it",
	                tcx_yaml_sval(k));
	return -1;
}

static int call_handler(struct tcx_yaml *y, const void *row, void *obj, tcx_ynode_t *k,
                        tcx_ynode_t *v)
{
	return ((const struct key_handler *)row)->fn((struct ctx *)y, obj, k, v);
}

static int listed(const void *row)
{
	return ((const struct key_handler *)row)->fn != unsupported;
}

/* Walk a mapping, dispatching each key through tab. `where` names the mapping
 * in messages (" in tls_server_config"), empty at the top level. Keys handled
 * by unsupported() are known but not offered in "expected one of". */
static int walk_mapping(struct ctx *c, tcx_ynode_t *map, const struct key_handler *tab, size_t n,
                        const char *where, void *obj)
{
	const struct tcx_yaml_keys keys = {tab, n, sizeof(*tab), call_handler, listed};

	return tcx_yaml_walk(&c->y, map, &keys, where, obj);
}

/* The value of key k, a section: a mapping walked through tab, or null for
 * an empty one. 0, or -1 after a report. */
static int walk_section(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v,
                        const struct key_handler *tab, size_t n, const char *where, void *obj)
{
	int r = expect_map(c, k, v);

	if (r)
		return r < 0 ? -1 : 0;
	return walk_mapping(c, v, tab, n, where, obj);
}

/* Compare without data-dependent branches: 1 when equal. Reads all of b
 * whatever a holds, so the time depends on blen only. */
static int ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char diff = (unsigned char)(alen != blen);
	size_t i;

	for (i = 0; i < blen; i++)
		diff |= (unsigned char)((i < alen ? x[i] : 0) ^ y[i]);
	return diff == 0;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* ---- tls_server_config -------------------------------------------------------- */

/* Where one PEM comes from: `x_file` or inline `x`. The value nodes are set
 * only when valid. */
struct pem_src {
	const char *file_key, *inline_key;
	tcx_ynode_t *file_k, *file_v, *inline_k, *inline_v;
	char *path; /* resolved file name, for messages */
	char *pem;
};

struct tls_ps {
	tcx_ynode_t *section; /* the `tls_server_config` key */
	struct pem_src cert, key, ca;
	tcx_ynode_t *auth_v, *min_v, *max_v; /* set when valid */
	int min_given, max_given;
	enum tcx_client_auth auth;
	int min, max;
};

static int pem_value(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, tcx_ynode_t **kp,
                     tcx_ynode_t **vp)
{
	*kp = k;
	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	if (tcx_yaml_slen(v) == 0) {
		tcx_yaml_err_at(&c->y, v, "'%s' must be a non-empty string", tcx_yaml_sval(k));
		return -1;
	}
	*vp = v;
	return 0;
}

/* cert_file, cert, key_file, key, client_ca_file, client_ca: the PEM source
 * whose `x_file` or inline `x` the key names. */
static int tls_pem(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tls_ps *ps = obj;
	struct pem_src *srcs[] = {&ps->cert, &ps->key, &ps->ca};

	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		struct pem_src *s = srcs[i];

		if (is(k, s->file_key))
			return pem_value(c, k, v, &s->file_k, &s->file_v);
		if (is(k, s->inline_key))
			return pem_value(c, k, v, &s->inline_k, &s->inline_v);
	}
	abort(); /* a program bug: tls_keys names no other key for it */
}

static int tls_client_auth(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tls_ps *ps = obj;
	size_t i;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	for (i = 0; i < sizeof(client_auth_names) / sizeof(client_auth_names[0]); i++) {
		if (is(v, client_auth_names[i])) {
			ps->auth = (enum tcx_client_auth)i;
			ps->auth_v = v;
			return 0;
		}
	}
	if (is(v, "RequireClientCert")) { /* exporter-toolkit's legacy alias */
		ps->auth = TCX_CLIENT_AUTH_REQUIRE_ANY;
		ps->auth_v = v;
		return 0;
	}
	tcx_yaml_err_at(
	        &c->y, v,
	        "invalid client_auth_type '%s' (expected NoClientCert, RequestClientCert, "
	        "RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
	        tcx_yaml_sval(v));
	return -1;
}

static int tls_version(struct ctx *c, tcx_ynode_t *k, tcx_ynode_t *v, int *out, tcx_ynode_t **vp)
{
	int i;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	for (i = 0; i < N_TLS_VERSIONS; i++) {
		if (is(v, tls_version_names[i])) {
			*out = i;
			*vp = v;
			return 0;
		}
	}
	tcx_yaml_err_at(&c->y, v, "invalid %s '%s' (expected TLS10, TLS11, TLS12 or TLS13)",
	                tcx_yaml_sval(k), tcx_yaml_sval(v));
	return -1;
}

static int tls_min_version(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tls_ps *ps = obj;

	ps->min_given = 1;
	return tls_version(c, k, v, &ps->min, &ps->min_v);
}

static int tls_max_version(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tls_ps *ps = obj;

	ps->max_given = 1;
	return tls_version(c, k, v, &ps->max, &ps->max_v);
}

static const struct key_handler tls_keys[] = {
        {"cert_file", tls_pem},
        {"key_file", tls_pem},
        {"cert", tls_pem},
        {"key", tls_pem},
        {"client_ca_file", tls_pem},
        {"client_ca", tls_pem},
        {"client_auth_type", tls_client_auth},
        {"min_version", tls_min_version},
        {"max_version", tls_max_version},
        {"cipher_suites", unsupported},
        {"curve_preferences", unsupported},
        {"prefer_server_cipher_suites", unsupported},
        {"client_allowed_sans", unsupported},
};

/* At most one of `x_file` and `x`; one of them when required. 1 when there is
 * something to load, 0 when not, -1 after a report. */
static int pem_given(struct ctx *c, struct tls_ps *ps, struct pem_src *s, int required)
{
	if (s->file_k && s->inline_k) {
		tcx_yaml_err_at(&c->y, s->inline_k, "at most one of '%s' and '%s' may be given",
		                s->file_key, s->inline_key);
		return -1;
	}
	if (!s->file_k && !s->inline_k) {
		if (!required)
			return 0;
		tcx_yaml_err_at(&c->y, ps->section, "tls_server_config needs '%s' or '%s'",
		                s->file_key, s->inline_key);
		return -1;
	}
	return s->file_v || s->inline_v ? 1 : -1; /* -1: already reported */
}

/* Read the file or copy the inline text into s->pem. */
static int pem_load(struct ctx *c, struct pem_src *s)
{
	size_t len;

	if (s->inline_v) {
		s->pem = tcx_yaml_strndup(&c->y, tcx_yaml_sval(s->inline_v),
		                          tcx_yaml_slen(s->inline_v));
		return s->pem ? 0 : -1;
	}
	s->path = tcx_yaml_resolve(&c->y, tcx_yaml_sval(s->file_v));
	if (!s->path)
		return -1;
	s->pem = tcx_yaml_read_file(&c->y, s->path, "read", PEM_MAX, &len);
	if (!s->pem)
		return -1;
	if (strlen(s->pem) != len) {
		tcx_yaml_err_file(&c->y, s->path, "contains a NUL byte");
		return -1;
	}
	return 0;
}

/* "PATH: not a PEM x: why" for a file, "FILE:L:C: 'key' is not a PEM x: why"
 * inline. */
static void pem_error(struct ctx *c, const struct pem_src *s, const char *what, int gerr)
{
	/* GnuTLS's own words for "no key in there" say nothing useful */
	const char *why = gerr == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE
	                          ? "No private key was found."
	                          : gnutls_strerror(gerr);

	if (s->path)
		tcx_yaml_err_file(&c->y, s->path, "not a PEM %s: %s", what, why);
	else
		tcx_yaml_err_at(&c->y, s->inline_v, "'%s' is not a PEM %s: %s", s->inline_key, what,
		                why);
}

static gnutls_datum_t datum(const char *s)
{
	gnutls_datum_t d = {(unsigned char *)(uintptr_t)s, (unsigned)strlen(s)};

	return d;
}

/* One or more certificates in PEM. */
static int check_certs(struct ctx *c, const struct pem_src *s)
{
	gnutls_datum_t d = datum(s->pem);
	gnutls_x509_crt_t *crts = NULL;
	unsigned i, n = 0;
	int r;

	r = gnutls_x509_crt_list_import2(&crts, &n, &d, GNUTLS_X509_FMT_PEM, 0);
	if (r < 0) {
		pem_error(c, s, "certificate", r);
		return -1;
	}
	for (i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	if (n == 0) {
		pem_error(c, s, "certificate", GNUTLS_E_NO_CERTIFICATE_FOUND);
		return -1;
	}
	return 0;
}

static int check_key(struct ctx *c, const struct pem_src *s)
{
	gnutls_datum_t d = datum(s->pem);
	gnutls_x509_privkey_t pk;
	int r;

	r = gnutls_x509_privkey_init(&pk);
	if (r < 0)
		return tcx_yaml_oom(&c->y);
	r = gnutls_x509_privkey_import2(pk, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
	gnutls_x509_privkey_deinit(pk);
	if (r < 0) {
		pem_error(c, s, "private key", r);
		return -1;
	}
	return 0;
}

static int check_pair(struct ctx *c, const struct tls_ps *ps)
{
	gnutls_datum_t cd = datum(ps->cert.pem), kd = datum(ps->key.pem);
	gnutls_certificate_credentials_t cred;
	tcx_ynode_t *where = ps->key.file_v ? ps->key.file_v : ps->key.inline_v;
	int r;

	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return tcx_yaml_oom(&c->y);
	r = gnutls_certificate_set_x509_key_mem(cred, &cd, &kd, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (r < 0) {
		tcx_yaml_err_at(&c->y, where, "%s and %s do not match: %s",
		                ps->cert.file_v ? "cert_file" : "cert",
		                ps->key.file_v ? "key_file" : "key", gnutls_strerror(r));
		return -1;
	}
	return 0;
}

static int tls_priorities(struct ctx *c, struct tls_ps *ps)
{
	int min = ps->min < 0 ? TLS12 : ps->min, max = ps->max < 0 ? TLS13 : ps->max, v, r;
	tcx_ynode_t *where = ps->max_v ? ps->max_v : ps->min_v ? ps->min_v : ps->section;
	gnutls_priority_t prio;
	const char *errpos = NULL;
	char buf[128];
	size_t off;

	if (min > max) { /* only when max_version is given: the default is the highest */
		tcx_yaml_err_at(&c->y, where, "max_version %s is lower than min_version %s",
		                tls_version_names[max], tls_version_names[min]);
		return -1;
	}
	off = (size_t)snprintf(buf, sizeof(buf), "NORMAL:-VERS-ALL");
	for (v = max; v >= min; v--)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, ":+%s",
		                        tls_version_gnutls[v]);
	r = gnutls_priority_init(&prio, buf, &errpos);
	if (r < 0) {
		tcx_yaml_err_at(&c->y, where, "GnuTLS rejects the priority string '%s': %s", buf,
		                gnutls_strerror(r));
		return -1;
	}
	gnutls_priority_deinit(prio);
	c->wc->tls_priorities = tcx_yaml_strndup(&c->y, buf, strlen(buf));
	return c->wc->tls_priorities ? 0 : -1;
}

static int tls_finish(struct ctx *c, struct tls_ps *ps)
{
	struct tcx_webconfig *wc = c->wc;
	int cert, key, ca, ret = 0;

	cert = pem_given(c, ps, &ps->cert, 1);
	key = pem_given(c, ps, &ps->key, 1);
	ca = pem_given(c, ps, &ps->ca, 0);
	if (ca == 0 && ps->auth_v &&
	    (ps->auth == TCX_CLIENT_AUTH_VERIFY_IF_GIVEN ||
	     ps->auth == TCX_CLIENT_AUTH_REQUIRE_VERIFY)) {
		tcx_yaml_err_at(&c->y, ps->auth_v, "client_auth_type '%s' needs client_ca_file",
		                tcx_yaml_sval(ps->auth_v));
		ret = -1;
	}
	/* an invalid version was reported: the defaults would only add noise */
	if (ps->min_given == !!ps->min_v && ps->max_given == !!ps->max_v && tls_priorities(c, ps))
		ret = -1;

	if (cert > 0 && (pem_load(c, &ps->cert) || check_certs(c, &ps->cert)))
		cert = -1;
	if (key > 0 && (pem_load(c, &ps->key) || check_key(c, &ps->key)))
		key = -1;
	if (cert > 0 && key > 0 && check_pair(c, ps))
		ret = -1;
	if (ca > 0 && (pem_load(c, &ps->ca) || check_certs(c, &ps->ca)))
		ca = -1;
	if (cert < 0 || key < 0 || ca < 0)
		ret = -1;

	wc->cert_pem = ps->cert.pem;
	wc->key_pem = ps->key.pem;
	wc->client_ca_pem = ps->ca.pem;
	wc->client_auth = ps->auth;
	ps->cert.pem = ps->key.pem = ps->ca.pem = NULL;
	return ret;
}

static int top_tls(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tls_ps ps = {
	        .section = k,
	        .cert = {.file_key = "cert_file", .inline_key = "cert"},
	        .key = {.file_key = "key_file", .inline_key = "key"},
	        .ca = {.file_key = "client_ca_file", .inline_key = "client_ca"},
	        .auth = TCX_CLIENT_AUTH_NONE,
	        .min = -1,
	        .max = -1,
	};
	int r, ret = 0;

	r = expect_map(c, k, v);
	if (r < 0)
		return -1;
	if (r == 0 && walk_mapping(c, v, tls_keys, sizeof(tls_keys) / sizeof(tls_keys[0]),
	                           " in tls_server_config", &ps))
		ret = -1;
	if (tls_finish(c, &ps))
		ret = -1;
	free(ps.cert.path);
	free(ps.key.path);
	free(ps.ca.path);
	return ret;
}

/* ---- http_server_config -------------------------------------------------------- */

static int http_http2(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	int b;

	if (tcx_yaml_bool(&c->y, k, v, &b))
		return -1;
	if (b) { /* exporter-toolkit's default, which it would not honour */
		tcx_yaml_err_at(&c->y, v,
		                "'http2: true' is not supported by tcexporter (it serves HTTP/1.1 "
		                "only); remove it or set http2: false");
		return -1;
	}
	return 0;
}

static int header_value(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v);

/* The headers exporter-toolkit lets a web config set ... */
static const struct key_handler header_keys[TCX_WEB_HEADERS_MAX] = {
        {"Content-Security-Policy", header_value},   {"X-Frame-Options", header_value},
        {"X-Content-Type-Options", header_value},    {"X-XSS-Protection", header_value},
        {"Strict-Transport-Security", header_value},
};
/* ... and the values it allows (compared as written) where they are an
 * enumeration: any value where none is listed. */
static const char *const header_values[TCX_WEB_HEADERS_MAX][2] = {
        [1] = {"deny", "sameorigin"},
        [2] = {"nosniff"},
};

static int header_value(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_webconfig *wc = c->wc;
	const char *const *allowed;
	const char *s;
	unsigned i = 0;

	while (i < TCX_WEB_HEADERS_MAX && !is(k, header_keys[i].key))
		i++;
	if (i == TCX_WEB_HEADERS_MAX || tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	s = tcx_yaml_sval(v);
	if (strpbrk(s, "\r\n")) {
		tcx_yaml_err_at(&c->y, v, "invalid value for %s: a header value is one line",
		                header_keys[i].key);
		return -1;
	}
	allowed = header_values[i];
	if (allowed[0] && strcmp(allowed[0], s) != 0 && (!allowed[1] || strcmp(allowed[1], s))) {
		tcx_yaml_err_at(&c->y, v, "invalid value '%s' for %s (expected %s%s%s)", s,
		                header_keys[i].key, allowed[0], allowed[1] ? " or " : "",
		                allowed[1] ? allowed[1] : "");
		return -1;
	}
	wc->headers[wc->n_headers].name = header_keys[i].key;
	wc->headers[wc->n_headers].value = strdup(s);
	if (!wc->headers[wc->n_headers].value)
		return tcx_yaml_oom(&c->y);
	wc->n_headers++;
	return 0;
}

static int http_headers(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return walk_section(c, k, v, header_keys, sizeof(header_keys) / sizeof(header_keys[0]),
	                    " in headers", NULL);
}

static const struct key_handler http_keys[] = {
        {"http2", http_http2},
        {"headers", http_headers},
};

static int top_http(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	return walk_section(c, k, v, http_keys, sizeof(http_keys) / sizeof(http_keys[0]),
	                    " in http_server_config", NULL);
}

/* ---- rate_limit ------------------------------------------------------------------ */

/* A Go duration ("0", "1s", "1m30s", "1.5h", "250ms", "100us") into *ns: 0;
 * -1 when it is not one (a sign, a bare number other than 0), -2 when it
 * exceeds Go's (int64 nanoseconds, about 292 years). */
static int parse_go_duration(const char *s, size_t len, uint64_t *ns)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
	        /* in this order, "ms" is tried before "m" */
	        {"ns", 1},       {"us", 1000},      {"µs", 1000},       {"μs", 1000},
	        {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000}, {"h", 3600000000000},
	};
	const uint64_t max = (uint64_t)1 << 63; /* one more than Go's */
	const char *p = s, *end = s + len;
	uint64_t total = 0;
	size_t i;

	*ns = 0;
	if (len == 1 && s[0] == '0')
		return 0;
	if (len == 0)
		return -1;
	/* As Go's time.ParseDuration: the integer part exactly, the fraction
	 * in floating point. */
	while (p < end) {
		uint64_t v = 0, frac = 0, scale = 1;
		int digits = 0, big = 0;

		for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
			if (v > max / 10)
				big = 1;
			else
				v = v * 10 + (uint64_t)(*p - '0');
		}
		if (p < end && *p == '.') {
			for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
				if (scale <= UINT64_MAX / 10 / 10) {
					frac = frac * 10 + (uint64_t)(*p - '0');
					scale *= 10;
				}
			}
		}
		if (digits == 0)
			return -1;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if ((size_t)(end - p) >= strlen(units[i].name) &&
			    !memcmp(p, units[i].name, strlen(units[i].name)))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		p += strlen(units[i].name);
		if (big || v > max / units[i].ns)
			return -2;
		v *= units[i].ns;
		v += (uint64_t)((double)frac * ((double)units[i].ns / (double)scale));
		if (v >= max || total >= max - v)
			return -2;
		total += v;
	}
	*ns = total;
	return 0;
}

struct rate_ps {
	tcx_ynode_t *burst_v; /* when given and valid */
	int bad;              /* a value was reported */
	uint64_t interval_ns, burst;
};

static int rate_interval(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct rate_ps *ps = obj;
	int r;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE)) {
		ps->bad = 1;
		return -1;
	}
	r = parse_go_duration(tcx_yaml_sval(v), tcx_yaml_slen(v), &ps->interval_ns);
	if (r == -1)
		tcx_yaml_err_at(&c->y, v,
		                "invalid interval '%s': must be a duration such as 0, 1s or 100ms",
		                tcx_yaml_sval(v));
	else if (r == -2)
		tcx_yaml_err_at(&c->y, v,
		                "invalid interval '%s': longer than the longest Go duration "
		                "(2562047h)",
		                tcx_yaml_sval(v));
	if (r < 0)
		ps->bad = 1;
	return r < 0 ? -1 : 0;
}

static int rate_burst(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct rate_ps *ps = obj;

	if (tcx_yaml_uint(&c->y, k, v, 0, 9999999999ULL, &ps->burst)) {
		ps->bad = 1;
		return -1;
	}
	ps->burst_v = v;
	return 0;
}

static const struct key_handler rate_keys[] = {
        {"interval", rate_interval},
        {"burst", rate_burst},
};

/* As in exporter-toolkit: no interval, or 0, turns the limit off; burst is
 * the size of the bucket, and must be 1 or more when there is one. */
static int top_rate_limit(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct rate_ps ps = {0};

	if (walk_section(c, k, v, rate_keys, sizeof(rate_keys) / sizeof(rate_keys[0]),
	                 " in rate_limit", &ps) ||
	    ps.bad)
		return -1;
	if (ps.interval_ns && ps.burst == 0 && ps.burst_v) {
		tcx_yaml_err_at(&c->y, ps.burst_v,
		                "invalid burst '0': must be 1 or more with an interval (with 0, no "
		                "password could be checked)");
		return -1;
	}
	if (ps.interval_ns && ps.burst == 0) {
		tcx_yaml_err_at(&c->y, k,
		                "'rate_limit' with an interval needs a burst of 1 or more "
		                "(exporter-toolkit's default of 0 would refuse every password)");
		return -1;
	}
	c->wc->limit_interval_ns = ps.interval_ns;
	c->wc->limit_burst = ps.interval_ns ? ps.burst : 0;
	c->rate_limit = ps.interval_ns != 0;
	c->rate_limit_at = k->start_mark;
	return 0;
}

/* ---- basic_auth_users ---------------------------------------------------------- */

static int bcrypt_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '/';
}

/* $2a$, $2b$ or $2y$, a cost from 04 to 31, then 53 characters; the cost, or
 * -1. (Costs above TCX_BCRYPT_MAX_COST are refused by the caller.) */
static int bcrypt_cost(const char *h, size_t len)
{
	int cost;
	size_t i;

	if (len != BCRYPT_LEN || h[0] != '$' || h[1] != '2' ||
	    (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' || h[4] < '0' ||
	    h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return -1;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return -1;
	for (i = 7; i < len; i++)
		if (!bcrypt_char(h[i]))
			return -1;
	return cost;
}

static int top_users(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct tcx_webconfig *wc = c->wc;
	struct tcx_ypair *p, *q;
	size_t n;
	int r, ret = 0, cost;

	r = expect_map(c, k, v);
	if (r)
		return r < 0 ? -1 : 0;
	n = tcx_yaml_n_pairs(v);
	if (n == 0)
		return 0;
	wc->users = calloc(n, sizeof(*wc->users));
	if (!wc->users)
		return tcx_yaml_oom(&c->y);
	for (p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		tcx_ynode_t *uk = p->key, *uv = p->value;
		struct tcx_webuser *u;

		if (uk->type != YAML_SCALAR_NODE) {
			tcx_yaml_err_at(&c->y, uk, "expected a scalar key, got %s",
			                tcx_yaml_kind_name(uk->type));
			ret = -1;
			continue;
		}
		if (tcx_yaml_slen(uk) == 0) {
			tcx_yaml_err_at(&c->y, uk, "user name must be a non-empty string");
			ret = -1;
			continue;
		}
		for (q = v->data.mapping.pairs.start; q < p; q++) {
			tcx_ynode_t *prev = q->key;

			if (prev->type == YAML_SCALAR_NODE &&
			    tcx_yaml_slen(prev) == tcx_yaml_slen(uk) &&
			    !memcmp(tcx_yaml_sval(prev), tcx_yaml_sval(uk), tcx_yaml_slen(uk)))
				break;
		}
		if (q < p) {
			tcx_yaml_err_dup(&c->y, uk, "user", tcx_yaml_sval(uk), &q->key->start_mark);
			ret = -1;
			continue;
		}
		if (uv->type != YAML_SCALAR_NODE) {
			tcx_yaml_err_at(&c->y, uv,
			                "user '%s': password must be a bcrypt hash, got %s",
			                tcx_yaml_sval(uk), tcx_yaml_kind_name(uv->type));
			ret = -1;
			continue;
		}
		cost = bcrypt_cost(tcx_yaml_sval(uv), tcx_yaml_slen(uv));
		if (cost < 0) {
			tcx_yaml_err_at(&c->y, uv,
			                "user '%s': password must be a bcrypt hash (" BCRYPT_HELP
			                ")",
			                tcx_yaml_sval(uk));
			ret = -1;
			continue;
		}
		if (cost > TCX_BCRYPT_MAX_COST) {
			tcx_yaml_err_at(
			        &c->y, uv,
			        "user '%s': bcrypt cost %d is above the limit of %d (every request "
			        "would pay for it: " BCRYPT_HELP ")",
			        tcx_yaml_sval(uk), cost, TCX_BCRYPT_MAX_COST);
			ret = -1;
			continue;
		}
		/* Unknown users pay for the dearest hash there is. */
		if (cost > (wc->dummy[4] - '0') * 10 + (wc->dummy[5] - '0')) {
			wc->dummy[4] = (char)('0' + cost / 10);
			wc->dummy[5] = (char)('0' + cost % 10);
		}
		u = &wc->users[wc->n_users];
		u->name = tcx_yaml_strndup(&c->y, tcx_yaml_sval(uk), tcx_yaml_slen(uk));
		u->hash = tcx_yaml_strndup(&c->y, tcx_yaml_sval(uv), tcx_yaml_slen(uv));
		wc->n_users++;
		if (!u->name || !u->hash)
			ret = -1;
	}
	return ret;
}

/* ---- the document ------------------------------------------------------------ */

static const struct key_handler top_keys[] = {
        {"tls_server_config", top_tls},
        {"http_server_config", top_http},
        {"basic_auth_users", top_users},
        {"rate_limit", top_rate_limit},
};

static void webconfig_free(struct tcx_webconfig *wc)
{
	size_t i;

	if (!wc)
		return;
	free(wc->cert_pem);
	free_secret(wc->key_pem);
	free(wc->client_ca_pem);
	free(wc->tls_priorities);
	for (i = 0; i < wc->n_users; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	for (i = 0; i < wc->n_headers; i++)
		free(wc->headers[i].value);
	if (wc->cache) {
		explicit_bzero(wc->cache, CACHE_MAX * sizeof(*wc->cache));
		free(wc->cache);
	}
	explicit_bzero(wc->cache_key, sizeof(wc->cache_key));
	free(wc->buckets);
	pthread_mutex_destroy(&wc->lock);
	free(wc);
}

static const struct tcx_yaml_keys webconfig_keys = {top_keys,
                                                    sizeof(top_keys) / sizeof(top_keys[0]),
                                                    sizeof(top_keys[0]), call_handler, listed};

struct tcx_webconfig *tcx_webconfig_load_buffer(const char *name, const char *buf, size_t len,
                                                tcx_config_err_fn errfn, void *arg)
{
	struct ctx c = {.y = {.name = name,
	                      .errfn = errfn,
	                      .arg = arg,
	                      .top = &webconfig_keys,
	                      .max_file = PEM_MAX}};
	struct tcx_webconfig *wc;

	wc = calloc(1, sizeof(*wc));
	if (!wc) {
		tcx_yaml_oom(&c.y);
		return NULL;
	}
	atomic_init(&wc->refcnt, 1);
	if (pthread_mutex_init(&wc->lock, NULL)) {
		free(wc);
		tcx_yaml_oom(&c.y);
		return NULL;
	}
	c.wc = wc;
	/* Cost 4, the least, until top_users() raises it to the users' most. */
	memcpy(wc->dummy, dummy_hash, sizeof(wc->dummy));
	wc->dummy[4] = '0';
	wc->dummy[5] = '4';
	wc->limit_interval_ns = TCX_AUTH_LIMIT_INTERVAL_NS;
	wc->limit_burst = TCX_AUTH_LIMIT_BURST;
	wc->cache = calloc(CACHE_MAX, sizeof(*wc->cache));
	if (!wc->cache) {
		tcx_yaml_oom(&c.y);
		goto out;
	}
	if (gnutls_rnd(GNUTLS_RND_KEY, wc->cache_key, sizeof(wc->cache_key)) < 0) {
		tcx_yaml_err_mark(&c.y, NULL, "cannot get random bytes from GnuTLS");
		goto out;
	}
	/* an empty file, or comments only: no TLS, no authentication */
	tcx_yaml_load(&c.y, buf, len, NULL, NULL);
	if (c.rate_limit && !wc->n_users && !c.y.errors)
		/* exporter-toolkit's limits every request, tcexporter's failed
		 * password checks: without users, it would not limit anything */
		tcx_yaml_err_mark(&c.y, &c.rate_limit_at,
		                  "'rate_limit' limits failed password checks, and there is no "
		                  "basic_auth_users: remove it or set interval: 0");
	if (wc->n_users && wc->limit_interval_ns) {
		wc->buckets = calloc(TCX_AUTH_LIMIT_CLIENTS, sizeof(*wc->buckets));
		if (!wc->buckets)
			tcx_yaml_oom(&c.y);
	}
out:
	if (c.y.errors) {
		webconfig_free(wc);
		return NULL;
	}
	return wc;
}

struct tcx_webconfig *tcx_webconfig_load(const char *path, tcx_config_err_fn errfn, void *arg)
{
	return tcx_webconfig_load_buffer(path, NULL, 0, errfn, arg);
}

struct tcx_webconfig *tcx_webconfig_ref(struct tcx_webconfig *wc)
{
	if (wc)
		atomic_fetch_add_explicit(&wc->refcnt, 1, memory_order_relaxed);
	return wc;
}

void tcx_webconfig_unref(struct tcx_webconfig *wc)
{
	if (wc && atomic_fetch_sub_explicit(&wc->refcnt, 1, memory_order_acq_rel) == 1)
		webconfig_free(wc);
}

/* ---- basic auth ------------------------------------------------------------------ */

/* HMAC-SHA-256 of (length of user, user, password) with the per-load key. */
static int cache_digest(struct tcx_webconfig *wc, const char *user, const char *password,
                        uint8_t out[DIGEST_LEN])
{
	uint64_t ulen = strlen(user);
	gnutls_hmac_hd_t h;

	if (gnutls_hmac_init(&h, GNUTLS_MAC_SHA256, wc->cache_key, sizeof(wc->cache_key)) < 0)
		return -1;
	if (gnutls_hmac(h, &ulen, sizeof(ulen)) < 0 || gnutls_hmac(h, user, ulen) < 0 ||
	    gnutls_hmac(h, password, strlen(password)) < 0) {
		gnutls_hmac_deinit(h, NULL);
		return -1;
	}
	gnutls_hmac_deinit(h, out);
	return 0;
}

/* Under the lock. Looks at every entry, whatever matches. */
static int cache_find(const struct tcx_webconfig *wc, const uint8_t digest[DIGEST_LEN])
{
	int found = 0;
	size_t i;

	for (i = 0; i < wc->n_cache; i++)
		found |= ct_equal(wc->cache[i].digest, DIGEST_LEN, digest, DIGEST_LEN);
	return found;
}

/* Under the lock. Full: the oldest entry goes. */
static void cache_add(struct tcx_webconfig *wc, const uint8_t digest[DIGEST_LEN])
{
	if (cache_find(wc, digest))
		return; /* another thread verified the same pair meanwhile */
	if (wc->n_cache == CACHE_MAX) {
		memmove(&wc->cache[0], &wc->cache[1], (CACHE_MAX - 1) * sizeof(*wc->cache));
		wc->n_cache--;
	}
	memcpy(wc->cache[wc->n_cache++].digest, digest, DIGEST_LEN);
}

/* One bcrypt: 1 when password matches hash. */
static int bcrypt_verify(const char *password, const char *hash)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	const char *out;
	int ok = 0;

	if (!data)
		return 0;
	out = crypt_r(password, hash, data);
	/* NULL or a failure token ("*0", "*1") on an invalid setting */
	if (out && out[0] != '*')
		ok = ct_equal(out, strlen(out), hash, strlen(hash));
	explicit_bzero(data, sizeof(*data));
	free(data);
	return ok;
}

/* ---- the limit of failed checks per client (rate_limit) --------------------------- */

/* (A dual-stack listener sees IPv4-mapped addresses.) */
struct tcx_client tcx_client_key(const struct tcx_client *client)
{
	static const unsigned char v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	struct tcx_client k;

	memset(&k, 0, sizeof(k));
	if (!client)
		return k;
	if (client->family == AF_INET) {
		k.family = AF_INET;
		memcpy(k.addr, client->addr, 4);
	} else if (client->family == AF_INET6 && !memcmp(client->addr, v4mapped, 12)) {
		k.family = AF_INET;
		memcpy(k.addr, client->addr + 12, 4);
	} else if (client->family == AF_INET6) {
		k.family = AF_INET6;
		memcpy(k.addr, client->addr, 8);
	}
	return k;
}

/* Under the lock: b's tokens as of now. */
static void bucket_fill(const struct tcx_webconfig *wc, struct tcx_auth_bucket *b, double now)
{
	double t = b->tokens + (now - b->at) * 1e9 / (double)wc->limit_interval_ns;

	b->tokens = t < (double)wc->limit_burst ? t : (double)wc->limit_burst;
	b->at = now;
}

/* Under the lock: the bucket of key, as of now; a full one is made when it
 * has none (in place of the fullest when TCX_AUTH_LIMIT_CLIENTS have one),
 * unless make is 0 (then NULL). */
static struct tcx_auth_bucket *bucket_of(struct tcx_webconfig *wc, const struct tcx_client *key,
                                         double now, int make)
{
	struct tcx_auth_bucket *b = NULL;
	size_t i;

	for (i = 0; i < wc->n_buckets; i++) {
		if (!memcmp(&wc->buckets[i].key, key, sizeof(*key))) {
			bucket_fill(wc, &wc->buckets[i], now);
			return &wc->buckets[i];
		}
	}
	if (!make)
		return NULL;
	if (wc->n_buckets < TCX_AUTH_LIMIT_CLIENTS) {
		b = &wc->buckets[wc->n_buckets++];
	} else {
		for (i = 0; i < wc->n_buckets; i++) {
			bucket_fill(wc, &wc->buckets[i], now);
			if (!b || wc->buckets[i].tokens > b->tokens)
				b = &wc->buckets[i];
		}
	}
	b->key = *key;
	b->tokens = (double)wc->limit_burst;
	b->at = now;
	return b;
}

enum tcx_auth tcx_webconfig_auth(struct tcx_webconfig *wc, const struct tcx_client *client,
                                 const char *user, const char *password, uint64_t *retry_s)
{
	struct tcx_client key = tcx_client_key(client);
	uint8_t digest[DIGEST_LEN];
	enum tcx_auth r = TCX_AUTH_CHECK;
	int have_digest = user && password && cache_digest(wc, user, password, digest) == 0;

	*retry_s = 0;
	pthread_mutex_lock(&wc->lock);
	if (have_digest && cache_find(wc, digest)) {
		r = TCX_AUTH_OK;
	} else if (wc->buckets) { /* users, and a limit */
		struct tcx_auth_bucket *b = bucket_of(wc, &key, tcx_clock_s(CLOCK_MONOTONIC), 1);

		if (b->tokens >= 1) {
			b->tokens -= 1;
		} else {
			double wait = (1 - b->tokens) * (double)wc->limit_interval_ns / 1e9;

			r = TCX_AUTH_LIMITED;
			*retry_s = wait < 1 ? 1 : (uint64_t)wait + ((double)(uint64_t)wait < wait);
		}
	}
	pthread_mutex_unlock(&wc->lock);
	explicit_bzero(digest, sizeof(digest));
	return r;
}

/* ---- password checks: one thread runs them ---------------------------------------- */

/* Checks are queued, and run by one thread, started by the first one queued
 * and ending when there is none left: a bcrypt takes a core for its
 * duration, and a second thread would only give a flood of wrong passwords
 * a second core. Each client has a queue of its own, and the queues take
 * turns (a ring, a new one at its end): a client's first check waits for at
 * most one check of each other client, whatever their queues hold. Bounded
 * checks of a client, and in all, wait (tcx_webconfig_check_start()). The
 * thread is never joined (a check in progress, up to a second, must not
 * hold up a shutdown): it touches nothing but the checks and the web
 * configs they hold a reference to, and calls no GnuTLS function (the
 * digests are made by the requesters). */
struct tcx_auth_check {
	struct tcx_webconfig *wc; /* a reference: hash points into it */
	struct tcx_client key;
	char *password;
	const char *hash;
	int known; /* the user exists */
	int have_digest;
	uint8_t digest[DIGEST_LEN];
	void (*done)(void *arg, int ok);
	void *arg;
	/* under checks_lock */
	int refs;              /* the owner's, and the queue's or the checker's */
	struct check_queue *q; /* the queue it waits on, or NULL */
	int ended;             /* the owner let go */
	struct tcx_auth_check *next;
};

/* A client's checks not begun yet, oldest first; on the ring while it has
 * one. */
struct check_queue {
	struct tcx_client key;
	struct tcx_auth_check *head, **tail;
	unsigned n;
	struct check_queue *next;
};

static pthread_mutex_t checks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct check_queue *ring_head, **ring_tail = &ring_head;
static unsigned n_queued;
static int checker_running;

static void check_put(struct tcx_auth_check *j) /* under checks_lock */
{
	if (--j->refs)
		return;
	free_secret(j->password);
	explicit_bzero(j->digest, sizeof(j->digest));
	tcx_webconfig_unref(j->wc);
	free(j);
}

/* Under wc's lock: a token back into the bucket of key (if it has one). */
static void bucket_refund(struct tcx_webconfig *wc, const struct tcx_client *key)
{
	struct tcx_auth_bucket *b =
	        wc->buckets ? bucket_of(wc, key, tcx_clock_s(CLOCK_MONOTONIC), 0) : NULL;

	if (b)
		b->tokens = b->tokens + 1 < (double)wc->limit_burst ? b->tokens + 1
		                                                    : (double)wc->limit_burst;
}

void tcx_webconfig_auth_refund(struct tcx_webconfig *wc, const struct tcx_client *client)
{
	struct tcx_client key = tcx_client_key(client);

	pthread_mutex_lock(&wc->lock);
	bucket_refund(wc, &key);
	pthread_mutex_unlock(&wc->lock);
}

/* The result of j into its web config: the pair cached, the client's token
 * given back. */
static void check_record(struct tcx_auth_check *j, int ok)
{
	struct tcx_webconfig *wc = j->wc;

	if (!ok)
		return;
	pthread_mutex_lock(&wc->lock);
	if (j->have_digest)
		cache_add(wc, j->digest);
	bucket_refund(wc, &j->key);
	pthread_mutex_unlock(&wc->lock);
}

/* Under checks_lock: q off the ring, and freed. */
static void ring_remove(struct check_queue *q)
{
	struct check_queue **pp;

	for (pp = &ring_head; *pp != q; pp = &(*pp)->next)
		;
	*pp = q->next;
	if (ring_tail == &q->next)
		ring_tail = pp;
	free(q);
}

/* Under checks_lock: j off its queue. */
static void unqueue(struct tcx_auth_check *j)
{
	struct check_queue *q = j->q;
	struct tcx_auth_check **pp;

	for (pp = &q->head; *pp != j; pp = &(*pp)->next)
		;
	*pp = j->next;
	if (q->tail == &j->next)
		q->tail = pp;
	j->q = NULL;
	n_queued--;
	if (!--q->n)
		ring_remove(q);
}

/* Under checks_lock: the next check to run, off its queue, whose queue
 * goes to the end of the ring. */
static struct tcx_auth_check *next_check(void)
{
	struct check_queue *q = ring_head;
	struct tcx_auth_check *j = q ? q->head : NULL;

	if (!j)
		return NULL;
	if (q->n > 1 && q->next) { /* its turn is over */
		ring_head = q->next;
		q->next = NULL;
		*ring_tail = q;
		ring_tail = &q->next;
	}
	unqueue(j);
	return j;
}

/* Under checks_lock: j onto its client's queue; -1 when per_client checks
 * wait on that one, or max on all of them. */
static int enqueue(struct tcx_auth_check *j, unsigned per_client, unsigned max)
{
	struct check_queue *q;

	for (q = ring_head; q && memcmp(&q->key, &j->key, sizeof(j->key)); q = q->next)
		;
	if (n_queued >= max || (q && q->n >= per_client)) {
		errno = EBUSY;
		return -1;
	}
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q) {
			errno = ENOMEM;
			return -1;
		}
		q->key = j->key;
		q->tail = &q->head;
		*ring_tail = q;
		ring_tail = &q->next;
	}
	j->next = NULL;
	*q->tail = j;
	q->tail = &j->next;
	q->n++;
	n_queued++;
	j->q = q;
	return 0;
}

static void *checker_main(void *arg)
{
	struct tcx_auth_check *j;

	(void)arg;
	pthread_mutex_lock(&checks_lock);
	while ((j = next_check())) {
		int ok;

		pthread_mutex_unlock(&checks_lock);
		ok = bcrypt_verify(j->password, j->hash) && j->known;
		check_record(j, ok);
		pthread_mutex_lock(&checks_lock);
		if (!j->ended)
			j->done(j->arg, ok);
		check_put(j);
	}
	checker_running = 0;
	pthread_mutex_unlock(&checks_lock);
	return NULL;
}

struct tcx_auth_check *tcx_webconfig_check_start(struct tcx_webconfig *wc,
                                                 const struct tcx_client *client, const char *user,
                                                 const char *password, unsigned per_client,
                                                 unsigned max, void (*done)(void *arg, int ok),
                                                 void *arg)
{
	struct tcx_auth_check *j = calloc(1, sizeof(*j));
	const char *hash = NULL;
	size_t i, ulen = user ? strlen(user) : 0;

	if (j)
		j->password = strdup(password ? password : "");
	if (!j || !j->password) {
		free(j);
		tcx_webconfig_auth_refund(wc, client);
		errno = ENOMEM;
		return NULL;
	}
	j->have_digest = user && password && cache_digest(wc, user, password, j->digest) == 0;
	/* every name is compared, so the time does not tell which matched */
	for (i = 0; user && i < wc->n_users; i++) {
		const char *name = wc->users[i].name;

		if (ct_equal(user, ulen, name, strlen(name)))
			hash = wc->users[i].hash;
	}
	j->known = hash != NULL;
	j->hash = hash ? hash : wc->dummy;
	j->wc = tcx_webconfig_ref(wc);
	j->key = tcx_client_key(client);
	j->done = done;
	j->arg = arg;
	j->refs = 2;
	pthread_mutex_lock(&checks_lock);
	if (enqueue(j, per_client, max) == 0 && !checker_running) {
		pthread_attr_t attr;
		pthread_t t;

		checker_running = pthread_attr_init(&attr) == 0;
		if (checker_running) {
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			checker_running = pthread_create(&t, &attr, checker_main, NULL) == 0;
			pthread_attr_destroy(&attr);
		}
		if (!checker_running) {
			unqueue(j);
			errno = EAGAIN;
		}
	}
	if (!j->q) { /* never to run */
		int e = errno;

		j->refs = 1;
		check_put(j);
		pthread_mutex_unlock(&checks_lock);
		tcx_webconfig_auth_refund(wc, client);
		errno = e;
		return NULL;
	}
	pthread_mutex_unlock(&checks_lock);
	return j;
}

void tcx_webconfig_check_end(struct tcx_auth_check *j)
{
	int never_ran;

	if (!j)
		return;
	pthread_mutex_lock(&checks_lock);
	never_ran = j->q != NULL;
	if (never_ran) {
		unqueue(j);
		j->refs--;
	}
	j->ended = 1;
	if (never_ran) { /* its token back; the lock order is checks_lock, wc's */
		pthread_mutex_lock(&j->wc->lock);
		bucket_refund(j->wc, &j->key);
		pthread_mutex_unlock(&j->wc->lock);
	}
	check_put(j);
	pthread_mutex_unlock(&checks_lock);
}

/* ---- mTLS ------------------------------------------------------------------------ */

int tcx_webconfig_check_client_cert(const struct tcx_webconfig *wc, void *gnutls_session, char *err,
                                    size_t errlen)
{
	gnutls_session_t session = gnutls_session;
	gnutls_typed_vdata_st purpose = {
	        .type = GNUTLS_DT_KEY_PURPOSE_OID,
	        .data = (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_CLIENT,
	};
	const gnutls_datum_t *peers;
	gnutls_datum_t out = {NULL, 0};
	unsigned n = 0, status = 0;
	int r;

	if (!wc || wc->client_auth == TCX_CLIENT_AUTH_NONE ||
	    wc->client_auth == TCX_CLIENT_AUTH_REQUEST)
		return 0;
	if (!session) {
		snprintf(err, errlen, "client certificate required");
		return -1;
	}
	peers = gnutls_certificate_get_peers(session, &n);
	if (!peers || n == 0) {
		if (wc->client_auth == TCX_CLIENT_AUTH_VERIFY_IF_GIVEN)
			return 0;
		snprintf(err, errlen, "client certificate required");
		return -1;
	}
	if (wc->client_auth == TCX_CLIENT_AUTH_REQUIRE_ANY)
		return 0;

	/* as Go's crypto/tls: chain to the client CA, and the key purpose (when the
	 * certificate restricts it) must allow client authentication */
	r = gnutls_certificate_verify_peers(session, &purpose, 1, &status);
	if (r < 0) {
		snprintf(err, errlen, "client certificate not verified: %s", gnutls_strerror(r));
		return -1;
	}
	if (status == 0)
		return 0;
	if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) < 0 ||
	    !out.data) {
		snprintf(err, errlen, "client certificate not verified: status 0x%x", status);
	} else {
		size_t len = out.size;

		while (len > 0 && (out.data[len - 1] == ' ' || out.data[len - 1] == '\n'))
			len--;
		snprintf(err, errlen, "client certificate not verified: %.*s", (int)len,
		         (const char *)out.data);
	}
	gnutls_free(out.data);
	return -1;
}
