/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The floor of the config loader benchmark (tests/bench/config_bench.sh): the
 * least work any libyaml loader must do. The whole file is read into memory
 * as tcexporter reads it, then parsed into events with libyaml's event API,
 * each event deleted at once; nothing is kept but the count, printed on
 * standard error.
 *
 * Usage: yaml_floor FILE */
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

int main(int argc, char **argv)
{
	yaml_parser_t parser;
	yaml_event_t e;
	unsigned long n = 0;
	size_t len;
	long size;
	char *buf;
	FILE *f;
	int done = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: yaml_floor FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(argv[1]);
		return 1;
	}
	buf = malloc((size_t)size + 1);
	if (!buf || (len = fread(buf, 1, (size_t)size, f)) != (size_t)size) {
		fprintf(stderr, "%s: cannot read\n", argv[1]);
		return 1;
	}
	fclose(f);
	if (!yaml_parser_initialize(&parser))
		return 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&parser, &e)) {
			fprintf(stderr, "%s: YAML error: %s\n", argv[1], parser.problem);
			return 1;
		}
		done = e.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&e);
		n++;
	}
	yaml_parser_delete(&parser);
	free(buf);
	fprintf(stderr, "%lu events\n", n);
	return 0;
}
