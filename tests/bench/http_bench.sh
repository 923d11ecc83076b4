#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# HTTP benchmark of the daemon (a report, not a test):
#   tests/bench/http_bench.sh BUILDDIR
# with BUILDDIR/tcexporter and BUILDDIR/tests/bench/render_bench built.
#
# For every size N (TCX_HTTP_BENCH_SIZES, default "1000 100000"), in a
# private network namespace of its own (unshare -n): a veth pair v0/v1,
# clsact on v0, N u32 filters on v0 ingress (4000 per pref: past 4095
# filters in one u32 hash table the kernel reuses handles), each with one
# mirred action and a unique 16-byte cookie: N action rows. The daemon
# collects them every TCX_HTTP_BENCH_INTERVAL (default 15s, the default
# interval: a snapshot changes, and is rendered again on the first request,
# at most once during a 10 s run). Then, side by side in one run:
#   exporter  wrk -t2 -c8 -d10s --latency  http://127.0.0.1:P/metrics
#   nginx     the same against nginx (Debian package) serving the exact bytes
#             the daemon answered (saved with curl) as a static file with the
#             same Content-Type (and Content-Encoding: gzip for gzip): the
#             ceiling.
# for the plain text variant and for gzip (-H 'Accept-Encoding: gzip').
# The ratio exporter/nginx of requests/s has a target of at least 0.5.
# Then BUILDDIR/tests/bench/render_bench 100000 7: the time to render a
# 100k-row snapshot once, in ns per row (target: at most 400 for text and
# OpenMetrics).
#
# The machine's cores are shared: wrk (2 threads), the daemon (2 HTTP
# threads + the collector) and nginx (worker_processes auto) all run at once,
# with no taskset; on 2 cores the load generator takes about half of the CPU,
# for both servers alike.
#
# Missing a target is reported, not failed: the exit status is 0 whenever
# the benchmark ran, 77 when it cannot run here (not root, a tool missing).
# Environment: TCX_HTTP_BENCH_SIZES, TCX_HTTP_BENCH_INTERVAL,
# TCX_HTTP_BENCH_SECONDS (default 10), TCX_HTTP_BENCH_CONNS (default 8),
# TCX_BENCH_OUT (output directory, default a temporary one, kept).
set -euo pipefail

readonly TARGET_RATIO=0.5 TARGET_NS=400

self=$(readlink -f "${BASH_SOURCE[0]}")

die() {
	echo "http_bench: $*" >&2
	exit 1
}

skip() {
	echo "http_bench: SKIP: $*" >&2
	exit 77
}

PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_200() { # URL SECONDS
	local deadline=$((SECONDS + $2))
	until [ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$1" || true)" = 200 ]; do
		[ "$SECONDS" -lt "$deadline" ] || die "$1 did not answer 200 within $2 s"
		sleep 0.2
	done
}

# run_wrk NAME URL [WRK ARGS]: one wrk run; prints "req/s p99_ms".
run_wrk() {
	local name=$1 url=$2 f
	shift 2
	f=$out/wrk-$n-$name.txt
	timeout $((secs + 60)) wrk -t2 -c"$conns" -d"${secs}s" --timeout 10s --latency "$@" "$url" >"$f" 2>&1 ||
		die "N=$n $name: wrk failed: $(cat "$f")"
	if grep -E 'Non-2xx or 3xx responses|Socket errors' "$f" >&2; then
		echo "http_bench: WARNING: N=$n $name: errors (above)" >&2
	fi
	awk '
		/^Requests\/sec:/ { rps = $2 }
		$1 == "99%" {
			v = $2
			if (v ~ /us$/) ms = substr(v, 1, length(v) - 2) / 1000
			else if (v ~ /ms$/) ms = substr(v, 1, length(v) - 2) + 0
			else if (v ~ /s$/) ms = substr(v, 1, length(v) - 1) * 1000
		}
		END { if (rps == "") exit 1; printf "%s %.2f\n", rps, ms }' "$f" ||
		die "N=$n $name: cannot read wrk's output: $(cat "$f")"
}

