#!/bin/bash
# The final counters of filters deleted by handle reach the aggregates
# (issue #11: RTM_DELTFILTER notifications, collectors/notify.c): a daemon
# with `aggregate:` collecting every 5 s, in a private namespace, and a
# cookie-tagged u32 filter that traffic from a sender goes through.
#   - Just after a collection, packets are sent through the filter, which is
#     then deleted by handle before the next collection: the aggregate of the
#     next scrape includes every one of them, bytes and packets (without the
#     notifications, what was sent since the last collection is lost).
#   - A filter made, sent through and deleted by handle between two
#     collections, that no dump ever saw: its packets count.
#   - Neither counts again in the collections after; no notification was
#     lost (tc_exporter_notifications_lost_total 0).
#   - A named namespace (`netns: tn`): the daemon holds two sockets
#     subscribed to RTNLGRP_TC in it (deletions and additions), made with
#     its collector socket there; the namespace deleted, all three are
#     closed and the namespace is freed (its veth peer in ours disappears).
# The test checks that nothing it did in one interval overlapped a
# collection (tc_exporter_collections_total unchanged), and fails when the
# machine was too slow to say.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc mount
require_root -m -n
in_netns TCXD_FINAL_COUNTS_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces -----------------------------------------
daemon_setup
private_netns_dir
veth a0 a1
veth mon0 mon1
tc qdisc add dev a0 clsact
# filt PREF DPORT: a u32 filter on a0's ingress for UDP to DPORT, mirroring
# to mon0 (whose peer drops it), cookie 01.
filt() {
	tc filter add dev a0 ingress pref "$1" protocol ip u32 match ip dport "$2" 0xffff \
		action mirred egress mirror dev mon0 cookie 01
}
# unfilt PREF: delete the filter at PREF by its handle (the kernel then sends
# its final counters).
unfilt() {
	local h
	h=$(tc filter show dev a0 ingress pref "$1" |
		sed -n 's/.* fh \([0-9a-f]*::[0-9a-f]*\) .*/\1/p' | head -n 1)
	[ -n "$h" ] || fail "no filter at pref $1"
	tc filter del dev a0 ingress pref "$1" handle "$h" u32
}
# send DPORT COUNT: COUNT UDP packets of the same size into a0 (from a1).
cat >"$WORK/send.py" <<'PY'
import socket, struct, sys

def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff

