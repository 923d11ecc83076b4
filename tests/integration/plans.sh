#!/bin/bash
# Plans as gauges (issue #24): what an HTB tree with a tbf leaf was
# configured to do equals what tc -d prints of it, in bytes and bytes per
# second: every HTB class's rate, ceil (a 6gbit one: the 64-bit attribute),
# burst and cburst (bytes, truncated as tc does: "burst 15k" is 15337b),
# quantum, level and prio (tc prints prio of leaves only); the HTB qdisc's
# r2q, default class, direct_packets_stat and direct_qlen; tbf's rate,
# burst, limit, peak rate and mtu. Text and JSON carry the same values;
# `families: {plans: off}` writes none; promtool finds nothing to say.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc promtool
find_python
in_netns TCX_PLANS_IN_NETNS
make_workdir

ip link add p0 type veth peer name p1
tc qdisc add dev p0 root handle 1: htb default 10 r2q 10
tc class add dev p0 parent 1: classid 1:1 htb rate 100mbit ceil 200mbit burst 15k cburst 3000 \
	prio 2 quantum 1514
tc class add dev p0 parent 1:1 classid 1:10 htb rate 5mbit ceil 6gbit prio 3
tc class add dev p0 parent 1:1 classid 1:20 htb rate 1mbit
tc qdisc add dev p0 parent 1:10 handle 10: tbf rate 1mbit burst 10k limit 30000 peakrate 2mbit \
	mtu 1600
tc qdisc add dev p0 parent 1:20 handle 20: tbf rate 8mbit burst 20k limit 50000
tc -d class show dev p0 >"$WORK/class.txt"
tc -d qdisc show dev p0 >"$WORK/qdisc.txt"
printf 'targets: [{all: true}]\n' >"$WORK/c.yaml"
run_tcx text --once --config "$WORK/c.yaml"
expect_rc text 0
run_tcx json --once --config "$WORK/c.yaml" --format json
expect_rc json 0
out=$(promtool check metrics <"$WORK/text.out" 2>&1) || fail "promtool: $out"
[ -z "$out" ] || fail "promtool: $out"

"$PYTHON" - "$WORK" <<'PY' || fail "the plans differ from tc -d (see above)"
import json, re, sys
w = sys.argv[1]
UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
def rate(s):  # tc's "5Mbit" in bytes per second
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)bit", s)
    return int(float(m.group(1)) * UNIT[m.group(2)] / 8)
def size(s):  # tc's "1600b", "10Kb" (1024), "15337b/1"
    m = re.fullmatch(r"(\d+)(K|M)?b(?:/\d+)?", s)
    return int(m.group(1)) * {None: 1, "K": 1024, "M": 1024 * 1024}[m.group(2)]
want = {}
for line in open(w + "/class.txt"):
    f = line.split()
    if f[:2] != ["class", "htb"]:
        continue
    d = dict(zip(f[::1], f[1::1]))
    h = f[2]
    want[("class", "htb", h, "rate_bytes_per_second")] = rate(d["rate"])
    want[("class", "htb", h, "ceil_bytes_per_second")] = rate(d["ceil"])
    want[("class", "htb", h, "burst_bytes")] = size(d["burst"])
    want[("class", "htb", h, "cburst_bytes")] = size(d["cburst"])
    want[("class", "htb", h, "level")] = int(d["level"])
    if "prio" in d:  # tc prints it and the quantum for leaves only
        want[("class", "htb", h, "prio")] = int(d["prio"])
        want[("class", "htb", h, "quantum_bytes")] = int(d["quantum"])
for line in open(w + "/qdisc.txt"):
    f = line.split()
    d = dict(zip(f, f[1:]))
    h = f[2]
    if f[1] == "htb":
        want[("qdisc", "htb", h, "r2q")] = int(d["r2q"])
        want[("qdisc", "htb", h, "default_class")] = int(d["default"], 16)
        want[("qdisc", "htb", h, "direct_packets_total")] = int(d["direct_packets_stat"])
        want[("qdisc", "htb", h, "direct_qlen_packets")] = int(d["direct_qlen"])
    elif f[1] == "tbf":
        want[("qdisc", "tbf", h, "rate_bytes_per_second")] = rate(d["rate"])
        want[("qdisc", "tbf", h, "burst_bytes")] = size(d["burst"])
        if "peakrate" in d:
            want[("qdisc", "tbf", h, "peakrate_bytes_per_second")] = rate(d["peakrate"])
            want[("qdisc", "tbf", h, "mtu_bytes")] = size(d["mtu"])
# tc prints tbf's limit as a latency: the configured bytes
want[("qdisc", "tbf", "10:", "limit_bytes")] = 30000
want[("qdisc", "tbf", "20:", "limit_bytes")] = 50000
got, bad = {}, []
for m in re.finditer(r'^tc_(qdisc|class)_(htb|tbf)_(\w+)\{device="p0",kind="\w+",handle="([^"]+)"[^}]*\} (\d+)$',
                     open(w + "/text.out").read(), re.M):
    t, k, field, h, v = m.groups()
    if field.startswith(("lends", "borrows", "giants", "tokens", "ctokens")):
        continue
    got[(t, k, h, field)] = int(v)
for k in sorted(set(want) | set(got)):
    if k not in got:
        bad.append("%r: tc -d says %r, tcexporter nothing" % (k, want[k]))
    elif k in want and got[k] != want[k]:
        bad.append("%r: tcexporter %r, tc -d %r" % (k, got[k], want[k]))
    elif k not in want and k[3] not in ("prio", "quantum_bytes"):
        bad.append("%r: tcexporter %r, tc -d prints nothing" % (k, got[k]))
if got.get(("class", "htb", "1:1", "prio")) != 2 or got.get(("class", "htb", "1:1", "quantum_bytes")) != 1514:
    bad.append("1:1's prio and quantum: %r %r, configured 2 and 1514" % (
        got.get(("class", "htb", "1:1", "prio")), got.get(("class", "htb", "1:1", "quantum_bytes"))))
if ("qdisc", "tbf", "20:", "peakrate_bytes_per_second") in got or ("qdisc", "tbf", "20:", "mtu_bytes") in got:
    bad.append("20: has no peak rate, but a peak rate or mtu series")
# JSON: the same values under "plans"
for o in map(json.loads, open(w + "/json.out")):
    if o["type"] not in ("qdisc", "class") or o["kind"] not in ("htb", "tbf") or o["device"] != "p0":
        continue
    for field, v in o.get("plans", {}).items():
        key = field + "_total" if field == "direct_packets" else field
        if got.get((o["type"], o["kind"], o["handle"], key)) != v:
            bad.append("json %s %s %s: %r, text %r" % (o["type"], o["handle"], field, v,
                                                       got.get((o["type"], o["kind"], o["handle"], key))))
print("%d plan series, %d compared with tc -d" % (len(got), len(want)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

note "families: {plans: off} writes none"
printf 'targets: [{all: true}]\nfamilies: {plans: off}\n' >"$WORK/off.yaml"
run_tcx off --once --config "$WORK/off.yaml"
expect_rc off 0
! grep -qE '^tc_(class|qdisc)_(htb_(rate|ceil|burst|cburst|prio|quantum|level|r2q|default|direct)|tbf_)' "$WORK/off.out" ||
	fail "plans: off still writes plan series"
grep -q '^tc_class_htb_lends_total{' "$WORK/off.out" || fail "plans: off dropped the xstats too"
note "plans: all checks passed"
