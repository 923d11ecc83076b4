#!/bin/bash
# The cost of the liveness passes on flower (issue #25), on Debian's kernel,
# in one VM boot (a report, not a test; run on demand, `make bench-liveness-vm`):
#   tests/vm/bench_liveness.sh [BUILDDIR]
# with BUILDDIR/tcexporter built (default TCX_BUILDDIR; TCX_BIN overrides it).
#
# A terse dump (flower) carries no action times; every `liveness_interval`
# (default 60 s, 4 collections at the default 15 s interval) the daemon dumps
# the terse targets in full instead. In the VM: a dummy device with clsact
# and N flower filters (TCX_VM_BENCH_N, default 100000) on its ingress, one
# gact action and a unique cookie each; the daemon (`interval: 1s`; under
# TCG a collection takes longer, so they run back to back) scraped by
# busybox wget every 0.3 s, in rounds (TCX_VM_BENCH_ROUNDS, default 2) of
# two variants, K collections each (TCX_VM_BENCH_K, default 5) after its
# first:
#   terse     `liveness_interval: 0`: every collection terse, T s of CPU each;
#   liveness  `liveness_interval: 1ms`: every collection a liveness pass,
#             L s of CPU each (the full dump, the times decoded and written).
# CPU is utime+stime of every thread of the daemon (/proc/PID/stat), per
# collection (tc_exporter_collections_total). The figure: the daemon's CPU
# per collection averaged over a liveness interval of 4 collections,
# (3T + L) / 4T, goal at most 1.10; and L / T. TCG makes absolute times
# meaningless; only the ratios count. Exit status 0 when it ran, 1 when a
# step failed, 77 when it cannot run here.
#
# Environment: TCX_VM_BENCH_N, TCX_VM_BENCH_ROUNDS, TCX_VM_BENCH_K,
# TCX_VM_BENCH_MEM (MiB, default 2048), TCX_VM_TIMEOUT (default 2400 s),
# TCX_VM_KERNEL, TCX_KEEP_WORK=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

builddir=${1:-${TCX_BUILDDIR:-}}
[ -n "$builddir" ] || fail "usage: $0 BUILDDIR (or set TCX_BUILDDIR)"
TCX_BIN=${TCX_BIN:-$builddir/tcexporter}
require_bin
n=${TCX_VM_BENCH_N:-100000}
rounds=${TCX_VM_BENCH_ROUNDS:-2}
k=${TCX_VM_BENCH_K:-5}
mem=${TCX_VM_BENCH_MEM:-2048}
timeout_s=${TCX_VM_TIMEOUT:-2400}
find_python
vm_require_tools
vm_find_kernel "" # no series: TCX_VM_KERNEL, else the newest kernel
[ -x /sbin/tc ] || skip "/sbin/tc is not installed (iproute2)"

make_workdir
root=$WORK/root
share=$WORK/out
mkdir -p "$share"

note "initramfs for $VM_KERNEL ($VM_KVER)"
vm_init_root "$root"
vm_add_modules "$root" cls_flower act_gact sch_ingress dummy
vm_add_bin "$root" /sbin/tc /sbin/tc
vm_add_bin "$root" "$TCX_BIN" /tcx/tcexporter
awk -v n="$n" 'BEGIN {
	for (i = 1; i <= n; i++)
		printf "filter add dev b0 ingress pref 1 protocol ip handle %d flower " \
			"dst_ip 10.%d.%d.%d action gact pass cookie %08x%08x\n",
			i, int(i / 65536), int(i / 256) % 256, i % 256, n, i
}' >"$root/tcx/batch"

