#!/bin/bash
# The exposition is valid whatever the kernel holds:
#  - floats are printed in full: the snapshot's timestamp is within a second
#    of the clock (it lies between two readings of it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
find_python
in_netns TCX_EXPO_IN_NETNS
make_workdir

note "the snapshot's timestamp is within a second of the clock"
before=$(date +%s.%N)
run_tcx clock --once
after=$(date +%s.%N)
expect_rc clock 0
ts=$(sed -n 's/^tc_exporter_snapshot_timestamp_seconds \(.*\)$/\1/p' "$WORK/clock.out")
[ -n "$ts" ] || fail "no tc_exporter_snapshot_timestamp_seconds in the output"
# It was taken between the two readings of the clock (a millisecond of
# slack for the double's rounding), so well within a second of it.
"$PYTHON" - "$before" "$ts" "$after" <<'PY' || fail "timestamp $ts is not between $before and $after"
import sys
before, ts, after = (float(x) for x in sys.argv[1:])
sys.exit(0 if before - 0.001 <= ts <= after + 0.001 and after - before < 1 else 1)
PY
