#!/bin/bash
# Named namespaces that come and go while the daemon runs (issue #11), as
# root, in private mount and network namespaces (a private /run/netns, as
# netns_once.sh):
#
#   - a literal `netns: NAME` target: once `ip netns del NAME` ran, the next
#     collection has none of its rows, the target fails with cause notfound,
#     and the namespace is really released: a veth pair with one end in it
#     and the other in ours is destroyed (the kernel frees the namespace, and
#     its devices, only when nothing holds it: not the daemon's socket), and
#     no thread of the daemon is in it. A namespace deleted and made again
#     under the same name is collected afresh (its new filters, not the old).
#   - `netns: "*"` and a glob: a namespace made while the daemon runs is
#     collected within an interval, as a target of its own (netns label),
#     one that does not match is not; deleted, its rows disappear and it is
#     released. --check-config warns of a glob that matches nothing yet.
#   - `netns: "*"` with `aggregate`: a deleted namespace's rows disappear
#     within an interval, the aggregate keeps what they counted (at every
#     scrape after) and counts on with the other members' traffic.
#   - `devices: {include, exclude}` on `all` targets (netns "*"), and an
#     invalid regex (exit 2, FILE:LINE:COL, regerror()'s message).
#
# The daemon collects every 200 ms; "within one interval" is checked with
# some slack (2 s) for a loaded machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

require_bin
require_root -m -n
require_cmd ip tc curl mount
find_python
in_netns TCXD_NETNS_FOLLOW_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
daemon_setup
private_netns_dir

# Unique names (the /run/netns above is ours alone, but a name says whose
# it is in `ip netns` listings and logs).
P=tcxf$$
LIT=${P}lit

# mkns NAME COOKIE: a namespace NAME holding d0 (its veth peer, hN with N
# counting the calls, is in our namespace: it is destroyed with NAME's
# namespace; its name is in HOST) and x0 (a veth
# pair inside), each with a clsact and one u32 filter on ingress whose
# action carries COOKIE (x0's: COOKIE followed by ff). Both mirror to x0's
# egress: the copies end at x1, which has no filter. (Mirroring x0's ingress
# to x1 made a loop: every packet sent into d0 circled x1 -> x0 -> x1 for as
# long as the namespace lived, some 400,000 packets a second, which starved
# the daemon on a loaded machine.)
HOST=
N_HOST=0
mkns() {
	local ns=$1 cookie=$2 h
	N_HOST=$((N_HOST + 1))
	h=h$N_HOST
	ip netns add "$ns"
	ip link add "$h" type veth peer name d0 netns "$ns"
	ip -n "$ns" link add x0 type veth peer name x1
	for d in d0 x0 x1; do ip -n "$ns" link set "$d" up; done
	for d in d0 x0; do tc -n "$ns" qdisc add dev "$d" clsact; done
	tc -n "$ns" filter add dev d0 ingress pref 1 protocol ip u32 match u32 0 0 \
		action mirred egress mirror dev x0 cookie "$cookie"
	tc -n "$ns" filter add dev x0 ingress pref 1 protocol ip u32 match u32 0 0 \
		action mirred egress mirror dev x0 cookie "${cookie}ff"
	HOST=$h
}

# Kernel features, probed in a throw-away namespace: a missing one is a skip.
if ! out=$(mkns "${P}probe" 01 2>&1); then
	skip "kernel lacks a feature this test needs (veth, clsact, u32, mirred): $out"
fi
ip netns del "${P}probe"
# The probe ran in a subshell: its count of host ends is lost, and its h1
# goes only once the kernel has cleaned its namespace up, later (on a loaded
# machine, after the next mkns: "RTNETLINK answers: File exists").
N_HOST=1

port=$(free_ports 1)
base=http://127.0.0.1:$port

