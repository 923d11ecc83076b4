#!/bin/bash
# monitoring/ against the real daemon:
#
#   - every metric name that monitoring/tcexporter-dashboard.json and
#     monitoring/tcexporter.rules.yml use is in a scrape of the daemon, and
#     every label they select, group by or print is a label of those metrics
#     there (tests/lib/monitoring.py names): renaming a metric or a label in
#     the daemon breaks this test, not silently the dashboards and alerts;
#   - a real Prometheus scraping the daemon (job "tcexporter") with the rules
#     loaded answers every dashboard query and every recorded name with data,
#     evaluates every rule without error (tests/lib/monitoring.py evaluate),
#     and its alerts follow the daemon: TcExporterTargetFailing pending for
#     the failing target only, TcExporterUnmappedCookies pending; then
#     TcExporterConfigReloadFailed once a SIGHUP loads a bad configuration,
#     and TcExporterDown once the daemon is stopped.
#
# The daemon runs in private mount and network namespaces (a private
# /run/netns, as netns_follow.sh), with a configuration that makes every
# family and label the rules and the dashboard use: u32 filters on a device
# (mapped and unmapped cookies), a shared block (block label), a named
# namespace (netns label) with an HTB tree (qdiscs, classes, a class with
# user labels), and a target that fails. Nothing drops: TcQdiscDropsSustained
# must stay inactive (0 of 0 packets is no ratio). For the action times (the
# panels of actions that never matched and of idle ones), a datagram sent out
# of the namespace's device gives its action a first use; v0's filters (ip dst
# 10.0.0.x) never match.
#
# The filter hit families (tc_filter_hits_total, ...) need a kernel that
# keeps them (u32 with CONFIG_CLS_U32_PERF, basic, matchall), which this
# host's may not: their series come from the daemon's own renderer run on a
# recorded kernel conversation (the fuzz seed tests/fuzz/corpus/netlink/hits,
# through tests/fuzz/replay_netlink), served beside the daemon to Prometheus
# (job tcexporter-replay) and added to the scrape the names are checked
# against. The VM test (c14_hits) checks those families against real
# kernels.
#
# The name check must be able to fail: a copy of the dashboard with a metric
# renamed, and a copy of the rules with a label renamed, are rejected.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

: "${TCX_SRCDIR:?TCX_SRCDIR must point at the source tree}"
daemon_prereqs tc mount prometheus
require_root -m -n
"$PYTHON" -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (apt-get install python3-yaml)"
in_netns TCXD_MONITORING_NAMES_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
daemon_setup
private_netns_dir
mon=$TCX_SRCDIR/monitoring
check=$TCX_SRCDIR/tests/lib/monitoring.py

# Three u32 filters on v0 ingress (cookies ...00, ...01, ...02).
u32_filters 3
# Shared block 22 on b0's ingress, one filter.
veth b0 b1
tc qdisc add dev b0 ingress_block 22 clsact
tc filter add block 22 pref 1 protocol ip u32 match u32 0 0 \
	action mirred egress mirror dev b1 cookie 0b
# A named namespace with a device and a filter.
ns=tcxmon$$
ip netns add "$ns"
ip -n "$ns" link add n0 type veth peer name n1
ip -n "$ns" link set n0 up
ip -n "$ns" link set n1 up
tc -n "$ns" qdisc add dev n0 clsact
tc -n "$ns" filter add dev n0 egress pref 1 protocol all u32 match u32 0 0 \
	action mirred egress mirror dev n1 cookie 0c
# Its qdisc and class panels, and the root-only rules: HTB root 1: -> 1:1 ->
# 1:10 and 1:20, each leaf a pfifo (10:, 20:).
tc -n "$ns" qdisc add dev n0 root handle 1: htb default 20
tc -n "$ns" class add dev n0 parent 1: classid 1:1 htb rate 10mbit
tc -n "$ns" class add dev n0 parent 1:1 classid 1:10 htb rate 5mbit ceil 10mbit
tc -n "$ns" class add dev n0 parent 1:1 classid 1:20 htb rate 5mbit ceil 10mbit
tc -n "$ns" qdisc add dev n0 parent 1:10 handle 10: pfifo limit 1000
tc -n "$ns" qdisc add dev n0 parent 1:20 handle 20: pfifo limit 1000
# A datagram out of n0 (through its egress filter, mirrored to n1, whose
# ingress has no filter): that action has matched, whatever IPv6 sends too.
ip netns exec "$ns" "$PYTHON" "$TCX_TESTLIB/udp_raw.py" n0 9:100:1 >/dev/null ||
	fail "sending a datagram out of n0 failed"

read -r port port_prom port_replay < <(free_ports 3)
cat >"$WORK/tcx.yaml" <<EOF
interval: 200ms
targets:
  - {dev: v0, parent: ingress}
  - {block: 22}
  - {all: true, netns: $ns}
  - {dev: tcxmon-absent}
