/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the web configuration (agent/http/webconfig.c): loading and
 * validation, basic auth, and client certificates checked on real GnuTLS
 * sessions. Certificates come from tests/unit/webconfig/mkcerts.sh (openssl),
 * generated into a temporary directory; bcrypt hashes are made here with cost
 * 4 so that the whole run stays fast. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <crypt.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <gnutls/gnutls.h>

#include "agent/http/webconfig.h"
#include "lib/clock.h"

#define ALICE_PW "wonderland"
#define BOB_PW   "builder"

struct fx {
	char dir[64];
	char *ca, *server_crt, *server_key, *client_crt, *client_key;
	char *other_client_crt, *other_client_key;
	char alice[128], bob[128]; /* bcrypt hashes of ALICE_PW, BOB_PW */
};

/* ---- helpers ---------------------------------------------------------------- */

struct errs {
	char *text;
	size_t len;
	unsigned n;
};

/* The default bounds of the checks that wait (per client, in all). */
#define BOUNDS TCX_AUTH_QUEUE_CLIENT, TCX_AUTH_QUEUE_MAX

static void collect(void *arg, const char *msg)
{
	struct errs *e = arg;
	size_t m = strlen(msg);

	e->text = realloc(e->text, e->len + m + 2);
	assert_non_null(e->text);
	memcpy(e->text + e->len, msg, m);
	e->len += m;
	e->text[e->len++] = '\n';
	e->text[e->len] = '\0';
	e->n++;
}

static const char *srcdir(void)
{
	const char *s = getenv("TCX_SRCDIR");

	return s && *s ? s : ".";
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static char *fixture(const struct fx *fx, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
	return slurp(path);
}

/* Write DIR/name; the path goes to out. */
static void write_file(const struct fx *fx, const char *name, const char *text, char *out,
                       size_t outlen)
{
	FILE *f;

	snprintf(out, outlen, "%s/%s", fx->dir, name);
	f = fopen(out, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* "{W}" becomes the web config path, "{D}" the fixture directory. */
static char *expand(const struct fx *fx, const char *wpath, const char *tmpl)
{
	size_t cap = strlen(tmpl) + 16 * (strlen(wpath) + strlen(fx->dir)) + 1, len = 0;
	char *out = malloc(cap);
	const char *p;

	assert_non_null(out);
	for (p = tmpl; *p;) {
		const char *with = NULL;

		if (!strncmp(p, "{W}", 3))
			with = wpath;
		else if (!strncmp(p, "{D}", 3))
			with = fx->dir;
		if (with) {
			assert_true(len + strlen(with) < cap);
			memcpy(out + len, with, strlen(with));
			len += strlen(with);
			p += 3;
		} else {
			assert_true(len + 1 < cap);
			out[len++] = *p++;
		}
	}
	out[len] = '\0';
	return out;
}

static struct tcx_webconfig *load_ok(const struct fx *fx, const char *name, const char *yaml)
{
	struct errs e = {0};
	struct tcx_webconfig *wc;
	char path[256];

	write_file(fx, name, yaml, path, sizeof(path));
	wc = tcx_webconfig_load(path, collect, &e);
	if (e.text)
		fprintf(stderr, "unexpected errors:\n%s", e.text);
	assert_null(e.text);
	assert_non_null(wc);
	return wc;
}

/* yaml, written as DIR/name, must fail with exactly `expected` ({W}, {D}
 * expanded; one message a line). */
static void expect_errors(const struct fx *fx, const char *name, const char *yaml,
                          const char *expected)
{
	struct errs e = {0};
	struct tcx_webconfig *wc;
	char path[256], *want;

	write_file(fx, name, yaml, path, sizeof(path));
	wc = tcx_webconfig_load(path, collect, &e);
	if (wc)
		tcx_webconfig_unref(wc);
	assert_null(wc);
	want = expand(fx, path, expected);
	assert_non_null(e.text);
	assert_string_equal(e.text, want);
	free(want);
	free(e.text);
}

/* `key: |` followed by text indented by `indent` spaces. */
static char *block(const char *key, const char *text, int indent)
{
	size_t cap = strlen(key) + 8 + strlen(text) * (size_t)(indent + 2) + 1, len;
	char *out = malloc(cap);
	const char *p;

	assert_non_null(out);
	len = (size_t)snprintf(out, cap, "%*s%s: |\n", indent - 2, "", key);
	for (p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		len += (size_t)snprintf(out + len, cap - len, "%*s%.*s", indent, "", (int)n, p);
		p += n;
	}
	return out;
}

static void bcrypt_hash_with(const char *prefix, const char *password, char *out, size_t outlen)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	const char *h;

	assert_non_null(data);
	assert_non_null(crypt_gensalt_rn(prefix, 4, NULL, 0, salt, sizeof(salt)));
	h = crypt_r(password, salt, data);
	assert_non_null(h);
	assert_int_equal(strlen(h), 60);
	assert_memory_equal(h, prefix, 4);
	snprintf(out, outlen, "%s", h);
	free(data);
}

static void bcrypt_hash(const char *password, char *out, size_t outlen)
{
	bcrypt_hash_with("$2b$", password, out, outlen);
}

/* Basic auth as the HTTP server asks for it, waiting for the check when one
 * is needed: 1 (verified), 0 (wrong), -1 (limited: refused without one). */
struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done, ok;
};

static void on_checked(void *arg, int ok) /* in the checker's thread */
{
	struct waiter *w = arg;

	pthread_mutex_lock(&w->lock);
	w->ok = ok;
	w->done = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static int check_from(struct tcx_webconfig *wc, const struct tcx_client *client, const char *user,
                      const char *password)
{
	struct waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
	struct tcx_auth_check *chk;
	uint64_t retry_s;

	switch (tcx_webconfig_auth(wc, client, user, password, &retry_s)) {
	case TCX_AUTH_OK:
		return 1;
	case TCX_AUTH_LIMITED:
		assert_true(retry_s >= 1);
		return -1;
	case TCX_AUTH_CHECK:
		break;
	}
	chk = tcx_webconfig_check_start(wc, client, user, password, BOUNDS, on_checked, &w);
	assert_non_null(chk);
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	tcx_webconfig_check_end(chk);
	return w.ok;
}

static struct tcx_client v4(unsigned a, unsigned b, unsigned c, unsigned d)
{
	struct tcx_client k = {.family = AF_INET};

	k.addr[0] = (unsigned char)a;
	k.addr[1] = (unsigned char)b;
	k.addr[2] = (unsigned char)c;
	k.addr[3] = (unsigned char)d;
	return k;
}

static struct tcx_client v6(const char *text)
{
	struct tcx_client k = {.family = AF_INET6};

	assert_int_equal(inet_pton(AF_INET6, text, k.addr), 1);
	return k;
}

/* check_from() from an address of its own each time: the tests of the
 * limit per address choose theirs. */
static int check_password(struct tcx_webconfig *wc, const char *user, const char *password)
{
	static atomic_uint n;
	unsigned i = atomic_fetch_add(&n, 1);
	struct tcx_client c = v4(10, (i >> 16) & 255, (i >> 8) & 255, i & 255);

	return check_from(wc, &c, user, password);
}

/* ---- fixtures ------------------------------------------------------------------ */

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char cmd[512];

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/tcx-webconfig-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/unit/webconfig/mkcerts.sh' '%s'", srcdir(),
	         fx->dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "%s failed\n", cmd);
		return -1;
	}
	fx->ca = fixture(fx, "ca.crt");
	fx->server_crt = fixture(fx, "server.crt");
	fx->server_key = fixture(fx, "server.key");
	fx->client_crt = fixture(fx, "client.crt");
	fx->client_key = fixture(fx, "client.key");
	fx->other_client_crt = fixture(fx, "other-client.crt");
	fx->other_client_key = fixture(fx, "other-client.key");
	bcrypt_hash(ALICE_PW, fx->alice, sizeof(fx->alice));
	bcrypt_hash(BOB_PW, fx->bob, sizeof(fx->bob));
	*state = fx;
	return 0;
}

/* The threads of this process (/proc/self/task). */
static int n_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];
	int i;

	/* The checker thread ends once it has no check left (its last done
	 * may have returned a moment ago): no thread is left running under
	 * valgrind's leak check (tests/integration/valgrind.sh). */
	for (i = 0; i < 1000 && n_threads() > 1; i++)
		usleep(10000);
	if (n_threads() > 1)
		return -1;
	if (!fx)
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd) != 0)
		return -1;
	free(fx->ca);
	free(fx->server_crt);
	free(fx->server_key);
	free(fx->client_crt);
	free(fx->client_key);
	free(fx->other_client_crt);
	free(fx->other_client_key);
	free(fx);
	return 0;
}

/* ---- good configurations --------------------------------------------------------- */

static void assert_no_tls(const struct tcx_webconfig *wc)
{
	assert_null(wc->cert_pem);
	assert_null(wc->key_pem);
	assert_null(wc->client_ca_pem);
	assert_null(wc->tls_priorities);
	assert_int_equal(wc->client_auth, TCX_CLIENT_AUTH_NONE);
}

