#!/bin/bash
# Kernel integration test (root): builds TC filters in fresh network
# namespaces, sends traffic through them, then checks that
# `tcexporter --once` reports exactly the action rows and counters that
# `tc -s -j filter show` reports (tests/integration/compare_tc.py), in JSON
# and Prometheus form, with an explicit configuration and with the built-in
# default; then the failure paths (missing device or netns, bad config,
# a device deleted between two runs).
#
# The body runs under `unshare -m -n`: a private network namespace for the
# filters, and a private mount namespace whose /run is a tmpfs, so that
# `ip netns add` can create the named namespace "blue" without touching the
# host. Everything disappears with the process.
#
# Kernel needs: veth, clsact, ingress, htb, cls_u32, act_mirred, shared
# blocks. Nothing here needs flower, matchall or gact: chains are reached
# with mirred's `goto chain` control action.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

if [ "${TCX_NETNS_ONCE_INSIDE:-}" != 1 ]; then
	require_bin
	require_root -m -n
	require_cmd ip tc mount sysctl nsenter
	find_python
	export TCX_NETNS_ONCE_INSIDE=1
	exec unshare -m -n --propagation private -- "$BASH" "$0" "$@"
fi

# ---- inside the new namespaces ---------------------------------------------------------
compare=$here/compare_tc.py
[ -f "$compare" ] || fail "$compare not found"
start=$(date +%s%N)
# A private, empty /run/netns (this mount namespace only): over the host's
# /run/netns when there is one, else over /run (the host is not written to).
if [ -d /run/netns ]; then
	mount -t tmpfs tcx-test-netns /run/netns || skip "cannot mount a private /run/netns"
