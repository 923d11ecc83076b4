/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef TCX_CLI_H
#define TCX_CLI_H

/* Exit statuses. */
#define TCX_EXIT_OK      0 /* every target collected */
#define TCX_EXIT_PARTIAL 1 /* some target failed, or output could not be written */
#define TCX_EXIT_USAGE   2 /* bad usage or bad configuration */
/* The daemon exits 1 on a runtime failure (a port it cannot listen on), 2 for
 * a bad configuration. */

int tcx_main(int argc, char **argv);

#endif
