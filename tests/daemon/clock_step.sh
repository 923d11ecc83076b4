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
# collected once and then slept for an hour.
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
echo "clock_step: all checks passed"