else
	case "${TMPDIR:-/tmp}" in /run | /run/*) export TMPDIR=/tmp ;; esac
	mount -t tmpfs tcx-test-run /run || skip "cannot mount a private /run for 'ip netns'"
	mkdir /run/netns
fi
make_workdir

# Kernel features, probed in a throw-away namespace: a missing feature is a
# skip (a different kernel), not a tcexporter failure.
probe() {
	ip netns add probe &&
		ip -n probe link add p0 type veth peer name p1 &&
		tc -n probe qdisc add dev p0 clsact &&
		tc -n probe qdisc add dev p1 ingress_block 9 ingress &&
		tc -n probe qdisc add dev p0 root handle 1: htb &&
		tc -n probe filter add dev p0 egress pref 1 protocol ip u32 match u32 0 0 \
			action mirred egress mirror dev p1 goto chain 2 cookie 01 &&
		tc -n probe filter add block 9 pref 1 protocol ip u32 match u32 0 0 \
			action mirred egress mirror dev p0
}
if ! out=$(probe 2>&1); then
	skip "kernel lacks a feature this test needs (veth, clsact, ingress block, htb, u32, mirred): $out"
fi
ip netns del probe

n_actions_main=0
n_actions_blue=0
# filt NETNS TC-ARGS...: `tc [-n NETNS] filter add TC-ARGS`, counting the
# actions it creates (every "action" word starts one).
filt() {
	local ns=$1 a n=0
	shift
	for a in "$@"; do [ "$a" != action ] || n=$((n + 1)); done
	if [ -n "$ns" ]; then
		tc -n "$ns" filter add "$@"
		n_actions_blue=$((n_actions_blue + n))
	else
		tc filter add "$@"
		n_actions_main=$((n_actions_main + n))
	fi
}
# The words of a mirred mirror action to each sink.
mirror_m0=(mirred egress mirror dev m0)
mirror_md0=(mirred egress mirror dev md0)
mirror_bm0=(mirred egress mirror dev bm0)

# ---- topology ----------------------------------------------------------------------------
note "building the topology"
# No IPv6 (no router solicitations, DAD or MLD): the only packets are ours.
# Neighbours are static: no ARP either.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip link set lo up

# Mirror sinks: copies mirrored to m0 end at m0p and die there (no address,
# no filter: nothing comes back). md0 stays down: mirred to it fails and
# counts an overlimit.
ip link add m0 type veth peer name m0p
ip link set m0 up
ip link set m0p up
ip link add md0 type veth peer name md1

# Pair A: v0 (clsact, 10.1.0.1) <-> v0p (legacy ingress qdisc, 10.6.0.1).
ip link add v0 type veth peer name v0p
ip link set v0 up
ip link set v0p up
ip addr add 10.1.0.1/24 dev v0
ip addr add 10.6.0.1/24 dev v0p
for h in 2 3 4 5; do ip neigh add 10.1.0.$h lladdr 02:00:00:00:01:0$h dev v0; done
ip neigh add 10.6.0.2 lladdr 02:00:00:00:06:02 dev v0p
tc qdisc add dev v0 clsact
tc qdisc add dev v0p ingress

# v0 egress: several prefs, chains 0 and 3, several actions per filter,
# cookies of 1 and 16 bytes, actions without cookie, filters without actions.
filt "" dev v0 egress pref 10 protocol ip u32 match ip dst 10.1.0.2/32 \
	action "${mirror_m0[@]}" cookie 01 \
	action "${mirror_m0[@]}" goto chain 3 cookie 00112233445566778899aabbccddeeff
filt "" dev v0 egress pref 20 protocol ip u32 match ip dst 10.1.0.3/32 classid 1:1
filt "" dev v0 egress pref 20 protocol ip u32 match ip dst 10.1.0.4/32 \
	action "${mirror_m0[@]}"
filt "" dev v0 egress chain 3 pref 30 protocol ip u32 match ip dst 10.1.0.2/32 \
	action "${mirror_md0[@]}" cookie aabbccdd \
	action "${mirror_m0[@]}" cookie 22
filt "" dev v0 egress chain 3 pref 40 protocol ipv6 u32 match u32 0 0 \
	action "${mirror_m0[@]}" cookie 0011223344556677
filt "" dev v0 egress pref 50 protocol ip u32 skip_hw match ip dst 10.1.0.5/32 \
	action mirred egress redirect dev md0
# v0 ingress: what v0p sends.
# (Not pref 10..50: u32 keeps the hash tables of a qdisc's two clsact blocks
# in one list and its dump walks all tables of the same pref, so a pref used
# on both ingress and egress of one clsact - or in two chains of one block -
# would list each side's filters on the other side too, in tc as well.)
filt "" dev v0 ingress pref 15 protocol all u32 match u32 0 0 \
	action "${mirror_m0[@]}" cookie ff00000001000005
# v0p, legacy ingress qdisc: what v0 sends, unless redirected away.
filt "" dev v0p ingress pref 1 protocol ip u32 match ip dst 10.1.0.2/32 \
	action "${mirror_m0[@]}" cookie c0ffee
filt "" dev v0p ingress pref 2 protocol arp u32 match u32 0 0 \
	action "${mirror_m0[@]}"
filt "" dev v0p ingress pref 3 protocol ip u32 match ip dst 10.1.0.4/32 \
	action "${mirror_m0[@]}" cookie 01 \
	action "${mirror_m0[@]}" \
	action "${mirror_md0[@]}" cookie 0A0B

# Pair B: v1 (root htb 1: and clsact, 10.2.0.1) <-> v1p.
ip link add v1 type veth peer name v1p
ip link set v1 up
ip link set v1p up
ip addr add 10.2.0.1/24 dev v1
for h in 2 3; do ip neigh add 10.2.0.$h lladdr 02:00:00:00:02:0$h dev v1; done
tc qdisc add dev v1 root handle 1: htb default 10
tc class add dev v1 parent 1: classid 1:10 htb rate 1gbit quantum 1514
tc qdisc add dev v1 clsact
filt "" dev v1 parent 1: pref 10 protocol ip u32 match ip dst 10.2.0.2/32 classid 1:10 \
	action "${mirror_m0[@]}" cookie 33
filt "" dev v1 parent 1: pref 20 protocol ip u32 match ip dst 10.2.0.3/32 classid 1:10
filt "" dev v1 parent 1: pref 30 protocol ip u32 match u32 0 0 classid 1:10 \
	action "${mirror_m0[@]}" cookie 44
filt "" dev v1 egress pref 5 protocol ip u32 match ip dst 10.2.0.3/32 \
	action "${mirror_m0[@]}" cookie 55

# Shared block 22 on the ingress of vAp and vBp (clsact); vB's egress is
# shared block 23 (bound to one device only); vAp's egress is its own.
for x in A B; do
	ip link add v$x type veth peer name v${x}p
	ip link set v$x up
	ip link set v${x}p up
	tc qdisc add dev v${x}p ingress_block 22 clsact
done
ip addr add 10.3.0.1/24 dev vA
ip addr add 10.4.0.1/24 dev vB
ip neigh add 10.3.0.2 lladdr 02:00:00:00:03:02 dev vA
ip neigh add 10.4.0.2 lladdr 02:00:00:00:04:02 dev vB
tc qdisc add dev vB egress_block 23 clsact
filt "" block 22 pref 10 protocol ip u32 match ip dst 10.3.0.2/32 \
	action "${mirror_m0[@]}" cookie 0a0b
filt "" block 22 pref 10 protocol ip u32 match ip dst 10.4.0.2/32 \
	action "${mirror_m0[@]}" goto chain 7 cookie ffeeddccbbaa99887766554433221100
filt "" block 22 chain 7 pref 70 protocol ip u32 match u32 0 0 \
	action "${mirror_md0[@]}" \
	action "${mirror_m0[@]}" cookie 66
filt "" block 22 pref 20 protocol ip u32 match ip dst 10.3.0.9/32 classid 1:1
filt "" block 23 pref 1 protocol ip u32 match ip dst 10.4.0.2/32 \
	action "${mirror_m0[@]}" cookie 77
filt "" dev vAp egress pref 1 protocol ip u32 match u32 0 0 \
	action "${mirror_m0[@]}" cookie 88

# Named namespace "blue": the same device name v0 and the same block index 22
# as in ours, so that a mix-up between namespaces shows.
ip netns add blue
ip -n blue link set lo up
ip -n blue link add v0 type veth peer name b0p
ip -n blue link add bm0 type veth peer name bm0p
for d in v0 b0p bm0 bm0p; do ip -n blue link set "$d" up; done
ip -n blue addr add 10.9.0.1/24 dev v0
ip -n blue neigh add 10.9.0.2 lladdr 02:00:00:00:09:02 dev v0
tc -n blue qdisc add dev v0 clsact
tc -n blue qdisc add dev b0p ingress_block 22 ingress
filt blue dev v0 egress pref 10 protocol ip u32 match ip dst 10.9.0.2/32 \
	action "${mirror_bm0[@]}" cookie 01
filt blue block 22 pref 10 protocol ip u32 match u32 0 0 \
	action "${mirror_bm0[@]}" cookie 99 \
	action "${mirror_bm0[@]}"
note "$n_actions_main actions in our namespace, $n_actions_blue in netns blue"

# ---- traffic -------------------------------------------------------------------------------
cat >"$WORK/send.py" <<'PY'
import errno, socket, sys
# send.py DST COUNT SIZE [DST COUNT SIZE]...: UDP datagrams of SIZE bytes.
a = sys.argv[1:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(0, len(a), 3):
    dst, count, size = a[i], int(a[i + 1]), int(a[i + 2])
    for _ in range(count):
        try:
            s.sendto(b"x" * size, (dst, 9))
        except OSError as e:  # a dropped datagram (redirect to a down device)
            if e.errno != errno.ENOBUFS:
                raise
PY
note "sending traffic"
# Different counts and sizes per flow, so that counters differ.
"$PYTHON" "$WORK/send.py" \
	10.1.0.2 3 100 10.1.0.3 4 300 10.1.0.4 5 500 10.1.0.5 2 50 \
	10.6.0.2 6 64 10.2.0.2 7 200 10.2.0.3 8 120 10.3.0.2 9 80 10.4.0.2 10 700
nsenter --net=/run/netns/blue "$PYTHON" "$WORK/send.py" 10.9.0.2 11 90

# ---- what to compare with ----------------------------------------------------------------
# compare_tc.py targets: --dev NETNS DEV PARENT_LABEL TC_PARENT, --block NETNS N.
main_targets=(
	--dev "" v0 egress egress --dev "" v0 ingress ingress
	--dev "" v0p ingress ingress
	--dev "" v1 1: 1: --dev "" v1 egress egress
	--dev "" vAp egress egress
	--block "" 22 --block "" 23
)
blue_targets=(--dev blue v0 egress egress --block blue 22)
tcmp() { "$PYTHON" "$compare" "$@"; }
# tc_actions TC-FILTER-SHOW-ARGS...: how many actions tc lists there.
tc_actions() {
	tc -j filter show "$@" | "$PYTHON" -c \
		'import json,sys; print(sum(len(e.get("options",{}).get("actions",[])) for e in json.load(sys.stdin)))'
}

# Wait until the counters stand still (the receive side of a veth runs in
# softirq context), then keep a snapshot to prove they did not move later.
tcmp snapshot "${main_targets[@]}" "${blue_targets[@]}" -o "$WORK/tc0.json" >/dev/null
for i in $(seq 1 50); do
	sleep 0.1
	tcmp snapshot "${main_targets[@]}" "${blue_targets[@]}" -o "$WORK/tc1.json" >/dev/null
	if tcmp same "$WORK/tc0.json" "$WORK/tc1.json" >/dev/null; then break; fi
	[ "$i" -lt 50 ] || fail "tc counters keep changing: something else sends packets"
	mv "$WORK/tc1.json" "$WORK/tc0.json"
done
tcmp snapshot "${main_targets[@]}" "${blue_targets[@]}" -o "$WORK/tc-before.json"

# ---- the configurations ----------------------------------------------------------------
# Label values that need escaping: a quote, a backslash, a newline. Cookie
# keys in several spellings (0x, upper case).
cat >"$WORK/cookies.yaml" <<'YAML'
labels: [tenant, rule]
cookies:
  "01": {tenant: acme, rule: "q\"uo\\te\nnl"}
  "0x00112233445566778899AABBCCDDEEFF": [globex, sixteen bytes]
  "c0ffee": {tenant: initech, rule: legacy}
  "0A0B": [acme, shared]
  "99": [blue, block]
  "33": [htb, root]
YAML
# The same map for compare_tc.py.
cat >"$WORK/cookies.json" <<'JSON'
{"01": {"tenant": "acme", "rule": "q\"uo\\te\nnl"},
 "00112233445566778899aabbccddeeff": {"tenant": "globex", "rule": "sixteen bytes"},
 "c0ffee": {"tenant": "initech", "rule": "legacy"},
 "0a0b": {"tenant": "acme", "rule": "shared"},
 "99": {"tenant": "blue", "rule": "block"},
 "33": {"tenant": "htb", "rule": "root"}}
JSON
# As the Prometheus text must escape it.
escaped='rule="q\"uo\\te\nnl"'

# a.yaml: every target once, the blue namespace by discovery.
cat - "$WORK/cookies.yaml" >"$WORK/a.yaml" <<'YAML'
targets:
  - {dev: v0, parent: egress}
  - {dev: v0, parent: ingress}
  - {dev: v0p, parent: ingress}
  - {dev: v1, parent: "1:"}
  - {dev: v1, parent: egress}
  - {dev: vAp, parent: egress}
  - {block: 22}
  - {block: 23}
  - {all: true, netns: blue}
unmapped: export
YAML
# c.yaml: the root qdisc by its name, a device without parent (all of its
# parents), a block in a netns and in ours, and unmapped cookies dropped.
cat - "$WORK/cookies.yaml" >"$WORK/c.yaml" <<'YAML'
targets:
  - {dev: v1, parent: root}
  - {dev: v0, netns: blue}
  - {block: 22, netns: blue}
  - {block: 22}
unmapped: drop
YAML

# ---- the runs --------------------------------------------------------------------------------
note "tcexporter --once with an explicit configuration (json, prometheus) and the default"
t_runs=$(date +%s%N)
run_tcx a_json --once --config "$WORK/a.yaml" --format json
run_tcx a_prom --once --config "$WORK/a.yaml" --format prometheus
run_tcx a_prom_default_format --once --config "$WORK/a.yaml"
run_tcx default_json --once --format json
run_tcx c_json --once --config "$WORK/c.yaml" --format json
t_runs_end=$(date +%s%N)
tcmp snapshot "${main_targets[@]}" "${blue_targets[@]}" -o "$WORK/tc-after.json" >/dev/null
tcmp same "$WORK/tc-before.json" "$WORK/tc-after.json"
for r in a_json a_prom a_prom_default_format default_json c_json; do
	expect_rc $r 0
	expect_empty $r err
done
# (the action times of two runs differ within the kernel's tick: two clock
# reads less the ages; their series are compared)
grep '^tc_action_' "$WORK/a_prom.out" | sed -E 's/^(tc_action_[a-z_]+_timestamp_seconds\{.*\}) .*/\1/' \
	>"$WORK/a_prom.actions" || fail "a_prom: no tc_action_ sample in the Prometheus output"
