/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cookie -> label values: the exact `cookies:` map, then the decoders. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"

/* Also declared in config.c, which builds the index this file probes. */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* len <= TCX_COOKIE_MAX. */
uint64_t tcx_cookie_hash(const uint8_t *cookie, size_t len)
{
	uint64_t w[2] = {0, 0};

	memcpy(w, cookie, len);
	return mix64(mix64(len * 0x9e3779b97f4a7c15ULL ^ w[0]) ^ w[1]);
}

static const struct tcx_cookie_entry *lookup(const struct tcx_config *cfg, const uint8_t *cookie,
                                             size_t len)
{
	size_t mask, i;

	if (cfg->n_slots == 0 || len > TCX_COOKIE_MAX)
		return NULL;
	mask = cfg->n_slots - 1;
	/* n_slots >= 2 * n_cookies: there is always an empty slot to stop at */
	for (i = tcx_cookie_hash(cookie, len) & mask; cfg->slots[i] != UINT32_MAX;
	     i = (i + 1) & mask) {
		const struct tcx_cookie_entry *e = &cfg->cookies[cfg->slots[i]];

		if (e->len == len && !memcmp(e->bytes, cookie, len))
			return e;
	}
	return NULL;
}

static int dec_ascii(const struct tcx_decoder *d, const uint8_t *cookie, size_t len,
                     struct tcx_label_buf *buf)
{
	size_t i;

	if (len > TCX_LABEL_VALUE_MAX - 1)
		return -1;
	for (i = 0; i < len; i++)
		if (cookie[i] < 0x20 || cookie[i] > 0x7e)
			return -1;
	memcpy(buf->v[d->label], cookie, len);
	buf->v[d->label][len] = '\0';
	return 0;
}

static int dec_fields(const struct tcx_decoder *d, const uint8_t *cookie, size_t len,
                      struct tcx_label_buf *buf)
{
	size_t i, j, off = 0;

	for (i = 0; i < d->n_fields; i++)
		off += d->fields[i].width;
	if (off > len)
		return -1;
	for (i = 0, off = 0; i < d->n_fields; i++) {
		uint64_t x = 0;

		for (j = 0; j < d->fields[i].width; j++)
			x = x << 8 | cookie[off + j];
		off += d->fields[i].width;
		if (d->fields[i].label >= 0)
			snprintf(buf->v[d->fields[i].label], TCX_LABEL_VALUE_MAX, "%" PRIu64, x);
	}
	return 0;
}

static int dec_uuid(const struct tcx_decoder *d, const uint8_t *c, size_t len,
                    struct tcx_label_buf *buf)
{
	char *out = buf->v[d->label];
	uint32_t w[4];

	if (len != 16)
		return -1;
	if (d->layout == TCX_UUID_RFC4122) {
		snprintf(out, TCX_LABEL_VALUE_MAX,
		         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		         c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11],
		         c[12], c[13], c[14], c[15]);
		return 0;
	}
	/* OVS ufid: four u32 words in host order, as ovs-appctl prints them */
	memcpy(w, c, sizeof(w));
	snprintf(out, TCX_LABEL_VALUE_MAX,
	         "%08" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "-%04" PRIx32 "%08" PRIx32,
	         w[0], w[1] >> 16, w[1] & 0xffff, w[2] >> 16, w[2] & 0xffff, w[3]);
	return 0;
}

static void set_decoded(const struct tcx_decoder *d, const char **values, struct tcx_label_buf *buf)
{
	size_t i;

	if (d->type != TCX_DEC_FIELDS) {
		values[d->label] = buf->v[d->label];
		return;
	}
	for (i = 0; i < d->n_fields; i++)
		if (d->fields[i].label >= 0)
			values[d->fields[i].label] = buf->v[d->fields[i].label];
}

