#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The config loader benchmark (a report, not a test): `make bench-config`, or
#   tests/bench/config_bench.sh BUILDDIR
# with BUILDDIR/tcexporter and BUILDDIR/tests/bench/yaml_floor built.
#
# Generates a configuration with N cookies (TCX_BENCH_COOKIES, default
# 1000000), one a line as README.md writes them:
#   "0000002a": {tenant: t42, rule: r42}
# or, with TCX_BENCH_FORM=list, in the positional form; and one with M
# classes (TCX_BENCH_CLASSES, default 100000) in LibreQoS's shape, every one
# on one device, majors of 65535 minors, in the same form:
#   "eth0 1:2b": {tenant: t42, rule: r42}
# then runs, interleaved, RUNS times each, on each file:
#   check   tcexporter --check-config FILE
#   floor   yaml_floor FILE (reads the file and parses it into libyaml
#           events, nothing kept: see yaml_floor.c)
# and reports the median wall time, the median CPU time (user + system: the
# robust figure on a loaded machine) and the largest peak RSS of each, and the
# ratio check/floor. As root, it also starts the daemon on the cookies file
# (in a private network namespace) and reports its RSS once it serves, and
# after a SIGHUP reload of the same file.
#
# Targets: check <= 1.0 s and <= 200 MB peak RSS for 1M cookies, and for
# 100k classes. Missing a target is reported, not failed: the exit status is
# 0 whenever the benchmark ran.
set -euo pipefail

readonly TARGET_S=1.0 TARGET_MB=200 RUNS=${TCX_BENCH_RUNS:-7}
n=${TCX_BENCH_COOKIES:-1000000}
n_classes=${TCX_BENCH_CLASSES:-100000}
build=$(readlink -f "${1:-.}")
tcx=$build/tcexporter
floor=$build/tests/bench/yaml_floor
[ -x "$tcx" ] && [ -x "$floor" ] || {
	echo "bench-config: build $tcx and $floor first (make)" >&2
	exit 1
}
command -v /usr/bin/time >/dev/null || {
	echo "bench-config: SKIP: /usr/bin/time is missing" >&2
	exit 77
}
work=$(mktemp -d /tmp/tcx-bench-config.XXXXXX)
trap 'rm -rf "$work"' EXIT
cfg=$work/cookies.yaml classes=$work/classes.yaml
# TCX_BENCH_FORM: map (the default, as above) or list ("0000002a": [t42, r42],
# the positional form: about 24 MB for 1M cookies).
awk -v n="$n" -v form="${TCX_BENCH_FORM:-map}" 'BEGIN {
	print "labels: [tenant, rule]"
	print "cookies:"
	for (i = 0; i < n; i++)
		if (form == "list")
			printf "  \"%08x\": [t%d, r%d]\n", i, i, i
		else
			printf "  \"%08x\": {tenant: t%d, rule: r%d}\n", i, i, i
}' >"$cfg"
awk -v n="$n_classes" -v form="${TCX_BENCH_FORM:-map}" 'BEGIN {
	print "labels: [tenant, rule]"
	print "classes:"
	for (i = 0; i < n; i++) {
		key = sprintf("eth0 %x:%x", 1 + int(i / 65535), 1 + i % 65535)
		if (form == "list")
			printf "  \"%s\": [t%d, r%d]\n", key, i, i
		else
			printf "  \"%s\": {tenant: t%d, rule: r%d}\n", key, i, i
	}
}' >"$classes"
echo "bench-config: $n cookies, $(($(stat -c %s "$cfg") / 1048576)) MiB;" \
	"$n_classes classes, $(($(stat -c %s "$classes") / 1048576)) MiB"

# one NAME CMD...: a line "SECONDS KB CPU-SECONDS" appended to $work/NAME
one() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M %U %S" -o "$work/$name.t" "$@" >/dev/null 2>"$work/$name.err" || {
		cat "$work/$name.err" >&2
		echo "bench-config: $name failed" >&2
		exit 1
	}
	awk '{print $1, $2, $3 + $4}' "$work/$name.t" >>"$work/$name"
}
"$tcx" --check-config "$cfg" >/dev/null # warm the page cache
"$tcx" --check-config "$classes" >/dev/null
for ((i = 0; i < RUNS; i++)); do
	one floor "$floor" "$cfg"
	one check "$tcx" --check-config "$cfg"
	one classes_floor "$floor" "$classes"
	one classes_check "$tcx" --check-config "$classes"
done
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# stats RUN: the median wall time, the largest peak RSS and the median CPU
# time of RUN's lines
stats() {
	echo "$(cut -d' ' -f1 "$work/$1" | median) $(cut -d' ' -f2 "$work/$1" | sort -n | tail -1)" \
		"$(cut -d' ' -f3 "$work/$1" | median)"
}
# report WHAT FLOOR CHECK: runs FLOOR and CHECK side by side, and the targets
report() {
	local f c
	read -r -a f < <(stats "$2")
	read -r -a c < <(stats "$3")
	awk -v what="$1" -v f="${f[0]}" -v fkb="${f[1]}" -v fcpu="${f[2]}" \
		-v c="${c[0]}" -v ckb="${c[1]}" -v ccpu="${c[2]}" \
		-v ts="$TARGET_S" -v tmb="$TARGET_MB" -v runs="$RUNS" 'BEGIN {
		printf " %s:\n", what
		printf "  floor  %6.2f s wall  %6.2f s CPU  %6.1f MB peak RSS   (medians of %d)\n", f,
			fcpu, fkb / 1024, runs
		printf "  check  %6.2f s wall  %6.2f s CPU  %6.1f MB peak RSS   check/floor %.2f (CPU)\n",
			c, ccpu, ckb / 1024, (fcpu > 0 ? ccpu / fcpu : 0)
		printf "  target: <= %.1f s CPU: %s; <= %d MB: %s\n", ts,
			ccpu <= ts ? "met" : "MISSED", tmb, ckb / 1024 <= tmb ? "met" : "MISSED"
	}'
}
report "$n cookies" floor check
report "$n_classes classes" classes_floor classes_check

# The daemon's RSS, serving that configuration and after a reload of it.
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "bench-config: not root: the daemon's RSS is not measured"
	exit 0
fi
cat >"$work/daemon.yaml" <<YAML
interval: 1h
http: {listen: ["127.0.0.1:9591"]}
YAML
cat "$cfg" >>"$work/daemon.yaml"
unshare -n bash -s "$tcx" "$work" <<'SH'
set -eu
tcx=$1 work=$2
ip link set lo up
"$tcx" --config "$work/daemon.yaml" 2>"$work/daemon.err" &
pid=$!
rss() { awk '/^VmRSS/ {printf "%.1f MB", $2 / 1024}' "/proc/$pid/status"; }
wait_log() { # PATTERN COUNT: the daemon's log has COUNT lines matching PATTERN
	for _ in $(seq 600); do
		[ "$(grep -c "$1" "$work/daemon.err")" -ge "$2" ] && return 0
		kill -0 "$pid" || { cat "$work/daemon.err" >&2; exit 1; }
		sleep 0.1
	done
	echo "bench-config: the daemon did not log '$1'" >&2
	exit 1
}
wait_log "tcexporter started" 1
sleep 1
echo "  daemon RSS serving:          $(rss)"
kill -HUP "$pid"
wait_log "configuration reloaded" 1
sleep 1
echo "  daemon RSS after a reload:   $(rss)"
kill -HUP "$pid"
wait_log "configuration reloaded" 2
sleep 1
echo "  daemon RSS after 2 reloads:  $(rss)"
kill -TERM "$pid"
wait "$pid"
SH