grep '^tc_action_' "$WORK/a_prom_default_format.out" |
	sed -E 's/^(tc_action_[a-z_]+_timestamp_seconds\{.*\}) .*/\1/' >"$WORK/a_prom_default_format.actions" ||
	true
diff -u "$WORK/a_prom.actions" "$WORK/a_prom_default_format.actions" ||
	fail "without --format the output is not the Prometheus text of --format prometheus"

status=0
note "explicit configuration, JSON: every target, both namespaces"
tcmp json --exporter "$WORK/a_json.out" "${main_targets[@]}" "${blue_targets[@]}" \
	--expect-rows $((n_actions_main + n_actions_blue)) --min-distinct-bytes 8 \
	--require-nonzero bytes --require-nonzero packets --require-nonzero overlimits \
	--labels tenant,rule --cookie-map "$WORK/cookies.json" || status=1

note "explicit configuration, Prometheus: same counters, labels from the cookie map"
tcmp prom --exporter "$WORK/a_prom.out" "${main_targets[@]}" "${blue_targets[@]}" \
	--expect-rows $((n_actions_main + n_actions_blue)) --min-distinct-bytes 8 \
	--labels tenant,rule --cookie-map "$WORK/cookies.json" \
	--expect-text "$escaped" || status=1

note "default configuration (all targets of our namespace), JSON"
tcmp json --exporter "$WORK/default_json.out" "${main_targets[@]}" \
	--expect-rows "$n_actions_main" --min-distinct-bytes 8 --require-nonzero bytes ||
	status=1
