#!/bin/bash
# `devices:` include/exclude on qdisc and class rows (issue 16): under an
# `all: true` target, a device the regexes leave out has none of its
# tc_qdisc_*, tc_class_* and tc_scrape_device_* series (nor filter rows), in
# `--once` text, OpenMetrics and JSON; a device they let in has every one of
# them, equal to what tc reports (tests/integration/compare_qdisc.py
# --devices, which counts a row of any other device as EXTRA).
#
# In the named namespace "dv" (a private /run/netns), with
#   devices: {include: "^a", exclude: "^a[2-9]|^ab"}
#   a0  in:  HTB 1: -> 1:1 -> 1:10 (pfifo 10:) and 1:20 (tbf 20:); clsact;
#            u32 filters at parent 1:, parent 1:1 and clsact ingress, each
#            with a mirred action to k1; traffic through the HTB;
#            (4 classes: tbf's 20:1 besides HTB's three);
#   a1  in:  a0's peer, noqueue (a device with a root qdisc and no class);
#   ab0 out (exclude): the same tree as a0 (ingress instead of clsact), its
#            filters and traffic;
#   a7  out (exclude): ab0's peer, noqueue;
#   x0  out (not include): the same tree as a0, its filters and traffic;
#   x1, k0, k1, lo: out (not include), noqueue.
# What tc lists on the devices left out is checked first (their qdiscs,
# classes and filters exist), so that their absence proves something.
# Then `dev:` targets under the same `devices:`, which it does not apply to:
# {dev: x0} and {dev: ab0, parent: ingress} give every qdisc, class and
# tc_scrape_device_* row of x0 and ab0 (and no other device's), and the
# filters of x0 (parents 1:, 1:1, ingress) and of ab0's ingress.
#
# Kernel needs (all built into the 6.18 build machine's kernel): veth, htb,
# tbf, pfifo, ingress, clsact, cls_u32, act_mirred.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root -m -n
require_cmd ip tc promtool mount sysctl
find_python
in_netns TCX_QDISC_DEVICES_NS -m -n --propagation private
make_workdir
cmpq=$here/compare_qdisc.py
cmpf=$here/compare_tc.py
private_netns_dir
ip link set lo up

ns=dv
require_qdisc_features

ip netns add "$ns"
nsx() { ip netns exec "$ns" "$@"; }
tcn() { tc -n "$ns" "$@"; }
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n "$ns" link set lo up
for p in "a0 a1" "ab0 a7" "x0 x1" "k0 k1"; do
	read -r a b <<<"$p"
	ip -n "$ns" link add "$a" type veth peer name "$b"
	ip -n "$ns" link set "$a" up
	ip -n "$ns" link set "$b" up
done
included=(a0 a1)
excluded=(ab0 a7 x0 x1 k0 k1 lo)

# tree DEV INGRESS_KIND COOKIE: an HTB tree, its filters and an ingress hook.
tree() {
	local d=$1 ik=$2 c=$3
	tcn qdisc add dev "$d" root handle 1: htb default 20
	tcn class add dev "$d" parent 1: classid 1:1 htb rate 10mbit ceil 10mbit
	tcn class add dev "$d" parent 1:1 classid 1:10 htb rate 2mbit ceil 10mbit
	tcn class add dev "$d" parent 1:1 classid 1:20 htb rate 2mbit ceil 10mbit
	tcn qdisc add dev "$d" parent 1:10 handle 10: pfifo limit 100
	tcn qdisc add dev "$d" parent 1:20 handle 20: tbf rate 2mbit burst 6000 limit 30000
	tcn filter add dev "$d" parent 1: pref 10 protocol ip u32 match ip protocol 17 0xff \
		flowid 1:1 action mirred egress mirror dev k1 cookie "${c}01"
	tcn filter add dev "$d" parent 1:1 pref 20 protocol ip u32 match ip dport 1000 0xffff \
		flowid 1:10 action mirred egress mirror dev k1 cookie "${c}02"
	tcn qdisc add dev "$d" "$ik"
	tcn filter add dev "$d" ingress pref 1 protocol ip u32 match u32 0 0 \
		action mirred egress mirror dev k1 cookie "${c}03"
}
tree a0 clsact 0a
tree ab0 ingress 0b
tree x0 clsact 0c

note "traffic out of a0, ab0 and x0 (through their HTBs)"
for d in a0 ab0 x0; do
	nsx "$PYTHON" "$here/../lib/udp_raw.py" "$d" 1000:500:20 2000:500:10 >/dev/null ||
		fail "sending out of $d failed"
