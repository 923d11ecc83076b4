/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What this tcexporter was built from and with: tc_exporter_build_info and
 * --version. */
#ifndef TCX_BUILDINFO_H
#define TCX_BUILDINFO_H

enum tcx_build_field {
	TCX_BUILD_VERSION,       /* tcexporter's */
	TCX_BUILD_REVISION,      /* the git commit built, "unknown" outside a checkout */
	TCX_BUILD_LIBMNL,        /* pkg-config's at configure time (it has no call) */
	TCX_BUILD_LIBMICROHTTPD, /* MHD_get_version() */
	TCX_BUILD_NETSNMP,       /* netsnmp_get_version(), "none" without SNMP */
	TCX_BUILD_GZIP,          /* the gzip codec, "isa-l/V" or "zlib/V" (built against) */
	TCX_BUILD__MAX,
};

/* The label of each field in tc_exporter_build_info. */
extern const char *const tcx_build_labels[TCX_BUILD__MAX];
/* The name of each field in --version. */
extern const char *const tcx_build_names[TCX_BUILD__MAX];

/* The value of each field. */
void tcx_build_info(const char *out[TCX_BUILD__MAX]);

#endif
