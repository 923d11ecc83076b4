#!/bin/bash
# Each fuzz harness over its committed corpus and every input that ever
# crashed it (tests/fuzz/regressions/HARNESS), without libFuzzer: a crash, a
# sanitizer report (in the ASan build) or a failed check is a failure, and
# the inputs that fail are named. Also checks that the netlink corpus holds
# the seeds tests/fuzz/mkseeds writes.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_BUILDDIR:?}" "${TCX_SRCDIR:?}"
fuzz=$TCX_SRCDIR/tests/fuzz
make_workdir

failed=0
for h in netlink config webconfig negotiate; do
	bin=$TCX_BUILDDIR/tests/fuzz/replay_$h
	[ -x "$bin" ] || fail "missing $bin"
	[ -n "$(ls -A "$fuzz/corpus/$h" 2>/dev/null)" ] || fail "empty corpus $fuzz/corpus/$h"
	dirs=("$fuzz/corpus/$h")
	[ -d "$fuzz/regressions/$h" ] && dirs+=("$fuzz/regressions/$h")
	if out=$("$bin" "${dirs[@]}" 2>"$WORK/$h.err"); then
		note "$h: $out"
		continue
	fi
	cat "$WORK/$h.err" >&2
	for d in "${dirs[@]}"; do
		for f in "$d"/*; do
			[ -f "$f" ] || continue
			"$bin" "$f" >/dev/null 2>&1 || echo "FAIL: replay_$h: ${f#"$TCX_SRCDIR"/}" >&2
		done
	done
	failed=$((failed + 1))
done

"$TCX_BUILDDIR/tests/fuzz/mkseeds" "$WORK" || fail "mkseeds failed"
for seed in "$WORK"/*; do
	case "$seed" in *.err) continue ;; esac
	cmp -s "$seed" "$fuzz/corpus/netlink/${seed##*/}" ||
		fail "tests/fuzz/corpus/netlink/${seed##*/} is not what tests/fuzz/mkseeds writes (make fuzz-seeds)"
done
note "netlink corpus holds the seeds of tests/fuzz/mkseeds"
[ "$failed" -eq 0 ] || fail "$failed harnesses failed on the inputs named above"
