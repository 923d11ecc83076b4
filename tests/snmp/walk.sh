#!/bin/bash
# SNMP walk against the kernel (root): a private snmpd (master agentx, its
# own AgentX socket, UDP on 127.0.0.1 at a free port, its own persistent
# directory) and tcexporter's AgentX subagent, in a private network
# namespace with tagged u32 filters (several prefs, a chain, two targets)
# and traffic. After the traffic stops:
#
#  - `snmpbulkwalk -v2c` of the TCEXPORTER-MIB subtree: every action row's
#    bytes, packets, drops, overlimits (and hw counters) equal what
#    `tc -s -j filter show` reports for the same action and what /metrics
#    (text format) reports, rows matched by identity (device, parent, chain,
#    pref, protocol, handle, action order); same set of rows in all three;
#    cookies of 1 and 16 bytes and none; ifIndex; SMI types of all columns;
#  - the label table: one row per (action, configured label), the label's
#    name and its value from the cookie map ("" for an unmapped cookie),
#    equal to the labels of /metrics, including a value with ", \ and UTF-8;
#  - scalars: tcxActionRows = number of rows, tcxLastCollectionStatus ok(1),
#    tcxTargetsFailed 0;
#  - a bytes counter above 2^32 comes through intact (Counter64): 66k
#    datagrams of 65000 bytes over a veth with MTU 65535 take about a second.
#    (A packets counter above 2^32 would take 4 billion packets: the unit
#    tests (tests/unit/test_snmp_rows.c) cover the encoding up to 2^64-1.)
#  - `snmpget -v1` of a Counter64 column gives noSuchName (net-snmp's master
#    translates), of a Counter32 column a value; `snmpwalk -v1` skips the
#    Counter64 columns; `snmpget -v2c` of a missing index or label number
#    gives noSuchInstance;
#  - tcexporter exits 0 on SIGTERM and writes no net-snmp state file.
#
# Kernel needs: veth, clsact, cls_u32, act_mirred (no flower, no gact).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_WALK_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup

note "topology: v0p -> v0 (clsact, MTU 65535), u32 filters on v0 ingress and egress"
# Traffic from v0p (10.6.0.1) to 10.6.0.x enters v0, whose ingress filters
# count it and mirror it to m0 (copies die at m0p: no address) or to md0,
# which is down (the mirror fails and counts an overlimit): no loop. v0
# sends to 10.7.0.2 for its egress filter. Static neighbours: no ARP.
veth m0 m0p
ip link add md0 type veth peer name md1
veth v0 v0p
ip link set v0 mtu 65535
ip link set v0p mtu 65535
ip addr add 10.6.0.1/24 dev v0p
ip addr add 10.7.0.1/24 dev v0
for h in 2 3 4 5 9; do ip neigh add 10.6.0.$h lladdr 02:00:00:00:06:0$h dev v0p; done
ip neigh add 10.7.0.2 lladdr 02:00:00:00:07:02 dev v0
tc qdisc add dev v0 clsact || skip "no clsact qdisc in this kernel"
mirror_m0=(mirred egress mirror dev m0)
mirror_md0=(mirred egress mirror dev md0)
n_actions=0
filt() {
	local a
	for a in "$@"; do [ "$a" != action ] || n_actions=$((n_actions + 1)); done
	tc filter add dev v0 "$@" || skip "cannot add a u32 filter with a mirred action: tc filter add dev v0 $*"
}
# (No pref is used both in two chains or on both sides of the clsact: u32
# would list such filters twice, see tests/integration/netns_once.sh.)
filt ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 \
	action "${mirror_m0[@]}" cookie 01
filt ingress pref 1 protocol ip u32 match ip dst 10.6.0.3/32 \
	action "${mirror_m0[@]}" cookie 00112233445566778899aabbccddeeff \
	action "${mirror_md0[@]}" cookie aabb
# An action without a cookie. (Not after an action with one in the same
# filter: iproute2 6.1 gives it the previous action's cookie.)
filt ingress pref 2 protocol ip u32 match ip dst 10.6.0.4/32 \
	action "${mirror_m0[@]}"
