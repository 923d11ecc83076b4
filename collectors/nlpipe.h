/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A receive pipeline for netlink dumps.
 *
 * The kernel builds each chunk of a dump inside the recvmsg() call that
 * takes the previous one, so a single thread that receives and then parses
 * leaves the kernel idle while it parses. Here a reader thread receives the
 * rest of a reply into a ring of buffers while the caller parses the chunks
 * already there: the kernel's work and the parsing overlap, on two CPUs.
 *
 * One reply at a time: tcx_nlpipe_start() after the caller has taken the
 * first chunk itself (a reply that fits in one chunk never involves the
 * thread); tcx_nlpipe_next() hands the chunks over in order, the chunk that
 * holds NLMSG_DONE or NLMSG_ERROR (or a failed read) being the last; a caller
 * that stops early calls tcx_nlpipe_drain() before the next request. */
#ifndef TCX_NLPIPE_H
#define TCX_NLPIPE_H

#include <stddef.h>
#include <sys/types.h>

/* CPUs this thread may run on: below 2, a pipeline only costs. */
int tcx_nlpipe_cpus(void);

/* Receive one chunk into buf: its length (> 0), or -errno. */
typedef ssize_t (*tcx_nlpipe_read_fn)(void *arg, void *buf, size_t len);

struct tcx_nlpipe;

/* A pipeline of nslots buffers of bufsz bytes, and its reader thread (with
 * every signal blocked). NULL with errno set on failure. */
struct tcx_nlpipe *tcx_nlpipe_new(tcx_nlpipe_read_fn read, void *arg, size_t bufsz,
                                  unsigned nslots);
/* Stop the thread (it must be idle: the last reply read to its end or
 * drained) and free everything. */
void tcx_nlpipe_free(struct tcx_nlpipe *p);

/* Does this chunk end a dump reply? True when it holds NLMSG_DONE or
 * NLMSG_ERROR, or when its messages do not parse (nothing after it could be
 * trusted to follow on). */
int tcx_nlpipe_chunk_ends(const void *buf, size_t len);

/* Have the reader receive the rest of the current reply. */
void tcx_nlpipe_start(struct tcx_nlpipe *p);
/* The next chunk of the reply, valid until the following call: its length,
 * 0 after the last chunk, or -errno when a read failed (also the end). The
 * previous chunk's buffer goes back to the reader. */
ssize_t tcx_nlpipe_next(struct tcx_nlpipe *p, const void **buf);
/* Skip the rest of the reply (a caller that stopped parsing early). Returns
 * 0 when the reply ended with its last chunk, -errno when a read failed. */
int tcx_nlpipe_drain(struct tcx_nlpipe *p);

#endif
