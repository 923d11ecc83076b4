#!/bin/bash
# `make fuzz`: run each libFuzzer harness for SECONDS, JOBS at a time, with
# ASan+UBSan (the build's), leak detection on, and fail on any crash, leak,
# UB report or timeout. Usage: run.sh BUILDDIR SRCDIR SECONDS JOBS HARNESS...
#
# Each harness starts from its committed corpus (tests/fuzz/corpus/H) and
# regression inputs (tests/fuzz/regressions/H), with tests/fuzz/dict/H.dict
# when there is one, and grows a working corpus in BUILDDIR/tests/fuzz/out/H/
# corpus (kept across runs). A crashing input is written to
# BUILDDIR/tests/fuzz/out/H/ (crash-*, leak-*, timeout-*): make it a
# regression input (tests/fuzz/README.md). Prints per harness the runs, runs
# per second, and libFuzzer's coverage (cov: edges, ft: features).
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: $0 BUILDDIR SRCDIR SECONDS JOBS HARNESS..." >&2; exit 2; }
build=$1 src=$2 secs=$3 jobs=$4
shift 4

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

one() {
	local h=$1 out=$build/tests/fuzz/out/$1
	local bin=$build/tests/fuzz/fuzz_$h dict=$src/tests/fuzz/dict/$h.dict
	local -a args=(-max_total_time="$secs" -timeout=10 -print_final_stats=1
		-artifact_prefix="$out/")
	[ -x "$bin" ] || { echo "fuzz: $bin is missing" >&2; return 1; }
	[ -f "$dict" ] && args+=(-dict="$dict")
	mkdir -p "$out/corpus" "$src/tests/fuzz/regressions/$h"
	if "$bin" "${args[@]}" "$out/corpus" "$src/tests/fuzz/corpus/$h" \
		"$src/tests/fuzz/regressions/$h" >"$out.log" 2>&1; then
		echo "fuzz $h: ok" >"$out.status"
	else
		echo "fuzz $h: FAILED (exit $?), see $out.log" >"$out.status"
	fi
}

summary() {
	local h=$1 log=$build/tests/fuzz/out/$1.log runs rate cov ft
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1)
	printf '%-10s %12s runs %8s/s  %s  %s\n' "$h" "${runs:-?}" "${rate:-?}" "${cov:-cov: ?}" \
		"${ft:-ft: ?}"
}

running=0
for h in "$@"; do
	rm -f "$build/tests/fuzz/out/$h.status"
	one "$h" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n || true
		running=$((running - 1))
	fi
done
wait

failed=0
for h in "$@"; do
	summary "$h"
	status=$(cat "$build/tests/fuzz/out/$h.status" 2>/dev/null || echo "fuzz $h: did not run")
	case "$status" in
	*": ok") ;;
	*)
		echo "$status" >&2
		grep -E 'ERROR: |SUMMARY: |runtime error|check failed|Test unit written' \
			"$build/tests/fuzz/out/$h.log" | head -20 >&2 || true
		failed=$((failed + 1))
		;;
	esac
done
[ "$failed" -eq 0 ] || { echo "fuzz: $failed of $# harnesses failed" >&2; exit 1; }
echo "fuzz: $# harnesses, ${secs}s each, nothing found"
