/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Time helpers for every part of the tree (header only, no dependencies):
 * clocks read in seconds or milliseconds, and timespec arithmetic. */
#ifndef TCX_LIB_CLOCK_H
#define TCX_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* A timespec in seconds. */
static inline double tcx_ts_s(struct timespec ts)
{
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Now on clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...), in seconds. */
static inline double tcx_clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return tcx_ts_s(ts);
}

/* Now on clock id, in whole milliseconds. */
static inline uint64_t tcx_clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Milliseconds on a clock (as tcx_clock_ms() counts them) as a timespec. */
static inline struct timespec tcx_ms_ts(uint64_t ms)
{
	return (struct timespec){.tv_sec = (time_t)(ms / 1000),
	                         .tv_nsec = (long)(ms % 1000) * 1000000};
}

/* ts plus s >= 0 seconds, with tv_nsec below one second. */
static inline struct timespec tcx_ts_add(struct timespec ts, double s)
{
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
