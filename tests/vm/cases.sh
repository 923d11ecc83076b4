#!/bin/bash
# The cases of tests/vm/run.sh, run INSIDE the test VM (Debian's kernel with
# flower, matchall, u32 and every action kind but xt/ipt). Nothing is compared here:
# each case sets up its filters in a network namespace of its own, sends
# traffic, then captures, for each of its runs,
#   tc -s -j filter show ... of every target   (tc-RUN-pre-TARGET.json)
#   tcexporter --once --format json             (RUN.json.out/.err/.rc)
#   tcexporter --once --format prometheus       (RUN.prom.out/.err/.rc)
#   tc -s -j filter show ... again              (tc-RUN-post-TARGET.json)
# into /out/CASE/, and the host compares them (run.sh). The pre/post pair
# proves that no counter moved while tcexporter ran.
#
#   cases.sh            run every case (the VM's payload: /init runs it)
#   cases.sh CASE DIR   run one case into DIR (in a fresh network namespace)
#
# Console markers: "TCXVM-CASE CASE rc=N" per case.
#
# Traffic: a dummy device is NOARP, so a datagram to an address of its subnet
# leaves through its egress hook and is counted there, with no peer needed;
# veth pairs with static neighbours carry packets to the peer's ingress. No
# address the packets go to exists, so nothing answers and the counters
# stand still once the senders returned. UDP datagrams come from bash's
# /dev/udp (one write, one datagram, of the size we choose).
set -euo pipefail

TC=/sbin/tc
IP=/sbin/ip
TCX=/tcx/tcexporter
CASES=(c1_flower c2_mixed c3_multi c4_chains c5_block c6_traffic c7_replace c8_delete c9_actions c10_churn c11_qdiscs c12_hfsc c13_police c14_hits c15_hits_churn c16_plans c17_liveness c18_snmp_times c19_ovs c20_libreqos c21_ovs_scale)

# shellcheck disable=SC1091
[ ! -f /tcx/env ] || . /tcx/env

if [ $# -eq 0 ]; then
	status=0
	for c in "${CASES[@]}"; do
		mkdir -p "/out/$c"
		rc=0
		unshare -n /bin/bash "$0" "$c" "/out/$c" >"/out/$c/log" 2>&1 || rc=$?
		echo "TCXVM-CASE $c rc=$rc"
		[ "$rc" = 0 ] || status=1
	done
	exit "$status"
fi

CASE=$1
D=$2
cd "$D"
$IP link set lo up
# No IPv6: its link-local chatter (MLD, router solicitations) comes late and
# at random; the filters match IPv4 only anyway, but no packet should move
# any counter of the namespace after the senders returned.
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6

# filt DEV PARENT TC-ARGS... | filt block N TC-ARGS...: tc filter add, counting
# the actions in the target's counter file n-TARGET (every "action" word
# starts one). The host reads the counts for --expect-rows.
filt() {
	local t=$1-$2 a n=0
	for a in "$@"; do [ "$a" != action ] || n=$((n + 1)); done
	if [ "$1" = block ]; then
		$TC filter add "$@"
	else
		$TC filter add dev "$@"
	fi
	echo $(($(cat "n-$t" 2>/dev/null || echo 0) + n)) >"n-$t"
}

# udp DST COUNT SIZE: COUNT datagrams of SIZE bytes of payload to DST port 9.
# A datagram that a filter drops fails with ENOBUFS: expected.
udp() {
	local i
	for ((i = 0; i < $2; i++)); do
		printf "%$3s" x 2>/dev/null >"/dev/udp/$1/9" || true
	done
}

# dummy NAME [ADDR/LEN]: an up dummy device.
dummy() {
	$IP link add "$1" type dummy
	$IP link set "$1" up
	[ -z "${2:-}" ] || $IP addr add "$2" dev "$1"
}

# veth A B: an up veth pair.
veth() {
	$IP link add "$1" type veth peer name "$2"
	$IP link set "$1" up
	$IP link set "$2" up
}

# mac DEV: its address (not from /sys: that is the initial namespace's).
mac() { $IP -br link show dev "$1" | awk '{ print $3 }'; }

# tcx RUN CONFIG: both output formats, status in RUN.FORMAT.rc.
tcx() {
	local rc
	for fmt in json prom; do
		rc=0
		"$TCX" --once --config "$2" --format "${fmt/prom/prometheus}" \
			>"$1.$fmt.out" 2>"$1.$fmt.err" || rc=$?
		echo "$rc" >"$1.$fmt.rc"
	done
}

# snap FILE-PREFIX TARGET...: tc -s -j filter show of each target (DEV-PARENT
# or block-N) into FILE-PREFIX-TARGET.json.
snap() {
	local p=$1 t
	shift
	for t in "$@"; do
		case "$t" in
		block-*) $TC -s -j filter show block "${t#block-}" >"$p-$t.json" ;;
		*) $TC -s -j filter show dev "${t%-*}" "${t##*-}" >"$p-$t.json" ;;
		esac
	done
}

# collect RUN CONFIG TARGET...: tc, tcexporter (json, prometheus), tc again.
collect() {
	local run=$1 cfg=$2
	shift 2
	snap "tc-$run-pre" "$@"
	tcx "$run" "$cfg"
	snap "tc-$run-post" "$@"
}

# qsnap DIR: tc's qdiscs (JSON and text) and each device's classes, in
# compare_qdisc.py's layout (DIR/qdisc.json, qdisc.txt, devices,
# class.DEV.txt).
qsnap() {
	local d
	mkdir -p "$1"
	$TC -s -j qdisc show >"$1/qdisc.json"
	$TC -s qdisc show >"$1/qdisc.txt"
	$IP -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' >"$1/devices"
	while read -r d; do
		$TC -s class show dev "$d" >"$1/class.$d.txt"
	done <"$1/devices"
}

# config FILE TARGET-YAML...: a configuration with these targets.
# (--once dumps every target in full for the action times unless `liveness`
# is off: these configurations test the terse strategy, c17 the times.)
config() {
	local f=$1
	shift
	{
		echo "families: {liveness: off}"
		echo "targets:"
		printf '  - %s\n' "$@"
	} >"$f"
}

c1_flower() {
	# Flower only, on clsact ingress and egress, gact and mirred actions,
	# cookies of 1 to 16 bytes: terse dumps, one per target, nothing else.
	dummy d1 10.1.0.1/24
	dummy d1m
	$TC qdisc add dev d1 clsact
	filt d1 ingress pref 10 protocol ip flower dst_ip 10.1.0.2 action gact pass cookie 0101
	filt d1 ingress pref 10 protocol ip flower dst_ip 10.1.0.3 \
		action mirred egress mirror dev d1m cookie 00112233445566778899aabbccddeeff
	filt d1 ingress pref 20 protocol ipv6 flower action gact drop
	filt d1 egress pref 10 protocol ip flower dst_ip 10.1.0.2 action gact pass cookie 0a
	filt d1 egress pref 10 protocol ip flower dst_ip 10.1.0.3 \
		action mirred egress mirror dev d1m pipe cookie 0b action gact pass cookie 0c
	filt d1 egress pref 20 protocol ip flower ip_proto udp action gact pass cookie ffffffffffffffffffffffffffffffff
	udp 10.1.0.2 3 100
	udp 10.1.0.3 5 300
	udp 10.1.0.4 2 40
	config c.yaml '{dev: d1, parent: ingress}' '{dev: d1, parent: egress}'
	collect r c.yaml d1-ingress d1-egress
}

c2_mixed() {
	# v2a ingress: flower + matchall + u32 prefs (a terse dump aborts on u32
	# with EMSGSIZE: the target is dumped again in full). v2a egress: flower
	# + matchall only (the terse dump silently skips the matchall filters:
	# each matchall pref is re-dumped in full, "terse+repair").
	veth v2a v2b
	$IP addr add 10.2.1.1/24 dev v2b
	$IP addr add 10.2.2.1/24 dev v2a
	for h in 2 3 4 5; do
		$IP neigh add "10.2.1.$h" lladdr "$(mac v2a)" dev v2b
		$IP neigh add "10.2.2.$h" lladdr "$(mac v2b)" dev v2a
	done
	$TC qdisc add dev v2a clsact
	filt v2a ingress pref 10 protocol ip flower dst_ip 10.2.1.2 action gact continue cookie 21
	filt v2a ingress pref 20 protocol ip matchall action gact continue cookie 22
	filt v2a ingress pref 30 protocol ip u32 match ip dst 10.2.1.3/32 action gact continue cookie 23
	filt v2a ingress pref 40 protocol ip flower dst_ip 10.2.1.4 action gact pass cookie 24
	filt v2a ingress pref 50 protocol ip u32 match u32 0 0 action gact pass
	filt v2a egress pref 10 protocol ip flower dst_ip 10.2.2.2 action gact continue cookie 31
	filt v2a egress pref 20 protocol ip matchall action gact continue cookie 32
	filt v2a egress pref 30 protocol ip flower ip_proto udp action gact continue cookie 33
	filt v2a egress pref 40 protocol ip matchall action gact pass cookie 34
	udp 10.2.1.2 3 100
	udp 10.2.1.3 4 200
	udp 10.2.1.4 5 300
	udp 10.2.1.5 1 50
	udp 10.2.2.2 6 120
	udp 10.2.2.3 2 80
	config c.yaml '{dev: v2a, parent: ingress}' '{dev: v2a, parent: egress}'
	collect r c.yaml v2a-ingress v2a-egress
}

