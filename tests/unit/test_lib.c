/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helpers of lib/: time (clock.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "lib/clock.h"

static void test_ts_s(void **state)
{
	(void)state;
	assert_true(tcx_ts_s((struct timespec){.tv_sec = 3, .tv_nsec = 250000000}) == 3.25);
	assert_true(tcx_ts_s((struct timespec){0}) == 0);
}

/* Adding seconds carries nanoseconds into seconds, and keeps the fraction. */
static void test_ts_add(void **state)
{
	struct timespec t;

	(void)state;
	t = tcx_ts_add((struct timespec){.tv_sec = 10, .tv_nsec = 900000000}, 5.25);
	assert_int_equal(t.tv_sec, 16);
	assert_int_equal(t.tv_nsec, 150000000);
	t = tcx_ts_add((struct timespec){.tv_sec = 10, .tv_nsec = 100000000}, 0.5);
	assert_int_equal(t.tv_sec, 10);
	assert_int_equal(t.tv_nsec, 600000000);
	t = tcx_ts_add((struct timespec){.tv_sec = 1, .tv_nsec = 999999999}, 2);
	assert_int_equal(t.tv_sec, 3);
	assert_int_equal(t.tv_nsec, 999999999);
}

static void test_ms_ts(void **state)
{
	struct timespec t = tcx_ms_ts(12345);

	(void)state;
	assert_int_equal(t.tv_sec, 12);
	assert_int_equal(t.tv_nsec, 345000000);
}

/* The readings in seconds and in milliseconds are of one clock. */
static void test_clock(void **state)
{
	double s0 = tcx_clock_s(CLOCK_MONOTONIC);
	uint64_t ms = tcx_clock_ms(CLOCK_MONOTONIC);
	double s1 = tcx_clock_s(CLOCK_MONOTONIC);

	(void)state;
	assert_true(s0 <= s1);
	assert_true((double)ms / 1000 >= s0 - 0.001 && (double)ms / 1000 <= s1);
	assert_true(tcx_clock_s(CLOCK_REALTIME) > 1.5e9); /* after 2017 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_ts_s),
	        cmocka_unit_test(test_ts_add),
	        cmocka_unit_test(test_ms_ts),
	        cmocka_unit_test(test_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
