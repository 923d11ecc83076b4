#!/bin/bash
# tcxClassTable, tcxClassLabelTable and tcxQdiscTable (issue 16) through a
# private snmpd:
# `snmpbulkwalk -v2c` of the TCEXPORTER-MIB subtree has one class row per
# class tc lists, with tc's counters and backlog, the device's ifIndex, the
# SMI type of every column and a discontinuity time of 0, and the user
# labels the configuration's `classes:` map gives it (empty where it gives
# none), in the order of `labels:`; tcxClassRows counts the rows, and
# /metrics has the same classes, counters and labels (tests/snmp/snmpcmp.py
# check-classes). tcxQdiscTable has one row per qdisc `tc -s -j qdisc show`
# lists in the namespace (htb, its pfifo leaves, the noqueue of c1 and lo),
# with tc's identity, counters and backlog, and tcxQdiscRows counts them
# (check-qdiscs).
#
# c0 carries an HTB tree 1: -> 1:1 -> 1:10, 1:20, 1:30 with traffic through
# 1:10 and 1:20 (class_tree, tests/lib/daemon.sh); the map names 1:10 and
# 1:20 (both labels, one with a value of UTF-8, a quote and a backslash) and
# 1:1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_CLASS_TABLE_INSIDE
snmp_setup

class_tree c0 c1 "$WORK/tc"

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 2s "$(
	cat <<'EOF'
targets: [{all: true}]
labels: [tenant, rule]
classes:
  "c0 1:10": {tenant: acme, rule: gold}
  "c0 1:20": [globex, "sü \"x\" \\ y"]
  "c0 1:1": {tenant: acme, rule: all}
EOF
)"
cat >"$WORK/map.json" <<'EOF'
{"c0 1:10": {"tenant": "acme", "rule": "gold"},
 "c0 1:20": {"tenant": "globex", "rule": "sü \"x\" \\ y"},
 "c0 1:1": {"tenant": "acme", "rule": "all"}}
EOF
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_class_rows 4
walk "$WORK/walk.txt"
metrics "$WORK/metrics.txt"

note "tcxClassTable and tcxClassLabelTable against tc, the map and /metrics"
snmpcmp check-classes --walk "$WORK/walk.txt" --tc "$WORK/tc" --metrics "$WORK/metrics.txt" \
	--labels tenant,rule --class-map "$WORK/map.json" ||
	fail "the SNMP class tables differ from tc, the map or /metrics (see above)"
note "tcxQdiscTable against tc and /metrics"
snmpcmp check-qdiscs --walk "$WORK/walk.txt" --tc "$WORK/tc" --metrics "$WORK/metrics.txt" \
	--labels tenant,rule ||
	fail "the SNMP qdisc table differs from tc or /metrics (see above)"
tcx_checks
stop_tcx_clean
note "class_table: all checks passed in $(elapsed_ms) ms"
