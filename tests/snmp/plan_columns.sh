#!/bin/bash
# The plan columns of tcxClassTable (tcxClassRate ... tcxClassLevel) and
# tcxQdiscTable (tcxQdiscRate ... tcxQdiscDefaultClass), issue 24, through a
# private snmpd: `snmpbulkwalk -v2c` of the TCEXPORTER-MIB subtree gives
# each class and qdisc the plans of `tcexporter --once --format json`, one
# column per role (rate, ceil, burst, ...), with the SMI type of the column
# (TcxGauge64 is a Counter64 on the wire, the others Unsigned32), and no
# instance in a column the row's kind has no value for: a walk skips it, a
# GET answers noSuchInstance (tests/snmp/snmpcmp.py check-plans). The
# values are also those the tc commands below set, worked out by hand
# (ceil 5mbit is 625000 octets per second, 40gbit 5000000000: past 2^32).
#
# p0 carries an HTB tree 1: (default 20) -> 1:1 -> 1:10 (a tbf under it,
# whose class 10:1 has no plans) and 1:20 (a pfifo); the ifb i0 a bfifo;
# p1 and lo a noqueue (no plans).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
in_netns TCX_SNMP_PLAN_COLUMNS_INSIDE
snmp_setup

readonly TCX_QDISC_ENTRY=$TCX_OID.1.4.1
readonly TCX_CLASS_ENTRY=$TCX_OID.1.5.1

veth p0 p1
ip link add i0 type ifb || skip "cannot create an ifb device"
ip link set i0 up
tc qdisc add dev p0 root handle 1: htb default 20
tc class add dev p0 parent 1: classid 1:1 htb rate 10gbit ceil 40gbit burst 100k cburst 200k
tc class add dev p0 parent 1:1 classid 1:10 htb rate 1mbit ceil 5mbit burst 15k prio 3 \
	quantum 3000
tc class add dev p0 parent 1:1 classid 1:20 htb rate 2mbit
tc qdisc add dev p0 parent 1:10 handle 10: tbf rate 1mbit burst 32k limit 100k
tc qdisc add dev p0 parent 1:20 handle 20: pfifo limit 77
tc qdisc add dev i0 root handle 2: bfifo limit 12345
tc -d class show dev p0 >"$WORK/tc-class.txt"
tc -d -j qdisc show >"$WORK/tc-qdisc.json"

