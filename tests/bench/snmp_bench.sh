#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# SNMP walk benchmark (a report, not a test):
#   tests/bench/snmp_bench.sh BUILDDIR
# with BUILDDIR/tcexporter built with the AgentX subagent (--with-snmp).
#
# In a private network namespace (unshare -n): a private snmpd (master
# agentx, as in tests/lib/snmp.sh) and the tcexporter daemon (collection
# every TCX_SNMP_BENCH_INTERVAL, default 5 s; no labels), veth v0/v1,
# clsact on v0 and u32 filters on v0 ingress with one mirred action and a
# 16-byte cookie each, built with tc -batch, TCX_BENCH_PER_PREF (default
# 2500) per pref (see tests/bench/run.sh: u32 inserts in quadratic time per
# hash table). At most 4095 per pref: u32 has 12-bit node IDs, and past 4095
# nodes in one hash table the kernel gives every further filter the same
# handle (800::fff), so they share one identity and one SNMP row. For 1k rows and then 10k rows (9k filters added to the same
# daemon):
#
#   snmpbulkwalk -v2c -Cr50 -On of tcxActionTable (20 columns a row)
#
# once to warm up, then TCX_SNMP_BENCH_RUNS (default 5) timed walks; the
# median, the rate in varbinds/s, and the CPU time snmpd and tcexporter spent
# per walk (from /proc/PID/stat). Target: the 10k walk takes at most 12x the
# 1k walk (10x more rows; a walk must be O(n log n) at worst).
#
# Comparison points, with the same command:
#   ifTable_agentx  IF-MIB's ifTable served by net-snmp's own AgentX
#                   subagent (a second snmpd, -X, with only the ifTable,
#                   ifXTable and interface modules; the master runs without
#                   them) over 1003 interfaces (500 veth pairs, 22 columns):
#                   ifTable-sized data on the same AgentX path as tcexporter
#                   - the fair comparison;
#   ifTable_native  the same ifTable from a plain snmpd (no AgentX hop);
#   mib2_native     that snmpd's whole mib-2 (.1.3.6.1.2.1), whatever it
#                   holds here.
# The master handles a GETBULK's repetitions one at a time, so every
# varbind from a subagent costs one AgentX round trip (and, inside a
# net-snmp subagent, two internal callback-pipe hops): expect AgentX walks
# several times slower than native ones, whoever the subagent is.
#
# Exit status: 0 whenever the benchmark ran (a missed target is reported,
# not failed); 77 when it cannot run here (not root, tools missing).
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
srcdir=$(cd "$(dirname "$self")/../.." && pwd)
readonly RUNS=${TCX_SNMP_BENCH_RUNS:-5}
readonly PER=${TCX_BENCH_PER_PREF:-2500}
readonly INTERVAL=${TCX_SNMP_BENCH_INTERVAL:-5s}
readonly TARGET_RATIO=12
readonly SIZES="1000 10000"

