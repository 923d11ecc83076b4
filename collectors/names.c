/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "collectors/names.h"

const char *tcx_mode_name(enum tcx_dump_mode m)
{
	switch (m) {
	case TCX_MODE_TERSE:
		return "terse";
	case TCX_MODE_TERSE_REPAIR:
		return "terse+repair";
	case TCX_MODE_FULL:
		return "full";
	default:
		return "none";
	}
}

void tcx_flags_string(uint32_t flags, char *out, size_t outlen)
{
	static const char *const names[] = {"skip_hw", "skip_sw", "in_hw", "not_in_hw"};
	size_t n = 0;

	if (!outlen)
		return;
	for (unsigned i = 0; i < 4; i++) {
		size_t len = strlen(names[i]);

		if (!(flags & (1u << i)) || n + len + 2 > outlen)
			continue;
		if (n)
			out[n++] = ',';
		memcpy(out + n, names[i], len);
		n += len;
	}
	out[n] = '\0';
}
