#!/bin/bash
# Load: wrk for 20 s with 64 connections against /metrics while the collector
# runs every second on 10,000 u32 filters (each with a mirred action and a
# unique cookie), in a private network namespace (root).
#   - zero non-2xx answers and zero socket errors (connect, read, write,
#     timeout). How fast answers come is the bench's business
#     (tests/bench/http_bench.sh), not this test's: wrk's timeout is 60 s,
#     longer than the whole run, so a timeout here is an answer that took
#     longer than the run itself. With 10 s, 1 request in 5420 of the ASan
#     build failed a CI run where another test ran beside this one (its p99
#     was 0.8 s); here, with the machine loaded to 4x its cores, single
#     answers took up to 11.6 s, the daemon's threads starved of CPU (it
#     counted at most 4.3 s from a request to its last byte sent);
#   - the requests rotate over the four variants (text, OpenMetrics, each
#     plain and gzip; a wrk Lua script);
#   - the collector keeps collecting under load (at least 8 collections in
#     the 20 s) and /healthz stays 200;
#   - the lowest VmRSS sample of the second half of the 20 s within 10% of
#     the median sample of the first half, after a warm-up of 8 s, all
#     sampled under the same load (one wrk run of 8 + 20 s);
#   - SIGTERM under load (wrk, plus 20 clients that never read their
#     answer): exit 0 within 2 s.
# About 32 s on 2 cores; TCX_LOAD_SECONDS (default 20), TCX_LOAD_WARMUP
# (default 8) and TCX_LOAD_FILTERS (default 10000) change the size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc wrk awk
in_netns TCXD_LOAD_INSIDE -n

daemon_setup
n=${TCX_LOAD_FILTERS:-10000}
secs=${TCX_LOAD_SECONDS:-20}
# The heap reaches its plateau once the worst overlap of snapshot generations
# with bodies in flight has happened: after 2 to 6 s of this load on 2 cores
# (in steps of one 14 MB body). 3 s was too short in 1 run of 2, so the
# warm-up is 8 s.
warm=${TCX_LOAD_WARMUP:-8}

note "creating $n u32 filters"
t0=$(date +%s%N)
u32_filters "$n"
note "created in $((($(date +%s%N) - t0) / 1000000)) ms"

read -r port < <(free_ports 1)
cat >"$WORK/tcx.yaml" <<YAML
interval: 1s
targets:
  - {dev: v0, parent: ingress}
labels: [tenant]
cookies:
  "74637862656e63680000000000000001": [acme]
http:
  listen: ["127.0.0.1:$port"]
  max_connections: 512
  max_connections_per_ip: 128
  timeout: 10s
  renders_per_ip: 1024 # 64 connections of one address: not a budget test (render_flood.sh)
  renders: 1024
YAML
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
base=http://127.0.0.1:$port
wait_http 200 30 "$base/healthz"
scrape "$WORK/m.txt" "$base/metrics"
rows=$(grep -c '^tc_action_bytes_total{' "$WORK/m.txt" || true)
[ "$rows" = "$n" ] || fail "/metrics has $rows action rows, expected $n"
note "/metrics: $rows action rows, $(wc -c <"$WORK/m.txt") bytes (text)"

