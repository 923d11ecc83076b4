#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scale benchmark, the figures of issues #10, #17 and #26 (a report, not a test):
# `make bench-scale`, or
#   tests/bench/scale.sh BUILDDIR
# with BUILDDIR/tcexporter, BUILDDIR/tests/bench/mnl_floor and
# BUILDDIR/tests/bench/render_bench built.
#
# For every size N (TCX_BENCH_SCALE_N, default "10000 100000"; add 1000000
# for the 1M figures), in a private network namespace of its own (unshare
# -n; nothing is sent anywhere, the daemon listens on the namespace's own
# loopback): N u32 filters with a cookie each (tests/bench/lib.sh). Then:
#  1. floor, --once and tc, side by side: interleaved rounds
#     (tests/bench/interleave.py) of
#       floor     mnl_floor v0 ingress (one bare libmnl dump, see mnl_floor.c)
#       exporter  tcexporter --once --config CFG > /dev/null
#       tc        tc -s filter show dev v0 ingress > /dev/null
#     with the median wall and CPU (user+sys, of the process and the kernel
#     work it caused) of each.
#  2. the daemon, as Prometheus uses it: `tcexporter --config` with
#     `interval: TCX_BENCH_SCALE_INTERVAL` (default 5s) and HTTP on
#     127.0.0.1. After its first collection, for 10 intervals one scrape per
#     new collection as Prometheus makes it (OpenMetrics + gzip, with curl);
#     then one plain-text scrape (no Accept, no gzip); then 2 more intervals
#     of OpenMetrics + gzip scrapes.
#     Daemon CPU per collection: the delta of utime+stime (/proc/PID/stat,
#     every thread) over the 10 intervals, divided by the delta of the
#     daemon's own tc_exporter_collections_total (read from the scraped
#     bodies) over them; and its ratio to the floor's median CPU per dump
#     of step 1 (same N, same run).
#     Per row (issue #26): --once's and the daemon's CPU above the floor's,
#     over N, in us; and the daemon's user CPU above the floor's user CPU.
#     RSS: VmRSS and VmHWM from /proc/PID/status at the end (after the 2
#     intervals that follow the plain scrape); VmRSS also just before the
#     plain scrape.
#  3. render_bench 100000 7: rendering a synthetic 100k-row snapshot, in ns
#     (of CPU) per row: the label text build, once per snapshot, then the
#     render per variant from it, and each variant's body as the daemon
#     makes it (whole in memory, or gzip); the goal is for the render.
# With both 100000 and 1000000 in the sizes: whether daemon CPU per
# collection and VmRSS grow linearly from 100k to 1M within 15%, as the
# ratio (figure@1M / 10) / (figure@100k).
#
# The goals (issue #17's, and #10's that it keeps) are printed next to each
# figure, with PASS or MISS:
# informational, the exit status does not depend on them. It is 0 when the
# benchmark ran, 77 when it cannot run here (not root, a tool missing), and
# 1 when a step failed (tc, a dump, the daemon died or did not stop cleanly,
# a scrape failed or returned the wrong rows).
#
# Time: about 4 minutes for the default sizes, 8 more for 1M (of which 1
# to create the filters), on 2 loaded cores.
#
# Environment: TCX_BENCH_SCALE_N, TCX_BENCH_SCALE_INTERVAL (a duration in
# the config's syntax: 5s, 2s, 500ms), TCX_BENCH_SCALE_RUNS (rounds of step
# 1, default 11, 5 above 100k rows), TCX_BENCH_PER_PREF (default 4000),
# TCX_BENCH_OUT (output directory, default tests/bench/out/scale in the
# source tree, or a temporary one).
set -euo pipefail

