/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Time helpers for every part of the tree (header only, no dependencies):
 * clocks read in seconds or milliseconds, timespec arithmetic, and condition
 * variables whose timed waits run on the monotonic clock. */
#ifndef TCX_LIB_CLOCK_H
#define TCX_LIB_CLOCK_H

#include <pthread.h>
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

/* A condition variable whose timed waits end by CLOCK_MONOTONIC, not by the
 * wall clock (which NTP or an operator may step): deadlines for it are read
 * with clock_gettime(CLOCK_MONOTONIC). */
static inline void tcx_cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

#endif
