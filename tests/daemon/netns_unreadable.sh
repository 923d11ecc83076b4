#!/bin/bash
# /run/netns that cannot be read (issue #18, point 2), as root, in private
# mount and network namespaces (a private /run/netns). The daemon runs
# without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so that `chmod 000
# /run/netns` makes its opendir(3) and stat(2) there fail with EACCES while
# it still holds its sockets (the same path as EMFILE or ENOMEM, which
# are cause resource). With `netns: GLOB` and `aggregate`:
#
#   - while the directory cannot be read, the glob's targets are the
#     namespaces it matched last, each failed (tc_scrape_collector_success 0,
#     cause io counted, one log line for all of them, once), and the
#     aggregate keeps its value;
#   - nothing is released: the daemon still holds both namespaces (their
#     /run/netns entries, opened and closed with their sockets), so a
#     filter deleted meanwhile still has its final counters (its
#     notification waits in the socket), and once the directory can be read
#     again, the aggregate counts the packets that filter saw after the last
#     collection that dumped it.
#
# main (before the fix) turned the failed read into no namespace: the
# targets vanished silently, their sockets were closed, the final was lost.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

require_bin
require_root -m -n
require_cmd ip tc curl mount setpriv
find_python
in_netns TCXD_NETNS_UNREADABLE_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
daemon_setup
private_netns_dir
P=tcxu$$

# mkns NAME COOKIE HOST: a namespace NAME holding d0, whose veth peer HOST is
# in ours (up), with a clsact and one u32 filter on ingress whose action
# carries COOKIE, mirroring to x0 (a veth pair inside: the copies end at x1).
mkns() {
	local ns=$1 cookie=$2 host=$3
	ip netns add "$ns"
	ip link add "$host" type veth peer name d0 netns "$ns"
	ip link set "$host" up
	ip -n "$ns" link add x0 type veth peer name x1
	for d in d0 x0 x1; do ip -n "$ns" link set "$d" up; done
	tc -n "$ns" qdisc add dev d0 clsact
	tc -n "$ns" filter add dev d0 ingress pref 1 protocol ip u32 match u32 0 0 \
		action mirred egress mirror dev x0 cookie "$cookie"
}
cleanup_ns() {
	ip netns del "${P}-1" 2>/dev/null || true
	ip netns del "${P}-2" 2>/dev/null || true
}
if ! out=$(mkns "${P}-1" 0e01 "${P}h1" 2>&1 && mkns "${P}-2" 0e02 "${P}h2" 2>&1); then
	cleanup_ns
	skip "kernel lacks a feature this test needs (veth, clsact, u32, mirred): $out"
fi

port=$(free_ports 1)
base=http://127.0.0.1:$port
cat >"$WORK/tcx.yaml" <<YAML
interval: 200ms
http: {listen: ["127.0.0.1:$port"]}
targets: [{all: true, netns: "${P}-*"}]
labels: [tenant]
cookies: {"0e01": [acme], "0e02": [acme]}
unmapped: drop
aggregate: {by: [tenant]}
YAML
# shellcheck disable=SC2054 # (setpriv's list of capabilities)
TCX_WRAP=(setpriv --bounding-set -dac_override,-dac_read_search --)
start_tcx tcx "$WORK/tcx.yaml"

# wait_metrics SECONDS DESCRIPTION CMD...: scrapes into $WORK/now.prom until
# CMD succeeds; fails after SECONDS.
wait_metrics() {
	local secs=$1 what=$2 deadline
	shift 2
	deadline=$((SECONDS + secs))
	while :; do
		alive "$TCX_PID" tcx
		if [ "$(curl -s -o "$WORK/now.prom" --max-time 5 -w '%{http_code}' "$base/metrics" \
			2>/dev/null)" = 200 ] && "$@"; then
			return 0
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "--- last scrape:" >&2
			grep -E '^tc_(scrape_collector_success|action_packets_total|exporter_snapshot_errors)' \
				"$WORK/now.prom" >&2 || true
			fail "not within $secs s: $what"
		fi
		sleep 0.1
	done
}
has() { grep -qE -- "$1" "$WORK/now.prom"; }
# success NS VALUE: NS's target (d0 ingress) has tc_scrape_collector_success VALUE.
success() { has '^tc_scrape_collector_success\{.*netns="'"$1"'".*\} '"$2"'$'; }
# acme PACKETS: the aggregate counts PACKETS.
acme() { has '^tc_action_packets_total\{tenant="acme"\} '"$1"'$'; }
# held: the namespaces the daemon holds fds of (each with its sockets:
# collectors/nl.c opens and closes them together).
held() { find "/proc/$TCX_PID/fd" -lname '/run/netns/*' | wc -l; }

both_ok() { success "${P}-1" 1 && success "${P}-2" 1; }
wait_metrics 10 "both namespaces collected" both_ok
udp_raw "${P}h1" 9:100:5 >/dev/null
udp_raw "${P}h2" 9:100:7 >/dev/null
wait_metrics 3 "acme counts the 12 packets of both namespaces" acme 12
held=$(held)
[ "$held" = 2 ] || fail "the daemon holds $held namespaces, expected 2"

note "chmod 000 /run/netns: the glob's targets stay, failed (cause io); nothing released"
mark_log
chmod 000 /run/netns
# failed_kept: both targets there with 0, the aggregate unchanged, 2 io errors.
failed_kept() {
	success "${P}-1" 0 && success "${P}-2" 0 && acme 12 &&
		has '^tc_exporter_snapshot_errors\{cause="io"\} 2$'
}
wait_metrics 3 "the glob's targets kept and failed, the aggregate kept" failed_kept
has '^tc_exporter_collection_errors_total\{cause="io"\} [1-9]' ||
	fail "the io errors are not in tc_exporter_collection_errors_total"
wait_log 3 "2 targets: cannot read /run/netns: Permission denied \(all netns ${P}-1, all netns ${P}-2\)"
[ "$(held)" = 2 ] || fail "the daemon released namespaces once /run/netns could not be read"

note "a filter deleted meanwhile: its final waits in the socket that was kept"
udp_raw "${P}h1" 9:100:3 >/dev/null
tc -n "${P}-1" filter del dev d0 ingress pref 1 handle 800::800 u32
for _ in $(seq 1 10); do
	wait_metrics 2 "acme still at 12 while /run/netns cannot be read" failed_kept
	sleep 0.1
done
[ "$(logged 'cannot read /run/netns' | wc -l)" = 1 ] ||
	fail "the failed read was not logged once: $(logged 'cannot read /run/netns')"
[ "$(held)" = 2 ] || fail "namespaces were released while /run/netns could not be read"

note "chmod 755 /run/netns: collected again, with the deleted filter's final"
chmod 755 /run/netns
recovered() {
	success "${P}-2" 1 && acme 15 && has '^tc_exporter_snapshot_errors\{cause="io"\} 0$'
}
wait_metrics 3 "${P}-2 collected again, acme at 15 (12 + the 3 packets of the deleted filter)" \
	recovered
wait_log 3 'every target collected again'
for _ in $(seq 1 10); do
	wait_metrics 2 "acme stays at 15" acme 15
	sleep 0.1
done

stop_tcx "$TCX_PID" tcx 5
cleanup_ns
note "netns_unreadable: all checks passed"
