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
 * container in errors. Stops at the first error (cb's or a bad length). */
int tcx_attr_walk(const void *p, size_t len, const char *what, tcx_attr_cb cb, void *data,
                  struct tcx_perr *pe);
/* The same over the payload of a nest. */
int tcx_attr_nested(const struct nlattr *a, const char *what, tcx_attr_cb cb, void *data,
                    struct tcx_perr *pe);

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
