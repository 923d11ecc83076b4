/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounds-checked walking of netlink attributes, for the decoders
 * (collectors/qdisc_parse.c). No I/O. A length that runs past its container,
 * a fixed-size attribute that is too short, or a string that is not
 * terminated is an error with a reason, written to a struct tcx_perr. */
#ifndef TCX_NLATTR_H
#define TCX_NLATTR_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where a decoder writes why it refused a message (buf may be NULL). */
struct tcx_perr {
	char *buf;
	size_t len;
};

/* Writes the reason; returns -1. */
int tcx_perr_fail(struct tcx_perr *pe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline uint16_t tcx_attr_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

static inline const void *tcx_attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static inline size_t tcx_attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

typedef int (*tcx_attr_cb)(const struct nlattr *a, void *data, struct tcx_perr *pe);

/* cb for each attribute in [p, p+len), in order; `what` names the
 * container in errors. Stops at the first error (cb's or a bad length).
 * Inline: where cb is a known function, as in every decoder, the call is
 * direct and the compiler may inline it (the walks and their callbacks were
 * 25% of --once's instructions at 100k u32 rules). */
static inline int tcx_attr_walk(const void *p, size_t len, const char *what, tcx_attr_cb cb,
                                void *data, struct tcx_perr *pe)
{
	const char *cur = p, *end = cur + len;

	while (cur < end) {
		const struct nlattr *a = (const void *)cur;
		size_t left = (size_t)(end - cur);

		if (left < NLA_HDRLEN)
			return tcx_perr_fail(pe,
			                     "%s: %zu trailing bytes, too short for an attribute",
			                     what, left);
		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			return tcx_perr_fail(pe, "%s: attribute %u has length %u, outside 4..%zu",
			                     what, tcx_attr_type(a), a->nla_len, left);
		if (cb(a, data, pe) < 0)
			return -1;
		/* The last attribute may lack its alignment padding. */
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		cur += NLA_ALIGN(a->nla_len);
	}
	return 0;
}

/* The same over the payload of a nest. */
static inline int tcx_attr_nested(const struct nlattr *a, const char *what, tcx_attr_cb cb,
                                  void *data, struct tcx_perr *pe)
{
	return tcx_attr_walk(tcx_attr_data(a), tcx_attr_len(a), what, cb, data, pe);
}

/* A container's attributes by type, for tcx_attr_tb_cb: tb[type] for types
 * below n (the last one of a type wins), the others skipped. */
struct tcx_attr_tb {
	const struct nlattr **tb;
	size_t n;
};
int tcx_attr_tb_cb(const struct nlattr *a, void *data, struct tcx_perr *pe);

/* A message: its fixed header of hdrlen bytes (NULL, the reason in pe, when
 * the message is too short for it or an attribute is malformed), its
 * attributes walked with cb. */
const void *tcx_msg_walk(const struct nlmsghdr *nlh, size_t hdrlen, const char *what,
                         tcx_attr_cb cb, void *data, struct tcx_perr *pe);

/* Fixed-size payloads: shorter than the type is an error, longer is cut. */
int tcx_attr_u32(const struct nlattr *a, const char *name, uint32_t *v, struct tcx_perr *pe);
int tcx_attr_u64(const struct nlattr *a, const char *name, uint64_t *v, struct tcx_perr *pe);
/* A NUL-terminated string that fits in out (at most outlen-1 characters). */
int tcx_attr_str(const struct nlattr *a, const char *name, char *out, size_t outlen,
                 struct tcx_perr *pe);
/* Copy a kernel struct as tc does, MIN(payload, size): a shorter payload
 * leaves the tail zeroed, a longer one is cut. Inline: with size known at
 * compile time, the whole payload (the usual case) is copied as a few
 * moves, not by a call to memcpy() (3% of the daemon's CPU at 100k rows,
 * from the statistics' structs). */
static inline void tcx_attr_struct(const struct nlattr *a, void *out, size_t size)
{
	size_t n = tcx_attr_len(a);

	if (n >= size) {
		memcpy(out, tcx_attr_data(a), size);
		return;
	}
	memset(out, 0, size);
	memcpy(out, tcx_attr_data(a), n);
}

#endif