done
deadline=$((SECONDS + 20))
until tcn -s -j qdisc show | "$PYTHON" -c '
import json, sys
sys.exit(0 if all(q["qlen"] == 0 for q in json.load(sys.stdin)) else 1)'; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the queues of $ns did not drain within 20 s"
	sleep 0.2
done

note "premise: tc lists qdiscs, classes and filters on the devices left out"
"$PYTHON" "$cmpq" capture "$WORK/premise" --netns "$ns" >/dev/null ||
	fail "capturing tc's view failed"
"$PYTHON" - "$WORK/premise" "${excluded[*]}" <<'PY' || fail "the premise does not hold (above)"
import json, sys
d, excluded = sys.argv[1], sys.argv[2].split()
q = json.load(open(d + "/qdisc.json"))
for dev in excluded:
    if not any(e["dev"] == dev for e in q):
        sys.exit("tc lists no qdisc on %s" % dev)
for dev, kinds in (("ab0", {"htb", "pfifo", "tbf", "ingress"}), ("x0", {"htb", "pfifo", "tbf", "clsact"})):
    got = {e["kind"] for e in q if e["dev"] == dev}
    if got != kinds:
        sys.exit("%s: tc lists qdiscs %r, the test set up %r" % (dev, got, kinds))
    if not any(e["dev"] == dev and e["kind"] == "htb" and e["packets"] > 0 for e in q):
        sys.exit("%s: its HTB counted no packet" % dev)
    classes = open("%s/class.%s.txt" % (d, dev)).read().count("class htb ")
    if classes != 3:
        sys.exit("%s: tc lists %d HTB classes, the test set up 3" % (dev, classes))
print("excluded devices: qdiscs on %s; ab0 and x0 with 4 qdiscs, 3 classes, traffic" %
      " ".join(excluded))
