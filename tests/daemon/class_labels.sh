#!/bin/bash
# User labels on TC classes (issue 16): the configuration's `classes:` map
# ("DEVICE CLASSID" or "NETNS/DEVICE CLASSID" -> label values, the labels of
# `labels:`) puts its values on the tc_class_* series of the class it names,
# and only there, in `--once` (text and JSON) and in the daemon's /metrics
# (text and OpenMetrics), and a reload that changes the map changes them;
# the landing page lists the device with its qdiscs and classes.
#
# c0 carries an HTB tree 1: -> 1:1 -> 1:10, 1:20, 1:30 with traffic through
# 1:10 and 1:20 (class_tree, tests/lib/daemon.sh). The map gives 1:10 both
# labels, 1:20 both (positional form), 1:1 both; it also names a
# class that does not exist and c0's 1:30 in another namespace: 1:30 keeps
# both labels empty. Every qdisc and class, with its counters and labels,
# must equal tc (tests/integration/compare_qdisc.py with the expected map);
# qdiscs carry no user label.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc
in_netns TCXD_CLASS_LABELS_NS
daemon_setup
cmpq=$here/../integration/compare_qdisc.py

class_tree c0 c1 "$WORK/tc"

read -r port < <(free_ports 1)
url=http://127.0.0.1:$port/metrics
# config FILE RULE_OF_1:20: the configuration, 1:20's rule as given.
config() {
	cat >"$1" <<EOF
interval: 1s
targets: [{all: true}]
http: {listen: "127.0.0.1:$port"}
labels: [tenant, rule]
classes:
  "c0 1:10": {tenant: acme, rule: gold}
  "c0 1:20": [globex, $2]
  "c0 1:1": {tenant: acme, rule: all}
  "c0 1:99": [nobody, none]
  "elsewhere/c0 1:30": [initech, bronze]
EOF
}
# expected RULE_OF_1:20: the labels every class must carry, for compare_qdisc.py.
expected() {
	printf '{"c0 1:10": {"tenant": "acme", "rule": "gold"}, "c0 1:20": {"tenant": "globex", "rule": "%s"}, "c0 1:1": {"tenant": "acme", "rule": "all"}}\n' \
		"$1" >"$WORK/map.json"
}
# compare FORMAT FILE: FILE (prom or json) against tc and the map.
compare() {
	"$PYTHON" "$cmpq" "$1" --tc "$WORK/tc" --exporter "$2" --labels tenant,rule \
		--class-map "$WORK/map.json" --require class:htb:packets --require qdisc:pfifo:packets \
		--expect-classes 4 || fail "$2: the qdiscs and classes or their labels differ (above)"
}

config "$WORK/tcx.yaml" silver
expected silver
note "--once, text and JSON"
run_tcx once --once --config "$WORK/tcx.yaml"
expect_rc once 0
run_tcx oncej --once --config "$WORK/tcx.yaml" --format json
expect_rc oncej 0
compare prom "$WORK/once.out"
compare json "$WORK/oncej.out"
expect_grep once out -F 'handle="1:10",parent="1:1",tenant="acme",rule="gold"} 30'

note "the daemon's /metrics, text and OpenMetrics"
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 10 "$url"
scrape "$WORK/m.txt" "$url"
scrape "$WORK/m.om" "$url" -H "Accept: $PROM_ACCEPT"
grep -q '^# EOF$' "$WORK/m.om" || fail "the second scrape is not OpenMetrics"
compare prom "$WORK/m.txt"
compare prom "$WORK/m.om"
scrape "$WORK/landing.html" "${url%/metrics}/"
grep -qF '<tr><td></td><td>c0</td><td>ok</td><td>4</td><td>4</td></tr>' "$WORK/landing.html" ||
	fail "the landing page does not list c0 with its 4 qdiscs and 4 classes"

note "a reload that changes 1:20's rule"
loaded=$(metric_value "$WORK/m.txt" tc_exporter_config_last_reload_success_timestamp_seconds)
config "$WORK/tcx.yaml" platinum
expected platinum
kill -HUP "$TCX_PID"
deadline=$((SECONDS + 10))
while :; do
	scrape "$WORK/r.txt" "$url"
	grep -q 'handle="1:20",parent="1:1",tenant="globex",rule="platinum"}' "$WORK/r.txt" && break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "1:20's rule is not platinum 10 s after the reload (loaded at $loaded before)"
	sleep 0.2
done
compare prom "$WORK/r.txt"
stop_tcx "$TCX_PID" tcx 10
note "class_labels: all checks passed in $(elapsed_ms) ms"
