#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Aggregation benchmark (issue #11, a report, not a test): `make
# bench-aggregate`, or
#   tests/bench/aggregate_bench.sh BUILDDIR [N]
# In a private network namespace: N u32 filters (default 100000) whose
# cookies ("tcxbench", the filter's number, then a 2-byte tenant and a 2-byte
# rule) map, through a `fields` decoder, to 1000 (tenant, rule) pairs. Then,
# in interleaved rounds (tests/bench/interleave.py), a collection as --once
# makes it (dump, parse, labels, then the text exposition), with the same
# configuration twice:
#   plain      no aggregation: N rows
#   aggregate  `aggregate: {by: [tenant, rule]}`: 1000 aggregates
# and the median CPU of each, their ratio (issue #11's goal: the aggregated
# collection at most 1.1 times the plain one), and the bytes of each body
# (text and OpenMetrics), and the peak RSS of each --once. Then render_bench N with TCX_BENCH_AGG=by and
# =none: the aggregation state's pass alone (the daemon's collector makes it
# after every collection), and the render of each, on a synthetic snapshot
# of the same shape. Exit status: 0 when it ran, 77 when it cannot run here,
# 1 when a step failed.
#
# Environment: TCX_BENCH_AGG_RUNS (rounds, default 7), TCX_BENCH_PER_PREF
# (default 4000).
set -euo pipefail

BENCH_TAG=bench-aggregate
srcdir=$(cd "$(dirname "$0")" && pwd)
self=$srcdir/$(basename "$0")
# shellcheck source=lib.sh
. "$srcdir/lib.sh"

netns_body() {
	local cfg_plain=$out/plain.yaml cfg_agg=$out/aggregate.yaml rows aggs
	bench_netns_setup
	awk -v n="$n" -v per="$per" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "filter add dev v0 ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev v1 cookie 74637862656e6368%08x%04x%04x\n",
			       1 + int(i / per), int(i / 65536) % 256, int(i / 256) % 256,
			       i % 256, i, int(i % 1000 / 100), i % 100
	}' > "$out/batch"
	echo "$BENCH_TAG: N=$n: creating $n u32 filters"
	tc -batch "$out/batch" || die "tc -batch failed"
	rm -f "$out/batch"
	cat > "$cfg_plain" << 'EOF'
targets: [{dev: v0, parent: ingress}]
labels: [tenant, rule]
decoders:
  - {type: fields, prefix: "74637862656e6368", length: 16,
     fields: [{bytes: 8}, {bytes: 4}, {label: tenant, bytes: 2}, {label: rule, bytes: 2}]}
EOF
	{
		cat "$cfg_plain"
		echo "aggregate: {by: [tenant, rule]}"
	} > "$cfg_agg"
	for c in plain aggregate; do
		"$tcx" --once --config "$out/$c.yaml" > "$out/$c.prom" || die "--once ($c) failed"
		"$tcx" --once --format openmetrics --config "$out/$c.yaml" > "$out/$c.om" ||
			die "--once ($c, OpenMetrics) failed"
	done
	rows=$(grep -c '^tc_action_bytes_total{' "$out/plain.prom" || true)
	aggs=$(grep -c '^tc_action_bytes_total{' "$out/aggregate.prom" || true)
	((rows == n)) || die "plain: $rows rows, expected $n"
	((aggs == 1000)) || die "aggregate: $aggs aggregates, expected 1000"
	for c in plain aggregate; do
		/usr/bin/time -f %M -o "$out/$c.rss" "$tcx" --once --config "$out/$c.yaml" > /dev/null ||
			die "--once ($c) failed"
	done
	python3 "$srcdir/interleave.py" "$runs" 2 "$out/once.raw" \
		plain "$tcx --once --config $cfg_plain" \
		aggregate "$tcx --once --config $cfg_agg" > "$out/once.txt" ||
		die "interleave failed"
}

main() {
	local builddir rbench
	(($# >= 1 && $# <= 2)) || {
		echo "Usage: $0 BUILDDIR [N]" >&2
		exit 2
	}
	bench_require tc ip unshare awk python3 /usr/bin/time
	builddir=$(readlink -f "$1")
	tcx=$builddir/tcexporter
	rbench=$builddir/tests/bench/render_bench
	bench_exe "$tcx"
	bench_exe "$rbench"
	n=${2:-100000}
	per=${TCX_BENCH_PER_PREF:-4000}
	bench_check_sizes N "$per" "$n"
	runs=${TCX_BENCH_AGG_RUNS:-7}
	out=$(mktemp -d "/tmp/$BENCH_TAG.XXXXXX")
	export n per runs tcx out
	unshare -n -- bash "$self" --netns-body || die "benchmark failed"

	echo "== N=$n rows, 1000 aggregates: --once, $runs interleaved rounds, medians =="
	awk '{ printf "  %-10s wall %.3f s  CPU %.3f s\n", $1, $2, $3; cpu[$1] = $3 }
		END { printf "  aggregate / plain CPU: %.3f (goal <= 1.1: %s)\n", cpu["aggregate"] / cpu["plain"],
			cpu["aggregate"] / cpu["plain"] <= 1.1 ? "PASS" : "MISS" }' "$out/once.txt"
	for c in plain aggregate; do
		printf "  %-10s body: text %d bytes, OpenMetrics %d bytes; --once peak RSS %d KiB\n" "$c" \
			"$(wc -c < "$out/$c.prom")" "$(wc -c < "$out/$c.om")" "$(tail -n 1 "$out/$c.rss")"
	done
	echo "== render_bench $n 7: synthetic snapshot, 1000 aggregates (CPU) =="
	TCX_BENCH_AGG=by "$rbench" "$n" 7 2 | sed 's/^/  aggregate: /'
	TCX_BENCH_AGG=none "$rbench" "$n" 7 2 | sed 's/^/  plain:     /'
	rm -rf "$out"
}

if [[ ${1-} == --netns-body ]]; then
	netns_body
else
	main "$@"
fi