# try_scrape NAME: /metrics into $WORK/NAME.prom (text format); fails unless it
# answers 200 (503 before the first collection).
try_scrape() {
	[ "$(curl -s --max-time 5 -o "$WORK/$1.prom" -w '%{http_code}' "$base/metrics" 2>/dev/null)" = 200 ]
}

# wait_metrics SECONDS DESCRIPTION CMD...: scrapes until CMD (run with the
# scrape in $WORK/now.prom) succeeds; fails after SECONDS.
wait_metrics() {
	local secs=$1 what=$2 deadline
	shift 2
	deadline=$(($(date +%s%N) + secs * 1000000000))
	while :; do
		alive "$TCX_PID" tcx
		try_scrape now && "$@" && return 0
		if [ "$(date +%s%N)" -gt "$deadline" ]; then
			echo "--- last scrape:" >&2
			grep -v '^#' "$WORK/now.prom" 2>/dev/null | grep -E 'netns=|errors' >&2 || true
			fail "not within $secs s: $what"
		fi
		sleep 0.05
	done
}

# has PATTERN / hasnt PATTERN: the last scrape has (no) line matching the ERE.
has() { grep -qE -- "$1" "$WORK/now.prom"; }
hasnt() { ! grep -qE -- "$1" "$WORK/now.prom"; }
# rows NS COOKIE: the pattern of NS's bytes row with COOKIE.
rows() { echo "^tc_action_bytes_total\{.*netns=\"$1\".*cookie=\"$2\""; }

# host_gone DEV SECONDS: DEV (a veth end in our namespace) disappears within
# SECONDS: the namespace of its peer was freed.
host_gone() {
	local deadline=$((SECONDS + $2))
	while ip link show "$1" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "$1 still exists $2 s after its peer's namespace was deleted: the namespace is held alive"
		sleep 0.1
	done
}

