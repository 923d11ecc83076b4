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
 *   rate_limit:                    # failed password checks per client address
 *     interval: 1s
 *     burst: 10
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
	/* rate_limit, as exporter-toolkit's token bucket (a token every
	 * interval, at most burst of them), but for failed password checks and
	 * per client address: a check that fails takes a token from its
	 * client's bucket, and a client with none left is refused without a
	 * check. limit_interval_ns 0: no limit. Without rate_limit:
	 * TCX_AUTH_LIMIT_INTERVAL_NS and TCX_AUTH_LIMIT_BURST. */
	uint64_t limit_interval_ns;
	uint64_t limit_burst;
	/* A small cache of verified (user, password) pairs: bcrypt is slow on
	 * purpose, and Prometheus scrapes every few seconds. Entries hold a
	 * keyed digest, never the password. The buckets of the clients whose
	 * checks failed, TCX_AUTH_LIMIT_CLIENTS at most. Serialised by the
	 * mutex. */
	pthread_mutex_t lock;
	struct tcx_auth_cache_entry *cache;
	size_t n_cache;
	uint8_t cache_key[32]; /* random, per load */
	struct tcx_auth_bucket *buckets;
	size_t n_buckets;
};

/* The limit of failed password checks per client address when the web
 * config has no rate_limit: 10 at once, then one a second. At cost 10
 * (about 60 ms a check) an address gets 6% of the one thread that checks
 * passwords, and a client that tries a wrong password once a second (a
 * Prometheus whose secret changed) always gets its 401, never a 429. */
#define TCX_AUTH_LIMIT_INTERVAL_NS 1000000000ULL
#define TCX_AUTH_LIMIT_BURST       10
/* The client addresses whose buckets are kept: beyond them, the fullest
 * bucket (the one that would soon be full again, as a new one is) goes. */
#define TCX_AUTH_LIMIT_CLIENTS 1024

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

/* A client, as rate_limit counts them: its address. An IPv6 address
 * counts as its /64 (the least one host is given), an IPv4-mapped one as
 * the IPv4 address. */
struct tcx_client {
	int family; /* AF_INET, AF_INET6, or 0 (unknown: all such are one) */
	unsigned char addr[16];
};
/* What per-address limits count client as: an IPv4 address, the /64 of an
 * IPv6 one (a host is given a /64 at least), an IPv4-mapped one as its IPv4
 * address. */
struct tcx_client tcx_client_key(const struct tcx_client *client);

/* Basic auth, in two steps, so that the bcrypt of a check (tens of ms, up
 * to a second) never runs in the thread that asks:
 *   - tcx_webconfig_auth(): OK when (user, password) was verified before
 *     (cached); LIMITED when a check would be needed and client has no
 *     token left (*retry_s: the seconds until it has one); CHECK when a
 *     check is needed: a token of client's is taken, given back if the
 *     check succeeds or never runs;
 *   - after CHECK, tcx_webconfig_check_start() queues the check; one thread
 *     runs them, the clients' queues in turn (a client's first check waits
 *     for at most one check of each other client). It calls done(arg, ok)
 *     once it is over, unless tcx_webconfig_check_end() came first; then
 *     tcx_webconfig_check_end() lets go of it. done is called with a lock
 *     held that tcx_webconfig_check_end() takes: once that returns, done
 *     has returned or will never be called. done must not call into this
 *     module.
 * A check runs one bcrypt verification, against a fixed dummy hash for
 * unknown users, so that timing does not reveal which users exist, and
 * compares in constant time. Thread-safe. */
enum tcx_auth {
	TCX_AUTH_OK,
	TCX_AUTH_CHECK,
	TCX_AUTH_LIMITED,
};
enum tcx_auth tcx_webconfig_auth(struct tcx_webconfig *wc, const struct tcx_client *client,
                                 const char *user, const char *password, uint64_t *retry_s);
/* The defaults of the checks that may wait (not begun): of one client
 * (http.password_checks_per_ip), of all (http.password_checks). At cost 10
 * (about 60 ms a check), the last of 32 begins within 2 s. */
#define TCX_AUTH_QUEUE_CLIENT 4
#define TCX_AUTH_QUEUE_MAX    32
struct tcx_auth_check;
/* NULL, the client's token given back, when the check cannot be queued:
 * errno EBUSY when per_client checks of its client, or max of all, wait
 * already, else (out of memory, no thread) ENOMEM or EAGAIN. */
struct tcx_auth_check *tcx_webconfig_check_start(struct tcx_webconfig *wc,
                                                 const struct tcx_client *client, const char *user,
                                                 const char *password, unsigned per_client,
                                                 unsigned max, void (*done)(void *arg, int ok),
                                                 void *arg);
/* A check not begun yet is dropped, its client's token given back; one in
 * progress finishes in its thread (its result is still cached), without
 * calling done. NULL: nothing. */
void tcx_webconfig_check_end(struct tcx_auth_check *chk);
/* After TCX_AUTH_CHECK, when no check is started: client's token back. */
void tcx_webconfig_auth_refund(struct tcx_webconfig *wc, const struct tcx_client *client);

/* mTLS: given the gnutls_session_t of a connection (as void * so this header
 * does not need GnuTLS), 0 when the client's certificate satisfies
 * client_auth, or -1 with a reason in err. */
int tcx_webconfig_check_client_cert(const struct tcx_webconfig *wc, void *gnutls_session, char *err,
                                    size_t errlen);

#endif