c3_multi() {
	# Several actions per filter, and filters without any action (rows: none;
	# tc_scrape_collector_filters still counts them): flower on egress
	# (terse), u32 on ingress (full).
	veth d3 d3p
	dummy d3m
	$IP addr add 10.3.0.1/24 dev d3
	$IP addr add 10.3.1.1/24 dev d3p
	for h in 2 3 4 5; do
		$IP neigh add "10.3.0.$h" lladdr "$(mac d3p)" dev d3
		$IP neigh add "10.3.1.$h" lladdr "$(mac d3)" dev d3p
	done
	$TC qdisc add dev d3 clsact
	filt d3 egress pref 10 protocol ip flower dst_ip 10.3.0.2 \
		action gact pipe cookie 31 \
		action mirred egress mirror dev d3m pipe cookie 32 \
		action gact pass cookie 33
	filt d3 egress pref 10 protocol ip flower dst_ip 10.3.0.3
	filt d3 egress pref 20 protocol ip flower ip_proto udp \
		action gact pipe action gact pipe cookie 3434 action gact pipe action gact pass
	filt d3 egress pref 30 protocol ip flower
	filt d3 ingress pref 10 protocol ip u32 match ip dst 10.3.1.2/32 \
		action gact pipe cookie 35 action mirred egress mirror dev d3m cookie 36
	filt d3 ingress pref 10 protocol ip u32 match ip dst 10.3.1.3/32
	udp 10.3.0.2 4 200
	udp 10.3.0.3 2 100
	udp 10.3.0.4 3 60
	udp 10.3.1.2 5 90
	udp 10.3.1.3 1 30
	config c.yaml '{dev: d3, parent: egress}' '{dev: d3, parent: ingress}'
	collect r c.yaml d3-egress d3-ingress
}

c4_chains() {
	# Chains 0 -> 5 -> 9 by gact's goto chain, pref 10 in each of them (the
	# matchall repair must pick the right chain).
	dummy d4 10.4.0.1/24
	dummy d4m
	$TC qdisc add dev d4 clsact
	filt d4 egress chain 0 pref 10 protocol ip flower dst_ip 10.4.0.0/24 \
		action gact goto chain 5 cookie 41
	filt d4 egress chain 5 pref 10 protocol ip flower ip_proto udp \
		action mirred egress mirror dev d4m pipe cookie 42 action gact goto chain 9 cookie 43
	filt d4 egress chain 5 pref 20 protocol ip flower ip_proto icmp \
		action gact goto chain 9 cookie 44
	filt d4 egress chain 9 pref 10 protocol ip matchall action gact pass cookie 45
	filt d4 egress chain 9 pref 20 protocol ip flower action gact drop cookie 46
	filt d4 egress chain 7 pref 10 protocol ip flower action gact pass cookie 47
	udp 10.4.0.2 3 100
	ping -c 1 -W 1 -w 1 -s 200 10.4.0.3 >/dev/null 2>&1 || true
	config c.yaml '{dev: d4, parent: egress}'
	collect r c.yaml d4-egress
}

c5_block() {
	# Shared blocks 55 (ingress) and 56 (egress) bound to two dummies: with
	# `all: true` each block is one target, dumped once, labelled by block.
	dummy d5a 10.5.0.1/24
	dummy d5b 10.5.1.1/24
	$TC qdisc add dev d5a ingress_block 55 egress_block 56 clsact
	$TC qdisc add dev d5b ingress_block 55 egress_block 56 clsact
	filt block 56 pref 10 protocol ip flower dst_ip 10.5.0.2 action gact pass cookie 51
	filt block 56 pref 10 protocol ip flower dst_ip 10.5.1.2 action gact pass cookie 52
	filt block 56 pref 20 protocol ip flower action gact pass cookie 53
	filt block 55 pref 10 protocol ip flower dst_ip 10.5.0.1 action gact drop cookie 54
	udp 10.5.0.2 3 100
	udp 10.5.1.2 5 200
	udp 10.5.0.7 2 300
	udp 10.5.1.7 1 50
	config c.yaml '{all: true}'
	collect r c.yaml block-55 block-56
}

c6_traffic() {
	# Counters that differ: packets through a dummy's egress and a veth's
	# ingress; gact continue passes a packet on to the next pref; drop and
	# police make drops and overlimits non-zero. (Packet counters above 2^32,
	# TCA_STATS_PKT64, cannot be produced cheaply: the unit tests cover them.)
	dummy d6 10.6.0.1/24
	veth v6a v6b
	$IP addr add 10.6.1.1/24 dev v6b
	for h in 2 3 4; do
		$IP neigh add "10.6.1.$h" lladdr "$(mac v6a)" dev v6b
	done
	$TC qdisc add dev d6 clsact
	$TC qdisc add dev v6a clsact
	filt d6 egress pref 10 protocol ip flower dst_ip 10.6.0.0/24 action gact continue cookie 61
	filt d6 egress pref 20 protocol ip flower ip_proto udp action gact continue cookie 62
	filt d6 egress pref 30 protocol ip flower dst_ip 10.6.0.4 action gact drop cookie 63
	filt d6 egress pref 40 protocol ip flower dst_ip 10.6.0.5 \
		action police rate 8kbit burst 1k conform-exceed drop cookie 64
	filt d6 egress pref 50 protocol ip matchall action gact pass cookie 65
	filt v6a ingress pref 10 protocol ip flower src_ip 10.6.1.1 action gact continue cookie 66
	filt v6a ingress pref 20 protocol ip u32 match ip dst 10.6.1.3/32 action gact pass cookie 67
	filt v6a ingress pref 30 protocol ip flower action gact pass cookie 68
	udp 10.6.0.2 3 100
	udp 10.6.0.3 4 300
	udp 10.6.0.4 5 500
	udp 10.6.0.5 12 700
	ping -c 1 -W 1 -w 1 10.6.0.6 >/dev/null 2>&1 || true
	udp 10.6.1.2 6 64
	udp 10.6.1.3 7 200
	udp 10.6.1.4 2 1000
	config c.yaml '{dev: d6, parent: egress}' '{dev: v6a, parent: ingress}'
	collect r c.yaml d6-egress v6a-ingress
}

c7_replace() {
	# `tc filter replace` of a filter, same handle, same cookie: new action
	# instances, so counters start again from zero; the output has the row
	# once, with the new counters.
	local ck=77777777777777777777777777777777
	dummy d7 10.7.0.1/24
	$TC qdisc add dev d7 clsact
	filt d7 egress pref 10 handle 1 protocol ip flower dst_ip 10.7.0.2 action gact pass cookie $ck
	filt d7 egress pref 10 handle 2 protocol ip flower dst_ip 10.7.0.3 action gact pass cookie 78
	udp 10.7.0.2 5 200
	udp 10.7.0.3 2 100
	config c.yaml '{dev: d7, parent: egress}'
	collect r1 c.yaml d7-egress
	$TC filter replace dev d7 egress pref 10 handle 1 protocol ip flower dst_ip 10.7.0.2 \
		action gact pass cookie $ck
	udp 10.7.0.2 2 150
	collect r2 c.yaml d7-egress
}

c8_delete() {
	# A device deleted between two collections: the second reports its
	# target failed (exit 1, the device named), the other target is intact.
	dummy d8a 10.8.0.1/24
	dummy d8b 10.8.1.1/24
	$TC qdisc add dev d8a clsact
	$TC qdisc add dev d8b clsact
	filt d8a egress pref 10 protocol ip flower dst_ip 10.8.0.2 action gact pass cookie 81
	filt d8b egress pref 10 protocol ip flower dst_ip 10.8.1.2 action gact pass cookie 82
	filt d8b egress pref 20 protocol ip matchall action gact pass cookie 83
	udp 10.8.0.2 3 100
	udp 10.8.1.2 4 200
	config c.yaml '{dev: d8a, parent: egress}' '{dev: d8b, parent: egress}'
	collect r1 c.yaml d8a-egress d8b-egress
	$IP link del d8a
	collect r2 c.yaml d8b-egress
}

c9_actions() {
	# Every action kind of the kernel (but xt and ipt: tc needs iptables'
	# extensions for them), each with an index of its own, on a u32 filter (a
	# full dump: the index is in each kind's parameters, pedit ex's under
	# TCA_PEDIT_PARMS_EX) and on a flower filter, each filter with its own
	# datagrams. The first 16 on d9 (u32) and d9f (flower, a terse dump: no
	# index), run r, compared with tc. The last 4 on d9s (u32 and flower: a
	# full dump for both), run s, checked against the indices given here:
	# iproute2 6.1's tc -j prints nat's kind as "type", gate without its
	# kind, simple and skbmod as plain text.
	local kinds=(
		"gact pass"
		"mirred egress mirror dev d9m"
		"police rate 1mbit burst 10k conform-exceed pipe"
		"pedit ex munge ip ttl set 10 pipe"
		"pedit munge offset 8 u8 set 10 pipe"
		"skbedit mark 5 pipe"
		"tunnel_key set src_ip 10.9.9.1 dst_ip 10.9.9.2 id 7 dst_port 4789 pipe"
		"vlan push id 10 pipe"
		"csum ip4h udp pipe"
		"ct"
		"bpf bytecode-file ret.bpf pipe"
		"sample rate 10 group 5 pipe"
		"connmark pipe"
		"ctinfo cpmark pipe"
		"mpls push label 20 pipe"
		"ife encode allow mark dst 02:15:15:15:15:15 pipe"
		"nat egress 10.9.8.1/32 10.9.8.2 pipe"
		"gate sched-entry open 200000000 -1 -1"
		"simple sdata hello pipe"
		"skbmod swap mac pipe"
	)
	local i k a u f ua fa
	dummy d9 10.9.0.1/24
	dummy d9f 10.9.1.1/24
	dummy d9s 10.9.2.1/24
	dummy d9m
	for u in d9 d9f d9s; do $TC qdisc add dev "$u" clsact; done
	echo '1,6 0 0 4294967295' >ret.bpf # classic BPF: return -1
	for i in "${!kinds[@]}"; do
		k=$((i + 10))
		if [ "$i" -lt 16 ]; then
			u=d9 ua=10.9.0.$k f=d9f fa=10.9.1.$k
		else
			u=d9s ua=10.9.2.$k f=d9s fa=10.9.2.$((k + 100))
		fi
		# shellcheck disable=SC2206 # the words of the action
		a=(${kinds[$i]})
		filt $u egress pref 10 protocol ip u32 match ip dst "$ua/32" \
			action "${a[@]}" index $((100 + i)) cookie "$(printf '9%03x' "$k")"
		filt $f egress pref 20 protocol ip flower dst_ip "$fa" \
			action "${a[@]}" index $((200 + i)) cookie "$(printf 'f%03x' "$k")"
		udp "$ua" 1 $((10 + i))
		udp "$fa" 2 $((10 + i))
	done
	config c.yaml '{dev: d9, parent: egress}' '{dev: d9f, parent: egress}'
	collect r c.yaml d9-egress d9f-egress
	config s.yaml '{dev: d9s, parent: egress}'
	tcx s s.yaml
}

