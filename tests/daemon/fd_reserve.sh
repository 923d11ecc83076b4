#!/bin/bash
# The daemon with `aggregate` over 300 named namespaces (4 fds each: its
# /run/netns entry, its netlink socket, its deletion and its addition
# notification sockets) at
# `ulimit -n 256` (soft and hard: nothing to raise), as root, in private
# mount and network namespaces (issue #18, point 4). Collection never takes
# the last fds: it keeps 64 of them free (lib/fds.h), so that
#
#   - HTTP still answers: 8 connections held open at once each get their
#     scrape (main took 254 to 256 of the 256 fds, and HTTP accepted
#     little or nothing);
#   - the namespaces that did not fit are targets that failed with cause
#     resource (counted, one log line for all of them), the others are
#     collected, and the daemon holds at most 256 - 64 fds between scrapes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

require_bin
require_root -m -n
require_cmd ip tc curl mount prlimit
find_python
in_netns TCXD_FD_RESERVE_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
daemon_setup
private_netns_dir
N=300
P=tcxr$$-
if ! out=$(many_netns "$P" "$N" 0a01 2>&1); then
	many_netns_del "$P" "$N"
	skip "kernel lacks a feature this test needs (clsact, u32, mirred): $out"
fi

port=$(free_ports 1)
base=http://127.0.0.1:$port
cat >"$WORK/tcx.yaml" <<YAML
interval: 500ms
http: {listen: ["127.0.0.1:$port"]}
targets: [{all: true, netns: "$P*"}]
labels: [tenant]
cookies: {"0a01": [acme]}
aggregate: {by: [tenant]}
YAML
TCX_WRAP=(prlimit --nofile=256:256 --)
start_tcx tcx "$WORK/tcx.yaml"

# every_target: a scrape into $WORK/now.prom that has a target for each of
# the N namespaces.
every_target() {
	[ "$(curl -s -o "$WORK/now.prom" --max-time 5 -w '%{http_code}' "$base/metrics" \
		2>/dev/null)" = 200 ] &&
		[ "$(grep -c '^tc_scrape_collector_success{' "$WORK/now.prom")" = "$N" ]
}
deadline=$((SECONDS + 30))
until every_target; do
	alive "$TCX_PID" tcx
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "no scrape with a target for each of the $N namespaces within 30 s (last: $(grep -c '^tc_scrape_collector_success{' "$WORK/now.prom" 2>/dev/null) targets)"
	sleep 0.2
done

note "the namespaces that did not fit failed with cause resource"
ok=$(grep -c '^tc_scrape_collector_success{.*} 1$' "$WORK/now.prom" || true)
failed=$(grep -c '^tc_scrape_collector_success{.*} 0$' "$WORK/now.prom" || true)
[ "$((ok + failed))" = "$N" ] || fail "$ok + $failed targets, expected $N"
# 256 - 64 (the reserve) fds, at 4 a namespace, less those of the daemon itself.
if [ "$ok" -lt 37 ] || [ "$ok" -ge 48 ]; then
	fail "$ok namespaces collected, expected 37 to 47"
fi
grep -qx "tc_exporter_snapshot_errors{cause=\"resource\"} $failed" "$WORK/now.prom" ||
	fail "not $failed resource errors: $(grep '^tc_exporter_snapshot_errors{' "$WORK/now.prom")"
grep -qE '^tc_exporter_collection_errors_total\{cause="resource"\} [1-9]' "$WORK/now.prom" ||
	fail "the resource errors are not in tc_exporter_collection_errors_total"
grep -qx 'tc_action_packets_total{tenant="acme"} 0' "$WORK/now.prom" ||
	fail "the aggregate of the namespaces collected is missing"
wait_log 5 "error: $failed targets: not opened: its sockets would leave fewer than 64 of the 256 open files \(the soft limit\) free, and those are kept for HTTP and reading /run/netns \(all netns ${P}[0-9]+, all netns ${P}[0-9]+, all netns ${P}[0-9]+ and $((failed - 3)) more\)$"
[ "$(logged 'targets: not opened' | wc -l)" = 1 ] ||
	fail "the shortage was not logged once: $(logged 'targets: not opened')"
fds=$(find "/proc/$TCX_PID/fd" -mindepth 1 | wc -l)
[ "$fds" -le 192 ] || fail "the daemon holds $fds fds, more than 256 - 64"

note "8 connections held open at once are each answered"
# Each answered in turn and kept open (HTTP/1.1 keep-alive), so that each
# holds an fd of the daemon's: with 2 fds free, the third would wait in the
# listen backlog until a keep-alive timeout.
"$PYTHON" - "$port" <<'PY' || fail "HTTP did not answer 8 connections held open at once"
import http.client, sys
conns = []
for i in range(8):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read()
    if r.status != 200 or b"tc_exporter_build_info" not in body:
        sys.exit("connection %d: %d %r" % (i, r.status, body[:200]))
    conns.append(c)
for c in conns:
    c.close()
PY
alive "$TCX_PID" tcx

stop_tcx "$TCX_PID" tcx 10
many_netns_del "$P" "$N"
note "fd_reserve: all checks passed"