# The shared block is one target, not one per device bound to it.
n22=$(grep '"action":' "$WORK/default_json.out" | grep -c '"netns":"","device":null,"block":22,' || true)
n22_tc=$(tc_actions block 22)
if [ "$n22" != "$n22_tc" ] || [ "$n22" -eq 0 ]; then
	echo "block 22: $n22 rows in the default output, tc has $n22_tc actions"
	status=1
fi

note "root parent, device without parent, blocks in two namespaces, unmapped: drop"
tcmp json --exporter "$WORK/c_json.out" \
	--dev "" v1 root 1: --dev blue v0 egress egress --block blue 22 --block "" 22 \
	--labels tenant,rule --cookie-map "$WORK/cookies.json" --unmapped-drop || status=1

[ "$status" = 0 ] || fail "tcexporter's rows differ from tc's (see above)"

# ---- failures -------------------------------------------------------------------------------
note "a missing device and a missing netns next to a valid target: exit 1, rest printed"
cat >"$WORK/f_missing.yaml" <<'YAML'
targets:
  - {dev: nosuch0, parent: ingress}
  - {dev: v0p, parent: ingress}
  - {all: true, netns: nosuchns}
YAML
run_tcx f_missing --once --config "$WORK/f_missing.yaml" --format json
expect_rc f_missing 1
expect_grep f_missing err -F nosuch0
expect_grep f_missing err -F nosuchns
tcmp json --exporter "$WORK/f_missing.out" --dev "" v0p ingress ingress --min-distinct-bytes 2 ||
	fail "f_missing: the valid target's rows are wrong"