if [[ ${TCX_SNMP_BENCH_INSIDE:-} != 1 ]]; then
	if (($# != 1)); then
		echo "Usage: $0 BUILDDIR" >&2
		exit 2
	fi
	builddir=$(readlink -f "$1")
	export TCX_BIN=$builddir/tcexporter TCX_BUILDDIR=$builddir TCX_TEST_NAME=snmp_bench
	[[ -x $TCX_BIN ]] || {
		echo "bench: $TCX_BIN: not found or not executable (build first)" >&2
		exit 1
	}
fi

# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$srcdir/tests/lib/snmp.sh"
die() {
	echo "bench: $*" >&2
	exit 1
}
# A benchmark that cannot run is a skip, even in CI.
skip() {
	echo "bench: SKIP: $*" >&2
	exit 77
}

if [[ ${TCX_SNMP_BENCH_INSIDE:-} != 1 ]]; then
	{ [[ $PER =~ ^[1-9][0-9]*$ ]] && ((PER <= 4095)); } ||
		die "TCX_BENCH_PER_PREF must be 1..4095 (u32 node IDs have 12 bits)"
	snmp_prereqs
	if grep -q 'lib[at]san\|libubsan' <<<"$(ldd "$TCX_BIN" 2>/dev/null)"; then
		echo "bench: WARNING: $TCX_BIN is built with sanitizers: times are not representative" >&2
	fi
	export TCX_SNMP_BENCH_INSIDE=1
	exec unshare -n -- "$BASH" "$self"
fi

# ---- inside a private network namespace -----------------------------------------------
snmp_setup
ip link add v0 type veth peer name v1
ip link set v0 up
ip link set v1 up
tc qdisc add dev v0 clsact

# filters FROM TO: filters FROM..TO-1 with tc -batch.
filters() {
	awk -v from="$1" -v to="$2" -v per="$PER" 'BEGIN {
		for (i = from; i < to; i++)
			printf "filter add dev v0 ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev v1 cookie 74637862656e6368%016x\n",
			       1 + int(i / per), int(i / 65536) % 256, int(i / 256) % 256,
			       i % 256, i
	}' >"$WORK/batch"
	tc -batch "$WORK/batch" || die "tc -batch failed"
}
# cpu_ticks PID: utime + stime of PID in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
HZ=$(getconf CLK_TCK)
readonly HZ

# bench_walk NAME ADDR OID PID1 [PID2]: RUNS timed walks of OID at ADDR
# after one warm-up; appends "NAME varbinds median_s min_s max_s cpu1_s
# cpu2_s" (CPU seconds per walk of the agent processes PID1 and PID2) to
# $WORK/results.
bench_walk() {
	local name=$1 addr=$2 oid=$3 p1=$4 p2=${5:-} i t0 t1 n times=() a0 b0=0 a1 b1=0
	snmpbulkwalk -v2c -c public -On -Cr50 -t 10 -r 0 "$addr" "$oid" >"$WORK/walk.txt" ||
		die "$name: snmpbulkwalk failed"
	n=$(wc -l <"$WORK/walk.txt")
	a0=$(cpu_ticks "$p1")
	[ -z "$p2" ] || b0=$(cpu_ticks "$p2")
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		snmpbulkwalk -v2c -c public -On -Cr50 -t 10 -r 0 "$addr" "$oid" >"$WORK/walk.txt" ||
			die "$name: snmpbulkwalk failed"
		t1=$(date +%s%N)
		[ "$(wc -l <"$WORK/walk.txt")" = "$n" ] || die "$name: the walk changed size"
		times+=($((t1 - t0)))
	done
	a1=$(cpu_ticks "$p1")
	[ -z "$p2" ] || b1=$(cpu_ticks "$p2")
	printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" -v n="$n" -v runs="$RUNS" \
		-v ac=$((a1 - a0)) -v bc=$((b1 - b0)) -v hz="$HZ" -v two="${p2:+1}" '
		{ v[NR] = $1 / 1e9 }
		END {
			printf "%s %d %.4f %.4f %.4f %.3f %s\n", name, n, v[int((NR + 1) / 2)],
			       v[1], v[NR], ac / hz / runs, two ? sprintf("%.3f", bc / hz / runs) : "-"
		}' >>"$WORK/results"
	echo "bench: $name: $n varbinds, runs (s): $(printf '%s\n' "${times[@]}" |
		awk '{ printf "%.3f ", $1 / 1e9 }')"
}

# 500 veth pairs: ifTable-sized data for the comparison.
for ((i = 1; i <= 500; i++)); do
	echo "link add b$i type veth peer name c$i"
done >"$WORK/links"
ip -batch "$WORK/links" || die "cannot create 500 veth pairs"

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 5s "$(
	printf 'targets: [{dev: v0, parent: ingress}]\n'
)"
sed -i "s/^interval: 1s$/interval: $INTERVAL/" "$WORK/tcx.yaml"
# The master without IF-MIB's tables: a second snmpd serves them over AgentX.
start_snmpd -I -ifTable,ifXTable,interface
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
mkdir -p "$WORK/ifsub/persist" "$WORK/native/persist"
echo "agentXSocket unix:$AGENTX_SOCK" >"$WORK/ifsub/snmpd.conf"
bg_start ifsub env SNMP_PERSISTENT_DIR="$WORK/ifsub/persist" \
	snmpd -f -Lo -X -C -c "$WORK/ifsub/snmpd.conf" -p "$WORK/ifsub/pid" \
	-I ifTable,ifXTable,interface
