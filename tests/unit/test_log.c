/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Log lines on stderr: sd-daemon(3) priority prefixes ("<3>") when stderr is
 * the journal stream that JOURNAL_STREAM names, plain lines otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/log.h"

/* stderr is a fresh temporary file for each test, the real one kept here. */
static int saved_stderr = -1;

static int setup(void **state)
{
	FILE *f = tmpfile();

	if (!f)
		return -1;
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 || dup2(fileno(f), STDERR_FILENO) < 0)
		return -1;
	fclose(f);
	unsetenv("JOURNAL_STREAM");
	return 0;
}

static void restore_stderr(void)
{
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
}

static int teardown(void **state)
{
	restore_stderr();
	close(saved_stderr);
	unsetenv("JOURNAL_STREAM");
	return 0;
}

/* What was logged to stderr, which is the real one again (for cmocka's
 * messages). */
static const char *logged(void)
{
	static char text[4096];
	ssize_t n;

	fflush(stderr);
	n = pread(STDERR_FILENO, text, sizeof(text) - 1, 0);
	restore_stderr();
	assert_true(n >= 0);
	text[n] = '\0';
	return text;
}

/* JOURNAL_STREAM set to the DEVICE:INODE of fd. */
static void journal_stream_is(int fd)
{
	struct stat st;
	char v[64];

	assert_int_equal(fstat(fd, &st), 0);
	snprintf(v, sizeof(v), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	assert_int_equal(setenv("JOURNAL_STREAM", v, 1), 0);
}

static void log_each_level(void)
{
	log_err("broken %d", 1);
	log_warnx("odd");
	log_info("fine");
	log_debug("not logged");
}

static void test_journal_prefixes(void **state)
{
	journal_stream_is(STDERR_FILENO);
	log_each_level();
	assert_string_equal(logged(), "<3>tcexporter: error: broken 1\n"
	                              "<4>tcexporter: warning: odd\n"
	                              "<6>tcexporter: info: fine\n");
}

static void test_no_journal(void **state)
{
	log_each_level();
	assert_string_equal(logged(), "tcexporter: error: broken 1\n"
	                              "tcexporter: warning: odd\n"
	                              "tcexporter: info: fine\n");
}

/* JOURNAL_STREAM inherited by a process whose stderr went elsewhere (a
 * shell started from a unit, redirected to a file): no prefixes. */
static void test_other_stream(void **state)
{
	FILE *other = tmpfile();

	assert_non_null(other);
	journal_stream_is(fileno(other));
	log_err("broken %d", 2);
	fclose(other);
	assert_string_equal(logged(), "tcexporter: error: broken 2\n");
}

/* A value that is not DEVICE:INODE names no stream, even when its numbers
 * are stderr's. */
static void test_malformed(void **state)
{
	struct stat st;
	char v[80];
	const char *bad[] = {"", ":", "1", "1:", ":1", "x:1", "1:2:3", "-1:-1"};

	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(setenv("JOURNAL_STREAM", bad[i], 1), 0);
		log_err("case %zu", i);
	}
	snprintf(v, sizeof(v), "%ju:%ju ", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	assert_int_equal(setenv("JOURNAL_STREAM", v, 1), 0);
	log_err("trailing space");
	assert_string_equal(logged(), "tcexporter: error: case 0\n"
	                              "tcexporter: error: case 1\n"
	                              "tcexporter: error: case 2\n"
	                              "tcexporter: error: case 3\n"
	                              "tcexporter: error: case 4\n"
	                              "tcexporter: error: case 5\n"
	                              "tcexporter: error: case 6\n"
	                              "tcexporter: error: case 7\n"
	                              "tcexporter: error: trailing space\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_journal_prefixes, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_no_journal, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_other_stream, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
