/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The live source (nl.c): libmnl rtnetlink sockets, one per network
 * namespace, setns() for netns targets, and with each the namespace's
 * deletion notifications (notify.h) when asked for. */
#ifndef TCX_NL_H
#define TCX_NL_H

#include "collectors/collect.h"

extern const struct tcx_source_ops tcx_netlink_source;

#endif
