#!/bin/bash
# The qdisc and class decoder (collectors/qdisc_parse.c) against this
# kernel, through tests/integration/qdisc_probe, in a private network
# namespace: an HTB tree on lo (root 1: -> 1:1 -> 1:10 with a pfifo leaf,
# 1:20 with a tbf leaf), an ingress qdisc, a u32 filter sending one port to
# 1:10, and UDP traffic through both classes, enough to make 1:10 borrow
# and the tbf drop. Once the queues are empty, every qdisc's generic
# counters equal `tc -s -j qdisc show`'s, and every class's generic counters
# and htb statistics (lended, borrowed, giants, tokens, ctokens) equal `tc -s
# class show`'s (tc 6.1 prints classes as text even with -j).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

probe=${TCX_BUILDDIR:-$here/../..}/tests/integration/qdisc_probe
[ -x "$probe" ] || fail "$probe is not built (make check builds it)"
require_root
require_cmd tc ip
find_python
in_netns TCX_QDISC_DECODE_INNER
make_workdir

ip link set lo up
tc qdisc add dev lo root handle 1: htb default 20
tc class add dev lo parent 1: classid 1:1 htb rate 100mbit quantum 1514
tc class add dev lo parent 1:1 classid 1:10 htb rate 2mbit ceil 100mbit quantum 1514
tc class add dev lo parent 1:1 classid 1:20 htb rate 1mbit ceil 2mbit quantum 1514
tc qdisc add dev lo parent 1:10 handle 10: pfifo limit 1000
tc qdisc add dev lo parent 1:20 handle 20: tbf rate 1mbit burst 4k latency 20ms
tc qdisc add dev lo handle ffff: ingress
tc filter add dev lo parent 1: protocol ip pref 1 u32 match ip dport 5001 0xffff flowid 1:10

note "traffic: 400 datagrams to 1:10, 400 to 1:20 (default)"
"$PYTHON" - <<'EOF'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 5001))
for port in (5001, 5002):
    for _ in range(400):
        try:
            s.sendto(b"x" * 1000, ("127.0.0.1", port))
        except OSError:
            pass  # the qdisc dropped it (ENOBUFS)
EOF

note "waiting for the queues to drain"
for _ in $(seq 100); do
	tc -s -j qdisc show dev lo | "$PYTHON" -c '
import json, sys
sys.exit(any(q.get("qlen", 0) or q.get("backlog", 0) for q in json.load(sys.stdin)))' && break
	sleep 0.1
done

"$probe" lo >"$WORK/probe.json" || fail "qdisc_probe failed"
tc -s -j qdisc show dev lo >"$WORK/qdisc.json"
tc -s class show dev lo >"$WORK/class.txt"
"$probe" lo >"$WORK/probe2.json" || fail "qdisc_probe failed"
cmp -s "$WORK/probe.json" "$WORK/probe2.json" || fail "the counters moved while being compared"

"$PYTHON" - "$WORK" <<'EOF' || fail "the decoder disagrees with tc"
import json, re, socket, sys

work = sys.argv[1]
lo = socket.if_nametoindex("lo")
rows = [json.loads(l) for l in open(work + "/probe.json")]
rows = [r for r in rows if r["ifindex"] == lo]

def handle(h, qdisc):
    maj, mi = h >> 16, h & 0xffff
    return "%x:" % maj if qdisc and not mi else "%x:%x" % (maj, mi)

bad = []
def same(what, mine, tcs):
    if mine != tcs:
        bad.append("%s: decoder %r, tc %r" % (what, mine, tcs))

# qdiscs: tc -s -j
tcq = {q["handle"]: q for q in json.load(open(work + "/qdisc.json"))}
mine = {handle(r["handle"], True): r for r in rows if r["object"] == "qdisc"}
same("qdisc handles", sorted(mine), sorted(tcq))
for h, r in sorted(mine.items()):
    q = tcq.get(h, {})
    same("qdisc %s kind" % h, r["kind"], q.get("kind"))
    for k in ("bytes", "packets", "drops", "overlimits", "requeues", "backlog", "qlen"):
        same("qdisc %s %s" % (h, k), r["stats"].get(k), q.get(k))
    same("qdisc %s xstats" % h, r["xstats"], {})

# classes: tc -s class show (text)
text = open(work + "/class.txt").read()
tcc = {}
for block in re.split(r"\n(?=class )", text.strip()):
    m = re.match(r"class (\S+) (\S+) ", block)
    c = {"kind": m.group(1)}
    s = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+), overlimits (\d+) "
                  r"requeues (\d+)\)\s+backlog (\d+)b (\d+)p", block)
    if s:
        c["stats"] = dict(zip(("bytes", "packets", "drops", "overlimits", "requeues",
                               "backlog", "qlen"), map(int, s.groups())))
    x = re.search(r"lended: (\d+) borrowed: (\d+) giants: (\d+)\s+"
                  r"tokens: (-?\d+) ctokens: (-?\d+)", block)
    if x:
        c["xstats"] = dict(zip(("tc_class_htb_lends_total", "tc_class_htb_borrows_total",
                                "tc_class_htb_giants_total", "tc_class_htb_tokens_seconds",
                                "tc_class_htb_ctokens_seconds"), map(int, x.groups())))
    tcc[m.group(2)] = c
mine = {handle(r["handle"], False): r for r in rows if r["object"] == "class"}
same("class handles", sorted(mine), sorted(tcc))
for h, r in sorted(mine.items()):
    c = tcc.get(h, {})
    same("class %s kind" % h, r["kind"], c.get("kind"))
    same("class %s stats" % h, r["stats"] or None, c.get("stats"))
    same("class %s xstats" % h, r["xstats"] or None, c.get("xstats"))

# the traffic did what the test needs
x10 = mine["1:10"]["xstats"]
if not (x10["tc_class_htb_borrows_total"] > 0 and mine["1:1"]["xstats"]["tc_class_htb_lends_total"] > 0):
    bad.append("1:10 never borrowed from 1:1: %r" % x10)
if not tcq["20:"]["drops"] > 0 or not mine["1:20"]["stats"]["packets"] > 0:
    bad.append("no drops in the tbf, or no packet through 1:20")
for b in bad:
    print("MISMATCH " + b, file=sys.stderr)
n = len(mine) + len(tcq)
print("%d qdiscs and classes: %s" % (n, "equal" if not bad else "%d mismatches" % len(bad)))
sys.exit(1 if bad else 0)
EOF
