#!/bin/bash
# The class tree (issue #24): tc_class_info says, per class, whether it is a
# leaf (no class hangs from it) and which qdisc is attached to it, so that
# PromQL can keep leaves apart from inner classes (which sum their
# children) and join a class to its qdisc; the JSON class lines say the
# same. Two devices with the same handles: each class is matched within its
# own device. An HTB leaf with its default pfifo (not in the qdisc dump) is
# a leaf without a qdisc. The label names leaf, leaf_qdisc and leaf_kind are
# refused in `labels:`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc promtool
find_python
in_netns TCX_CLASS_TREE_IN_NETNS
make_workdir

# a0: 1: htb -> 1:1 -> 1:10 (tbf 10: under it), 1:20 (default pfifo)
# b0: 1: htb -> 1:1 (bfifo 30: under it; no child class)
for d in a0 b0; do
	ip link add "$d" type veth peer name "${d%0}1"
	ip link set "$d" up
done
tc qdisc add dev a0 root handle 1: htb default 20
tc class add dev a0 parent 1: classid 1:1 htb rate 100mbit quantum 1514
tc class add dev a0 parent 1:1 classid 1:10 htb rate 10mbit quantum 1514
tc class add dev a0 parent 1:1 classid 1:20 htb rate 10mbit quantum 1514
tc qdisc add dev a0 parent 1:10 handle 10: tbf rate 1mbit burst 10k latency 50ms
tc qdisc add dev b0 root handle 1: htb
tc class add dev b0 parent 1: classid 1:1 htb rate 100mbit quantum 1514
tc qdisc add dev b0 parent 1:1 handle 30: bfifo limit 10000
printf 'targets: [{all: true}]\nlabels: [tenant]\nclasses: {"a0 1:10": [acme]}\n' >"$WORK/c.yaml"

run_tcx text --once --config "$WORK/c.yaml"
expect_rc text 0
run_tcx json --once --config "$WORK/c.yaml" --format json
expect_rc json 0
out=$(promtool check metrics <"$WORK/text.out" 2>&1) || fail "promtool: $out"
[ -z "$out" ] || fail "promtool: $out"

"$PYTHON" - "$WORK/text.out" "$WORK/json.out" <<'PY' || fail "the class tree (see above)"
import json, re, sys
# (device, handle): (leaf, leaf_qdisc, leaf_kind), tbf's own class 10:1 too
want = {
    ("a0", "1:1"): ("false", "", ""),
    ("a0", "1:10"): ("true", "10:", "tbf"),
    ("a0", "1:20"): ("true", "", ""),
    ("a0", "10:1"): ("true", "", ""),
    ("b0", "1:1"): ("true", "30:", "bfifo"),
}
bad = []
text = open(sys.argv[1]).read()
got = {}
for m in re.finditer(r'^tc_class_info\{(.*)\} 1$', text, re.M):
    lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
    k = (lab["device"], lab["handle"])
    if k in got:
        bad.append("text: %r twice" % (k,))
    got[k] = (lab["leaf"], lab["leaf_qdisc"], lab["leaf_kind"])
    if k == ("a0", "1:10") and lab.get("tenant") != "acme":
        bad.append("text: 1:10 without its user label: %r" % lab)
if got != want:
    bad.append("text: %r\n  want %r" % (got, want))
if len(re.findall(r'^tc_class_bytes_total\{', text, re.M)) != len(want):
    bad.append("the class series are not one per class")
got = {}
for line in open(sys.argv[2]):
    o = json.loads(line)
    if o["type"] == "class":
        got[(o["device"], o["handle"])] = (
            {True: "true", False: "false"}.get(o.get("leaf")), o.get("leaf_qdisc") or "",
            o.get("leaf_kind") or "")
if got != want:
    bad.append("json: %r\n  want %r" % (got, want))
print("\n".join(bad) or "%d classes: leaves and their qdiscs as set up" % len(want))
sys.exit(1 if bad else 0)
PY

note "the tree's label names are reserved"
for l in leaf leaf_qdisc leaf_kind; do
	printf 'targets: [{all: true}]\nlabels: [%s]\n' "$l" >"$WORK/r.yaml"
	run_tcx "reserved_$l" --check-config "$WORK/r.yaml"
	expect_rc "reserved_$l" 2
	grep -qF "$l" "$WORK/reserved_$l.err" || fail "labels: [$l]: $(cat "$WORK/reserved_$l.err")"
done
note "class_tree: all checks passed"
