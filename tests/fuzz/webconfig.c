/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz harness: the web configuration loader (exporter-toolkit's format).
 *
 * Input: the file. It is loaded under a name in a directory that does not
 * exist, so that relative certificate file names name nothing; inline PEM
 * (`cert`, `key`, `client_ca`) reaches GnuTLS's parsers. The loader must
 * report at least one error exactly when it refuses the file, and what it
 * accepts must be whole: a certificate with its key, users with bcrypt
 * hashes, a rate_limit with a bucket of one token at least (and buckets to
 * count in, with users). */
#include <stdlib.h>
#include <string.h>

#include "agent/http/webconfig.h"
#include "tests/fuzz/fuzz.h"

static void count_err(void *arg, const char *msg)
{
	FUZZ_CHECK(msg[0]);
	(*(unsigned *)arg)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	struct tcx_webconfig *wc;
	unsigned nerr = 0;

	FUZZ_CHECK(buf);
	memcpy(buf, data, size);
	wc = tcx_webconfig_load_buffer("/nonexistent/tcexporter-fuzz/web.yml", buf, size, count_err,
	                               &nerr);
	free(buf);
	FUZZ_CHECK(!wc == (nerr > 0));
	if (!wc)
		return 0;
	FUZZ_CHECK(!wc->cert_pem == !wc->key_pem);
	FUZZ_CHECK(!wc->client_ca_pem || wc->cert_pem);
	for (size_t i = 0; i < wc->n_users; i++)
		FUZZ_CHECK(wc->users[i].name[0] && strlen(wc->users[i].hash) == 60);
	FUZZ_CHECK(!wc->limit_interval_ns || wc->limit_burst >= 1);
	FUZZ_CHECK(!wc->buckets == !(wc->n_users && wc->limit_interval_ns));
	tcx_webconfig_unref(wc);
	return 0;
}
