#!/bin/bash
# The action times (issue #25), on the host's kernel, in a private network
# namespace: two u32 filters on v0's ingress with a mirred action each
# (cookies 01 and 02); traffic goes through the first in two bursts 2 s
# apart, the second sees none.
#
#   --once, JSON   every time equals `tc -s -j filter show`'s (installed,
#                  last_used, first_used: ages in whole seconds as of tc's
#                  read), read just before and just after it, within that
#                  rounding; the first use is the first burst's time and the
#                  last use the second's, each within the kernel's 10 ms
#                  ticks (and 20 ms for the clocks' reads); the last use is
#                  later than the first by the 2 s between the bursts; the
#                  rule without traffic has no first use, and its last use is
#                  its install time (the kernel's convention).
#   --once, text   the same times in tc_action_*_timestamp_seconds, and
#                  `promtool check metrics` has nothing to say.
#   OpenMetrics    with `families: {created: on}`, each action counter
#                  sample is followed by its _created, equal to the install
#                  time; without it (the default) there is none.
#   Prometheus     a real Prometheus (2.42) scrapes the daemon's OpenMetrics
#                  with _created: the target is up, it stores the times as
#                  exposed, and it stores tc_action_packets_created as a
#                  series of its own (what makes `created` off by default:
#                  2.42 has no created-timestamp ingestion, so every
#                  _created line is one more series).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc prometheus promtool
in_netns TCXD_LIVENESS_INSIDE -n

# ---- inside a private network namespace -----------------------------------------------
daemon_setup

note "topology: v0p -> v0 (clsact), u32 filters with mirred mirrors to m0"
veth m0 m0p
veth v0 v0p
ip addr add 10.6.0.1/24 dev v0p
for h in 2 3; do ip neigh add 10.6.0.$h lladdr 02:00:00:00:06:0$h dev v0p; done
tc qdisc add dev v0 clsact
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 \
	action mirred egress mirror dev m0 cookie 01
tc filter add dev v0 ingress pref 2 protocol ip u32 match ip dst 10.6.0.3/32 \
	action mirred egress mirror dev m0 cookie 02

now() { date +%s.%N; }
sleep 1.2 # ages of a second and more: tc's whole seconds say something
note "two bursts 2 s apart through cookie 01"
b1a=$(now)
traffic 10.6.0.2 5 100
b1b=$(now)
sleep 2
b2a=$(now)
traffic 10.6.0.2 5 100
b2b=$(now)
sleep 1.2

cat >"$WORK/once.yaml" <<'YAML'
targets:
  - {dev: v0, parent: ingress}
YAML
t0=$(now)
tc -s -j filter show dev v0 ingress >"$WORK/tc0.json"
t1=$(now)
"$TCX_BIN" --once --format json --config "$WORK/once.yaml" >"$WORK/once.json"
"$TCX_BIN" --once --config "$WORK/once.yaml" >"$WORK/once.prom"
t2=$(now)
tc -s -j filter show dev v0 ingress >"$WORK/tc1.json"
t3=$(now)

"$PYTHON" - "$WORK" "$t0" "$t1" "$t2" "$t3" "$b1a" "$b1b" "$b2a" "$b2b" <<'PY' ||
import json, re, sys
work = sys.argv[1]
t0, t1, t2, t3, b1a, b1b, b2a, b2b = map(float, sys.argv[2:])
TICK = 0.01   # USER_HZ
SLACK = 0.02  # the clocks' reads around the kernel's
errors = []

def tc_times(path):
    out = {}
    for f in json.load(open(path)):
        for a in f.get("options", {}).get("actions", []):
            out[a["cookie"]] = a
    return out

before, after = tc_times(work + "/tc0.json"), tc_times(work + "/tc1.json")
rows = {}
for line in open(work + "/once.json"):
    o = json.loads(line)
    if o["type"] == "action":
        rows[o["cookie"]] = o
if sorted(rows) != ["01", "02"]:
    sys.exit("action rows %s, expected cookies 01 and 02" % sorted(rows))

keys = {"installed": "installed", "last_used": "last_used", "first_used": "first_used"}
for cookie, row in sorted(rows.items()):
    for k in keys:
        v = row[k]
        # (tc 6.1 prints first_used only once there is one)
        if cookie == "02" and k == "first_used":
            if v is not None or before[cookie].get("first_used", 0) != 0:
                errors.append("02 never matched: first_used %r (tc %r)" %
                              (v, before[cookie].get("first_used")))
            continue
        if v is None:
            errors.append("%s: %s missing" % (cookie, k))
            continue
        # tc's ages are whole seconds (truncated) as of its read, between
        # t0 and t1 for the first read and t2 and t3 for the second.
        for tc, lo_t, hi_t in ((before, t0, t1), (after, t2, t3)):
            if k not in tc[cookie]:
                errors.append("%s: tc has no %s" % (cookie, k))
                continue
            age = tc[cookie][k]
            lo, hi = lo_t - age - 1 - SLACK, hi_t - age + SLACK
            if not lo <= v <= hi:
                errors.append("%s %s %.3f outside tc's [%.3f, %.3f] (age %s s)" %
                              (cookie, k, v, lo, hi, age))
u = rows["01"]
if u["first_used"] is not None and not b1a - SLACK <= u["first_used"] <= b1b + TICK + SLACK:
    errors.append("first use %.3f, the first burst was sent in [%.3f, %.3f]" %
                  (u["first_used"], b1a, b1b))
if not b2a - SLACK <= u["last_used"] <= b2b + TICK + SLACK:
    errors.append("last use %.3f, the second burst was sent in [%.3f, %.3f]" %
                  (u["last_used"], b2a, b2b))