# churn_under_daemon SECS ROUND TRAFFIC: the daemon on c.yaml (its /metrics
# at 127.0.0.1:9591) while, for SECS seconds, `ROUND >round.batch; tc
# -batch round.batch` runs every 200 ms (back to back when tc is slower) and
# `TRAFFIC SECS` sends in the background. The daemon is scraped (busybox
# wget) into scrape-0.prom before, about every second into scrape-N.prom,
# and once more after two collections past the end (final.prom). Writes
# rounds "ROUNDS SECONDS" and tcx.rc, the daemon's exit status after
# SIGTERM.
churn_under_daemon() {
	local secs=$1 round=$2 traffic=$3 i r=0 t end now pid spid n=0 last=0 c0 c
	"$TCX" --config c.yaml >tcx.out 2>tcx.err &
	pid=$!
	# scrape FILE: /metrics into FILE (fails unless it answers 200).
	scrape() { wget -q -O "$1" http://127.0.0.1:9591/metrics 2>/dev/null; }
	collections() { sed -n 's/^tc_exporter_collections_total //p' "$1"; }
	for ((i = 0; i < 300; i++)); do
		scrape scrape-0.prom && break
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "the daemon did not answer within 30 s"; return 1; }
	("$traffic" "$secs") &
	spid=$!
	t=${EPOCHREALTIME/./}
	end=$((t + secs * 1000000))
	while [ "$t" -lt "$end" ]; do
		"$round" >round.batch
		$TC -batch round.batch
		r=$((r + 1))
		now=${EPOCHREALTIME/./}
		if [ $((now - last)) -ge 1000000 ]; then
			n=$((n + 1))
			scrape "scrape-$n.prom" || { echo "scrape $n failed"; return 1; }
			last=$now
		fi
		t=$((t + 200000)) # the next round, 200 ms after this one began
		now=${EPOCHREALTIME/./}
		[ "$t" -le "$now" ] || sleep "$(printf '0.%06d' $((t - now)))"
		t=${EPOCHREALTIME/./}
	done
	echo "$r $secs" >rounds
	wait "$spid"
	# two collections after the traffic ended: the last counters are in
	scrape final.prom || { echo "the scrape after the traffic failed"; return 1; }
	c0=$(collections final.prom)
	for ((i = 0; i < 300; i++)); do
		scrape final.prom && c=$(collections final.prom) && [ "$c" -ge $((c0 + 2)) ] && break
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "the daemon did not collect twice within 30 s"; return 1; }
	kill -TERM "$pid"
	r=0
	wait "$pid" || r=$?
	echo "$r" >tcx.rc
}

c10_churn() {
	# Issue #11's software-switch case: the daemon (`aggregate: {by: [tenant,
	# rule]}`, collecting every second) while three flower filters with gact
	# and cookies (two aggregates) are replaced make-before-break for
	# CHURN_SECONDS. Each round (one every 200 ms, or back to back when tc is
	# slower), one tc -batch, adds each filter at the other pref of its pair
	# (handle 1, as the kernel would pick), then deletes the old one by
	# handle: the new filter of every other round has the identity (pref,
	# handle, cookie) of the one deleted the round before, and a terse dump
	# carries no action index to tell them apart. Meanwhile UDP datagrams to the three destinations leave through
	# d10's egress (a dummy: the egress hook runs within the write, so a
	# datagram written is a datagram counted, by exactly one filter: gact
	# pass ends the classification), each counted when written, three every
	# 10 ms at most (the sender leaves the one CPU to tc). The daemon is
	# scraped (busybox wget) about every second into scrape-N.prom, and once
	# more after two collections past the end (final.prom). sent-DST holds
	# "PACKETS BYTES" (a frame is the payload and 42 bytes of headers),
	# tcx.rc the daemon's exit status after SIGTERM, rounds "ROUNDS SECONDS".
	# run.sh checks them.
	local i
	local -a pref dst=(10.10.0.2 10.10.0.3 10.10.0.4) ck=(a1 a2 b1) size=(100 300 700)
	dummy d10 10.10.0.1/24
	$TC qdisc add dev d10 clsact
	for i in 0 1 2; do
		pref[i]=$((10 + i))
		$TC filter add dev d10 egress pref "${pref[i]}" handle 1 protocol ip flower \
			dst_ip "${dst[i]}" action gact pass cookie "${ck[i]}"
	done
	printf '%s\n' 'interval: 1s' 'targets: [{dev: d10, parent: egress}]' \
		'labels: [tenant, rule]' 'cookies:' '  "a1": [acme, dns]' '  "a2": [acme, dns]' \
		'  "b1": [beta, web]' 'aggregate: {by: [tenant, rule]}' \
		'http: {listen: "127.0.0.1:9591"}' >c.yaml
	# c10_traffic: the senders (a subshell), until the rounds are over
	c10_traffic() {
		local stop=$((SECONDS + $1)) np=(0 0 0) pause i
		mkfifo /tmp/c10.pause # read -t on it: a pause without a fork
		exec {pause}<>/tmp/c10.pause
		while [ "$SECONDS" -lt "$stop" ]; do
			read -r -t 0.01 -u "$pause" || true
			for i in 0 1 2; do
				if printf "%${size[i]}s" x 2>/dev/null >"/dev/udp/${dst[i]}/9"; then
					np[i]=$((np[i] + 1))
				fi
			done
		done
		for i in 0 1 2; do
			echo "${np[i]} $((np[i] * (size[i] + 42)))" >"sent-${dst[i]}"
		done
	}
	# c10_round: one round's tc -batch lines
	c10_round() {
		local i old
		for i in 0 1 2; do
			old=${pref[i]}
			pref[i]=$((old == 10 + i ? 20 + i : 10 + i))
			echo "filter add dev d10 egress pref ${pref[i]} handle 1 protocol ip flower" \
				"dst_ip ${dst[i]} action gact pass cookie ${ck[i]}"
			echo "filter del dev d10 egress pref $old handle 1 flower"
		done
	}
	churn_under_daemon "${CHURN_SECONDS:-20}" c10_round c10_traffic
}

c11_qdiscs() {
	# Issue 16's qdiscs of every kind with statistics, each with traffic, and
	# their classes: run.sh compares them with tc (compare_qdisc.py), every
	# generic counter and every statistic tc prints. A dummy's egress
	# dequeues at once, so where a queue should fill, the kind sits under a
	# root tbf of 8 bit/s, which lets the first few datagrams through and
	# then nothing for minutes: the child keeps its backlog, and drops what
	# is past its limit, and nothing moves while tc and tcexporter run.
	#   dq fq_codel (limit 10), dc codel (limit 5), ds sfq (limit 8), dr red,
	#   df fq (flow_limit 3: one socket sends 30; on 6.12, 10 of them made no
	#   flows_plimit drop, 30 make 14), dk cake diffserv4 (clsact sets
	#   skb->priority 10:1..10:4, one tin each, 3 to 6 datagrams): all under
	#   the tbf; dp pie alone on its dummy; m0 a veth with 4 tx queues under
	#   mq, fq_codel (the default) on three of them and pfifo on 1:2, whose
	#   numbers mq's must add up to.
	# (hfsc is c12's: its qdisc makes tc's JSON invalid.) The setup goes
	# through one ip -batch and one tc -batch: under TCG every process
	# started costs. Captures: pre/ and post/ (compare_qdisc.py's layout)
	# around r.json and r.prom.
	local k d i=20
	local -A kind=([dq]="fq_codel limit 10" [dc]="codel limit 5" [ds]="sfq limit 8 perturb 0"
		[dr]="red limit 6000 min 1000 max 3000 avpkt 300 burst 5 probability 0.5 bandwidth 10mbit"
		[df]="fq flow_limit 3" [dk]="cake diffserv4")
	for d in dq dc ds dr df dk dp; do
		printf '%s\n' "link add $d type dummy" "link set $d up" "addr add 10.11.$i.1/24 dev $d"
		i=$((i + 1))
	done >ip.batch
	printf '%s\n' "link add m0 numtxqueues 4 type veth peer name m1" "link set m0 up" \
		"link set m1 up" "addr add 10.11.28.1/24 dev m0" \
		"neigh add 10.11.28.2 lladdr 02:00:00:11:28:02 dev m0" \
		"neigh add 10.11.28.3 lladdr 02:00:00:11:28:02 dev m0" >>ip.batch
	$IP -batch ip.batch
	{
		for d in dq dc ds dr df dk; do
			echo "qdisc add dev $d root handle 1: tbf rate 8bit burst 1600 limit 100000"
			echo "qdisc add dev $d parent 1:1 handle 10: ${kind[$d]}"
		done
		echo "qdisc add dev dk clsact"
		for k in 1 2 3 4; do
			echo "filter add dev dk egress pref $k protocol ip u32" \
				"match ip dst 10.11.25.$((k + 1))/32 action skbedit priority 10:$k"
		done
		echo "qdisc add dev dp root handle 1: pie limit 100"
		echo "qdisc add dev m0 root handle 1: mq"
		echo "qdisc replace dev m0 parent 1:2 handle 12: pfifo limit 100"
	} >tc.batch
	$TC -batch tc.batch
	udp 10.11.20.2 20 300
	udp 10.11.21.2 20 200
	udp 10.11.22.2 20 250
	udp 10.11.23.2 30 300
	exec 3>/dev/udp/10.11.24.2/9
	for ((i = 0; i < 30; i++)); do printf "%300s" x >&3 2>/dev/null || true; done
	exec 3>&-
	udp 10.11.24.3 5 200
	for k in 1 2 3 4; do udp "10.11.25.$((k + 1))" $((k + 2)) $((100 * k)); done
	udp 10.11.26.2 10 300
	udp 10.11.28.2 10 300 # a socket each: spread over the 4 queues
	udp 10.11.28.3 10 200
	config c.yaml '{all: true}'
	# the flow classes of fq_codel, sfq and cake too (config() wrote the
	# families key: a second one is a duplicate key)
	sed -i 's/^families: {liveness: off}$/families: {liveness: off, flows: on}/' c.yaml
	qsnap pre
	tcx r c.yaml
	qsnap post
}