static void test_empty_file(void **state)
{
	struct fx *fx = *state;
	static const char *const texts[] = {"", "# nothing yet\n\n   # really\n", "---\n", "{}\n"};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct tcx_webconfig *wc = load_ok(fx, "empty.yml", texts[i]);

		assert_no_tls(wc);
		assert_int_equal(wc->n_users, 0);
		assert_null(wc->users);
		assert_int_equal(wc->n_cache, 0);
		assert_int_equal(check_password(wc, "alice", ALICE_PW), 0);
		assert_int_equal(tcx_webconfig_check_client_cert(wc, NULL, NULL, 0), 0);
		tcx_webconfig_unref(wc);
	}
}

static void test_basic_auth_only(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char yaml[512];

	snprintf(yaml, sizeof(yaml),
	         "# users of the scrape endpoint\n"
	         "basic_auth_users:\n"
	         "  alice: %s\n"
	         "  \"bob smith\": '%s'\n",
	         fx->alice, fx->bob);
	wc = load_ok(fx, "auth.yml", yaml);
	assert_no_tls(wc);
	assert_int_equal(wc->n_users, 2);
	assert_string_equal(wc->users[0].name, "alice");
	assert_string_equal(wc->users[0].hash, fx->alice);
	assert_string_equal(wc->users[1].name, "bob smith");
	assert_string_equal(wc->users[1].hash, fx->bob);
	tcx_webconfig_unref(wc);

	/* null and empty: no users, as in exporter-toolkit */
	wc = load_ok(fx, "auth.yml", "basic_auth_users:\n");
	assert_int_equal(wc->n_users, 0);
	tcx_webconfig_unref(wc);
	wc = load_ok(fx, "auth.yml", "basic_auth_users: {}\n");
	assert_int_equal(wc->n_users, 0);
	tcx_webconfig_unref(wc);
}

/* File names are relative to the web config file, not to the working
 * directory. */
static void test_tls_files_relative(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char path[256];

	snprintf(path, sizeof(path), "%s/conf", fx->dir);
	assert_true(mkdir(path, 0700) == 0 || access(path, F_OK) == 0);
	wc = load_ok(fx, "conf/web.yml",
	             "tls_server_config:\n"
	             "  cert_file: ../server.crt\n"
	             "  key_file: \"../server.key\"\n");
	assert_string_equal(wc->cert_pem, fx->server_crt);
	assert_string_equal(wc->key_pem, fx->server_key);
	assert_null(wc->client_ca_pem);
	assert_int_equal(wc->client_auth, TCX_CLIENT_AUTH_NONE);
	assert_string_equal(wc->tls_priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	assert_int_equal(wc->n_users, 0);
	tcx_webconfig_unref(wc);

	/* the same file names from the fixture directory itself */
	wc = load_ok(fx, "web.yml",
	             "tls_server_config:\n"
	             "  cert_file: server.crt\n"
	             "  key_file: ./server.key\n");
	assert_string_equal(wc->cert_pem, fx->server_crt);
	assert_string_equal(wc->key_pem, fx->server_key);
	tcx_webconfig_unref(wc);
}

static void test_tls_inline(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char *cert = block("cert", fx->server_crt, 4), *key = block("key", fx->server_key, 4);
	char *ca = block("client_ca", fx->ca, 4), yaml[8192];

	snprintf(yaml, sizeof(yaml),
	         "tls_server_config:\n%s%s%s"
	         "  client_auth_type: RequireAndVerifyClientCert\n",
	         cert, key, ca);
	wc = load_ok(fx, "inline.yml", yaml);
	assert_string_equal(wc->cert_pem, fx->server_crt);
	assert_string_equal(wc->key_pem, fx->server_key);
	assert_string_equal(wc->client_ca_pem, fx->ca);
	assert_int_equal(wc->client_auth, TCX_CLIENT_AUTH_REQUIRE_VERIFY);
	assert_string_equal(wc->tls_priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	tcx_webconfig_unref(wc);
	free(cert);
	free(key);
	free(ca);
}

static void test_mtls(void **state)
{
	static const struct {
		const char *name;
		enum tcx_client_auth auth;
	} types[] = {
	        {"NoClientCert", TCX_CLIENT_AUTH_NONE},
	        {"RequestClientCert", TCX_CLIENT_AUTH_REQUEST},
	        {"RequireAnyClientCert", TCX_CLIENT_AUTH_REQUIRE_ANY},
	        {"RequireClientCert", TCX_CLIENT_AUTH_REQUIRE_ANY}, /* legacy alias */
	        {"VerifyClientCertIfGiven", TCX_CLIENT_AUTH_VERIFY_IF_GIVEN},
	        {"RequireAndVerifyClientCert", TCX_CLIENT_AUTH_REQUIRE_VERIFY},
	};
	struct fx *fx = *state;
	char yaml[512];
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct tcx_webconfig *wc;

		snprintf(yaml, sizeof(yaml),
		         "tls_server_config:\n"
		         "  cert_file: %s/server.crt\n"
		         "  key_file: %s/server.key\n"
		         "  client_ca_file: ca.crt\n"
		         "  client_auth_type: %s\n",
		         fx->dir, fx->dir, types[i].name);
		wc = load_ok(fx, "mtls.yml", yaml);
		assert_string_equal(wc->cert_pem, fx->server_crt);
		assert_string_equal(wc->client_ca_pem, fx->ca);
		assert_int_equal(wc->client_auth, types[i].auth);
		tcx_webconfig_unref(wc);
	}
}

static void test_tls_versions(void **state)
{
	static const struct {
		const char *yaml;
		const char *prio;
	} cases[] = {
	        {"  min_version: TLS13\n", "NORMAL:-VERS-ALL:+VERS-TLS1.3"},
	        {"  min_version: TLS12\n", "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
	        {"  max_version: TLS12\n", "NORMAL:-VERS-ALL:+VERS-TLS1.2"},
	        {"  min_version: TLS10\n",
	         "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:+VERS-TLS1.1:+VERS-TLS1.0"},
	        {"  min_version: TLS10\n  max_version: TLS11\n",
	         "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0"},
	        {"  min_version: TLS13\n  max_version: TLS13\n", "NORMAL:-VERS-ALL:+VERS-TLS1.3"},
	};
	struct fx *fx = *state;
	char yaml[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tcx_webconfig *wc;

		snprintf(yaml, sizeof(yaml),
		         "tls_server_config:\n"
		         "  cert_file: server.crt\n"
		         "  key_file: server.key\n%s",
		         cases[i].yaml);
		wc = load_ok(fx, "versions.yml", yaml);
		assert_string_equal(wc->tls_priorities, cases[i].prio);
		tcx_webconfig_unref(wc);
	}
}

static void test_everything(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char yaml[2048];

	snprintf(yaml, sizeof(yaml),
	         "tls_server_config:\n"
	         "  cert_file: server.crt\n"
	         "  key_file: server.key\n"
	         "  client_ca_file: ca.crt\n"
	         "  client_auth_type: VerifyClientCertIfGiven\n"
	         "  min_version: TLS12\n"
	         "  max_version: TLS13\n"
	         "http_server_config:\n"
	         "  http2: false\n"
	         "  headers:\n"
	         "    Strict-Transport-Security: max-age=31536000\n"
	         "    X-Frame-Options: deny\n"
	         "    X-Content-Type-Options: nosniff\n"
	         "    X-XSS-Protection: \"1; mode=block\"\n"
	         "    Content-Security-Policy: default-src 'self'\n"
	         "basic_auth_users:\n"
	         "  alice: %s\n"
	         "  bob: %s\n"
	         "rate_limit:\n"
	         "  interval: 0s\n"
	         "  burst: 10\n",
	         fx->alice, fx->bob);
	wc = load_ok(fx, "all.yml", yaml);
	assert_string_equal(wc->cert_pem, fx->server_crt);
	assert_string_equal(wc->key_pem, fx->server_key);
	assert_string_equal(wc->client_ca_pem, fx->ca);
	assert_int_equal(wc->client_auth, TCX_CLIENT_AUTH_VERIFY_IF_GIVEN);
	assert_string_equal(wc->tls_priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2");
	assert_int_equal(wc->n_users, 2);
	assert_string_equal(wc->users[0].name, "alice");
	assert_string_equal(wc->users[1].name, "bob");
	assert_string_equal(wc->users[1].hash, fx->bob);
	assert_int_equal(check_password(wc, "bob", BOB_PW), 1);
	assert_int_equal(wc->limit_interval_ns, 0); /* interval 0: no limit */
	assert_null(wc->buckets);
	/* the headers, kept for every response, in the file's order */
	assert_int_equal(wc->n_headers, 5);
	assert_string_equal(wc->headers[0].name, "Strict-Transport-Security");
	assert_string_equal(wc->headers[0].value, "max-age=31536000");
	assert_string_equal(wc->headers[1].name, "X-Frame-Options");
	assert_string_equal(wc->headers[1].value, "deny");
	assert_string_equal(wc->headers[2].name, "X-Content-Type-Options");
	assert_string_equal(wc->headers[2].value, "nosniff");
	assert_string_equal(wc->headers[3].name, "X-XSS-Protection");
	assert_string_equal(wc->headers[3].value, "1; mode=block");
	assert_string_equal(wc->headers[4].name, "Content-Security-Policy");
	assert_string_equal(wc->headers[4].value, "default-src 'self'");
	tcx_webconfig_unref(wc);

	wc = load_ok(fx, "rl.yml", "http_server_config:\n  http2: false\n  headers:\n");
	assert_no_tls(wc);
	assert_int_equal(wc->n_headers, 0);
	tcx_webconfig_unref(wc);
	wc = load_ok(fx, "h.yml",
	             "http_server_config:\n  headers: {X-Frame-Options: sameorigin}\n");
	assert_int_equal(wc->n_headers, 1);
	assert_string_equal(wc->headers[0].value, "sameorigin");
	tcx_webconfig_unref(wc);
}

static void test_refcount(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_ok(fx, "ref.yml",
	                                   "tls_server_config:\n"
	                                   "  cert_file: server.crt\n"
	                                   "  key_file: server.key\n");

	assert_int_equal(atomic_load(&wc->refcnt), 1);
	assert_ptr_equal(tcx_webconfig_ref(wc), wc);
	assert_int_equal(atomic_load(&wc->refcnt), 2);
	tcx_webconfig_unref(wc);
	assert_int_equal(atomic_load(&wc->refcnt), 1);
	assert_string_equal(wc->key_pem, fx->server_key); /* still alive */
	tcx_webconfig_unref(wc);
	assert_null(tcx_webconfig_ref(NULL));
	tcx_webconfig_unref(NULL);
}

/* ---- bad configurations ------------------------------------------------------------ */

static void test_missing_file(void **state)
{
	struct fx *fx = *state;
	struct errs e = {0};
	char path[256], want[512];

	snprintf(path, sizeof(path), "%s/nonexistent.yml", fx->dir);
	assert_null(tcx_webconfig_load(path, collect, &e));
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory\n", path);
	assert_string_equal(e.text, want);
	free(e.text);
}

static void test_syntax_and_shape(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml", "basic_auth_users: [\n",
	              "{W}:2:1: YAML syntax error: did not find expected node content while "
	              "parsing a flow node\n");
	expect_errors(fx, "bad.yml", "- tls_server_config\n",
	              "{W}:1:1: expected a mapping at top level, got a sequence\n");
	expect_errors(fx, "bad.yml", "basic_auth_users: {}\n---\nrate_limit: {}\n",
	              "{W}:3:1: expected a single YAML document\n");
}

static void test_unknown_keys(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml",
	              "tls_config:\n"
	              "  cert_file: x\n"
	              "basic_auth_user:\n"
	              "  alice: x\n",
	              "{W}:1:1: unknown key 'tls_config' (expected one of: tls_server_config, "
	              "http_server_config, basic_auth_users, rate_limit)\n"
	              "{W}:3:1: unknown key 'basic_auth_user' (expected one of: "
	              "tls_server_config, http_server_config, basic_auth_users, rate_limit)\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  client_cert_file: client.crt\n",
	              "{W}:4:3: unknown key 'client_cert_file' in tls_server_config (expected "
	              "one of: cert_file, key_file, cert, key, client_ca_file, client_ca, "
	              "client_auth_type, min_version, max_version)\n");
	expect_errors(fx, "bad.yml",
	              "http_server_config:\n"
	              "  http3: true\n"
	              "  headers:\n"
	              "    Server: tcexporter\n",
	              "{W}:2:3: unknown key 'http3' in http_server_config (expected one of: "
	              "http2, headers)\n"
	              "{W}:4:5: unknown key 'Server' in headers (expected one of: "
	              "Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, "
	              "X-XSS-Protection, Strict-Transport-Security)\n");
	expect_errors(fx, "bad.yml",
	              "basic_auth_users: {}\n"
	              "basic_auth_users: {}\n",
	              "{W}:2:1: duplicate key 'basic_auth_users' (first at 1:1)\n");
}

static void test_wrong_types(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml", "basic_auth_users: alice\n",
	              "{W}:1:19: 'basic_auth_users' must be a mapping, got a scalar\n");
	expect_errors(fx, "bad.yml", "basic_auth_users:\n  - alice\n",
	              "{W}:2:3: 'basic_auth_users' must be a mapping, got a sequence\n");
	expect_errors(fx, "bad.yml", "tls_server_config: yes\n",
	              "{W}:1:20: 'tls_server_config' must be a mapping, got a scalar\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: [server.crt]\n"
	              "  key_file: {a: b}\n"
	              "  client_auth_type: [RequireAnyClientCert]\n"
	              "  min_version: 1.2\n",
	              "{W}:2:14: 'cert_file' must be a scalar, got a sequence\n"
	              "{W}:3:13: 'key_file' must be a scalar, got a mapping\n"
	              "{W}:4:21: 'client_auth_type' must be a scalar, got a sequence\n"
	              "{W}:5:16: invalid min_version '1.2' (expected TLS10, TLS11, TLS12 or "
	              "TLS13)\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: \"\"\n"
	              "  key_file: server.key\n",
	              "{W}:2:14: 'cert_file' must be a non-empty string\n");
	expect_errors(fx, "bad.yml",
	              "http_server_config:\n"
	              "  http2: maybe\n"
	              "  headers:\n"
	              "    X-Frame-Options: [deny]\n",
	              "{W}:2:10: invalid boolean 'maybe' for 'http2'\n"
	              "{W}:4:22: 'X-Frame-Options' must be a scalar, got a sequence\n");
	/* what exporter-toolkit allows of the headers; http2, which
	 * tcexporter cannot honour */
	expect_errors(fx, "bad.yml",
	              "http_server_config:\n"
	              "  http2: true\n"
	              "  headers:\n"
	              "    X-Frame-Options: DENY\n"
	              "    X-Content-Type-Options: sniff\n"
	              "    X-XSS-Protection: \"1\\r\\nSet-Cookie: a=b\"\n",
	              "{W}:2:10: 'http2: true' is not supported by tcexporter (it serves HTTP/1.1 "
	              "only); remove it or set http2: false\n"
	              "{W}:4:22: invalid value 'DENY' for X-Frame-Options (expected deny or "
	              "sameorigin)\n"
	              "{W}:5:29: invalid value 'sniff' for X-Content-Type-Options (expected "
	              "nosniff)\n"
	              "{W}:6:23: invalid value for X-XSS-Protection: a header value is one line\n");
	expect_errors(fx, "bad.yml", "http_server_config: [http2]\n",
	              "{W}:1:21: 'http_server_config' must be a mapping, got a sequence\n");
	expect_errors(fx, "bad.yml", "rate_limit:\n  interval: soon\n  burst: -1\n",
	              "{W}:2:13: invalid interval 'soon': must be a duration such as 0, 1s or "
	              "100ms\n"
	              "{W}:3:10: invalid burst '-1': must be an integer from 0 to 9999999999\n");
}

static void test_missing_cert_or_key(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n",
	              "{W}:1:1: tls_server_config needs 'key_file' or 'key'\n");
	expect_errors(fx, "bad.yml",
	              "basic_auth_users: {}\n"
	              "tls_server_config:\n"
	              "  min_version: TLS13\n",
	              "{W}:2:1: tls_server_config needs 'cert_file' or 'cert'\n"
	              "{W}:2:1: tls_server_config needs 'key_file' or 'key'\n");
	/* an empty section is not a way to say "no TLS": leave it out */
	expect_errors(fx, "bad.yml", "tls_server_config:\n",
	              "{W}:1:1: tls_server_config needs 'cert_file' or 'cert'\n"
	              "{W}:1:1: tls_server_config needs 'key_file' or 'key'\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  cert: x\n"
	              "  client_ca_file: ca.crt\n"
	              "  client_ca: y\n",
	              "{W}:4:3: at most one of 'cert_file' and 'cert' may be given\n"
	              "{W}:6:3: at most one of 'client_ca_file' and 'client_ca' may be given\n");
}

