#!/bin/bash
# The action times over SNMP (issue 25): tcxActionInstallTime and
# tcxActionLastUseTime (DateAndTime) and tcxActionNeverUsed (TruthValue) of
# tcxActionTable, through a private snmpd (as in walk.sh: root, a private
# network namespace), for u32 rules with mirred actions on v0's ingress:
# cookie 01 and 03 get datagrams, 02 none at first.
#
#  (a) a walk of the action table and /metrics of the same collection pass
#      (tcxLastCollectionTime and tc_exporter_snapshot_timestamp_seconds the
#      same before and after both): each row's DateAndTimes are the 11-octet
#      UTC form of its tc_action_{installed,last_used}_timestamp_seconds
#      truncated to the deci-second, and tcxActionNeverUsed is true(1)
#      exactly where tc_action_first_used_timestamp_seconds has no sample
#      (tests/snmp/snmpcmp.py check-times); every rule was installed between
#      the wall-clock times read around the tc commands, 01 and 03 are used
#      (false(2)) with a last use while the datagrams went, 02 never used
#      (true(1)) with its install time as its last use;
#  (b) snmpget of the three columns gives the walk's values; with the MIB
#      loaded, net-snmp's tools display the DateAndTime as the date the walk
#      decodes to ("2026-12-6,20:16:26.7,+0:0": the MIB's DISPLAY-HINT read
#      by another implementation) and the TruthValue as true(1), false(2);
#      a GET of the three columns of a row that does not exist answers
#      noSuchInstance, of column 25 (past the last) no such object or
#      instance either;
#  (c) datagrams through 02's rule: a later pass shows it used (false(2)),
#      its last use when they went, 01's unchanged (to the deci-second).
#
# A row whose times are unknown (a flower rule dumped tersely, new since
# the last liveness pass) cannot be made here: u32 rules are always dumped
# in full, and the kernel of the build machine has no flower. Case
# c18_snmp_times of tests/vm checks such rows through snmpd on Debian's
# kernels (GET noSuchInstance, the walk skips them);
# tests/unit/test_snmp_rows.c the rows themselves.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

: "${TCX_SRCDIR:=$(cd "$here/../.." && pwd)}"
mibs=$TCX_SRCDIR/mibs
base=$TCX_SRCDIR/mibs/base
[ -f "$mibs/TCEXPORTER-MIB.txt" ] || fail "$mibs/TCEXPORTER-MIB.txt is missing"
snmp_prereqs
in_netns TCX_SNMP_ACTION_TIMES_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup

# now: the wall clock, in seconds with nanoseconds
now() {
	date +%s.%N
}

note "topology: v0p -> v0 (clsact), u32 rules with mirred actions on v0 ingress"
veth m0 m0p
veth v0 v0p
ip addr add 10.6.0.1/24 dev v0p
for h in 2 3 4; do ip neigh add 10.6.0.$h lladdr 02:00:00:00:06:0$h dev v0p; done
tc qdisc add dev v0 clsact || skip "no clsact qdisc in this kernel"
t_inst0=$(now)
for pref in 1 2 3; do
	tc filter add dev v0 ingress pref "$pref" protocol ip u32 \
		match ip dst "10.6.0.$((pref + 1))/32" action mirred egress mirror dev m0 \
		cookie "0$pref" || skip "cannot add a u32 filter with a mirred action"
done
t_inst1=$(now)
# (the last uses a few deci-seconds after the installs: they differ)
sleep 0.3
t_used0=$(now)
traffic 10.6.0.2 5 100 10.6.0.4 3 200
t_used1=$(now)
stable_tc v0 ingress "$WORK/tc.json"

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 1s "targets: [{dev: v0, parent: ingress}]" 2s
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_tcx_rows 15 3 >/dev/null
wait_collections 1 10

# snapshot_ts FILE: tc_exporter_snapshot_timestamp_seconds of a /metrics.
snapshot_ts() {
	sed -n 's/^tc_exporter_snapshot_timestamp_seconds \(.*\)$/\1/p' "$1"
}