c12_hfsc() {
	# hfsc, the one kind whose qdisc iproute2 6.1 prints as invalid JSON
	# (its options): a namespace of its own, so that c11's qdiscs keep their
	# JSON. Classes 1:1 > 1:10 (link-sharing) and 1:20 (real-time too, the
	# default), a u32 filter to 1:10; datagrams to both.
	dummy dh 10.12.0.1/24
	printf '%s\n' "qdisc add dev dh root handle 1: hfsc default 20" \
		"class add dev dh parent 1: classid 1:1 hfsc ls rate 100mbit ul rate 100mbit" \
		"class add dev dh parent 1:1 classid 1:10 hfsc ls rate 50mbit" \
		"class add dev dh parent 1:1 classid 1:20 hfsc rt rate 10mbit ls rate 50mbit" \
		"filter add dev dh parent 1: pref 1 protocol ip u32 match ip dst 10.12.0.2/32 flowid 1:10" \
		>tc.batch
	$TC -batch tc.batch
	udp 10.12.0.2 7 300
	udp 10.12.0.3 9 200
	config c.yaml '{all: true}'
	qsnap pre
	tcx r c.yaml
	qsnap post
}

c13_police() {
	# Legacy policers (`police` without `action`, as shaping scripts police
	# ingress), which the kernel dumps under the classifier's own POLICE
	# attribute with their counters in the filter's statistics: u32 on a
	# veth's ingress qdisc, basic on a dummy's egress. 64kbit with a 10k
	# burst lets about 10 datagrams of 1000 bytes through, then 1 a second:
	# of 40 sent at once, some pass and the others are dropped.
	veth v13a v13b
	$IP addr add 10.13.1.1/24 dev v13b
	$IP neigh add 10.13.1.2 lladdr "$(mac v13a)" dev v13b
	$TC qdisc add dev v13a ingress
	$TC filter add dev v13a parent ffff: protocol ip prio 50 u32 match ip src 0.0.0.0/0 \
		police rate 64kbit burst 10k drop flowid :1
	dummy d13 10.13.0.1/24
	$TC qdisc add dev d13 clsact
	$TC filter add dev d13 egress protocol ip prio 7 basic police rate 64kbit burst 10k drop
	udp 10.13.1.2 40 1000
	udp 10.13.0.2 30 1000
	config c.yaml '{dev: v13a, parent: ingress}' '{dev: d13, parent: egress}'
	collect r c.yaml v13a-ingress d13-egress
	$TC -s filter show dev v13a ingress >tc-r-post-v13a-ingress.txt
	$TC -s filter show dev d13 egress >tc-r-post-d13-egress.txt
}

c14_hits() {
	# Rules that only classify, as shaping scripts write them: an HTB tree
	# on a dummy's egress whose u32 filters set flowid only, at the qdisc
	# (parent 1:) and at the inner class 1:1 with the same pref (their u32
	# tables are shared: the kernel lists each knode under both parents);
	# a basic with an ematch and a matchall with a classid after them.
	# Debian builds u32 with CONFIG_CLS_U32_PERF and CONFIG_CLS_U32_MARK.
	# Datagrams to .2 (7), .3 (5), .4 (4), .5 (3) and .6 (2): each u32 rule
	# at 1: is tried by every datagram the ones before it did not match.
	dummy d14 10.14.0.1/24
	$TC qdisc add dev d14 root handle 1: htb default 30
	$TC class add dev d14 parent 1: classid 1:1 htb rate 100mbit
	for c in 10 20 30; do
		$TC class add dev d14 parent 1:1 classid "1:$c" htb rate 10mbit ceil 100mbit
	done
	$TC filter add dev d14 parent 1: protocol ip prio 10 u32 \
		match ip dst 10.14.0.2/32 match ip dport 9 0xffff flowid 1:10
	$TC filter add dev d14 parent 1: protocol ip prio 10 u32 \
		match ip dst 10.14.0.3/32 match mark 0 0xff flowid 1:20
	$TC filter add dev d14 parent 1: protocol ip prio 10 u32 match ip dst 10.14.0.4/32 flowid 1:1
	$TC filter add dev d14 parent 1:1 protocol ip prio 10 u32 match ip dst 10.14.0.4/32 flowid 1:30
	# tc reads the ematch ids from this file, which the VM does not have
	# (TCF_EM_CMP is 1)
	[ -f /etc/iproute2/ematch_map ] || {
		mkdir -p /etc/iproute2
		printf '1\tcmp\n' >/etc/iproute2/ematch_map
	}
	$TC filter add dev d14 parent 1: protocol ip prio 20 basic \
		match 'cmp(u32 at 16 layer network eq 0x0a0e0005)' classid 1:20
	$TC filter add dev d14 parent 1: protocol ip prio 30 matchall classid 1:30
	udp 10.14.0.2 7 100
	udp 10.14.0.3 5 100
	udp 10.14.0.4 4 100
	udp 10.14.0.5 3 100
	udp 10.14.0.6 2 100
	config c.yaml '{dev: d14, parent: "1:"}' '{dev: d14, parent: "1:1"}'
	for ph in pre post; do
		[ "$ph" = pre ] || tcx r c.yaml
		$TC -s filter show dev d14 parent 1: >"tc-r-$ph-1.txt"
		$TC -s filter show dev d14 parent 1:1 >"tc-r-$ph-1_1.txt"
	done
	snmp_filters s c.yaml
}

# snmp_filters RUN CONFIG: tcxFilterTable (issue #27) through a private
# snmpd (UDP on 127.0.0.1, master agentx on a private socket; SNMP's
# packets cross lo only, no filter of the case): the daemon on CONFIG's
# targets with its subagent; once tcxFilterRows answers and a collection
# reached the agent after it, a walk of the TCEXPORTER-MIB subtree into
# RUN.walk between two `--once --format json` runs (RUN.json1.out,
# RUN.json2.out: the host checks that they agree, so nothing moved, and that
# the walk equals them); RUN.ifindex holds "NAME INDEX" of this namespace's
# devices (the host has none of them); RUN.tcx.rc the daemon's status after
# SIGTERM.
snmp_filters() {
	local run=$1 cfg=$2 s=/tmp/snmp-$CASE i v t0 pid spid rc=0
	local oid=.1.3.6.1.4.1.8072.9999.9999.4242 agent=127.0.0.1:9161
	mkdir -p "$s/persist" "$s/conf" "$s/tcx" "$s/tools"
	printf '%s\n' "agentAddress udp:$agent" 'master agentx' "agentXSocket unix:$s/agentx.sock" \
		'rocommunity public 127.0.0.1' 'disablePerl true' >"$s/snmpd.conf"
	SNMP_PERSISTENT_DIR=$s/persist SNMPCONFPATH=$s/conf MIBS='' MIBDIRS='' \
		snmpd -f -Lo -C -c "$s/snmpd.conf" >"$run.snmpd.log" 2>&1 &
	spid=$!
	{
		cat "$cfg"
		echo 'interval: 1s'
		echo 'http: {listen: "127.0.0.1:9592"}'
		echo "snmp: {enabled: true, agentx_socket: \"unix:$s/agentx.sock\", ping_interval: 1s}"
	} >"$run.yaml"
	SNMP_PERSISTENT_DIR=$s/tcx SNMPCONFPATH=$s/tcx "$TCX" --config "$run.yaml" \
		>"$run.tcx.out" 2>"$run.tcx.err" &
	pid=$!
	export MIBS='' MIBDIRS='' SNMP_PERSISTENT_DIR=$s/tools SNMPCONFPATH=$s/tools
	# sget OID: the value of OID after its type ("Gauge32: 6"), or nothing
	# (a failed request is no value yet: not an error under set -e)
	sget() { { snmpget -v2c -c public -On -t 1 -r 0 "$agent" "$1" 2>/dev/null || true; } | sed -n 's/^[^=]* = //p'; }
	for ((i = 0; i < 600; i++)); do
		v=$(sget "$oid.1.1.10.0")
		case $v in Gauge32:*) break ;; esac
		sleep 0.1
	done
	[ "$i" -lt 600 ] || { echo "tcxFilterRows does not answer after 60 s: '$v'"; return 1; }
	t0=$(sget "$oid.1.1.3.0")
	for ((i = 0; i < 300; i++)); do
		v=$(sget "$oid.1.1.3.0")
		case $v in Timeticks:*) [ "$v" = "$t0" ] || break ;; esac
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "no collection reached the agent within 30 s: '$v'"; return 1; }
	"$TCX" --once --config "$cfg" --format json >"$run.json1.out" 2>"$run.json1.err" ||
		{ echo "--once failed: $(cat "$run.json1.err")"; return 1; }
	snmpbulkwalk -v2c -c public -On -Ox -Cr10 -t 5 -r 1 "$agent" "$oid" >"$run.walk" 2>"$run.walk.err" ||
		{ echo "snmpbulkwalk failed: $(cat "$run.walk.err")"; return 1; }
	"$TCX" --once --config "$cfg" --format json >"$run.json2.out" 2>"$run.json2.err" ||
		{ echo "--once failed: $(cat "$run.json2.err")"; return 1; }
	$IP -o link show | sed -n 's/^\([0-9]*\): \([^:@]*\)[:@].*/\2 \1/p' >"$run.ifindex"
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	echo "$rc" >"$run.tcx.rc"
	kill -TERM "$spid"
	wait "$spid" || true
}

