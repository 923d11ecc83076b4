#!/bin/bash
# Forged netlink messages from an unprivileged peer (issue #9), as root:
#
# The user nobody makes a user+net namespace (`unshare -Urn`: it then has
# CAP_NET_ADMIN over that namespace, and may unicast to any netlink port in
# it); the daemon collects that namespace (bind-mounted as /run/netns/peer)
# every 250 ms. A python process of nobody's, inside the namespace, finds
# the daemon's rtnetlink port in /proc/net/netlink (the test checks, by
# socket inode, that it is the daemon's) and sends it:
#   - the 16-byte message with nlmsg_len 0xffff0062, seq 0, pid 0, that made
#     libmnl walk 4 GB past the buffer (the daemon died of SIGSEGV);
#   - a forged NLMSG_DONE carrying -EPERM, which would end a dump early;
# then, for 3 s, forged NLMSG_DONEs every 2.5 ms, while the daemon dumps
# 1500 filters (replies of many chunks: some datagrams arrive in the middle
# of a dump).
#
# Then: the daemon is alive; tc_exporter_netlink_dropped_total{cause=
# "sender"} counts exactly the datagrams sent, {cause="length"} none; no
# collection failed (tc_exporter_collection_errors_total stays 0, while
# collections went on during the flood); and the next scrapes equal
# `tc -s -j filter show` row for row, with traffic counted
# (tests/integration/compare_tc.py).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

PEER_UID=65534 # nobody
daemon_prereqs tc mount setpriv unshare nsenter
require_root -m -n
if [ "${TCXD_NLPEER_INSIDE:-}" != 1 ]; then
	setpriv --reuid=$PEER_UID --regid=$PEER_UID --clear-groups -- unshare -Urn -- true \
		2>/dev/null || skip "uid $PEER_UID cannot make a user+net namespace (unshare -Urn) here"
fi
in_netns TCXD_NLPEER_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
compare=$here/../integration/compare_tc.py
[ -f "$compare" ] || fail "$compare not found"
daemon_setup
private_netns_dir

# The peer: nobody's python in its own user+net namespace, reading commands
# on stdin (a FIFO that root opened), answering one line each on stdout.
#   forge           the crash message and a forged NLMSG_DONE to every
#                   rtnetlink port of the namespace but the kernel's
#   flood SECS MS   a forged NLMSG_DONE every MS ms for SECS s
# Answers: "sent N PORT:INODE..." (N datagrams accepted by the kernel).
# shellcheck disable=SC2016 # python, not shell
PEER_PY='
import errno, os, socket, struct, sys, time

NLMSG_ERROR, NLMSG_DONE, NLM_F_MULTI = 2, 3, 2

def ports():
    """rtnetlink sockets of this namespace with a port id (not the kernel),
    subscribed to no group: the socket of filter additions of the daemon (a
    member of RTNLGRP_TC) lets only RTM_NEWTFILTER in (a socket filter), so
    what is forged here never reaches its queue, nor its count."""
    out = []
    with open("/proc/net/netlink") as f:
        next(f)
        for line in f:
            v = line.split()
            if v[1] == "0" and v[2] != "0" and int(v[3], 16) == 0:
                out.append((int(v[2]), v[9]))
    return out

def hdr(length, mtype, flags=0, seq=0, pid=0):
    return struct.pack("=IHHII", length, mtype, flags, seq, pid)

def send(sock, targets, msgs, flags=0):
    n = 0
    for m in msgs:
        for port, _ in targets:
            try:
                sock.sendto(m, flags, (port, 0))
                n += 1
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.ENOBUFS):
                    raise
    return n

done_eperm = hdr(20, NLMSG_DONE, NLM_F_MULTI) + struct.pack("=i", -errno.EPERM)
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    targets = ports()  # before our own socket exists
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    sock.bind((0, 0))
    if not targets:
        n = 0
    elif cmd[0] == "forge":
        n = send(sock, targets, [hdr(0xffff0062, 0), done_eperm])
    elif cmd[0] == "flood":
        n = 0
        end = time.monotonic() + float(cmd[1])
        while time.monotonic() < end:
            n += send(sock, targets, [done_eperm], socket.MSG_DONTWAIT)
            time.sleep(float(cmd[2]) / 1000)
    sock.close()
    print("sent", n, " ".join("%d:%s" % t for t in targets), flush=True)
'
mkfifo "$WORK/peer.cmd"
setpriv --reuid=$PEER_UID --regid=$PEER_UID --clear-groups -- \
	unshare -Urn -- "$PYTHON" -c "$PEER_PY" <"$WORK/peer.cmd" >"$WORK/peer.out" \
	2>"$WORK/peer.err" &
peer=$!
BG_PIDS+=("$peer")
exec 9>"$WORK/peer.cmd"

# peer_wait N: waits for the peer's N-th answer line and sets ANSWER to it.
peer_wait() {
	local deadline=$((SECONDS + 30))
	until [ "$(wc -l <"$WORK/peer.out")" -ge "$1" ]; do
		kill -0 "$peer" 2>/dev/null || fail "the peer died: $(cat "$WORK/peer.err")"
		[ "$SECONDS" -lt "$deadline" ] || fail "the peer did not answer (line $1)"
		sleep 0.05
	done
	ANSWER=$(sed -n "${1}p" "$WORK/peer.out")
}
peer_wait 1
[ "$ANSWER" = ready ] || fail "the peer said '$ANSWER'"
# Unprivileged, seen from here; in a namespace of its own.
uid=$(awk '$1 == "Uid:" { print $3 }' "/proc/$peer/status")
[ "$uid" = $PEER_UID ] || fail "the peer runs as uid $uid, not $PEER_UID"
[ "$(readlink "/proc/$peer/ns/net")" != "$(readlink /proc/self/ns/net)" ] ||
	fail "the peer is in the test's network namespace"
