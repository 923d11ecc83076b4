/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decoding of rtnetlink TC messages. No I/O here: every function takes a
 * message that is already in memory, validates it and fills plain structs. */
#ifndef TCX_TC_PARSE_H
#define TCX_TC_PARSE_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/snapshot.h"

enum tcx_parse_result {
	TCX_PARSE_ERROR = -1, /* malformed: err holds the reason, nothing was added */
	TCX_PARSE_SKIP = 0,   /* not a filter message, or a filter we do not keep */
	TCX_PARSE_HEADER,     /* a per-tp header (handle 0): hdr is filled */
	TCX_PARSE_ROW,        /* a filter and its actions were appended */
};

/* What a filter message says about its tp (chain, pref, protocol, kind). */
struct tcx_tp_key {
	uint32_t chain;
	uint16_t pref;
	uint16_t protocol; /* host order */
	char kind[TCX_KIND_MAX];
	uint32_t ifindex; /* tcm_ifindex as received */
	uint32_t parent;  /* tcm_parent as received */
	uint32_t handle;
};

/* Does this classifier implement terse dumps (only flower does)? */
int tcx_cls_supports_terse(const char *kind);

/* Parse one RTM_NEWTFILTER message, or an RTM_DELTFILTER notification
 * (the same layout: notify.c). On TCX_PARSE_ROW the filter and its actions
 * are appended to snap (filter.target = target); a legacy policer (`police`
 * without `action`) is its action 1, of kind police, and one that cannot be
 * read loses that row alone, counted in snap->errors[TCX_ERR_MALFORMED]
 * with the reason in err. On every result but TCX_PARSE_ERROR, key
 * describes the tp. */
enum tcx_parse_result tcx_parse_filter(const struct nlmsghdr *nlh, struct tcx_snapshot *snap,
                                       uint32_t target, struct tcx_tp_key *key, char *err,
                                       size_t errlen);

/* A qdisc from an RTM_NEWQDISC message. */
struct tcx_qdisc {
	uint32_t ifindex;
	uint32_t handle;
	uint32_t parent;
	char kind[TCX_KIND_MAX];
	uint32_t ingress_block; /* 0 when not shared */
	uint32_t egress_block;
};
int tcx_parse_qdisc(const struct nlmsghdr *nlh, struct tcx_qdisc *q, char *err, size_t errlen);

/* A link from an RTM_NEWLINK message. */
int tcx_parse_link(const struct nlmsghdr *nlh, uint32_t *ifindex, char name[IFNAMSIZ], char *err,
                   size_t errlen);

/* The status carried by NLMSG_DONE or NLMSG_ERROR: 0 or a negative errno.
 * When the kernel attached an extended ack message it is copied to msg
 * (empty string otherwise). Returns -1 when the message itself is malformed,
 * or its status is no errno (beyond TCX_MAX_ERRNO either way). */
#define TCX_MAX_ERRNO 4095 /* the kernel's MAX_ERRNO */
int tcx_parse_status(const struct nlmsghdr *nlh, int *status, char *msg, size_t msglen);

#endif
