#!/bin/bash
# A scrape of a variant that is not rendered ahead is streamed, never held
# whole. With 200,000 u32 filters with cookies (a 185 MB text body), each
# collection scraped as Prometheus does (OpenMetrics + gzip, every interval:
# rendered ahead, one body every scraper shares):
#   - one plain-text scrape is answered in full, chunked (no Content-Length),
#     with the rows, families and values of `--once` (but for the times and
#     the daemon's own counters), and raises the daemon's VmHWM, reset to its
#     VmRSS just before, by at most 32 MB (README, "The daemon"): rendered whole,
#     it raised it by 180 MB;
#   - it leaves VmRSS where it was once 3 more collections have passed (it once
#     stayed with its snapshot);
#   - HTTP/1.0 gets the same body, close-delimited; HEAD gets no body;
#     clients that go away part of the way through leave nothing behind:
#     VmRSS is back where it was 3 collections later, and the daemon exits
#     cleanly (ASan's leak check, in that build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc awk gzip head
in_netns TCXD_PLAIN_MEMORY_INSIDE -n

daemon_setup
n=200000
bound_mb=32 # README, "The daemon"
u32_filters "$n"

read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
# An interval of 1h: each collection is asked for (SIGHUP), so that none
# runs while the memory is measured.
printf 'interval: 1h\ntargets:\n  - {dev: v0, parent: ingress}\nhttp: {listen: ["127.0.0.1:%s"], renders_per_ip: 1024, renders: 1024}\n' \
	"$port" >"$WORK/tcx.yaml"
# ASan keeps freed memory in quarantine: none here, so that RSS means the same
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 120 "$base/healthz"

mem_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$TCX_PID/status"; }

# rows FILE: the action rows of a text exposition.
rows() { grep -c '^tc_action_bytes_total{' "$1" || true; }

# scrape_om NAME: one scrape as Prometheus makes it into $WORK/NAME.gz,
# checked; prints when its snapshot was taken, which tells snapshots apart
# (tc_exporter_collections_total may count a collection that is still being
# published).
scrape_om() {
	curl -sS --max-time 60 -D "$WORK/$1.hdr" -o "$WORK/$1.gz" \
		-H "Accept: $PROM_ACCEPT" \
		-H 'Accept-Encoding: gzip' "$base/metrics" || fail "OpenMetrics+gzip scrape failed"
	grep -qi '^content-encoding: *gzip' "$WORK/$1.hdr" || fail "OpenMetrics+gzip scrape: not gzip"
	gzip -dc "$WORK/$1.gz" >"$WORK/$1.txt" || fail "the OpenMetrics+gzip body does not decompress"
	[ "$(rows "$WORK/$1.txt")" = "$n" ] || fail "the OpenMetrics body has $(rows "$WORK/$1.txt") rows, expected $n"
	[ "$(tail -n 1 "$WORK/$1.txt")" = "# EOF" ] || fail "the OpenMetrics body does not end with # EOF"
	metric_value "$WORK/$1.txt" tc_exporter_snapshot_timestamp_seconds
}

# intervals K: K new collections (a reload collects at once), each scraped
# once (OpenMetrics + gzip).
last=$(scrape_om om)
intervals() {
	local k c deadline
	for ((k = 0; k < $1; k++)); do
		kill -HUP "$TCX_PID"
		deadline=$((SECONDS + 60))
		while c=$(scrape_om om) && [ "$c" = "$last" ]; do
			alive "$TCX_PID" tcx
			[ "$SECONDS" -lt "$deadline" ] || fail "no new collection within 60 s"
			sleep 0.2
		done
		last=$c
	done
}

# headers NAME: the response headers of $WORK/NAME.hdr, names lower-case,
# no CR.
headers() { tr -d '\r' <"$WORK/$1.hdr" | sed 's/^[^:]*:/\L&/'; }

# fetch_plain NAME [CURL ARGS...]: a plain-text scrape into $WORK/NAME.txt;
# check_plain NAME checks it.
fetch_plain() {
	local name=$1
	shift
	curl -sS --max-time 60 -D "$WORK/$name.hdr" -o "$WORK/$name.txt" "$@" "$base/metrics" ||
		fail "$name: plain-text scrape failed"
}
check_plain() {
	local name=$1
	headers "$name" | grep -q '^content-type: text/plain; version=0.0.4' || fail "$name: not text 0.0.4"
	! headers "$name" | grep -q '^content-encoding' || fail "$name: encoded"
	! headers "$name" | grep -q '^content-length' ||
		fail "$name: a Content-Length: the body was rendered whole, not streamed"
	[ "$(rows "$WORK/$name.txt")" = "$n" ] || fail "$name: the body has $(rows "$WORK/$name.txt") rows, expected $n"
	[ "$(tail -n 1 "$WORK/$name.txt" | cut -c1-8)" = process_ ] || fail "$name: the body does not end with the process_ families"
}

