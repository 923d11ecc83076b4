#!/bin/bash
# `aggregate: {by: [tenant, rule]}`: a daemon in a namespace, u32 filters with
# cookies, traffic from a sender that counts what it sends. Filters are
# deleted and replaced (which resets their counters) between scrapes: no
# aggregate ever goes down from one scrape to the next, and each ends at
# what was sent through its filters; a real Prometheus scraping it all along
# (OpenMetrics) sees no resets() and the same sums.
# Both formats pass their checks (promtool for the text; OpenMetrics, with
# `families: {created: on}`: every _total followed by its _created, # EOF); hw: auto exports no hw_* series
# on a kernel without offload; max_series leaves rows out and counts them;
# --once prints the sums of the current rows; a SIGHUP that maps a cookie
# elsewhere moves its row, leaving what it counted in the old aggregate.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

require_bin
require_root
require_cmd curl tc ip promtool prometheus
find_python
in_netns TCX_AGGREGATE_NS
daemon_setup

ip link add a0 type veth peer name a1
ip link add mon0 type veth peer name mon1
for d in a0 a1 mon0 mon1; do ip link set "$d" up; done
tc qdisc add dev a0 clsact
# handle_of PREF: the handle of the u32 filter at PREF (each pref has its
# own hash table, numbered by the kernel).
handle_of() {
	tc filter show dev a0 ingress pref "$1" | sed -n 's/.* fh \([0-9a-f]*::[0-9a-f]*\) .*/\1/p' | head -n 1
}
# filt PREF DPORT COOKIE [replace]: a u32 filter on a0's ingress for UDP to
# DPORT, mirroring to mon0 (whose peer drops it), tagged with COOKIE; or the
# one at PREF replaced by a new one (new actions: counters from 0).
filt() {
	local how=(add)
	[ "${4:-}" != replace ] || how=(replace handle "$(handle_of "$1")")
	tc filter "${how[@]}" dev a0 ingress pref "$1" protocol ip u32 \
		match ip dport "$2" 0xffff action mirred egress mirror dev mon0 cookie "$3"
}
# unfilt PREF: delete the filter at PREF by its handle.
unfilt() {
	tc filter del dev a0 ingress pref "$1" handle "$(handle_of "$1")" u32
}
filt 10 1001 01
filt 20 1002 02
filt 30 1003 03

read -r port port_prom < <(free_ports 2)
cat >"$WORK/agg.yaml" <<EOF
interval: 200ms
targets: [{dev: a0, parent: ingress}]
labels: [tenant, rule]
cookies:
  "01": [acme, dns]
  "02": [acme, dns]
  "03": [beta, web]
aggregate: {by: [tenant, rule]}
families: {hw: auto, created: on}
http: {listen: "127.0.0.1:$port"}
EOF

declare -A sent=([dns]=0 [web]=0)
# send DPORT COUNT: COUNT UDP packets of the same size into a0 (from a1).
send() {
	udp_raw a1 "$1:32:$2" >/dev/null
	case $1 in 1001 | 1002) sent[dns]=$((sent[dns] + $2)) ;; 1003) sent[web]=$((sent[web] + $2)) ;; esac
}

url=http://127.0.0.1:$port/metrics
start_tcx tcx "$WORK/agg.yaml"
wait_http 200 10 "$url"

# A real Prometheus scrapes the daemon every second (OpenMetrics, as it
# negotiates) for the whole run: at the end, its resets() of every aggregate
# must be 0 and its latest values what was sent.
start_prometheus "$port_prom" "127.0.0.1:$port"
# prom_check.py BASE SECONDS DNS WEB: waits until Prometheus's latest packets of
# acme/dns and beta/web are DNS and WEB (the aggregates exist, but hold
# nothing yet: 0 0), with the target up and no scrape error; then resets()
# of every aggregate over the run must be 0.
cat >"$WORK/prom_check.py" <<'PY'
import os, sys
sys.path.insert(0, os.environ["TCX_TESTLIB"])
import prom
p, secs, want = prom.Prom(sys.argv[1]), float(sys.argv[2]), {"dns": int(sys.argv[3]), "web": int(sys.argv[4])}
got = {}
def ready():
    global got
    got = {k[0]: int(v) for k, v in p.values("tc_action_packets_total", ["rule"]).items()}
    return got == want and p.healthy()
