/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The web configuration file, in the format of Prometheus's exporter-toolkit
 * (so that an operator can reuse the file they have for node_exporter):
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     client_ca_file: ca.crt
 *     client_auth_type: RequireAndVerifyClientCert
 *     min_version: TLS12
 *   http_server_config:
 *     headers:
 *       X-Frame-Options: deny      # on every response
 *   basic_auth_users:
 *     alice: $2y$10$...            # bcrypt
 *
 * A key that tcexporter would not honour is an error, never ignored.
 * No I/O besides reading the files it names, no HTTP server calls: the HTTP
 * layer asks it questions. */
#ifndef TCX_WEBCONFIG_H
#define TCX_WEBCONFIG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config/errfn.h"

enum tcx_client_auth {
	TCX_CLIENT_AUTH_NONE = 0,        /* NoClientCert (default) */
	TCX_CLIENT_AUTH_REQUEST,         /* RequestClientCert */
	TCX_CLIENT_AUTH_REQUIRE_ANY,     /* RequireAnyClientCert */
	TCX_CLIENT_AUTH_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	TCX_CLIENT_AUTH_REQUIRE_VERIFY,  /* RequireAndVerifyClientCert */
};

struct tcx_webuser {
	char *name;
	char *hash; /* bcrypt, as written */
};

/* http_server_config.headers, which exporter-toolkit lets a web config set
 * (Content-Security-Policy, X-Frame-Options, X-Content-Type-Options,
 * X-XSS-Protection, Strict-Transport-Security): on every response. */
#define TCX_WEB_HEADERS_MAX 5
struct tcx_webheader {
	const char *name; /* static */
	char *value;
};

struct tcx_webconfig {
	atomic_uint refcnt;
	/* TLS: all NULL when tls_server_config is absent. PEM contents of the
	 * files, loaded at load time (libmicrohttpd takes contents, not paths). */
	char *cert_pem;
	char *key_pem;
	char *client_ca_pem; /* NULL when no client_ca_file */
	enum tcx_client_auth client_auth;
	char *tls_priorities; /* a GnuTLS priority string for min_version/max_version, or NULL */
	/* Basic auth: n_users == 0 means no authentication. */
	struct tcx_webuser *users;
	size_t n_users;
	/* Headers set on every response, in the order of the file. */
	struct tcx_webheader headers[TCX_WEB_HEADERS_MAX];
	size_t n_headers;
	/* The hash an unknown user is checked against (so that it costs as much
	 * as a known one): a fixed one, at the highest cost among the users. */
	char dummy[61]; /* BCRYPT_LEN + 1 */
	/* A small cache of verified (user, password) pairs: bcrypt is slow on
	 * purpose, and Prometheus scrapes every few seconds. Entries hold a
	 * keyed digest, never the password. Serialised by the mutex. */
	pthread_mutex_t lock;
	struct tcx_auth_cache_entry *cache;
	size_t n_cache;
	uint8_t cache_key[32]; /* random, per load */
};

/* Load and validate a web config file. Every problem is reported through
 * errfn as "FILE:LINE:COL: message" (or "FILE: message" for file-level
 * problems, "CERTFILE: message" for unreadable/invalid PEM files), then NULL is
 * returned. Unknown keys are errors. Relative file names are relative to the
 * web config file's directory, as in exporter-toolkit. */
struct tcx_webconfig *tcx_webconfig_load(const char *path, tcx_config_err_fn errfn, void *arg);
/* The same, from the file's contents in memory (len bytes, no NUL needed;
 * NULL reads the file name); name is the file's name, for messages and for
 * relative file names. */
struct tcx_webconfig *tcx_webconfig_load_buffer(const char *name, const char *buf, size_t len,
                                                tcx_config_err_fn errfn, void *arg);
struct tcx_webconfig *tcx_webconfig_ref(struct tcx_webconfig *wc);
void tcx_webconfig_unref(struct tcx_webconfig *wc);

/* The highest bcrypt cost accepted: 14 takes about 1 s per check (2^14
 * rounds of Blowfish's key schedule), and every request with credentials
 * that are not cached, from any client, pays for one. */
#define TCX_BCRYPT_MAX_COST 14

/* Basic auth: 1 when user/password match a configured user, 0 otherwise.
 * Always runs one bcrypt verification on a cache miss, against a fixed dummy
 * hash for unknown users, so that timing does not reveal which users exist;
 * compares in constant time. Thread-safe. */
int tcx_webconfig_check_password(struct tcx_webconfig *wc, const char *user, const char *password);
/* From now on, checks in progress and new ones answer 0 at once (the bcrypt
 * of one in progress finishes in its own thread): for a shutdown, which
 * then waits for no password check. */
void tcx_webconfig_abandon_checks(void);

/* mTLS: given the gnutls_session_t of a connection (as void * so this header
 * does not need GnuTLS), 0 when the client's certificate satisfies
 * client_auth, or -1 with a reason in err. */
int tcx_webconfig_check_client_cert(const struct tcx_webconfig *wc, void *gnutls_session, char *err,
                                    size_t errlen);

#endif
