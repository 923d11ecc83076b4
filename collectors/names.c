/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <linux/pkt_sched.h>
#include <stdio.h>
#include <string.h>

#include "collectors/names.h"
#include "config/config.h"

/* Lower-case hex without leading zeros; returns the length. */
static size_t put_hex(char *out, uint32_t v)
{
	static const char hexd[] = "0123456789abcdef";
	size_t n = v ? (size_t)(35 - __builtin_clz(v)) / 4 : 1; /* (bits + 3) / 4 */

	for (size_t i = n; i-- > 0; v >>= 4)
		out[i] = hexd[v & 15];
	return n;
}

/* The n bytes at s into out as a string, cut to fit; returns its length. */
static size_t put_cut(const char *s, size_t n, char *out, size_t outlen)
{
	if (!outlen)
		return 0;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

size_t tcx_format_handle(const char *kind, uint32_t handle, char *out, size_t outlen)
{
	char tmp[TCX_HANDLE_MAX];
	char *b = outlen >= sizeof(tmp) ? out : tmp;
	size_t n = 0;

	if (kind[0] == 'u' && kind[1] == '3' && kind[2] == '2' && !kind[3]) { /* "u32" */
		/* As iproute2 prints u32 handles: htid:hash:node, empty parts
		 * left out ("800:", "800::800"). */
		uint32_t htid = handle >> 20, hash = (handle >> 12) & 0xff, node = handle & 0xfff;

		if (!handle) {
			memcpy(b, "none", 4);
			n = 4;
		}
		if (htid) {
			n += put_hex(b + n, htid);
			b[n++] = ':';
		}
		if (hash)
			n += put_hex(b + n, hash);
		if (node) {
			b[n++] = ':';
			n += put_hex(b + n, node);
		}
	} else {
		b[n++] = '0';
		b[n++] = 'x';
		n += put_hex(b + n, handle);
	}
	if (b == out) {
		out[n] = '\0';
		return n;
	}
	return put_cut(b, n, out, outlen);
}

static void put_str(const char *s, char *out, size_t outlen)
{
	put_cut(s, strlen(s), out, outlen);
}

void tcx_format_parent(uint32_t parent, char *out, size_t outlen)
{
	switch (parent) {
	case 0:
	case TC_H_ROOT:
		put_str("root", out, outlen);
		return;
	case TCX_PARENT_INGRESS:
	case TC_H_INGRESS:
		put_str("ingress", out, outlen);
		return;
	case TCX_PARENT_EGRESS:
		put_str("egress", out, outlen);
		return;
	default:
		break;
	}
	tcx_format_qhandle(parent, out, outlen);
}

void tcx_format_qhandle(uint32_t handle, char *out, size_t outlen)
{
	char b[16];
	size_t n = put_hex(b, TC_H_MAJ(handle) >> 16);

	b[n++] = ':';
	if (TC_H_MIN(handle))
		n += put_hex(b + n, TC_H_MIN(handle));
	put_cut(b, n, out, outlen);
}

void tcx_format_qparent(uint32_t parent, const char *kind, char *out, size_t outlen)
{
	if (parent == TC_H_INGRESS)
		put_str(strcmp(kind, "clsact") == 0 ? "clsact" : "ingress", out, outlen);
	else
		tcx_format_parent(parent, out, outlen);
}

/* The names iproute2 prints (lib/ll_proto.c), for the common protocols. */
static const struct {
	uint16_t id;
	const char *name;
} proto_names[] = {
        {0x0001, "802_3"},   {0x0002, "ax25"},    {0x0003, "all"},      {0x0004, "802_2"},
        {0x0060, "loop"},    {0x0800, "ip"},      {0x0805, "x25"},      {0x0806, "arp"},
        {0x8035, "rarp"},    {0x809b, "atalk"},   {0x8100, "802.1Q"},   {0x86dd, "ipv6"},
        {0x8847, "mpls_uc"}, {0x8848, "mpls_mc"}, {0x8863, "ppp_disc"}, {0x8864, "ppp_ses"},
        {0x88a8, "802.1ad"}, {0x88cc, "LLDP"},    {0x6558, "teb"},
};

const char *tcx_protocol_name(uint16_t proto, char *buf, size_t buflen)
{
	for (size_t i = 0; i < sizeof(proto_names) / sizeof(proto_names[0]); i++)
		if (proto_names[i].id == proto)
			return proto_names[i].name;
	snprintf(buf, buflen, "0x%04x", proto);
	return buf;
}

void tcx_flags_string(uint32_t flags, char *out, size_t outlen)
{
	static const char *const names[] = {"skip_hw", "skip_sw", "in_hw", "not_in_hw"};
	size_t n = 0;

	if (!outlen)
		return;
	for (unsigned i = 0; i < 4; i++) {
		size_t len = strlen(names[i]);

		if (!(flags & (1u << i)) || n + len + 2 > outlen)
			continue;
		if (n)
			out[n++] = ',';
		memcpy(out + n, names[i], len);
		n += len;
	}
	out[n] = '\0';
}
