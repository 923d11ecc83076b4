#!/bin/bash
# Deletion notifications (collectors/notify.c) against this kernel, through
# tests/integration/notify_probe, in a private network and mount namespace,
# with u32 filters, cookies and traffic:
#   - a filter deleted by handle yields its final bytes and packets, equal to
#     what `tc -s -j filter show` reported just before (no traffic in
#     between), and nothing is lost; a pref deleted whole yields nothing;
#   - a socket opened in a named namespace sees that namespace's deletions
#     only, with its names;
#   - a shared block's filter names the block; a replace, a chain flushed or
#     deleted, a qdisc, device or block removed yield nothing (README,
#     "Kernels");
#   - every final row has the identity the collector (tcexporter --once)
#     gives the row, however the deletion spelt its parent;
#   - only deletions take room in the socket's queue; an overflow counts each
#     notification lost, and the socket goes on;
#   - a forged deletion from a process is dropped unread and counted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

probe=${TCX_BUILDDIR:-$here/../..}/tests/integration/notify_probe
[ -x "$probe" ] || fail "$probe is not built (make check builds it)"
require_bin
require_root -n -m
require_cmd tc ip
find_python
# A private mount namespace too, with a /run/netns of its own: the named
# namespace made below is seen by no other test.
in_netns TCX_NOTIFY_INNER -n -m
mkdir -p /run/netns
mount -t tmpfs tcx-notify /run/netns || fail "cannot mount a tmpfs on /run/netns"
make_workdir
ns=tcx-notify-$$
cleanup() {
	local rc=$?
	ip netns del "$ns" 2>/dev/null || true
	_tcx_cleanup "$WORK"
	return $rc
}
trap cleanup EXIT

ip link add demo0 type veth peer name demo1
ip link add mon0 type veth peer name mon1
for d in lo demo0 demo1 mon0 mon1; do ip link set "$d" up; done
tc qdisc add dev demo0 clsact
# Each filter mirrors what it matches to mon0, whose peer drops it.
mirror=(action mirred egress mirror dev mon0)
tc filter add dev demo0 ingress pref 10 protocol ip u32 match ip dport 10 0xffff \
	"${mirror[@]}" cookie 0a01
tc filter add dev demo0 ingress pref 20 protocol ip u32 match ip dport 20 0xffff \
	"${mirror[@]}" cookie 0a02
tc filter add dev demo0 ingress pref 30 protocol ip u32 match ip dport 30 0xffff \
	"${mirror[@]}" cookie 0a03 "${mirror[@]}" cookie ff070102

# The probe reads "drain" lines on a fifo and writes to a file.
mkfifo "$WORK/in"
"$probe" <"$WORK/in" >"$WORK/own.out" 2>"$WORK/own.err" &
probe_pid=$!
exec 3>"$WORK/in"
wait_ready() {
	for _ in $(seq 100); do
		grep -qx ready "$1" && return 0
		kill -0 "$2" 2>/dev/null || { cat "${1%.out}.err" >&2; fail "the probe died"; }
		sleep 0.05
	done
	fail "the probe did not start"
}
# drain FD OUT: one drain; waits for its counts line (the Nth for the Nth drain).
drain() {
	local want
	want=$(($(grep -c '"drained"' "$2" || true) + 1))
	echo drain >&"$1"
	for _ in $(seq 100); do
		[ "$(grep -c '"drained"' "$2" || true)" -ge "$want" ] && return 0
		sleep 0.05
	done
	fail "no answer from the probe ($2)"
}
wait_ready "$WORK/own.out" "$probe_pid"
# collect NAME: the collector's rows now (tcexporter --once), in NAME.out.
collect() {
	run_tcx "$1" --once --format json
	expect_rc "$1" 0
}
# handle_of [-n NETNS] TC_FILTER_SELECTOR...: the handle the kernel gave the
# filter with actions that tc lists there.
handle_of() {
	local pre=()
	if [ "$1" = -n ]; then
		pre=(-n "$2")
		shift 2
	fi
	tc "${pre[@]}" -j filter show "$@" | "$PYTHON" -c 'import json, sys
print([f["options"]["fh"] for f in json.load(sys.stdin) if (f.get("options") or {}).get("actions")][0])' ||
		fail "no filter with actions at: $*"
}

note "traffic: 7 packets through pref 10, 3 through pref 20, 5 through both actions of pref 30"
"$PYTHON" "$here/../lib/udp_raw.py" demo1 10:40:7 20:100:3 30:333:5 >/dev/null ||
	fail "sending traffic out of demo1 failed"
