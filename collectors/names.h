/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Display names of TC values, as tc(8) prints them: what the labels, JSON
 * fields and SNMP strings show. No dependency on the decoder or the
 * snapshot: renderers and SNMP name things without them. */
#ifndef TCX_NAMES_H
#define TCX_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* A protocol (host order) by iproute2's name ("ip", "802.1Q"), else
 * "0x%04x" in buf. Returns the name. */
const char *tcx_protocol_name(uint16_t proto, char *buf, size_t buflen);
/* A filter handle as tc prints it for classifier kind: u32's
 * htid:hash:node ("800::800"), 0x%x for the others. Returns its length.
 * With outlen >= TCX_HANDLE_MAX it is written in place, whole (at most 10
 * characters and the NUL); with less, through a buffer and cut to fit. */
#define TCX_HANDLE_MAX 32
size_t tcx_format_handle(const char *kind, uint32_t handle, char *out, size_t outlen);
/* A parent: "root", "ingress", "egress", or maj:min in hex ("1:", "1:a"). */
void tcx_format_parent(uint32_t parent, char *out, size_t outlen);
/* A qdisc's handle ("1:", "0:") or a class's id ("1:10"), as tc prints it. */
void tcx_format_qhandle(uint32_t handle, char *out, size_t outlen);
/* A qdisc's or a class's parent as tc prints it: "root", "ingress" or
 * "clsact" (TC_H_INGRESS, by the qdisc's kind), else maj:min ("1:10"). */
void tcx_format_qparent(uint32_t parent, const char *kind, char *out, size_t outlen);
/* Filter flags (TCX_FLAG_*, bit by bit) as "skip_hw,in_hw", "" for none. */
void tcx_flags_string(uint32_t flags, char *out, size_t outlen);

#endif
