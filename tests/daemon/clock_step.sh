#!/bin/bash
# The collection interval is measured on the monotonic clock: a wall clock
# stepped back (NTP at boot, a VM resumed, an operator's `date -s`) does not
# hold the next collection back by the size of the step.
#
# tests/lib/realtime_shift.so (LD_PRELOAD) makes the daemon read
# CLOCK_REALTIME one hour ahead of the clock the kernel ends timed waits by:
# what a step back of an hour between a reading and the wait looks like.
# The daemon collects every 200 ms; it must go on doing so (at least 5
# collections after the first within 10 s). Waiting on the wall clock, it
# collected once and then slept for an hour. Then the action times follow
# the wall clock at each read (--once with the shim and without).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
shim=${TCX_BUILDDIR:-}/tests/lib/realtime_shift.so
[ -f "$shim" ] || fail "$shim is not built (make check builds it)"
in_netns TCXD_CLOCK_STEP_INSIDE -n

daemon_setup
read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
printf 'interval: 200ms\nhttp: {listen: ["127.0.0.1:%s"]}\ntargets: [{all: true}]\n' \
	"$port" >"$WORK/tcx.yaml"

# The shim first in the library list: ASan wants its runtime there, and
# would refuse to start.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
TCX_WRAP=(env LD_PRELOAD="$shim" TCX_REALTIME_SHIFT=3600)
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 60 "$base/metrics"

# The shim is in effect: the time of the configuration's load, a
# wall-clock reading, is an hour ahead.
scrape "$WORK/start.txt" "$base/metrics"
loaded=$(metric_value "$WORK/start.txt" tc_exporter_config_last_reload_success_timestamp_seconds)
now=$(date +%s)
[ -n "$loaded" ] || fail "no tc_exporter_config_last_reload_success_timestamp_seconds in the scrape"
awk -v s="$loaded" -v n="$now" 'BEGIN { exit !(s > n + 3000) }' ||
	fail "the shim is not in effect: the configuration was loaded at $loaded, now is $now"

first=$(collections "$base/metrics")
deadline=$((SECONDS + 10))
while :; do
	alive "$TCX_PID" tcx
	n=$(collections "$base/metrics")
	[ "$n" -ge $((first + 5)) ] && break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "$((n - first)) collections in 10 s with a 200 ms interval, after the wall clock stepped back an hour (from $first to $n)"
	sleep 0.2
done
note "collections $first -> $n with the wall clock an hour off"
stop_tcx "$TCX_PID" tcx 5

# The action times (issue #25) are the clock read with each reply less the
# kernel's ages: a wall clock an hour ahead gives them an hour ahead, with
# no drift kept from a run before. A u32 rule with a mirred action, read by
# --once with the shim and without.
ip link add c0 type veth peer name c1
ip link set c0 up
ip link set c1 up
tc qdisc add dev c0 clsact
tc filter add dev c0 ingress pref 1 protocol ip u32 match ip dst 10.9.0.1/32 \
	action mirred egress mirror dev c1 cookie 0c
printf 'targets: [{dev: c0, parent: ingress}]\n' >"$WORK/once.yaml"
installed() {
	sed -n 's/^tc_action_installed_timestamp_seconds{.*cookie="0c".*} //p' "$1"
}
"$TCX_BIN" --once --config "$WORK/once.yaml" >"$WORK/plain.prom" || fail "--once failed"
env LD_PRELOAD="$shim" TCX_REALTIME_SHIFT=3600 "$TCX_BIN" --once --config "$WORK/once.yaml" \
	>"$WORK/shifted.prom" || fail "--once with the shim failed"
"$TCX_BIN" --once --config "$WORK/once.yaml" >"$WORK/plain2.prom" || fail "--once failed"
a=$(installed "$WORK/plain.prom") b=$(installed "$WORK/shifted.prom") c=$(installed "$WORK/plain2.prom")
[ -n "$a" ] && [ -n "$b" ] && [ -n "$c" ] || fail "no install time of cookie 0c: '$a' '$b' '$c'"
# (within two of the kernel's 10 ms ticks of each other, an hour apart)
awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { d = b - a - 3600; e = c - a;
	exit !(d > -0.02 && d < 0.02 && e > -0.02 && e < 0.02) }' ||
	fail "install times $a, then $b with the clock an hour ahead, then $c: not the clock's"
note "install time $a, $b with the clock an hour ahead, $c after"
echo "clock_step: all checks passed"