run_tcx f_missing_prom --once --config "$WORK/f_missing.yaml"
expect_rc f_missing_prom 1
expect_grep f_missing_prom out -F 'tc_scrape_collector_success{device="nosuch0",parent="ingress"} 0'
expect_grep f_missing_prom out -F 'tc_scrape_collector_success{device="v0p",parent="ingress"} 1'

note "a bad key: exit 2, FILE:LINE:COL:, no output"
cat >"$WORK/f_badkey.yaml" <<'YAML'
targets:
  - {dev: v0, parent: ingress}
  - dev: v0
    parnet: egress
YAML
run_tcx f_badkey --once --config "$WORK/f_badkey.yaml" --format json
expect_rc f_badkey 2
expect_grep f_badkey err -E "$WORK/f_badkey.yaml:4:[0-9]+: "
expect_empty f_badkey out

note "a device deleted between two runs: the second reports it failed, no crash"
cat >"$WORK/f_gone.yaml" <<'YAML'
targets:
  - {dev: vAp, parent: egress}
  - {dev: v0p, parent: ingress}
YAML
run_tcx f_gone1 --once --config "$WORK/f_gone.yaml" --format json
expect_rc f_gone1 0
tcmp json --exporter "$WORK/f_gone1.out" --dev "" vAp egress egress --dev "" v0p ingress ingress \
	>/dev/null || fail "f_gone1: rows differ from tc"
