/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The output buffer's failures: every function that fails returns -errno
 * (sinks included), and b->err keeps the errno of the first failure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"

static int calls;

static int failing_sink(void *arg, const char *p, size_t len)
{
	calls++;
	return -EIO;
}

/* More than the buffer holds, so that putting it flushes. */
static void put_a_lot(struct tcx_buf *b)
{
	static char block[64 * 1024];

	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 16; i++)
		tcx_buf_put(b, block, sizeof(block));
}

static void test_sink_failure(void **state)
{
	struct tcx_buf b;

	calls = 0;
	assert_int_equal(tcx_buf_init_sink(&b, failing_sink, NULL), 0);
	put_a_lot(&b);
	assert_int_equal(calls, 1); /* later writes are ignored */
	assert_int_equal(b.err, EIO);
	assert_int_equal(tcx_buf_reserve(&b, 1), -EIO);
	assert_int_equal(tcx_buf_flush(&b), -EIO);
	assert_int_equal(calls, 1);
	tcx_buf_free(&b);
}

/* /dev/full: the write fails at the flush, or while putting fills the buffer. */
static void test_fd_failure(void **state)
{
	for (int putting = 0; putting < 2; putting++) {
		int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
		struct tcx_buf b;

		if (fd < 0)
			skip();
		assert_int_equal(tcx_buf_init_fd(&b, fd), 0);
		if (putting)
			put_a_lot(&b);
		else
			tcx_buf_puts(&b, "one line\n");
		assert_int_equal(tcx_buf_flush(&b), -ENOSPC);
		assert_int_equal(b.err, ENOSPC);
		assert_int_equal(tcx_buf_reserve(&b, 1), -ENOSPC);
		tcx_buf_free(&b);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_sink_failure),
	        cmocka_unit_test(test_fd_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