PY
for d in ab0 x0; do
	for parent in "parent 1:" "parent 1:1" ingress; do
		# shellcheck disable=SC2086 # parent is two words or one
		n=$(tcn -j filter show dev "$d" $parent | "$PYTHON" -c '
import json, sys
print(sum(1 for e in json.load(sys.stdin) if (e.get("options") or {}).get("actions")))')
		[ "$n" -ge 1 ] || fail "premise: tc lists no filter with an action on $d parent $parent"
	done
done

cat >"$WORK/c.yaml" <<EOF
targets: [{all: true, netns: $ns}]
devices: {include: "^a", exclude: "^a[2-9]|^ab"}
EOF
cat >"$WORK/d.yaml" <<EOF
targets: [{dev: x0, netns: $ns}, {dev: ab0, parent: ingress, netns: $ns}]
devices: {include: "^a", exclude: "^a[2-9]|^ab"}
EOF
capture() {
	local d p
	"$PYTHON" "$cmpq" capture "$1" --netns "$ns" >/dev/null || fail "capturing tc's view failed"
	for d in a0 x0 ab0; do
		for p in 1: 1:1; do
			tcn -s -j filter show dev "$d" parent "$p" >"$1/f-$d-$p.json"
		done
		tcn -s -j filter show dev "$d" ingress >"$1/f-$d-ingress.json"
	done
}
for attempt in 1 2 3 4 5; do
	rm -rf "$WORK/pre" "$WORK/post"
	capture "$WORK/pre"
	run_tcx text --once --config "$WORK/c.yaml"
	run_tcx om --once --config "$WORK/c.yaml" --format openmetrics
	run_tcx json --once --config "$WORK/c.yaml" --format json
	run_tcx dtext --once --config "$WORK/d.yaml"
	run_tcx djson --once --config "$WORK/d.yaml" --format json
	capture "$WORK/post"
	if "$PYTHON" "$cmpq" same "$WORK/pre" "$WORK/post" >"$WORK/same.out"; then
		break
	fi
	cat "$WORK/same.out"
	[ "$attempt" -lt 5 ] || fail "tc's counters kept moving: no comparison possible"
	sleep 1
done
for f in text om json dtext djson; do
	expect_rc "$f" 0
	expect_empty "$f" err
done

failed=() # verify (tests/lib/common.sh)

note "the devices let in: every qdisc, class and tc_scrape_device_* series, as tc lists them"
if ! out=$(promtool check metrics <"$WORK/text.out" 2>&1) || [ -n "$out" ]; then
	echo "$out" >&2
	failed+=("promtool check metrics rejects the text output")
fi
inc=$(
	IFS=,
	echo "${included[*]}"
)
req=(--devices "$inc" --require qdisc:htb:packets --require qdisc:pfifo:packets
	--require qdisc:tbf:packets --require class:htb:packets --expect-qdiscs 5 --expect-classes 4)
verify "text: the rows of $inc differ from tc's, or others are there" "$PYTHON" "$cmpq" prom \
	--tc "$WORK/pre" --netns "$ns" --exporter "$WORK/text.out" --device-series "${req[@]}"
verify "openmetrics: the rows of $inc differ from tc's, or others are there" "$PYTHON" "$cmpq" \
	prom --tc "$WORK/pre" --netns "$ns" --exporter "$WORK/om.out" --device-series "${req[@]}"
verify "json: the rows of $inc differ from tc's, or others are there" "$PYTHON" "$cmpq" json \
	--tc "$WORK/pre" --netns "$ns" --exporter "$WORK/json.out" "${req[@]}"

note "the devices let in: their filter rows, and no other device's"
ftargets=(--dev "$ns" a0 1: 1: --tc-json "$WORK/pre/f-a0-1:.json"
	--dev "$ns" a0 1:1 1:1 --tc-json "$WORK/pre/f-a0-1:1.json"
	--dev "$ns" a0 ingress ingress --tc-json "$WORK/pre/f-a0-ingress.json")
verify "text: the filter rows differ from a0's" "$PYTHON" "$cmpf" prom \
	--exporter "$WORK/text.out" "${ftargets[@]}" --expect-rows 3 --require-nonzero packets
verify "json: the filter rows differ from a0's" "$PYTHON" "$cmpf" json \
	--exporter "$WORK/json.out" "${ftargets[@]}" --expect-rows 3 --require-nonzero packets

note "the devices left out: not one series or object names them"
for f in text om; do
	for d in "${excluded[@]}"; do
		if grep -E "device=\"$d\"" "$WORK/$f.out" >"$WORK/leak.$f.$d"; then
			head -n 5 "$WORK/leak.$f.$d" >&2
			failed+=("$f: series of device $d, which devices: leaves out")
		fi
	done
done
"$PYTHON" - "$WORK/json.out" "${excluded[*]}" <<'PY' || failed+=("json: objects of devices left out")
import json, sys
path, excluded = sys.argv[1], set(sys.argv[2].split())
bad = []
def walk(x):
    if isinstance(x, list):
        for y in x:
            walk(y)
    elif isinstance(x, dict):
        if x.get("device") in excluded:
            bad.append(x)
        for y in x.values():
            walk(y)
for line in open(path):
    walk(json.loads(line))
for b in bad[:5]:
    print("json: an object of a device left out: %r" % b)
sys.exit(1 if bad else 0)
PY

note "dev: targets, which devices: does not filter: every row of x0 and ab0, and no other device's"
req=(--devices "x0,ab0" --require qdisc:htb:packets --require class:htb:packets
	--expect-qdiscs 8 --expect-classes 8)
verify "dev: text: the rows of x0 and ab0 differ from tc's, or others are there" "$PYTHON" \
	"$cmpq" prom --tc "$WORK/pre" --netns "$ns" --exporter "$WORK/dtext.out" --device-series \
	"${req[@]}"
verify "dev: json: the rows of x0 and ab0 differ from tc's, or others are there" "$PYTHON" \
	"$cmpq" json --tc "$WORK/pre" --netns "$ns" --exporter "$WORK/djson.out" "${req[@]}"
ftargets=(--dev "$ns" x0 1: 1: --tc-json "$WORK/pre/f-x0-1:.json"
	--dev "$ns" x0 1:1 1:1 --tc-json "$WORK/pre/f-x0-1:1.json"
	--dev "$ns" x0 ingress ingress --tc-json "$WORK/pre/f-x0-ingress.json"
	--dev "$ns" ab0 ingress ingress --tc-json "$WORK/pre/f-ab0-ingress.json")
verify "dev: text: the filter rows differ from x0's and ab0's ingress" "$PYTHON" "$cmpf" prom \
	--exporter "$WORK/dtext.out" "${ftargets[@]}" --expect-rows 4 --require-nonzero packets
verify "dev: json: the filter rows differ from x0's and ab0's ingress" "$PYTHON" "$cmpf" json \
	--exporter "$WORK/djson.out" "${ftargets[@]}" --expect-rows 4 --require-nonzero packets

[ "${#failed[@]}" = 0 ] || fail "$(printf '%s; ' "${failed[@]}")"
note "qdisc_devices: all checks passed"