readonly SCRAPES=10 AFTER_PLAIN=2
# The goals of issue #17 (and those of #10 that it keeps), at 100k rows
# unless said.
readonly GOAL_ONCE_FLOOR=1.8   # --once wall / floor wall, at most
readonly GOAL_ONCE_CPU=1.8     # --once CPU / floor CPU, at most
readonly GOAL_CPU_FLOOR=2.0    # daemon CPU per collection / floor CPU, at most
readonly GOAL_GZIP_MS=30       # gzip CPU per collection (render_bench), at most
readonly GOAL_PLAIN_HWM_MB=64  # VmHWM growth from one plain-text scrape at 1M, at most
readonly GOAL_RSS_10K=16       # MB of daemon RSS at 10k, at most
readonly GOAL_RSS_100K=64      # MB at 100k
readonly GOAL_RSS_1M=640       # MB at 1M
readonly GOAL_RENDER_NS=250    # ns per row per variant, at most
readonly GOAL_LINEAR=1.15      # (figure@1M / 10) / (figure@100k), at most
# Issue #26's, per row at 100k: CPU above the floor's, in us a row. The
# daemon's is given both ways, all its CPU and user space alone (against
# the floor's user CPU): the issue names both.
readonly GOAL_ONCE_US_ROW=0.55
readonly GOAL_DAEMON_US_ROW=0.70

self=$(readlink -f "${BASH_SOURCE[0]}")
srcdir=$(dirname "$self")
BENCH_TAG=bench-scale
# shellcheck source=tests/bench/lib.sh
. "$srcdir/lib.sh"

# ---- inside the namespace --------------------------------------------------