IFSUB_PID=$BG_PID
NATIVE_PORT=$(free_ports 1 udp)
printf 'agentAddress udp:127.0.0.1:%s\nrocommunity public 127.0.0.1\ndontLogTCPWrappersConnects yes\n' \
	"$NATIVE_PORT" >"$WORK/native/snmpd.conf"
bg_start native env SNMP_PERSISTENT_DIR="$WORK/native/persist" \
	snmpd -f -Lo -C -c "$WORK/native/snmpd.conf" -p "$WORK/native/pid"
NATIVE_PID=$BG_PID
echo "bench: $(uname -sr), $(nproc) CPU(s), $(snmpd -v | awk '/version/ { print "net-snmp", $NF; exit }');" \
	"collection every $INTERVAL; $RUNS runs per walk; $PER filters per pref"

have=0
for n in $SIZES; do
	t0=$(date +%s%N)
	filters "$have" "$n"
	echo "bench: N=$n: $((n - have)) filters added in $((($(date +%s%N) - t0) / 1000000)) ms"
	have=$n
	wait_tcx_rows 120 "$n" >/dev/null
	bench_walk "tcx_N=$n" "$SNMPD_AGENT" "$TCX_ACTION_ENTRY" "$SNMPD_PID" "$TCX_PID"
	[ "$(wc -l <"$WORK/walk.txt")" = $((n * 20)) ] ||
		die "N=$n: the walk has $(wc -l <"$WORK/walk.txt") varbinds, expected $((n * 20))"
done
alive "$IFSUB_PID" ifsub
alive "$NATIVE_PID" native
bench_walk ifTable_agentx "$SNMPD_AGENT" .1.3.6.1.2.1.2.2 "$SNMPD_PID" "$IFSUB_PID"
grep -q '^\.1\.3\.6\.1\.2\.1\.2\.2\.1\.2\.' "$WORK/walk.txt" ||
	die "ifTable over AgentX: no ifDescr (the subagent snmpd did not register?)"
bench_walk ifTable_native "127.0.0.1:$NATIVE_PORT" .1.3.6.1.2.1.2.2 "$NATIVE_PID"
bench_walk mib2_native "127.0.0.1:$NATIVE_PORT" .1.3.6.1.2.1 "$NATIVE_PID"
alive "$TCX_PID" tcx

{
	echo
	echo "== SNMP walk benchmark: snmpbulkwalk -v2c -Cr50, medians of $RUNS runs =="
	printf '%-15s %9s %9s %9s %9s %11s %10s %10s\n' walk varbinds median_s min_s max_s \
		varbinds/s cpu_agent cpu_sub
	awk '{ printf "%-15s %9d %9.3f %9.3f %9.3f %11.0f %10s %10s\n",
	       $1, $2, $3, $4, $5, $2 / $3, $6, $7 }' "$WORK/results"
	awk -v target="$TARGET_RATIO" '
		{ t[$1] = $3; n[$1] = $2 }
		END {
			r = t["tcx_N=10000"] / t["tcx_N=1000"]
			printf "ratio 10k/1k walk time: %.2f (target <= %d): %s\n", r, target,
			       r <= target ? "PASS" : "MISS"
			printf "rate tcexporter 1k / net-snmp subagent ifTable: %.2f; " \
			       "ifTable AgentX / native: %.2f\n",
			       (n["tcx_N=1000"] / t["tcx_N=1000"]) / (n["ifTable_agentx"] / t["ifTable_agentx"]),
			       t["ifTable_agentx"] / t["ifTable_native"]
		}' "$WORK/results"
	echo "(cpu_agent: CPU s per walk of the snmpd answering (the master for AgentX walks);"
	echo " cpu_sub: of the subagent (tcexporter, or the ifTable snmpd -X))"
} | tee "$WORK/summary.txt"
if [ -n "${TCX_BENCH_OUT:-}" ]; then
	mkdir -p "$TCX_BENCH_OUT" && cp "$WORK/summary.txt" "$TCX_BENCH_OUT/snmp-summary.txt"
fi
stop_tcx_clean
stop_snmpd TERM