sleep 0.3
tc -s -j filter show dev demo0 ingress >"$WORK/before.json"
h10=$(handle_of dev demo0 ingress pref 10)
h30=$(handle_of dev demo0 ingress pref 30)
collect collector1

note "delete pref 10 by handle ($h10), pref 20 whole, pref 30 by handle ($h30)"
tc filter del dev demo0 ingress pref 10 handle "$h10" u32
tc filter del dev demo0 ingress pref 20
tc filter del dev demo0 ingress pref 30 handle "$h30" u32
drain 3 "$WORK/own.out"
# A second drain: nothing is read twice.
drain 3 "$WORK/own.out"

"$PYTHON" - "$WORK/before.json" "$WORK/own.out" <<'PY' || fail "final rows differ (see above)"
import json, sys
before = json.load(open(sys.argv[1]))
want = {}
for f in before:
    o = f.get("options") or {}
    for a in o.get("actions") or []:
        if f["pref"] in (10, 30):
            st = a["stats"]
            want[(f["pref"], o["fh"], a["order"], a["cookie"])] = (st["bytes"], st["packets"])
lines = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
counts = [l for l in lines if "drained" in l]
rows = [l for l in lines if l.get("type") == "action"]
got = {}
for r in rows:
    dev = r.get("device", r.get("dev"))
    if (r["netns"], dev, r["parent"], r["kind"], r["protocol"]) != ("", "demo0", "ingress", "u32", "ip"):
        print("wrong identity:", r)
        sys.exit(1)
    got[(r["pref"], r["handle"], r["order"], r["cookie"])] = (r["bytes"], r["packets"])
print("tc before the deletions:", sorted(want.items()))
print("final rows:             ", sorted(got.items()))
print("counts:", counts)
ok = got == want and len(rows) == len(got)
ok &= [c["drained"] for c in counts] == [3, 0]
ok &= all(c["lost"] == 0 and c["malformed"] == 0 and c["io"] == 0 for c in counts)
# The traffic itself: 7, 0 (deleted whole), 5 and 5 packets.
ok &= sorted(p for _, p in got.values()) == [5, 5, 7]
sys.exit(0 if ok else 1)
PY

note "a named namespace: its own deletions, with its names"
ip netns add "$ns"
ip -n "$ns" link add nsdev0 type veth peer name nsdev1
ip -n "$ns" link set nsdev0 up
tc -n "$ns" qdisc add dev nsdev0 clsact
tc -n "$ns" filter add dev nsdev0 egress pref 5 protocol all u32 match u32 0 0 \
	action mirred egress mirror dev nsdev0 cookie 0b0c
mkfifo "$WORK/ns_in"
ip netns exec "$ns" "$probe" "$ns" <"$WORK/ns_in" >"$WORK/ns.out" 2>"$WORK/ns.err" &
ns_pid=$!
exec 4>"$WORK/ns_in"
wait_ready "$WORK/ns.out" "$ns_pid"
hns=$(handle_of -n "$ns" dev nsdev0 egress pref 5)
# One deletion there, one here (seen by the first probe only).
tc filter add dev demo0 ingress pref 40 protocol ip u32 match ip dst 192.0.2.4/32 \
	"${mirror[@]}" cookie 0a04
h40=$(handle_of dev demo0 ingress pref 40)
collect collector3
tc -n "$ns" filter del dev nsdev0 egress pref 5 handle "$hns" u32
tc filter del dev demo0 ingress pref 40 handle "$h40" u32
drain 4 "$WORK/ns.out"
drain 3 "$WORK/own.out"
"$PYTHON" - "$WORK/ns.out" "$WORK/own.out" "$ns" <<'PY' || fail "namespaces mixed up (see above)"
import json, sys
def rows(path):
    ls = [json.loads(l) for l in open(path) if l.startswith("{")]
    # the action rows and the drain counts
    return [l for l in ls if l.get("type") == "action"], [l for l in ls if "drained" in l]
ns_rows, ns_counts = rows(sys.argv[1])
own_rows, own_counts = rows(sys.argv[2])
print("named namespace:", ns_rows, ns_counts)
print("own namespace, third drain:", own_counts[2:])
r = ns_rows[0] if len(ns_rows) == 1 else {}
ok = (r.get("netns"), r.get("device", r.get("dev")), r.get("parent"), r.get("pref"),
      r.get("cookie")) == (sys.argv[3], "nsdev0", "egress", 5, "0b0c")