c15_hits_churn() {
	# Issue #27's aggregation of hit counters: the daemon (`aggregate: {by:
	# [device]}`, collecting every second) while u32 rules that only set a
	# class under HTB are replaced make-before-break for CHURN_SECONDS:
	# each round (one tc -batch) adds each rule at the other pref of its
	# pair, then deletes the old one by handle (each pref keeps its hash
	# table, so a pref's rule always gets the same handle: the new rule of
	# every other round has the identity of the one deleted the round
	# before). Datagrams to the three destinations leave through d15's egress
	# meanwhile, each matched by exactly one rule (the first pref that has
	# it). The hit aggregate of d15 must count every datagram: a deleted
	# rule's hits come from its deletion notification. Scrapes as c10's;
	# sent holds the datagrams written.
	local i old c
	local -a pref dst=(10.15.0.2 10.15.0.3 10.15.0.4) h
	dummy d15 10.15.0.1/24
	$TC qdisc add dev d15 root handle 1: htb default 30
	$TC class add dev d15 parent 1: classid 1:1 htb rate 1gbit
	for c in 10 20 30; do $TC class add dev d15 parent 1:1 classid "1:$c" htb rate 1gbit; done
	# rule P I: the u32 rule of destination I at pref P (batch syntax)
	rule() { echo "filter add dev d15 parent 1: pref $1 protocol ip u32 match ip dst ${dst[$2]}/32 flowid 1:10"; }
	# every pref's hash table, and its rule's handle (fh X::800), made once
	for i in 0 1 2; do
		for old in $((10 + i)) $((20 + i)); do
			$TC $(rule "$old" "$i")
			h[old]=$($TC filter show dev d15 parent 1: pref "$old" | sed -n 's/.* fh \([0-9a-f]*::[0-9a-f]*\) .*/\1/p')
			[ -n "${h[old]}" ] || { echo "no handle at pref $old"; return 1; }
		done
		$TC filter del dev d15 parent 1: pref $((20 + i)) handle "${h[20 + i]}" u32
		pref[i]=$((10 + i))
	done
	printf '%s\n' 'interval: 1s' 'targets: [{dev: d15, parent: "1:"}]' \
		'aggregate: {by: [device]}' 'http: {listen: "127.0.0.1:9591"}' >c.yaml
	# c15_traffic: the senders (a subshell), until the rounds are over
	c15_traffic() {
		local stop=$((SECONDS + $1)) np=0 pause i
		mkfifo /tmp/c15.pause
		exec {pause}<>/tmp/c15.pause
		while [ "$SECONDS" -lt "$stop" ]; do
			read -r -t 0.01 -u "$pause" || true
			for i in 0 1 2; do
				! printf "%100s" x 2>/dev/null >"/dev/udp/${dst[i]}/9" || np=$((np + 1))
			done
		done
		echo "$np" >sent
	}
	# c15_round: one round's tc -batch lines
	c15_round() {
		local i old
		for i in 0 1 2; do
			old=${pref[i]}
			pref[i]=$((old == 10 + i ? 20 + i : 10 + i))
			rule "${pref[i]}" "$i"
			echo "filter del dev d15 parent 1: pref $old handle ${h[old]} u32"
		done
	}
	churn_under_daemon "${CHURN_SECONDS:-20}" c15_round c15_traffic
	$TC -s filter show dev d15 parent 1: >tc-final.txt
}

c16_plans() {
	# Issue #24's plans: a dummy per kind, each set up with values other
	# than its defaults, captured as tc -d prints them (tc-d.json: every
	# qdisc; hfsc's qdisc makes that JSON invalid, so hfsc sits on its own
	# device and is read from tc -d's text: tc-d-hfsc.txt, tc-d-class-hfsc.txt),
	# then tcexporter (r.json.out, r.prom.out). And an HTB class with a rate
	# estimator (250ms 1sec) under a ceil of 1mbit, flooded: two tc
	# -s reads of the class 3 s apart during the flood (est-tc-1.txt,
	# est-tc-2.txt, their times in est-times: the bytes it sent per second
	# over that window), tcexporter (est.prom.out) right before the second.
	local d i=1
	local -A kind=([pq]="fq_codel limit 1000 flows 512 quantum 1000 target 4ms interval 80ms ce_threshold 2ms memory_limit 16Mb drop_batch 32 ecn"
		[pc]="codel limit 200 target 3ms interval 50ms ce_threshold 1ms ecn"
		[pf]="fq limit 5000 flow_limit 50 quantum 3000 initial_quantum 15000 maxrate 10mbit buckets 256 refill_delay 50ms low_rate_threshold 1mbit ce_threshold 5ms horizon 5s"
		[pp]="fq_pie limit 3000 flows 256 target 10ms tupdate 20ms quantum 1600 memory_limit 8Mb ecn"
		[pi]="pie limit 500 target 20ms tupdate 40ms ecn bytemode"
		[pr]="red limit 60000 min 5000 max 15000 avpkt 1000 burst 8 probability 0.1 bandwidth 10mbit"
		[pk]="choke limit 800 min 100 max 300 avpkt 1000 burst 150 probability 0.05 bandwidth 10mbit"
		[pb]="sfb limit 700 max 30 target 10 rehash 300000 db 30000 penalty_rate 20 penalty_burst 30"
		[ps]="sfq limit 100 quantum 1600 perturb 10 divisor 512 flows 64 depth 50"
		[pw]="pfifo limit 77" [px]="bfifo limit 33000" [py]="pfifo_head_drop limit 55"
		[pn]="netem limit 900 delay 50ms 10ms loss 2% duplicate 1% rate 5mbit"
		[pa]="cake bandwidth 20mbit diffserv8 rtt 50ms dual-srchost"
		[pt]="tbf rate 3mbit burst 12k limit 40000")
	for d in "${!kind[@]}" ph; do
		printf '%s\n' "link add $d type dummy" "link set $d up" "addr add 10.16.$i.1/24 dev $d"
		i=$((i + 1))
	done >ip.batch
	printf '%s\n' "link add pe type dummy" "link set pe up" "addr add 10.16.100.1/24 dev pe" >>ip.batch
	$IP -batch ip.batch
	for d in "${!kind[@]}"; do
		echo "qdisc add dev $d root handle 1: ${kind[$d]}"
	done >tc.batch
	printf '%s\n' "qdisc add dev ph root handle 1: hfsc default 20" \
		"class add dev ph parent 1: classid 1:1 hfsc ls m1 2mbit d 10ms m2 100mbit ul rate 100mbit" \
		"class add dev ph parent 1:1 classid 1:10 hfsc ls rate 50mbit" \
		"class add dev ph parent 1:1 classid 1:20 hfsc rt m1 20mbit d 5ms m2 10mbit ls rate 50mbit ul rate 80mbit" \
		"qdisc add dev pe root handle 1: htb default 10" \
		"class add dev pe parent 1: classid 1:10 estimator 250ms 1sec htb rate 1mbit ceil 1mbit" >>tc.batch
	$TC -batch tc.batch
	$TC -d -j qdisc show >tc-d.json.all
	# everything but hfsc's, whose options make the JSON invalid
	for d in "${!kind[@]}"; do $TC -d -j qdisc show dev "$d"; done >tc-d.json
	$TC -d qdisc show dev ph >tc-d-hfsc.txt
	$TC -d class show dev ph >tc-d-class-hfsc.txt
	config c.yaml '{all: true}'
	tcx r c.yaml
	# the estimator: a flood of 1:10 through its 1mbit ceil, in datagrams of
	# 1400 bytes (89 a second fill it: a bash loop in the VM beside the ASan
	# build's --once sent fewer than 125 of 1000 bytes at times, so the
	# queue emptied and the rate varied, 1.032x), until the second tc read
	# (a flood of a fixed 8 s ended before it once, with the ASan build's
	# --once slower: 1.054x). At 256kbit the estimator's 250 ms samples are
	# too few packets (0.946x).
	local flood
	(
		while :; do printf "%1400s" x 2>/dev/null >/dev/udp/10.16.100.2/9 || true; done
	) &
	flood=$!
	sleep 3
	cut -d' ' -f1 /proc/uptime >est-times # busybox's date has no %N
	$TC -s class show dev pe classid 1:10 >est-tc-1.txt
	sleep 3
	"$TCX" --once --config c.yaml --format prometheus >est.prom.out 2>est.prom.err
	cut -d' ' -f1 /proc/uptime >>est-times
	$TC -s class show dev pe classid 1:10 >est-tc-2.txt
	kill "$flood"
	wait "$flood" 2>/dev/null || true
}