# Prometheus's variant is rendered ahead once it was asked for during two
# intervals: from then on every scrape of a snapshot gets the same bytes.
intervals 2
[ "$(scrape_om om1)" = "$last" ] || fail "a collection that was not asked for"
cmp -s "$WORK/om.gz" "$WORK/om1.gz" ||
	fail "two OpenMetrics+gzip scrapes of one snapshot differ: it is not rendered ahead and shared"

rss0=$(mem_kb VmRSS)
note "after 3 collections, each scraped with OpenMetrics+gzip: VmRSS $rss0 kB, VmHWM $(mem_kb VmHWM) kB"
# The peak of the collections is not the scrape's: VmHWM from VmRSS (proc(5),
# clear_refs).
echo 5 >"/proc/$TCX_PID/clear_refs" || fail "cannot reset VmHWM (/proc/PID/clear_refs)"
hwm0=$(mem_kb VmHWM)
[ "$hwm0" -le $((rss0 + 1024)) ] || fail "VmHWM $hwm0 kB after its reset, VmRSS $rss0 kB"
fetch_plain plain
hwm1=$(mem_kb VmHWM)
grow=$((hwm1 - hwm0))
note "plain-text scrape: $(wc -c <"$WORK/plain.txt") bytes; VmHWM $hwm0 -> $hwm1 kB (+$grow kB)"
[ "$grow" -le $((bound_mb * 1024)) ] ||
	fail "one plain-text scrape raised VmHWM by $grow kB, more than $bound_mb MB: its body was held whole"
check_plain plain
headers plain | grep -q '^transfer-encoding: chunked' || fail "plain: not chunked"

# The same series and values as --once (no traffic: the counters stand
# still), but for the daemon's own families, which end the body, the dump
# requests (--once dumps in full at once, the daemon tries terse first), the
# sweeps (the reloads that make this test's collections each sweep) and the
# times.
strip() {
	sed '/^# HELP tc_exporter_collections_total /,$d' "$1" |
		grep -vE '^tc_(exporter_(snapshot_(timestamp|duration)_seconds|filter_sweeps_total)|scrape_collector_(duration_seconds|dump_requests)|action_[a-z_]+_timestamp_seconds)[{ ]'
}
run_tcx once --once --config "$WORK/tcx.yaml"
[ "$RC" = 0 ] || fail "--once exited $RC"
diff <(strip "$WORK/once.out") <(strip "$WORK/plain.txt") >"$WORK/once.diff" ||
	fail "the streamed body is not --once's: $(head -c 600 "$WORK/once.diff")"

intervals 3
rss1=$(mem_kb VmRSS)
note "VmRSS 3 intervals later: $rss1 kB"
[ "$rss1" -le $((rss0 + 8192)) ] ||
	fail "one plain-text scrape took VmRSS from $rss0 kB to $rss1 kB"

# HTTP/1.0: no chunks, the end of the body is the end of the connection.
fetch_plain plain10 --http1.0
check_plain plain10
! headers plain10 | grep -q '^transfer-encoding' || fail "HTTP/1.0: Transfer-Encoding"
diff <(strip "$WORK/plain.txt") <(strip "$WORK/plain10.txt") >/dev/null ||
	fail "the HTTP/1.0 body differs from the HTTP/1.1 one"
# HEAD: the headers of a GET, but for chunks (libmicrohttpd would send the
# last one); no body, nothing rendered.
curl -sS --max-time 10 -I "$base/metrics" >"$WORK/head.hdr" || fail "HEAD /metrics failed"
headers head | grep -q '^HTTP/1.1 200' || fail "HEAD: $(head -n 1 "$WORK/head.hdr")"
headers head | grep -q '^content-type: text/plain; version=0.0.4' || fail "HEAD: not the GET's headers"
! headers head | grep -qE '^(content-length|transfer-encoding):' || fail "HEAD: $(headers head)"
# Clients that go away after 1 MB: libmicrohttpd frees their responses,
# which let go of their snapshots.
for k in 1 2 3 4 5; do
	curl -sS --max-time 60 "$base/metrics" 2>/dev/null | head -c 1000000 >/dev/null || true
done
curl -sS --max-time 60 -H 'Accept-Encoding: gzip' "$base/metrics" 2>/dev/null | head -c 10000 >/dev/null || true
alive "$TCX_PID" tcx
intervals 3
rss2=$(mem_kb VmRSS)
note "VmRSS 3 intervals after 6 clients that went away: $rss2 kB"
[ "$rss2" -le $((rss0 + 8192)) ] ||
	fail "clients that went away took VmRSS from $rss0 kB to $rss2 kB"
stop_tcx "$TCX_PID" tcx 10
echo "plain_memory: all checks passed"
