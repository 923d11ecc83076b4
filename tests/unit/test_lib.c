/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helpers of lib/: time (clock.h), array growth (grow.h) and the
 * intrusive list (list.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "lib/list.h"

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

/* An element with its node not first, as the users embed it. */
struct item {
	int v;
	struct tcx_list node;
};

/* The values of l, first to last, and (checked the same) last to first. */
static void check_list(struct tcx_list *l, const int *want, size_t n)
{
	struct item *e;
	size_t i = 0;

	tcx_list_for_each(e, l, struct item, node) {
		assert_true(i < n);
		assert_int_equal(e->v, want[i]);
		i++;
	}
	assert_int_equal(i, n);
	tcx_list_for_each_reverse(e, l, struct item, node) {
		assert_true(i > 0);
		i--;
		assert_int_equal(e->v, want[i]);
	}
	assert_int_equal(i, 0);
	assert_int_equal(tcx_list_empty(l), n == 0);
	if (n)
		assert_int_equal(tcx_list_first(l, struct item, node)->v, want[0]);
	else
		assert_null(tcx_list_first(l, struct item, node));
}

static void test_list(void **state)
{
	struct item it[5] = {{.v = 0}, {.v = 1}, {.v = 2}, {.v = 3}, {.v = 4}};
	struct tcx_list l;

	(void)state;
	tcx_list_init(&l);
	check_list(&l, NULL, 0);
	tcx_list_push_back(&l, &it[1].node);
	tcx_list_push_back(&l, &it[2].node);
	tcx_list_push_front(&l, &it[0].node);
	check_list(&l, (int[]){0, 1, 2}, 3);
	assert_ptr_equal(tcx_list_entry(&it[3].node, struct item, node), &it[3]);
	tcx_list_insert_after(&it[1].node, &it[3].node); /* in the middle */
	tcx_list_insert_after(l.prev, &it[4].node);      /* after the last */
	check_list(&l, (int[]){0, 1, 3, 2, 4}, 5);
	tcx_list_remove(&it[3].node); /* the middle */
	check_list(&l, (int[]){0, 1, 2, 4}, 4);
	assert_true(tcx_list_empty(&it[3].node)); /* on no list */
	tcx_list_remove(&it[3].node);             /* again: nothing */
	check_list(&l, (int[]){0, 1, 2, 4}, 4);
	tcx_list_remove(&it[0].node); /* the first */
	tcx_list_remove(&it[4].node); /* the last */
	check_list(&l, (int[]){1, 2}, 2);
	tcx_list_remove(&it[1].node);
	tcx_list_remove(&it[2].node);
	check_list(&l, NULL, 0);
	tcx_list_push_front(&l, &it[2].node); /* usable again once empty */
	check_list(&l, (int[]){2}, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_ts_s),  cmocka_unit_test(test_ts_add),
	        cmocka_unit_test(test_ms_ts), cmocka_unit_test(test_clock),
	        cmocka_unit_test(test_grow),  cmocka_unit_test(test_grow_overflow),
	        cmocka_unit_test(test_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