# What the commands above set, in the MIB's units (octets, octets per
# second; tc's k is 1024, its mbit 10^6 bits; HTB's default is hexadecimal,
# 20 = 32). 1:20's bursts and quantum and 1:10's cburst are derived by
# tc and the kernel (checked against the JSON only); a leaf's level is 0,
# an inner class's 7.
cat >"$WORK/expect" <<'EOF'
class p0 1:1 rate 1250000000
class p0 1:1 ceil 5000000000
class p0 1:1 prio 0
class p0 1:1 level 7
class p0 1:10 rate 125000
class p0 1:10 ceil 625000
class p0 1:10 burst 15360
class p0 1:10 prio 3
class p0 1:10 quantum 3000
class p0 1:10 level 0
class p0 1:20 rate 250000
class p0 1:20 ceil 250000
class p0 1:20 level 0
class p0 10:1 rate -
class p0 10:1 ceil -
class p0 10:1 burst -
class p0 10:1 level -
qdisc p0 1: default_class 32
qdisc p0 1: rate -
qdisc p0 1: limit_packets -
qdisc p0 10: rate 125000
qdisc p0 10: burst 32768
qdisc p0 10: limit_bytes 102400
qdisc p0 10: limit_packets -
qdisc p0 10: default_class -
qdisc p0 20: limit_packets 77
qdisc p0 20: limit_bytes -
qdisc p0 20: rate -
qdisc i0 2: limit_bytes 12345
qdisc i0 2: limit_packets -
qdisc p1 0: rate -
qdisc p1 0: limit_packets -
qdisc p1 0: limit_bytes -
EOF
# What `tc -d class show` prints of each HTB class, in octets: rates in
# bits of 1000-based units, sizes in 1024-based ones, which tc rounds by up
# to 16 bytes (Kb) or 1 KB (Mb) when it prints them (sprint_size()).
"$PYTHON" - "$WORK/tc-class.txt" >>"$WORK/expect" <<'PY' || fail "cannot read tc -d class show"
import re, sys
RATE = {"bit": 1, "Kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9, "Tbit": 10**12}
SIZE = {"b": (1, 0), "Kb": (1024, 16), "Mb": (1 << 20, 1024)}
n = 0
for line in open(sys.argv[1]):
    m = re.match(r"class htb (\S+) ", line)
    if not m:
        continue
    t = line.split()
    for i, w in enumerate(t[:-1]):
        v = t[i + 1]
        if w in ("prio", "quantum", "level"):
            print("class p0 %s %s %d" % (m.group(1), w, int(v)))
        elif w in ("rate", "ceil"):
            r = re.fullmatch(r"(\d+)([A-Za-z]+)", v)
            print("class p0 %s %s %d" % (m.group(1), w, int(r.group(1)) * RATE[r.group(2)] // 8))
        elif w in ("burst", "cburst"):
            r = re.fullmatch(r"([\d.]+)([A-Za-z]+)/\d+", v)
            mul, tol = SIZE[r.group(2)]
            print("class p0 %s %s %d~%d" % (m.group(1), w, round(float(r.group(1)) * mul), tol))
        else:
            continue
        n += 1
if n < 15:
    sys.exit("only %d figures of HTB classes in tc -d class show" % n)
PY
"$PYTHON" - "$WORK/tc-qdisc.json" <<'PY' || fail "tc -d -j qdisc show differs from the figures of this test"
import json, sys
q = {x["handle"]: x.get("options", {}) for x in json.load(open(sys.argv[1]))}
assert q["1:"]["default"] == "0x20", q["1:"]
assert q["10:"]["rate"] == 125000, q["10:"]
assert q["20:"]["limit"] == 77, q["20:"]
assert q["2:"]["limit"] == 12345, q["2:"]
PY

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 2s "targets: [{all: true}]"
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_class_rows 4 # 1:1, 1:10, 1:20, 10:1
run_tcx json --once --config "$WORK/tcx.yaml" --format json
expect_rc json 0
walk "$WORK/walk.txt"

note "the plan columns against the JSON plans and the figures tc was given"
snmpcmp check-plans --walk "$WORK/walk.txt" --json "$WORK/json.out" --expect "$WORK/expect" \
	--index-out "$WORK/index" || fail "the plan columns differ (see above)"
grep -q 'Counter64: 5000000000$' "$WORK/walk.txt" ||
	fail "no Counter64 of 5000000000 (1:1's ceil, past 2^32) in the walk"

# index WHAT DEV HANDLE: the row's tcxClassIndex or tcxQdiscIndex.
index() {
	awk -v w="$1" -v d="$2" -v h="$3" '$1 == w && $2 == d && $3 == h { print $5 }' "$WORK/index"
}
c10=$(index class p0 1:10)
c101=$(index class p0 10:1)
q20=$(index qdisc p0 20:)
if [ -z "$c10" ] || [ -z "$c101" ] || [ -z "$q20" ]; then
	fail "rows missing: $(cat "$WORK/index")"
fi

note "GET: an instance where the kind has the role, noSuchInstance where it has none"
out=$(sget "$TCX_CLASS_ENTRY.17.$c10") || fail "snmpget of 1:10's tcxClassCeil failed"
[ "$out" = "$TCX_CLASS_ENTRY.17.$c10 = Counter64: 625000" ] ||
	fail "GET tcxClassCeil of 1:10: '$out', expected Counter64: 625000"
out=$(sget "$TCX_QDISC_ENTRY.18.$q20") || fail "snmpget of 20:'s tcxQdiscLimitPackets failed"
[ "$out" = "$TCX_QDISC_ENTRY.18.$q20 = Gauge32: 77" ] ||
	fail "GET tcxQdiscLimitPackets of 20:: '$out', expected Gauge32: 77"
for oid in "$TCX_CLASS_ENTRY.16.$c101" "$TCX_CLASS_ENTRY.22.$c101" \
	"$TCX_QDISC_ENTRY.16.$q20" "$TCX_QDISC_ENTRY.19.$q20" "$TCX_QDISC_ENTRY.20.$q20"; do
	out=$(sget "$oid" 2>&1) || true
	grep -q 'No Such Instance' <<<"$out" || fail "GET $oid: '$out', expected noSuchInstance"
done
# and past the last column of each table, no such object
out=$(sget "$TCX_CLASS_ENTRY.23.$c10" 2>&1) || true
grep -q 'No Such' <<<"$out" || fail "GET column 23 of tcxClassEntry: '$out'"

note "GETNEXT: 10:1's rate skipped, the walk of the column goes on to the next row or column"
out=$(snmpgetnext -v2c -c public -On -t 0.3 -r 0 "$SNMPD_AGENT" "$TCX_CLASS_ENTRY.16.$((c101 - 1))")
case $out in
"$TCX_CLASS_ENTRY.16.$c101 "*) fail "GETNEXT returned 10:1's tcxClassRate: $out" ;;
"$TCX_CLASS_ENTRY."*) ;;
*) fail "GETNEXT after 10:1's tcxClassRate left the class table: $out" ;;
esac

tcx_checks
stop_tcx_clean
note "plan_columns: all checks passed in $(elapsed_ms) ms"
