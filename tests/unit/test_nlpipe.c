/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The receive pipeline against a scripted reader: order, the end of a
 * reply, back-pressure, read errors, draining, and reuse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/netlink.h>

#include "collectors/nlpipe.h"

#define BUFSZ     4096
#define MAX_STEPS 64

/* What the fake socket returns, read after read: a chunk of data messages
 * numbered `seq`, optionally closed by NLMSG_DONE or NLMSG_ERROR, or an
 * error. */
struct step {
	int err;   /* > 0: the read fails with -err */
	int msgs;  /* data messages in the chunk */
	int end;   /* NLMSG_DONE (1) or NLMSG_ERROR (2) after them */
	int trunc; /* a trailing fragment that is no whole message */
};

struct fake {
	pthread_mutex_t lock;
	struct step steps[MAX_STEPS];
	int n_steps, pos;
	int reads;       /* reads performed */
	int taken;       /* chunks the consumer has been handed */
	int max_ahead;   /* most chunks read but not yet taken */
	int overrun;     /* reads past the end of the script (never from cmocka's
	                  * assertions: those cannot fail from another thread) */
	uint32_t serial; /* numbers the data messages */
};

static size_t put_msg(char *p, uint16_t type, uint32_t serial)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)p;

	memset(nlh, 0, NLMSG_SPACE(sizeof(uint32_t)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(uint32_t));
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_MULTI;
	memcpy(NLMSG_DATA(nlh), &serial, sizeof(serial));
	return NLMSG_SPACE(sizeof(uint32_t));
}

static ssize_t fake_read(void *arg, void *buf, size_t len)
{
	struct fake *f = arg;
	struct step st;
	size_t n = 0;

	pthread_mutex_lock(&f->lock);
	if (f->pos >= f->n_steps) {
		f->overrun++;
		pthread_mutex_unlock(&f->lock);
		return -EIO;
	}
	st = f->steps[f->pos++];
	f->reads++;
	if (f->reads - f->taken > f->max_ahead)
		f->max_ahead = f->reads - f->taken;
	pthread_mutex_unlock(&f->lock);
	if (st.err)
		return -st.err;
	if ((size_t)(st.msgs + 2) * NLMSG_SPACE(sizeof(uint32_t)) > len)
		return -EMSGSIZE; /* a bad script: the checks of its chunks fail */
	for (int i = 0; i < st.msgs; i++)
		n += put_msg((char *)buf + n, 0x2c /* RTM_NEWTFILTER */, f->serial++);
	if (st.end)
		n += put_msg((char *)buf + n, st.end == 1 ? NLMSG_DONE : NLMSG_ERROR, 0);
	if (st.trunc) {
		memset((char *)buf + n, 0xff, 6);
		n += 6;
	}
	return (ssize_t)n;
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
}

static void fake_add(struct fake *f, struct step st)
{
	assert_true(f->n_steps < MAX_STEPS);
	f->steps[f->n_steps++] = st;
}

/* The consumer's side of a chunk: check its messages carry the numbers
 * that follow *next, count it as taken. */
static void check_chunk(struct fake *f, const void *buf, ssize_t n, int msgs, uint32_t *next)
{
	const struct nlmsghdr *nlh = buf;

	assert_true(n > 0);
	for (int i = 0; i < msgs; i++) {
		uint32_t serial;

		assert_int_equal(nlh->nlmsg_type, 0x2c);
		memcpy(&serial, NLMSG_DATA(nlh), sizeof(serial));
		assert_int_equal(serial, *next);
		(*next)++;
		nlh = (const struct nlmsghdr *)((const char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));
	}
	pthread_mutex_lock(&f->lock);
	f->taken++;
	pthread_mutex_unlock(&f->lock);
}

/* Take the next chunk and check it. */
static void take(struct tcx_nlpipe *p, struct fake *f, int msgs, uint32_t *next)
{
	const void *buf = NULL;
	ssize_t n = tcx_nlpipe_next(p, &buf);

	check_chunk(f, buf, n, msgs, next);
}

static void test_chunk_ends(void **state)
{
	char buf[256];
	size_t n = 0;

	n += put_msg(buf + n, 0x2c, 1);
	n += put_msg(buf + n, 0x2c, 2);
	assert_false(tcx_nlpipe_chunk_ends(buf, n));
	assert_false(tcx_nlpipe_chunk_ends(buf, 0));
	n += put_msg(buf + n, NLMSG_DONE, 0);
	assert_true(tcx_nlpipe_chunk_ends(buf, n));
	n = put_msg(buf, NLMSG_ERROR, 0);
	assert_true(tcx_nlpipe_chunk_ends(buf, n));
	/* A fragment that is no message ends the reply: nothing after it
	 * could be trusted. */
	n = put_msg(buf, 0x2c, 1);
	assert_true(tcx_nlpipe_chunk_ends(buf, n + 6));
	/* A header whose length runs past the chunk. */
	((struct nlmsghdr *)buf)->nlmsg_len = 4000;
	assert_true(tcx_nlpipe_chunk_ends(buf, n));
	/* One that is negative as an int (issue #9: libmnl's check took it,
	 * and the walk went 4 GB past the chunk), alone and after a message. */
	memset(buf, 0, 16);
	((struct nlmsghdr *)buf)->nlmsg_len = 0xffff0062;
	assert_true(tcx_nlpipe_chunk_ends(buf, 16));
	n = put_msg(buf, 0x2c, 1);
	memset(buf + n, 0, 16);
	((struct nlmsghdr *)(buf + n))->nlmsg_len = 0xffff0062;
	assert_true(tcx_nlpipe_chunk_ends(buf, n + 16));
	/* And one shorter than its header. */
	n = put_msg(buf, 0x2c, 1);
	((struct nlmsghdr *)buf)->nlmsg_len = 8;
	assert_true(tcx_nlpipe_chunk_ends(buf, n));
}