# own_ns_only: every thread of the daemon is in our network namespace.
own_ns_only() {
	local own t
	own=$(readlink /proc/self/ns/net)
	for t in /proc/"$TCX_PID"/task/*/ns/net; do
		[ "$(readlink "$t")" = "$own" ] || fail "daemon thread $t is in $(readlink "$t")"
	done
}

# ---- 1. a literal netns target ------------------------------------------------------------
note "a literal netns target: collected, deleted, made again"
mkns "$LIT" 0a01
lit_host=$HOST
cat >"$WORK/lit.yaml" <<YAML
interval: 200ms
http: {listen: ["127.0.0.1:$port"]}
targets:
  - {all: true, netns: $LIT}
YAML
start_tcx tcx "$WORK/lit.yaml"
wait_metrics 5 "$LIT's rows exported" has "$(rows "$LIT" 0a01)"
has "$(rows "$LIT" 0a01ff)" || fail "$LIT: x0's row is missing"

# lit_failed: no row of $LIT, its target failed, a notfound error counted.
lit_failed() {
	hasnt "netns=\"$LIT\".*cookie=" &&
		has "^tc_scrape_collector_success\\{.*netns=\"$LIT\".*\\} 0\$" &&
		has '^tc_exporter_snapshot_errors\{cause="notfound"\} [1-9]'
}
ip netns del "$LIT"
wait_metrics 2 "$LIT's rows gone and its target failed after ip netns del" lit_failed
curl -sf --max-time 5 "$base/" >"$WORK/landing.html" || fail "/ did not answer"
grep -qF "netns '$LIT': cannot open /run/netns/$LIT: No such file or directory" \
	"$WORK/landing.html" || fail "the landing page does not name the missing namespace"
host_gone "$lit_host" 5
own_ns_only

note "the same name made again: collected afresh"
mkns "$LIT" 0a02
wait_metrics 2 "the new $LIT's rows exported" has "$(rows "$LIT" 0a02)"
has '^tc_scrape_collector_success\{.*netns="'"$LIT"'".*\} 1$' ||
	fail "$LIT: the target did not recover"
lit_host=$HOST
# Deleted and made again at once, most likely between two collections: the
# socket of the old namespace must not stay in use (st_dev/st_ino differ).
ip netns del "$LIT"
mkns "$LIT" 0a03
third_only() { has "$(rows "$LIT" 0a03)" && hasnt 'cookie="0a02'; }
wait_metrics 2 "the third $LIT's rows replace the second's" third_only
host_gone "$lit_host" 5
own_ns_only

stop_tcx "$TCX_PID" tcx 5
ip netns del "$LIT"

# ---- 2. globs -----------------------------------------------------------------------------
# follow GLOB IN OUT: with `netns: GLOB`, namespace IN (made after the daemon
# started) is collected within an interval, OUT (already there) is not
# unless GLOB is "*"; IN deleted: its rows disappear, no target of it is
# left, and it is released.
follow() {
	local glob=$1 in=$2 out=$3 in_host
	note "netns: \"$glob\": $in appears, then disappears"
	cat >"$WORK/glob.yaml" <<YAML
interval: 200ms
http: {listen: ["127.0.0.1:$port"]}
targets:
  - all: true
    netns: "$glob"
YAML
	start_tcx tcx "$WORK/glob.yaml"
	wait_metrics 5 "the first collection" has '^tc_exporter_build_info'
	mkns "$in" 0c01
	in_host=$HOST
	# (both rows at once: a collection may come while mkns is half done)
	both() { has "$(rows "$in" 0c01)" && has "$(rows "$in" 0c01ff)"; }
	wait_metrics 2 "$in's rows (of d0 and x0) exported" both
	has '^tc_scrape_collector_success\{device="d0",parent="ingress",netns="'"$in"'"\} 1$' ||
		fail "$in: no target of its own (netns label $in)"
	if [ "$glob" = "*" ]; then
		has "$(rows "$out" 0b01)" || fail "netns: \"*\" does not collect $out"
	else
		hasnt "netns=\"$out\"" || fail "netns: \"$glob\" collects $out"
	fi
	ip netns del "$in"
	wait_metrics 2 "$in's rows gone after ip netns del" hasnt "netns=\"$in\""
	host_gone "$in_host" 5
	own_ns_only
	stop_tcx "$TCX_PID" tcx 5
}

mkns "${P}other" 0b01
note "--check-config: a glob that matches nothing yet is a warning (exit 0)"
printf 'targets:\n  - all: true\n    netns: "%s"\n' "${P}g-*" >"$WORK/nomatch.yaml"
run_tcx nomatch --check-config "$WORK/nomatch.yaml"
expect_rc nomatch 0
expect_grep nomatch err -F "warning: $WORK/nomatch.yaml:3:12: netns '${P}g-*' matches no namespace in /run/netns yet"
printf 'targets:\n  - all: true\n    netns: "%s"\n' "${P}o*" >"$WORK/match.yaml"
run_tcx match --check-config "$WORK/match.yaml"
expect_rc match 0
expect_empty match err

follow "${P}g-*" "${P}g-1" "${P}other"
follow "*" "${P}g-2" "${P}other"

# ---- 2b. aggregates over namespaces --------------------------------------------------------
note "netns: \"*\" with aggregate: a deleted namespace leaves its contribution"
# Two namespaces whose d0 filters map to one aggregate (tenant acme), and
# traffic counted in each (written out of their host ends, into d0); then
# one namespace deleted: its rows (the per-filter tc_filter_flags_info, its
# target's series) disappear within an interval, the aggregate keeps what
# it counted at every scrape, and counts on with the other's traffic.
mkns "${P}a-1" 0e01
host_a=$HOST
mkns "${P}a-2" 0e02
host_b=$HOST
ip link set "$host_a" up
ip link set "$host_b" up
cat >"$WORK/agg.yaml" <<YAML
interval: 200ms
http: {listen: ["127.0.0.1:$port"]}
targets: [{all: true, netns: "*"}]
labels: [tenant]
cookies: {"0e01": [acme], "0e02": [acme]}
unmapped: drop
aggregate: {by: [tenant]}
families: {flags: on}
YAML
start_tcx tcx "$WORK/agg.yaml"
flags_of() { echo "^tc_filter_flags_info\{.*netns=\"$1\""; }
wait_metrics 5 "both namespaces collected" has "$(flags_of "${P}a-1")"
has "$(flags_of "${P}a-2")" || fail "${P}a-2 is not collected"
udp_raw "$host_a" 9:100:5 >/dev/null
udp_raw "$host_b" 9:100:7 >/dev/null
# acme PACKETS BYTES: the aggregate's counters in the last scrape.
acme() {
	has '^tc_action_packets_total\{tenant="acme"\} '"$1"'$' &&
		has '^tc_action_bytes_total\{tenant="acme"\} '"$2"'$'
}
wait_metrics 2 "acme counts the 12 packets (1200 bytes) of both namespaces" acme 12 1200
[ "$(grep -c '^tc_action_packets_total{' "$WORK/now.prom")" = 1 ] ||
	fail "not one aggregate: $(grep '^tc_action_packets_total{' "$WORK/now.prom")"
ip netns del "${P}a-1"
wait_metrics 2 "${P}a-1's rows gone after ip netns del" hasnt "netns=\"${P}a-1\""
host_gone "$host_a" 5
# Every scrape for 10 intervals: acme keeps 12 packets, 1200 bytes.
for _ in $(seq 1 20); do
	try_scrape now || fail "/metrics did not answer 200"
	acme 12 1200 || fail "acme after ${P}a-1 was deleted: $(grep '^tc_action_[a-z]*_total{' "$WORK/now.prom")"
	sleep 0.1
done
has "$(flags_of "${P}a-2")" || fail "${P}a-2's rows went with ${P}a-1"
udp_raw "$host_b" 9:100:3 >/dev/null
wait_metrics 2 "acme counts on from 12 with ${P}a-2's traffic" acme 15 1500
stop_tcx "$TCX_PID" tcx 5
ip netns del "${P}a-2"

# ---- 3. devices: include/exclude -------------------------------------------------------------
note "devices: include/exclude filter the all targets of netns \"*\" (--once)"
mkns "${P}dev" 0d01
printf '%s\n' 'devices: {include: "^(d|x)", exclude: "^x"}' 'targets: [{all: true, netns: "*"}]' \
	>"$WORK/devices.yaml"
run_tcx devices --once --config "$WORK/devices.yaml"
expect_rc devices 0
expect_grep devices out -E "$(rows "${P}dev" 0d01)"
expect_grep devices out -E "$(rows "${P}other" 0b01)"
if grep -E 'device="x0"' "$WORK/devices.out"; then
	fail "devices: x0 matches exclude, but is collected"
fi
printf '%s\n' 'devices: {exclude: "^d"}' 'targets: [{all: true, netns: "*"}]' >"$WORK/devices2.yaml"
run_tcx devices2 --once --config "$WORK/devices2.yaml"
expect_rc devices2 0
expect_grep devices2 out -E "$(rows "${P}dev" 0d01ff)"
if grep -E 'device="d0"' "$WORK/devices2.out"; then
	fail "devices2: d0 matches exclude, but is collected"
fi

note "devices: an invalid regex is exit 2 with FILE:LINE:COL and regerror's message"
printf '%s\n' 'devices:' '  include: "^(eth"' >"$WORK/badre.yaml"
for r in badre_check badre_once; do
	if [ $r = badre_check ]; then
		run_tcx $r --check-config "$WORK/badre.yaml"
	else
		run_tcx $r --once --config "$WORK/badre.yaml"
	fi
	expect_rc $r 2
	expect_grep $r err -F "$WORK/badre.yaml:2:12: invalid include regex '^(eth': Unmatched ( or \\("
	expect_empty $r out
done

note "netns_follow: all checks passed"