c17_liveness() {
	# Issue #25's action times under the daemon (`interval: 1s`,
	# `liveness_interval: 5s`): d17's egress holds two flower filters (a
	# terse target: no times in its dumps but those of the liveness passes,
	# kept in between), d17m's a flower filter and a matchall (terse+repair:
	# the matchall pref is dumped in full in every collection), each with
	# gact pass and a cookie of its own (17a1, 17b1 on d17; 17c1, 17d1 on
	# d17m). The daemon is scraped (busybox wget) once per collection into
	# scrape-N.prom, "N COLLECTIONS LIVENESS_PASS SNAPSHOT_TIMESTAMP" a line
	# in scrapes. No packet before the second liveness pass; right after it,
	# one datagram to 17a1 and one to 17d1 (traffic-a holds the wall clock
	# before and after them), 1.5 s later two more to each (traffic-b); then
	# scrapes until a liveness pass that began after the traffic, and one
	# more collection. tc -s -j of both targets (tc-pre-*.json before the
	# traffic, tc-post-*.json after that liveness pass; tc-pre.t, tc-post.t
	# the wall clock before and after each read) and `--once --format json`
	# (once-pre.json, once-post.json) beside them. The wall clock is bash's
	# EPOCHREALTIME (busybox's date has no %N). run.sh checks them.
	local pid i rc=0 last=0
	dummy d17 10.17.0.1/24
	dummy d17m 10.17.1.1/24
	$TC qdisc add dev d17 clsact
	$TC qdisc add dev d17m clsact
	$TC filter add dev d17 egress pref 10 protocol ip flower dst_ip 10.17.0.2 action gact pass cookie 17a1
	$TC filter add dev d17 egress pref 10 protocol ip flower dst_ip 10.17.0.3 action gact pass cookie 17b1
	$TC filter add dev d17m egress pref 10 protocol ip flower dst_ip 10.17.1.2 action gact pass cookie 17c1
	$TC filter add dev d17m egress pref 20 protocol ip matchall action gact pass cookie 17d1
	# (not config(): its configurations turn the time families off)
	printf '%s\n' 'interval: 1s' 'liveness_interval: 5s' 'http: {listen: "127.0.0.1:9593"}' \
		'targets: [{dev: d17, parent: egress}, {dev: d17m, parent: egress}]' >c.yaml
	"$TCX" --config c.yaml >tcx.out 2>tcx.err &
	pid=$!
	: >scrapes
	# c17_next: the next collection's exposition, into scrape-N.prom (N
	# counts the scrapes kept); LIVE its tc_exporter_liveness_pass, TS its
	# snapshot timestamp. Fails after 30 s without one.
	c17_next() {
		local f=scrape-$(($(wc -l <scrapes) + 1)).prom c j
		for ((j = 0; j < 300; j++)); do
			if wget -q -O cur.prom http://127.0.0.1:9593/metrics 2>/dev/null; then
				c=$(sed -n 's/^tc_exporter_collections_total //p' cur.prom)
				if [ -n "$c" ] && [ "$c" -gt "$last" ]; then
					last=$c
					LIVE=$(sed -n 's/^tc_exporter_liveness_pass //p' cur.prom)
					TS=$(sed -n 's/^tc_exporter_snapshot_timestamp_seconds //p' cur.prom)
					mv cur.prom "$f"
					echo "${f//[!0-9]/} $c $LIVE $TS" >>scrapes
					return 0
				fi
			fi
			sleep 0.1
		done
		echo "no new collection within 30 s (last $last)"
		return 1
	}
	# c17_tc NAME: tc -s -j of both targets, the wall clock around it
	c17_tc() {
		echo "$EPOCHREALTIME" >"tc-$1.t"
		$TC -s -j filter show dev d17 egress >"tc-$1-d17-egress.json"
		$TC -s -j filter show dev d17m egress >"tc-$1-d17m-egress.json"
		echo "$EPOCHREALTIME" >>"tc-$1.t"
	}
	# c17_once NAME: --once --format json
	c17_once() {
		local r=0
		"$TCX" --once --config c.yaml --format json >"once-$1.json" 2>"once-$1.err" || r=$?
		echo "$r" >"once-$1.rc"
	}
	c17_next
	[ "$LIVE" = 1 ] || { echo "the daemon's first collection is no liveness pass"; return 1; }
	c17_tc pre
	c17_once pre
	# the collections up to the next liveness pass (the 5th or 6th)
	for ((i = 0; i < 12; i++)); do
		c17_next
		[ "$LIVE" = 1 ] && break
	done
	[ "$LIVE" = 1 ] || { echo "no second liveness pass in 12 collections"; return 1; }
	echo "$EPOCHREALTIME" >traffic-a
	udp 10.17.0.2 1 100
	udp 10.17.1.3 1 100
	echo "$EPOCHREALTIME" >>traffic-a
	sleep 1.5
	echo "$EPOCHREALTIME" >traffic-b
	udp 10.17.0.2 2 100
	udp 10.17.1.3 2 100
	echo "$EPOCHREALTIME" >>traffic-b
	# the collections up to a liveness pass that began after the traffic
	for ((i = 0; i < 12; i++)); do
		c17_next
		[ "$LIVE" = 1 ] && awk -v a="$TS" -v b="$(tail -n 1 traffic-b)" 'BEGIN { exit !(a > b) }' &&
			break
	done
	[ "$LIVE" = 1 ] || { echo "no liveness pass after the traffic in 12 collections"; return 1; }
	c17_tc post
	c17_once post
	c17_next
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	echo "$rc" >tcx.rc
}

c18_snmp_times() {
	# Issue #25's action times over SNMP where a row has none: d18's egress
	# holds flower filters only (a terse target, whose dumps carry no times
	# but those of liveness passes), gact pass with cookies 18a1 (one
	# datagram) and 18b1 (none), before the daemon starts with `interval:
	# 2s` and `liveness_interval: 1h`: its first pass is its one liveness
	# pass, and the later ones keep those rows' times. Once a collection
	# reached the agent, a third filter (18c1) is added: its row has no times
	# for the hour to come. When tcxActionRows is 3, a walk of tcxActionTable
	# and /metrics of one collection pass (s.walk, s.prom: tcxLastCollectionTime
	# and the snapshot timestamp the same before and after both), then GETs
	# of 18c1's row, columns 21 to 24 (s.get-c: its discontinuity time, then
	# the three times' columns, with -On -Ox); s.tcx.rc the daemon's status
	# after SIGTERM. run.sh checks them.
	local s=/tmp/snmp-$CASE oid=.1.3.6.1.4.1.8072.9999.9999.4242 agent=127.0.0.1:9162
	local entry=.1.3.6.1.4.1.8072.9999.9999.4242.1.2.1 pid spid i v t0 t1 ts idx rc=0
	dummy d18 10.18.0.1/24
	$TC qdisc add dev d18 clsact
	$TC filter add dev d18 egress pref 10 protocol ip flower dst_ip 10.18.0.2 action gact pass cookie 18a1
	$TC filter add dev d18 egress pref 10 protocol ip flower dst_ip 10.18.0.3 action gact pass cookie 18b1
	udp 10.18.0.2 1 100
	mkdir -p "$s/persist" "$s/conf" "$s/tcx" "$s/tools"
	printf '%s\n' "agentAddress udp:$agent" 'master agentx' "agentXSocket unix:$s/agentx.sock" \
		'rocommunity public 127.0.0.1' 'disablePerl true' >"$s/snmpd.conf"
	SNMP_PERSISTENT_DIR=$s/persist SNMPCONFPATH=$s/conf MIBS='' MIBDIRS='' \
		snmpd -f -Lo -C -c "$s/snmpd.conf" >s.snmpd.log 2>&1 &
	spid=$!
	# (not config(): its configurations turn the time families off)
	printf '%s\n' 'targets: [{dev: d18, parent: egress}]' >s.yaml
	printf '%s\n' 'interval: 2s' 'liveness_interval: 1h' 'http: {listen: "127.0.0.1:9594"}' \
		"snmp: {enabled: true, agentx_socket: \"unix:$s/agentx.sock\", ping_interval: 1s}" >>s.yaml
	SNMP_PERSISTENT_DIR=$s/tcx SNMPCONFPATH=$s/tcx "$TCX" --config s.yaml >s.tcx.out 2>s.tcx.err &
	pid=$!
	export MIBS='' MIBDIRS='' SNMP_PERSISTENT_DIR=$s/tools SNMPCONFPATH=$s/tools
	# sget OID...: -On -Ox, nothing when the request fails (no value yet)
	sget() { snmpget -v2c -c public -On -Ox -t 1 -r 0 "$agent" "$@" 2>/dev/null || true; }
	# c18_rows N: waits until tcxActionRows is N, 60 s at most
	c18_rows() {
		for ((i = 0; i < 600; i++)); do
			v=$(sget "$oid.1.1.1.0")
			case $v in *"Gauge32: $1") return 0 ;; esac
			sleep 0.1
		done
		echo "tcxActionRows is not $1 after 60 s: '$v'"
		return 1
	}
	c18_rows 2
	t0=$(sget "$oid.1.1.3.0")
	for ((i = 0; i < 300; i++)); do
		v=$(sget "$oid.1.1.3.0")
		[ "$v" = "$t0" ] || break
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "no collection reached the agent within 30 s: '$v'"; return 1; }
	$TC filter add dev d18 egress pref 10 protocol ip flower dst_ip 10.18.0.4 action gact pass cookie 18c1
	c18_rows 3
	for ((i = 0; i < 20; i++)); do
		t0=$(sget "$oid.1.1.3.0")
		wget -q -O s.prom http://127.0.0.1:9594/metrics
		snmpbulkwalk -v2c -c public -On -Ox -Cr10 -t 5 -r 1 "$agent" "$entry" >s.walk 2>s.walk.err ||
			{ echo "snmpbulkwalk failed: $(cat s.walk.err)"; return 1; }
		wget -q -O s.prom.after http://127.0.0.1:9594/metrics
		t1=$(sget "$oid.1.1.3.0")
		ts=$(sed -n 's/^tc_exporter_snapshot_timestamp_seconds //p' s.prom)
		if [ -n "$t0" ] && [ "$t0" = "$t1" ] && [ -n "$ts" ] &&
			[ "$ts" = "$(sed -n 's/^tc_exporter_snapshot_timestamp_seconds //p' s.prom.after)" ]; then
			break
		fi
	done
	[ "$i" -lt 20 ] || { echo "no walk and /metrics of one collection pass in 20 tries"; return 1; }
	idx=$(sed -n "s/^$entry\.14\.\([0-9]*\) = Hex-STRING: 18 C1 *\$/\1/p" s.walk)
	[ -n "$idx" ] || { echo "no row of cookie 18c1 in the walk"; return 1; }
	snmpget -v2c -c public -On -Ox -t 1 -r 0 "$agent" "$entry.21.$idx" "$entry.22.$idx" \
		"$entry.23.$idx" "$entry.24.$idx" >s.get-c 2>&1 || true
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	echo "$rc" >s.tcx.rc
	kill -TERM "$spid"
	wait "$spid" || true
}