# Checks the last scraped body (N rows, # EOF) and prints the daemon's
# tc_exporter_collections_total in it.
scraped_collections() {
	local r rows c eof
	r=$(gzip -dc "$out/scrape-$n.gz" | awk '
		/^tc_action_bytes_total\{/ { rows++ }
		/^tc_exporter_collections_total / { c = $2 }
		{ last = $0 }
		END { printf "%d %s %s\n", rows, c == "" ? "-" : c, last == "# EOF" ? "eof" : "no-eof" }') ||
		die "N=$n: the scraped body does not decompress"
	read -r rows c eof <<< "$r"
	((rows == n)) || die "N=$n: the scraped body has $rows tc_action_bytes_total rows, expected $n"
	[[ $c != - ]] || die "N=$n: no tc_exporter_collections_total in the scraped body"
	[[ $eof == eof ]] || die "N=$n: the scraped OpenMetrics body does not end with # EOF"
	echo "$c"
}

netns_body() {
	local cfg=$out/once-$n.yaml dcfg=$out/daemon-$n.yaml res=$out/result-$n.txt
	local c0 c1 c2 cpu0 cpu1 cpu2 user0 user1 rss_pre hwm_pre rss hwm i plain code size
	derr=$out/daemon-$n.err
	trap stop_daemon_on_exit EXIT

	: > "$out/stale-$n.txt"
	bench_netns_setup
	bench_add_filters "$n" "$per" "$out/filters-$n.batch"
	printf 'targets:\n  - {dev: v0, parent: ingress}\n' > "$cfg"
	bench_check_rows "$n" "$tcx" "$cfg" "$floor" "$out/once-$n.prom"
	rm -f "$out/once-$n.prom"
	{
		echo "n=$n"
		echo "create_s=$BENCH_CREATE_S"
		echo "prefs=$BENCH_PREFS"
	} > "$res"

	# 1. Side by side.
	echo "$BENCH_TAG: N=$n: floor, --once and tc, $runs interleaved rounds (+$warmup warm-up)"
	python3 "$srcdir/interleave.py" "$runs" "$warmup" "$out/once-$n.raw" \
		floor "$(printf '%q v0 ingress' "$floor")" \
		exporter "$(printf '%q --once --config %q' "$tcx" "$cfg")" \
		tc 'tc -s filter show dev v0 ingress' > "$out/once-$n.txt" ||
		die "N=$n: the side-by-side run failed"
	awk '{ printf "%s_wall=%s\n%s_cpu=%s\n%s_user=%s\n", $1, $2, $1, $3, $1, $4 }' \
		"$out/once-$n.txt" >> "$res"
	echo "runs=$runs" >> "$res"

	# 2. The daemon.
	cat > "$dcfg" << YAML
interval: $interval
targets:
  - {dev: v0, parent: ingress}
http:
  listen: ["127.0.0.1:$PORT"]
YAML
	echo "$BENCH_TAG: N=$n: daemon, interval $interval; waiting for its first collection"
	start_daemon "$dcfg" $((120 + n / 2000))
	scrape_om "first scrape"
	c0=$(scraped_collections)
	cpu0=$(daemon_cpu)
	user0=$(daemon_cpu user)
	echo "$BENCH_TAG: N=$n: $SCRAPES intervals with one OpenMetrics+gzip scrape each"
	for ((i = 1; i <= SCRAPES; i++)); do
		wait_next_collection
		scrape_om "interval $i"
	done
	cpu1=$(daemon_cpu)
	user1=$(daemon_cpu user)
	c1=$(scraped_collections)
	rss_pre=$(daemon_mem VmRSS)
	hwm_pre=$(daemon_mem VmHWM)

	echo "$BENCH_TAG: N=$n: one plain-text scrape, then $AFTER_PLAIN more intervals"
	plain=$(curl -sS --max-time "$http_timeout" -D "$out/plain-$n.hdr" \
		-w '%{stderr}%{http_code} %{size_download}\n' "http://127.0.0.1:$PORT/metrics" \
		2> "$out/plain-$n.status" | grep -c '^tc_action_bytes_total{' || true)
	read -r code size < <(tail -n 1 "$out/plain-$n.status")
	[[ $code == 200 ]] || die "N=$n: plain-text scrape failed: $(cat "$out/plain-$n.status")"
	grep -qi '^content-type: *text/plain' "$out/plain-$n.hdr" || die "N=$n: plain-text scrape: not text/plain"
	! grep -qi '^content-encoding' "$out/plain-$n.hdr" || die "N=$n: plain-text scrape: encoded"
	((plain == n)) || die "N=$n: the plain-text body has $plain tc_action_bytes_total rows, expected $n"
	echo "plain_bytes=$size" >> "$res"
	for ((i = 1; i <= AFTER_PLAIN; i++)); do
		wait_next_collection
		scrape_om "interval $i after the plain scrape"
	done
	cpu2=$(daemon_cpu)
	c2=$(scraped_collections)
	rss=$(daemon_mem VmRSS)
	hwm=$(daemon_mem VmHWM)
	{
		echo "collections=$((c1 - c0))"
		echo "daemon_cpu=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.3f", b - a }')"
		echo "daemon_user=$(awk -v a="$user0" -v b="$user1" 'BEGIN { printf "%.3f", b - a }')"
		echo "collections_after=$((c2 - c1))"
		echo "daemon_cpu_after=$(awk -v a="$cpu1" -v b="$cpu2" 'BEGIN { printf "%.3f", b - a }')"
		echo "rss_pre_kb=$rss_pre"
		echo "hwm_pre_kb=$hwm_pre"
		echo "rss_kb=$rss"
		echo "hwm_kb=$hwm"
		echo "om_gz_bytes=$(wc -c < "$out/scrape-$n.gz")"
		echo "stale=$(wc -l < "$out/stale-$n.txt")"
	} >> "$res"
	((c1 - c0 == SCRAPES)) ||
		echo "$BENCH_TAG: N=$n: NOTE: $((c1 - c0)) collections during $SCRAPES observed intervals" >&2

	# It must stop cleanly too.
	kill -TERM "$DAEMON_PID"
	local rc=0
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	((rc == 0)) || die "N=$n: the daemon exited with status $rc on SIGTERM; its stderr: $(tail -n 20 "$derr")"
	rm -f "$out/scrape-$n.gz"
}

# ---- the report ------------------------------------------------------------

# get N KEY: a figure of result-N.txt.
get() {
	sed -n "s/^$2=//p" "$out/result-$1.txt"
}

# per_row FIGURE VALUE GOAL: a figure in us a row, its goal at 100k.
per_row() {
	if ((n == 100000)); then
		row "$1, per row" "$2 us" "<= $3 us" "$(verdict "$2" '<=' "$3")"
	else
		row "$1, per row" "$2 us" "(at 100k: <= $3 us)"
	fi
}

report_size() {
	local n=$1 fw fc ew ec tw tc_ r1 r2 dcpu cpc r3 rss hwm rssmb goal
	fw=$(get "$n" floor_wall) fc=$(get "$n" floor_cpu)
	ew=$(get "$n" exporter_wall) ec=$(get "$n" exporter_cpu)
	tw=$(get "$n" tc_wall) tc_=$(get "$n" tc_cpu)
	echo
	echo "== N=$n: u32 + mirred + 16-byte cookie, $per per pref ($(get "$n" prefs) prefs," \
		"created in $(get "$n" create_s) s); medians of $(get "$n" runs) interleaved rounds =="
	row "figure" "value" "goal" "verdict"
	row "floor (bare libmnl dump): wall" "$(calc 'x * 1000' x="$fw") ms"
	row "floor: CPU (user+sys)" "$(calc 'x * 1000' x="$fc") ms"
	row "tcexporter --once: wall" "$(calc 'x * 1000' x="$ew") ms"
	row "tcexporter --once: CPU (user+sys)" "$(calc 'x * 1000' x="$ec") ms"
	row "tc -s filter show: wall" "$(calc 'x * 1000' x="$tw") ms"
	row "tc -s filter show: CPU (user+sys)" "$(calc 'x * 1000' x="$tc_") ms"
	r1=$(calc 'e / f' e="$ew" f="$fw")
	r2=$(calc 't / e' t="$tw" e="$ew")
	r4=$(calc 'e / f' e="$ec" f="$fc")
	if ((n == 100000)); then
		row "--once wall / floor wall" "$r1" "<= $GOAL_ONCE_FLOOR" "$(verdict "$r1" '<=' "$GOAL_ONCE_FLOOR")"
		row "--once CPU / floor CPU" "$r4" "<= $GOAL_ONCE_CPU" "$(verdict "$r4" '<=' "$GOAL_ONCE_CPU")"
	else
		row "--once wall / floor wall" "$r1" "(at 100k: <= $GOAL_ONCE_FLOOR)"
		row "--once CPU / floor CPU" "$r4" "(at 100k: <= $GOAL_ONCE_CPU)"
	fi
	row "tc wall / --once wall" "$r2"
	row "tc CPU / --once CPU" "$(calc 't / e' t="$tc_" e="$ec")"
	dcpu=$(get "$n" daemon_cpu)
	cpc=$(awk -v c="$dcpu" -v k="$(get "$n" collections)" 'BEGIN { printf "%.4f", c / k }')
	echo "cpc=$cpc" >> "$out/result-$n.txt"
	row "daemon CPU per collection" "$(calc 'x * 1000' x="$cpc") ms" \
		"($dcpu s / $(get "$n" collections) collections)"
	r3=$(calc 'c / f' c="$cpc" f="$fc")
	if ((n == 100000)); then
		row "daemon CPU per collection / floor CPU" "$r3" "<= $GOAL_CPU_FLOOR" "$(verdict "$r3" '<=' "$GOAL_CPU_FLOOR")"
	else
		row "daemon CPU per collection / floor CPU" "$r3" "(at 100k: <= $GOAL_CPU_FLOOR)"
	fi
	per_row "--once CPU above the floor's" "$(calc '(e - f) * 1e6 / n' e="$ec" f="$fc" n="$n")" \
		"$GOAL_ONCE_US_ROW"
	per_row "daemon CPU above the floor's" "$(calc '(c - f) * 1e6 / n' c="$cpc" f="$fc" n="$n")" \
		"$GOAL_DAEMON_US_ROW"
	per_row "daemon user CPU above the floor's user CPU" \
		"$(calc '(u / k - f) * 1e6 / n' u="$(get "$n" daemon_user)" k="$(get "$n" collections)" \
			f="$(get "$n" floor_user)" n="$n")" "$GOAL_DAEMON_US_ROW"
	row "  same, 2 intervals after the plain scrape" \
		"$(calc 'c / k * 1000' c="$(get "$n" daemon_cpu_after)" k="$(get "$n" collections_after)") ms"
	rss=$(get "$n" rss_kb) hwm=$(get "$n" hwm_kb)
	rssmb=$(calc 'k / 1024' k="$rss")
	case $n in
		10000) goal=$GOAL_RSS_10K ;;
		100000) goal=$GOAL_RSS_100K ;;
		1000000) goal=$GOAL_RSS_1M ;;
		*) goal= ;;
	esac
	if [[ -n $goal ]]; then
		row "daemon VmRSS at the end" "$rssmb MB" "<= $goal MB" "$(verdict "$rssmb" '<=' "$goal")"
	else
		row "daemon VmRSS at the end" "$rssmb MB"
	fi
	row "  per action row" "$(calc 'k * 1024 / n' k="$rss" n="$n") bytes"
	row "daemon VmHWM at the end" "$(calc 'k / 1024' k="$hwm") MB"
	row "daemon VmRSS before the plain scrape" "$(calc 'k / 1024' k="$(get "$n" rss_pre_kb)") MB"
	row "daemon VmHWM before the plain scrape" "$(calc 'k / 1024' k="$(get "$n" hwm_pre_kb)") MB"
	r5=$(calc '(a - b) / 1024' a="$hwm" b="$(get "$n" hwm_pre_kb)")
	if ((n == 1000000)); then
		row "VmHWM growth from the plain scrape" "$r5 MB" "<= $GOAL_PLAIN_HWM_MB MB" \
			"$(verdict "$r5" '<=' "$GOAL_PLAIN_HWM_MB")"
	else
		row "VmHWM growth from the plain scrape" "$r5 MB" "(at 1M: <= $GOAL_PLAIN_HWM_MB MB)"
	fi
	row "/healthz polls answered 503 (stale)" "$(get "$n" stale)" "(collection > 3 intervals)"
	row "body sizes: plain text, OpenMetrics+gzip" \
		"$(calc 'b / 1048576' b="$(get "$n" plain_bytes)") MB, $(calc 'b / 1048576' b="$(get "$n" om_gz_bytes)") MB"
}

