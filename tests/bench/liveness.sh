#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The cost of the action times (issue #25), on the host (a report, not a
# test): `make bench-liveness`, or
#   tests/bench/liveness.sh BUILDDIR
# with BUILDDIR/tcexporter and BUILDDIR/tests/bench/mnl_floor built.
#
# In a private network namespace (unshare -n; no traffic): N u32 filters
# with a cookie each (tests/bench/lib.sh; TCX_BENCH_LIVENESS_N, default
# 100000). u32 is dumped in full every collection: its times come with it,
# and a liveness pass adds no dump; what they cost is their decoding and
# their series (2 a row while unused: installed and last used). Variants:
#   off     `families: {liveness: off}` and `liveness_interval: 0`: the
#           times are decoded, not written;
#   nopass  the time families, `liveness_interval: 0`: no liveness pass;
#   on      the defaults, `liveness_interval` 4 intervals (as 60 s to 15 s);
#   base    TCX_BENCH_BASE_BIN, when set: a tcexporter from before the times
#           (git worktree add /tmp/base 328c730^), with the same
#           configuration as `on`.
# on / nopass is the cost of the liveness passes (issue #25's goal: at most
# 1.10; for flower, where a pass is a full dump more, tests/vm/bench.sh
# measures it); nopass / off that of the time series.
# Each round runs each variant's daemon (`interval: 2s`, HTTP on the
# namespace's loopback) for a first collection and then TCX_BENCH_LIVENESS_K
# (default 8) collections, one OpenMetrics+gzip scrape each as Prometheus
# makes it: its CPU (utime+stime of every thread) per collection over those.
# The variants' order rotates from round to round (TCX_BENCH_LIVENESS_ROUNDS,
# default 3); the medians are printed, with each variant's ratio to `off`
# and its CPU per row above `off`'s. Then --once in interleaved rounds
# (tests/bench/interleave.py): floor (mnl_floor), each variant.
#
# The goal is reported with PASS or MISS; the exit status is 0 when the
# benchmark ran, 77 when it cannot run here, 1 when a step failed.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
srcdir=$(dirname "$self")
BENCH_TAG=bench-liveness
# shellcheck source=tests/bench/lib.sh
. "$srcdir/lib.sh"

readonly GOAL=1.10

if [[ ${1:-} != --inside ]]; then
	builddir=${1:?usage: $0 BUILDDIR}
	bench_require curl gzip tc python3
	tcx=$builddir/tcexporter floor=$builddir/tests/bench/mnl_floor base=${TCX_BENCH_BASE_BIN:-}
	bench_exe "$tcx"
	bench_exe "$floor"
	[[ -z $base ]] || bench_exe "$base"
	bench_out_dir "$srcdir/out/liveness"
	exec unshare -n "$self" --inside "$tcx" "$floor" "$out" "$base"
fi
tcx=$2 floor=$3 out=$4 base=$5
n=${TCX_BENCH_LIVENESS_N:-100000}
k=${TCX_BENCH_LIVENESS_K:-8}
rounds=${TCX_BENCH_LIVENESS_ROUNDS:-3}
per=${TCX_BENCH_PER_PREF:-4000}
interval=2s interval_s=2 http_timeout=60
derr=$out/daemon.err
trap stop_daemon_on_exit EXIT

bench_netns_setup
bench_add_filters "$n" "$per" "$out/filters.batch"
printf 'targets:\n  - {dev: v0, parent: ingress}\n' > "$out/once.yaml"
bench_check_rows "$n" "$tcx" "$out/once.yaml" "$floor" "$out/once.prom"
grep -q '^tc_action_installed_timestamp_seconds{' "$out/once.prom" ||
	die "N=$n: --once printed no tc_action_installed_timestamp_seconds"

