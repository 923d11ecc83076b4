#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tcexporter benchmark (a report, not a test): `make bench`, or
#   tests/bench/run.sh BUILDDIR
# with BUILDDIR/tcexporter and BUILDDIR/tests/bench/mnl_floor built.
#
# For every size N (TCX_BENCH_SIZES, default "10000 50000"), in a private
# network namespace of its own (unshare -n; nothing is sent anywhere, no
# traffic is needed): a veth pair v0/v1, clsact on v0, N u32 filters on v0
# ingress, each with one mirred action and a unique 16-byte cookie. Then,
# in one hyperfine invocation:
#   exporter  tcexporter --once --config CFG > /dev/null
#   tc        tc -s filter show dev v0 ingress > /dev/null
#   floor     mnl_floor v0 ingress (one bare libmnl dump, see mnl_floor.c)
# (hyperfine runs the three one after the other, not interleaved, so the
# machine's background load can still differ between them).
# and the exporter's peak RSS, with N filters and with none.
#
# Filter shape: TCX_BENCH_PER_PREF (default 4000) filters per pref, see
# tests/bench/lib.sh (shared with tests/bench/scale.sh); 50k filters take
# ~1.5 s that way.
#
# Targets: exporter/floor <= 1.3, tc/exporter >= 2.0, RSS <= 300 bytes per
# action row. Missing a target is reported, not failed: the exit status is 0
# whenever the benchmark ran (77 when it cannot run here, e.g. not root).
#
# Peak RSS comes from /usr/bin/time -f %M, or else from VmHWM read at exit
# under ptrace by python3 (forced with TCX_BENCH_RSS=ptrace).
#
# Environment: TCX_BENCH_SIZES, TCX_BENCH_PER_PREF, TCX_BENCH_OUT (output
# directory, default tests/bench/out in the source tree, or a temporary one),
# TCX_BENCH_RSS.
set -euo pipefail

readonly TARGET_FLOOR=1.3 # exporter/floor at most
readonly TARGET_TC=2.0    # tc/exporter at least
readonly TARGET_BPR=300   # bytes of peak RSS per action row at most
readonly WARMUP=3 RUNS=15 RSS_RUNS=5

self=$(readlink -f "${BASH_SOURCE[0]}")
srcdir=$(dirname "$self")
BENCH_TAG=bench
# shellcheck source=tests/bench/lib.sh
. "$srcdir/lib.sh"

