#!/bin/bash
# Rate estimators (issue #24): where the kernel keeps one (a class made with
# `estimator`), tc_class_rate_bytes_per_second and
# tc_class_rate_packets_per_second carry it, and the JSON class line has
# rate_bytes_per_second and rate_packets_per_second; a class or qdisc
# without one has no such series and no such key (never a 0).
#
# r0 egress: HTB 1: -> 1:1 (no estimator) -> 1:10 (estimator 250ms 1sec),
# both at rate and ceil 1mbit (125,000 bytes/s); datagrams flood 1:10 for
# 4 s, so that it sends at its ceil: the estimate, read while the flood
# goes on, is within 5% of 125,000 bytes/s and of what tc -s prints, and
# its packets/s within 5% of bytes/s over the frame size.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc
find_python
in_netns TCX_RATE_EST_IN_NETNS
make_workdir

sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
ip link add r0 type veth peer name r1
ip link set r0 up
ip link set r1 up
ip addr add 10.77.0.1/24 dev r0
ip neigh add 10.77.0.2 lladdr 02:00:00:00:00:02 dev r0
tc qdisc add dev r0 root handle 1: htb default 10
tc class add dev r0 parent 1: classid 1:1 htb rate 1mbit ceil 1mbit quantum 1514
tc class add dev r0 parent 1:1 classid 1:10 estimator 250ms 1sec htb rate 1mbit ceil 1mbit \
	quantum 1514
printf 'targets: [{all: true}]\n' >"$WORK/c.yaml"

run_tcx idle --once --config "$WORK/c.yaml"
expect_rc idle 0
grep -q '^tc_class_rate_bytes_per_second{.*handle="1:10"' "$WORK/idle.out" ||
	fail "no rate series for 1:10, which has an estimator"
! grep -qE '^tc_(class|qdisc)_rate_[a-z_]+\{.*handle="1:(1)?"' "$WORK/idle.out" ||
	fail "a rate series for 1:1 or 1:, which have no estimator: $(grep _rate_ "$WORK/idle.out")"

note "a flood of 1:10 (972-byte datagrams: 1014-byte frames) for 4 s"
"$PYTHON" - <<'PY' &
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 6
while time.time() < end:
    try:
        s.sendto(b"x" * 972, ("10.77.0.2", 9))
    except OSError:
        time.sleep(0.001)  # the queue is full
PY
flood=$!
sleep 4
run_tcx text --once --config "$WORK/c.yaml"
run_tcx json --once --config "$WORK/c.yaml" --format json
tc -s class show dev r0 classid 1:10 >"$WORK/tc.txt"
wait "$flood"
expect_rc text 0
expect_rc json 0
"$PYTHON" - "$WORK/text.out" "$WORK/json.out" "$WORK/tc.txt" <<'PY' || fail "the rate estimates (see above)"
import json, re, sys
text, tc = open(sys.argv[1]).read(), open(sys.argv[3]).read()
bad = []
def one(fam):
    v = re.findall(r'^%s\{[^}]*handle="1:10"[^}]*\} (\S+)$' % fam, text, re.M)
    return float(v[0]) if len(v) == 1 else None
bps, pps = one("tc_class_rate_bytes_per_second"), one("tc_class_rate_packets_per_second")
m = re.search(r"rate (\d+(?:\.\d+)?)([KMG]?)bit (\d+)pps", tc)
if bps is None or pps is None or not m:
    sys.exit("no estimate: text %r %r, tc %r" % (bps, pps, tc))
tc_bps = float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)] / 8
print("1:10: %.0f bytes/s, %.1f packets/s; tc: %.0f bytes/s, %s pps; the ceil: 125000 bytes/s"
      % (bps, pps, tc_bps, m.group(3)))
for what, v, ref in (("bytes/s against the ceil", bps, 125000.0),
                     ("bytes/s against tc's", bps, tc_bps),
                     ("packets/s against bytes/s / 1014", pps, bps / 1014)):
    if abs(v - ref) > 0.05 * ref:
        bad.append("%s: %.1f, expected %.1f within 5%%" % (what, v, ref))
rows = {o["handle"]: o for o in map(json.loads, open(sys.argv[2])) if o["type"] == "class"}
if "rate_bytes_per_second" not in rows.get("1:10", {}) or "rate_bytes_per_second" in rows.get("1:1", {"rate_bytes_per_second": 0}):
    bad.append("JSON: 1:10 %r, 1:1 %r" % (rows.get("1:10"), rows.get("1:1")))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
note "rate_est: all checks passed"