# Runs inside a fresh network namespace: one size.
netns_body() {
	local d=$out/n$n port nport rows t0 tctime
	mkdir -p "$d"
	ip link set lo up
	ip link add v0 type veth peer name v1
	ip link set v0 up
	ip link set v1 up
	tc qdisc add dev v0 clsact
	awk -v n="$n" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "filter add dev v0 ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev v1 cookie 74637862656e6368%016x\n",
			       1 + int(i / 4000), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i
	}' >"$d/filters.batch"
	t0=$(date +%s%N)
	tc -batch "$d/filters.batch" || die "N=$n: tc -batch failed"
	tctime=$((($(date +%s%N) - t0) / 1000000))
	rm -f "$d/filters.batch"

	port=$(free_port)
	nport=$(free_port)
	while [ "$nport" = "$port" ]; do nport=$(free_port); done
	cat >"$d/tcx.yaml" <<YAML
interval: $interval
targets:
  - {dev: v0, parent: ingress}
http:
  listen: ["127.0.0.1:$port"]
YAML
	"$tcx" --config "$d/tcx.yaml" 2>"$d/tcx.err" &
	PIDS+=($!)
	wait_200 "http://127.0.0.1:$port/healthz" 120

	# The exact bytes of both variants, for nginx.
	curl -s --max-time 60 -D "$d/plain.hdr" -o "$d/metrics" "http://127.0.0.1:$port/metrics" ||
		die "N=$n: GET /metrics failed"
	curl -s --max-time 60 -H 'Accept-Encoding: gzip' -D "$d/gzip.hdr" -o "$d/metrics.gz" \
		"http://127.0.0.1:$port/metrics" || die "N=$n: GET /metrics (gzip) failed"
	grep -qi '^content-encoding: gzip' "$d/gzip.hdr" || die "N=$n: no gzip answer"
	rows=$(grep -c '^tc_action_bytes_total{' "$d/metrics" || true)
	[ "$rows" = "$n" ] || die "N=$n: /metrics has $rows action rows, expected $n"
	ctype=$(sed -n 's/^[Cc]ontent-[Tt]ype: *//p' "$d/plain.hdr" | tr -d '\r')

	mkdir -p "$d/nginx/logs" "$d/nginx/tmp"
	cat >"$d/nginx/nginx.conf" <<NGINX
daemon off;
master_process on;
user root;
worker_processes auto;
pid $d/nginx/nginx.pid;
error_log $d/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 1000000;
	keepalive_timeout 60s;
	client_body_temp_path $d/nginx/tmp/body;
	proxy_temp_path $d/nginx/tmp/proxy;
	fastcgi_temp_path $d/nginx/tmp/fastcgi;
	uwsgi_temp_path $d/nginx/tmp/uwsgi;
	scgi_temp_path $d/nginx/tmp/scgi;
	server {
		listen 127.0.0.1:$nport;
		location = /metrics {
			types { }
			default_type "$ctype";
			add_header Vary "Accept, Accept-Encoding";
			alias $d/metrics;
		}
		location = /metrics.gz {
			types { }
			default_type "$ctype";
			add_header Vary "Accept, Accept-Encoding";
			add_header Content-Encoding gzip;
			alias $d/metrics.gz;
		}
	}
}
NGINX
	nginx -t -q -p "$d/nginx" -e "$d/nginx/logs/error.log" -c "$d/nginx/nginx.conf" ||
		die "N=$n: nginx -t failed"
	nginx -p "$d/nginx" -e "$d/nginx/logs/error.log" -c "$d/nginx/nginx.conf" &
	PIDS+=($!)
	wait_200 "http://127.0.0.1:$nport/metrics" 20
	# nginx serves the same bytes.
	curl -s --max-time 60 -o "$d/nginx.body" "http://127.0.0.1:$nport/metrics"
	cmp -s "$d/metrics" "$d/nginx.body" || die "N=$n: nginx does not serve the daemon's bytes"
	curl -s --max-time 60 -o "$d/nginx.body.gz" "http://127.0.0.1:$nport/metrics.gz"
	cmp -s "$d/metrics.gz" "$d/nginx.body.gz" || die "N=$n: nginx does not serve the daemon's gzip bytes"
	rm -f "$d/nginx.body" "$d/nginx.body.gz"

	echo "http_bench: N=$n: $rows rows, text $(wc -c <"$d/metrics") bytes, gzip $(wc -c <"$d/metrics.gz") bytes; filters created in $tctime ms" >&2
	local e_plain n_plain e_gz n_gz
	e_plain=$(run_wrk exporter-plain "http://127.0.0.1:$port/metrics")
	n_plain=$(run_wrk nginx-plain "http://127.0.0.1:$nport/metrics")
	e_gz=$(run_wrk exporter-gzip "http://127.0.0.1:$port/metrics" -H 'Accept-Encoding: gzip')
	n_gz=$(run_wrk nginx-gzip "http://127.0.0.1:$nport/metrics.gz" -H 'Accept-Encoding: gzip')
	printf '%s plain %s %s %s\n' "$n" "$(wc -c <"$d/metrics")" "$e_plain" "$n_plain" >"$out/result-$n.txt"
	printf '%s gzip %s %s %s\n' "$n" "$(wc -c <"$d/metrics.gz")" "$e_gz" "$n_gz" >>"$out/result-$n.txt"
	# The daemon's memory after the runs.
	echo "http_bench: N=$n: daemon VmHWM $(awk '/^VmHWM/ { print $2 }' "/proc/${PIDS[0]}/status") kB" >&2
	cleanup
	rm -f "$d/metrics" "$d/metrics.gz"
}

