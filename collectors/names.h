/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Display names of what the collector finds and of how it dumps it, as the
 * renderers and the landing page print them. */
#ifndef TCX_NAMES_H
#define TCX_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/snapshot.h"

/* "terse", "terse+repair", "full", or "none". */
const char *tcx_mode_name(enum tcx_dump_mode m);
/* "skip_hw,in_hw" style list of filter flags, "" for none. */
void tcx_flags_string(uint32_t flags, char *out, size_t outlen);

#endif
