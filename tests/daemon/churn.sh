#!/bin/bash
# Issue #11's proof that the aggregates stay exact while rules churn, as a
# software switch churns them: a daemon in a private namespace collects
# every second (`aggregate: {by: [tenant, rule]}`), a real Prometheus 2.42
# scrapes it every second, and for CHURN_SECONDS (60):
#
#   - a sender writes UDP datagrams out of a1 (tests/lib/udp_raw.py), round
#     robin over four ports, and counts the bytes the device took (the IP
#     length: what a filter on the peer's ingress counts);
#   - a0's ingress has one u32 filter per port, each with a cookie (four
#     cookies, three aggregates), and a loop replaces each filter every
#     200 ms, make-before-break: the new one is added at the other pref of
#     its pair, then the old one deleted by handle (`tc filter del dev a0
#     ingress pref P handle H u32`). Every packet is counted by exactly one
#     filter: the first that matches ends the classification (mirred mirror
#     returns pipe), and there is always one.
#
# Each filter lives 200 ms and the daemon collects every second, so most of
# the bytes are counted by filters that are deleted before a collection sees
# their last counters: only the final counters of the deletion notifications
# (RTM_DELTFILTER, which a by-handle delete sends) make the sums exact.
# The kernel gives the new filter of every other round the identity of the
# one deleted the round before: the same pref, u32 handle (800::800, the
# lowest free) and action index (the lowest free), with counters from 0.
# At the end, once a collection and a scrape saw the last counters, for each
# aggregate, from Prometheus: the last value minus the value before the run
# must be what the sender sent within 0.5%, and resets() over the run 0. The
# figures (sent, counted, ratio, increase()) are printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc prometheus
in_netns TCX_CHURN_NS
daemon_setup

CHURN_SECONDS=${TCX_CHURN_SECONDS:-60}
PERIOD_MS=200
RATE=2000 # datagrams a second, in all
# The filters: port, IP packet size, cookie; the pref pair of filter i is
# 10+i and 20+i.
ports=(2001 2002 2003 2004)
sizes=(1000 400 1400 700)
cookies=(c1 c2 c3 c4)

veth a0 a1
veth mon0 mon1
tc qdisc add dev a0 clsact
# filter_line PREF I: the tc -batch line that adds filter I at PREF.
filter_line() {
	echo "filter add dev a0 ingress pref $1 protocol ip u32 match ip dport ${ports[$2]} 0xffff" \
		"action mirred egress mirror dev mon0 cookie ${cookies[$2]}"
}
for i in "${!ports[@]}"; do filter_line $((10 + i)) "$i"; done >"$WORK/add.batch"
tc -batch "$WORK/add.batch" || fail "adding the filters failed"

note "calibration: each filter counts the IP length of what the sender sent"
args=()
for i in "${!ports[@]}"; do args+=("${ports[$i]}:${sizes[$i]}:10"); done
calib=$(udp_raw a1 "${args[@]}")
tc -s -j filter show dev a0 ingress >"$WORK/calib.json"
"$PYTHON" - "$WORK/calib.json" "$calib" "${ports[*]}" "${cookies[*]}" <<'PY' ||
import json, sys
sent = json.loads(sys.argv[2])
got = {}
for f in json.load(open(sys.argv[1])):
    for a in f.get("options", {}).get("actions", []):
        got[a["cookie"]] = (a["stats"]["packets"], a["stats"]["bytes"])
want = {c: (sent[p]["packets"], sent[p]["bytes"])
        for p, c in zip(sys.argv[3].split(), sys.argv[4].split())}
if got != want:
    raise SystemExit("tc -s: %r, the sender sent %r (cookie: packets, bytes)" % (got, want))
PY
	fail "the kernel's counters are not what was sent (above)"

read -r port port_prom < <(free_ports 2)
cat >"$WORK/churn.yaml" <<EOF
interval: 1s
targets: [{dev: a0, parent: ingress}]
labels: [tenant, rule]
cookies:
  "c1": [acme, dns]
  "c2": [acme, dns]
  "c3": [acme, web]
  "c4": [beta, web]
