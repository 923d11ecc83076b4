#!/bin/bash
# tcxFilterTable (issue 27) through a private snmpd:
# `snmpbulkwalk -v2c` of the TCEXPORTER-MIB subtree has one filter row per
# filter line ("type":"filter") of `tcexporter --once --format json`
# that has a hit counter, and none for the others, with the same identity
# and values; a counter the filter lacks has no instance (a walk skips it,
# a GET answers noSuchInstance); tcxFilterRows counts the rows and
# tcxFilterTableLastChange is a TimeStamp (tests/snmp/snmpcmp.py
# check-filters).
#
# f0 carries an HTB tree 1: -> 1:1 -> 1:10 and three u32 rules at 1: that
# datagrams (udp_raw) go through: one that only sets a flowid (no action),
# one with an action, one with a `match mark`. A kernel without
# CONFIG_CLS_U32_PERF and CONFIG_CLS_U32_MARK (tc -s shows no "rule hit"
# nor "success") keeps no hit counter for any of them: the table must then
# be empty, while the JSON lists the three rules. Where the kernel keeps
# them, the rows must carry the JSON's figures; the rows themselves (stable
# indices, absent counters, discontinuities) are tested in
# tests/unit/test_snmp_rows.c.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_FILTER_TABLE_INSIDE
snmp_setup

readonly TCX_FILTER_ENTRY=$TCX_OID.1.7.1
readonly OID_FILTER_ROWS=$TCX_SCALARS.10.0
readonly OID_FILTER_LAST_CHANGE=$TCX_SCALARS.11.0

veth f0 f1
tc qdisc add dev f0 root handle 1: htb default 10
tc class add dev f0 parent 1: classid 1:1 htb rate 100mbit
tc class add dev f0 parent 1:1 classid 1:10 htb rate 10mbit ceil 100mbit
tc filter add dev f0 parent 1: pref 10 protocol ip u32 match ip dport 1010 0xffff flowid 1:10
tc filter add dev f0 parent 1: pref 20 protocol ip u32 match ip dport 1020 0xffff \
	flowid 1:10 action mirred egress mirror dev f1
tc filter add dev f0 parent 1: pref 30 protocol ip u32 match mark 0 0xff \
	match ip dport 1030 0xffff flowid 1:10
udp_raw f0 1010:500:3 1020:500:5 1030:500:7 >/dev/null
tc -s filter show dev f0 parent 1: >"$WORK/tc.txt"
# CONFIG_CLS_U32_PERF shows as "(rule hit N success M)", CONFIG_CLS_U32_MARK
# as "mark 0x0 0xff (success N)"
expect=()
if ! grep -qE 'rule hit|success' "$WORK/tc.txt"; then
	note "this kernel keeps no u32 hit counter: tcxFilterTable must be empty"
	expect=(--expect-rows 0)
fi

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 2s "targets: [{all: true}]"
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
# tcxFilterRows answers (the subagent registered, a collection reached it)
deadline=$((SECONDS + 15))
until [ -n "$(snmp_value "$OID_FILTER_ROWS")" ]; do
	tcx_checks
	[ "$SECONDS" -lt "$deadline" ] || fail "tcxFilterRows does not answer after 15 s"
	sleep 0.1
done
wait_collections 1 10

# The counters stand still: the JSON before and after the walk are the same.
run_tcx json1 --once --config "$WORK/tcx.yaml" --format json
expect_rc json1 0
walk "$WORK/walk.txt"
run_tcx json2 --once --config "$WORK/tcx.yaml" --format json
expect_rc json2 0
grep '^{"type":"filter",' "$WORK/json1.out" >"$WORK/filters1" || fail "no filter line in the JSON"
grep '^{"type":"filter",' "$WORK/json2.out" >"$WORK/filters2" || fail "no filter line in the JSON"
cmp -s "$WORK/filters1" "$WORK/filters2" ||
	fail "the filters' hit counters moved during the walk: $(diff "$WORK/filters1" "$WORK/filters2")"

note "tcxFilterTable against the JSON filters line"
snmpcmp check-filters --walk "$WORK/walk.txt" --json "$WORK/json1.out" --prefs 10,20,30 \
	"${expect[@]}" || fail "tcxFilterTable differs from the JSON filters line (see above)"

note "tcxFilterRows, tcxFilterTableLastChange and absent counters by GET"
walked=$(grep -c "^$TCX_FILTER_ENTRY\.15\." "$WORK/walk.txt" || true)
rows=$(snmp_value "$OID_FILTER_ROWS")
[ "$rows" = "$walked" ] || fail "tcxFilterRows is '$rows', the walk has $walked rows"
sget "$OID_FILTER_LAST_CHANGE" | grep -q ' = Timeticks: ' ||
	fail "tcxFilterTableLastChange: $(sget "$OID_FILTER_LAST_CHANGE" 2>&1)"
# A GET of a hit counter that a row lacks (the walk skipped it), or of a row
# that does not exist (999999), is noSuchInstance.
for idx in $(sed -n "s/^$TCX_FILTER_ENTRY\.15\.\([0-9]*\) .*/\1/p" "$WORK/walk.txt") 999999; do
	for col in 12 13 14; do
		oid=$TCX_FILTER_ENTRY.$col.$idx
		grep -q "^$oid " "$WORK/walk.txt" && continue
		sget "$oid" | grep -q 'No Such Instance' ||
			fail "GET $oid: $(sget "$oid" 2>&1), expected noSuchInstance"
	done
done
tcx_checks
stop_tcx_clean
note "filter_table: all checks passed in $(elapsed_ms) ms"
