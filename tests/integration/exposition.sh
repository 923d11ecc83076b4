#!/bin/bash
# The exposition is valid whatever the kernel holds:
#  - bytes that are not UTF-8 (an interface named with byte 0xff) are written
#    \xHH, and a backslash that would read as such an escape as two, in the
#    text, OpenMetrics and JSON outputs:
#    each stays valid (promtool, a strict UTF-8 decode, python's json) and a
#    device named with the four characters \xff stays apart from one named
#    with the byte 0xff;
#  - no two samples share a series identity, and no action is counted twice:
#    u32 filters at one pref in chains 0 and 1 (and in egress), which the
#    kernel lists under each of them, are each reported once, under their own
#    chain; 4200 filters in one u32 hash table, which the kernel numbers
#    800::fff from the 4096th on, give one series per identity; filters
#    attached to HTB classes (parent 1:1) are collected, by `all` and by
#    `dev`, each once under its own parent although a class shares its
#    qdisc's u32 tables; in each, the sums equal the kernel's own per-action
#    totals (tc actions ls);
#  - targets whose parents print alike (root and ffff:ffff, ingress and
#    ffff:fff1) are one target, each row once;
#  - families.hw: auto (the default) exports no hw_* series on a kernel that
#    offloads nothing, hw: on does;
#  - filters without actions are listed in the JSON filters line, with hit
#    counters only where the kernel keeps them (tc -s shows "rule hit"): on
#    a kernel without CONFIG_CLS_U32_PERF no hit family is written at all;
#  - floats are printed in full: the snapshot's timestamp is within a second
#    of the clock (it lies between two readings of it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc promtool
find_python
in_netns TCX_EXPO_IN_NETNS
make_workdir

note "the snapshot's timestamp is within a second of the clock"
before=$(date +%s.%N)
run_tcx clock --once
after=$(date +%s.%N)
expect_rc clock 0
ts=$(sed -n 's/^tc_exporter_snapshot_timestamp_seconds \(.*\)$/\1/p' "$WORK/clock.out")
[ -n "$ts" ] || fail "no tc_exporter_snapshot_timestamp_seconds in the output"
# It was taken between the two readings of the clock (a millisecond of
# slack for the double's rounding), so well within a second of it.
"$PYTHON" - "$before" "$ts" "$after" <<'PY' || fail "timestamp $ts is not between $before and $after"
import sys
before, ts, after = (float(x) for x in sys.argv[1:])
sys.exit(0 if before - 0.001 <= ts <= after + 0.001 and after - before < 1 else 1)
PY

note "interface names and label values that are not UTF-8"
ff=$(printf '\xff')
bad_name=$(printf 'q"b\\x\xff') # the issue's name: q " b \ x 0xff
lit_name='\xff'                 # the four characters \ x f f
for dev in "$bad_name" "$lit_name" "$ff"; do
	ip link add "$dev" type veth peer name "p$((${n:=0}))"
	ip link set "$dev" up
	ip link set "p$n" up
	tc qdisc add dev "$dev" clsact
	# cookie 5c786666 is the four characters \xff, given by the ascii decoder
	tc filter add dev "$dev" ingress pref 1 protocol ip u32 match ip dst 10.0.0.1/32 \
		action mirred egress mirror dev "p$n" cookie 5c786666
	n=$((n + 1))
done
cat >"$WORK/utf8.yaml" <<'YAML'
labels: [rule]
decoders:
  - {type: ascii, label: rule}
YAML
for fmt in prometheus openmetrics json; do
	run_tcx "utf8_$fmt" --once --config "$WORK/utf8.yaml" --format "$fmt"
	expect_rc "utf8_$fmt" 0
done
# The text format: promtool takes it without a finding; each device is its own
# series, by the rule (q"b\\x\xff, \\xff, \xff), escaped for a label value.
if ! out=$(promtool check metrics <"$WORK/utf8_prometheus.out" 2>&1) || [ -n "$out" ]; then
	echo "$out" >&2
	fail "promtool check metrics rejects the text output"
