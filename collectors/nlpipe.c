/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The receive pipeline: a single producer (the reader thread) and a single
 * consumer (the caller) around a ring of buffers, under one mutex.
 *
 * The two threads must run on two CPUs. A thread that wakes another draws it
 * to its own CPU (the scheduler's wake-affine heuristic), and a reader and
 * parser that wake each other once per chunk end up sharing one CPU: the
 * dump then takes as long as receiving and parsing one after the other, or
 * longer (measured: 16-30 ms instead of 12 for a 10k-filter dump, in a
 * third of the runs). So the reader is kept off the CPU the parser runs on
 * when a reply starts, and the reader never wakes the parser: the parser,
 * the faster side, polls for the next chunk with short sleeps (the kernel
 * takes some 100 us to build one), from its own CPU's timer. It does not
 * spin: a parser spinning on the other CPU slowed the reader by some 15% on
 * the virtual machines measured. */
#include <errno.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "collectors/nlmsg.h"
#include "collectors/nlpipe.h"

/* The parser's first and longest sleep while it waits for a chunk. */
#define POLL_MIN_NS (20 * 1000)
#define POLL_MAX_NS (1000 * 1000)

struct slot {
	ssize_t len; /* > 0: a chunk; < 0: -errno of the read */
	char *buf;
};

struct tcx_nlpipe {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t to_reader; /* start, room in the ring, or exit */
	tcx_nlpipe_read_fn read;
	void *arg;
	size_t bufsz;
	unsigned nslots;
	struct slot *slots;
	/* under lock */
	unsigned head, count; /* next slot to hand over; chunks in the ring */
	int active;           /* the reader owns the reply: it has not read its end yet */
	int reader_waits;
	int exit;
	atomic_uint queued; /* chunks the reader has queued, ever: polled without the lock */
	cpu_set_t cpus;     /* where the process may run */
	int kept_off;       /* the CPU the reader was last kept off, or -1 */
	/* consumer's side */
	int held;  /* a chunk from next() not yet given back */
	int ended; /* the last chunk has been handed over */
};

int tcx_nlpipe_chunk_ends(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh;
	size_t off = 0;

	while ((nlh = tcx_nlmsg_next(buf, len, &off)))
		if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR)
			return 1;
	return off != len; /* trailing bytes that are no message */
}