labels: [tenant, rule]
cookies:
  "74637862656e63680000000000000000": [acme, dns]
  "74637862656e63680000000000000001": [acme, web]
classes:
  "n0 1:10": {tenant: acme, rule: gold}
http: {listen: "127.0.0.1:$port"}
EOF
url=http://127.0.0.1:$port/metrics
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 10 "$url"
# Two collections: the daemon's own counters have moved at least once.
deadline=$((SECONDS + 10))
until [ "$(collections "$url")" -ge 2 ]; do
	alive "$TCX_PID" tcx
	[ "$SECONDS" -lt "$deadline" ] || fail "fewer than 2 collections within 10 s"
	sleep 0.1
done
scrape "$WORK/scrape.om" "$url" -H "Accept: $PROM_ACCEPT"
alive "$TCX_PID" tcx
head -n 1 "$WORK/scrape.om" | grep -q '^# HELP' || fail "the scrape is not an exposition: $(head -c 200 "$WORK/scrape.om")"

# The configuration made what it was meant to: every kind of target, a
# failing one, unmapped cookies.
for want in 'tc_scrape_collector_success{device="v0",parent="ingress"} 1' \
	'tc_scrape_collector_success{block="22"} 1' \
	"tc_scrape_collector_success{device=\"n0\",parent=\"egress\",netns=\"$ns\"} 1" \
	'tc_scrape_collector_success{device="tcxmon-absent",parent="root"} 0' \
	'tc_exporter_unmapped_cookies 3'; do
	grep -qxF "$want" "$WORK/scrape.om" || fail "not in the scrape: $want"
done
# The action times: n0's action matched (a first use), v0's never did (an
# install time and no first use).
grep -q '^tc_action_first_used_timestamp_seconds{device="n0",' "$WORK/scrape.om" ||
	fail "no first use of n0's action in the scrape"
grep -q '^tc_action_installed_timestamp_seconds{device="v0",' "$WORK/scrape.om" ||
	fail "no install time of v0's actions in the scrape"
! grep -q '^tc_action_first_used_timestamp_seconds{device="v0",' "$WORK/scrape.om" ||
	fail "a first use of v0's actions, which match nothing sent"
# The qdiscs and classes of the namespace, whatever their values (IPv6
# neighbour discovery goes through them) and the labels that follow (a class
# that no entry of classes: names may carry empty user labels).
q="device=\"n0\",netns=\"$ns\""
for want in "tc_qdisc_bytes_total{$q,kind=\"htb\",handle=\"1:\",parent=\"root\"" \
	"tc_qdisc_drops_total{$q,kind=\"pfifo\",handle=\"10:\",parent=\"1:10\"" \
	"tc_qdisc_backlog_bytes{$q,kind=\"htb\",handle=\"1:\",parent=\"root\"" \
	"tc_qdisc_backlog_packets{$q,kind=\"pfifo\",handle=\"20:\",parent=\"1:20\"" \
	"tc_class_bytes_total{$q,kind=\"htb\",handle=\"1:10\",parent=\"1:1\",tenant=\"acme\",rule=\"gold\"" \
	"tc_class_drops_total{$q,kind=\"htb\",handle=\"1:1\",parent=\"root\""; do
	awk -v w="$want" 'index($0, w) == 1 && substr($0, length(w) + 1, 1) ~ /[},]/ { found = 1 }
		END { exit !found }' "$WORK/scrape.om" || fail "not in the scrape: $want}"
done

# The hit families, rendered from the recorded conversation.
replay=$TCX_BUILDDIR/tests/fuzz/replay_netlink
[ -x "$replay" ] || fail "$replay is not built (make check builds it)"
mkdir -p "$WORK/replay"
FUZZ_TRACE=1 "$replay" "$TCX_SRCDIR/tests/fuzz/corpus/netlink/hits" 2>&1 |
	grep -E '^(# (HELP|TYPE) )?tc_filter_(lookups|hits|u32_)' >"$WORK/replay/metrics.txt" ||
	fail "the replay of the hits seed printed no filter hit family"
for fam in tc_filter_hits_total tc_filter_lookups_total; do
	grep -q "^$fam{" "$WORK/replay/metrics.txt" || fail "no $fam in the replay: $(cat "$WORK/replay/metrics.txt")"
done
grep -v '^# EOF' "$WORK/scrape.om" >"$WORK/names.om"
cat "$WORK/replay/metrics.txt" >>"$WORK/names.om"
# The daemon runs with the default hw: auto on a kernel that offloads
# nothing, as most hosts do: every panel must answer without the hw_*
# families (Prometheus below); their names come from a --once with hw: on.
sed 's/^labels:/families: {hw: on}\nlabels:/' "$WORK/tcx.yaml" >"$WORK/hw.yaml"
run_tcx hw --once --config "$WORK/hw.yaml"
grep '^tc_action_hw_' "$WORK/hw.out" >>"$WORK/names.om" || fail "no tc_action_hw_* with hw: on"
! grep -q '^tc_action_hw_' "$WORK/scrape.om" || fail "hw_* series with hw: auto on a kernel that offloads nothing"

