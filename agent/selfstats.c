/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "agent/selfstats.h"

const unsigned tcx_http_codes[TCX_HTTP_CODES] = {200, 400, 401, 403, 404, 405,
                                                 413, 414, 431, 503, 505, 0};

unsigned tcx_http_code_slot(unsigned code)
{
	for (unsigned i = 0; i + 1 < TCX_HTTP_CODES; i++)
		if (tcx_http_codes[i] == code)
			return i;
	return TCX_HTTP_CODES - 1;
}