static void *reader_main(void *arg)
{
	struct tcx_nlpipe *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct slot *sl;
		ssize_t n;

		while (!p->exit && (!p->active || p->count == p->nslots)) {
			p->reader_waits = 1;
			pthread_cond_wait(&p->to_reader, &p->lock);
			p->reader_waits = 0;
		}
		if (p->exit)
			break;
		/* The slot after the queued ones is the reader's alone. */
		sl = &p->slots[(p->head + p->count) % p->nslots];
		pthread_mutex_unlock(&p->lock);

		do
			n = p->read(p->arg, sl->buf, p->bufsz);
		while (n == -EINTR);

		pthread_mutex_lock(&p->lock);
		sl->len = n;
		p->count++;
		atomic_fetch_add_explicit(&p->queued, 1, memory_order_release);
		if (n <= 0 || tcx_nlpipe_chunk_ends(sl->buf, (size_t)n)) {
			if (n == 0)
				sl->len = -EPIPE; /* the socket cannot end; never a chunk */
			p->active = 0;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int tcx_nlpipe_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return 1;
	return CPU_COUNT(&set);
}

struct tcx_nlpipe *tcx_nlpipe_new(tcx_nlpipe_read_fn read, void *arg, size_t bufsz, unsigned nslots)
{
	struct tcx_nlpipe *p;
	sigset_t all, old;
	int err;

	if (!read || !bufsz || nslots < 2) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->read = read;
	p->arg = arg;
	p->bufsz = bufsz;
	p->nslots = nslots;
	p->ended = 1;
	p->kept_off = -1;
	if (sched_getaffinity(0, sizeof(p->cpus), &p->cpus) < 0)
		CPU_ZERO(&p->cpus);
	p->slots = calloc(nslots, sizeof(*p->slots));
	if (!p->slots)
		goto fail;
	for (unsigned i = 0; i < nslots; i++) {
		p->slots[i].buf = malloc(bufsz);
		if (!p->slots[i].buf)
			goto fail;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->to_reader, NULL);
	/* Signals are the main thread's business (the daemon takes them with
	 * sigwaitinfo); the reader must never be picked to run a handler. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, reader_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&p->to_reader);
		pthread_mutex_destroy(&p->lock);
		errno = err;
		goto fail;
	}
	return p;
fail:
	err = errno;
	if (p->slots)
		for (unsigned i = 0; i < nslots; i++)
			free(p->slots[i].buf);
	free(p->slots);
	free(p);
	errno = err;
	return NULL;
}

void tcx_nlpipe_free(struct tcx_nlpipe *p)
{
	if (!p)
		return;
	if (!p->ended)
		tcx_nlpipe_drain(p);
	pthread_mutex_lock(&p->lock);
	p->exit = 1;
	pthread_cond_signal(&p->to_reader);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->to_reader);
	pthread_mutex_destroy(&p->lock);
	for (unsigned i = 0; i < p->nslots; i++)
		free(p->slots[i].buf);
	free(p->slots);
	free(p);
}

/* Keep the reader off the CPU this (the parsing) thread runs on. */
static void keep_reader_off_here(struct tcx_nlpipe *p)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0 || cpu == p->kept_off || CPU_COUNT(&p->cpus) < 2 || !CPU_ISSET(cpu, &p->cpus))
		return;
	set = p->cpus;
	CPU_CLR(cpu, &set);
	if (pthread_setaffinity_np(p->thread, sizeof(set), &set) == 0)
		p->kept_off = cpu;
}

void tcx_nlpipe_start(struct tcx_nlpipe *p)
{
	keep_reader_off_here(p);
	pthread_mutex_lock(&p->lock);
	p->head = 0;
	p->count = 0;
	p->active = 1;
	p->held = 0;
	p->ended = 0;
	if (p->reader_waits)
		pthread_cond_signal(&p->to_reader);
	pthread_mutex_unlock(&p->lock);
}

/* Sleep until the reader has queued more than `seen` chunks. */
static void poll_for_chunk(struct tcx_nlpipe *p, unsigned seen)
{
	long ns = POLL_MIN_NS;

	while (atomic_load_explicit(&p->queued, memory_order_acquire) == seen) {
		struct timespec ts = {0, ns};

		nanosleep(&ts, NULL);
		if (ns < POLL_MAX_NS)
			ns *= 2;
	}
}

ssize_t tcx_nlpipe_next(struct tcx_nlpipe *p, const void **buf)
{
	struct slot *sl;
	ssize_t n;

	if (p->ended)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (p->held) {
		/* Give the previous chunk back. */
		p->head = (p->head + 1) % p->nslots;
		p->count--;
		p->held = 0;
		if (p->reader_waits)
			pthread_cond_signal(&p->to_reader);
	}
	while (p->count == 0) {
		unsigned seen = atomic_load_explicit(&p->queued, memory_order_relaxed);

		pthread_mutex_unlock(&p->lock);
		poll_for_chunk(p, seen);
		pthread_mutex_lock(&p->lock);
	}
	sl = &p->slots[p->head];
	n = sl->len;
	p->held = 1;
	if (p->count == 1 && !p->active)
		p->ended = 1; /* the reader stopped after this one */
	pthread_mutex_unlock(&p->lock);
	*buf = sl->buf;
	return n;
}

int tcx_nlpipe_drain(struct tcx_nlpipe *p)
{
	int ret = 0;

	while (!p->ended) {
		const void *buf;
		ssize_t n = tcx_nlpipe_next(p, &buf);

		if (n < 0)
			ret = (int)n;
	}
	return ret;
}
