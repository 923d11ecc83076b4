#!/bin/bash
# The TimeStamps of TCEXPORTER-MIB (tcxActionTableLastChange,
# tcxLastCollectionTime, tcxActionDiscontinuityTime) follow the master's
# sysUpTime across snmpd restarts (RFC 2579: the value of sysUpTime at the
# event, 0 for an event before the master's last (re)start). Root: a private
# network namespace and a private snmpd, as in walk.sh; ping_interval 1 s.
#
#  (a) snmpd, then tcexporter with two filters (cookies 02, 03: rows of the
#      first collection, discontinuity 0). Once snmpd's sysUpTime is past
#      5 s, a filter with cookie 04 is added: its row has a discontinuity
#      time above 0, and so has the table's last change.
#  (b) snmpd restarts; once the subagent is back, a walk: every TimeStamp is
#      at most sysUpTime (read after the walk); row 04 and the last change
#      came before the restart: 0.
#  (c) a filter with cookie 05 is added: its discontinuity time and the
#      last change are above 0 again, and not later than sysUpTime.
#  (d) tcexporter starts while snmpd is down and snmpd 2 s later: the rows
#      of the first collection were made before the master started: a last
#      change of 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_TIMESTAMPS_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup

note "topology: v0 (clsact), u32 filters with mirred actions and cookies 02, 03"
veth m0 m0p
veth v0 v0p
filt() { # PREF: a filter whose action has the cookie 0PREF
	tc filter add dev v0 ingress pref "$1" protocol ip u32 match ip dst "10.6.0.$1/32" \
		action mirred egress mirror dev m0 cookie "0$1" ||
		skip "cannot add a u32 filter with a mirred action"
}
tc qdisc add dev v0 clsact || skip "no clsact qdisc in this kernel"
filt 2
filt 3

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 1s "targets: [{dev: v0, parent: ingress}]"

# check N ARGS...: walk into $WORK/walkN.txt, then read sysUpTime, and
# snmpcmp check-timestamps with ARGS.
check() {
	local n=$1 up
	shift
	walk "$WORK/walk$n.txt"
	up=$(timeticks "$OID_SYSUPTIME")
	[ -n "$up" ] || fail "no sysUpTime from snmpd"
	snmpcmp check-timestamps --walk "$WORK/walk$n.txt" --uptime "$up" "$@" ||
		fail "walk $n: a TimeStamp is wrong (see above)"
}

note "(a) snmpd, then tcexporter; a filter added once snmpd has run 5 s"
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_tcx_rows 15 2 >/dev/null
deadline=$((SECONDS + 20))
until [ "$(timeticks "$OID_SYSUPTIME")" -ge 500 ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "snmpd's sysUpTime did not reach 5 s"
	sleep 0.2
done
filt 4
wait_tcx_rows 10 3 >/dev/null
check 1 --zero 02,03 --nonzero 04 --last-change nonzero

note "(b) snmpd restarts: the TimeStamps from before are 0"
stop_snmpd TERM
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 3 >/dev/null
check 2 --zero 02,03,04 --last-change zero

note "(c) a filter added after the restart"
filt 5
wait_tcx_rows 10 4 >/dev/null
check 3 --zero 02,03,04 --nonzero 05 --last-change nonzero
tcx_checks
stop_tcx_clean

note "(d) tcexporter first, snmpd 2 s later"
stop_snmpd TERM
rm -f "$AGENTX_SOCK"
start_tcx_http "$WORK/tcx.yaml"
sleep 2
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 4 >/dev/null
check 4 --zero 02,03,04,05 --last-change zero
tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "timestamps.sh: all checks passed in $(elapsed_ms) ms"
