#!/bin/bash
# Index stability of tcxActionTable across filter changes (root: a private
# network namespace and a private snmpd, as in walk.sh; collection every
# second). Rows are matched by identity (device, parent, chain, pref,
# protocol, handle, action order) between walks:
#
#  1. walk; `tc filter add` a filter (pref 4) and `tc filter del` another
#     (pref 2, two actions); wait until tcxActionTableLastChange changes;
#     walk: every remaining row keeps its index and discontinuity time, the
#     deleted rows are gone (noSuchInstance on a GET), the new row has an
#     index above every earlier one and a non-zero discontinuity time;
#     tcxActionTableLastChange increased; every row still equals tc and
#     /metrics.
#  2. `tc filter replace` of pref 1 under the same handle with another
#     cookie: new actions, counters restart. Its row keeps its index, its
#     counters are lower, its tcxActionDiscontinuityTime increases, its
#     cookie and labels change; no other row changes its index or
#     discontinuity time; tcxActionTableLastChange stays (no row added or
#     removed).
#  3. pref 4 deleted, then added again the same: a new index, above every
#     earlier one (indices are never reused, as ifIndex).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_STABILITY_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup

note "topology: v0p -> v0 (clsact), u32 filters at prefs 1, 2, 3 and chain 5"
veth m0 m0p
veth v0 v0p
ip addr add 10.6.0.1/24 dev v0p
for h in 2 3 4 5 6; do ip neigh add 10.6.0.$h lladdr 02:00:00:00:06:0$h dev v0p; done
tc qdisc add dev v0 clsact || skip "no clsact qdisc in this kernel"
m0=(mirred egress mirror dev m0)
filt() {
	tc filter "$@" || skip "tc filter $* failed (u32, mirred)"
}
filt add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 action "${m0[@]}" cookie 01
filt add dev v0 ingress pref 2 protocol ip u32 match ip dst 10.6.0.3/32 \
	action "${m0[@]}" cookie 02 action "${m0[@]}" cookie 12
filt add dev v0 ingress pref 3 protocol ip u32 match ip dst 10.6.0.4/32 \
	action "${m0[@]}" goto chain 5 cookie 03
filt add dev v0 ingress chain 5 pref 50 protocol ip u32 match u32 0 0 action "${m0[@]}" cookie 05
h1=$(tc -j filter show dev v0 ingress pref 1 | "$PYTHON" -c '
import json, sys
print(*[f["options"]["fh"] for f in json.load(sys.stdin) if f.get("options", {}).get("actions")])')
[ -n "$h1" ] || fail "cannot find the handle of the pref 1 filter"

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 2s "$(
	cat <<'YAML'
targets: [{dev: v0, parent: ingress}]
labels: [rule]
cookies: {"01": [one], "0101": [one-replaced], "02": [two], "03": [three], "04": [four], "05": [five]}
YAML
)"
echo '{"01": ["one"], "0101": ["one-replaced"], "02": ["two"], "03": ["three"], "04": ["four"],
 "05": ["five"]}' >"$WORK/cookies.json"

# check_all NAME: walk into $WORK/NAME.txt once the counters stood still and
# two collections passed, and compare it with tc and /metrics.
check_all() {
	stable_tc v0 ingress "$WORK/$1.tc.json"
	wait_collections 2 15
	walk "$WORK/$1.txt"
	metrics "$WORK/$1.metrics"
	snmpcmp check-walk --walk "$WORK/$1.txt" --tc v0 ingress "$WORK/$1.tc.json" \
		--metrics "$WORK/$1.metrics" --labels rule --cookie-map "$WORK/cookies.json" \
		>"$WORK/$1.cmp" || {
		cat "$WORK/$1.cmp"
		fail "$1: the SNMP table differs from tc or /metrics"
	}
}

# wait_last_change OLD SECONDS: polls tcxActionTableLastChange until it is
# not OLD; prints the new value.
wait_last_change() {
	local deadline=$((SECONDS + $2)) v
	while :; do
		v=$(timeticks "$OID_LAST_CHANGE")
		[ -n "$v" ] && [ "$v" != "$1" ] && {
			echo "$v"
			return 0
		}
		[ "$SECONDS" -lt "$deadline" ] || fail "tcxActionTableLastChange stayed '$v' for $2 s"
		sleep 0.1
	done
}

# index_of WALK COOKIE: the index of the row with this cookie.
index_of() {
	snmpcmp rows --walk "$1" | "$PYTHON" -c '
import json, sys
print(*[r["index"] for r in json.load(sys.stdin).values() if r["cookie"] == sys.argv[1]])' "$2"
}

