# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared parts of the benchmarks tests/bench/run.sh (make bench) and
# tests/bench/scale.sh (make bench-scale). Source it after setting
# BENCH_TAG (the prefix of messages, e.g. "bench"):
#
#   . "$srcdir/lib.sh"
#
# The filters: in a private network namespace, a veth pair v0/v1, clsact on
# v0, and N u32 filters on v0 ingress, each with one mirred action and a
# unique 16-byte cookie (74637862656e6368 = "tcxbench", then the filter's
# number). u32 inserts into one hash bucket in quadratic time (10k filters
# take ~1 s, 50k ~60 s), so filters are spread over several prefs, PER per
# pref: one u32 tp (and one root hash table) per pref. Keep PER under 4096:
# the node part of a u32 handle has 12 bits, and past 4095 filters in one
# hash table the kernel hands out the same handle again (800::fff), so that
# filters can then be told apart only by their cookies.
# shellcheck shell=bash

die() {
	echo "$BENCH_TAG: $*" >&2
	exit 1
}

skip() {
	echo "$BENCH_TAG: SKIP: $*" >&2
	exit 77
}

# bench_require TOOL...: skips (77) unless we are root, every TOOL exists and
# network namespaces can be made.
bench_require() {
	local tool
	((EUID == 0)) || skip "must be run as root (it creates network namespaces and TC filters)"
	for tool in "$@"; do
		command -v "$tool" > /dev/null || skip "$tool is not installed"
	done
	unshare -n true 2> /dev/null || skip "cannot create a network namespace (unshare -n)"
}

# bench_exe PATH: dies unless PATH is an executable (a build problem, not a
# skip); warns when it is a sanitizer build.
bench_exe() {
	[[ -x $1 ]] || die "$1: not found or not executable (build first)"
	if ldd "$1" 2> /dev/null | grep -q 'lib[at]san\|libubsan'; then
		echo "$BENCH_TAG: WARNING: $1 is built with sanitizers: figures are not representative" >&2
	fi
}

# bench_check_sizes VAR PER N...: dies unless every N is a usable number of
# filters with PER filters per pref (VAR names the setting, for the message).
bench_check_sizes() {
	local var=$1 per=$2 n
	shift 2
	[[ $per =~ ^[1-9][0-9]*$ ]] || die "TCX_BENCH_PER_PREF must be a positive integer, not '$per'"
	(($# > 0)) || die "$var: no size given"
	for n in "$@"; do
		[[ $n =~ ^[1-9][0-9]*$ ]] || die "$var: '$n' is not a positive integer"
		((n <= 16777216)) || die "$var: $n is too large (at most 2^24)"
		(((n + per - 1) / per <= 65535)) || die "N=$n: too many prefs; raise TCX_BENCH_PER_PREF"
	done
}

# bench_out_dir DEFAULT: sets out to TCX_BENCH_OUT, else DEFAULT, else (not
# writable, e.g. make distcheck's read-only source tree) a new temporary
# directory; absolute.
bench_out_dir() {
	out=${TCX_BENCH_OUT:-$1}
	if ! mkdir -p "$out" 2> /dev/null || [[ ! -w $out ]]; then
		out=$(mktemp -d "/tmp/$BENCH_TAG.XXXXXX")
	fi
	out=$(readlink -f "$out")
}

# bench_netns_setup: (inside the namespace) loopback up, v0/v1, clsact on v0.
bench_netns_setup() {
	ip link set lo up
	ip link add v0 type veth peer name v1
	ip link set v0 up
	ip link set v1 up
	tc qdisc add dev v0 clsact
}

# bench_add_filters N PER BATCHFILE: (inside the namespace) adds the N
# filters with tc -batch; sets BENCH_CREATE_S (seconds it took) and
# BENCH_PREFS.
bench_add_filters() {
	local n=$1 per=$2 batch=$3 t0 t1

	awk -v n="$n" -v per="$per" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "filter add dev v0 ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev v1 cookie 74637862656e6368%016x\n",
			       1 + int(i / per), int(i / 65536) % 256, int(i / 256) % 256,
			       i % 256, i
	}' > "$batch"
	BENCH_PREFS=$(((n + per - 1) / per))
	echo "$BENCH_TAG: N=$n: creating $n u32 filters over $BENCH_PREFS pref(s) ($per per pref)"
	t0=$(date +%s%N)
	tc -batch "$batch" || die "N=$n: tc -batch failed"
	t1=$(date +%s%N)
	BENCH_CREATE_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	echo "$BENCH_TAG: N=$n: created in ${BENCH_CREATE_S} s"
	rm -f "$batch"
}

# bench_check_rows N TCX CFG FLOOR PROMFILE: (inside the namespace) dies
# unless `TCX --once --config CFG` prints N action rows and FLOOR sees at
# least N filter messages on v0 ingress. Leaves the output in PROMFILE.
bench_check_rows() {
	local n=$1 tcx=$2 cfg=$3 floor=$4 prom=$5 rows msgs rc=0

	"$tcx" --once --config "$cfg" > "$prom" || rc=$?
	((rc == 0)) || die "N=$n: tcexporter --once exited with $rc"
	rows=$(grep -c '^tc_action_bytes_total{' "$prom" || true)
	if ((rows != n)); then
		die "N=$n: tcexporter --once printed $rows tc_action_bytes_total rows, expected $n (see $prom)"
	fi
	msgs=$("$floor" v0 ingress 2>&1 > /dev/null) || die "N=$n: mnl_floor failed: $msgs"
	((msgs >= n)) || die "N=$n: mnl_floor saw $msgs messages, expected at least $n"
	echo "$BENCH_TAG: N=$n: exporter printed $rows action rows ($(wc -c < "$prom") bytes);" \
		"floor saw $msgs filter messages"
}
