/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LD_PRELOAD shim for tests/daemon/clock_step.sh: clock_gettime() reads
 * CLOCK_REALTIME TCX_REALTIME_SHIFT seconds ahead (an integer, may be
 * negative); every other clock, and the kernel's own clocks that timed
 * waits end by, are untouched. A process that reads the wall clock and then
 * waits until a wall-clock time sees what a wall clock stepped back by the
 * shift between the two looks like. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t id, struct timespec *ts)
{
	const char *shift = getenv("TCX_REALTIME_SHIFT");
	long ret = syscall(SYS_clock_gettime, id, ts);

	if (ret == 0 && id == CLOCK_REALTIME && shift)
		ts->tv_sec += strtol(shift, NULL, 10);
	return (int)ret;
}
