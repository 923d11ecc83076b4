/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <microhttpd.h>

#include "agent/buildinfo.h"
#include "agent/render/gzip.h"
#include "build.h"
#include "revision.h" /* made by make at every build (Makefile.am) */

#ifdef HAVE_SNMP
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/version.h>
#endif

const char *const tcx_build_labels[TCX_BUILD__MAX] = {"version",         "revision",
                                                      "libmnl_version",  "libmicrohttpd_version",
                                                      "netsnmp_version", "gzip"};
const char *const tcx_build_names[TCX_BUILD__MAX] = {"version",       "revision", "libmnl",
                                                     "libmicrohttpd", "net-snmp", "gzip"};

void tcx_build_info(const char *out[TCX_BUILD__MAX])
{
	out[TCX_BUILD_VERSION] = PACKAGE_VERSION;
	out[TCX_BUILD_REVISION] = TCX_REVISION;
	out[TCX_BUILD_LIBMNL] = TCX_LIBMNL_VERSION;
	out[TCX_BUILD_LIBMICROHTTPD] = MHD_get_version();
#ifdef HAVE_SNMP
	out[TCX_BUILD_NETSNMP] = netsnmp_get_version();
#else
	out[TCX_BUILD_NETSNMP] = "none";
#endif
	out[TCX_BUILD_GZIP] = tcx_gzip_codec();
}
