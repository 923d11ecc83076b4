#!/bin/bash
# Sweeps (issue #26): between sweeps the daemon asks only the parents that
# hold filters, and those the kernel says a filter was added to
# (RTM_NEWTFILTER). So:
#  1. a filter added to an empty leaf qdisc is in the next collection (the
#     first that starts after the add: by the second whose count is read
#     after it), though sweep_interval is an hour;
#  2. with the daemon stopped (SIGSTOP), 20,000 filters added to one leaf
#     overrun its queue of additions (4 MiB, doubled by the kernel); the one
#     added last, to another empty leaf, is lost: the daemon counts a sweep
#     under reason="lost" and the filter is in the collection after;
#  3. a reload (SIGHUP) sweeps, under reason="reload" (that a sweep finds
#     what no addition told is step 2's proof).
#
# s0 carries HTB 1: -> 1:1 -> 1:10 ... 1:13, each leaf class with an HTB
# leaf qdisc 10: ... 13: (a qdisc that takes filters: this kernel has no
# fq_codel), none with a filter at first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc
in_netns TCXD_SWEEPS_NS
daemon_setup

veth s0 s1
{
	echo "qdisc add dev s0 root handle 1: htb"
	echo "class add dev s0 parent 1: classid 1:1 htb rate 1gbit"
	for i in 10 11 12 13; do
		echo "class add dev s0 parent 1:1 classid 1:$i htb rate 1mbit"
		echo "qdisc add dev s0 parent 1:$i handle $i: htb"
	done
} >"$WORK/tree.batch"
tc -batch "$WORK/tree.batch" 2>"$WORK/tree.err" || fail "tc -batch of the tree: $(cat "$WORK/tree.err")"

read -r port < <(free_ports 1)
url=http://127.0.0.1:$port/metrics
cat >"$WORK/tcx.yaml" <<EOF
interval: 1s
sweep_interval: 1h
targets: [{all: true}]
http: {listen: "127.0.0.1:$port"}
EOF

# filter LEAF COOKIE: a u32 filter with a mirred action on leaf qdisc LEAF:.
filter() {
	tc filter add dev s0 parent "$1:" pref 1 protocol ip u32 match ip dst 10.0.0.1/32 \
		action mirred egress mirror dev s1 cookie "$2"
}
# series LEAF COOKIE: the series of that filter's action in a scrape.
series() {
	printf 'tc_action_packets_total{device="s0",parent="%s:",chain="0",protocol="ip",pref="1",kind="u32",handle="800::800",order="1",action="mirred",cookie="%s"}' \
		"$1" "$2"
}
# sweeps FILE REASON: tc_exporter_filter_sweeps_total of REASON in FILE.
sweeps() {
	metric_value "$1" "tc_exporter_filter_sweeps_total{reason=\"$2\"}"
}
# in_next LEAF COOKIE WHAT: the filter must be in a scrape by the second
# collection counted after now.
in_next() {
	local c0 c
	c0=$(collections "$url")
	while :; do
		scrape "$WORK/m.txt" "$url"
		c=$(metric_value "$WORK/m.txt" tc_exporter_collections_total)
		grep -qF "$(series "$1" "$2") " "$WORK/m.txt" && break
		[ "$c" -lt $((c0 + 2)) ] ||
			fail "$3: leaf $1:'s filter is not in collection $c (it was added before $c0 was counted)"
		sleep 0.1
	done
	note "$3: leaf $1:'s filter in collection $c (added before $c0)"
}

start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 10 "$url"
until [ "$(collections "$url")" -ge 2 ]; do sleep 0.1; done
scrape "$WORK/m.txt" "$url"
[ "$(sweeps "$WORK/m.txt" new)" = 1 ] || fail "not one sweep of a new namespace: $(grep sweeps "$WORK/m.txt")"

note "1. a filter on an empty leaf"
filter 10 0a
in_next 10 0a "an addition"
[ "$(sweeps "$WORK/m.txt" lost)" = 0 ] || fail "a sweep for a lost addition, with none lost"

note "2. 20,000 additions while the daemon is stopped"
awk 'BEGIN {
	for (i = 0; i < 20000; i++)
		printf "filter add dev s0 parent 11: pref 2 protocol ip u32 match ip dst 10.1.%d.%d/32 " \
		       "action mirred egress mirror dev s1 cookie %08x\n", int(i / 256) % 256, i % 256, i
}' >"$WORK/flood.batch"
kill -STOP "$TCX_PID"
tc -batch "$WORK/flood.batch" || { kill -CONT "$TCX_PID"; fail "tc -batch of 20,000 filters failed"; }
filter 12 0c
kill -CONT "$TCX_PID"
in_next 12 0c "a lost addition"
lost=$(sweeps "$WORK/m.txt" lost)
[ "${lost:-0}" -ge 1 ] || fail "no sweep counted under reason=\"lost\" ($(grep sweeps "$WORK/m.txt"))"
grep -q 'parent="11:".*cookie="00004e1f"} ' "$WORK/m.txt" || fail "leaf 11:'s last filter is missing"

note "3. a reload"
kill -HUP "$TCX_PID"
deadline=$((SECONDS + 10))
until scrape "$WORK/m.txt" "$url" && [ "$(sweeps "$WORK/m.txt" reload)" = 1 ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "no sweep under reason=\"reload\" 10 s after SIGHUP"
	sleep 0.2
done
[ "$(sweeps "$WORK/m.txt" lost)" = "$lost" ] || fail "the reload's sweep counted as lost too"
stop_tcx "$TCX_PID" tcx 10
note "sweeps: all checks passed in $(elapsed_ms) ms"