prom.wait(secs, ready, lambda: "Prometheus: packets %r, expected %r; targets %r" % (
    got, want, p.target_errors()))
query = p.query
res = query("resets(tc_action_packets_total[10m]) > 0 or resets(tc_action_bytes_total[10m]) > 0")
if res:
    raise SystemExit("Prometheus saw resets: %r" % res)
n = query("count_over_time(tc_action_packets_total[10m])")
print("Prometheus: %s, no resets over %s samples" % (got, [int(float(r["value"][1])) for r in n]))
created = query("tc_action_packets_created")
if len(created) != 2:
    raise SystemExit("Prometheus has %d tc_action_packets_created series, expected 2" % len(created))
PY
"$PYTHON" "$WORK/prom_check.py" "$PROM" 60 0 0 >/dev/null || fail "Prometheus does not scrape the daemon"

# scrape_checked NAME: the text exposition into $WORK/NAME.prom, checked: the tc_action
# series carry tenant and rule only, and no aggregate went down since the
# previous scrape.
n_scrapes=0
scrape_checked() {
	curl -sf --max-time 5 "$url" >"$WORK/$1.prom" || fail "scrape $1 failed"
	n_scrapes=$((n_scrapes + 1))
	"$PYTHON" - "$WORK/$1.prom" "$WORK/last.json" <<'PY' || fail "scrape $1: see above"
import json, os, re, sys
path, last_path = sys.argv[1], sys.argv[2]
vals, bad = {}, []
for line in open(path):
    # the action times (an aggregate's: earliest install, latest last use)
    # are not counters: their labels are checked, not their values
    t = re.match(r'^tc_action_\w+_timestamp_seconds\{(.*)\} \d+(\.\d+)?$', line)
    m = re.match(r'^(tc_action_\w+)\{(.*)\} (\d+)$', line)
    if not m and not t:
        if line.startswith("tc_action_"):
            bad.append("unexpected line: " + line.strip())
        continue
    labels = dict(re.findall(r'(\w+)="([^"]*)"', (t or m).group(1 if t else 2)))
    if set(labels) != {"tenant", "rule"}:
        bad.append("labels other than tenant, rule: " + line.strip())
    if m and not t:
        vals["%s/%s/%s" % (m.group(1), labels.get("tenant"), labels.get("rule"))] = int(m.group(3))
last = json.load(open(last_path)) if os.path.exists(last_path) else {}
for k, v in last.items():
    if k not in vals:
        bad.append("%s vanished (was %d)" % (k, v))
    elif vals[k] < v:
        bad.append("%s went down: %d -> %d" % (k, v, vals[k]))
json.dump(vals, open(last_path, "w"))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
# value NAME FAMILY TENANT RULE
value() {
	metric_value "$WORK/$1.prom" "$2{tenant=\"$3\",rule=\"$4\"}"
}
# settle: waits for two collections to start after now (the daemon's own
# tc_exporter_collections_total), so that a scrape shows what happened.
settle() {
	local c0 deadline=$((SECONDS + 20))
	c0=$(collections "$url")
	until [ "$(collections "$url")" -ge $((c0 + 2)) ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "the daemon stopped collecting"
		sleep 0.1
	done
}

note "the aggregates, with the kept labels only, and no hw_* series (hw: auto)"
send 1001 5
send 1002 7
send 1003 3
settle
scrape_checked s1
[ "$(value s1 tc_action_packets_total acme dns)" = 12 ] || fail "acme/dns: $(value s1 tc_action_packets_total acme dns) packets, sent 12"
[ "$(value s1 tc_action_packets_total beta web)" = 3 ] || fail "beta/web: $(value s1 tc_action_packets_total beta web) packets, sent 3"
bytes=$(value s1 tc_action_bytes_total beta web)
if [ "$bytes" -le 0 ] || [ $((bytes % 3)) != 0 ]; then fail "beta/web: $bytes bytes for 3 packets"; fi
per_packet=$((bytes / 3))
[ "$(grep -c '^tc_action_bytes_total{' "$WORK/s1.prom")" = 2 ] || fail "not 2 aggregates: $(grep '^tc_action_bytes_total{' "$WORK/s1.prom")"
! grep -q '^tc_action_hw_' "$WORK/s1.prom" || fail "hw: auto exported hw_* series without hardware counters"
! grep -q '^tc_filter_flags_info' "$WORK/s1.prom" || fail "tc_filter_flags_info exported with aggregate"
promtool check metrics <"$WORK/s1.prom" >"$WORK/promtool.out" 2>&1 ||
	{ cat "$WORK/promtool.out" >&2; fail "promtool check metrics: findings on the text exposition"; }

note "OpenMetrics: each _total followed by its _created, # EOF"
curl -sf --max-time 5 -H 'Accept: application/openmetrics-text;version=1.0.0' "$url" >"$WORK/s1.om" ||
	fail "OpenMetrics scrape failed"
"$PYTHON" - "$WORK/s1.om" <<'PY' || fail "OpenMetrics exposition: see above"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-2:] == ["# EOF", ""], "no # EOF at the end"
n = 0
for i, l in enumerate(lines):
    m = re.match(r'^(tc_action_\w+)_total(\{[^}]*\}) \d+$', l)
    if not m:
        continue
    c = re.match(r'^(tc_action_\w+)_created(\{[^}]*\}) (\d+(\.\d+)?)$', lines[i + 1])
    assert c and c.group(1) == m.group(1) and c.group(2) == m.group(2), \
        "line %d: %r not followed by its _created (%r)" % (i + 1, l, lines[i + 1])
    assert float(c.group(3)) > 1e9, "line %d: _created %s" % (i + 2, c.group(3))
    n += 1
assert n == 8, "%d _total series, expected 8 (4 families, 2 aggregates)" % n
print("OpenMetrics: %d series, each with _created" % n)
PY

note "a filter deleted between scrapes leaves its counts in its aggregate"
unfilt 20
send 1001 4
settle
scrape_checked s2
[ "$(value s2 tc_action_packets_total acme dns)" = 16 ] || fail "acme/dns after a delete: $(value s2 tc_action_packets_total acme dns) packets, sent 16"

note "a replaced filter (counters reset) and churn: no aggregate goes down"
for i in $(seq 1 10); do
	# a collection saw what was sent before: a filter deleted now loses
	# nothing (the final counters of one deleted right after traffic are
	# the kernel's deletion notifications' to give)
	filt 10 1001 01 replace
	if [ $((i % 2)) = 0 ]; then
		unfilt 30
		filt 30 1003 03
	fi
	send 1001 2
	send 1003 1
	settle
	scrape_checked "churn$i"
done
settle
scrape_checked s3
[ "$(value s3 tc_action_packets_total acme dns)" = "${sent[dns]}" ] ||
	fail "acme/dns: $(value s3 tc_action_packets_total acme dns) packets, sent ${sent[dns]}"
[ "$(value s3 tc_action_bytes_total acme dns)" = $((sent[dns] * per_packet)) ] ||
	fail "acme/dns: $(value s3 tc_action_bytes_total acme dns) bytes, sent ${sent[dns]} packets of $per_packet"
[ "$(value s3 tc_action_packets_total beta web)" = "${sent[web]}" ] ||
	fail "beta/web: $(value s3 tc_action_packets_total beta web) packets, sent ${sent[web]}"
note "$n_scrapes scrapes, none went down; sent dns ${sent[dns]}, web ${sent[web]} packets"

note "SIGHUP mapping cookie 03 to acme/dns: beta/web keeps what it counted, acme/dns counts 03's traffic from now"
web_before=$(value s3 tc_action_packets_total beta web)
sed -i 's/^  "03": .*/  "03": [acme, dns]/' "$WORK/agg.yaml"
mark_log
kill -HUP "$TCX_PID"
wait_log 10 'configuration reloaded'
settle
udp_raw a1 1003:32:4 >/dev/null # cookie 03 is acme/dns's now
sent[dns]=$((sent[dns] + 4))
settle
scrape_checked s3b
[ "$(value s3b tc_action_packets_total beta web)" = "$web_before" ] ||
	fail "beta/web after the move: $(value s3b tc_action_packets_total beta web), was $web_before"
[ "$(value s3b tc_action_packets_total acme dns)" = "${sent[dns]}" ] ||
	fail "acme/dns after the move: $(value s3b tc_action_packets_total acme dns), expected ${sent[dns]}"

note "Prometheus: the sums sent, no resets() over the run, _created parsed"
"$PYTHON" "$WORK/prom_check.py" "$PROM" 20 "${sent[dns]}" "${sent[web]}" || fail "Prometheus's view (above)"

note "every filter gone: the aggregates stay"
tc filter del dev a0 ingress
settle
scrape_checked s4
[ "$(value s4 tc_action_packets_total acme dns)" = "${sent[dns]}" ] || fail "acme/dns changed after every filter went"
[ "$(value s4 tc_action_packets_total beta web)" = "$web_before" ] || fail "beta/web changed after every filter went"
alive "$TCX_PID" tcx
stop_tcx "$TCX_PID" tcx 10

note "--once: the sums of the current rows; max_series leaves rows out and counts them"
filt 10 1001 01
filt 20 1002 02
send 1001 3
send 1002 2
sed -e '/^http:/d' -e 's/^families: .*/families: {hw: auto, drops: off, liveness: off}/' \
	-e 's/^  "03": .*/  "03": [beta, web]/' "$WORK/agg.yaml" >"$WORK/once.yaml"
run_tcx once --once --config "$WORK/once.yaml"
expect_rc once 0
[ "$(metric_value "$WORK/once.out" 'tc_action_packets_total{tenant="acme",rule="dns"}')" = 5 ] ||
	fail "--once: acme/dns is not the sum of the current rows (5): $(grep packets_total "$WORK/once.out")"
! grep -q '^tc_action_drops_total' "$WORK/once.out" || fail "families.drops: off exported drops"
echo "max_series: 4" >>"$WORK/once.yaml"
filt 30 1003 03
run_tcx capped --once --config "$WORK/once.yaml"
expect_rc capped 0
[ "$(grep -c '^tc_action_' "$WORK/capped.out")" = 3 ] || fail "max_series 4: not one aggregate of 3 series"
expect_grep capped out -x 'tc_exporter_series_dropped 3'
promtool check metrics <"$WORK/capped.out" >"$WORK/promtool.out" 2>&1 ||
	{ cat "$WORK/promtool.out" >&2; fail "promtool check metrics: findings past max_series"; }
note "bad aggregate keys: FILE:LINE:COL, exit 2"
printf 'labels: [tenant]\naggregate: {by: [tenant, dev], without: [pref]}\nmax_series: 0\n' >"$WORK/bad.yaml"
run_tcx bad --check-config "$WORK/bad.yaml"
expect_rc bad 2
expect_grep bad err -F "$WORK/bad.yaml:2:32: aggregate takes one of 'by' and 'without', not both"
expect_grep bad err -F "$WORK/bad.yaml:3:13: invalid max_series '0'"
note "ok"
