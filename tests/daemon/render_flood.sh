#!/bin/bash
# Clients that would make the daemon render for them. With 20,000 HTB
# classes (about 240,000 series), a collection every second and Prometheus
# scraping it (OpenMetrics + gzip: rendered ahead), the daemon's CPU over
# 12 s with Prometheus alone (the baseline), then with another address
#   - sending 20 HEAD requests a second across the four variants: the
#     collector thread's CPU stays within 20% of the baseline's, VmRSS
#     within 10%
#     (each HEAD marked its variant as asked, and all four were rendered
#     whole every interval: CPU 85 -> 110 ticks, VmRSS 17 -> 58 MB); every
#     HEAD gets 200, its variant's headers, no body;
#   - asking for a different variant every second, on 4 connections, as
#     fast as answers come (so that none is ever rendered ahead): the daemon's CPU stays within 2x the baseline's (every
#     GET was a render: 150-240 a second, 12x; with renders bounded, the
#     bodies rendered ahead it fetched again took 2.4-2.9x); it gets whole
#     bodies or 429 with a Retry-After, renders of its own
#     (http.renders_per_ip), and refusals for renders and for bytes.
# Prometheus's scrapes all get 200 throughout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc awk curl
in_netns TCXD_HEAD_FLOOD_INSIDE -n

daemon_setup
find_python
n=20000
veth v0 v1
tc qdisc add dev v0 root handle 1: htb
awk -v n="$n" 'BEGIN {
	for (i = 1; i <= n; i++)
		printf "class add dev v0 parent 1: classid 1:%x htb rate 1mbit\n", i
}' >"$WORK/classes.batch"
tc -batch "$WORK/classes.batch" || fail "tc -batch of $n classes failed"

read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
# The issue's measured setup: 20k HTB classes, about 13 series each (260k).
# The plans (7 more series a class, 400k in all) make each render 1.5x
# dearer against the same collection, and the budget of 2 renders on demand
# a collection then cost 2.32x Prometheus alone (190 vs 82 ticks): what the
# budget allows depends on that ratio; the issue's 2x holds at its size.
# The defaults (http.renders_per_ip: 1): with 2, 1.7-2.1x here, beside the
# bound whenever the machine was busy; with 1, 1.36-1.40x.
printf 'interval: 1s\ntargets:\n  - {dev: v0}\nfamilies: {plans: off}\nhttp: {listen: ["127.0.0.1:%s"]}\n' \
	"$port" >"$WORK/tcx.yaml"
# ASan keeps freed memory aside (its quarantine), which VmRSS would count.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 60 "$base/healthz"

clients=$here/render_flood.py
mem_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$TCX_PID/status"; }
# ticks STAT: user + system time of a stat file (proc(5)), in clock ticks.
ticks() { sed 's/.*) //' "$1" | awk '{ print $12 + $13 }'; }
cpu_ticks() { ticks "/proc/$TCX_PID/stat"; }
collector_ticks() { ticks "$collector/stat"; }

collector=
for t in /proc/"$TCX_PID"/task/*; do
	[ "$(cat "$t/comm")" = tcx-collector ] && collector=$t
done
[ -n "$collector" ] || fail "no thread named tcx-collector in the daemon"

bg_start scraper "$PYTHON" "$clients" scrape "$port" 60
scraper=$BG_PID
sleep 4 # Prometheus's variant rendered ahead: asked during two intervals

# phase NAME [ROLE SRC...]: 12 s with that client running besides the
# scraper; sets cpu (ticks) and rss (kB, at the end).
phase() {
	local name=$1 c0 k0 pid=
	shift
	c0=$(cpu_ticks)
	k0=$(collector_ticks)
	if [ $# -gt 0 ]; then
		bg_start "$name" "$PYTHON" "$clients" "$1" "$port" 12 "${@:2}"
		pid=$BG_PID
	fi
	sleep 12
	cpu=$(($(cpu_ticks) - c0))
	kcpu=$(($(collector_ticks) - k0))
	rss=$(mem_kb VmRSS)
	if [ -n "$pid" ]; then
		wait "$pid" || fail "$name: $(tail -n 3 "$WORK/$name.err")"
		note "$name: $(cat "$WORK/$name.out")"
	fi
	alive "$TCX_PID" tcx
	alive "$scraper" scraper
	note "$name: daemon CPU $cpu ticks in 12 s (collector $kcpu), VmRSS $rss kB"
}

phase baseline
base_cpu=$cpu base_kcpu=$kcpu base_rss=$rss
phase head head 127.0.0.3
# 20% and 2 ticks: with the machine busy beside the test (a VM and other
# tests), the collector's CPU moved by 15% (68 -> 78 ticks) with HEAD
# rendering nothing; the four variants rendered whole took 29% more (85 ->
# 110), and 3.4 times the memory, which the next check bounds tightly.
[ "$kcpu" -le $((base_kcpu * 12 / 10 + 2)) ] ||
	fail "a HEAD flood raised the collector's CPU from $base_kcpu to $kcpu ticks (more than 20%)"
# 10%, and 4 MB for the sanitizer build's allocator caches (the werror
# build's VmRSS moves by 0.2-1.4 MB; all four rendered whole took 40 MB)
[ "$rss" -le $((base_rss * 11 / 10 + 4096)) ] ||
	fail "a HEAD flood raised VmRSS from $base_rss to $rss kB (more than 10%)"
phase cycle cycle 127.0.0.4
[ "$cpu" -le $((base_cpu * 2)) ] ||
	fail "a client cycling the variants raised the daemon's CPU from $base_cpu to $cpu ticks (more than 2x)"
grep -q '"text 200"' "$WORK/cycle.out" ||
	fail "the cycling client had no render of its own: $(cat "$WORK/cycle.out")"
scrape "$WORK/self.txt" "$base/metrics" --interface 127.0.0.5
# refused REASON LOG: 127.0.0.4's refusals for REASON are counted and logged
# (LOG: the log line's cause, a regex).
refused() {
	local got
	got=$(metric_value "$WORK/self.txt" "tc_exporter_http_requests_refused_total{reason=\"$1\"}")
	[ "${got:-0}" -gt 0 ] ||
		fail "no refusal counted in tc_exporter_http_requests_refused_total{reason=\"$1\"}"
	[ -n "$(logged "127\\.0\\.0\\.4: 429, $2")" ] || fail "no refusal of 127.0.0.4 for $1 logged"
	note "refused ($1): $got"
}
refused render 'too many renders of /metrics for this address'
# The bodies rendered ahead it fetches again and again (Prometheus's
# variant, and any of its own its GETs made be rendered ahead) are bounded
# too: unbounded, 112-297 of them took the daemon's CPU to 2.4-2.9x.
refused bytes 'too many bytes of /metrics sent to this address'