filt ingress pref 3 protocol ip u32 match ip dst 10.6.0.5/32 \
	action "${mirror_m0[@]}" goto chain 5 cookie c0ffee
filt ingress chain 5 pref 50 protocol ip u32 match u32 0 0 \
	action "${mirror_md0[@]}" cookie 0a0b
filt ingress pref 9 protocol ip u32 match ip dst 10.6.0.9/32 \
	action "${mirror_md0[@]}" cookie 99
filt egress pref 20 protocol ip u32 match ip dst 10.7.0.2/32 \
	action "${mirror_m0[@]}" cookie 0102
note "$n_actions actions"

note "configurations: snmpd and tcexporter"
snmpd_config
HTTP_PORT=$(free_ports 1)
# Label values with a quote, a backslash and UTF-8; a cookie that maps only
# one label; unmapped cookies (aabb, 0a0b) and no cookie give "".
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 2s "$(
	cat <<'YAML'
targets:
  - {dev: v0, parent: ingress}
  - {dev: v0, parent: egress}
labels: [tenant, rule]
unmapped: export
cookies:
  "01": {tenant: acme, rule: "q\"uo\\te é"}
  "0x00112233445566778899AABBCCDDEEFF": [globex, sixteen bytes]
  "c0ffee": {tenant: initech, rule: chained}
  "99": [big, counter64]
  "0102": [egress, out]
YAML
)"
cat >"$WORK/cookies.json" <<'JSON'
{"01": {"tenant": "acme", "rule": "q\"uo\\te é"},
 "00112233445566778899aabbccddeeff": {"tenant": "globex", "rule": "sixteen bytes"},
 "c0ffee": {"tenant": "initech", "rule": "chained"},
 "99": {"tenant": "big", "rule": "counter64"},
 "0102": {"tenant": "egress", "rule": "out"}}
JSON

note "start snmpd, then tcexporter"
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
ms=$(wait_tcx_rows 15)
note "the subagent answers through snmpd after $ms ms"

note "traffic: different counts and sizes per flow, and 4.3 GB to 10.6.0.9"
traffic 10.6.0.2 7 100 10.6.0.3 5 300 10.6.0.4 3 1000 10.6.0.5 11 64
t0=$(date +%s%N)
# 66133 datagrams of 65000 bytes (65042 on the wire): 4300.5 MB > 2^32.
traffic 10.6.0.9 66133 65000
note "big flow sent in $((($(date +%s%N) - t0) / 1000000)) ms"
"$PYTHON" - <<'PY' || fail "sending from v0 failed"
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.7.0.1", 0))
for _ in range(13):
    s.sendto(b"y" * 222, ("10.7.0.2", 9))
PY
stable_tc v0 ingress "$WORK/tc-in.json"
stable_tc v0 egress "$WORK/tc-eg.json"
# Two fresh collection passes after the counters stood still.
wait_collections 2 15

note "walk, /metrics, then tc again (nothing may have moved)"
t0=$(date +%s%N)
walk "$WORK/walk.txt"
walk_ms=$((($(date +%s%N) - t0) / 1000000))
metrics "$WORK/metrics.txt"
tc -s -j filter show dev v0 ingress >"$WORK/tc-in2.json"
tc -s -j filter show dev v0 egress >"$WORK/tc-eg2.json"
{ same_tc_counters "$WORK/tc-in.json" "$WORK/tc-in2.json" &&
	same_tc_counters "$WORK/tc-eg.json" "$WORK/tc-eg2.json"; } ||
	fail "the tc counters moved during the walk"
note "walk: $(wc -l <"$WORK/walk.txt") lines in $walk_ms ms"

note "compare the walk with tc and /metrics"
snmpcmp check-walk --walk "$WORK/walk.txt" \
	--tc v0 ingress "$WORK/tc-in.json" --tc v0 egress "$WORK/tc-eg.json" \
	--metrics "$WORK/metrics.txt" --labels tenant,rule --cookie-map "$WORK/cookies.json" \
	--expect-rows "$n_actions" --min-bytes $((1 << 32)) ||
	fail "the SNMP table differs from tc or /metrics (see above)"