# same_pass N: a walk of tcxActionTable ($WORK/walkN.txt) and /metrics
# ($WORK/metricsN.txt) of one collection pass: tcxLastCollectionTime and
# the snapshot time of /metrics are the same before and after both (a pass
# every 2 s: tried again when one came in between).
same_pass() {
	local n=$1 i t1 t2
	for i in $(seq 1 10); do
		t1=$(timeticks "$OID_LAST_COLLECTION")
		metrics "$WORK/metrics$n.txt"
		walk "$WORK/walk$n.txt" "$TCX_ACTION_ENTRY"
		metrics "$WORK/metrics$n.after.txt"
		t2=$(timeticks "$OID_LAST_COLLECTION")
		if [ -n "$t1" ] && [ "$t1" = "$t2" ] && [ -n "$(snapshot_ts "$WORK/metrics$n.txt")" ] &&
			[ "$(snapshot_ts "$WORK/metrics$n.txt")" = "$(snapshot_ts "$WORK/metrics$n.after.txt")" ]; then
			return 0
		fi
		note "a collection came between the walk and /metrics ($i): again"
	done
	fail "no walk and /metrics of one collection pass in 10 tries"
}

# (the bounds widened by 50 ms: the kernel keeps the times in ticks of
# 10 ms or less, which the decoder subtracts from the wall clock)
lo() { "$PYTHON" -c 'import sys; print(float(sys.argv[1]) - 0.05)' "$1"; }
hi() { "$PYTHON" -c 'import sys; print(float(sys.argv[1]) + 0.05)' "$1"; }

note "(a) the walk against /metrics of the same pass and the times of the tc commands"
same_pass 1
grep -q '^tc_action_installed_timestamp_seconds{' "$WORK/metrics1.txt" ||
	fail "/metrics has no tc_action_installed_timestamp_seconds"
snmpcmp check-times --walk "$WORK/walk1.txt" --metrics "$WORK/metrics1.txt" \
	--used 01,03 --unused 02 --installed-between "$(lo "$t_inst0")" "$(hi "$t_inst1")" \
	--used-between "$(lo "$t_used0")" "$(hi "$t_used1")" ||
	fail "the times of tcxActionTable differ from /metrics or from when tc ran (see above)"

note "(b) GET, and the display of net-snmp's tools with the MIB"
# index COOKIE: the row of the cookie in walk 1
index() {
	snmpcmp rows --walk "$WORK/walk1.txt" | "$PYTHON" -c '
import json, sys
print(*[r["index"] for r in json.load(sys.stdin).values() if r["cookie"] == sys.argv[1]])' "$1"
}
i1=$(index 01)
i2=$(index 02)
{ [ -n "$i1" ] && [ -n "$i2" ]; } || fail "no row of cookie 01 or 02 in the walk"
oids=()
for i in "$i1" "$i2"; do
	for col in 22 23 24; do oids+=("$TCX_ACTION_ENTRY.$col.$i"); done
done
# The GETs, the display with the MIB and a walk of one pass: the times are
# worked out anew at each pass (an age in the kernel's ticks against the
# wall clock), which may move their deci-second by one.
for try in $(seq 1 10); do
	t1=$(timeticks "$OID_LAST_COLLECTION")
	sget "${oids[@]}" | sed 's/ *$//' >"$WORK/get.txt" || fail "snmpget ${oids[*]} failed"
	snmpget -v2c -c public -On -t 1 -r 0 -M "$mibs:$base" -m TCEXPORTER-MIB "$SNMPD_AGENT" \
		"${oids[@]}" >"$WORK/display.txt" 2>"$WORK/display.err" ||
		fail "snmpget with the MIB failed: $(cat "$WORK/display.err")"
	walk "$WORK/walk1b.txt" "$TCX_ACTION_ENTRY"
	t2=$(timeticks "$OID_LAST_COLLECTION")
	[ -z "$t1" ] || [ "$t1" != "$t2" ] || break
	[ "$try" -lt 10 ] || fail "no GETs and walk of one collection pass in 10 tries"
