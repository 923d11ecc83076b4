/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counter tables (collectors/counters.h): what every stage relies on
 * when it walks them, and the rules written once there. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <linux/gen_stats.h>
#include <string.h>

#include "collectors/counters.h"
#include "collectors/snapshot.h"

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* Every row of a table can be read by every stage: the exposition order is
 * a permutation, names and columns are distinct, widths and sources are
 * ones the decoder reads (its buffer holds 32 bytes of a struct), switches
 * exist. */
static void check_table(const struct tcx_counter_table *t, const char *prefix)
{
	unsigned seen_expo = 0;

	assert_true(t->n > 0 && t->n <= 32); /* masks of counters are 32-bit */
	for (unsigned k = 0; k < t->n; k++) {
		const struct tcx_counter_def *d = &t->def[k];

		assert_non_null(d->key);
		assert_non_null(d->help);
		assert_true(!strncmp(d->family, prefix, strlen(prefix)));
		assert_int_equal(ends_with(d->family, "_total"), d->type == TCX_METRIC_COUNTER);
		/* units (config/xstats.c's rule): the gauges here are levels of
		 * bytes or packets, or rates; a count of bytes ends in _bytes_total */
		if (d->type == TCX_METRIC_GAUGE)
			assert_true(ends_with(d->family, "_bytes") ||
			            ends_with(d->family, "_packets") ||
			            ends_with(d->family, "_per_second"));
		/* an optional counter is not in SNMP (no absent instance there) */
		if (d->optional)
			assert_int_equal(d->snmp, TCX_SNMP_NONE);
		if (strstr(d->key, "bytes") && !ends_with(d->family, "_per_second"))
			assert_true(ends_with(d->family, d->type == TCX_METRIC_GAUGE
			                                         ? "_bytes"
			                                         : "_bytes_total"));
		assert_true(d->width == 32 || d->width == 64);
		assert_true(d->sw < TCX_SW__MAX);
		assert_true(d->expo < t->n);
		assert_false(seen_expo & (1u << d->expo));
		seen_expo |= 1u << d->expo;
		assert_true(d->src.size == 4 || d->src.size == 8);
		assert_true(d->src.offset + d->src.size <= 32);
		assert_true(d->src.attr != TCA_STATS_PKT64);
		if (d->pkt64) /* the 64-bit value is not cut */
			assert_int_equal(d->width, 64);
		if (d->snmp == TCX_SNMP_COUNTER32)
			assert_int_equal(d->width, 32);
		assert_true(d->snmp == TCX_SNMP_NONE || d->snmp_col > 0);
		for (unsigned j = 0; j < k; j++) {
			assert_string_not_equal(t->def[j].key, d->key);
			assert_string_not_equal(t->def[j].family, d->family);
			assert_true(!d->snmp || t->def[j].snmp_col != d->snmp_col);
		}
	}
	assert_int_equal(seen_expo, (t->n == 32 ? 0 : 1u << t->n) - 1);
}

static void test_action_table(void **state)
{
	const struct tcx_counter_table *t = &tcx_action_counters;

	check_table(t, "tc_action_");
	assert_int_equal(t->n, TCX_ACT_CTR__MAX);
	assert_string_equal(t->def[TCX_ACT_BYTES].key, "bytes");
	assert_string_equal(t->def[TCX_ACT_OVERLIMITS].family, "tc_action_overlimits_total");
	/* an action is known again by its bytes and packets */
	for (unsigned k = 0; k < t->n; k++)
		assert_int_equal(t->def[k].replace, k == TCX_ACT_BYTES || k == TCX_ACT_PACKETS);
}

/* The switch names are the configuration's keys: distinct, every one. */
static void test_switches(void **state)
{
	assert_null(tcx_family_switches[TCX_SW_NONE].name);
	for (unsigned sw = 1; sw < TCX_SW__MAX; sw++) {
		assert_non_null(tcx_family_switches[sw].name);
		for (unsigned o = 1; o < sw; o++)
			assert_string_not_equal(tcx_family_switches[o].name,
			                        tcx_family_switches[sw].name);
	}
	assert_string_equal(tcx_family_switches[TCX_SW_HW].name, "hw");
	assert_string_equal(tcx_family_switches[TCX_SW_FLAGS].name, "flags");
}

