/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs a fuzz harness over files, without libFuzzer: `replay_X DIR|FILE...`
 * feeds every regular file (a directory's files in name order) to
 * LLVMFuzzerTestOneInput() once. Any input that crashes the harness crashes
 * this program. Prints the number of inputs; exits 1 when an argument cannot
 * be read. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/fuzz/fuzz.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *data = NULL;
	size_t len = 0;
	int ret = -1;

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		goto out;
	}
	/* Exactly the input's size, so that ASan catches a read past it. */
	len = (size_t)st.st_size;
	data = malloc(len ? len : 1);
	if (!data) {
		fprintf(stderr, "replay: %s: out of memory\n", path);
		goto out;
	}
	if (fread(data, 1, len, f) != len) {
		fprintf(stderr, "replay: %s: short read\n", path);
		goto out;
	}
	LLVMFuzzerTestOneInput(data, len);
	ret = 0;
out:
	free(data);
	if (f)
		fclose(f);
	return ret;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_dir(const char *dir, unsigned *count)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, by_name), ret = 0;

	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (ret == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    ents[i]->d_name[0] != '.') {
			if (replay_file(path) < 0)
				ret = -1;
			else
				(*count)++;
		}
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) < 0
		                        : (replay_file(argv[i]) < 0 || !++count))
			return 1;
	}
	printf("replayed %u inputs\n", count);
	return 0;
}