if u["first_used"] is not None and not u["last_used"] - u["first_used"] >= 1.9:
    errors.append("last use %.3f not 2 s after the first %.3f" % (u["last_used"], u["first_used"]))
if u["packets"] != 10:
    errors.append("01 counted %d packets, 10 were sent" % u["packets"])
n = rows["02"]
if n["last_used"] != n["installed"]:
    errors.append("02 never matched: last_used %r, installed %r" % (n["last_used"], n["installed"]))

# the text exposition has the same times
prom = {}
for line in open(work + "/once.prom"):
    m = re.match(r'(tc_action_\w+_timestamp_seconds)\{.*cookie="(\w+)".*\} (\S+)$', line)
    if m:
        prom[(m.group(1), m.group(2))] = float(m.group(3))
for cookie, row in rows.items():
    for k in keys:
        fam = "tc_action_%s_timestamp_seconds" % k
        want = row[k]
        got = prom.get((fam, cookie))
        # the two --once runs read the clock apart: the same to 10 ms
        if (want is None) != (got is None) or (want is not None and abs(got - want) > TICK + SLACK):
            errors.append("%s{cookie=%s} %r in the text, %r in JSON" % (fam, cookie, got, want))
if errors:
    sys.exit("\n".join(errors))
print("times: 01 installed %.3f first %.3f last %.3f; bursts at %.3f and %.3f" %
      (u["installed"], u["first_used"], u["last_used"], b1a, b2a))
PY
	fail "the action times do not match the kernel's"
note "--once: every time agrees with tc -s -j and with when the traffic was sent"

promtool check metrics <"$WORK/once.prom" >"$WORK/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$WORK/promtool.out")"
[ ! -s "$WORK/promtool.out" ] || fail "promtool check metrics: $(cat "$WORK/promtool.out")"

note "OpenMetrics: _created with families {created: on} only"
"$TCX_BIN" --once --format openmetrics --config "$WORK/once.yaml" >"$WORK/off.om"
! grep -q '_created' "$WORK/off.om" || fail "_created without families {created: on}"
cat >"$WORK/created.yaml" <<'YAML'
targets:
  - {dev: v0, parent: ingress}
families: {created: on}
YAML
"$TCX_BIN" --once --format openmetrics --config "$WORK/created.yaml" >"$WORK/on.om"
"$PYTHON" - "$WORK/on.om" <<'PY' || fail "OpenMetrics _created does not follow each counter sample with the install time"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
installed, created, last = {}, 0, None
for l in lines:
    m = re.match(r'tc_action_installed_timestamp_seconds(\{.*\}) (\S+)$', l)
    if m:
        installed[m.group(1)] = m.group(2)
for i, l in enumerate(lines):
    m = re.match(r'(tc_action_\w+)_created(\{.*\}) (\S+)$', l)
    if not m:
        continue
    created += 1
    prev = re.match(r'(tc_action_\w+)_total(\{.*\}) \S+$', lines[i - 1])
    if not prev or prev.group(1) != m.group(1) or prev.group(2) != m.group(2):
        sys.exit("line %d: %s does not follow its counter sample" % (i + 1, l))
    if installed.get(m.group(2)) != m.group(3):
        sys.exit("line %d: _created %s, installed %s" % (i + 1, m.group(3), installed.get(m.group(2))))
# bytes, packets, drops, overlimits (hw_* are off while zero) of 2 rows
if created != 8:
    sys.exit("%d _created samples, expected 8" % created)
PY

note "a real Prometheus scrapes the daemon's OpenMetrics with _created"
read -r port_tcx port_prom < <(free_ports 2)
{
	cat "$WORK/created.yaml"
	printf 'interval: 1s\nhttp:\n  listen: ["127.0.0.1:%s"]\n' "$port_tcx"
} >"$WORK/daemon.yaml"
start_tcx tcx "$WORK/daemon.yaml"
wait_http 200 30 "http://127.0.0.1:$port_tcx/metrics"
start_prometheus "$port_prom" "127.0.0.1:$port_tcx"
"$PYTHON" - "$PROM" "$WORK/once.json" <<'PY' || fail "Prometheus did not store what the daemon exposed"
import json, os, sys, time
sys.path.insert(0, os.environ["TCX_TESTLIB"])
import prom
p = prom.Prom(sys.argv[1])
rows = {}
for line in open(sys.argv[2]):
    o = json.loads(line)
    if o["type"] == "action":
        rows[o["cookie"]] = o
deadline = time.time() + 30
while True:
    up = p.values('up{job="tcx"}', ["job"])
    inst = p.values("tc_action_installed_timestamp_seconds", ["cookie"])
    created = p.values("tc_action_packets_created", ["cookie"])
    if up.get(("tcx",)) == 1 and len(inst) == 2 and len(created) == 2:
        break
    if time.time() > deadline:
        sys.exit("after 30 s: up %s, installed %s, packets_created %s" % (up, inst, created))
    time.sleep(0.5)
for (cookie,), v in inst.items():
    # the daemon's own full dump: the same install time to a tick
    if abs(v - rows[cookie]["installed"]) > 0.03:
        sys.exit("cookie %s: Prometheus has installed %.3f, --once %.3f" % (cookie, v, rows[cookie]["installed"]))
    if abs(created[(cookie,)] - v) > 1e-6:
        sys.exit("cookie %s: tc_action_packets_created %.3f, installed %.3f" % (cookie, created[(cookie,)], v))
targets = p.get("/api/v1/targets")["activeTargets"]
if any(t["health"] != "up" or t["lastError"] for t in targets):
    sys.exit("targets: %s" % targets)
print("Prometheus: up, 2 install times, 2 tc_action_packets_created series")
PY
note "Prometheus 2.42 stores each _created line as a series of its own"
stop_tcx "$TCX_PID" tcx 10