/* What a switch left out means, with and without `aggregate`; what is set
 * stays as set. */
static void test_switch_mode(void **state)
{
	assert_int_equal(tcx_switch_mode(TCX_SW_NONE, TCX_FAM_OFF, 0), TCX_FAM_ON);
	assert_int_equal(tcx_switch_mode(TCX_SW_HW, TCX_FAM_DEFAULT, 0), TCX_FAM_AUTO);
	assert_int_equal(tcx_switch_mode(TCX_SW_HW, TCX_FAM_DEFAULT, 1), TCX_FAM_AUTO);
	assert_int_equal(tcx_switch_mode(TCX_SW_HW, TCX_FAM_OFF, 0), TCX_FAM_OFF);
	assert_int_equal(tcx_switch_mode(TCX_SW_FLAGS, TCX_FAM_DEFAULT, 0), TCX_FAM_ON);
	assert_int_equal(tcx_switch_mode(TCX_SW_FLAGS, TCX_FAM_DEFAULT, 1), TCX_FAM_OFF);
	assert_int_equal(tcx_switch_mode(TCX_SW_FLAGS, TCX_FAM_ON, 1), TCX_FAM_ON);
	assert_int_equal(tcx_switch_mode(TCX_SW_DROPS, TCX_FAM_DEFAULT, 1), TCX_FAM_ON);
	assert_int_equal(tcx_switch_mode(TCX_SW_OVERLIMITS, TCX_FAM_OFF, 1), TCX_FAM_OFF);
}

/* Another action under the same identity: bytes or packets went down, or
 * the action index changed (both known). Drops or overlimits going down
 * alone are a reset, not another action. */
static void test_action_replaced(void **state)
{
	uint64_t was[TCX_ACT_CTR__MAX] = {0}, now[TCX_ACT_CTR__MAX];

	for (unsigned k = 0; k < TCX_ACT_CTR__MAX; k++)
		was[k] = 100;
	memcpy(now, was, sizeof(now));
	assert_false(tcx_action_replaced(was, 7, now, 7));
	assert_false(tcx_action_replaced(was, 0, now, 8)); /* index unknown before */
	assert_false(tcx_action_replaced(was, 7, now, 0)); /* unknown now (terse) */
	assert_true(tcx_action_replaced(was, 7, now, 8));
	now[TCX_ACT_DROPS] = now[TCX_ACT_OVERLIMITS] = now[TCX_ACT_HW_BYTES] = 1;
	assert_false(tcx_action_replaced(was, 7, now, 7));
	now[TCX_ACT_PACKETS] = 99;
	assert_true(tcx_action_replaced(was, 7, now, 7));
	now[TCX_ACT_PACKETS] = 100;
	now[TCX_ACT_BYTES] = 99;
	assert_true(tcx_action_replaced(was, 7, now, 7));
}

/* Sums wrap in the counter's width, as the kernel's counter does. */
static void test_counter_add(void **state)
{
	const struct tcx_counter_def *d = tcx_action_counters.def;

	assert_int_equal(tcx_counter_add(&d[TCX_ACT_DROPS], UINT32_MAX, 3), 2);
	assert_int_equal(tcx_counter_add(&d[TCX_ACT_PACKETS], UINT32_MAX, 3),
	                 (uint64_t)UINT32_MAX + 3);
	assert_int_equal(tcx_counter_add(&d[TCX_ACT_BYTES], UINT64_MAX, 3), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_action_table), cmocka_unit_test(test_switches),
	        cmocka_unit_test(test_switch_mode),  cmocka_unit_test(test_action_replaced),
	        cmocka_unit_test(test_counter_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
