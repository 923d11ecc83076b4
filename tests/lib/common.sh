# Shared helpers of the shell tests. Source it from a test script that runs
# under `set -euo pipefail`:
#
#   . "$(dirname "$0")/../lib/common.sh"
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip. With TCX_REQUIRE_ROOT=1
# (CI) a skip is a failure: the environment was supposed to allow the test.
# shellcheck shell=bash

TCX_TEST_NAME=${TCX_TEST_NAME:-$(basename "$0")}

# fail MESSAGE...: the test failed.
fail() {
	echo "FAIL: $TCX_TEST_NAME: $*" >&2
	exit 1
}

# skip REASON...: the test cannot run here (exit 77), unless TCX_REQUIRE_ROOT=1.
skip() {
	if [ "${TCX_REQUIRE_ROOT:-0}" = 1 ]; then
		echo "FAIL: $TCX_TEST_NAME: would skip, but TCX_REQUIRE_ROOT=1: $*" >&2
		exit 1
	fi
	echo "SKIP: $TCX_TEST_NAME: $*" >&2
	exit 77
}

# note MESSAGE...: progress for the test log.
note() {
	echo "== $*"
}

# require_bin: TCX_BIN must name an executable (a missing binary is a build
# problem, never a skip).
require_bin() {
	[ -n "${TCX_BIN:-}" ] || fail "TCX_BIN is not set (path of the tcexporter binary)"
	[ -x "$TCX_BIN" ] || fail "TCX_BIN=$TCX_BIN is not an executable file"
}

# require_cmd CMD...: skip unless every command exists.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "'$c' is not installed"
	done
}

# require_root [UNSHARE_FLAGS...]: skip unless we are root and `unshare FLAGS
# true` works (default flags: -n).
require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (network namespaces); running as uid $(id -u)"
	require_cmd unshare
	[ $# -gt 0 ] || set -- -n
	unshare "$@" true 2>/dev/null || skip "'unshare $* true' does not work here"
}

# find_python: sets PYTHON to a python3 (TCX_PYTHON, then /usr/bin/python3,
# then the one in PATH), or skips.
find_python() {
	if [ -n "${TCX_PYTHON:-}" ]; then
		PYTHON=$TCX_PYTHON
	elif [ -x /usr/bin/python3 ]; then
		PYTHON=/usr/bin/python3
	elif command -v python3 >/dev/null 2>&1; then
		PYTHON=$(command -v python3)
	else
		skip "python3 is not installed"
	fi
	"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 6))' 2>/dev/null ||
		skip "$PYTHON is not a usable python3 (>= 3.6)"
	export PYTHON
}

# make_workdir: sets WORK to a new temporary directory, removed on exit
# (unless TCX_KEEP_WORK=1, for debugging).
make_workdir() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/tcx-test.XXXXXX")
	# shellcheck disable=SC2064
	trap "_tcx_cleanup '$WORK'" EXIT
}

_tcx_cleanup() {
	local rc=$?
	if [ "${TCX_KEEP_WORK:-0}" = 1 ]; then
		echo "(kept work directory $1)" >&2
	else
		rm -rf "$1"
	fi
	return $rc
}

# has_sanitizer_report FILE: did ASan, LSan, MSan, TSan or UBSan report in FILE?
has_sanitizer_report() {
	grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: [A-Za-z]+Sanitizer' \
		"$1"
}

# sanitizer_check NAME [WHAT]: fails when a sanitizer reported anything in
# $WORK/NAME.err (the sanitizer build runs the tests too).
sanitizer_check() {
	if has_sanitizer_report "$WORK/$1.err"; then
		cat "$WORK/$1.err" >&2
		fail "$1: sanitizer report${2:+ from: $2}"
	fi
}

# run_tcx NAME ARGS...: runs "$TCX_BIN" ARGS with stdout in $WORK/NAME.out and
# stderr in $WORK/NAME.err; sets RC to its exit status. Fails the test when
# the binary crashed (killed by a signal) or a sanitizer reported anything,
# whatever the exit status. TCX_WRAP (an array, e.g. (taskset -c 0) or
# (valgrind ...)) goes in front of the binary, here and in daemon.sh's
# start_tcx.
TCX_WRAP=()
run_tcx() {
	local name=$1
	shift
	RC=0
	"${TCX_WRAP[@]}" "$TCX_BIN" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || RC=$?
	sanitizer_check "$name" "tcexporter $*"
	if [ "$RC" -ge 126 ]; then
		cat "$WORK/$name.err" >&2
		fail "$name: tcexporter $* died with status $RC (signal $((RC - 128)))"
	fi
}

# expect_rc NAME WANT: the last run_tcx of NAME exited WANT; else show its
# stderr and fail.
expect_rc() {
	if [ "$RC" != "$2" ]; then
		echo "--- stderr of $1:" >&2
		cat "$WORK/$1.err" >&2
		echo "--- stdout of $1 (first 20 lines):" >&2
		head -n 20 "$WORK/$1.out" >&2
		fail "$1: exit status $RC, expected $2"
	fi
}