dport, count = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("a1", 0))
udp = struct.pack("!HHHH", 40000, dport, 8 + 4, 0) + b"test"
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                 socket.inet_aton("198.51.100.2"), socket.inet_aton("198.51.100.1"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
for _ in range(count):
    s.send(b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp)
PY
send() {
	"$PYTHON" "$WORK/send.py" "$1" "$2"
}
filt 10 1001

port=$(free_ports 1)
cat >"$WORK/final.yaml" <<EOF
interval: 5s
targets: [{dev: a0, parent: ingress}]
labels: [rule]
cookies:
  "01": {rule: dns}
aggregate: {by: [rule]}
http: {listen: "127.0.0.1:$port"}
EOF
url=http://127.0.0.1:$port/metrics
start_tcx tcx "$WORK/final.yaml"
wait_http 200 10 "$url"

# next_collection: waits until the daemon starts its next collection (its
# tc_exporter_collections_total grows; at most 2 intervals), and sets N to
# the new count.
next_collection() {
	local c0 deadline=$((SECONDS + 12))
	c0=$(collections "$url")
	N=$c0
	while [ "$N" = "$c0" ]; do
		alive "$TCX_PID" tcx
		[ "$SECONDS" -lt "$deadline" ] || fail "no collection within 12 s (interval 5 s)"
		sleep 0.05
		N=$(collections "$url")
	done
}
# same_interval: fails unless no collection started since next_collection.
same_interval() {
	[ "$(collections "$url")" = "$N" ] ||
		fail "a collection started while the test was sending and deleting (too slow a machine to tell)"
}
# packets_bytes FILE: "PACKETS BYTES" of the aggregate rule=dns.
packets_bytes() {
	echo "$(metric_value "$1" 'tc_action_packets_total{rule="dns"}')" \
		"$(metric_value "$1" 'tc_action_bytes_total{rule="dns"}')"
}

note "packets through a filter seen by a collection: the bytes per packet"
next_collection
send 1001 10
next_collection
scrape "$WORK/s1.prom" "$url"
read -r p b < <(packets_bytes "$WORK/s1.prom")
[ "$p" = 10 ] || fail "rule dns: '$p' packets, sent 10"
if [ "$b" -le 0 ] || [ $((b % 10)) != 0 ]; then fail "rule dns: $b bytes for 10 packets"; fi
per_packet=$((b / 10))

note "7 packets, then the filter deleted by handle, before the next collection"
next_collection
send 1001 7
unfilt 10
same_interval
next_collection
scrape "$WORK/s2.prom" "$url"
read -r p b < <(packets_bytes "$WORK/s2.prom")
[ "$p" = 17 ] || fail "rule dns: $p packets after the deletion, sent 17 (the deleted filter's last packets lost)"
[ "$b" = $((17 * per_packet)) ] || fail "rule dns: $b bytes after the deletion, sent $((17 * per_packet))"

note "a filter made, sent through (5 packets) and deleted between two collections"
next_collection
filt 20 1001
send 1001 5
unfilt 20
same_interval
next_collection
scrape "$WORK/s3.prom" "$url"
read -r p b < <(packets_bytes "$WORK/s3.prom")
[ "$p" = 22 ] || fail "rule dns: $p packets, sent 22 (a filter no collection saw is missing)"
[ "$b" = $((22 * per_packet)) ] || fail "rule dns: $b bytes, sent $((22 * per_packet))"

note "counted once: the same in the next collection; no notification lost"
next_collection
scrape "$WORK/s4.prom" "$url"
[ "$(packets_bytes "$WORK/s4.prom")" = "22 $((22 * per_packet))" ] ||
	fail "rule dns changed with no traffic: $(packets_bytes "$WORK/s4.prom")"
grep -qx '# TYPE tc_exporter_notifications_lost_total counter' "$WORK/s4.prom" ||
	fail "no tc_exporter_notifications_lost_total counter family"
[ "$(metric_value "$WORK/s4.prom" tc_exporter_notifications_lost_total)" = 0 ] ||
	fail "notifications lost: $(metric_value "$WORK/s4.prom" tc_exporter_notifications_lost_total)"
alive "$TCX_PID" tcx
stop_tcx "$TCX_PID" tcx 10

note "a named namespace: its notification socket lives as long as its collector socket"
ip netns add tn
ip link add h0 type veth peer name d0 netns tn
ip link set h0 up
ip -n tn link set d0 up
tc -n tn qdisc add dev d0 clsact
tc -n tn filter add dev d0 ingress pref 1 protocol ip u32 match u32 0 0 \
	action mirred egress mirror dev d0 cookie 01
sed -e 's/^interval: .*/interval: 200ms/' \
	-e 's/^targets: .*/targets: [{all: true, netns: tn}]/' "$WORK/final.yaml" >"$WORK/ns.yaml"
start_tcx tcx "$WORK/ns.yaml"
wait_http 200 10 "$url"
# tc_sockets: the daemon's sockets in tn subscribed to RTNLGRP_TC (by inode,
# in tn's /proc/net/netlink: protocol 0, group bit 1 << (RTNLGRP_TC - 1)).
tc_sockets() {
	local inodes
	inodes=$(for fd in /proc/"$TCX_PID"/fd/*; do readlink "$fd"; done |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
	ip netns exec tn cat /proc/net/netlink | "$PYTHON" -c '
import sys
mine = set(sys.argv[1].split())
n = 0
for line in list(sys.stdin)[1:]:
    f = line.split()
    if f[1] == "0" and int(f[3], 16) & (1 << 3) and f[-1] in mine:
        n += 1
print(n)' "$inodes"
}
[ "$(tc_sockets)" = 2 ] || fail "the daemon has $(tc_sockets) sockets subscribed to RTNLGRP_TC in tn, expected 2"
ip netns del tn
deadline=$((SECONDS + 5))
while ip link show h0 >/dev/null 2>&1; do
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "h0 still exists 5 s after tn was deleted: a socket of the daemon holds tn alive"
	sleep 0.1
done
alive "$TCX_PID" tcx
stop_tcx "$TCX_PID" tcx 10
note "ok"
