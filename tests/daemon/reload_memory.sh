#!/bin/bash
# The daemon's memory with a large cookie map (300k cookies, 13 MB of YAML):
# below 100 MB once it serves (the YAML document the loader built took
# 180 MB), and no higher after three SIGHUP reloads of the same file than
# before them (the first configuration was kept alive by the HTTP servers
# when they did not restart: +60 MB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs awk
in_netns TCXD_RELOAD_MEMORY_INSIDE -n

daemon_setup
read -r port < <(free_ports 1)
{
	printf 'interval: 1h\nhttp: {listen: ["127.0.0.1:%s"]}\n' "$port"
	printf 'labels: [tenant, rule]\ncookies:\n'
	awk 'BEGIN { for (i = 0; i < 300000; i++)
		printf "  \"%08x\": {tenant: t%d, rule: r%d}\n", i, i, i }'
} >"$WORK/tcx.yaml"
# ASan keeps freed memory in quarantine: none here, so that RSS means the same
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0

rss_mb() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$TCX_PID/status"; }
reloads() { grep -c 'configuration reloaded' "$WORK/tcx.err" || true; }

start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 60 "http://127.0.0.1:$port/metrics"
sleep 1
start=$(rss_mb)
note "serving 300k cookies: $start MB"
[ "$start" -lt 100 ] || fail "the daemon takes $start MB with 300k cookies"
for k in 1 2 3; do
	kill -HUP "$TCX_PID"
	deadline=$((SECONDS + 60))
	until [ "$(reloads)" -ge "$k" ]; do
		alive "$TCX_PID" tcx
		[ "$SECONDS" -lt "$deadline" ] || fail "reload $k did not complete within 60 s"
		sleep 0.2
	done
	sleep 1 # the collection that follows frees the previous configuration
	note "after reload $k: $(rss_mb) MB"
done
after=$(rss_mb)
[ "$after" -le $((start + 8)) ] ||
	fail "three reloads took the daemon from $start MB to $after MB"
stop_tcx "$TCX_PID" tcx 10
echo "reload_memory: all checks passed"
