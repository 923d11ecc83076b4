/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Walking received datagrams (collectors/nlmsg.c): whole replies, replies
 * over several datagrams, and every length or status a peer could forge. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/nlmsg.h"
#include "tests/unit/nlbuild.h"

#define SEQ  7
#define PORT 4242

struct walk {
	struct tcx_nlreply r;
	uint64_t dropped[TCX_NLDROP__MAX];
	char err[256];
	int calls;      /* data messages seen */
	int stop_after; /* > 0: MNL_CB_STOP on that call */
	int fail_errno; /* > 0: MNL_CB_ERROR with this errno */
	/* every message handed over lies inside [buf, buf + len) */
	const char *buf;
	size_t len;
};

static int data_cb(const struct nlmsghdr *nlh, void *arg)
{
	struct walk *w = arg;
	const char *p = (const char *)nlh;

	assert_true(p >= w->buf && p + NLMSG_HDRLEN <= w->buf + w->len);
	assert_true(nlh->nlmsg_len >= NLMSG_HDRLEN &&
	            nlh->nlmsg_len <= (size_t)(w->buf + w->len - p));
	w->calls++;
	if (w->fail_errno) {
		errno = w->fail_errno;
		return MNL_CB_ERROR;
	}
	return w->stop_after && w->calls == w->stop_after ? MNL_CB_STOP : MNL_CB_OK;
}

static void walk_init(struct walk *w)
{
	memset(w, 0, sizeof(*w));
	w->r = (struct tcx_nlreply){.seq = SEQ,
	                            .portid = PORT,
	                            .cb = data_cb,
	                            .data = w,
	                            .dropped = w->dropped,
	                            .err = w->err,
	                            .errlen = sizeof(w->err)};
}

static int run(struct walk *w, const void *buf, size_t len)
{
	w->buf = buf;
	w->len = len;
	return tcx_nlmsg_reply(&w->r, buf, len);
}

/* A data message of 4 payload bytes at p: its aligned size. */
static size_t put_data(char *p, uint32_t seq, uint32_t pid)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)p;

	memset(p, 0, NLMSG_SPACE(4));
	nlh->nlmsg_len = NLMSG_LENGTH(4);
	nlh->nlmsg_type = 0x2c; /* RTM_NEWTFILTER */
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = pid;
	return NLMSG_SPACE(4);
}

static size_t put_done(char *p, int status)
{
	struct nlmsghdr *nlh = nlb_done(p, status);

	nlh->nlmsg_seq = SEQ;
	nlh->nlmsg_pid = PORT;
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

static size_t put_error(char *p, int status)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)p;
	struct nlmsgerr *e;

	memset(p, 0, NLMSG_SPACE(sizeof(*e)));
	nlh->nlmsg_len = NLMSG_LENGTH(sizeof(*e));
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	nlh->nlmsg_seq = SEQ;
	nlh->nlmsg_pid = PORT;
	e = NLMSG_DATA(nlh);
	e->error = status;
	return NLMSG_SPACE(sizeof(*e));
}

static void test_reply_over_two_datagrams(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n = 0;

	walk_init(&w);
	n += put_data(buf + n, SEQ, PORT);
	n += put_data(buf + n, 0, 0); /* 0 matches any sequence and port */
	assert_int_equal(run(&w, buf, n), 0);
	assert_int_equal(w.calls, 2);
	assert_false(w.r.done);

	n = put_data(buf, SEQ, PORT);
	n += put_done(buf + n, -EMSGSIZE);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.calls, 3);
	assert_true(w.r.done);
	assert_int_equal(w.r.status, -EMSGSIZE);

	/* An ACK (NLMSG_ERROR 0) ends a request cleanly. */
	walk_init(&w);
	n = put_error(buf, 0);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.r.status, 0);
	walk_init(&w);
	n = put_error(buf, -ENODEV);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.r.status, -ENODEV);
	assert_int_equal(w.dropped[TCX_NLDROP_LENGTH], 0);
}

/* The forged datagram of issue #9: 16 bytes whose nlmsg_len, 0xffff0062, is
 * negative as an int (libmnl 1.0.4 took it, and walked 4 GB on). */
static void test_overlong_length(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n;

	memset(buf, 0, 16);
	((struct nlmsghdr *)buf)->nlmsg_len = 0xffff0062;
	walk_init(&w);
	assert_int_equal(run(&w, buf, 16), -EBADMSG);
	assert_int_equal(w.calls, 0);
	assert_int_equal(w.dropped[TCX_NLDROP_LENGTH], 1);
	assert_string_equal(w.err, "netlink: message length 4294901858 at offset 0 runs past the "
	                           "end (16 bytes left in the datagram)");

	/* After a good message: that one is taken, the rest dropped. */
	walk_init(&w);
	n = put_data(buf, SEQ, PORT);
	memset(buf + n, 0, 16);
	((struct nlmsghdr *)(buf + n))->nlmsg_len = 0xffff0062;
	assert_int_equal(run(&w, buf, n + 16), -EBADMSG);
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.dropped[TCX_NLDROP_LENGTH], 1);

	/* One byte more than the datagram holds. */
	walk_init(&w);
	n = put_data(buf, SEQ, PORT);
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)n + 1;
	assert_int_equal(run(&w, buf, n), -EBADMSG);
	assert_int_equal(w.calls, 0);
}