fi
for want in 'device="q\"b\\\\x\\xff"' 'device="\\\\xff"' 'device="\\xff"'; do
	[ "$(grep -cF "tc_action_bytes_total{$want,parent=\"ingress\"" "$WORK/utf8_prometheus.out")" = 1 ] ||
		fail "text output: not exactly one tc_action_bytes_total row with $want"
done
grep -qF 'cookie="5c786666",rule="\\\\xff"}' "$WORK/utf8_prometheus.out" ||
	fail "text output: the ascii decoder's \\xff is not written \\\\xff"
# All three outputs are valid UTF-8; OpenMetrics has the same rows as the
# text format (promtool cannot read OpenMetrics' info type); the JSON lines
# parse, and name the three devices apart.
"$PYTHON" - "$WORK" "$bad_name" <<'PY' || fail "an output is not valid (see above)"
import json, sys
work = sys.argv[1]
texts = {}
for fmt in ("prometheus", "openmetrics", "json"):
    raw = open(f"{work}/utf8_{fmt}.out", "rb").read()
    try:
        texts[fmt] = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        sys.exit(f"{fmt}: not UTF-8: {e}")
def samples(text):
    # (the action times of two runs differ within the kernel's tick: the
    # clock read with each reply, less the ages; their series must match)
    return sorted(l.rsplit(" ", 1)[0] if "_timestamp_seconds{" in l else l
                  for l in text.splitlines() if l.startswith(("tc_action_", "tc_filter_")))
if samples(texts["prometheus"]) != samples(texts["openmetrics"]):
    sys.exit("OpenMetrics samples differ from the text format's")
if not texts["openmetrics"].endswith("# EOF\n"):
    sys.exit("OpenMetrics output does not end with # EOF")
devs = []
for line in texts["json"].splitlines():
    row = json.loads(line)
    if row["type"] != "action":
        continue
    devs.append(row["device"])
    if row["labels"] != {"rule": "\\\\xff"}:
        sys.exit(f"json: labels {row['labels']!r}, expected the rule's \\\\xff")
want = sorted(['q"b\\\\x\\xff', "\\\\xff", "\\xff"])
if sorted(devs) != want:
    sys.exit(f"json: devices {sorted(devs)!r}, expected {want!r}")
PY

note "families.hw: auto, the default, exports no hw_* series without offload; on does"
# this kernel offloads nothing: no row has hardware counters or is in_hw
! grep -q '^tc_action_hw_' "$WORK/utf8_prometheus.out" ||
	fail "the default (hw: auto) exported hw_* series without hardware counters"
printf '%s\nfamilies: {hw: on}\n' "$(cat "$WORK/utf8.yaml")" >"$WORK/hw_on.yaml"
run_tcx hw_on --once --config "$WORK/hw_on.yaml"
expect_rc hw_on 0
[ "$(grep -c '^tc_action_hw_bytes_total{' "$WORK/hw_on.out")" = 3 ] ||
	fail "hw: on: not one tc_action_hw_bytes_total series per row (3)"

# send_udp DEV DST_IP DPORT COUNT: raw frames out of DEV, to its veth peer's
# ingress.
send_udp() {
	"$PYTHON" - "$@" <<'PY'
import socket, struct, sys
dev, dst, dport, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF
udp = struct.pack("!HHHH", 40000, dport, 8 + 4, 0) + b"tcx!"
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                 socket.inet_aton("192.0.2.1"), socket.inet_aton(dst))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + ip + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
for _ in range(count):
    s.send(frame)
PY
}