static void test_bad_files(void **state)
{
	struct fx *fx = *state;
	char want[1024];

	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: missing.crt\n"
	              "  key_file: /nonexistent/server.key\n"
	              "  client_ca_file: .\n",
	              "{D}/missing.crt: cannot read: No such file or directory\n"
	              "/nonexistent/server.key: cannot read: No such file or directory\n"
	              "{D}/.: cannot read: not a regular file\n");

	snprintf(want, sizeof(want),
	         "{D}/garbage.pem: not a PEM certificate: %s\n"
	         "{D}/garbage.pem: not a PEM private key: No private key was found.\n"
	         "{D}/server.key: not a PEM certificate: %s\n",
	         gnutls_strerror(GNUTLS_E_NO_CERTIFICATE_FOUND),
	         gnutls_strerror(GNUTLS_E_NO_CERTIFICATE_FOUND));
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: garbage.pem\n"
	              "  key_file: garbage.pem\n"
	              "  client_ca_file: server.key\n"
	              "  client_auth_type: RequireAndVerifyClientCert\n",
	              want);

	/* a certificate where the key should be, and the other way round */
	snprintf(want, sizeof(want),
	         "{D}/server.key: not a PEM certificate: %s\n"
	         "{D}/server.crt: not a PEM private key: No private key was found.\n",
	         gnutls_strerror(GNUTLS_E_NO_CERTIFICATE_FOUND));
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.key\n"
	              "  key_file: server.crt\n",
	              want);

	snprintf(want, sizeof(want), "{W}:3:13: cert_file and key_file do not match: %s\n",
	         gnutls_strerror(GNUTLS_E_CERTIFICATE_KEY_MISMATCH));
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: wrong.key\n",
	              want);

	/* not readable by us (root reads anything: nothing to test then) */
	if (geteuid() != 0) {
		char path[256];

		write_file(fx, "secret.key", fx->server_key, path, sizeof(path));
		assert_int_equal(chmod(path, 0), 0);
		expect_errors(fx, "bad.yml",
		              "tls_server_config:\n"
		              "  cert_file: server.crt\n"
		              "  key_file: secret.key\n",
		              "{D}/secret.key: cannot read: Permission denied\n");
	}
}