static void test_short_length_and_stray_bytes(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n;

	/* A length below a header's would never move the walk on. */
	for (uint32_t len = 0; len < NLMSG_HDRLEN; len++) {
		walk_init(&w);
		n = put_data(buf, SEQ, PORT);
		((struct nlmsghdr *)buf)->nlmsg_len = len;
		assert_int_equal(run(&w, buf, n), -EBADMSG);
		assert_int_equal(w.calls, 0);
		assert_int_equal(w.dropped[TCX_NLDROP_LENGTH], 1);
	}
	assert_string_equal(w.err, "netlink: message length 15 at offset 0 is shorter than a "
	                           "header (20 bytes left in the datagram)");

	/* A tail shorter than a header. */
	walk_init(&w);
	n = put_data(buf, SEQ, PORT);
	assert_int_equal(run(&w, buf, n + 6), -EBADMSG);
	assert_int_equal(w.calls, 1);
	assert_string_equal(w.err, "netlink: 6 stray bytes after the last message");

	/* The last message may lack its padding: 17 bytes is a message. */
	walk_init(&w);
	put_data(buf, SEQ, PORT);
	((struct nlmsghdr *)buf)->nlmsg_len = NLMSG_HDRLEN + 1;
	assert_int_equal(run(&w, buf, NLMSG_HDRLEN + 1), 0);
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.dropped[TCX_NLDROP_LENGTH], 0);

	/* An empty datagram holds no message, and nothing wrong. */
	walk_init(&w);
	assert_int_equal(run(&w, buf, 0), 0);
}

/* INT_MIN has no positive twin: it is no errno, so the status message is
 * malformed (it used to be negated, then given to strerror()). */
static void test_int_min_status(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n;

	walk_init(&w);
	n = put_done(buf, INT_MIN);
	assert_int_equal(run(&w, buf, n), 1);
	assert_true(w.r.done);
	assert_int_equal(w.r.status, -EBADMSG);
	assert_string_equal(w.err, "malformed NLMSG_DONE");

	walk_init(&w);
	n = put_error(buf, INT_MIN);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.r.status, -EBADMSG);
	assert_string_equal(w.err, "malformed NLMSG_ERROR");

	/* Nor is any status beyond the kernel's MAX_ERRNO, either sign. */
	walk_init(&w);
	n = put_done(buf, 4096);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.r.status, -EBADMSG);
	walk_init(&w);
	n = put_done(buf, 4095);
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.r.status, -4095);
}

static void test_not_our_reply(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n;

	walk_init(&w);
	n = put_data(buf, SEQ + 1, PORT);
	assert_int_equal(run(&w, buf, n), -EPROTO);
	assert_string_equal(w.err, "netlink: a message of sequence 8, not of the request (7)");
	walk_init(&w);
	n = put_data(buf, SEQ, PORT + 1);
	assert_int_equal(run(&w, buf, n), -ESRCH);
	assert_int_equal(w.calls, 0);
	walk_init(&w);
	n = put_data(buf, SEQ, PORT);
	((struct nlmsghdr *)buf)->nlmsg_flags |= NLM_F_DUMP_INTR;
	assert_int_equal(run(&w, buf, n), -EINTR);
}

static void test_callback_results(void **state)
{
	_Alignas(4) char buf[512];
	struct walk w;
	size_t n = 0;

	n += put_data(buf + n, SEQ, PORT);
	n += put_data(buf + n, SEQ, PORT);
	n += put_data(buf + n, SEQ, PORT);
	walk_init(&w);
	w.stop_after = 2;
	assert_int_equal(run(&w, buf, n), 1);
	assert_int_equal(w.calls, 2);
	assert_false(w.r.done);

	walk_init(&w);
	w.fail_errno = ENOMEM;
	assert_int_equal(run(&w, buf, n), -ENOMEM);
	assert_int_equal(w.calls, 1);
}

/* tcx_nlmsg_next() on random lengths: every message it returns lies inside
 * the buffer, and the walk always ends (ASan checks the reads). */
static void test_random_lengths(void **state)
{
	uint32_t x = 12345;

	for (int round = 0; round < 20000; round++) {
		size_t len, off = 0, steps = 0;
		uint32_t *buf;
		const struct nlmsghdr *nlh;

		x = x * 1103515245u + 12345u;
		len = (x >> 8) % 129;
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memset(buf, 0, len);
		for (size_t i = 0; i < len / 4; i++) {
			x = x * 1103515245u + 12345u;
			/* Small lengths mostly, sometimes anything. */
			buf[i] = (x & 3) ? (x >> 16) % 80 : x;
		}
		while ((nlh = tcx_nlmsg_next(buf, len, &off))) {
			const char *p = (const char *)nlh;

			assert_true(p + nlh->nlmsg_len <= (const char *)buf + len);
			assert_true(nlh->nlmsg_len >= NLMSG_HDRLEN);
			assert_true(off <= len);
			assert_true(++steps <= len / NLMSG_HDRLEN);
		}
		assert_true(off <= len);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_reply_over_two_datagrams),
	        cmocka_unit_test(test_overlong_length),
	        cmocka_unit_test(test_short_length_and_stray_bytes),
	        cmocka_unit_test(test_int_min_status),
	        cmocka_unit_test(test_not_our_reply),
	        cmocka_unit_test(test_callback_results),
	        cmocka_unit_test(test_random_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