cat >"$WORK/variants.lua" <<'LUA'
-- Rotates over the four variants of /metrics.
local variants = {
  {},
  {["Accept-Encoding"] = "gzip"},
  {["Accept"] = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"},
  {["Accept"] = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
   ["Accept-Encoding"] = "gzip"},
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/metrics", variants[i % 4 + 1])
end
LUA
vmrss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# One wrk run of $warm + $secs seconds (-t2 -c64, 60 s timeout, the 4
# variants), in the background; VmRSS is sampled every 0.5 s meanwhile. "After
# warm-up" is the sample at $warm s, "at the end" the last one before wrk exits:
# both under the same load (the daemon's RSS under load is its idle RSS plus
# the bodies in flight; comparing an idle figure with a loaded one would
# measure the load, not a leak).
total=$((secs + warm))
note "wrk -t2 -c64 -d${total}s ($warm s warm-up, then $secs s; 4 variants)"
timeout $((total + 30)) wrk -t2 -c64 -d"${total}s" --timeout 60s --latency -s "$WORK/variants.lua" \
	"$base/metrics" >"$WORK/load.wrk" 2>&1 &
wrk_pid=$!
BG_PIDS+=("$wrk_pid")
t_wrk=$(date +%s%N)
rss0='' rss1='' rssmax=0 c0=
while kill -0 "$wrk_pid" 2>/dev/null && [ "$(proc_state "$wrk_pid")" != Z ]; do
	r=$(vmrss "$pid") || fail "the daemon died under load"
	[ -n "$r" ] || fail "the daemon died under load"
	el=$((($(date +%s%N) - t_wrk) / 1000000))
	if [ -z "$rss0" ] && [ "$el" -ge $((warm * 1000)) ]; then
		rss0=$r
		c0=$(collections "$base/metrics")
		note "VmRSS after the $warm s warm-up: $rss0 kB (collection $c0)"
	fi
	[ "$el" -ge $((total * 1000 - 300)) ] || rss1=$r
	[ "$r" -le "$rssmax" ] || rssmax=$r
	echo "$el $r" >>"$WORK/rss.samples"
	sleep 0.5
done
rc=0
wait "$wrk_pid" || rc=$?
[ "$rc" = 0 ] || fail "wrk failed ($rc): $(cat "$WORK/load.wrk")"
[ -n "$rss0" ] || fail "wrk ended before the warm-up was over: $(cat "$WORK/load.wrk")"
if grep -E 'Non-2xx or 3xx responses|Socket errors' "$WORK/load.wrk" >&2; then
	cat "$WORK/load.wrk" >&2
	# The TCP counters of this private namespace, whose loopback carried
	# only this test's traffic: retransmission timeouts or drops would
	# explain a stall that the daemon did not cause.
	nstat -asz 2>/dev/null | awk '$1 ~ /RetransSegs|TCPTimeouts|Prune|RcvQDrop|Drop|Overflow|MemoryPressures/ && $2 > 0' >&2 || true
	fail "wrk saw the errors above"
fi
grep -qE '^ *[0-9]+ requests in ' "$WORK/load.wrk" || fail "no request count in wrk's output: $(cat "$WORK/load.wrk")"
c1=$(collections "$base/metrics")
alive "$pid" tcx
[ "$(http_code "$base/healthz")" = 200 ] || fail "/healthz is not 200 after the load"
reqs=$(awk '/ requests in / { print $1 }' "$WORK/load.wrk")
rps=$(awk '/^Requests\/sec:/ { print $2 }' "$WORK/load.wrk")
p99=$(awk '$1 == "99%" { print $2 }' "$WORK/load.wrk")
max=$(awk '$1 == "Latency" { print $4; exit }' "$WORK/load.wrk")
ncoll=$((${c1%%.*} - ${c0%%.*}))
note "wrk: $reqs requests (0 non-2xx, 0 socket errors), $rps req/s, p99 $p99, max $max; $ncoll collections in the last $secs s"
[ "$reqs" -ge 100 ] || fail "only $reqs requests in $total s"
[ "$ncoll" -ge $((secs * 2 / 5)) ] || fail "only $ncoll collections in $secs s under load: the collector starves"
grep -qE '^tc_action_bytes_total\{.*cookie="74637862656e63680000000000000001",tenant="acme"\} ' "$WORK/collections.txt" ||
	fail "the mapped cookie's row is missing after the load"
sleep 1.5
rss_idle=$(vmrss "$pid")
note "VmRSS: $rss0 kB after warm-up, $rss1 kB at the end (max $rssmax kB; idle 1.5 s later: $rss_idle kB)"
if sanitizer_build; then
	# ASan keeps freed memory in quarantine (256 MB by default), so resident
	# memory grows with every freed body until that fills: not a measure of
	# the daemon's. The same run's -Werror build checks it; leaks are checked
	# by LeakSanitizer at exit here and by valgrind in reload.sh.
	note "a sanitizer build: the RSS bound is checked by the plain build"
else
	# The bodies of each snapshot are freed with it: one sample lands
	# anywhere between the floor and the peak of the bodies in flight,
	# which is a matter of when it is taken. The peaks come in bursts of 2
	# to 4 s, every 8 to 10 s under this load (samples of 27-35 MB, then
	# 43-67 MB, in CI runs with no leak: 19.6 and 20.6 MB idle after), and
	# the floor itself moves by 10% from one half of a run to the other. A
	# leak stays, so it lifts every sample of the second half: its lowest
	# sample against the median of the first half. No statistic of one
	# window against the same of another held: medians of 5 s windows (a
	# burst filled half of one: 34.4 -> 43.4 MB), lower quartiles of the two
	# halves (the floor moved: 29.9 -> 33.2 MB), the lowest sample of each
	# (one sample, when few bodies were in flight, made a floor of 22.0 MB
	# among samples of 29.8-35.4 MB).
	read -r med0 min1 < <(awk -v w="$((warm * 1000))" -v e="$((total * 1000 - 300))" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n ? a[int((n + 1) / 2)] : 0
		}
		BEGIN { h = w + (e - w) / 2 }
		$1 >= w && $1 < h { s0[++n0] = $2 }
		$1 >= h && $1 < e && (!n1++ || $2 < m1) { m1 = $2 }
		END { print median(s0, n0), m1 + 0 }' "$WORK/rss.samples")
	note "VmRSS under load: median $med0 kB in the first half of the $secs s, lowest $min1 kB in the second"
	awk -v a="$med0" -v b="$min1" 'BEGIN { exit !(a > 0 && b > 0 && b <= a * 1.10) }' ||
		fail "VmRSS grew by more than 10% under load: the second half's lowest sample, $min1 kB," \
			"is over the first half's median, $med0 kB; samples (ms kB): $(tr '\n' ' ' <"$WORK/rss.samples")"
fi

note "SIGTERM under load (wrk, and 20 clients that do not read their answer): exit 0 within 2 s"
timeout 60 wrk -t2 -c64 -d10s --timeout 60s "$base/metrics" >/dev/null 2>&1 &
BG_PIDS+=($!)
cat >"$WORK/slow.py" <<'PY'
import socket, sys, time
# slow.py PORT: 20 requests whose answers are never read (small receive
# buffers: the server's sends block); holds them for 30 s.
ss = []
for _ in range(20):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", int(sys.argv[1])))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    ss.append(s)
open(sys.argv[2], "w").close()
time.sleep(30)
PY
bg_start slow "$PYTHON" "$WORK/slow.py" "$port" "$WORK/slow.ready"
wait_file "$WORK/slow.ready" 20 "$BG_PID" slow
sleep 2
stop_tcx "$pid" tcx 2
note "SIGTERM to exit under load: $STOP_MS ms"
echo "load: all checks passed in $(elapsed_ms) ms" \
	"($reqs requests, $rps req/s, p99 $p99, VmRSS $rss0 -> $rss1 kB, $ncoll collections," \
	"SIGTERM under load $STOP_MS ms)"