static void test_bad_inline(void **state)
{
	struct fx *fx = *state;
	char *cert = block("cert", fx->client_crt, 4), yaml[4096], want[1024];
	const char *p;
	int lines = 0;

	for (p = fx->client_crt; *p; p++)
		lines += *p == '\n';
	/* client.crt with server.key: the pair does not match */
	snprintf(yaml, sizeof(yaml), "tls_server_config:\n%s  key_file: server.key\n", cert);
	snprintf(want, sizeof(want), "{W}:%d:13: cert and key_file do not match: %s\n", 3 + lines,
	         gnutls_strerror(GNUTLS_E_CERTIFICATE_KEY_MISMATCH));
	expect_errors(fx, "bad.yml", yaml, want);
	free(cert);

	snprintf(want, sizeof(want),
	         "{W}:2:9: 'cert' is not a PEM certificate: %s\n"
	         "{W}:3:8: 'key' is not a PEM private key: No private key was found.\n"
	         "{W}:5:14: 'client_ca' is not a PEM certificate: %s\n",
	         gnutls_strerror(GNUTLS_E_NO_CERTIFICATE_FOUND),
	         gnutls_strerror(GNUTLS_E_ASN1_TAG_ERROR));
	expect_errors(
	        fx, "bad.yml",
	        "tls_server_config:\n"
	        "  cert: garbage\n"
	        "  key: |\n"
	        "    not a key\n"
	        "  client_ca: \"-----BEGIN CERTIFICATE-----\\nAAAA\\n-----END CERTIFICATE-----\"\n",
	        want);
}

static void test_bad_values(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  client_auth_type: requireandverifyclientcert\n",
	              "{W}:4:21: invalid client_auth_type 'requireandverifyclientcert' (expected "
	              "NoClientCert, RequestClientCert, RequireAnyClientCert, "
	              "VerifyClientCertIfGiven or RequireAndVerifyClientCert)\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  client_auth_type: RequireAndVerifyClientCert\n",
	              "{W}:4:21: client_auth_type 'RequireAndVerifyClientCert' needs "
	              "client_ca_file\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  client_auth_type: VerifyClientCertIfGiven\n",
	              "{W}:4:21: client_auth_type 'VerifyClientCertIfGiven' needs "
	              "client_ca_file\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  min_version: TLS14\n"
	              "  max_version: TLS1.2\n",
	              "{W}:4:16: invalid min_version 'TLS14' (expected TLS10, TLS11, TLS12 or "
	              "TLS13)\n"
	              "{W}:5:16: invalid max_version 'TLS1.2' (expected TLS10, TLS11, TLS12 or "
	              "TLS13)\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  min_version: TLS13\n"
	              "  max_version: TLS12\n",
	              "{W}:5:16: max_version TLS12 is lower than min_version TLS13\n");
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  max_version: TLS11\n",
	              "{W}:4:16: max_version TLS11 is lower than min_version TLS12\n");
}

static void test_bad_users(void **state)
{
	struct fx *fx = *state;
	char yaml[1024];

	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n"
	         "  alice: secret\n"
	         "  bob: $1$abcdefgh$0123456789012345678901\n"
	         "  carol: %.59s\n"
	         "  dave: $2x$04$%s\n"
	         "  erin: $2b$03$%s\n"
	         "  \"\": %s\n"
	         "  alice: %s\n"
	         "  frank: [%s]\n"
	         "  ? [grace]\n"
	         "  : %s\n",
	         fx->alice, fx->alice + 7, fx->alice + 7, fx->alice, fx->alice, fx->alice,
	         fx->alice);
	expect_errors(fx, "bad.yml", yaml,
	              "{W}:2:10: user 'alice': password must be a bcrypt hash (htpasswd -nBC 10 "
	              "\"\" | tr -d ':\\n')\n"
	              "{W}:3:8: user 'bob': password must be a bcrypt hash (htpasswd -nBC 10 \"\" "
	              "| tr -d ':\\n')\n"
	              "{W}:4:10: user 'carol': password must be a bcrypt hash (htpasswd -nBC 10 "
	              "\"\" | tr -d ':\\n')\n"
	              "{W}:5:9: user 'dave': password must be a bcrypt hash (htpasswd -nBC 10 "
	              "\"\" | tr -d ':\\n')\n"
	              "{W}:6:9: user 'erin': password must be a bcrypt hash (htpasswd -nBC 10 "
	              "\"\" | tr -d ':\\n')\n"
	              "{W}:7:3: user name must be a non-empty string\n"
	              "{W}:8:3: duplicate user 'alice' (first at 2:3)\n"
	              "{W}:9:10: user 'frank': password must be a bcrypt hash, got a sequence\n"
	              "{W}:10:5: expected a scalar key, got a sequence\n");
}

static void test_unsupported(void **state)
{
	struct fx *fx = *state;

	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: server.key\n"
	              "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n"
	              "  curve_preferences: [X25519]\n"
	              "  prefer_server_cipher_suites: true\n"
	              "  client_allowed_sans: [scraper]\n",
	              "{W}:4:3: 'cipher_suites' is not supported by tcexporter; remove it\n"
	              "{W}:5:3: 'curve_preferences' is not supported by tcexporter; remove it\n"
	              "{W}:6:3: 'prefer_server_cipher_suites' is not supported by tcexporter; "
	              "remove it\n"
	              "{W}:7:3: 'client_allowed_sans' is not supported by tcexporter; remove "
	              "it\n");
}

/* Every problem of a file, in one go. */
static void test_all_problems_reported(void **state)
{
	struct fx *fx = *state;

	char want[1024];

	snprintf(want, sizeof(want),
	         "{W}:5:3: 'cipher_suites' is not supported by tcexporter; remove it\n"
	         "{W}:4:21: client_auth_type 'RequireAndVerifyClientCert' needs client_ca_file\n"
	         "{W}:3:13: cert_file and key_file do not match: %s\n"
	         "{W}:7:10: user 'alice': password must be a bcrypt hash (htpasswd -nBC 10 \"\" | "
	         "tr -d ':\\n')\n"
	         "{W}:8:1: unknown key 'metrics_path' (expected one of: tls_server_config, "
	         "http_server_config, basic_auth_users, rate_limit)\n",
	         gnutls_strerror(GNUTLS_E_CERTIFICATE_KEY_MISMATCH));
	expect_errors(fx, "bad.yml",
	              "tls_server_config:\n"
	              "  cert_file: server.crt\n"
	              "  key_file: wrong.key\n"
	              "  client_auth_type: RequireAndVerifyClientCert\n"
	              "  cipher_suites: []\n"
	              "basic_auth_users:\n"
	              "  alice: plain\n"
	              "metrics_path: /metrics\n",
	              want);
}

/* ---- basic auth ------------------------------------------------------------------- */

static struct tcx_webconfig *load_users(const struct fx *fx)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n  bob: %s\n", fx->alice,
	         fx->bob);
	return load_ok(fx, "users.yml", yaml);
}

static void test_password(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_users(fx);
	char yaml[512], dear[64];
	struct tcx_webconfig *wc7;

	/* Unknown users are checked against a hash of the users' highest cost:
	 * 4 here, 7 with a user whose hash costs 7. */
	assert_memory_equal(wc->dummy, "$2y$04$", 7);
	snprintf(dear, sizeof(dear), "%s", fx->bob);
	memcpy(dear + 4, "07", 2);
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n  carol: %s\n", fx->alice,
	         dear);
	wc7 = load_ok(fx, "dear.yml", yaml);
	assert_memory_equal(wc7->dummy, "$2y$07$", 7);
	assert_int_equal(strlen(wc7->dummy), 60);
	tcx_webconfig_unref(wc7);

	assert_int_equal(wc->n_cache, 0);
	assert_int_equal(check_password(wc, "alice", ALICE_PW), 1);
	assert_int_equal(wc->n_cache, 1);
	/* the second time from the cache: same answer, no new entry */
	assert_int_equal(check_password(wc, "alice", ALICE_PW), 1);
	assert_int_equal(wc->n_cache, 1);
	/* a wrong password after a cached success */
	assert_int_equal(check_password(wc, "alice", "wonderlan"), 0);
	assert_int_equal(check_password(wc, "alice", ALICE_PW "x"), 0);
	assert_int_equal(check_password(wc, "alice", ""), 0);
	assert_int_equal(check_password(wc, "alice", BOB_PW), 0);
	assert_int_equal(wc->n_cache, 1);
	/* the right password of another user, unknown users, near names */
	assert_int_equal(check_password(wc, "bob", ALICE_PW), 0);
	assert_int_equal(check_password(wc, "mallory", ALICE_PW), 0);
	assert_int_equal(check_password(wc, "alic", ALICE_PW), 0);
	assert_int_equal(check_password(wc, "alicealice", ALICE_PW), 0);
	assert_int_equal(check_password(wc, "", ALICE_PW), 0);
	assert_int_equal(check_password(wc, "Alice", ALICE_PW), 0);
	assert_int_equal(wc->n_cache, 1);
	assert_int_equal(check_password(wc, "bob", BOB_PW), 1);
	assert_int_equal(wc->n_cache, 2);
	assert_int_equal(check_password(wc, NULL, BOB_PW), 0);
	assert_int_equal(check_password(wc, "bob", NULL), 0);
	/* the cache key is per load: a new load starts empty and still agrees */
	{
		struct tcx_webconfig *wc2 = load_users(fx);

		assert_int_equal(wc2->n_cache, 0);
		assert_memory_not_equal(wc->cache_key, wc2->cache_key, sizeof(wc->cache_key));
		assert_int_equal(check_password(wc2, "alice", ALICE_PW), 1);
		assert_int_equal(check_password(wc2, "alice", BOB_PW), 0);
		tcx_webconfig_unref(wc2);
	}
	tcx_webconfig_unref(wc);
}

