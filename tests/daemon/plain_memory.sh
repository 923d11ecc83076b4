#!/bin/bash
# The daemon keeps what is scraped: with 10,000 u32 filters (a 12 MB text
# body) and a collection every second, scraped as Prometheus does
# (OpenMetrics + gzip, every interval), one plain-text scrape is answered in
# full and leaves VmRSS where it was once 3 more intervals have passed (it
# used to be rendered again for every snapshot and kept: +28 MB).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc awk gzip
in_netns TCXD_PLAIN_MEMORY_INSIDE -n

daemon_setup
n=10000
u32_filters "$n"

read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
printf 'interval: 1s\ntargets:\n  - {dev: v0, parent: ingress}\nhttp: {listen: ["127.0.0.1:%s"]}\n' \
	"$port" >"$WORK/tcx.yaml"
# ASan keeps freed memory in quarantine: none here, so that RSS means the same
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 60 "$base/healthz"

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$TCX_PID/status"; }

# rows FILE: the action rows of a text exposition.
rows() { grep -c '^tc_action_bytes_total{' "$1" || true; }

# scrape_om: one scrape as Prometheus makes it, checked; prints the daemon's
# tc_exporter_collections_total.
scrape_om() {
	curl -sS --max-time 30 -D "$WORK/om.hdr" -o "$WORK/om.gz" \
		-H "Accept: $PROM_ACCEPT" \
		-H 'Accept-Encoding: gzip' "$base/metrics" || fail "OpenMetrics+gzip scrape failed"
	grep -qi '^content-encoding: *gzip' "$WORK/om.hdr" || fail "OpenMetrics+gzip scrape: not gzip"
	gzip -dc "$WORK/om.gz" >"$WORK/om.txt" || fail "the OpenMetrics+gzip body does not decompress"
	[ "$(rows "$WORK/om.txt")" = "$n" ] || fail "the OpenMetrics body has $(rows "$WORK/om.txt") rows, expected $n"
	[ "$(tail -n 1 "$WORK/om.txt")" = "# EOF" ] || fail "the OpenMetrics body does not end with # EOF"
	metric_value "$WORK/om.txt" tc_exporter_collections_total
}

# intervals K: K new collections, each scraped once (OpenMetrics + gzip).
last=$(scrape_om)
intervals() {
	local k c deadline
	for ((k = 0; k < $1; k++)); do
		deadline=$((SECONDS + 30))
		while c=$(scrape_om) && [ "$c" -le "$last" ]; do
			alive "$TCX_PID" tcx
			[ "$SECONDS" -lt "$deadline" ] || fail "no new collection within 30 s"
			sleep 0.2
		done
		last=$c
	done
}

intervals 6
before=$(rss_kb)
note "VmRSS after 6 intervals of OpenMetrics+gzip scrapes: $before kB"
curl -sS --max-time 30 -D "$WORK/plain.hdr" -o "$WORK/plain.txt" "$base/metrics" ||
	fail "plain-text scrape failed"
grep -qi '^content-type: *text/plain; version=0.0.4' "$WORK/plain.hdr" || fail "plain scrape: not text 0.0.4"
! grep -qi '^content-encoding' "$WORK/plain.hdr" || fail "plain scrape: encoded"
[ "$(rows "$WORK/plain.txt")" = "$n" ] || fail "the plain body has $(rows "$WORK/plain.txt") rows, expected $n"
! grep -q '^# EOF' "$WORK/plain.txt" || fail "the text 0.0.4 body has an # EOF"
note "plain-text scrape: $(wc -c <"$WORK/plain.txt") bytes"
intervals 3
after=$(rss_kb)
note "VmRSS 3 intervals later: $after kB"
[ "$after" -le $((before + 4096)) ] ||
	fail "one plain-text scrape took VmRSS from $before kB to $after kB"
stop_tcx "$TCX_PID" tcx 10
echo "plain_memory: all checks passed"