ip link del vAp
run_tcx f_gone2 --once --config "$WORK/f_gone.yaml" --format json
expect_rc f_gone2 1
expect_grep f_gone2 err -F vAp
tcmp json --exporter "$WORK/f_gone2.out" --dev "" v0p ingress ingress ||
	fail "f_gone2: the remaining target's rows are wrong"
# The default configuration simply no longer finds it; block 22 lives on (vBp).
run_tcx f_gone_default --once --format json
expect_rc f_gone_default 0
tcmp json --exporter "$WORK/f_gone_default.out" \
	--dev "" v0 egress egress --dev "" v0 ingress ingress --dev "" v0p ingress ingress \
	--dev "" v1 1: 1: --dev "" v1 egress egress --block "" 22 --block "" 23 ||
	fail "f_gone_default: rows differ from tc"

# ---- a large device ---------------------------------------------------------------------------
# 3000 filters make a reply of some 1.2 MB, about 40 chunks, received and
# parsed in turn, and 6000 Prometheus rows and more. The small target after it
# is dumped on the same socket.
note "a device with 3000 filters (a reply of many chunks), then a small one on the same socket"
ip link add vL0 type veth peer name vL1
ip link set vL0 up
ip link set vL1 up
tc qdisc add dev vL0 clsact
awk 'BEGIN {
	for (i = 0; i < 3000; i++)
		printf "filter add dev vL0 ingress pref %d protocol ip u32 match ip dst 10.77.%d.%d/32 " \
		       "action mirred egress mirror dev vL1 cookie 6c61726765%08x\n",
		       1 + int(i / 1500), int(i / 256), i % 256, i
}' >"$WORK/large.batch"
tc -batch "$WORK/large.batch"
cat >"$WORK/large.yaml" <<'YAML'
targets:
  - {dev: vL0, parent: ingress}
  - {dev: v0p, parent: ingress}
YAML
run_tcx large_json --once --config "$WORK/large.yaml" --format json
run_tcx large_prom --once --config "$WORK/large.yaml"
for r in large_json large_prom; do
	expect_rc $r 0
	expect_empty $r err
done
# The rows expected, counted from tc's own dump (not from the output).
n_large=$(($(tc_actions dev vL0 ingress) + $(tc_actions dev v0p ingress)))
[ "$n_large" -gt 3000 ] || fail "tc lists $n_large actions on vL0 and v0p, expected over 3000"
tcmp json --exporter "$WORK/large_json.out" --dev "" vL0 ingress ingress --dev "" v0p ingress ingress \
	--expect-rows "$n_large" || fail "large_json: rows differ from tc"
tcmp prom --exporter "$WORK/large_prom.out" --dev "" vL0 ingress ingress --dev "" v0p ingress ingress \
	--expect-rows "$n_large" || fail "large_prom: rows differ from tc"

end=$(date +%s%N)
echo "netns_once: all checks passed in $(((end - start) / 1000000)) ms" \
	"(the 5 tcexporter runs of the main comparison: $(((t_runs_end - t_runs) / 1000000)) ms)"