/* No users configured: nobody gets in, whatever they send. */
/* The other bcrypt variants htpasswd and other tools write. */
static void test_password_variants(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char y[128], a[128], yaml[512];

	bcrypt_hash_with("$2y$", "pw-y", y, sizeof(y));
	bcrypt_hash_with("$2a$", "pw-a", a, sizeof(a));
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  carol: %s\n  dave: %s\n", y, a);
	wc = load_ok(fx, "variants.yml", yaml);
	assert_string_equal(wc->users[0].hash, y);
	assert_int_equal(check_password(wc, "carol", "pw-y"), 1);
	assert_int_equal(check_password(wc, "carol", "pw-a"), 0);
	assert_int_equal(check_password(wc, "dave", "pw-a"), 1);
	assert_int_equal(check_password(wc, "dave", "pw-y"), 0);
	tcx_webconfig_unref(wc);
}

static void test_password_no_users(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_ok(fx, "nousers.yml", "basic_auth_users: {}\n");

	assert_int_equal(check_password(wc, "alice", ALICE_PW), 0);
	assert_int_equal(wc->n_cache, 0);
	tcx_webconfig_unref(wc);
}

/* The cache holds at most 64 pairs; the oldest goes first. */
static void test_password_cache_bound(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	enum { N = 66 };
	size_t cap = 64 + N * 100, len = 0;
	char *yaml = malloc(cap), pw[16];
	int i;

	assert_non_null(yaml);
	len += (size_t)snprintf(yaml + len, cap - len, "basic_auth_users:\n");
	for (i = 0; i < N; i++) {
		char hash[128];

		snprintf(pw, sizeof(pw), "pw%d", i);
		bcrypt_hash(pw, hash, sizeof(hash));
		len += (size_t)snprintf(yaml + len, cap - len, "  u%d: %s\n", i, hash);
	}
	wc = load_ok(fx, "many.yml", yaml);
	free(yaml);
	assert_int_equal(wc->n_users, N);
	for (i = 0; i < N; i++) {
		snprintf(pw, sizeof(pw), "pw%d", i);
		assert_int_equal(check_password(wc, wc->users[i].name, pw), 1);
		assert_int_equal(wc->n_cache, i < 64 ? (size_t)i + 1 : 64);
	}
	/* u0 was evicted: verified again (and cached again) all the same */
	assert_int_equal(check_password(wc, "u0", "pw0"), 1);
	assert_int_equal(check_password(wc, "u0", "pw1"), 0);
	assert_int_equal(wc->n_cache, 64);
	tcx_webconfig_unref(wc);
}

struct worker {
	struct tcx_webconfig *wc;
	int id;
	int wrong; /* answers that were not the expected ones */
};

static void *password_worker(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 6; i++) {
		w->wrong += check_password(w->wc, "alice", ALICE_PW) != 1;
		w->wrong += check_password(w->wc, "alice", BOB_PW) != 0;
		w->wrong += check_password(w->wc, "bob", BOB_PW) != 1;
		w->wrong += check_password(w->wc, (w->id & 1) ? "eve" : "bob",
		                           (w->id & 1) ? BOB_PW : ALICE_PW) != 0;
	}
	return NULL;
}

static void test_password_threads(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_users(fx);
	struct worker w[4];
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){.wc = wc, .id = i};
		assert_int_equal(pthread_create(&t[i], NULL, password_worker, &w[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(w[i].wrong, 0);
	}
	assert_int_equal(wc->n_cache, 2); /* alice and bob, once each */
	tcx_webconfig_unref(wc);
}

/* ---- client certificates ------------------------------------------------------------ */

struct client {
	int fd;
	const char *cert, *key; /* NULL: no client certificate */
	int handshake;          /* gnutls_handshake's result */
};

static gnutls_datum_t datum(const char *s)
{
	gnutls_datum_t d = {(unsigned char *)(uintptr_t)s, (unsigned)strlen(s)};

	return d;
}

/* The client side, in a thread of its own: no cmocka asserts here. */
static void *client_main(void *arg)
{
	struct client *cl = arg;
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_session_t s = NULL;
	char b;
	int r;

	cl->handshake = GNUTLS_E_INTERNAL_ERROR;
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		goto out;
	if (cl->cert) {
		gnutls_datum_t cd = datum(cl->cert), kd = datum(cl->key);

		if (gnutls_certificate_set_x509_key_mem(cred, &cd, &kd, GNUTLS_X509_FMT_PEM) < 0)
			goto out;
	}
	if (gnutls_init(&s, GNUTLS_CLIENT) < 0 || gnutls_set_default_priority(s) < 0 ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred) < 0)
		goto out;
	gnutls_transport_set_int(s, cl->fd);
	gnutls_handshake_set_timeout(s, 10000);
	do
		r = gnutls_handshake(s);
	while (r < 0 && !gnutls_error_is_fatal(r));
	cl->handshake = r;
	if (r == 0) /* wait for the server's byte: it has looked at the session */
		do
			r = (int)gnutls_record_recv(s, &b, 1);
		while (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
out:
	if (s)
		gnutls_deinit(s);
	if (cred)
		gnutls_certificate_free_credentials(cred);
	return NULL;
}

/* A handshake between a server set up from wc, as the HTTP layer would, and a
 * client presenting cert/key (or nothing); the answer of
 * tcx_webconfig_check_client_cert on the server's session. */
static int handshake_check(const struct tcx_webconfig *wc, const char *cert, const char *key,
                           char *err, size_t errlen)
{
	struct client cl = {.cert = cert, .key = key};
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cd = datum(wc->cert_pem), kd = datum(wc->key_pem);
	gnutls_session_t s;
	pthread_t t;
	int sv[2], r, ret;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cl.fd = sv[1];
	assert_int_equal(gnutls_certificate_allocate_credentials(&cred), 0);
	assert_int_equal(gnutls_certificate_set_x509_key_mem(cred, &cd, &kd, GNUTLS_X509_FMT_PEM),
	                 0);
	if (wc->client_ca_pem) {
		gnutls_datum_t ca = datum(wc->client_ca_pem);

		assert_int_equal(
		        gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM), 1);
	}
	assert_int_equal(gnutls_init(&s, GNUTLS_SERVER), 0);
	assert_int_equal(gnutls_priority_set_direct(s, wc->tls_priorities, NULL), 0);
	assert_int_equal(gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred), 0);
	gnutls_certificate_server_set_request(s, wc->client_auth == TCX_CLIENT_AUTH_NONE
	                                                 ? GNUTLS_CERT_IGNORE
	                                                 : GNUTLS_CERT_REQUEST);
	/* No list of acceptable CAs in the request: a GnuTLS client would
	 * otherwise keep a certificate of another CA to itself (curl with
	 * OpenSSL sends it anyway). */
	gnutls_certificate_send_x509_rdn_sequence(s, 1);
	gnutls_transport_set_int(s, sv[0]);
	gnutls_handshake_set_timeout(s, 10000);
	assert_int_equal(pthread_create(&t, NULL, client_main, &cl), 0);
	do
		r = gnutls_handshake(s);
	while (r < 0 && !gnutls_error_is_fatal(r));
	err[0] = '\0';
	ret = r == 0 ? tcx_webconfig_check_client_cert(wc, s, err, errlen) : -2;
	if (r == 0)
		assert_int_equal(gnutls_record_send(s, "x", 1), 1);
	else
		shutdown(sv[0], SHUT_RDWR);
	assert_int_equal(pthread_join(t, NULL), 0);
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	close(sv[0]);
	close(sv[1]);
	if (r != 0)
		fprintf(stderr, "server handshake: %s\n", gnutls_strerror(r));
	assert_int_equal(r, 0);
	assert_int_equal(cl.handshake, 0);
	return ret;
}

static struct tcx_webconfig *load_auth(const struct fx *fx, const char *type, int with_ca)
{
	char yaml[512];

	snprintf(yaml, sizeof(yaml),
	         "tls_server_config:\n"
	         "  cert_file: server.crt\n"
	         "  key_file: server.key\n"
	         "%s"
	         "  client_auth_type: %s\n",
	         with_ca ? "  client_ca_file: ca.crt\n" : "", type);
	return load_ok(fx, "mtls.yml", yaml);
}

#define NOT_VERIFIED "client certificate not verified: "