report() {
	local n r
	echo
	echo "== tcexporter scale benchmark (issues #10, #17, #26): $(uname -sr), $(nproc) CPU(s);" \
		"load average at start: $load0, at end: $(cut -d' ' -f1-3 /proc/loadavg) =="
	echo "Daemon: interval $interval; after its first collection, $SCRAPES intervals with one"
	echo "OpenMetrics+gzip scrape each (CPU per collection: utime+stime from /proc/PID/stat over"
	echo "them / delta of its tc_exporter_collections_total), then 1 plain-text scrape, then"
	echo "$AFTER_PLAIN more intervals; VmRSS and VmHWM from /proc/PID/status read at the end."
	for n in $sizes; do
		report_size "$n"
	done
	if [[ -f $out/result-100000.txt && -f $out/result-1000000.txt ]]; then
		echo
		echo "== growth from 100k to 1M rows: (figure@1M / 10) / (figure@100k) =="
		row "figure" "ratio" "goal" "verdict"
		r=$(calc 'a / 10 / b' a="$(get 1000000 cpc)" b="$(get 100000 cpc)")
		row "daemon CPU per collection" "$r" "<= $GOAL_LINEAR" "$(verdict "$r" '<=' "$GOAL_LINEAR")"
		r=$(calc 'a / 10 / b' a="$(get 1000000 rss_kb)" b="$(get 100000 rss_kb)")
		row "daemon VmRSS at the end" "$r" "<= $GOAL_LINEAR" "$(verdict "$r" '<=' "$GOAL_LINEAR")"
	fi
	echo
	echo "== render_bench 100000 7: render from shared label text, ns per row per variant =="
	awk -v g="$GOAL_RENDER_NS" '
		NR == 1 { next }
		{
			for (i = 2; i <= NF; i++) if ($i ~ /^ns_per_row=/) v = substr($i, 12) + 0
			if ($1 == "label")
				printf "  %-48s %-22s %s\n", "label text build, once per snapshot",
				       v " ns", "(CPU)"
			else if ($2 == "render")
				printf "  %-48s %-22s %-26s %s\n", $1 " render (CPU)", v " ns",
				       "<= " g " ns", v <= g ? "PASS" : "MISS"
			else
				printf "  %-48s %-22s %s\n", $1 " body (CPU)", v " ns",
				       $1 ~ /gzip/ ? "(includes gzip)" : "(in memory, page faults)"
		}' "$out/render.txt"
	# What gzip adds to a collection: Prometheus's body (OpenMetrics, gzip)
	# made whole, less its render alone.
	awk -v g="$GOAL_GZIP_MS" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^rows=/) rows = substr($i, 6) + 0; next }
		{ for (i = 2; i <= NF; i++) if ($i ~ /^ns_per_row=/) v = substr($i, 12) + 0 }
		$1 == "openmetrics" && $2 == "render" { r = v }
		$1 == "openmetrics+gzip" { z = v }
		END {
			ms = (z - r) * rows / 1e6
			printf "  %-48s %-22s %-26s %s\n", "gzip per collection (om+gzip body - om render)",
			       sprintf("%.1f ms", ms), "<= " g " ms", ms <= g ? "PASS" : "MISS"
		}' "$out/render.txt"
	echo "(took $((SECONDS - start)) s; verdicts are informational; details in $out)"
}