# expect_grep NAME out|err [grep options] PATTERN: the stream matches.
expect_grep() {
	local name=$1 stream=$2
	shift 2
	if ! grep -q "$@" "$WORK/$name.$stream"; then
		echo "--- std$stream of $name:" >&2
		cat "$WORK/$name.$stream" >&2
		fail "$name: std$stream does not match: $*"
	fi
}

# expect_empty NAME out|err: the stream is empty.
expect_empty() {
	if [ -s "$WORK/$1.$2" ]; then
		echo "--- std$2 of $1:" >&2
		cat "$WORK/$1.$2" >&2
		fail "$1: std$2 should be empty"
	fi
}

# in_netns VAR [UNSHARE ARGS...]: unless VAR=1 is already set, re-executes
# this script under `unshare ARGS` (default -n) with VAR=1. Call it after
# the checks that decide on a skip, so that a skip happens outside.
in_netns() {
	local var=$1
	shift
	[ $# -gt 0 ] || set -- -n
	if [ "${!var:-}" != 1 ]; then
		export "$var=1"
		exec unshare "$@" -- "$BASH" "$0"
	fi
}

# private_netns_dir: a private, empty /run/netns in this mount namespace
# (entered with in_netns VAR -m -n --propagation private), so that no other
# test sees the named namespaces made here: a tmpfs over the host's
# /run/netns, or over /run when the host has none (the host is not written
# to).
# verify WHAT CMD...: one comparison; when CMD fails, WHAT is added to the
# caller's array `failed` and the others still run (so that one run shows
# everything that differs).
verify() {
	local what=$1
	shift
	"$@" || failed+=("$what")
}

# require_qdisc_features: (in a private /run/netns) skips unless the kernel
# has what the qdisc and class tests build: veth, htb, tbf, pfifo, ingress,
# clsact, u32 and mirred. A missing feature is a skip (another kernel), not a
# tcexporter failure.
require_qdisc_features() {
	local out
	_qdisc_probe() {
		ip netns add probe &&
			ip -n probe link add x0 type veth peer name x1 &&
			tc -n probe qdisc add dev x0 root handle 1: htb &&
			tc -n probe class add dev x0 parent 1: classid 1:1 htb rate 1mbit &&
			tc -n probe qdisc add dev x0 parent 1:1 handle 10: tbf rate 1mbit burst 2k limit 3k &&
			tc -n probe class add dev x0 parent 1: classid 1:2 htb rate 1mbit &&
			tc -n probe qdisc add dev x0 parent 1:2 handle 20: pfifo &&
			tc -n probe qdisc add dev x1 ingress &&
			tc -n probe qdisc add dev x0 clsact &&
			tc -n probe filter add dev x0 parent 1:1 pref 1 protocol ip u32 match u32 0 0 \
				flowid 1:1 action mirred egress mirror dev x1
	}
	if ! out=$(_qdisc_probe 2>&1); then
		ip netns del probe 2> /dev/null || true
		skip "kernel lacks a feature this test needs (veth, htb, tbf, pfifo, ingress, clsact, u32, mirred): $out"
	fi
	ip netns del probe
}

# many_netns PREFIX N COOKIE: (in a private /run/netns) N named namespaces
# PREFIX1 ... PREFIXN, each with a clsact on its lo (down: no traffic) and one
# u32 filter on its ingress whose mirred action carries COOKIE; quickly (ip
# and tc batches). Fails when one cannot be made (a missing kernel feature:
# the caller skips).
many_netns() {
	local prefix=$1 n=$2 cookie=$3 i
	for i in $(seq 1 "$n"); do echo "netns add $prefix$i"; done | ip -b - || return 1
	for i in $(seq 1 "$n"); do
		printf '%s\n' "qdisc add dev lo clsact" \
			"filter add dev lo ingress pref 1 protocol ip u32 match u32 0 0 action mirred egress mirror dev lo cookie $cookie" |
			tc -n "$prefix$i" -b - || return 1
	done
}

# many_netns_del PREFIX N: deletes what many_netns PREFIX N made.
many_netns_del() {
	local i
	for i in $(seq 1 "$2"); do echo "netns del $1$i"; done | ip -b - 2>/dev/null || true
}

private_netns_dir() {
	if [ -d /run/netns ]; then
		mount -t tmpfs tcx-test-netns /run/netns || fail "cannot mount a private /run/netns"
	else
		mount -t tmpfs tcx-test-run /run || fail "cannot mount a private /run for 'ip netns'"
		mkdir /run/netns
	fi
}

# proc_state PID: the state letter of PID (R, S, Z...), empty when gone.
proc_state() {
	sed -n 's/^.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null || true
}

# wait_gone PID SECONDS: waits for PID to exit (returns 1 on timeout). It
# does not `wait` for a child that exits normally, so that the caller can
# still collect its exit status with `wait PID`.
wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))
	while kill -0 "$pid" 2>/dev/null; do
		# A zombie child of ours counts as gone once reaped by `wait`.
		if [ "$(proc_state "$pid")" = Z ]; then
			wait "$pid" 2>/dev/null || true
			return 0
		fi
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.05
	done
	return 0
}
