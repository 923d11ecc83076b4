#!/bin/bash
# The exposition is valid whatever the kernel holds:
#  - bytes that are not UTF-8 (an interface named with byte 0xff) are written
#    \xHH and a backslash as two, in the text, OpenMetrics and JSON outputs:
#    each stays valid (promtool, a strict UTF-8 decode, python's json) and a
#    device named with the four characters \xff stays apart from one named
#    with the byte 0xff;
#  - floats are printed in full: the snapshot's timestamp is within a second
#    of the clock (it lies between two readings of it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc promtool
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

note "interface names and label values that are not UTF-8"
ff=$(printf '\xff')
bad_name=$(printf 'q"b\\x\xff') # the issue's name: q " b \ x 0xff
lit_name='\xff'                 # the four characters \ x f f
for dev in "$bad_name" "$lit_name" "$ff"; do
	ip link add "$dev" type veth peer name "p$((${n:=0}))"
	ip link set "$dev" up
	ip link set "p$n" up
	tc qdisc add dev "$dev" clsact
	# cookie 5c786666 is the four characters \xff, given by the ascii decoder
	tc filter add dev "$dev" ingress pref 1 protocol ip u32 match ip dst 10.0.0.1/32 \
		action mirred egress mirror dev "p$n" cookie 5c786666
	n=$((n + 1))
done
cat >"$WORK/utf8.yaml" <<'YAML'
labels: [rule]
decoders:
  - {type: ascii, label: rule}
YAML
for fmt in prometheus openmetrics json; do
	run_tcx "utf8_$fmt" --once --config "$WORK/utf8.yaml" --format "$fmt"
	expect_rc "utf8_$fmt" 0
done
# The text format: promtool takes it without a finding; each device is its own
# series, by the rule (q"b\\x\xff, \\xff, \xff), escaped for a label value.
if ! out=$(promtool check metrics <"$WORK/utf8_prometheus.out" 2>&1) || [ -n "$out" ]; then
	echo "$out" >&2
	fail "promtool check metrics rejects the text output"
fi
for want in 'dev="q\"b\\\\x\\xff"' 'dev="\\\\xff"' 'dev="\\xff"'; do
	[ "$(grep -cF "tc_action_bytes_total{$want,parent=\"ingress\"" "$WORK/utf8_prometheus.out")" = 1 ] ||
		fail "text output: not exactly one tc_action_bytes_total row with $want"
done
grep -qF 'cookie="5c786666",rule="\\\\xff"}' "$WORK/utf8_prometheus.out" ||
	fail "text output: the ascii decoder's \\xff is not written \\\\xff"
# All three outputs are valid UTF-8; OpenMetrics has the same rows as the
# text format (promtool cannot read OpenMetrics' info type); the JSON lines
# parse, and name the three devices apart.
"$PYTHON" - "$WORK" "$bad_name" <<'PY' || fail "an output is not valid (see above)"
import json, sys
work = sys.argv[1]
texts = {}
for fmt in ("prometheus", "openmetrics", "json"):
    raw = open(f"{work}/utf8_{fmt}.out", "rb").read()
    try:
        texts[fmt] = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        sys.exit(f"{fmt}: not UTF-8: {e}")
def samples(text):
    return sorted(l for l in text.splitlines() if l.startswith(("tc_action_", "tc_filter_")))
if samples(texts["prometheus"]) != samples(texts["openmetrics"]):
    sys.exit("OpenMetrics samples differ from the text format's")
if not texts["openmetrics"].endswith("# EOF\n"):
    sys.exit("OpenMetrics output does not end with # EOF")
devs = []
for line in texts["json"].splitlines():
    row = json.loads(line)
    devs.append(row["dev"])
    if row["labels"] != {"rule": "\\\\xff"}:
        sys.exit(f"json: labels {row['labels']!r}, expected the rule's \\\\xff")
want = sorted(['q"b\\\\x\\xff', "\\\\xff", "\\xff"])
if sorted(devs) != want:
    sys.exit(f"json: devices {sorted(devs)!r}, expected {want!r}")
PY