# Peak RSS (VmHWM) of a command run under ptrace, read from /proc at its exit
# stop: the fallback when /usr/bin/time is missing. (getrusage(RUSAGE_CHILDREN)
# would not do: the forked child's maxrss already holds Python's own RSS.)
readonly HWM_PY='
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
TRACEME, CONT, SETOPTIONS, O_TRACEEXIT, EVENT_EXIT = 0, 7, 0x4200, 0x40, 6
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    libc.ptrace(TRACEME, 0, None, None)
    try:
        os.execvp(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
hwm = None
_, st = os.waitpid(pid, 0)  # stopped by the exec, or exec failed
if os.WIFSTOPPED(st):
    libc.ptrace(SETOPTIONS, pid, None, O_TRACEEXIT)
    libc.ptrace(CONT, pid, None, None)
    while True:
        _, st = os.waitpid(pid, 0)
        if not os.WIFSTOPPED(st):
            break
        sig = os.WSTOPSIG(st)
        if sig == signal.SIGTRAP and st >> 16 == EVENT_EXIT:
            with open("/proc/%d/status" % pid) as f:
                hwm = [l.split()[1] for l in f if l.startswith("VmHWM:")][0]
            sig = 0
        libc.ptrace(CONT, pid, None, sig)
if os.WIFSTOPPED(st) or os.waitstatus_to_exitcode(st) != 0 or hwm is None:
    sys.exit(1)
print(hwm)
'

# Peak RSS in KiB of one run of "$@" (stdout discarded); fails if it fails.
rss_once() {
	local f rc=0

	if [[ ${TCX_BENCH_RSS:-} != ptrace && -x /usr/bin/time ]]; then
		f=$(mktemp)
		/usr/bin/time -f %M -o "$f" "$@" > /dev/null || rc=$?
		if ((rc == 0)); then
			tail -n 1 "$f"
		fi
		rm -f "$f"
		return "$rc"
	fi
	python3 -c "$HWM_PY" "$@"
}

# Median of RSS_RUNS peak RSS measurements, in KiB.
rss_median() {
	local i
	for ((i = 0; i < RSS_RUNS; i++)); do
		rss_once "$@" || die "'$*' failed while measuring RSS"
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# Median in seconds of one command of a hyperfine CSV export.
csv_median() {
	awk -F, -v name="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["command"] == name { print $col["median"]; found = 1 }
		END { if (!found) exit 1 }' "$1" || die "no median for '$2' in $1"
}

# Runs inside a fresh network namespace: one size.
netns_body() {
	local n=$1 tcx=$2 floor=$3 out=$4 per=$5
	local cfg=$out/bench.yaml prom=$out/once-$n.prom batch=$out/filters-$n.batch
	local rss0 rssn rows

	bench_netns_setup

	# Baseline: same config, empty clsact.
	"$tcx" --once --config "$cfg" > "$prom" || die "N=$n: baseline tcexporter --once failed"
	rows=$(grep -c '^tc_action_bytes_total{' "$prom" || true)
	((rows == 0)) || die "N=$n: baseline printed $rows action rows, expected 0"
	rss0=$(rss_median "$tcx" --once --config "$cfg")

	bench_add_filters "$n" "$per" "$batch"
	# Check once, before timing, that the exporter sees every action.
	bench_check_rows "$n" "$tcx" "$cfg" "$floor" "$prom"
	rm -f "$prom"

	# No shell in between (its start-up would be most of the floor's time);
	# --output=null sends stdout and stderr to /dev/null, as "> /dev/null".
	hyperfine --shell=none --output=null --warmup "$WARMUP" --runs "$RUNS" \
		--export-json "$out/hyperfine-$n.json" --export-csv "$out/hyperfine-$n.csv" \
		-n exporter "$(printf '%q --once --config %q' "$tcx" "$cfg")" \
		-n tc 'tc -s filter show dev v0 ingress' \
		-n floor "$(printf '%q v0 ingress' "$floor")"

	rssn=$(rss_median "$tcx" --once --config "$cfg")

	printf '%s %s %s %s %s %s %s %s\n' "$n" \
		"$(csv_median "$out/hyperfine-$n.csv" exporter)" \
		"$(csv_median "$out/hyperfine-$n.csv" floor)" \
		"$(csv_median "$out/hyperfine-$n.csv" tc)" \
		"$rssn" "$rss0" "$BENCH_CREATE_S" "$BENCH_PREFS" > "$out/result-$n.txt"
}

main() {
	local builddir tcx floor out sizes per n start

	if (($# != 1)); then
		echo "Usage: $0 BUILDDIR" >&2
		exit 2
	fi
	bench_require hyperfine tc ip unshare awk
	builddir=$(readlink -f "$1")
	tcx=$builddir/tcexporter
	floor=$builddir/tests/bench/mnl_floor
	bench_exe "$tcx"
	bench_exe "$floor"
	[[ -x /usr/bin/time ]] || command -v python3 > /dev/null ||
		skip "neither /usr/bin/time nor python3 is available to measure peak RSS"

	sizes=${TCX_BENCH_SIZES:-10000 50000}
	per=${TCX_BENCH_PER_PREF:-4000}
	# shellcheck disable=SC2086 # a list of sizes
	bench_check_sizes TCX_BENCH_SIZES "$per" $sizes

	bench_out_dir "$srcdir/out"
	rm -f "$out"/result-*.txt
	printf 'targets:\n  - {dev: v0, parent: ingress}\n' > "$out/bench.yaml"
	echo "bench: $(uname -sr), $(nproc) CPU(s), $(hyperfine --version); output in $out"

	start=$SECONDS
	for n in $sizes; do
		unshare -n -- bash "$self" --netns-body "$n" "$tcx" "$floor" "$out" "$per" ||
			die "N=$n: benchmark failed"
	done

	{
		echo
		echo "== tcexporter benchmark: u32 + mirred + 16-byte cookie, $per filters per pref," \
			"hyperfine medians of $RUNS runs, RSS medians of $RSS_RUNS runs =="
		for n in $sizes; do
			cat "$out/result-$n.txt"
		done | awk -v tf="$TARGET_FLOOR" -v tt="$TARGET_TC" -v tb="$TARGET_BPR" '
			{
				n = $1; e = $2 * 1000; f = $3 * 1000; t = $4 * 1000
				rf = e / f; rt = t / e; bpr = ($5 - $6) * 1024 / n
				printf "N=%d exporter_ms=%.2f floor_ms=%.2f tc_ms=%.2f " \
				       "ratio_exporter_floor=%.2f ratio_tc_exporter=%.2f rss_kb=%d " \
				       "bytes_per_row=%.1f\n", n, e, f, t, rf, rt, $5, bpr
				extra = extra sprintf("  N=%d: baseline rss_kb=%d (0 filters), " \
				                      "filter creation %.2f s over %d pref(s)\n",
				                      n, $6, $7, $8)
				vf = vf sprintf(" N=%d:%.2f", n, rf); if (rf > tf) mf = 1
				vt = vt sprintf(" N=%d:%.2f", n, rt); if (rt < tt) mt = 1
				vb = vb sprintf(" N=%d:%.1f", n, bpr); if (bpr > tb) mb = 1
			}
			END {
				printf "%s", extra
				printf "verdict exporter/floor <= %s: %s (%s )\n", tf, mf ? "MISS" : "PASS", vf
				printf "verdict tc/exporter >= %s: %s (%s )\n", tt, mt ? "MISS" : "PASS", vt
				printf "verdict bytes_per_row <= %s: %s (%s )\n", tb, mb ? "MISS" : "PASS", vb
			}'
		echo "(took $((SECONDS - start)) s; hyperfine JSON in $out)"
	} | tee "$out/summary.txt"
}

if [[ ${1-} == --netns-body ]]; then
	shift
	netns_body "$@"
else
	main "$@"
fi