cat >"$root/tcx/payload" <<EOF
#!/bin/bash
set -euo pipefail
n=$n rounds=$rounds k=$k
EOF
cat >>"$root/tcx/payload" <<'EOF'
trap 'echo "TCXVM-ERROR line $LINENO: $BASH_COMMAND"' ERR
echo "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPU(s)" >/out/info
ip link set lo up
ip link add b0 type dummy
ip link set b0 up
/sbin/tc qdisc add dev b0 clsact
/sbin/tc -batch /tcx/batch
echo "TCXVM-PROGRESS $n filters built"
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
collections() {
	wget -q -O - http://127.0.0.1:9591/metrics 2>/dev/null |
		sed -n 's/^tc_exporter_collections_total //p'
}
cpu() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
# died V PID: unless PID runs, says why V's daemon is gone and stops.
died() {
	kill -0 "$2" 2>/dev/null && return 0
	wait "$2" && rc=0 || rc=$?
	echo "TCXVM-ERROR $1: the daemon is gone (status $rc): $(tail -c 400 "/tmp/$1.err")"
	dmesg | tail -n 20 >/out/dmesg
	exit 1
}
# run VARIANT LIVENESS_INTERVAL: one daemon, K collections after its first.
run() {
	local v=$1 c0 c1 t0 t1 pid spid
	printf '%s\n' 'interval: 1s' "liveness_interval: $2" \
		'targets: [{dev: b0, parent: ingress}]' 'http: {listen: ["127.0.0.1:9591"]}' >/tmp/$v.yaml
	/tcx/tcexporter --config /tmp/$v.yaml 2>/tmp/$v.err &
	pid=$!
	c0=
	until [ -n "$c0" ] && [ "$c0" -ge 1 ]; do
		kill -0 "$pid" || { echo "TCXVM-ERROR $v died: $(tail -c 300 /tmp/$v.err)"; exit 1; }
		sleep 0.3
		c0=$(collections || true)
	done
	(while :; do wget -q -O /dev/null http://127.0.0.1:9591/metrics 2>/dev/null; sleep 0.3; done) &
	spid=$!
	died "$v" "$pid"
	t0=$(cpu "$pid")
	c0=
	until [ -n "$c0" ]; do
		died "$v" "$pid"
		c0=$(collections || true)
	done
	c1=$c0
	while [ "$c1" -lt $((c0 + k)) ]; do
		sleep 0.5
		died "$v" "$pid"
		c1=$(collections || true)
		[ -n "$c1" ] || c1=$c0
	done
	died "$v" "$pid"
	t1=$(cpu "$pid")
	c1=$(collections)
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	died "$v" "$pid"
	kill -TERM "$pid"
	wait "$pid" || { echo "TCXVM-ERROR $v exited with $?"; exit 1; }
	echo "$v $((c1 - c0)) $((t1 - t0)) $hz" >>/out/cpu
	echo "TCXVM-PROGRESS $v: $((c1 - c0)) collections, $((t1 - t0)) ticks"
}
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then
		run terse 0
		run liveness 1ms
	else
		run liveness 1ms
		run terse 0
	fi
done
/tcx/tcexporter --once --config /tmp/liveness.yaml --format json | grep -c '"installed":[0-9]' >/out/timed-rows
EOF

vm_pack "$root" "$WORK/initrd"
note "booting with $mem MiB (TCG, timeout $timeout_s s): $n flower filters, $rounds rounds of $k collections"
t0=$(date +%s)
vm_boot "$WORK/initrd" "$share" "$WORK/console.log" "$timeout_s" "$mem"
t1=$(date +%s)
grep -a 'TCXVM-PROGRESS' "$WORK/console.log" | sed 's/.*TCXVM-PROGRESS/  /' || true
[ "$VM_RC" = 0 ] || {
	tail -n 20 "$WORK/console.log" >&2
	fail "the benchmark failed in the VM (status $VM_RC)"
}
note "VM: $((t1 - t0)) s in all; $(head -n 1 "$share/info")"
[ "$(cat "$share/timed-rows")" = "$n" ] ||
	fail "--once gave times to $(cat "$share/timed-rows") rows of $n"
"$PYTHON" - "$share/cpu" "$n" <<'PY'
import statistics, sys
per = {}
for line in open(sys.argv[1]):
    v, c, ticks, hz = line.split()
    per.setdefault(v, []).append(int(ticks) / int(hz) / int(c))
n = int(sys.argv[2])
t, l = statistics.median(per["terse"]), statistics.median(per["liveness"])
print("daemon CPU per collection (medians of %d runs each, under TCG):" % len(per["terse"]))
print("  terse     %.3f s   %s" % (t, " ".join("%.3f" % x for x in per["terse"])))
print("  liveness  %.3f s   %s" % (l, " ".join("%.3f" % x for x in per["liveness"])))
print("L / T = %.2f; a liveness pass costs %.1f us of CPU per row more than a terse one" %
      (l / t, (l - t) * 1e6 / n))
avg = (3 * t + l) / (4 * t)
print("over a liveness interval of 4 collections, (3T + L) / 4T = %.3f: goal <= 1.10 %s" %
      (avg, "PASS" if avg <= 1.10 else "MISS"))
PY