note "every metric and label of the dashboard and the rules is in the scrape"
"$PYTHON" "$check" names "$mon/tcexporter-dashboard.json" "$mon/tcexporter.rules.yml" \
	"$WORK/names.om" || fail "the dashboard or the rules use names the daemon does not export (above)"

note "a metric renamed in the dashboard, a label renamed in the rules: rejected"
sed 's/tc_action_bytes_total/tc_action_byte_total/g' "$mon/tcexporter-dashboard.json" >"$WORK/renamed.json"
! "$PYTHON" "$check" names "$WORK/renamed.json" "$mon/tcexporter.rules.yml" "$WORK/names.om" \
	>/dev/null 2>"$WORK/renamed.err" || fail "a dashboard using tc_action_byte_total passed"
grep -q 'uses tc_action_byte_total, which is not in the daemon' "$WORK/renamed.err" ||
	fail "the rename was not named: $(cat "$WORK/renamed.err")"
# shellcheck disable=SC2016 # a literal $labels
sed 's/\$labels\.device/$labels.dev/' "$mon/tcexporter.rules.yml" >"$WORK/renamed.yml"
cmp -s "$mon/tcexporter.rules.yml" "$WORK/renamed.yml" && fail "could not rename a label in a copy of the rules"
! "$PYTHON" "$check" names "$mon/tcexporter-dashboard.json" "$WORK/renamed.yml" "$WORK/names.om" \
	>/dev/null 2>"$WORK/renamed.err" || fail "rules using \$labels.dev passed"
grep -q 'uses the label dev,' "$WORK/renamed.err" || fail "the label was not named: $(cat "$WORK/renamed.err")"

note "a real Prometheus with the rules: every query answers, every rule evaluates"
cat >"$WORK/p.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: ["$mon/tcexporter.rules.yml"]
scrape_configs:
  - job_name: tcexporter
    static_configs: [{targets: ["127.0.0.1:$port"]}]
  - job_name: tcexporter-replay
    metrics_path: /metrics.txt
    static_configs: [{targets: ["127.0.0.1:$port_replay"]}]
YAML
bg_start replay "$PYTHON" -m http.server --bind 127.0.0.1 --directory "$WORK/replay" "$port_replay"
bg_start prometheus prometheus --config.file="$WORK/p.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$port_prom" --log.level=warn
prom=http://127.0.0.1:$port_prom
wait_http 200 60 "$prom/-/ready"
# Three scrapes and the rules evaluated after them: rate() has two samples.
deadline=$((SECONDS + 30))
until [ "$(curl -s --max-time 5 "$prom/api/v1/query" \
	--data-urlencode 'query=count_over_time(up{job="tcexporter"}[1m]) >= 3 and on() count(cookie:tc_action_bytes:rate5m) > 0 and on() count_over_time(up{job="tcexporter-replay"}[1m]) >= 3' |
	grep -c '"value"')" -gt 0 ]; do
	alive "$TCX_PID" tcx
	[ "$SECONDS" -lt "$deadline" ] || fail "Prometheus did not scrape the daemon 3 times, and record the rates, within 30 s"
	sleep 0.5
done
"$PYTHON" "$check" evaluate "$mon/tcexporter-dashboard.json" "$mon/tcexporter.rules.yml" "$prom" ||
	fail "Prometheus's answers to the dashboard and the rules (above)"
"$PYTHON" "$check" alerts "$prom" 15 TcExporterTargetFailing/pending/device=tcxmon-absent \
	TcExporterUnmappedCookies/pending || fail "the alerts of a daemon with a failing target and unmapped cookies (above)"

note "a configuration that does not load: TcExporterConfigReloadFailed"
cp "$WORK/tcx.yaml" "$WORK/good.yaml"
echo "intervall: 1s" >>"$WORK/tcx.yaml"
kill -HUP "$TCX_PID"
"$PYTHON" "$check" alerts "$prom" 15 TcExporterTargetFailing/pending/device=tcxmon-absent \
	TcExporterUnmappedCookies/pending TcExporterConfigReloadFailed/pending ||
	fail "a rejected reload did not make TcExporterConfigReloadFailed pending (above)"

note "the daemon stopped: TcExporterDown"
stop_tcx "$TCX_PID" tcx 10
"$PYTHON" "$check" alerts "$prom" 15 TcExporterDown/pending ||
	fail "a stopped daemon did not make TcExporterDown pending, alone (above)"
note "ok"