# ovs_start: Open vSwitch in this namespace, its flows offloaded to TC
# flower in software: a new database (ovsdb-tool, the schema in the
# initramfs), ovsdb-server on /var/run/openvswitch/db.sock, then
# other_config hw-offload=true, tc-policy=skip_hw (both read when
# ovs-vswitchd starts) and max-idle=60000 (a datapath flow idle for 10 s,
# the default, would be removed before it is compared), then ovs-vswitchd.
# Logs: ovsdb-server.log, ovs-vswitchd.log; pids in OVSDB_PID, OVS_PID.
ovs_start() {
	local run=/var/run/openvswitch db=/etc/openvswitch/conf.db i
	mkdir -p "$run" /etc/openvswitch /var/log/openvswitch
	rm -f "$db"
	ovsdb-tool create "$db" /usr/share/openvswitch/vswitch.ovsschema
	ovsdb-server "$db" --remote="punix:$run/db.sock" --pidfile --log-file="$PWD/ovsdb-server.log" \
		-vconsole:off &
	OVSDB_PID=$!
	for ((i = 0; i < 300; i++)); do
		[ -S "$run/db.sock" ] && ovs-vsctl --no-wait --timeout=5 init 2>/dev/null && break
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "ovsdb-server does not answer on $run/db.sock after 30 s"; return 1; }
	ovs-vsctl --no-wait set Open_vSwitch . other_config:hw-offload=true \
		other_config:tc-policy=skip_hw other_config:max-idle=60000
	# OVS 3.1.0 (Debian 12's) counts the CPUs only once its monotonic clock
	# is past 10 s (fixed in 3.1.1, "ovs-thread: Fix cpus not read for the
	# first 10s"): before, it starts no upcall handler in per-CPU dispatch
	# mode ("Overriding n-handler-threads to 0"), and no packet crosses the
	# bridge until it counts them again 10 s later.
	while [ "$(cut -d. -f1 /proc/uptime)" -lt 11 ]; do sleep 0.5; done
	ovs-vswitchd "unix:$run/db.sock" --pidfile --log-file="$PWD/ovs-vswitchd.log" -vconsole:off &
	OVS_PID=$!
	for ((i = 0; i < 300; i++)); do
		ovs-appctl --timeout=5 version >/dev/null 2>&1 && break
		kill -0 "$OVS_PID" 2>/dev/null || { echo "ovs-vswitchd exited:"; cat ovs-vswitchd.log; return 1; }
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "ovs-vswitchd does not answer after 30 s"; return 1; }
}

# ovs_stop: both daemons, through their control sockets.
ovs_stop() {
	ovs-appctl --timeout=10 exit >/dev/null 2>&1 || kill -TERM "$OVS_PID"
	wait "$OVS_PID" || true
	ovs-appctl --timeout=10 -t ovsdb-server exit >/dev/null 2>&1 || kill -TERM "$OVSDB_PID"
	wait "$OVSDB_PID" || true
}

# c19_flows N: OVS's datapath flows in TC (flows-N.txt), the wall clock
# before and after (flows-N.t).
c19_flows() {
	echo "$EPOCHREALTIME" >"flows-$1.t"
	ovs-appctl dpctl/dump-flows -m type=tc >"flows-$1.txt"
	echo "$EPOCHREALTIME" >>"flows-$1.t"
}

c19_ovs() {
	# Issue #25 against Open vSwitch: bridge br19 with ports p19a and p19b,
	# veths to hosts in the namespaces ns19a (10.19.0.1) and ns19b
	# (10.19.0.2), its datapath flows offloaded to TC flower (software:
	# skip_hw), where OVS gives the actions of a flow's filter the flow's
	# ufid as cookie. An arping from ns19a to ns19b, then pings, twice 3 at
	# 0.3 s apart, 2 s between the rounds: OVS installs a flow per direction
	# for the ICMP and one for each ARP packet (those see one packet each,
	# which the datapath itself forwards: TC never matches them,
	# "used:never"); the neighbours are permanent, no ARP after. Then, close
	# together: ovs-appctl dpctl/dump-flows -m type=tc (flows-1.txt), tcexporter
	# --once in JSON and Prometheus (r.json.out, r.prom.out), dpctl again
	# (flows-2.txt), each dpctl with the wall clock before and after it
	# (flows-N.t); tc -s -j of both ports' ingress (tc-p19a.json,
	# tc-p19b.json) and the flows OVS did not offload (flows-ovs.txt).
	# run.sh compares each flow's last use (OVS prints its age, "used:0.530s")
	# with tcexporter's, by ufid and cookie.
	local h
	veth p19a h19a
	veth p19b h19b
	for h in a b; do
		$IP netns add "ns19$h"
		$IP netns exec "ns19$h" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 &&
			echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
		$IP link set "h19$h" netns "ns19$h"
		$IP -n "ns19$h" link set lo up
		$IP -n "ns19$h" link set "h19$h" up
	done
	$IP -n ns19a addr add 10.19.0.1/24 dev h19a
	$IP -n ns19b addr add 10.19.0.2/24 dev h19b
	# permanent neighbours: a neighbour learnt from a packet would be
	# probed again by unicast ARP 5 s after its first use (DELAY), a new
	# flow and a packet through another while the flows are compared
	$IP -n ns19a neigh add 10.19.0.2 lladdr "$($IP -n ns19b -br link show dev h19b | awk '{ print $3 }')" \
		dev h19a nud permanent
	$IP -n ns19b neigh add 10.19.0.1 lladdr "$($IP -n ns19a -br link show dev h19a | awk '{ print $3 }')" \
		dev h19b nud permanent
	ovs_start
	ovs-vsctl --timeout=60 add-br br19 -- add-port br19 p19a -- add-port br19 p19b
	ovs-vsctl get Open_vSwitch . other_config >other_config.txt
	# one ARP request (flooded) and its reply: a flow each that TC never
	# matches (the datapath forwards the packet that made the flow)
	$IP netns exec ns19a arping -c 1 -w 5 -I h19a 10.19.0.2 >arping.txt
	$IP netns exec ns19a ping -c 3 -i 0.3 -W 5 10.19.0.2 >ping-1.txt
	sleep 2
	$IP netns exec ns19a ping -c 3 -i 0.3 -W 5 10.19.0.2 >ping-2.txt
	sleep 1
	# (not config(): its configurations turn the time families off); each
	# row labelled with its cookie as a ufid (the uuid decoder, layout ovs)
	printf '%s\n' 'targets: [{all: true}]' 'labels: [ufid]' 'decoders: [{type: uuid, label: ufid}]' >c.yaml
	c19_flows 1
	tcx r c.yaml
	c19_flows 2
	ovs-appctl dpctl/dump-flows -m type=ovs >flows-ovs.txt
	$TC -s -j filter show dev p19a ingress >tc-p19a.json
	$TC -s -j filter show dev p19b ingress >tc-p19b.json
	$TC qdisc show >qdiscs.txt
	ovs-vsctl show >ovs-show.txt
	ovs_stop
	for h in a b; do $IP netns del "ns19$h"; done
}

c20_libreqos() {
	# Issue #26's LibreQoS-sized shaper at 2,000 leaves: m20, a veth with 4
	# tx queues, under an mq root (7fff:) with an HTB tree on each of its
	# queues (Q: on 7fff:Q; Q:1 the tree's top at 1gbit, 500 leaves Q:3 ..
	# Q:1f6 at 1mbit ceil 100mbit), a cake diffserv4 on each leaf (handles
	# 100: .. 8cf:), all in one tc -batch. A clsact u32 filter per tree
	# sends one destination to its first leaf, Q:3 (skbedit queue_mapping
	# Q-1, priority Q:3), with a DSCP of its own (pedit tos: CS1 bulk, tin
	# 0; none, best effort, tin 1; AF41 video, tin 2; EF voice, tin 3):
	# Q + 4 datagrams of 100 * Q bytes each. tcexporter --once with the
	# README's LibreQoS recipe (families: xstats: cake's four per-tin
	# fields, htb none): r.json.out, r.prom.out; tc's captures pre/ and
	# post/ around it; then --once with the default families, every field
	# (d.prom.out), for the series count. MemAvailable before and after the
	# tree (mem) and the seconds of the tc -batch (batch.s: uptime before
	# and after).
	local q i n=0 t0 rc dscp=(0 0x20 0 0x88 0xb8)
	printf '%s\n' "link add m20 numtxqueues 4 type veth peer name m21" "link set m20 up" \
		"link set m21 up" "addr add 10.20.0.1/24 dev m20" >ip.batch
	for q in 1 2 3 4; do
		echo "neigh add 10.20.0.$((q + 1)) lladdr 02:00:00:20:00:02 dev m20"
	done >>ip.batch
	$IP -batch ip.batch
	{
		echo "qdisc add dev m20 root handle 7fff: mq"
		for q in 1 2 3 4; do
			echo "qdisc replace dev m20 parent 7fff:$q handle $q: htb default 2"
			echo "class add dev m20 parent $q: classid $q:1 htb rate 1gbit ceil 1gbit"
			for ((i = 3; i < 503; i++)); do
				printf 'class add dev m20 parent %s:1 classid %s:%x htb rate 1mbit ceil 100mbit\n' \
					"$q" "$q" "$i"
				printf 'qdisc add dev m20 parent %s:%x handle %x: cake diffserv4\n' \
					"$q" "$i" $((0x100 + n))
				n=$((n + 1))
			done
		done
		echo "qdisc add dev m20 clsact"
		for q in 1 2 3 4; do
			printf 'filter add dev m20 egress pref %s protocol ip u32 match ip dst 10.20.0.%s/32' \
				"$q" $((q + 1))
			[ "${dscp[q]}" = 0 ] || printf ' action pedit ex munge ip tos set %s pipe' "${dscp[q]}"
			printf ' action skbedit queue_mapping %s priority %s:3\n' $((q - 1)) "$q"
		done
	} >tc.batch
	grep MemAvailable /proc/meminfo >mem
	t0=$(cut -d' ' -f1 /proc/uptime)
	$TC -batch tc.batch
	echo "$t0 $(cut -d' ' -f1 /proc/uptime)" >batch.s
	grep MemAvailable /proc/meminfo >>mem
	for q in 1 2 3 4; do udp "10.20.0.$((q + 1))" $((q + 4)) $((100 * q)); done
	printf '%s\n' "families: {liveness: off, xstats: {cake: [tin_sent_bytes, tin_dropped_packets, tin_ecn_marked_packets, tin_avg_delay_seconds], htb: none}}" \
		'targets: [{all: true}]' >c.yaml
	qsnap pre
	tcx r c.yaml
	qsnap post
	printf '%s\n' 'families: {liveness: off}' 'targets: [{all: true}]' >d.yaml
	rc=0
	"$TCX" --once --config d.yaml --format prometheus >d.prom.out 2>d.prom.err || rc=$?
	echo "$rc" >d.prom.rc
}

