#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Qdisc and class benchmark, the figures of issue #16 (a report, not a
# test): `make bench-qdisc`, or
#   tests/bench/qdisc.sh BUILDDIR
# with BUILDDIR/tcexporter and BUILDDIR/tests/bench/mnl_floor built.
#
# In a private network namespace (unshare -n; nothing is sent anywhere, the
# daemon listens on the namespace's own loopback), the LibreQoS shape on v0
# (tests/bench/lib.sh makes v0/v1): an HTB root 1: with one class 1:1, SITES
# site classes under it, and CLASSES leaf classes spread over the sites, each
# with a LEAF leaf qdisc: htb (default), a qdisc that takes filters and
# holds none, as fq_codel or cake leaves (which the host kernel lacks:
# tests/vm/bench.sh), or pfifo, which takes none. On v1's ingress, FILTERS
# u32 filters with cookies.
#  1. floor, --once and tc, side by side: interleaved rounds
#     (tests/bench/interleave.py) of
#       floor     mnl_floor --qdisc-class v0 (one bare libmnl qdisc dump of
#                 the namespace and one class dump of v0, see mnl_floor.c)
#       exporter  tcexporter --once --config {dev: v0} > /dev/null
#       tc        tc -s class show dev v0; tc -s qdisc show dev v0
#     with the median wall and CPU (user+sys, of the process and the kernel
#     work it caused) of each.
#  2. the daemon with HTTP on 127.0.0.1 and `interval: INTERVAL`, one
#     OpenMetrics+gzip scrape per collection, in three configurations:
#       filters  {dev: v1, parent: ingress}: the FILTERS filters alone
#       classes  {dev: v0}: the qdiscs and classes alone
#       both     {all: true}: both, in one pass
#     in ROUNDS rounds, each running every configuration for WINDOW
#     collections in a rotated order. CPU per collection: the delta of
#     utime+stime over the window / the delta of tc_exporter_collections_total.
#     The figure: both / (filters + classes), from the medians. Issue #26's:
#     a fourth configuration, classes-quiet, the classes alone with no scrape
#     in its windows (the collections alone, nothing rendered), against the
#     floor's CPU of step 1, and the daemon's peak RSS (VmHWM). The windows start after the daemon's
#     first collection, a sweep (units.c): one collection of
#     sweep_interval's (5 min) asks every leaf, as --once does.
#
# The goals of issue #16 are printed next to each figure, with PASS or
# MISS: informational, the exit status does not depend on them. It is 0
# when the benchmark ran, 77 when it cannot run here (not root, a tool
# missing), and 1 when a step failed.
#
# Time: about 3 minutes with the defaults, on 2 loaded cores.
#
# Environment: TCX_BENCH_QDISC_CLASSES (default 10000), TCX_BENCH_QDISC_SITES
# (100), TCX_BENCH_QDISC_FILTERS (100000), TCX_BENCH_QDISC_RUNS (rounds of
# step 1, default 11), TCX_BENCH_QDISC_ROUNDS (3), TCX_BENCH_QDISC_WINDOW (4),
# TCX_BENCH_QDISC_INTERVAL (2s), TCX_BENCH_QDISC_LEAF (htb or pfifo),
# TCX_BENCH_PER_PREF (4000), TCX_BENCH_OUT
# (output directory, default tests/bench/out/qdisc in the source tree, or a
# temporary one).
set -euo pipefail

# The goals of issues #16 and #26.
readonly GOAL_ONCE_FLOOR=1.5 # --once wall / floor wall, at most
readonly GOAL_TC_ONCE=2.0    # tc wall / --once wall, at least
readonly GOAL_BOTH_SUM=1.1   # daemon CPU: both / (filters + classes), at most
readonly GOAL_DAEMON_FLOOR=1.3 # daemon CPU per collection (classes) / floor CPU, htb leaves
readonly GOAL_ONCE_CPU=2.5     # --once CPU / floor CPU, htb leaves
readonly GOAL_RSS_MB=64        # the daemon's peak RSS

self=$(readlink -f "${BASH_SOURCE[0]}")
srcdir=$(dirname "$self")
BENCH_TAG=bench-qdisc
# shellcheck source=tests/bench/lib.sh
. "$srcdir/lib.sh"

# ---- inside the namespace --------------------------------------------------

