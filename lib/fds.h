/* SPDX-License-Identifier: GPL-2.0-or-later */
/* File descriptors (header only): the process's open files limit
 * (RLIMIT_NOFILE), raised at start, and the reserve that collection leaves
 * free under it. */
#ifndef TCX_LIB_FDS_H
#define TCX_LIB_FDS_H

#include <errno.h>
#include <sys/resource.h>

/* The fds that collection leaves free under the soft limit, for HTTP's
 * connections and the read of /run/netns: 64, or a quarter of a limit
 * below 256. */
#define TCX_FD_RESERVE 64

static inline rlim_t tcx_fd_reserve(rlim_t soft)
{
	return soft / 4 < TCX_FD_RESERVE ? soft / 4 : TCX_FD_RESERVE;
}

/* Raise the soft limit to the hard one, as Go programs do at start (the
 * default soft limit, 1024, is select(2)'s: libmicrohttpd here polls, and
 * net-snmp's agent loop selects on its large fd sets).
 * *before and *after: the soft limit before and after. Returns 0, or
 * -errno when the limit could not be read or raised (it stays). */
static inline int tcx_fd_raise_limit(rlim_t *before, rlim_t *after)
{
	struct rlimit rl;

	*before = *after = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	*before = *after = rl.rlim_cur;
	if (rl.rlim_cur == rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	*after = rl.rlim_cur;
	return 0;
}

/* Is fd, just made, one of the last tcx_fd_reserve() fds under the soft
 * limit (*soft)? The kernel gives the lowest free number, so every fd
 * below it is in use: collection must not keep it. */
static inline int tcx_fd_in_reserve(int fd, rlim_t *soft)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	*soft = rl.rlim_cur;
	return rl.rlim_cur != RLIM_INFINITY &&
	       (rlim_t)fd >= rl.rlim_cur - tcx_fd_reserve(rl.rlim_cur);
}

#endif