ok &= [c["drained"] for c in ns_counts] == [1]
ok &= [c["drained"] for c in own_counts[2:]] == [1]
ok &= [(x["netns"], x["pref"], x["cookie"]) for x in own_rows][-1:] == [("", 40, "0a04")]
sys.exit(0 if ok else 1)
PY
note "only deletions reach the queue: new filters and qdiscs are left out by the kernel"
inode=$(for fd in /proc/"$probe_pid"/fd/*; do readlink "$fd"; done |
	sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | head -n 1)
[ -n "$inode" ] || fail "the probe has no socket"
queued() { # bytes in the probe's receive queue (/proc/net/netlink: Rmem)
	awk -v i="$inode" '$NF == i { print $5 }' /proc/net/netlink
}
[ "$(queued)" = 0 ] || fail "the probe's queue is not empty: $(queued) bytes"
tc filter add dev demo0 ingress pref 50 protocol ip u32 match ip dst 192.0.2.5/32 \
	"${mirror[@]}" cookie 0a05
tc qdisc add dev mon0 clsact
tc filter add dev mon0 egress pref 1 protocol all u32 match u32 0 0 "${mirror[@]}" cookie 0a06
[ "$(queued)" = 0 ] || fail "new filters and a qdisc took $(queued) bytes of the probe's queue"
h50=$(handle_of dev demo0 ingress pref 50)
collect collector4
[ "$(queued)" = 0 ] || fail "the probe's queue took $(queued) bytes, and no filter was deleted"
tc filter del dev demo0 ingress pref 50 handle "$h50" u32
[ "$(queued)" -gt 0 ] || fail "a deletion did not reach the probe's queue"
drain 3 "$WORK/own.out"
[ "$(grep '"drained"' "$WORK/own.out" | tail -n 1 | grep -c '"drained":1,"filters":1,"lost":0,')" = 1 ] ||
	fail "the last drain: $(tail -n 2 "$WORK/own.out")"
note "the other removals: a shared block's filter by handle names the block; the rest yield nothing"
ip link add blk0 type veth peer name blk1
ip link add blk2 type veth peer name blk3
tc qdisc add dev blk0 ingress_block 22 clsact
tc qdisc add dev blk2 ingress_block 22 clsact
for p in 1 2; do
	tc filter add block 22 pref "$p" protocol ip u32 match ip dst 192.0.2.22/32 \
		"${mirror[@]}" cookie "0b0$p"
done
# An ingress qdisc, whose filter list answers to ffff: too.
ip link add ing0 type veth peer name ing1
tc qdisc add dev ing0 ingress
tc filter add dev ing0 parent ffff: pref 3 protocol ip u32 match ip dst 192.0.2.33/32 \
	"${mirror[@]}" cookie 0b03
collect collector2
tc filter del block 22 pref 1 handle "$(handle_of block 22 pref 1)" u32
tc filter del dev ing0 parent ffff: pref 3 handle "$(handle_of dev ing0 ingress pref 3)" u32
for p in 61 62 63 64; do
	tc filter add dev demo0 ingress pref "$p" protocol ip u32 match ip dst 192.0.2.6/32 \
		"${mirror[@]}" cookie "0c$p"
done
h61=$(handle_of dev demo0 ingress pref 61)
tc filter replace dev demo0 ingress pref 61 protocol ip handle "$h61" u32 \
	match ip dst 192.0.2.7/32 "${mirror[@]}" cookie 0c61
tc filter add dev demo0 ingress chain 7 pref 70 protocol ip u32 match ip dst 192.0.2.7/32 \
	"${mirror[@]}" cookie 0c70
tc chain del dev demo0 ingress chain 7           # a chain deleted
tc filter del dev demo0 ingress                  # a chain flushed: 62, 63, 64
tc filter add dev mon0 egress pref 2 protocol all u32 match u32 0 0 "${mirror[@]}" cookie 0c02
tc qdisc del dev mon0 clsact                     # a qdisc deleted
ip link add gone0 type veth peer name gone1
tc qdisc add dev gone0 clsact
tc filter add dev gone0 ingress pref 1 protocol all u32 match u32 0 0 "${mirror[@]}" cookie 0c03
ip link del gone0                                # a device deleted
tc qdisc del dev blk0 clsact                     # the block unbound, then gone
tc qdisc del dev blk2 clsact
drain 3 "$WORK/own.out"
"$PYTHON" - "$WORK/own.out" <<'PY' || fail "other removals (see above)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
last = max(i for i, l in enumerate(lines[:-1]) if "drained" in l)
rows = [l for l in lines[last + 1:-1] if l.get("type") == "action"]
counts = lines[-1]
print("rows:", rows)
print("counts:", counts)
ok = [(r["block"], r.get("device", r.get("dev")), r["parent"], r["pref"], r["cookie"])
      for r in rows] == [(22, None, "block", 1, "0b01"), (None, "ing0", "ingress", 3, "0b03")]
ok &= counts["drained"] == 2 and counts["lost"] == 0
sys.exit(0 if ok else 1)
PY

note "a forged deletion from a process, not the kernel, is dropped unread and counted"
port=$(awk -v i="$inode" '$NF == i { print $3 }' /proc/net/netlink)
"$PYTHON" - "$port" <<'PY'
import socket, struct, sys
# RTM_DELTFILTER of a u32 filter at pref 9, handle 800::800, on ifindex 1.
kind = b"u32\0"
attr = struct.pack("=HH", 4 + len(kind), 1) + kind  # TCA_KIND
tcm = struct.pack("=BxxxiIII", 0, 1, 0x800800, 0xfffffff2, (9 << 16) | 0x0008)
body = tcm + attr
msg = struct.pack("=IHHII", 16 + len(body), 45, 0, 0, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.sendto(msg, (int(sys.argv[1]), 0))
PY
drain 3 "$WORK/own.out"
last=$(grep '"drained"' "$WORK/own.out" | tail -n 1)
case $last in
*'"drained":0,"filters":0,'*'"dropped_sender":1,'*) ;;
*) fail "a forged deletion: $last" ;;
esac

note "each final row has the identity the collector gives the row"
"$PYTHON" - "$WORK/own.out" "$WORK"/collector*.out <<'PY' ||
import json, sys
KEYS = ("netns", "device", "dev", "block", "parent", "chain", "protocol", "pref", "kind",
        "handle", "order", "action", "cookie")
def ident(r):
    return tuple(r.get(k) for k in KEYS)
def rows(path):
    return [l for l in map(json.loads, (l for l in open(path) if l.startswith("{")))
            if l.get("type") == "action"]
final = rows(sys.argv[1])
collected = {ident(r) for p in sys.argv[2:] for r in rows(p)}
missing = [r for r in final if ident(r) not in collected]
print(len(final), "final rows,", len(collected), "rows collected; not collected:", missing)
sys.exit(1 if missing or not final else 0)
PY
	fail "a final row the collector does not name so (see above)"

note "an overflow: the notifications the kernel dropped are counted, and the socket goes on"
mkfifo "$WORK/small_in"
"$probe" -r 16384 <"$WORK/small_in" >"$WORK/small.out" 2>"$WORK/small.err" &
small_pid=$!
exec 5>"$WORK/small_in"
wait_ready "$WORK/small.out" "$small_pid"
ip link add many0 type veth peer name many1
tc qdisc add dev many0 clsact
for i in $(seq 1 500); do
	echo "filter add dev many0 ingress pref $i protocol ip u32 match ip dst 192.0.2.9/32 action mirred egress mirror dev mon0 cookie $(printf %08x "$i")"
done >"$WORK/add.batch"
tc -batch "$WORK/add.batch"
tc -j filter show dev many0 ingress | "$PYTHON" -c 'import json, sys
for f in json.load(sys.stdin):
    o = f.get("options") or {}
    if o.get("actions"):
        print("filter del dev many0 ingress pref %d handle %s u32" % (f["pref"], o["fh"]))' \
	>"$WORK/del.batch"
[ "$(wc -l <"$WORK/del.batch")" = 500 ] || fail "500 filters expected on many0"
tc -batch "$WORK/del.batch"
drain 5 "$WORK/small.out"
tc filter add dev many0 ingress pref 1 protocol ip u32 match ip dst 192.0.2.9/32 \
	"${mirror[@]}" cookie 0a09
tc filter del dev many0 ingress pref 1 handle "$(handle_of dev many0 ingress pref 1)" u32
drain 5 "$WORK/small.out"
"$PYTHON" - "$WORK/small.out" <<'PY' || fail "lost notifications miscounted (see above)"
import json, sys
counts = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"drained"')]
print("a queue of 32 KiB, 500 deletions, then one:", counts)
a, b = counts
ok = a["lost"] > 0 and a["drained"] + a["lost"] == 500
ok &= b["drained"] == 1 and b["lost"] == a["lost"]
sys.exit(0 if ok else 1)
PY

exec 3>&- 4>&- 5>&-
wait "$probe_pid" || fail "the probe failed: $(cat "$WORK/own.err")"
wait "$ns_pid" || fail "the probe in $ns failed: $(cat "$WORK/ns.err")"
wait "$small_pid" || fail "the probe with a small queue failed: $(cat "$WORK/small.err")"