# check_sums NAME: the text output of run NAME has unique series, passes
# promtool, and its tc_action_packets_total summed by cookie equals the
# kernel's totals of its mirred actions (each listed once), by cookie.
check_sums() {
	local name=$1
	if ! out=$(promtool check metrics <"$WORK/$name.out" 2>&1) || [ -n "$out" ]; then
		echo "$out" >&2
		fail "$name: promtool check metrics rejects the text output"
	fi
	tc -s -j actions ls action mirred >"$WORK/$name.actions.json"
	"$PYTHON" - "$WORK/$name.out" "$WORK/$name.actions.json" <<'PY' || fail "$name: see above"
import collections, json, re, sys
text, actions = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
seen, mine = set(), collections.Counter()
for line in text.splitlines():
    if line.startswith("#"):
        continue
    ident, value = line.rsplit(" ", 1)
    if ident in seen:
        sys.exit(f"two samples with the identity {ident}")
    seen.add(ident)
    if ident.startswith("tc_action_packets_total{"):
        mine[re.search(r'cookie="([0-9a-f]*)"', ident).group(1)] += int(value)
kernel = collections.Counter()
for block in actions:
    for a in block.get("actions", []):
        kernel[a.get("cookie", "")] += a["stats"]["packets"]
if dict(mine) != dict(kernel):
    sys.exit(f"packets by cookie: exporter {dict(mine)}, kernel {dict(kernel)}")
if sum(kernel.values()) == 0:
    sys.exit("no traffic was counted: the test proves nothing")
print(f"{len(seen)} series, packets by cookie {dict(mine)}")
PY
}

note "u32 filters at one pref in two chains and in egress: each once, under its chain"
for dev in "$bad_name" "$lit_name" "$ff"; do
	tc qdisc del dev "$dev" clsact # the kernel's totals: of this case's actions only
done
ip link add u0 type veth peer name u1
ip link add sink type veth peer name sink1
for d in u0 u1 sink sink1; do ip link set "$d" up; done
tc qdisc add dev u0 clsact
tc filter add dev u0 ingress chain 0 pref 50 protocol ip u32 match ip dport 53 0xffff \
	action mirred egress mirror dev sink goto chain 1 cookie 0a
tc filter add dev u0 ingress chain 1 pref 50 protocol ip u32 match ip dport 53 0xffff \
	action mirred egress mirror dev sink cookie 0b
tc filter add dev u0 egress pref 50 protocol ip u32 match ip dport 54 0xffff \
	action mirred egress mirror dev sink cookie 0c