main() {
	local builddir n rbench
	if (($# != 1)); then
		echo "Usage: $0 BUILDDIR" >&2
		exit 2
	fi
	bench_require tc ip unshare awk python3 curl gzip getconf
	builddir=$(readlink -f "$1")
	tcx=$builddir/tcexporter
	floor=$builddir/tests/bench/mnl_floor
	rbench=$builddir/tests/bench/render_bench
	bench_exe "$tcx"
	bench_exe "$floor"
	bench_exe "$rbench"

	sizes=${TCX_BENCH_SCALE_N:-10000 100000}
	per=${TCX_BENCH_PER_PREF:-4000}
	# shellcheck disable=SC2086 # a list of sizes
	bench_check_sizes TCX_BENCH_SCALE_N "$per" $sizes
	interval=${TCX_BENCH_SCALE_INTERVAL:-5s}
	interval_s=$(awk -v d="$interval" 'BEGIN {
		if (d ~ /^[0-9]+(\.[0-9]+)?ms$/) s = substr(d, 1, length(d) - 2) / 1000
		else if (d ~ /^[0-9]+(\.[0-9]+)?s$/) s = substr(d, 1, length(d) - 1) + 0
		else exit 1
		printf "%g", s }') || die "TCX_BENCH_SCALE_INTERVAL: '$interval' is not a duration such as 5s or 500ms"
	awk -v s="$interval_s" 'BEGIN { exit !(s >= 1) }' ||
		die "TCX_BENCH_SCALE_INTERVAL: $interval is too short to tell the collections apart (at least 1s)"
	if [[ -n ${TCX_BENCH_SCALE_RUNS:-} ]]; then
		[[ $TCX_BENCH_SCALE_RUNS =~ ^[1-9][0-9]*$ ]] ||
			die "TCX_BENCH_SCALE_RUNS must be a positive integer, not '$TCX_BENCH_SCALE_RUNS'"
	fi

	bench_out_dir "$srcdir/out/scale"
	rm -f "$out"/result-*.txt
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "$BENCH_TAG: $(uname -sr), $(nproc) CPU(s), load average $load0; sizes $sizes; output in $out"

	start=$SECONDS
	for n in $sizes; do
		if ((n > 100000)); then
			runs=${TCX_BENCH_SCALE_RUNS:-5} warmup=1
		else
			runs=${TCX_BENCH_SCALE_RUNS:-11} warmup=2
		fi
		http_timeout=$((60 + n / 2000))
		export n tcx floor out per runs warmup interval interval_s http_timeout
		unshare -n -- bash "$self" --netns-body || die "N=$n: benchmark failed"
	done
	echo "$BENCH_TAG: render_bench 100000 7"
	"$rbench" 100000 7 > "$out/render.txt" || die "render_bench failed"
	report | tee "$out/summary.txt"
}

if [[ ${1-} == --netns-body ]]; then
	netns_body
else
	main "$@"
fi
