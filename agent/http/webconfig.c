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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <crypt.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <yaml.h>

#include "agent/http/webconfig.h"
#include "config/yamlutil.h"

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
	return !tcx_yaml_has_nul(n) && !strcmp(tcx_yaml_sval(n), s);
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
	if (tcx_yaml_slen(v) == 0 || tcx_yaml_has_nul(v)) {
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
	if (tcx_yaml_has_nul(v) || strpbrk(s, "\r\n")) {
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

/* ---- rate_limit: only the disabled form (interval 0) ------------------------------ */

/* A Go duration ("0", "1s", "1m30s", "250ms"): 1 when non-zero, 0 when zero,
 * -1 when invalid. */
static int parse_go_duration(const char *s, size_t len)
{
	static const char *const units[] = {"ns", "us", "µs", "μs", "ms", "s", "m", "h"};
	const char *p = s, *end = s + len;
	int nonzero = 0;
	size_t i;

	if (len == 1 && s[0] == '0')
		return 0;
	if (len == 0)
		return -1;
	while (p < end) {
		const char *num = p;
		int digits = 0, dot = 0;

		for (; p < end && ((*p >= '0' && *p <= '9') || (*p == '.' && !dot)); p++) {
			if (*p == '.') {
				dot = 1;
				continue;
			}
			digits++;
			if (*p != '0')
				nonzero = 1;
		}
		if (p == num || digits == 0)
			return -1;
		/* in this order, "ms" is tried before "m" */
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if ((size_t)(end - p) >= strlen(units[i]) &&
			    !memcmp(p, units[i], strlen(units[i])))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		p += strlen(units[i]);
	}
	return nonzero;
}

struct rate_ps {
	int enabled;
};

static int rate_interval(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct rate_ps *ps = obj;
	int r;

	if (tcx_yaml_expect(&c->y, k, v, YAML_SCALAR_NODE))
		return -1;
	r = tcx_yaml_has_nul(v) ? -1 : parse_go_duration(tcx_yaml_sval(v), tcx_yaml_slen(v));
	if (r < 0) {
		tcx_yaml_err_at(&c->y, v,
		                "invalid interval '%s': must be a duration such as 0, 1s or 100ms",
		                tcx_yaml_sval(v));
		return -1;
	}
	ps->enabled = r;
	return 0;
}

static int rate_burst(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	uint64_t burst; /* checked, not used: see rate_interval */

	return tcx_yaml_uint(&c->y, k, v, 0, 9999999999ULL, &burst);
}

static const struct key_handler rate_keys[] = {
        {"interval", rate_interval},
        {"burst", rate_burst},
};

static int top_rate_limit(struct ctx *c, void *obj, tcx_ynode_t *k, tcx_ynode_t *v)
{
	struct rate_ps ps = {0};

	if (walk_section(c, k, v, rate_keys, sizeof(rate_keys) / sizeof(rate_keys[0]),
	                 " in rate_limit", &ps))
		return -1;
	if (ps.enabled) {
		/* interval: 0 disables the limiter in exporter-toolkit: that one is fine */
		tcx_yaml_err_at(&c->y, k,
		                "'rate_limit' is not supported by tcexporter; remove it or set "
		                "interval: 0");
		return -1;
	}
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
		if (tcx_yaml_slen(uk) == 0 || tcx_yaml_has_nul(uk)) {
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

/* A bcrypt runs in a thread of its own, which the requester waits for until
 * tcx_webconfig_abandon_checks(): a check in progress (up to a second at the
 * highest cost) never holds up a shutdown. The requester joins the thread
 * once it is done, or detaches it when abandoned; the job is freed by
 * whichever of the two lets go of it last. */
static pthread_mutex_t jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t jobs_done = PTHREAD_COND_INITIALIZER;
static int jobs_abandoned;

struct bcrypt_job {
	char *password, *hash;
	int refs, done, ok; /* under jobs_lock */
};

static void job_put(struct bcrypt_job *j) /* under jobs_lock */
{
	if (--j->refs)
		return;
	free_secret(j->password);
	free(j->hash);
	free(j);
}

static void *job_main(void *arg)
{
	struct bcrypt_job *j = arg;
	int ok = bcrypt_verify(j->password, j->hash);

	pthread_mutex_lock(&jobs_lock);
	j->ok = ok;
	j->done = 1;
	pthread_cond_broadcast(&jobs_done);
	job_put(j);
	pthread_mutex_unlock(&jobs_lock);
	return NULL;
}

/* bcrypt_verify(), given up (0) once checks are abandoned. */
static int bcrypt_verify_abandonable(const char *password, const char *hash)
{
	struct bcrypt_job *j = calloc(1, sizeof(*j));
	int ok, started, finished;
	pthread_t t;

	if (!j)
		return 0;
	j->password = strdup(password);
	j->hash = strdup(hash);
	j->refs = 2;
	if (!j->password || !j->hash) {
		free_secret(j->password);
		free(j->hash);
		free(j);
		return 0;
	}
	pthread_mutex_lock(&jobs_lock);
	started = !jobs_abandoned && pthread_create(&t, NULL, job_main, j) == 0;
	if (!started)
		j->refs = 1;
	while (started && !j->done && !jobs_abandoned)
		pthread_cond_wait(&jobs_done, &jobs_lock);
	ok = j->done && j->ok;
	finished = started && j->done;
	if (started && !finished)
		pthread_detach(t); /* abandoned: it ends on its own */
	job_put(j);
	pthread_mutex_unlock(&jobs_lock);
	if (finished)
		pthread_join(t, NULL); /* it is returning */
	return ok;
}

void tcx_webconfig_abandon_checks(void)
{
	pthread_mutex_lock(&jobs_lock);
	jobs_abandoned = 1;
	pthread_cond_broadcast(&jobs_done);
	pthread_mutex_unlock(&jobs_lock);
}

int tcx_webconfig_check_password(struct tcx_webconfig *wc, const char *user, const char *password)
{
	uint8_t digest[DIGEST_LEN];
	const char *hash = NULL;
	int cached = 0, have_digest, ok;
	size_t i, ulen;

	if (!wc || !user || !password)
		return 0;
	have_digest = cache_digest(wc, user, password, digest) == 0;
	if (have_digest) {
		pthread_mutex_lock(&wc->lock);
		cached = cache_find(wc, digest);
		pthread_mutex_unlock(&wc->lock);
		if (cached) {
			explicit_bzero(digest, sizeof(digest));
			return 1;
		}
	}

	/* every name is compared, so the time does not tell which matched */
	ulen = strlen(user);
	for (i = 0; i < wc->n_users; i++) {
		const char *name = wc->users[i].name;

		if (ct_equal(user, ulen, name, strlen(name)))
			hash = wc->users[i].hash;
	}
	ok = bcrypt_verify_abandonable(password, hash ? hash : wc->dummy) && hash;
	if (ok && have_digest) {
		pthread_mutex_lock(&wc->lock);
		cache_add(wc, digest);
		pthread_mutex_unlock(&wc->lock);
	}
	explicit_bzero(digest, sizeof(digest));
	return ok;
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