send_udp u1 192.0.2.2 53 5
echo "targets: [{dev: u0}]" >"$WORK/chains.yaml"
run_tcx chains --once --config "$WORK/chains.yaml"
expect_rc chains 0
check_sums chains
for want in 'parent="ingress",chain="0",.*cookie="0a"} 5' 'parent="ingress",chain="1",.*cookie="0b"} 5' \
	'parent="egress",chain="0",.*cookie="0c"} 0'; do
	[ "$(grep -c "^tc_action_packets_total{device=\"u0\",$want\$" "$WORK/chains.out")" = 1 ] ||
		fail "chains: not exactly one row matching $want"
done
[ "$(grep -c '^tc_action_packets_total{' "$WORK/chains.out")" = 3 ] ||
	fail "chains: $(grep -c '^tc_action_packets_total{' "$WORK/chains.out") action rows, expected 3"

note "4200 u32 filters in one hash table, without cookies: one series each"
ip link add h0 type veth peer name h1
for d in h0 h1; do ip link set "$d" up; done
tc qdisc add dev h0 clsact
for i in $(seq 0 4199); do
	echo "filter add dev h0 ingress pref 10 protocol ip u32 match ip dst 10.0.$((i / 256)).$((i % 256))/32 action mirred egress mirror dev sink"
done >"$WORK/batch"
tc -batch "$WORK/batch"
[ "$(tc filter show dev h0 ingress | grep -c 'fh 800::fff ')" = 106 ] ||
	fail "the kernel did not reuse 800::fff past 4095 filters as expected"
send_udp h1 10.0.0.10 9 3   # filter 10 (800::80a)
send_udp h1 10.0.16.54 9 4  # filter 4150 (one of the 800::fff)
echo "targets: [{dev: h0}]" >"$WORK/many.yaml"
run_tcx many --once --config "$WORK/many.yaml"
expect_rc many 0
tc qdisc del dev u0 clsact # the kernel's totals: of h0's actions only
check_sums many
grep -qxF 'tc_exporter_merged_rows{row="action"} 105' "$WORK/many.out" ||
	fail "many: merged action rows not counted as 105"
expect_grep many err -F '105 filter and 105 action rows had the labels of an earlier row'

note "filters attached to classes: each once, under its own parent, by all and by dev"
tc qdisc del dev h0 clsact # the kernel's totals: of this case's actions only
ip link add c0 type veth peer name c1
for d in c0 c1; do ip link set "$d" up; done
tc qdisc add dev c0 root handle 1: htb default 20
tc class add dev c0 parent 1: classid 1:1 htb rate 10mbit
tc class add dev c0 parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit
tc class add dev c0 parent 1:1 classid 1:20 htb rate 5mbit ceil 10mbit
# dport 53: the root's pref 10 sends it to inner class 1:1, whose pref 20
# sends it to 1:10. dport 54: pref 30 at the root and at 1:1, which share
# the qdisc's u32 tables (so each dump lists both filters).
tc filter add dev c0 parent 1: pref 10 protocol ip u32 match ip dport 53 0xffff flowid 1:1 \
	action mirred egress mirror dev sink cookie c1
tc filter add dev c0 parent 1:1 pref 20 protocol ip u32 match ip dport 53 0xffff flowid 1:10 \
	action mirred egress mirror dev sink cookie c2
tc filter add dev c0 parent 1: pref 30 protocol ip u32 match ip dport 54 0xffff flowid 1:1 \
	action mirred egress mirror dev sink cookie c3
tc filter add dev c0 parent 1:1 pref 30 protocol ip u32 match ip dport 54 0xffff flowid 1:20 \
	action mirred egress mirror dev sink cookie c4
[ "$(tc filter show dev c0 parent 1: | grep -c 'cookie c4')" = 1 ] ||
	fail "the kernel no longer lists a class's u32 filters under its qdisc's tp of the same pref"
send_udp c0 192.0.2.2 53 3 # out of c0: through its HTB root
send_udp c0 192.0.2.2 54 4
echo "targets: [{dev: c0}]" >"$WORK/classes_dev.yaml"
for name in classes_all classes_dev; do
	if [ "$name" = classes_all ]; then
		run_tcx "$name" --once
	else
		run_tcx "$name" --once --config "$WORK/$name.yaml"
	fi
	expect_rc "$name" 0
	check_sums "$name"
	for want in 'parent="1:",.*pref="10",.*cookie="c1"} 3' 'parent="1:1",.*pref="20",.*cookie="c2"} 3' \
		'parent="1:",.*pref="30",.*cookie="c3"} 4' 'parent="1:1",.*pref="30",.*cookie="c4"} 4'; do
		[ "$(grep -c "^tc_action_packets_total{device=\"c0\",$want\$" "$WORK/$name.out")" = 1 ] ||
			fail "$name: not exactly one row matching $want"
	done
	[ "$(grep -c '^tc_action_packets_total{device="c0"' "$WORK/$name.out")" = 4 ] ||
		fail "$name: $(grep -c '^tc_action_packets_total{device="c0"' "$WORK/$name.out") action rows of c0, expected 4"
	# Classes without filters are no target of their own.
	[ "$(grep -c '^tc_scrape_collector_success{device="c0",' "$WORK/$name.out")" = 2 ] ||
		fail "$name: targets of c0 are not exactly its qdisc 1: and class 1:1"
done

note "targets whose parents print alike are one: root and ffff:ffff, ingress and ffff:fff1"
tc qdisc del dev c0 root # the kernel's totals: of this case's actions only
ip link add a0 type veth peer name a1
for d in a0 a1; do ip link set "$d" up; done
tc qdisc add dev a0 root handle 1: htb default 1
tc qdisc add dev a0 ingress
# The same identity but for the parent: pref 10, handle 800::800, cookie aa.
# The kernel takes ffff:ffff (which prints as root) and ffff:fff1 (as
# ingress) for the ingress qdisc.
tc filter add dev a0 parent 1: pref 10 protocol ip u32 match ip dport 53 0xffff \
	action mirred egress mirror dev sink cookie aa
tc filter add dev a0 parent ffff: pref 10 protocol ip u32 match ip dport 54 0xffff \
	action mirred egress mirror dev sink cookie aa
send_udp a0 192.0.2.2 53 3 # out of a0: through its HTB root
send_udp a1 192.0.2.2 54 4 # into a0's ingress
cat >"$WORK/alias.yaml" <<'YAML'
targets:
  - {dev: a0, parent: root}
  - {dev: a0, parent: "ffff:ffff"}
  - {dev: a0, parent: "ffff:fff1"}
  - {dev: a0, parent: ingress}
YAML
run_tcx alias --once --config "$WORK/alias.yaml"
expect_rc alias 0
check_sums alias
for want in 'parent="root",.*cookie="aa"} 3' 'parent="ingress",.*cookie="aa"} 4'; do
	[ "$(grep -c "^tc_action_packets_total{device=\"a0\",$want\$" "$WORK/alias.out")" = 1 ] ||
		fail "alias: not exactly one row matching $want"
done
[ "$(grep -c '^tc_scrape_collector_success{device="a0",' "$WORK/alias.out")" = 2 ] ||
	fail "alias: targets of a0 are not exactly its root and its ingress"

note "filters without actions: the JSON filters line, hit counters only where the kernel keeps them"
# a rule that only classifies (flowid), beside a0's rules with actions
tc filter add dev a0 parent 1: pref 20 protocol ip u32 match ip dport 55 0xffff flowid 1:1
send_udp a0 192.0.2.2 55 2
tc -s filter show dev a0 parent 1: >"$WORK/hits.tc"
run_tcx hits --once --config "$WORK/alias.yaml"
expect_rc hits 0
run_tcx hits_json --once --config "$WORK/alias.yaml" --format json
expect_rc hits_json 0
# CONFIG_CLS_U32_PERF shows as tc's "(rule hit N success M)"
perf=0
grep -q 'rule hit' "$WORK/hits.tc" && perf=1
"$PYTHON" - "$WORK/hits.out" "$WORK/hits_json.out" "$WORK/hits.tc" "$perf" <<'PY' || fail "hits: see above"
import json, re, sys
text = open(sys.argv[1]).read()
rows = [json.loads(l) for l in open(sys.argv[2])]
tc = open(sys.argv[3]).read()
perf = sys.argv[4] == "1"
filters = [r for r in rows if r["type"] == "filter"]
flags = [l for l in text.splitlines() if l.startswith("tc_filter_flags_info{")]
if len(filters) != len(flags):
    sys.exit(f"{len(filters)} filters in JSON, {len(flags)} in tc_filter_flags_info")
# tc's knodes: fh 800::800 ... then (rule hit N success M) when kept
tc_hits = dict(re.findall(r"pref 20 u32 chain 0 fh (\S+::\S+) .*?\(rule hit \d+ success (\d+)\)", tc, re.S))
flowid = [f for f in filters if f["pref"] == 20 and "::" in f["handle"]]
if len(flowid) != 1:
    sys.exit(f"the flowid rule: {len(flowid)} JSON objects, expected 1")
for f in filters:
    has = sorted(k for k in ("lookups", "hits", "key_hits") if k in f)
    if not perf and has:
        sys.exit(f"{f['handle']}: {has} without CONFIG_CLS_U32_PERF: a counter the kernel does not keep must be absent")
    if perf and "::" in f["handle"] and f["pref"] == 20 and f.get("hits") != int(tc_hits[f["handle"]]):
        sys.exit(f"{f['handle']}: hits {f.get('hits')}, tc says {tc_hits.get(f['handle'])}")
for fam in ("tc_filter_lookups_total", "tc_filter_hits_total"):
    n = sum(l.startswith(fam + "{") for l in text.splitlines())
    if not perf and (n or f"# HELP {fam} " in text):
        sys.exit(f"{fam} written without CONFIG_CLS_U32_PERF")
    if perf and n != sum("::" in f["handle"] for f in filters if f["kind"] == "u32"):
        sys.exit(f"{fam}: {n} series, not one per u32 rule")
print(f"hits: {len(filters)} filters, CONFIG_CLS_U32_PERF {'on' if perf else 'off'}")
PY
