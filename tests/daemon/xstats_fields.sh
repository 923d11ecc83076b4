#!/bin/bash
# `families: xstats:` as a map of kinds (issue 26): the per-kind statistics
# of a kind named are the fields it lists, or none (`none`, `[]`); kinds not
# named keep every field. In `--once` (text and JSON) and the daemon's
# /metrics (text and OpenMetrics), and a reload that changes the choice
# changes them; an unknown kind or field fails the load with FILE:LINE:COL.
#
# c0 carries an HTB tree 1: -> 1:1 -> 1:10, 1:20, 1:30 with traffic through
# 1:10 and 1:20 (class_tree, tests/lib/daemon.sh); HTB classes have five
# fields (lends, borrows, giants, tokens_seconds, ctokens_seconds; the host
# has htb, tbf and pfifo, and of those only htb has per-kind statistics).
# Every qdisc and class, its counters and the chosen fields, must equal tc
# (tests/integration/compare_qdisc.py --xstats, which also fails on a field
# not chosen), and the tc_class_htb_* families must be the chosen ones.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc
in_netns TCXD_XSTATS_FIELDS_NS
daemon_setup
cmpq=$here/../integration/compare_qdisc.py

class_tree c0 c1 "$WORK/tc"

read -r port < <(free_ports 1)
url=http://127.0.0.1:$port/metrics
# config FILE CHOICE: the configuration, htb's choice as given.
config() {
	cat >"$1" <<EOF
interval: 1s
targets: [{all: true}]
http: {listen: "127.0.0.1:$port"}
families:
  xstats: {htb: $2, cake: [tin_sent_bytes]}
EOF
}
# families FILE: the families of HTB's per-kind statistics in a text
# exposition, on one line (its plans, tc_class_htb_rate_bytes_per_second...,
# are the `plans` switch's).
families() {
	grep -oE '^tc_class_htb_(lends|borrows|giants)_total|^tc_class_htb_c?tokens_seconds' "$1" |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}
# check FORMAT FILE FIELDS FAMILIES: FILE (prom or json) against tc, htb's
# fields FIELDS (comma-separated); for prom, its htb families FAMILIES.
check() {
	"$PYTHON" "$cmpq" "$1" --tc "$WORK/tc" --exporter "$2" --xstats "htb:$3" \
		--require class:htb:packets --require class:htb:lends --expect-classes 4 ||
		fail "$2: the qdiscs and classes or the chosen fields differ (above)"
	[ "$1" = json ] || [ "$(families "$2")" = "$4" ] ||
		fail "$2: tc_class_htb_* families '$(families "$2")', expected '$4'"
}

config "$WORK/tcx.yaml" "[lends, tokens_seconds]"
note "--once, text and JSON: htb [lends, tokens_seconds]"
run_tcx once --once --config "$WORK/tcx.yaml"
expect_rc once 0
run_tcx oncej --once --config "$WORK/tcx.yaml" --format json
expect_rc oncej 0
check prom "$WORK/once.out" lends,tokens_seconds \
	"tc_class_htb_lends_total tc_class_htb_tokens_seconds"
check json "$WORK/oncej.out" lends,tokens_seconds
grep -q '"xstats":{"lends":[0-9]*,"tokens_seconds":[-0-9.]*}' "$WORK/oncej.out" ||
	fail "the JSON classes' xstats are not {lends, tokens_seconds}"

note "--once: htb none, then [] (no per-kind statistics), then all"
for choice in none "[]"; do
	config "$WORK/none.yaml" "$choice"
	run_tcx none --once --config "$WORK/none.yaml"
	expect_rc none 0
	check prom "$WORK/none.out" "" ""
	run_tcx nonej --once --config "$WORK/none.yaml" --format json
	expect_rc nonej 0
	check json "$WORK/nonej.out" ""
	grep '"class"' "$WORK/nonej.out" | grep -vq '"xstats":{}' &&
		fail "htb $choice: a JSON class has per-kind statistics"
done
config "$WORK/all.yaml" all
run_tcx all --once --config "$WORK/all.yaml"
expect_rc all 0
check prom "$WORK/all.out" lends,borrows,giants,tokens_seconds,ctokens_seconds \
	"tc_class_htb_borrows_total tc_class_htb_ctokens_seconds tc_class_htb_giants_total tc_class_htb_lends_total tc_class_htb_tokens_seconds"

note "an unknown field: the load fails, FILE:LINE:COL naming it and the valid ones"
config "$WORK/bad.yaml" "[lends, tokens]"
run_tcx bad --once --config "$WORK/bad.yaml"
expect_rc bad 2
expect_grep bad err -F "$WORK/bad.yaml:5:25: unknown field 'tokens' of htb in families xstats (expected one of: lends, borrows, giants, tokens_seconds, ctokens_seconds)"

note "the daemon's /metrics, text and OpenMetrics"
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 10 "$url"
scrape "$WORK/m.txt" "$url"
scrape "$WORK/m.om" "$url" -H "Accept: $PROM_ACCEPT"
grep -q '^# EOF$' "$WORK/m.om" || fail "the second scrape is not OpenMetrics"
check prom "$WORK/m.txt" lends,tokens_seconds "tc_class_htb_lends_total tc_class_htb_tokens_seconds"
check prom "$WORK/m.om" lends,tokens_seconds "tc_class_htb_lends_total tc_class_htb_tokens_seconds"

note "a reload that chooses [borrows, ctokens_seconds]"
config "$WORK/tcx.yaml" "[borrows, ctokens_seconds]"
kill -HUP "$TCX_PID"
deadline=$((SECONDS + 10))
while :; do
	scrape "$WORK/r.txt" "$url"
	[ "$(families "$WORK/r.txt")" = "tc_class_htb_borrows_total tc_class_htb_ctokens_seconds" ] &&
		break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "10 s after the reload, the htb families are '$(families "$WORK/r.txt")'"
	sleep 0.2
done
check prom "$WORK/r.txt" borrows,ctokens_seconds \
	"tc_class_htb_borrows_total tc_class_htb_ctokens_seconds"
scrape "$WORK/r.om" "$url" -H "Accept: $PROM_ACCEPT"
check prom "$WORK/r.om" borrows,ctokens_seconds \
	"tc_class_htb_borrows_total tc_class_htb_ctokens_seconds"

note "a reload with an unknown kind is refused: the choice before stays"
cat >"$WORK/tcx.yaml" <<EOF
interval: 1s
targets: [{all: true}]
http: {listen: "127.0.0.1:$port"}
families:
  xstats: {htbx: all}
EOF
mark_log
kill -HUP "$TCX_PID"
wait_log 10 "$WORK/tcx.yaml:5:12: unknown kind 'htbx' in families xstats"
scrape "$WORK/k.txt" "$url"
check prom "$WORK/k.txt" borrows,ctokens_seconds \
	"tc_class_htb_borrows_total tc_class_htb_ctokens_seconds"
stop_tcx "$TCX_PID" tcx 10
note "xstats_fields: all checks passed in $(elapsed_ms) ms"