# The HTB tree on v0, with tc -batch.
make_tree() {
	local batch=$out/tree.batch t0 t1
	awk -v classes="$classes" -v sites="$sites" -v leaf="$leaf" 'BEGIN {
		print "qdisc add dev v0 root handle 1: htb default 2"
		print "class add dev v0 parent 1: classid 1:1 htb rate 10gbit"
		for (s = 0; s < sites; s++)
			printf "class add dev v0 parent 1:1 classid 1:%x htb rate 100mbit ceil 1gbit\n", 16 + s
		for (i = 0; i < classes; i++) {
			printf "class add dev v0 parent 1:%x classid 1:%x htb rate 1mbit ceil 10mbit\n",
			       16 + i % sites, 65536 - classes + i
			printf "qdisc add dev v0 parent 1:%x handle %x: %s\n",
			       65536 - classes + i, 2 + i, leaf == "pfifo" ? "pfifo limit 100" : leaf
		}
	}' > "$batch"
	echo "$BENCH_TAG: creating 1 + $sites + $classes HTB classes with $classes $leaf leaves on v0"
	t0=$(date +%s%N)
	tc -batch "$batch" 2> "$out/tree.err" || die "tc -batch of the HTB tree failed: $(grep -v quantum "$out/tree.err" | head -n 5)"
	t1=$(date +%s%N)
	echo "tree_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" >> "$res"
	rm -f "$batch"
}

# Dies unless --once (CFG) prints every class and qdisc of v0 and the floor
# sees them all.
check_rows() {
	local cfg=$1 prom=$out/once.prom rc=0 cl qd msgs
	"$tcx" --once --config "$cfg" > "$prom" || rc=$?
	((rc == 0)) || die "tcexporter --once exited with $rc"
	cl=$(grep -c '^tc_class_bytes_total{device="v0"' "$prom" || true)
	qd=$(grep -c '^tc_qdisc_bytes_total{device="v0"' "$prom" || true)
	((cl == classes + sites + 1)) || die "--once printed $cl v0 classes, expected $((classes + sites + 1)) (see $prom)"
	((qd == classes + 1)) || die "--once printed $qd v0 qdiscs, expected $((classes + 1)) (see $prom)"
	msgs=$("$floor" --qdisc-class v0 2>&1 > /dev/null) || die "mnl_floor failed: $msgs"
	((msgs >= cl + qd)) || die "mnl_floor saw $msgs messages, expected at least $((cl + qd))"
	echo "$BENCH_TAG: --once printed $cl classes and $qd qdiscs of v0 ($(wc -c < "$prom") bytes);" \
		"the floor saw $msgs messages"
	rm -f "$prom"
}

# The daemon's tc_exporter_collections_total in the last scrape.
scraped_collections() {
	local c
	c=$(gzip -dc "$out/scrape-$n.gz" | awk '/^tc_exporter_collections_total / { c = $2 } END { print c }') ||
		die "$n: the scraped body does not decompress"
	[[ -n $c ]] || die "$n: no tc_exporter_collections_total in the scraped body"
	echo "$c"
}

# daemon_window NAME: runs the daemon with config NAME for WINDOW
# collections; appends "NAME cpu_per_collection" to $out/daemon.raw.
daemon_window() {
	local name=$1 dcfg=$out/daemon-$1.yaml c0 c1 cpu0 cpu1 i k rc=0
	n=$name derr=$out/daemon-$name.err
	start_daemon "$dcfg" 120
	scrape_om "first scrape"
	c0=$(scraped_collections)
	if [[ $name == *-quiet ]]; then
		# No scrape in the window: the collections alone. The first
		# scrape's format is rendered ahead by the next collection only.
		wait_next_collection
		wait_next_collection
		cpu0=$(daemon_cpu)
		for ((i = 1; i <= window; i++)); do
			wait_next_collection
		done
		cpu1=$(daemon_cpu)
		k=$window
	else
		cpu0=$(daemon_cpu)
		for ((i = 1; i <= window; i++)); do
			wait_next_collection
			scrape_om "collection $i"
		done
		cpu1=$(daemon_cpu)
		c1=$(scraped_collections)
		((c1 > c0)) || die "$name: no collection counted in the window"
		k=$((c1 - c0))
	fi
	awk -v n="$name" -v a="$cpu0" -v b="$cpu1" -v k="$k" \
		'BEGIN { printf "%s %.4f\n", n, (b - a) / k }' >> "$out/daemon.raw"
	echo "$name $(daemon_mem VmHWM)" >> "$out/daemon-rss.raw"
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" || rc=$?
	DAEMON_PID=
	((rc == 0)) || die "$name: the daemon exited with status $rc on SIGTERM: $(tail -n 5 "$derr")"
	rm -f "$out/scrape-$name.gz"
}