variants="off nopass on"
[[ -z $base ]] || variants="base off nopass on"
for v in off nopass on base; do
	{
		echo "interval: $interval"
		echo "targets:"
		echo "  - {dev: v0, parent: ingress}"
		echo "http:"
		echo "  listen: [\"127.0.0.1:$PORT\"]"
		case $v in
		off) printf 'liveness_interval: 0\nfamilies: {liveness: off}\n' ;;
		nopass) echo 'liveness_interval: 0' ;;
		on) echo "liveness_interval: $((4 * interval_s))s" ;;
		esac
	} > "$out/$v.yaml"
done

# The daemon's tc_exporter_collections_total in the last scraped body.
scraped_collections() {
	gzip -dc "$out/scrape-$n.gz" | awk '/^tc_exporter_collections_total / { c = $2 } END { print c + 0 }'
}

# run_variant V: CPU seconds per collection of V's daemon, appended to
# $out/cpu-V.txt.
run_variant() {
	local v=$1 bin=$tcx c0 c1 cpu0 cpu1
	[[ $v != base ]] || bin=$base
	tcx=$bin start_daemon "$out/$v.yaml" $((120 + n / 2000))
	scrape_om "$v: first scrape"
	c0=$(scraped_collections)
	cpu0=$(daemon_cpu)
	for ((i = 1; i <= k; i++)); do
		wait_next_collection
		scrape_om "$v: interval $i"
	done
	cpu1=$(daemon_cpu)
	c1=$(scraped_collections)
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" || die "$v: the daemon exited with $?"
	DAEMON_PID=
	((c1 > c0)) || die "$v: no collection counted"
	awk -v a="$cpu0" -v b="$cpu1" -v c=$((c1 - c0)) 'BEGIN { printf "%.4f\n", (b - a) / c }' >> "$out/cpu-$v.txt"
	echo "$BENCH_TAG: $v: $((c1 - c0)) collections, $(tail -n 1 "$out/cpu-$v.txt") s of CPU each"
}

set -- $variants
for ((r = 0; r < rounds; r++)); do
	for ((j = 0; j < $#; j++)); do
		idx=$(((r + j) % $# + 1))
		run_variant "${!idx}"
	done
done
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
off=$(median "$out/cpu-off.txt")

echo "$BENCH_TAG: --once, floor and variants, 7 interleaved rounds (+1 warm-up)"
once_args=(floor "$(printf '%q v0 ingress' "$floor")")
for v in $variants; do
	bin=$tcx
	[[ $v != base ]] || bin=$base
	once_args+=("once-$v" "$(printf '%q --once --config %q' "$bin" "$out/$v.yaml")")
done
python3 "$srcdir/interleave.py" 7 1 "$out/once.raw" "${once_args[@]}" > "$out/once.txt" ||
	die "the --once rounds failed"

echo
echo "N=$n u32 filters, daemon interval $interval, $k collections per run, $rounds rounds (medians)"
printf '%-6s %14s %10s %18s\n' variant "CPU/collection" "vs off" "above off, per row"
for v in $variants; do
	m=$(median "$out/cpu-$v.txt")
	printf '%-6s %12.1f ms %9.3fx %15.3f us\n' "$v" "$(calc 'm * 1000' m="$m")" \
		"$(calc 'm / o' m="$m" o="$off")" "$(calc '(m - o) * 1e6 / n' m="$m" o="$off" n="$n")"
done
on=$(median "$out/cpu-on.txt")
r=$(awk -v a="$on" -v b="$(median "$out/cpu-nopass.txt")" 'BEGIN { printf "%.3f", a / b }')
echo "the liveness passes, goal on / nopass <= $GOAL: ${r}x $(verdict "$r" '<=' "$GOAL")"
if [[ -n $base ]]; then
	echo "on / base (the times, all told): $(calc 'a / b' a="$on" b="$(median "$out/cpu-base.txt")")x"
fi
echo
echo "--once (median wall, CPU):"
awk '{ printf "  %-10s %8.1f ms %8.1f ms\n", $1, $2 * 1000, $3 * 1000 }' "$out/once.txt"