if [ "${1:-}" = --netns-body ]; then
	n=$2 tcx=$3 out=$4 interval=$5 secs=$6 conns=$7
	trap cleanup EXIT
	netns_body
	exit 0
fi

[ $# -eq 1 ] || {
	echo "Usage: $0 BUILDDIR" >&2
	exit 2
}
[ "$(id -u)" = 0 ] || skip "must be run as root (network namespaces, TC filters)"
builddir=$(readlink -f "$1")
tcx=$builddir/tcexporter
rbench=$builddir/tests/bench/render_bench
[ -x "$tcx" ] || die "$tcx: not found or not executable (build first)"
[ -x "$rbench" ] || die "$rbench: not found or not executable (build first)"
for tool in wrk nginx curl tc ip unshare awk python3 timeout; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done
unshare -n true 2>/dev/null || skip "cannot create a network namespace (unshare -n)"
if ldd "$tcx" 2>/dev/null | grep -q 'lib[at]san\|libubsan'; then
	echo "http_bench: WARNING: $tcx is built with sanitizers: figures are not representative" >&2
fi
sizes=${TCX_HTTP_BENCH_SIZES:-1000 100000}
interval=${TCX_HTTP_BENCH_INTERVAL:-15s}
secs=${TCX_HTTP_BENCH_SECONDS:-10}
conns=${TCX_HTTP_BENCH_CONNS:-8}
out=${TCX_BENCH_OUT:-$(mktemp -d /tmp/tcx-http-bench.XXXXXX)}
mkdir -p "$out"
out=$(readlink -f "$out")
rm -f "$out"/result-*.txt
echo "http_bench: $(uname -sr), $(nproc) CPU(s), $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)," \
	"$(nginx -v 2>&1 | sed 's/.*: //'); interval $interval; output in $out" >&2

start=$SECONDS
for n in $sizes; do
	unshare -n -- bash "$self" --netns-body "$n" "$tcx" "$out" "$interval" "$secs" "$conns" ||
		die "N=$n: benchmark failed"
done
"$rbench" 100000 7 >"$out/render.txt" || die "render_bench failed"

{
	echo
	echo "== tcexporter HTTP benchmark: wrk -t2 -c$conns -d${secs}s, u32 + mirred + 16-byte cookie," \
		"daemon interval $interval; $(nproc) cores shared by wrk and the server =="
	printf '%-7s %-6s %11s %12s %10s %12s %10s %7s %s\n' rows variant body_bytes \
		exporter_rps exp_p99_ms nginx_rps ngx_p99_ms ratio "verdict (>= $TARGET_RATIO)"
	for n in $sizes; do cat "$out/result-$n.txt"; done | awk -v t="$TARGET_RATIO" '
		{
			r = $6 > 0 ? $4 / $6 : 0
			printf "%-7s %-6s %11d %12.1f %10.2f %12.1f %10.2f %7.2f %s\n",
			       $1, $2, $3, $4, $5, $6, $7, r, (r >= t ? "PASS" : "MISS")
		}'
	echo
	echo "== render_bench 100000 7 (ns per row; target <= $TARGET_NS for text and OpenMetrics) =="
	cat "$out/render.txt"
	awk -v t="$TARGET_NS" '
		$1 == "text" || $1 == "openmetrics" {
			for (i = 2; i <= NF; i++) if ($i ~ /^ns_per_row=/) v = substr($i, 12) + 0
			printf "verdict render %s ns/row <= %d: %s (%d)\n", $1, t, (v <= t ? "PASS" : "MISS"), v
		}' "$out/render.txt"
	echo "(total $((SECONDS - start)) s)"
} | tee "$out/summary.txt"
