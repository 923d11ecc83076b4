/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "agent/cli.h"

int main(int argc, char **argv)
{
	return tcx_main(argc, argv);
}
