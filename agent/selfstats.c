/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/selfstats.h"

const unsigned tcx_http_codes[TCX_HTTP_CODES] = {200, 400, 401, 403, 404, 405, 413,
                                                 414, 429, 431, 503, 505, 0};

const char *const tcx_accept_causes[TCX_ACCEPT_CAUSES] = {"resource", "other"};

const char *const tcx_cut_reasons[TCX_CUT__MAX] = {"render", "memory"};

const char *const tcx_refuse_reasons[TCX_REFUSE__MAX] = {"render", "password_queue",
                                                         "password_rate", "bytes"};

unsigned tcx_http_code_slot(unsigned code)
{
	for (unsigned i = 0; i + 1 < TCX_HTTP_CODES; i++)
		if (tcx_http_codes[i] == code)
			return i;
	return TCX_HTTP_CODES - 1;
}

int tcx_process_parse_stat(const char *stat, long ticks, long page, double boot_time,
                           struct tcx_process_stats *out)
{
	/* the name (field 2) is in parentheses and may hold any byte: the
	 * fields counted from 3 follow its last ')' */
	const char *p = strrchr(stat, ')');
	unsigned long long v[21];
	unsigned n = 0;

	if (!p || ticks <= 0 || page <= 0)
		return -1;
	p++;
	/* field 3 is the state, a letter; then numbers (some negative) */
	while (*p == ' ')
		p++;
	if (!*p || *p == ' ')
		return -1;
	p++;
	while (n < 21) {
		char *end;

		if (*p != ' ')
			return -1;
		errno = 0;
		v[n] = strtoull(p + 1, &end, 10);
		if (end == p + 1 || errno)
			return -1;
		p = end;
		n++;
	}
	/* v[i] is field i + 4: utime 14, stime 15, starttime 22, vsize 23, rss 24 */
	out->cpu_seconds = (double)(v[10] + v[11]) / (double)ticks;
	out->start_time_seconds = boot_time + (double)v[18] / (double)ticks;
	out->virtual_bytes = v[19];
	out->resident_bytes = v[20] * (unsigned long long)page;
	return 0;
}

/* The whole of a small /proc file, NUL-terminated; returns its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (n < 0)
		return -1;
	buf[len] = '\0';
	return (ssize_t)len;
}

/* /proc/stat's btime, line by line: its intr line alone can weigh tens of
 * kilobytes. */
static int boot_time(double *out)
{
	FILE *f = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = -1;

	if (!f)
		return -1;
	while (ret < 0 && getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "btime ", 6)) {
			*out = strtod(line + 6, NULL);
			ret = 0;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

void tcx_process_stats_read(struct tcx_process_stats *out)
{
	char buf[1024];
	struct rlimit rl;
	struct dirent *d;
	double btime;
	DIR *dir;

	memset(out, 0, sizeof(*out));
	if (read_small("/proc/self/stat", buf, sizeof(buf)) < 0 || boot_time(&btime) < 0 ||
	    tcx_process_parse_stat(buf, sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), btime, out) <
	            0 ||
	    getrlimit(RLIMIT_NOFILE, &rl) < 0 || !(dir = opendir("/proc/self/fd")))
		return;
	out->max_fds = rl.rlim_cur;
	while ((d = readdir(dir)))
		out->open_fds += d->d_name[0] != '.' && atoi(d->d_name) != dirfd(dir);
	closedir(dir);
	out->ok = 1;
}
