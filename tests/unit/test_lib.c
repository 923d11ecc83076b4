/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helpers of lib/: time (clock.h) and array growth (grow.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lib/clock.h"
#include "lib/grow.h"

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

/* From empty to `first`, then by half again, or to what is wanted when that
 * is more; nothing moves while there is room. */
static void test_grow(void **state)
{
	uint32_t *a = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(tcx_grow(&a, &cap, 1, sizeof(*a), 16), 0);
	assert_non_null(a);
	assert_int_equal(cap, 16);
	for (uint32_t i = 0; i < 16; i++)
		a[i] = i;
	before = a;
	assert_int_equal(tcx_grow(&a, &cap, 16, sizeof(*a), 16), 0);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 16);
	assert_int_equal(tcx_grow(&a, &cap, 17, sizeof(*a), 16), 0);
	assert_int_equal(cap, 24);
	assert_int_equal(tcx_grow(&a, &cap, 100, sizeof(*a), 16), 0);
	assert_int_equal(cap, 100);
	for (uint32_t i = 0; i < 16; i++)
		assert_int_equal(a[i], i);
	free(a);
}

/* A size that does not fit in a size_t (here it would wrap around to 8
 * bytes) fails, and leaves the array alone. */
static void test_grow_overflow(void **state)
{
	uint64_t *a = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(tcx_grow(&a, &cap, 4, sizeof(*a), 4), 0);
	before = a;
	assert_int_equal(tcx_grow(&a, &cap, SIZE_MAX / sizeof(*a) + 2, sizeof(*a), 4), -1);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 4);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_ts_s),  cmocka_unit_test(test_ts_add),
	        cmocka_unit_test(test_ms_ts), cmocka_unit_test(test_clock),
	        cmocka_unit_test(test_grow),  cmocka_unit_test(test_grow_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