aggregate: {by: [tenant, rule]}
http: {listen: "127.0.0.1:$port"}
EOF
url=http://127.0.0.1:$port/metrics
start_tcx tcx "$WORK/churn.yaml"
wait_http 200 10 "$url"
start_prometheus "$port_prom" "127.0.0.1:$port"

# check.py MODE ...: what Prometheus has, against the daemon and the sender.
cat >"$WORK/check.py" <<'PY'
import json, os, re, sys, time, urllib.request
sys.path.insert(0, os.environ["TCX_TESTLIB"])
import prom
p, url, mode, args = prom.Prom(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
FAMS = ("tc_action_bytes_total", "tc_action_packets_total")
AGGS = [("acme", "dns"), ("acme", "web"), ("beta", "web")]
PORTS = {"2001": ("acme", "dns"), "2002": ("acme", "dns"), "2003": ("acme", "web"),
         "2004": ("beta", "web")}

def daemon():
    """{(family, tenant, rule): value} of the daemon's /metrics (text)."""
    with urllib.request.urlopen(url, timeout=5) as r:
        body = r.read().decode()
    out = {}
    for m in re.finditer(r'^(tc_action_\w+)\{tenant="(\w*)",rule="(\w*)"\} (\d+)$', body, re.M):
        out[(m.group(1), m.group(2), m.group(3))] = int(m.group(4))
    return out

def prometheus(at=None, fams=FAMS):
    out = {}
    for f in fams:
        for (t, r), v in p.values(f, ["tenant", "rule"], at).items():
            out[(f, t, r)] = int(v)
    return out

last = {}
def same():
    """Prometheus's latest samples are the daemon's values, every target up."""
    global last
    d = {k: v for k, v in daemon().items() if k[0] in FAMS}
    last = {"daemon": d, "prometheus": prometheus()}
    return len(d) == len(FAMS) * len(AGGS) and d == last["prometheus"] and p.healthy() and d

if mode == "synced":
    # synced SECONDS: waits until Prometheus has the daemon's values, prints the time.
    prom.wait(float(args[0]), same, lambda: "Prometheus and the daemon differ: %r" % last)
    print("%.3f" % time.time())
elif mode == "final":
    # final T0 SENT_JSON: per aggregate, Prometheus's last value minus its
    # value at T0 is what the sender sent, within 0.5%; no resets().
    t0, sent_ports = float(args[0]), json.loads(args[1])
    end = prom.wait(30, same, lambda: "Prometheus and the daemon differ: %r" % last)
    base = prometheus(at=t0)
    r = "%ds" % (int(time.time() - t0) + 5)
    resets = {f: p.values("resets(%s[%s])" % (f, r), ["tenant", "rule"]) for f in FAMS}
    incr = p.values("increase(tc_action_bytes_total[%s])" % r, ["tenant", "rule"])
    n = p.values("count_over_time(tc_action_bytes_total[%s])" % r, ["tenant", "rule"])
    sent = {(f, t, rl): 0 for f in FAMS for t, rl in AGGS}
    for port, v in sent_ports.items():
        t, rl = PORTS[port]
        sent[("tc_action_bytes_total", t, rl)] += v["bytes"]
        sent[("tc_action_packets_total", t, rl)] += v["packets"]
    bad = []
    print("%-14s %-24s %12s %12s %8s %14s %7s %7s" % ("aggregate", "family", "sent", "counted",
          "ratio", "increase()", "resets", "samples"))
    for f in FAMS:
        for t, rl in AGGS:
            k = (f, t, rl)
            counted = end[k] - base.get(k, 0)
            ratio = counted / sent[k] if sent[k] else float("nan")
            rs = int(resets[f].get((t, rl), -1))
            print("%-14s %-24s %12d %12d %8.4f %14s %7d %7d" % (
                t + "/" + rl, f, sent[k], counted, ratio,
                "%.0f" % incr[(t, rl)] if f == FAMS[0] and (t, rl) in incr else "-",
                rs, int(n.get((t, rl), 0))))
            if k not in base:
                bad.append("%s: no sample before the run" % (k,))
            if not sent[k] or abs(counted - sent[k]) > 0.005 * sent[k]:
                bad.append("%s/%s %s: counted %d, sent %d (ratio %.4f, not within 0.5%%)" % (
                    t, rl, f, counted, sent[k], ratio))
            if rs != 0:
                bad.append("%s/%s %s: resets() %d over the run" % (t, rl, f, rs))
    if bad:
        raise SystemExit("\n".join(bad))
else:
    raise SystemExit("unknown mode " + mode)
PY
check() { "$PYTHON" "$WORK/check.py" "$PROM" "$url" "$@"; }

# churn SECONDS: replaces each filter every PERIOD_MS, make-before-break
# (see the header); the number of rounds into $WORK/rounds.
churn() {
	local end now next round=0 i new old h
	local -a pref
	for i in "${!ports[@]}"; do pref[i]=$((10 + i)); done
	now=$(date +%s%N)
	end=$((now + $1 * 1000000000))
	next=$now
	while [ "$now" -lt "$end" ]; do
		for i in "${!ports[@]}"; do
			filter_line $((pref[i] == 10 + i ? 20 + i : 10 + i)) "$i"
		done >"$WORK/churn-add.batch"
		tc -batch "$WORK/churn-add.batch"
		# the handle of the knode at each old pref ("... pref P u32 ... fh H order ...")
		tc filter show dev a0 ingress >"$WORK/churn.show"
		for i in "${!ports[@]}"; do
			old=${pref[i]}
			new=$((old == 10 + i ? 20 + i : 10 + i))
			h=$(awk -v p="$old" '$5 == p && / fh [0-9a-f]+::[0-9a-f]+ order / {
				for (f = 1; f < NF; f++) if ($f == "fh") print $(f + 1) }' "$WORK/churn.show")
			[ -n "$h" ] || {
				cat "$WORK/churn.show" >&2
				echo "no filter at pref $old (round $round)" >&2
				return 1
			}
			echo "filter del dev a0 ingress pref $old handle $h u32"
			pref[i]=$new
		done >"$WORK/churn-del.batch"
		tc -batch "$WORK/churn-del.batch"
		round=$((round + 1))
		next=$((next + PERIOD_MS * 1000000))
		now=$(date +%s%N)
		if [ "$next" -gt "$now" ]; then
			sleep "$(printf '0.%09d' $((next - now)))"
			now=$(date +%s%N)
		fi
	done
	echo "$round" >"$WORK/rounds"
}

note "Prometheus scrapes the aggregates (the calibration's packets) before the run"
t0=$(check synced 60) || fail "Prometheus does not scrape the daemon: $t0"
c0=$(collections "$url")

note "$CHURN_SECONDS s: $RATE datagrams/s through 4 filters, each replaced every $PERIOD_MS ms"
churn "$CHURN_SECONDS" >"$WORK/churn.out" 2>"$WORK/churn.err" &
churn_pid=$!
BG_PIDS+=("$churn_pid")
args=()
for i in "${!ports[@]}"; do args+=("${ports[$i]}:${sizes[$i]}"); done
sent=$(udp_raw a1 --for "$CHURN_SECONDS" --rate "$RATE" "${args[@]}")
wait "$churn_pid" || fail "the churn loop failed: $(tail -n 20 "$WORK/churn.err")"
rounds=$(cat "$WORK/rounds")
c1=$(collections "$url")
note "sent $sent; $rounds rounds of replacements ($((rounds * ${#ports[@]})) filters replaced), $((c1 - c0)) collections"
[ "$rounds" -ge $((CHURN_SECONDS * 1000 / PERIOD_MS / 2)) ] ||
	fail "only $rounds rounds of replacements in $CHURN_SECONDS s (one every $PERIOD_MS ms wanted)"
alive "$TCX_PID" tcx

note "after a collection and a scrape of the last counters: Prometheus against the sender"
deadline=$((SECONDS + 20))
until [ "$(collections "$url")" -ge $((c1 + 2)) ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the daemon stopped collecting"
	sleep 0.2
done
check final "$t0" "$sent" || fail "the aggregates are not what was sent (above)"
stop_tcx "$TCX_PID" tcx 10
note "churn: all checks passed in $(elapsed_ms) ms"