# c21_pktgen ROUND: one round of the traffic of c21_ovs_scale, from ns21a
# (run there): the kernel's packet generator on h21a, C21_PACKETS UDP
# frames of 60 bytes to h21b's MAC (C21_DST_MAC) and 10.21.0.9 (no host: h21b
# drops them), C21_PPS a second, their source MAC and address stepping
# through C21_MACS values (02:21:00:00:00:00 up, 10.21.100.0 up) one frame
# after the other. pktgen's report in pktgen-ROUND.txt (waited for 60 s at
# most).
c21_pktgen() {
	local pg=/proc/net/pktgen d=/proc/net/pktgen/h21a l
	echo "rem_device_all" >"$pg/kpktgend_0"
	echo "add_device h21a" >"$pg/kpktgend_0"
	for l in "count $C21_PACKETS" "clone_skb 0" "pkt_size 60" "delay $((1000000000 / C21_PPS))" \
		"dst 10.21.0.9" "dst_mac $C21_DST_MAC" "src_mac 02:21:00:00:00:00" \
		"src_mac_count $C21_MACS" "src_min 10.21.100.0" \
		"src_max 10.21.$((100 + (C21_MACS - 1) / 256)).$(((C21_MACS - 1) % 256))" "udp_dst_min 9" \
		"udp_dst_max 9"; do
		echo "$l" >"$d"
	done
	# the write returns when the thread is done, or (loaded, under TCG)
	# when it did not start within pktgen's 125 ms: then wait for it
	echo start >"$pg/pgctrl"
	for ((l = 0; l < 600; l++)); do
		grep -q '^Result: OK' "$d" && break
		sleep 0.1
	done
	cat "$d" >"pktgen-$1.txt"
}

# c21_state NAME: what moved where, into NAME.*: the devices' counters
# (/proc/net/dev of this namespace and of ns21a), OVS's datapath (`dpctl/show
# -s`: lookups hit, missed, lost: the packets TC did not take) and its
# upcall handler (`upcall/show`: flows now, most, limit).
c21_state() {
	cat /proc/net/dev >"$1.netdev"
	$IP netns exec ns21a cat /proc/net/dev >"$1.netdev-a"
	ovs-appctl dpctl/show -s >"$1.dpctl"
	ovs-appctl upcall/show >"$1.upcall"
}

c21_ovs_scale() {
	# Issue #26 item 4, Open vSwitch at scale: bridge br21 with ports p21a
	# and p21b, veths to ns21a and ns21b, its datapath flows in TC flower
	# (skip_hw, as c19's). The kernel's packet generator sends from ns21a
	# to h21b's MAC with C21_MACS source MACs (one datapath flow each: the
	# NORMAL action learns every source), C21_PACKETS frames a round, each
	# MAC every C21_MACS / C21_PPS seconds, rounds of traffic and silence
	# for C21_SECONDS, with max-idle at 2 s: the flows are made (an upcall:
	# the packet goes through userspace, not TC), hit, expire (OVS deletes
	# each by handle: a notification with its final counters) and come back
	# in the next round. Two daemons run through it, `aggregate: {by:
	# [device]}`, collecting every second: t1 with the default
	# notification buffer (4 MiB), t2 with notify_buffer_kib: 4 (8 KiB:
	# a handful of deletions), scraped about every second (t1-N.prom,
	# t2-N.prom; then t1-final.prom, t2-final.prom two collections after
	# the traffic). base.* and end.* (c21_state) hold the counters before
	# and after the traffic. run.sh checks: t1's aggregate of p21a grew by
	# what p21a received minus what OVS's datapath saw (hit + missed: TC
	# let it through), never went down, and no notification was lost; t2
	# lost some, counts them, marks the targets, and is no more than t1.
	local h i n=0 last now spid
	local -a pids
	C21_MACS=${C21_MACS:-2000}
	C21_PACKETS=${C21_PACKETS:-6000}
	C21_PPS=${C21_PPS:-1000}
	C21_SECONDS=${C21_SECONDS:-60}
	veth p21a h21a
	veth p21b h21b
	for h in a b; do
		$IP netns add "ns21$h"
		$IP netns exec "ns21$h" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6 &&
			echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6'
		$IP link set "h21$h" netns "ns21$h"
		$IP -n "ns21$h" link set lo up
		$IP -n "ns21$h" link set "h21$h" up
	done
	$IP -n ns21a addr add 10.21.0.1/24 dev h21a
	$IP -n ns21b addr add 10.21.0.2/24 dev h21b
	C21_DST_MAC=$($IP -n ns21b -br link show dev h21b | awk '{ print $3 }')
	export C21_MACS C21_PACKETS C21_PPS C21_DST_MAC
	ovs_start
	ovs-vsctl set Open_vSwitch . other_config:max-idle=2000
	ovs-vsctl --timeout=60 add-br br21 -- set bridge br21 other_config:mac-table-size=8192 \
		-- add-port br21 p21a -- add-port br21 p21b
	ovs-vsctl get Open_vSwitch . other_config >other_config.txt
	# OVS learns h21b's MAC from its ARP request (and h21a's from the reply)
	$IP netns exec ns21b arping -c 1 -w 5 -I h21b 10.21.0.1 >arping.txt
	for i in 1 2; do
		printf '%s\n' 'interval: 1s' 'targets: [{all: true}]' 'aggregate: {by: [device]}' \
			"http: {listen: \"127.0.0.1:962$i\"}" >"t$i.yaml"
	done
	echo 'notify_buffer_kib: 4' >>t2.yaml
	for i in 1 2; do
		"$TCX" --config "t$i.yaml" >"t$i.out" 2>"t$i.err" &
		pids[i]=$!
	done
	# scrape I FILE: daemon tI's /metrics into FILE (fails unless it answers 200)
	scrape() { wget -q -O "$2" "http://127.0.0.1:962$1/metrics" 2>/dev/null; }
	collections() { sed -n 's/^tc_exporter_collections_total //p' "$1"; }
	# settled: both daemons collected twice since now (their .prom in FILE-1, -2)
	settled() {
		local c1 c2 i
		scrape 1 "$1-t1.prom" && scrape 2 "$1-t2.prom" || return 1
		c1=$(collections "$1-t1.prom")
		c2=$(collections "$1-t2.prom")
		for ((i = 0; i < 300; i++)); do
			scrape 1 "$1-t1.prom" && scrape 2 "$1-t2.prom" &&
				[ "$(collections "$1-t1.prom")" -ge $((c1 + 2)) ] &&
				[ "$(collections "$1-t2.prom")" -ge $((c2 + 2)) ] && return 0
			sleep 0.1
		done
		return 1
	}
	for ((i = 0; i < 300; i++)); do
		scrape 1 t1-0.prom && scrape 2 t2-0.prom && break
		sleep 0.1
	done
	[ "$i" -lt 300 ] || { echo "the daemons did not answer within 30 s"; return 1; }
	# the state before the traffic, the daemons' at least as late
	sleep 1
	c21_state base
	settled base || { echo "the daemons did not collect twice within 30 s"; return 1; }
	(
		end=$((SECONDS + C21_SECONDS))
		r=0
		while [ "$SECONDS" -lt "$end" ]; do
			r=$((r + 1))
			$IP netns exec ns21a bash -c "$(declare -f c21_pktgen); c21_pktgen $r"
			ovs-appctl upcall/show >"upcall-$r.txt"
			sleep 4 # max-idle 2 s: OVS deletes the flows
		done
		echo "$r" >rounds
	) &
	spid=$!
	last=0
	while kill -0 "$spid" 2>/dev/null; do
		now=${EPOCHREALTIME/./}
		if [ $((now - last)) -ge 1000000 ]; then
			n=$((n + 1))
			scrape 1 "t1-$n.prom" || { echo "t1: scrape $n failed"; return 1; }
			scrape 2 "t2-$n.prom" || { echo "t2: scrape $n failed"; return 1; }
			last=$now
		fi
		sleep 0.2
	done
	wait "$spid"
	sleep 1 # the last frames through, and no flow made after the state
	c21_state end
	settled final || { echo "the daemons did not collect twice after the traffic within 30 s"; return 1; }
	mv final-t1.prom t1-final.prom
	mv final-t2.prom t2-final.prom
	mv base-t1.prom t1-base.prom
	mv base-t2.prom t2-base.prom
	for i in 1 2; do
		kill -TERM "${pids[i]}"
		h=0
		wait "${pids[i]}" || h=$?
		echo "$h" >"t$i.rc"
	done
	ovs-appctl dpctl/dump-flows type=ovs >flows-ovs.txt
	ovs_stop
	for h in a b; do $IP netns del "ns21$h"; done
}

"$CASE"