touch /run/netns/peer
mount --bind "/proc/$peer/ns/net" /run/netns/peer

note "topology in the peer's namespace: v0p -> v0 (clsact), 3 + 1500 u32 filters"
P=(ip -n peer)
"${P[@]}" link set lo up
"${P[@]}" link add m0 type veth peer name m0p
"${P[@]}" link add v0 type veth peer name v0p
for d in m0 m0p v0 v0p; do "${P[@]}" link set "$d" up; done
"${P[@]}" addr add 10.9.0.1/24 dev v0p
for h in 2 3 4; do "${P[@]}" neigh add 10.9.0.$h lladdr 02:00:00:00:09:0$h dev v0p; done
tc -n peer qdisc add dev v0 clsact
for h in 2 3 4; do
	tc -n peer filter add dev v0 ingress pref 10 protocol ip u32 match ip dst 10.9.0.$h/32 \
		action mirred egress mirror dev m0 cookie 0$h
done
for i in $(seq 0 1499); do
	echo "filter add dev v0 ingress pref 20 protocol ip u32 match ip dst 10.10.$((i / 250)).$((i % 250))/32 action mirred egress mirror dev m0 cookie $(printf %04x "$i")"
done >"$WORK/batch"
tc -n peer -b "$WORK/batch"
# Traffic: 1, 2 and 3 datagrams of different sizes to .2, .3 and .4.
nsenter --net=/run/netns/peer "$PYTHON" - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for h in (2, 3, 4):
    for _ in range(h - 1):
        s.sendto(b"x" * (100 * h), ("10.9.0.%d" % h, 9))
PY

read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
cat >"$WORK/tcx.yaml" <<YAML
interval: 250ms
targets:
  - {dev: v0, parent: ingress, netns: peer}
http:
  listen: ["127.0.0.1:$port"]
YAML
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
wait_http 200 30 "$base/healthz"

fetch() {
	alive "$pid" tcx
	scrape "$WORK/m.txt" "$base/metrics"
	alive "$pid" tcx
}
value() { metric_value "$WORK/m.txt" "$1"; }
dropped() { value "tc_exporter_netlink_dropped_total{cause=\"$1\"}"; }
# wait_dropped N: until the daemon has dropped N datagrams from the peer.
wait_dropped() {
	local deadline=$((SECONDS + 20))
	while :; do
		fetch
		[ "$(dropped sender)" != "$1" ] || return 0
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "dropped datagrams: $(dropped sender), expected $1"
		sleep 0.1
	done
}
# compare_now NAME: two more collections, then /metrics equals tc.
compare_now() {
	local c0
	fetch
	c0=$(value tc_exporter_collections_total)
	until fetch && [ "$(value tc_exporter_collections_total)" -ge $((c0 + 2)) ]; do
		sleep 0.1
	done
	cp "$WORK/m.txt" "$WORK/$1.txt"
	"$PYTHON" "$compare" prom --dev peer v0 ingress ingress --exporter "$WORK/$1.txt" \
		--expect-rows 1503 --min-distinct-bytes 3 --check-filter-counts ||
		fail "$1: /metrics differs from tc"
	[ "$(value 'tc_scrape_collector_success{device="v0",parent="ingress",netns="peer"}')" = 1 ] ||
		fail "$1: the target is not collected"
	errs=$(awk '/^tc_exporter_collection_errors_total\{/ { s += $2 } END { print s + 0 }' \
		"$WORK/$1.txt")
	[ "$errs" = 0 ] || fail "$1: $errs collection errors: $(grep collection_errors "$WORK/$1.txt")"
	[ "$(dropped length)" = 0 ] || fail "$1: length drops: $(dropped length)"
}

# The daemon's sockets, by inode: the port the peer found must be one.
check_port() {
	local sockets t found=0
	sockets=$(find "/proc/$pid/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null |
		sed 's/socket:\[\([0-9]*\)\]/\1/')
	for t in "${@:3}"; do
		grep -qx "${t#*:}" <<<"$sockets" && found=1
	done
	[ "$found" = 1 ] || fail "no port the peer sent to (${*:3}) is the daemon's"
}

compare_now before
[ "$(dropped sender)" = 0 ] || fail "datagrams dropped before any was forged: $(dropped sender)"

note "forged: the 0xffff0062 length and an NLMSG_DONE, to the daemon's port"
echo forge >&9
peer_wait 2
read -ra words <<<"$ANSWER"
check_port "${words[@]}"
sent=${words[1]}
[ "$sent" -ge 2 ] || fail "the peer sent $sent datagrams: $ANSWER"
wait_dropped "$sent"
compare_now after-forge

note "flood: forged NLMSG_DONEs every 2.5 ms for 3 s, over 1500-filter dumps"
fetch
c0=$(value tc_exporter_collections_total)
echo "flood 3 2.5" >&9
peer_wait 3
read -ra words <<<"$ANSWER"
check_port "${words[@]}"
total=$((sent + words[1]))
[ "${words[1]}" -ge 300 ] || fail "the flood sent only ${words[1]} datagrams"
wait_dropped "$total"
c1=$(value tc_exporter_collections_total)
[ "$c1" -ge $((c0 + 8)) ] || fail "only $((c1 - c0)) collections during the 3 s flood"
compare_now after-flood
note "the daemon dropped $total datagrams, $((c1 - c0)) collections during the flood"

stop_tcx "$pid" tcx 5
echo "netlink_peer: ok ($(elapsed_ms) ms)"