static void test_client_cert_require_verify(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_auth(fx, "RequireAndVerifyClientCert", 1);
	char err[256];

	assert_int_equal(handshake_check(wc, fx->client_crt, fx->client_key, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(handshake_check(wc, NULL, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "client certificate required");
	assert_int_equal(
	        handshake_check(wc, fx->other_client_crt, fx->other_client_key, err, sizeof(err)),
	        -1);
	assert_int_equal(strncmp(err, NOT_VERIFIED, strlen(NOT_VERIFIED)), 0);
	assert_non_null(strstr(err, "issuer is unknown"));
	/* signed by the right CA, but for servers only (extendedKeyUsage) */
	assert_int_equal(handshake_check(wc, fx->server_crt, fx->server_key, err, sizeof(err)), -1);
	assert_int_equal(strncmp(err, NOT_VERIFIED, strlen(NOT_VERIFIED)), 0);
	assert_non_null(strstr(err, "purpose"));
	/* no session at all: refused */
	assert_int_equal(tcx_webconfig_check_client_cert(wc, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "client certificate required");
	tcx_webconfig_unref(wc);
}

static void test_client_cert_verify_if_given(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_auth(fx, "VerifyClientCertIfGiven", 1);
	char err[256];

	assert_int_equal(handshake_check(wc, fx->client_crt, fx->client_key, err, sizeof(err)), 0);
	assert_int_equal(handshake_check(wc, NULL, NULL, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(
	        handshake_check(wc, fx->other_client_crt, fx->other_client_key, err, sizeof(err)),
	        -1);
	assert_int_equal(strncmp(err, NOT_VERIFIED, strlen(NOT_VERIFIED)), 0);
	assert_non_null(strstr(err, "issuer is unknown"));
	tcx_webconfig_unref(wc);
}

static void test_client_cert_require_any(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_auth(fx, "RequireAnyClientCert", 0);
	char err[256];

	assert_null(wc->client_ca_pem);
	assert_int_equal(handshake_check(wc, fx->client_crt, fx->client_key, err, sizeof(err)), 0);
	assert_int_equal(
	        handshake_check(wc, fx->other_client_crt, fx->other_client_key, err, sizeof(err)),
	        0);
	assert_string_equal(err, "");
	assert_int_equal(handshake_check(wc, NULL, NULL, err, sizeof(err)), -1);
	assert_string_equal(err, "client certificate required");
	tcx_webconfig_unref(wc);
}

static void test_client_cert_none(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_auth(fx, "NoClientCert", 0);
	char err[256];

	assert_int_equal(handshake_check(wc, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(
	        handshake_check(wc, fx->other_client_crt, fx->other_client_key, err, sizeof(err)),
	        0);
	assert_string_equal(err, "");
	tcx_webconfig_unref(wc);

	/* RequestClientCert asks, and accepts anything including nothing */
	wc = load_auth(fx, "RequestClientCert", 1);
	assert_int_equal(handshake_check(wc, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(
	        handshake_check(wc, fx->other_client_crt, fx->other_client_key, err, sizeof(err)),
	        0);
	tcx_webconfig_unref(wc);
}

/* A bcrypt cost above TCX_BCRYPT_MAX_COST is refused at load: every request
 * with credentials would pay for it (cost 31: days). */
static void test_bcrypt_cost_limit(void **state)
{
	struct fx *fx = *state;
	char yaml[512], c14[64], c15[64], c31[64];
	struct tcx_webconfig *wc;

	snprintf(c14, sizeof(c14), "%.4s14%s", fx->alice, fx->alice + 6);
	snprintf(c15, sizeof(c15), "%.4s15%s", fx->alice, fx->alice + 6);
	snprintf(c31, sizeof(c31), "%.4s31%s", fx->alice, fx->alice + 6);
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n", c14);
	wc = load_ok(fx, "c14.yml", yaml);
	assert_memory_equal(wc->dummy, "$2y$14$", 7);
	tcx_webconfig_unref(wc);
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n  bob: %s\n", c15, c31);
	expect_errors(fx, "c31.yml", yaml,
	              "{W}:2:10: user 'alice': bcrypt cost 15 is above the limit of 14 (every "
	              "request would pay for it: htpasswd -nBC 10 \"\" | tr -d ':\\n')\n"
	              "{W}:3:8: user 'bob': bcrypt cost 31 is above the limit of 14 (every "
	              "request would pay for it: htpasswd -nBC 10 \"\" | tr -d ':\\n')\n");
}

/* ---- rate_limit -------------------------------------------------------------------- */

/* The limit exporter-toolkit's keys set: a token every interval (a Go
 * duration), burst of them at most; the default without rate_limit; off
 * with interval 0, or none. */
static void test_rate_limit_config(void **state)
{
	static const struct {
		const char *interval;
		uint64_t ns;
	} durations[] = {
	        {"1s", 1000000000ULL},
	        {"1m30s", 90000000000ULL},
	        {"250ms", 250000000ULL},
	        {"1.5h", 5400000000000ULL},
	        {"100us", 100000ULL},
	        {"100\u00b5s", 100000ULL}, /* micro sign */
	        {"100\u03bcs", 100000ULL}, /* Greek mu */
	        {"7ns", 7},
	        {".5s", 500000000ULL},
	        {"1.s", 1000000000ULL},
	        {"0.29s", 290000000ULL},
	        {"1h2m3.5s", 3723500000000ULL},
	        {"2562047h", 9223369200000000000ULL}, /* Go's longest whole hours */
	        {"9223372036854775807ns", 9223372036854775807ULL},
	};
	static const char *const off[] = {
	        "rate_limit:\n  interval: 0\n",
	        "rate_limit:\n  interval: 0s\n  burst: 0\n",
	        "rate_limit:\n  interval: 0.0h\n",
	        "rate_limit:\n  burst: 3\n",
	        "rate_limit: {}\n",
	        "rate_limit:\n",
	};
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	char yaml[512];
	size_t i;

	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n", fx->alice);
	wc = load_ok(fx, "rl.yml", yaml);
	assert_int_equal(wc->limit_interval_ns, TCX_AUTH_LIMIT_INTERVAL_NS);
	assert_int_equal(wc->limit_burst, TCX_AUTH_LIMIT_BURST);
	assert_non_null(wc->buckets);
	tcx_webconfig_unref(wc);
	for (i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		snprintf(yaml, sizeof(yaml),
		         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: \"%s\"\n"
		         "  burst: 7\n",
		         fx->alice, durations[i].interval);
		wc = load_ok(fx, "rl.yml", yaml);
		assert_int_equal(wc->limit_interval_ns, durations[i].ns);
		assert_int_equal(wc->limit_burst, 7);
		tcx_webconfig_unref(wc);
	}
	/* off: interval 0 in any spelling, or none; also without users */
	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n%s", fx->alice,
		         off[i]);
		wc = load_ok(fx, "rl.yml", yaml);
		assert_int_equal(wc->limit_interval_ns, 0);
		assert_null(wc->buckets);
		tcx_webconfig_unref(wc);
		wc = load_ok(fx, "rl.yml", off[i]);
		assert_int_equal(wc->limit_interval_ns, 0);
		tcx_webconfig_unref(wc);
	}
}

static void test_rate_limit_errors(void **state)
{
	static const char *const bad[] = {
	        "1",   "-1s", "+1s",  "1d", "s",     ".s", "1.2.3s",
	        "1 s", "1s ", "1sec", "1S", "5m-3s", "",
	};
	struct fx *fx = *state;
	char yaml[512], want[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(yaml, sizeof(yaml),
		         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: \"%s\"\n"
		         "  burst: 1\n",
		         fx->alice, bad[i]);
		snprintf(want, sizeof(want),
		         "{W}:4:13: invalid interval '%s': must be a duration such as 0, 1s or "
		         "100ms\n",
		         bad[i]);
		expect_errors(fx, "rl.yml", yaml, want);
	}
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 2562048h\n"
	         "  burst: 1\n",
	         fx->alice);
	expect_errors(fx, "rl.yml", yaml,
	              "{W}:4:13: invalid interval '2562048h': longer than the longest Go "
	              "duration (2562047h)\n");
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 9223372036854775808ns\n",
	         fx->alice);
	expect_errors(fx, "rl.yml", yaml,
	              "{W}:4:13: invalid interval '9223372036854775808ns': longer than the "
	              "longest Go duration (2562047h)\n");
	/* a bucket of 0 would refuse every password: exporter-toolkit's default */
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 1s\n  burst: 0\n",
	         fx->alice);
	expect_errors(fx, "rl.yml", yaml,
	              "{W}:5:10: invalid burst '0': must be 1 or more with an interval (with 0, "
	              "no password could be checked)\n");
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 1s\n", fx->alice);
	expect_errors(fx, "rl.yml", yaml,
	              "{W}:3:1: 'rate_limit' with an interval needs a burst of 1 or more "
	              "(exporter-toolkit's default of 0 would refuse every password)\n");
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: [1s]\n  burst: many\n"
	         "  rate: 3\n",
	         fx->alice);
	expect_errors(fx, "rl.yml", yaml,
	              "{W}:4:13: 'interval' must be a scalar, got a sequence\n"
	              "{W}:5:10: invalid burst 'many': must be an integer from 0 to 9999999999\n"
	              "{W}:6:3: unknown key 'rate' in rate_limit (expected one of: interval, "
	              "burst)\n");
	/* tcexporter's limit is of failed password checks: with no users, it
	 * would limit nothing (exporter-toolkit's limits every request) */
	expect_errors(fx, "rl.yml", "rate_limit:\n  interval: 1s\n  burst: 5\n",
	              "{W}:1:1: 'rate_limit' limits failed password checks, and there is no "
	              "basic_auth_users: remove it or set interval: 0\n");
	expect_errors(fx, "rl.yml",
	              "rate_limit:\n  interval: 1s\n  burst: 5\nbasic_auth_users: {}\n",
	              "{W}:1:1: 'rate_limit' limits failed password checks, and there is no "
	              "basic_auth_users: remove it or set interval: 0\n");
}

/* Failed checks are counted per client: a burst, then one an interval; a
 * check that succeeds costs nothing; a verified (cached) pair is never
 * refused. IPv6 addresses count by /64, IPv4-mapped ones as IPv4. */
static void test_rate_limit_clients(void **state)
{
	struct fx *fx = *state;
	struct tcx_client a = v4(192, 0, 2, 1), b = v4(192, 0, 2, 2), c = v4(192, 0, 2, 3);
	struct tcx_client d1 = v6("2001:db8::1"), d2 = v6("2001:db8::ffff:2"),
	                  e = v6("2001:db8:0:1::1"), m = v6("::ffff:192.0.2.7"),
	                  m4 = v4(192, 0, 2, 7);
	struct tcx_webconfig *wc;
	char yaml[512];
	uint64_t retry_s;
	int i;

	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\n  bob: %s\nrate_limit:\n  interval: 1h\n"
	         "  burst: 3\n",
	         fx->alice, fx->bob);
	wc = load_ok(fx, "rl.yml", yaml);
	for (i = 0; i < 3; i++)
		assert_int_equal(check_from(wc, &a, "alice", "wrong"), 0);
	assert_int_equal(tcx_webconfig_auth(wc, &a, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	assert_true(retry_s >= 3599 && retry_s <= 3600);
	/* unknown users and right passwords not verified yet are refused too */
	assert_int_equal(check_from(wc, &a, "mallory", "x"), -1);
	assert_int_equal(check_from(wc, &a, "alice", ALICE_PW), -1);
	/* other addresses are not; once verified, a pair passes from any */
	assert_int_equal(check_from(wc, &b, "alice", ALICE_PW), 1);
	assert_int_equal(check_from(wc, &a, "alice", ALICE_PW), 1);
	assert_int_equal(check_from(wc, &a, "alice", "wrong"), -1);
	/* successes give their token back: c's 3 failures still get checked */
	assert_int_equal(check_from(wc, &c, "bob", BOB_PW), 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(check_from(wc, &c, "bob", "wrong"), 0);
	assert_int_equal(check_from(wc, &c, "bob", "wrong"), -1);
	/* one /64 */
	for (i = 0; i < 3; i++)
		assert_int_equal(check_from(wc, &d1, "bob", "wrong"), 0);
	assert_int_equal(check_from(wc, &d2, "bob", "wrong"), -1);
	assert_int_equal(check_from(wc, &e, "bob", "wrong"), 0);
	/* an IPv4-mapped address is its IPv4 address */
	for (i = 0; i < 3; i++)
		assert_int_equal(check_from(wc, &m, "bob", "wrong"), 0);
	assert_int_equal(check_from(wc, &m4, "bob", "wrong"), -1);
	tcx_webconfig_unref(wc);

	/* refilled: a token every 50 ms */
	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 50ms\n  burst: 1\n",
	         fx->alice);
	wc = load_ok(fx, "rl.yml", yaml);
	assert_int_equal(tcx_webconfig_auth(wc, &a, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	assert_int_equal(tcx_webconfig_auth(wc, &a, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	assert_int_equal(retry_s, 1); /* whole seconds, rounded up */
	usleep(120000);
	assert_int_equal(tcx_webconfig_auth(wc, &a, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	tcx_webconfig_unref(wc);

	/* off: no client is ever refused */
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 0\n",
	         fx->alice);
	wc = load_ok(fx, "rl.yml", yaml);
	for (i = 0; i < 100; i++)
		assert_int_equal(tcx_webconfig_auth(wc, &a, "alice", "wrong", &retry_s),
		                 TCX_AUTH_CHECK);
	tcx_webconfig_unref(wc);
}

/* Past TCX_AUTH_LIMIT_CLIENTS addresses, a new one takes the place of the
 * fullest bucket (of the same ones, the oldest). */
static void test_rate_limit_eviction(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc;
	struct tcx_client k;
	char yaml[512];
	uint64_t retry_s;
	unsigned i;

	snprintf(yaml, sizeof(yaml),
	         "basic_auth_users:\n  alice: %s\nrate_limit:\n  interval: 1h\n  burst: 1\n",
	         fx->alice);
	wc = load_ok(fx, "rl.yml", yaml);
	for (i = 0; i <= TCX_AUTH_LIMIT_CLIENTS; i++) {
		k = v4(198, 18, i >> 8, i & 255);
		assert_int_equal(tcx_webconfig_auth(wc, &k, "alice", "wrong", &retry_s),
		                 TCX_AUTH_CHECK);
	}
	assert_int_equal(wc->n_buckets, TCX_AUTH_LIMIT_CLIENTS);
	k = v4(198, 18, 0, 1);
	assert_int_equal(tcx_webconfig_auth(wc, &k, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	k = v4(198, 18, 0, 0); /* the first one's bucket went to the last one */
	assert_int_equal(tcx_webconfig_auth(wc, &k, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	tcx_webconfig_unref(wc);
}

/* ---- ending checks ----------------------------------------------------------------- */

struct ended {
	int called;
};

static void on_ended_check(void *arg, int ok)
{
	(void)ok;
	((struct ended *)arg)->called = 1;
}

/* tcx_webconfig_check_end() never waits for a bcrypt, as a shutdown must
 * not: ending a check in progress returns at once, its done is never
 * called, and its result is still cached; a check ended before it began
 * never runs (its right password is not cached). The hash costs 12 (a
 * quarter of a second, much more under valgrind). */
static void test_check_end(void **state)
{
	struct fx *fx = *state;
	struct tcx_client k = v4(203, 0, 113, 1);
	struct ended a = {0}, b = {0};
	struct tcx_auth_check *ca, *cb;
	struct tcx_webconfig *wc;
	char yaml[512], alice12[64], bob12[64];
	double t0, full, end_a;
	int a_at_end, b_at_end;
	uint64_t retry_s;
	struct crypt_data *data = calloc(1, sizeof(*data));
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];

	assert_non_null(data);
	assert_non_null(crypt_gensalt_rn("$2b$", 12, NULL, 0, salt, sizeof(salt)));
	snprintf(alice12, sizeof(alice12), "%s", crypt_r(ALICE_PW, salt, data));
	snprintf(bob12, sizeof(bob12), "%s", crypt_r(BOB_PW, salt, data));
	free(data);
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n  bob: %s\n", alice12, bob12);
	wc = load_ok(fx, "c12.yml", yaml);
	/* the time of one check, to compare with */
	t0 = tcx_clock_s(CLOCK_MONOTONIC);
	assert_int_equal(check_from(wc, &k, "mallory", "guess"), 0);
	full = tcx_clock_s(CLOCK_MONOTONIC) - t0;

	ca = tcx_webconfig_check_start(wc, &k, "alice", ALICE_PW, BOUNDS, on_ended_check, &a);
	cb = tcx_webconfig_check_start(wc, &k, "bob", BOB_PW, BOUNDS, on_ended_check, &b);
	assert_non_null(ca);
	assert_non_null(cb);
	tcx_webconfig_check_end(cb); /* queued behind alice's */
	usleep((useconds_t)(full * 1e6 / 2));
	t0 = tcx_clock_s(CLOCK_MONOTONIC);
	tcx_webconfig_check_end(ca); /* in progress */
	end_a = tcx_clock_s(CLOCK_MONOTONIC) - t0;
	a_at_end = a.called;
	b_at_end = b.called;
	/* one more, after them: once it is done, theirs are over */
	assert_int_equal(check_from(wc, &k, "mallory", "guess"), 0);
	fprintf(stderr, "a check: %.3f s; ending one in progress: %.6f s\n", full, end_a);
	/* never called once ended */
	assert_int_equal(a.called, a_at_end);
	assert_int_equal(b.called, b_at_end);
	assert_int_equal(tcx_webconfig_auth(wc, &k, "alice", ALICE_PW, &retry_s), TCX_AUTH_OK);
	assert_int_equal(tcx_webconfig_auth(wc, &k, "bob", BOB_PW, &retry_s), TCX_AUTH_CHECK);
	tcx_webconfig_unref(wc);
	/* Under valgrind (tests/integration/valgrind.sh), threads take turns
	 * at valgrind's pace: the times say nothing there, the results do. */
	if (!getenv("TCX_VALGRIND")) {
		assert_true(end_a < full / 4);
		/* and, at these times, alice's was in progress, bob's queued */
		assert_int_equal(a_at_end, 0);
		assert_int_equal(b_at_end, 0);
	}
}

/* ---- the queues of checks ------------------------------------------------------- */

/* The order in which checks end, by the ids given to them. */
struct order {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int n, ids[64];
};

struct tagged {
	struct order *o;
	int id;
};

static void on_ordered(void *arg, int ok) /* in the checker's thread */
{
	struct tagged *t = arg;

	(void)ok;
	pthread_mutex_lock(&t->o->lock);
	t->o->ids[t->o->n++] = t->id;
	pthread_cond_signal(&t->o->cond);
	pthread_mutex_unlock(&t->o->lock);
}

static void wait_ordered(struct order *o, int n)
{
	pthread_mutex_lock(&o->lock);
	while (o->n < n)
		pthread_cond_wait(&o->cond, &o->lock);
	pthread_mutex_unlock(&o->lock);
}

/* A web config with alice (cost 4) and slow (cost 12: a quarter of a
 * second, a check that keeps the checker busy while others are queued). */
static struct tcx_webconfig *load_slow(struct fx *fx, const char *rate_limit)
{
	struct crypt_data *data = calloc(1, sizeof(*data));
	char salt[CRYPT_GENSALT_OUTPUT_SIZE], slow[64], yaml[512];

	assert_non_null(data);
	assert_non_null(crypt_gensalt_rn("$2b$", 12, NULL, 0, salt, sizeof(salt)));
	snprintf(slow, sizeof(slow), "%s", crypt_r("slow", salt, data));
	free(data);
	snprintf(yaml, sizeof(yaml), "basic_auth_users:\n  alice: %s\n  slow: %s\n%s", fx->alice,
	         slow, rate_limit);
	return load_ok(fx, "slow.yml", yaml);
}

/* A check queued for tagged t (asserted), to be ended by the caller. */
static struct tcx_auth_check *started(struct tcx_webconfig *wc, const struct tcx_client *client,
                                      const char *user, const char *password, struct tagged *t)
{
	struct tcx_auth_check *j =
	        tcx_webconfig_check_start(wc, client, user, password, BOUNDS, on_ordered, t);

	assert_non_null(j);
	return j;
}

/* The clients' queues take turns: behind a check in progress, a client's
 * 4 checks, then one of b, then one of c: b's and c's first checks wait
 * for one of a's, not for the four. Past TCX_AUTH_QUEUE_CLIENT checks of a
 * client, and TCX_AUTH_QUEUE_MAX in all, a check is refused (EBUSY). */
static void test_check_fairness(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_slow(fx, "rate_limit:\n  interval: 0\n");
	struct order o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}};
	struct tagged t[64];
	struct tcx_auth_check *h[64];
	int n = 0;
	struct tcx_client z = v4(198, 51, 100, 9), a = v4(198, 51, 100, 1), b = v4(198, 51, 100, 2),
	                  c = v4(198, 51, 100, 3), k;
	static const int want[] = {0, 1, 5, 6, 2, 3, 4};
	struct tcx_auth_check *extra;
	int i, ended;

	for (i = 0; i < 64; i++)
		t[i] = (struct tagged){&o, i};
	h[n++] = started(wc, &z, "slow", "x", &t[0]);
	for (i = 1; i <= TCX_AUTH_QUEUE_CLIENT; i++)
		h[n++] = started(wc, &a, "alice", "wrong", &t[i]);
	errno = 0;
	assert_null(
	        tcx_webconfig_check_start(wc, &a, "alice", "wrong", BOUNDS, on_ordered, &t[63]));
	assert_int_equal(errno, EBUSY);
	h[n++] = started(wc, &b, "alice", "wrong", &t[5]);
	h[n++] = started(wc, &c, "alice", "wrong", &t[6]);
	wait_ordered(&o, 7);
	for (i = 0; i < 7; i++)
		assert_int_equal(o.ids[i], want[i]);

	/* all the queues together, once the check in progress is off its */
	o.n = 0;
	h[n++] = started(wc, &z, "slow", "x", &t[0]);
	usleep(50000);
	for (i = 1; i <= TCX_AUTH_QUEUE_MAX; i++) {
		k = v4(198, 51, 101, (unsigned)i);
		h[n++] = started(wc, &k, "alice", "wrong", &t[i]);
	}
	k = v4(198, 51, 102, 1);
	errno = 0;
	extra = tcx_webconfig_check_start(wc, &k, "alice", "wrong", BOUNDS, on_ordered, &t[63]);
	pthread_mutex_lock(&o.lock);
	ended = o.n;
	pthread_mutex_unlock(&o.lock);
	if (extra)
		h[n++] = extra;
	/* Refused, unless the slow check ended meanwhile and left room: under
	 * valgrind, on a loaded machine, the 33 starts took longer than it. */
	if (!ended) {
		assert_null(extra);
		assert_int_equal(errno, EBUSY);
	}
	wait_ordered(&o, TCX_AUTH_QUEUE_MAX + 1);
	for (i = 0; i <= TCX_AUTH_QUEUE_MAX; i++)
		assert_int_equal(o.ids[i], i);
	while (n > 0)
		tcx_webconfig_check_end(h[--n]);
	tcx_webconfig_unref(wc);
}

/* A token spent on a check that never runs is given back: one ended before
 * it began, one refused because its queue is full, one the server gave up
 * on (tcx_webconfig_auth_refund()). */
static void test_check_refund(void **state)
{
	struct fx *fx = *state;
	struct tcx_webconfig *wc = load_slow(fx, "rate_limit:\n  interval: 1h\n  burst: 6\n");
	struct order o = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}};
	struct tagged t = {&o, 0};
	struct tcx_client z = v4(198, 51, 100, 9), r = v4(198, 51, 100, 7);
	struct tcx_auth_check *blocker, *q[TCX_AUTH_QUEUE_CLIENT];
	uint64_t retry_s;
	int i;

	blocker = tcx_webconfig_check_start(wc, &z, "slow", "x", BOUNDS, on_ordered, &t);
	assert_non_null(blocker);
	/* ended while queued */
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	q[0] = tcx_webconfig_check_start(wc, &r, "alice", "wrong", BOUNDS, on_ordered, &t);
	assert_non_null(q[0]);
	tcx_webconfig_check_end(q[0]);
	for (i = 0; i < 6; i++)
		assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s),
		                 TCX_AUTH_CHECK);
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	/* 4 queued with 4 of those tokens; 2 more refused (queue full) */
	for (i = 0; i < TCX_AUTH_QUEUE_CLIENT; i++) {
		q[i] = tcx_webconfig_check_start(wc, &r, "alice", "wrong", BOUNDS, on_ordered, &t);
		assert_non_null(q[i]);
	}
	for (i = 0; i < 2; i++)
		assert_null(tcx_webconfig_check_start(wc, &r, "alice", "wrong", BOUNDS, on_ordered,
		                                      &t));
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_CHECK);
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	/* the server gave up on those two */
	tcx_webconfig_auth_refund(wc, &r);
	tcx_webconfig_auth_refund(wc, &r);
	for (i = 0; i < TCX_AUTH_QUEUE_CLIENT; i++)
		tcx_webconfig_check_end(q[i]);
	for (i = 0; i < 6; i++)
		assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s),
		                 TCX_AUTH_CHECK);
	assert_int_equal(tcx_webconfig_auth(wc, &r, "alice", "wrong", &retry_s), TCX_AUTH_LIMITED);
	pthread_mutex_lock(&o.lock); /* none of r's ran: the blocker is still in progress */
	assert_int_equal(o.n, 0);
	pthread_mutex_unlock(&o.lock);
	tcx_webconfig_check_end(blocker);
	tcx_webconfig_unref(wc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_empty_file),
	        cmocka_unit_test(test_basic_auth_only),
	        cmocka_unit_test(test_tls_files_relative),
	        cmocka_unit_test(test_tls_inline),
	        cmocka_unit_test(test_mtls),
	        cmocka_unit_test(test_tls_versions),
	        cmocka_unit_test(test_everything),
	        cmocka_unit_test(test_refcount),
	        cmocka_unit_test(test_missing_file),
	        cmocka_unit_test(test_syntax_and_shape),
	        cmocka_unit_test(test_unknown_keys),
	        cmocka_unit_test(test_wrong_types),
	        cmocka_unit_test(test_missing_cert_or_key),
	        cmocka_unit_test(test_bad_files),
	        cmocka_unit_test(test_bad_inline),
	        cmocka_unit_test(test_bad_values),
	        cmocka_unit_test(test_bad_users),
	        cmocka_unit_test(test_unsupported),
	        cmocka_unit_test(test_all_problems_reported),
	        cmocka_unit_test(test_password),
	        cmocka_unit_test(test_password_variants),
	        cmocka_unit_test(test_password_no_users),
	        cmocka_unit_test(test_password_cache_bound),
	        cmocka_unit_test(test_password_threads),
	        cmocka_unit_test(test_bcrypt_cost_limit),
	        cmocka_unit_test(test_rate_limit_config),
	        cmocka_unit_test(test_rate_limit_errors),
	        cmocka_unit_test(test_rate_limit_clients),
	        cmocka_unit_test(test_rate_limit_eviction),
	        cmocka_unit_test(test_check_end),
	        cmocka_unit_test(test_check_fairness),
	        cmocka_unit_test(test_check_refund),
	        cmocka_unit_test(test_client_cert_require_verify),
	        cmocka_unit_test(test_client_cert_verify_if_given),
	        cmocka_unit_test(test_client_cert_require_any),
	        cmocka_unit_test(test_client_cert_none),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