done
[ ! -s "$WORK/display.err" ] || fail "snmpget with the MIB complained: $(cat "$WORK/display.err")"
for oid in "${oids[@]}"; do
	want=$(grep "^$oid = " "$WORK/walk1b.txt" | sed 's/ *$//') || fail "no $oid in the walk"
	got=$(grep "^$oid = " "$WORK/get.txt") || fail "no $oid in the GET's answer: $(cat "$WORK/get.txt")"
	[ "$got" = "$want" ] || fail "GET $oid: '$got', the walk of the same pass had '$want'"
done
# What net-snmp displays (DISPLAY-HINT "2d-1d-1d,1d:1d:1d.1d,1a1d:1d" of
# DateAndTime, the TruthValue's names), from the walk's decoded values.
snmpcmp rows --walk "$WORK/walk1b.txt" | "$PYTHON" -c '
import datetime, json, sys
entry, i1, i2 = sys.argv[1:]
for r in sorted(json.load(sys.stdin).values(), key=lambda r: r["index"]):
    if str(r["index"]) not in (i1, i2):
        continue
    for col, key in ((22, "install_time"), (23, "last_use_time")):
        t = datetime.datetime.fromtimestamp(int(r[key]), datetime.timezone.utc)
        print("%s.%d.%d = STRING: %d-%d-%d,%d:%d:%d.%d,+0:0" % (
            entry, col, r["index"], t.year, t.month, t.day, t.hour, t.minute, t.second,
            round(r[key] * 10) % 10))
    print("%s.24.%d = INTEGER: %s" % (entry, r["index"],
                                      {1: "true(1)", 2: "false(2)"}[r["never_used"]]))
' "$TCX_ACTION_ENTRY" "$i1" "$i2" >"$WORK/display.want"
sed -i 's/ *$//' "$WORK/display.txt"
cat "$WORK/display.txt"
sort -o "$WORK/display.want" "$WORK/display.want"
sort -o "$WORK/display.txt" "$WORK/display.txt"
diff "$WORK/display.want" "$WORK/display.txt" >&2 ||
	fail "net-snmp displays the times otherwise than the walk decodes them (diff: expected, got)"
grep -q "^$TCX_ACTION_ENTRY.24.$i1 = INTEGER: false(2)$" "$WORK/display.txt" ||
	fail "tcxActionNeverUsed of 01 is not displayed false(2)"
grep -q "^$TCX_ACTION_ENTRY.24.$i2 = INTEGER: true(1)$" "$WORK/display.txt" ||
	fail "tcxActionNeverUsed of 02 is not displayed true(1)"
missing=$((i1 + i2 + 1000))
for oid in "$TCX_ACTION_ENTRY.22.$missing" "$TCX_ACTION_ENTRY.23.$missing" \
	"$TCX_ACTION_ENTRY.24.$missing"; do
	out=$(sget "$oid" 2>&1) || fail "snmpget $oid failed: $out"
	grep -q 'No Such Instance' <<<"$out" || fail "GET $oid: '$out', expected noSuchInstance"
done
out=$(sget "$TCX_ACTION_ENTRY.25.$i1" 2>&1) || true
grep -q 'No Such' <<<"$out" || fail "GET column 25 of tcxActionEntry: '$out'"

note "(c) datagrams through 02's rule: used from the next pass on"
t_used2=$(now)
traffic 10.6.0.3 4 300
t_used3=$(now)
stable_tc v0 ingress "$WORK/tc2.json"
wait_collections 2 15
same_pass 2
# (01's and 03's last uses are those of (a), 02's in the second window)
snmpcmp check-times --walk "$WORK/walk2.txt" --metrics "$WORK/metrics2.txt" --used 01,03 \
	--used-between "$(lo "$t_used0")" "$(hi "$t_used1")" ||
	fail "walk 2: the times differ from /metrics, or 01's and 03's moved (see above)"
snmpcmp check-times --walk "$WORK/walk2.txt" --metrics "$WORK/metrics2.txt" --used 02 \
	--used-between "$(lo "$t_used2")" "$(hi "$t_used3")" ||
	fail "walk 2: 02 is not used, or not last when the datagrams went (see above)"

tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "action_times.sh: all checks passed in $(elapsed_ms) ms"