enum tcx_map_kind tcx_labels_resolve(const struct tcx_config *cfg, const uint8_t *cookie,
                                     size_t len, const char **values, struct tcx_label_buf *buf)
{
	const struct tcx_cookie_entry *e;
	size_t i;

	for (i = 0; i < cfg->n_labels; i++)
		values[i] = "";
	if (len == 0)
		return TCX_MAP_NONE;

	e = lookup(cfg, cookie, len);
	if (e) {
		for (i = 0; i < cfg->n_labels; i++)
			values[i] = e->values[i];
		return TCX_MAP_EXACT;
	}

	for (i = 0; i < cfg->n_decoders; i++) {
		const struct tcx_decoder *d = &cfg->decoders[i];
		int r = -1;

		if (d->length && d->length != len)
			continue;
		if (d->prefix_len > len || memcmp(cookie, d->prefix, d->prefix_len))
			continue;
		switch (d->type) {
		case TCX_DEC_ASCII:
			r = dec_ascii(d, cookie, len, buf);
			break;
		case TCX_DEC_FIELDS:
			r = dec_fields(d, cookie, len, buf);
			break;
		case TCX_DEC_UUID:
			r = dec_uuid(d, cookie, len, buf);
			break;
		}
		if (r == 0) {
			set_decoded(d, values, buf);
			return TCX_MAP_DECODED;
		}
	}
	return TCX_MAP_UNMAPPED;
}

/* "000102...feff": the two digits of every byte. */
#define HEX_ROW(h)                                                                                 \
	h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" h "8" h "9" h "a" h "b" h "c" h "d" h      \
	  "e" h "f"
static const char hex_pairs[] = HEX_ROW("0") HEX_ROW("1") HEX_ROW("2") HEX_ROW("3") HEX_ROW("4")
        HEX_ROW("5") HEX_ROW("6") HEX_ROW("7") HEX_ROW("8") HEX_ROW("9") HEX_ROW("a") HEX_ROW("b")
                HEX_ROW("c") HEX_ROW("d") HEX_ROW("e") HEX_ROW("f");

void tcx_cookie_hex(const uint8_t *cookie, size_t len, char *out)
{
	/* One 2-byte copy a byte (a cookie is written once per action row). */
	for (size_t i = 0; i < len; i++)
		memcpy(out + 2 * i, hex_pairs + 2 * cookie[i], 2);
	out[2 * len] = '\0';
}

int tcx_label_name_valid(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return 0;
	if (name[0] == '_' && name[1] == '_')
		return 0;
	for (i = 0; name[i]; i++) {
		char ch = name[i];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_')
			continue;
		if (i > 0 && ch >= '0' && ch <= '9')
			continue;
		return 0;
	}
	return 1;
}

const char *const tcx_builtin_labels[TCX_BL__MAX] = {
        [TCX_BL_DEVICE] = "device", [TCX_BL_PARENT] = "parent", [TCX_BL_BLOCK] = "block",
        [TCX_BL_NETNS] = "netns",   [TCX_BL_CHAIN] = "chain",   [TCX_BL_PROTOCOL] = "protocol",
        [TCX_BL_PREF] = "pref",     [TCX_BL_KIND] = "kind",     [TCX_BL_HANDLE] = "handle",
        [TCX_BL_ORDER] = "order",   [TCX_BL_ACTION] = "action", [TCX_BL_COOKIE] = "cookie",
};

/* The label names the exposition writes that are not action row labels
 * (tcx_builtin_labels): of qdisc and class rows and their per-kind statistics
 * (config/xstats.c), of the filters' flags, of the exporter's own
 * families and its build info (agent/render/prom.c, agent/buildinfo.c); then
 * le and quantile, which Prometheus gives histograms and summaries.
 * tests/unit/test_expo.c renders every family and checks the two lists hold
 * exactly the names it finds, and these two. */
const char *const tcx_reserved_labels[] = {
        "tin",
        "band",
        "skip_hw",
        "skip_sw",
        "in_hw",
        "not_in_hw",
        "type",
        "mode",
        "cause",
        "row",
        "code",
        "reason",
        "version",
        "revision",
        "libmnl_version",
        "libmicrohttpd_version",
        "netsnmp_version",
        "gzip",
        "le",
        "quantile",
        "leaf",
        "leaf_qdisc",
        "leaf_kind",
        "diffserv",
        "flow_mode",
};
const size_t tcx_n_reserved_labels = sizeof(tcx_reserved_labels) / sizeof(tcx_reserved_labels[0]);

int tcx_label_name_reserved(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; i < TCX_BL__MAX; i++)
		if (!strcmp(name, tcx_builtin_labels[i]))
			return 1;
	for (i = 0; i < tcx_n_reserved_labels; i++)
		if (!strcmp(name, tcx_reserved_labels[i]))
			return 1;
	return 0;
}
