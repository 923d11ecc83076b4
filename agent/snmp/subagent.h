/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The AgentX subagent serving TCEXPORTER-MIB (mibs/TCEXPORTER-MIB.txt). */
#ifndef TCX_SNMP_H
#define TCX_SNMP_H

#include <stdatomic.h>

#include "collectors/snapshot.h"
#include "config/config.h"

struct tcx_snmp;

/* Start the subagent thread. current() returns a reference to the latest
 * snapshot (or NULL before the first); it is called from that thread. */
struct tcx_snmp *tcx_snmp_start(const struct tcx_snmp_cfg *cfg,
                                struct tcx_snapshot *(*current)(void *), void *arg);
/* A new snapshot was published (any thread). */
void tcx_snmp_notify(struct tcx_snmp *sn);
void tcx_snmp_stop(struct tcx_snmp *sn);

#endif