start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_tcx_rows 15 5 >/dev/null
traffic 10.6.0.2 9 100 10.6.0.3 4 200 10.6.0.4 5 300
check_all w1
lc1=$(timeticks "$OID_LAST_CHANGE")
gone_idx=$(index_of "$WORK/w1.txt" 12)
[ -n "$gone_idx" ] || fail "walk 1: no row with cookie 12"
note "walk 1: $(grep -c "^$TCX_ACTION_ENTRY\.3\." "$WORK/w1.txt") rows, lastChange $lc1"

note "1. add pref 4, delete pref 2"
filt add dev v0 ingress pref 4 protocol ip u32 match ip dst 10.6.0.5/32 action "${m0[@]}" cookie 04
filt del dev v0 ingress pref 2 protocol ip u32
t0=$(date +%s%N)
lc2=$(wait_last_change "$lc1" 10)
note "tcxActionTableLastChange $lc1 -> $lc2 after $((($(date +%s%N) - t0) / 1000000)) ms"
traffic 10.6.0.5 6 400
check_all w2
snmpcmp check-change --before "$WORK/w1.txt" --after "$WORK/w2.txt" --gone 2 --new 4 ||
	fail "1: indices did not survive the add and delete"
out=$(sget "$TCX_ACTION_ENTRY.3.$gone_idx" 2>&1) || fail "snmpget failed: $out"
grep -q 'No Such Instance' <<<"$out" || fail "the deleted row $gone_idx still answers: $out"

note "2. replace pref 1 (handle $h1), same cookie: counters restart, same row"
lc_before=$(timeticks "$OID_LAST_CHANGE")
idx1=$(index_of "$WORK/w2.txt" 01)
[ -n "$idx1" ] || fail "2: no row with cookie 01"
disc_before=$(snmp_value "$TCX_ACTION_ENTRY.21.$idx1")
filt replace dev v0 ingress pref 1 protocol ip handle "$h1" u32 match ip dst 10.6.0.2/32 \
	action "${m0[@]}" cookie 01
traffic 10.6.0.2 2 100
# Wait until the replacement reached the agent (the row's discontinuity time moved).
deadline=$((SECONDS + 10))
until [ "$(snmp_value "$TCX_ACTION_ENTRY.21.$idx1")" != "$disc_before" ]; do
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "row $idx1 kept discontinuity time $disc_before for 10 s after its replacement"
	sleep 0.1
done
check_all w2r
snmpcmp check-replace --before "$WORK/w2.txt" --after "$WORK/w2r.txt" --pref 1 ||
	fail "2: the replaced filter's row is wrong"
lc3=$(timeticks "$OID_LAST_CHANGE")
[ "$lc3" = "$lc_before" ] ||
	fail "2: tcxActionTableLastChange moved ($lc_before -> $lc3) though no row came or went"

note "2b. replace pref 1 with cookie 0101: another rule, a new row"
filt replace dev v0 ingress pref 1 protocol ip handle "$h1" u32 match ip dst 10.6.0.2/32 \
	action "${m0[@]}" cookie 0101
lc3=$(wait_last_change "$lc3" 10)
traffic 10.6.0.2 2 100
check_all w3
snmpcmp check-change --before "$WORK/w2r.txt" --after "$WORK/w3.txt" --gone 1 --new 1 ||
	fail "2b: the filter with a new cookie did not get a new row"

note "3. delete pref 4, then add it again: a new index"
idx4=$(index_of "$WORK/w3.txt" 04)
[ -n "$idx4" ] || fail "3: no row with cookie 04 before its deletion"
filt del dev v0 ingress pref 4 protocol ip u32
lc4=$(wait_last_change "$lc3" 10)
walk "$WORK/w4.txt"
idx4_gone=$(index_of "$WORK/w4.txt" 04) # a failing index_of fails here (set -e)
[ -z "$idx4_gone" ] || fail "3: pref 4 still listed after its deletion"
filt add dev v0 ingress pref 4 protocol ip u32 match ip dst 10.6.0.5/32 action "${m0[@]}" cookie 04
wait_last_change "$lc4" 10 >/dev/null
check_all w5
snmpcmp check-change --before "$WORK/w4.txt" --after "$WORK/w5.txt" --gone "" --new 4 ||
	fail "3: indices after the re-add are wrong"
idx4b=$(index_of "$WORK/w5.txt" 04)
[ "$idx4b" -gt "$idx4" ] || fail "3: the re-added filter has index $idx4b, the old one had $idx4"
note "pref 4: index $idx4, after delete and add $idx4b"

tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "stability.sh: all checks passed in $(elapsed_ms) ms"