# The row of cookie 99 (the big one) and the largest index.
big=$(snmpcmp rows --walk "$WORK/walk.txt" | "$PYTHON" -c '
import json, sys
rows = json.load(sys.stdin).values()
print(*[r["index"] for r in rows if r["cookie"] == "99"], max(r["index"] for r in rows))')
read -r big_idx max_idx <<<"$big"
[ -n "$big_idx" ] || fail "no row with cookie 99"
big_bytes=$(tc -s -j filter show dev v0 ingress | "$PYTHON" -c '
import json, sys
print(*[a["stats"]["bytes"] for f in json.load(sys.stdin)
        for a in f.get("options", {}).get("actions", []) if a.get("cookie") == "99"])')

note "snmpget: Counter64 above 2^32 (v2c), noSuchName (v1), noSuchInstance (v2c)"
out=$(sget "$TCX_ACTION_ENTRY.15.$big_idx") || fail "snmpget -v2c of bytes failed: $out"
[ "$out" = "$TCX_ACTION_ENTRY.15.$big_idx = Counter64: $big_bytes" ] ||
	fail "snmpget -v2c of the big bytes counter: '$out', expected Counter64: $big_bytes"
for col in 15 16 17 18; do
	rc=0
	out=$(snmpget -v1 -c public -On -t 1 -r 0 "$SNMPD_AGENT" "$TCX_ACTION_ENTRY.$col.$big_idx" 2>&1) ||
		rc=$?
	{ [ "$rc" != 0 ] && grep -q 'noSuchName' <<<"$out"; } ||
		fail "snmpget -v1 of Counter64 column $col: rc $rc, '$out'; expected noSuchName"
done
out=$(snmpget -v1 -c public -On -t 1 -r 0 "$SNMPD_AGENT" "$TCX_ACTION_ENTRY.20.$big_idx" 2>&1) ||
	fail "snmpget -v1 of the Counter32 overlimits failed: $out"
grep -q '= Counter32: 66133$' <<<"$out" ||
	fail "snmpget -v1 of overlimits: '$out', expected Counter32: 66133"
# SNMPv1 GETNEXT skips the Counter64 columns (net-snmp's master translates).
snmpwalk -v1 -c public -On -t 2 -r 0 "$SNMPD_AGENT" "$TCX_ACTION_ENTRY" >"$WORK/walk-v1.txt" 2>&1 ||
	fail "snmpwalk -v1 failed: $(tail -n 3 "$WORK/walk-v1.txt")"
! grep -q Counter64 "$WORK/walk-v1.txt" || fail "snmpwalk -v1 returned Counter64 values"
n_v1=$(grep -c "^$TCX_ACTION_ENTRY\.2[01]\." "$WORK/walk-v1.txt" || true)
[ "$n_v1" = $((2 * n_actions)) ] ||
	fail "snmpwalk -v1: $n_v1 overlimits/discontinuity values, expected $((2 * n_actions))"
missing=$((max_idx + 1000))
for oid in "$TCX_ACTION_ENTRY.15.$missing" "$TCX_ACTION_ENTRY.3.$missing" \
	"$TCX_LABEL_ENTRY.3.$big_idx.3" "$TCX_LABEL_ENTRY.2.$missing.1"; do
	out=$(sget "$oid" 2>&1) || fail "snmpget -v2c $oid failed: $out"
	grep -q 'No Such Instance' <<<"$out" || fail "snmpget -v2c $oid: '$out', expected noSuchInstance"
done

tcx_checks
note "stop tcexporter (SIGTERM: exit 0) and snmpd"
stop_tcx_clean
stop_snmpd TERM
echo "walk.sh: all checks passed in $(elapsed_ms) ms ($n_actions rows, walk $walk_ms ms," \
	"tcexporter stopped in $STOP_MS ms)"
