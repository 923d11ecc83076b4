#!/bin/bash
# Each fuzz harness over its committed corpus and every input that ever
# crashed it (tests/fuzz/regressions/HARNESS), without libFuzzer: a crash, a
# sanitizer report (in the ASan build) or a failed check is a failure. Also
# checks that the netlink corpus is what tests/fuzz/mkseeds writes.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_BUILDDIR:?}" "${TCX_SRCDIR:?}"
fuzz=$TCX_SRCDIR/tests/fuzz

for h in netlink config webconfig negotiate; do
	bin=$TCX_BUILDDIR/tests/fuzz/replay_$h
	[ -x "$bin" ] || fail "missing $bin"
	[ -n "$(ls -A "$fuzz/corpus/$h" 2>/dev/null)" ] || fail "empty corpus $fuzz/corpus/$h"
	dirs=("$fuzz/corpus/$h")
	[ -d "$fuzz/regressions/$h" ] && dirs+=("$fuzz/regressions/$h")
	out=$("$bin" "${dirs[@]}") || fail "replay_$h failed on an input above"
	note "$h: $out"
done

make_workdir
"$TCX_BUILDDIR/tests/fuzz/mkseeds" "$WORK" || fail "mkseeds failed"
diff -r "$WORK" "$fuzz/corpus/netlink" >/dev/null ||
	fail "tests/fuzz/corpus/netlink is not what tests/fuzz/mkseeds writes (make fuzz-seeds)"
note "netlink corpus matches tests/fuzz/mkseeds"
