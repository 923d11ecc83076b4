/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collectors/nlattr.h"

int tcx_perr_fail(struct tcx_perr *pe, const char *fmt, ...)
{
	va_list ap;

	if (pe->buf && pe->len) {
		va_start(ap, fmt);
		vsnprintf(pe->buf, pe->len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int tcx_attr_tb_cb(const struct nlattr *a, void *data, struct tcx_perr *pe)
{
	const struct tcx_attr_tb *t = data;

	(void)pe;
	if (tcx_attr_type(a) < t->n)
		t->tb[tcx_attr_type(a)] = a;
	return 0;
}

const void *tcx_msg_walk(const struct nlmsghdr *nlh, size_t hdrlen, const char *what,
                         tcx_attr_cb cb, void *data, struct tcx_perr *pe)
{
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(hdrlen);

	if (nlh->nlmsg_len < NLMSG_HDRLEN + hdrlen) {
		tcx_perr_fail(pe, "%s message of %u bytes, too short for its header", what,
		              nlh->nlmsg_len);
		return NULL;
	}
	if (tcx_attr_walk((const char *)nlh + off, nlh->nlmsg_len > off ? nlh->nlmsg_len - off : 0,
	                  what, cb, data, pe) < 0)
		return NULL;
	return (const char *)nlh + NLMSG_HDRLEN;
}

int tcx_attr_u32(const struct nlattr *a, const char *name, uint32_t *v, struct tcx_perr *pe)
{
	if (tcx_attr_len(a) < sizeof(*v))
		return tcx_perr_fail(pe, "%s: payload of %zu bytes, expected 4", name,
		                     tcx_attr_len(a));
	memcpy(v, tcx_attr_data(a), sizeof(*v));
	return 0;
}

int tcx_attr_u64(const struct nlattr *a, const char *name, uint64_t *v, struct tcx_perr *pe)
{
	if (tcx_attr_len(a) < sizeof(*v))
		return tcx_perr_fail(pe, "%s: payload of %zu bytes, expected 8", name,
		                     tcx_attr_len(a));
	memcpy(v, tcx_attr_data(a), sizeof(*v));
	return 0;
}

int tcx_attr_str(const struct nlattr *a, const char *name, char *out, size_t outlen,
                 struct tcx_perr *pe)
{
	const char *s = tcx_attr_data(a);
	size_t n = tcx_attr_len(a);
	const char *nul = memchr(s, '\0', n);

	if (!nul)
		return tcx_perr_fail(pe, "%s: string is not NUL-terminated", name);
	if ((size_t)(nul - s) >= outlen)
		return tcx_perr_fail(pe, "%s: string of %zu bytes, longer than %zu", name,
		                     (size_t)(nul - s), outlen - 1);
	memcpy(out, s, (size_t)(nul - s) + 1);
	return 0;
}