netns_body() {
	local cfg=$out/once.yaml name r k names=(filters classes both classes-quiet)
	res=$out/result.txt
	trap stop_daemon_on_exit EXIT
	: > "$res"
	: > "$out/daemon.raw"
	: > "$out/daemon-rss.raw"
	: > "$out/stale-filters.txt"
	: > "$out/stale-classes.txt"
	: > "$out/stale-both.txt"
	: > "$out/stale-classes-quiet.txt"
	bench_netns_setup
	tc qdisc del dev v0 clsact
	make_tree
	printf 'targets:\n  - {dev: v0}\n' > "$cfg"
	check_rows "$cfg"

	# 1. Side by side.
	echo "$BENCH_TAG: floor, --once and tc, $runs interleaved rounds (+2 warm-up)"
	python3 "$srcdir/interleave.py" "$runs" 2 "$out/once.raw" \
		floor "$(printf '%q --qdisc-class v0' "$floor")" \
		exporter "$(printf '%q --once --config %q' "$tcx" "$cfg")" \
		tc "sh -c 'tc -s class show dev v0; tc -s qdisc show dev v0'" > "$out/once.txt" ||
		die "the side-by-side run failed"
	awk '{ printf "%s_wall=%s\n%s_cpu=%s\n", $1, $2, $1, $3 }' "$out/once.txt" >> "$res"

	# 2. The daemon.
	tc qdisc add dev v1 clsact
	n=$filters
	bench_add_filters "$filters" "$per" "$out/filters.batch" v1
	for name in "${names[@]}"; do
		case $name in
			filters) echo "targets: [{dev: v1, parent: ingress}]" ;;
			classes | classes-quiet) echo "targets: [{dev: v0}]" ;;
			both) echo "targets: [{all: true}]" ;;
		esac > "$out/daemon-$name.yaml"
		printf 'interval: %s\nhttp:\n  listen: ["127.0.0.1:%s"]\n' "$interval" "$PORT" \
			>> "$out/daemon-$name.yaml"
	done
	for ((r = 0; r < rounds; r++)); do
		for ((k = 0; k < ${#names[@]}; k++)); do
			name=${names[(r + k) % ${#names[@]}]}
			echo "$BENCH_TAG: round $((r + 1))/$rounds: daemon, $name, $window collections"
			daemon_window "$name"
		done
	done
}

# ---- the report ------------------------------------------------------------

get() {
	sed -n "s/^$1=//p" "$out/result.txt"
}

# The median CPU per collection of configuration NAME.
daemon_median() {
	awk -v n="$1" '$1 == n { print $2 }' "$out/daemon.raw" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

report() {
	local fw fc ew ec tw tc_ r1 r2 df dc db dq r3 r4 r5 rss
	fw=$(get floor_wall) fc=$(get floor_cpu)
	ew=$(get exporter_wall) ec=$(get exporter_cpu)
	tw=$(get tc_wall) tc_=$(get tc_cpu)
	echo
	echo "== tcexporter qdisc and class benchmark (issue #16): $(uname -sr), $(nproc) CPU(s);" \
		"load average at start: $load0, at end: $(cut -d' ' -f1-3 /proc/loadavg) =="
	echo "v0: HTB 1: > 1:1 > $sites sites > $classes leaf classes with $leaf leaves (tree made in $(get tree_s) s)"
	echo "-- 1. medians of $runs interleaved rounds"
	row "figure" "value" "goal (issue #16)" "verdict"
	row "floor (qdisc + class dump): wall" "$(calc 'x * 1000' x="$fw") ms"
	row "floor: CPU (user+sys)" "$(calc 'x * 1000' x="$fc") ms"
	row "tcexporter --once: wall" "$(calc 'x * 1000' x="$ew") ms"
	row "tcexporter --once: CPU (user+sys)" "$(calc 'x * 1000' x="$ec") ms"
	row "tc -s class show + tc -s qdisc show: wall" "$(calc 'x * 1000' x="$tw") ms"
	row "tc: CPU (user+sys)" "$(calc 'x * 1000' x="$tc_") ms"
	r1=$(calc 'e / f' e="$ew" f="$fw")
	r2=$(calc 't / e' t="$tw" e="$ew")
	row "--once wall / floor wall" "$r1" "<= $GOAL_ONCE_FLOOR" "$(verdict "$r1" '<=' "$GOAL_ONCE_FLOOR")"
	row "tc wall / --once wall" "$r2" ">= $GOAL_TC_ONCE" "$(verdict "$r2" '>=' "$GOAL_TC_ONCE")"
	r4=$(calc 'e / f' e="$ec" f="$fc")
	if [[ $leaf == htb ]]; then
		row "--once CPU / floor CPU" "$r4" "<= $GOAL_ONCE_CPU (#26)" "$(verdict "$r4" '<=' "$GOAL_ONCE_CPU")"
	else
		row "--once CPU / floor CPU" "$r4" "(wall above is the goal)"
	fi
	row "tc CPU / --once CPU" "$(calc 't / e' t="$tc_" e="$ec")" "(wall above is the goal)"
	df=$(daemon_median filters) dc=$(daemon_median classes) db=$(daemon_median both)
	echo "-- 2. daemon CPU per collection, interval $interval, one OpenMetrics+gzip scrape each;"
	echo "   medians of $rounds windows of $window collections per configuration"
	row "$filters filters on v1 ingress alone" "$(calc 'x * 1000' x="$df") ms"
	row "the qdiscs and classes of v0 alone" "$(calc 'x * 1000' x="$dc") ms"
	row "both, in one pass (all: true)" "$(calc 'x * 1000' x="$db") ms"
	r3=$(calc 'b / (f + c)' b="$db" f="$df" c="$dc")
	row "both / (filters + classes)" "$r3" "<= $GOAL_BOTH_SUM" "$(verdict "$r3" '<=' "$GOAL_BOTH_SUM")"
	dq=$(daemon_median classes-quiet)
	row "the qdiscs and classes of v0, no scrape" "$(calc 'x * 1000' x="$dq") ms"
	r5=$(calc 'c / f' c="$dq" f="$fc")
	row "classes, no scrape / floor CPU (step 1)" "$r5" "<= $GOAL_DAEMON_FLOOR (#26)" \
		"$(verdict "$r5" '<=' "$GOAL_DAEMON_FLOOR")"
	rss=$(awk '$1 == "classes" && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }' "$out/daemon-rss.raw")
	row "the daemon's peak RSS, classes alone" "$rss MB" "<= $GOAL_RSS_MB (#26)" \
		"$(verdict "$rss" '<=' "$GOAL_RSS_MB")"
	echo "(took $((SECONDS - start)) s; verdicts are informational; details in $out)"
}

main() {
	local builddir
	if (($# != 1)); then
		echo "Usage: $0 BUILDDIR" >&2
		exit 2
	fi
	bench_require tc ip unshare awk python3 curl gzip getconf
	builddir=$(readlink -f "$1")
	tcx=$builddir/tcexporter
	floor=$builddir/tests/bench/mnl_floor
	bench_exe "$tcx"
	bench_exe "$floor"
	classes=${TCX_BENCH_QDISC_CLASSES:-10000}
	sites=${TCX_BENCH_QDISC_SITES:-100}
	filters=${TCX_BENCH_QDISC_FILTERS:-100000}
	runs=${TCX_BENCH_QDISC_RUNS:-11}
	rounds=${TCX_BENCH_QDISC_ROUNDS:-3}
	window=${TCX_BENCH_QDISC_WINDOW:-4}
	per=${TCX_BENCH_PER_PREF:-4000}
	interval=${TCX_BENCH_QDISC_INTERVAL:-2s}
	leaf=${TCX_BENCH_QDISC_LEAF:-htb}
	[[ $leaf == htb || $leaf == pfifo ]] || die "TCX_BENCH_QDISC_LEAF: '$leaf' is neither htb nor pfifo"
	local v
	for v in classes sites filters runs rounds window; do
		[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "the number of $v must be a positive integer, not '${!v}'"
	done
	((classes + sites < 65000)) || die "at most 65000 classes and sites (16-bit class ids)"
	bench_check_sizes TCX_BENCH_QDISC_FILTERS "$per" "$filters"
	[[ $interval =~ ^[1-9][0-9]*s$ ]] || die "TCX_BENCH_QDISC_INTERVAL: '$interval' is not a whole number of seconds such as 2s"
	interval_s=${interval%s}
	http_timeout=$((60 + filters / 2000))

	bench_out_dir "$srcdir/out/qdisc"
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	echo "$BENCH_TAG: $(uname -sr), $(nproc) CPU(s), load average $load0; output in $out"
	start=$SECONDS
	export tcx floor out classes sites filters runs rounds window per interval interval_s http_timeout leaf
	unshare -n -- bash "$self" --netns-body || die "benchmark failed"
	report | tee "$out/summary.txt"
}

if [[ ${1-} == --netns-body ]]; then
	netns_body
else
	main "$@"
fi