static void test_bad_args(void **state)
{
	errno = 0;
	assert_null(tcx_nlpipe_new(fake_read, NULL, BUFSZ, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(tcx_nlpipe_new(fake_read, NULL, 0, 4));
	assert_null(tcx_nlpipe_new(NULL, NULL, BUFSZ, 4));
}

/* 20 chunks through a ring of 3: all in order, the reader never more than
 * 3 ahead, then the end; and the same pipe serves a second reply. */
static void test_order_and_backpressure(void **state)
{
	struct fake f;
	struct tcx_nlpipe *p;
	const void *buf;
	uint32_t next = 0;
	ssize_t n;

	fake_init(&f);
	for (int i = 0; i < 19; i++)
		fake_add(&f, (struct step){.msgs = 3});
	fake_add(&f, (struct step){.msgs = 2, .end = 1});
	p = tcx_nlpipe_new(fake_read, &f, BUFSZ, 3);
	assert_non_null(p);

	tcx_nlpipe_start(p);
	for (int i = 0; i < 20; i++) {
		n = tcx_nlpipe_next(p, &buf);
		if (i % 5 == 0) {
			/* a slow parser: the reader fills the ring and waits */
			struct timespec ts = {0, 2 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
		check_chunk(&f, buf, n, i == 19 ? 2 : 3, &next);
	}
	assert_int_equal(next, 59);
	assert_int_equal(tcx_nlpipe_next(p, &buf), 0);
	assert_int_equal(tcx_nlpipe_next(p, &buf), 0);
	assert_int_equal(tcx_nlpipe_drain(p), 0);
	assert_int_equal(f.reads, 20);
	assert_true(f.max_ahead <= 3);
	assert_true(f.max_ahead >= 2); /* the ring was used, not one chunk at a time */

	/* a second reply, ended by NLMSG_ERROR */
	fake_add(&f, (struct step){.msgs = 1});
	fake_add(&f, (struct step){.end = 2});
	tcx_nlpipe_start(p);
	n = tcx_nlpipe_next(p, &buf);
	check_chunk(&f, buf, n, 1, &next);
	n = tcx_nlpipe_next(p, &buf);
	assert_true(n > 0);
	assert_int_equal(((const struct nlmsghdr *)buf)->nlmsg_type, NLMSG_ERROR);
	assert_int_equal(tcx_nlpipe_next(p, &buf), 0);
	assert_int_equal(f.reads, 22);
	tcx_nlpipe_free(p);
	assert_int_equal(f.overrun, 0);
}

/* A read that fails ends the reply with its errno, after the chunks read
 * before it. */
static void test_read_error(void **state)
{
	struct fake f;
	struct tcx_nlpipe *p;
	const void *buf;
	uint32_t next = 0;

	fake_init(&f);
	fake_add(&f, (struct step){.msgs = 4});
	fake_add(&f, (struct step){.msgs = 4});
	fake_add(&f, (struct step){.err = EAGAIN});
	p = tcx_nlpipe_new(fake_read, &f, BUFSZ, 4);
	assert_non_null(p);
	tcx_nlpipe_start(p);
	take(p, &f, 4, &next);
	take(p, &f, 4, &next);
	assert_int_equal(tcx_nlpipe_next(p, &buf), -EAGAIN);
	assert_int_equal(tcx_nlpipe_next(p, &buf), 0);
	assert_int_equal(f.reads, 3);
	tcx_nlpipe_free(p);
	assert_int_equal(f.overrun, 0);
}

/* A parser that gives up early drains the rest of the reply, so that the
 * next request starts on a clean socket; a malformed chunk ends it. */
static void test_drain(void **state)
{
	struct fake f;
	struct tcx_nlpipe *p;
	const void *buf;
	uint32_t next = 0;

	fake_init(&f);
	for (int i = 0; i < 9; i++)
		fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.msgs = 1, .end = 1});
	p = tcx_nlpipe_new(fake_read, &f, BUFSZ, 2);
	assert_non_null(p);
	tcx_nlpipe_start(p);
	take(p, &f, 2, &next);
	take(p, &f, 2, &next);
	assert_int_equal(tcx_nlpipe_drain(p), 0);
	assert_int_equal(f.reads, 10);
	assert_int_equal(tcx_nlpipe_next(p, &buf), 0);
	assert_int_equal(f.serial, 19); /* every message was read off the socket */
	next = f.serial;

	/* a reply cut short by a fragment, then drained: its chunk is the end */
	fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.msgs = 1, .trunc = 1});
	tcx_nlpipe_start(p);
	take(p, &f, 2, &next);
	assert_int_equal(tcx_nlpipe_drain(p), 0);
	assert_int_equal(f.reads, 12);

	/* a drain that meets a failed read reports it */
	fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.err = ENOBUFS});
	tcx_nlpipe_start(p);
	assert_int_equal(tcx_nlpipe_drain(p), -ENOBUFS);
	assert_int_equal(f.reads, 15);

	/* freeing a pipe in the middle of a reply drains it first */
	fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.msgs = 2});
	fake_add(&f, (struct step){.end = 1});
	tcx_nlpipe_start(p);
	tcx_nlpipe_free(p);
	assert_int_equal(f.reads, 18);
	assert_int_equal(f.overrun, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_chunk_ends),
	        cmocka_unit_test(test_bad_args),
	        cmocka_unit_test(test_order_and_backpressure),
	        cmocka_unit_test(test_read_error),
	        cmocka_unit_test(test_drain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
