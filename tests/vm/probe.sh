#!/bin/bash
# What a kernel does, recorded raw (a report, not a test; run on demand):
#   tests/vm/probe.sh [BUILDDIR] [SERIES]
# boots the newest installed Debian kernel of SERIES (6.1, 6.12; default: the
# newest of all, or TCX_VM_KERNEL) with BUILDDIR/tests/bench/mnl_floor
# (default TCX_BUILDDIR) and prints, for the notes in tests/vm/README.md:
#  - terse dumps (TCA_DUMP_FLAGS_TERSE) of flower, matchall and u32, each
#    alone on a device: what `mnl_floor --terse` got (messages or the error)
#    next to a full dump, and what `tc -s -br filter show` printed;
#  - the RTM_DELTFILTER / RTM_NEWTFILTER notifications on RTNLGRP_TC of each
#    kind of removal (`tc -s monitor`, one monitor per step), with the
#    counters `tc -s filter show` gave right before the step: does the
#    notification carry the actions and their final counters?
# Exit: 0 when the VM ran the probe, 1 when it did not, 77 when it cannot
# run here. Environment: TCX_VM_KERNEL, TCX_VM_TIMEOUT (default 300 s),
# TCX_KEEP_WORK=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

builddir=${1:-${TCX_BUILDDIR:-}}
[ -n "$builddir" ] || fail "usage: $0 BUILDDIR [SERIES] (or set TCX_BUILDDIR)"
floor=$builddir/tests/bench/mnl_floor
[ -x "$floor" ] || fail "$floor is not built (make in $builddir)"
vm_require_tools
vm_find_kernel "${2:-}"
for b in /sbin/tc /sbin/ip; do
	[ -x "$b" ] || skip "$b is not installed (iproute2)"
done

make_workdir
root=$WORK/root
share=$WORK/out
mkdir -p "$share"
vm_init_root "$root"
vm_add_modules "$root" cls_flower cls_matchall cls_u32 act_gact sch_ingress dummy
vm_add_bin "$root" /sbin/tc /sbin/tc
vm_add_bin "$root" /sbin/ip /sbin/ip
vm_add_bin "$root" "$floor" /tcx/mnl_floor
cat >"$root/tcx/payload" <<'EOF'
#!/bin/bash
set -uo pipefail
TC=/sbin/tc
IP=/sbin/ip
out=/out/report
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
say() { printf '%s\n' "$*" >>"$out"; }
# run CMD...: the command, its output and status into the report.
run() {
	local rc=0
	say "\$ ${*#/sbin/}"
	"$@" >>"$out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || say "(exit status $rc)"
}
udp() { local i; for ((i = 0; i < $2; i++)); do printf '%100s' x >"/dev/udp/$1/9" 2>/dev/null; done; }
dummy() {
	$IP link add "$1" type dummy
	$IP link set "$1" up
	$IP addr add "$2" dev "$1"
	$TC qdisc add dev "$1" clsact
}
say "kernel $(uname -r)"

say ""
say "== terse dumps: one classifier per device, two filters, egress"
dummy tf 10.10.1.1/24
$TC filter add dev tf egress pref 10 protocol ip flower dst_ip 10.10.1.2 action gact pass cookie f1
$TC filter add dev tf egress pref 10 protocol ip flower dst_ip 10.10.1.3 action gact pass cookie f2
dummy tm 10.10.2.1/24
$TC filter add dev tm egress pref 10 protocol ip matchall action gact continue cookie e1
$TC filter add dev tm egress pref 20 protocol ip matchall action gact pass cookie e2
dummy tu 10.10.3.1/24
$TC filter add dev tu egress pref 10 protocol ip u32 match ip dst 10.10.3.2/32 action gact pass cookie d1
$TC filter add dev tu egress pref 10 protocol ip u32 match ip dst 10.10.3.3/32 action gact pass cookie d2
for d in tf tm tu; do
	say ""
	say "-- $d ($($TC filter show dev $d egress | awk 'NR == 1 { print $6 }'))"
	run /tcx/mnl_floor --terse $d egress
	run /tcx/mnl_floor $d egress
	run $TC -s -br filter show dev $d egress
done

say ""
say "== notifications (tc -s monitor, one per step; the counters right before)"
dummy n0 10.20.0.1/24
dummy n1 10.21.0.1/24
add() { run $TC filter add dev n0 egress "$@"; }
add pref 10 handle 1 protocol ip flower dst_ip 10.20.0.2 action gact pass cookie a1
add pref 10 handle 2 protocol ip flower dst_ip 10.20.0.3 action gact pass cookie a2
add pref 20 handle 1 protocol ip flower dst_ip 10.20.0.4 action gact pass cookie a3
add pref 20 handle 2 protocol ip flower dst_ip 10.20.0.5 action gact pass cookie a4
add pref 30 handle 800::800 protocol ip u32 match ip dst 10.20.0.6/32 action gact pass cookie a5
add pref 30 handle 800::801 protocol ip u32 match ip dst 10.20.0.7/32 action gact pass cookie a6
add pref 40 handle 1 protocol ip flower dst_ip 10.20.0.8 action goto chain 5
add chain 5 pref 1 handle 1 protocol ip flower dst_ip 10.20.0.8 action gact continue cookie a7
add chain 5 pref 2 handle 1 protocol ip flower dst_ip 10.20.0.8 action gact pass cookie a8
$TC filter add dev n1 egress pref 1 handle 1 protocol ip matchall action gact pass cookie a9
for h in 2 3 4 5 6 7 8; do udp 10.20.0.$h $h; done
udp 10.21.0.2 3
# step NAME CMD...: the counters, then the notifications CMD causes.
step() {
	local name=$1 mon
	shift
	say ""
	say "-- $name"
	$TC -s monitor >/tmp/mon 2>&1 &
	mon=$!
	sleep 0.5
	run "$@"
	sleep 0.5
	kill "$mon"
	wait "$mon" 2>/dev/null
	say "notifications:"
	cat /tmp/mon >>"$out"
}
say "counters before:"
$TC -s filter show dev n0 egress >>"$out"
$TC -s filter show dev n0 egress chain 5 >>"$out"
step "flower, one filter by handle" $TC filter del dev n0 egress pref 10 handle 1 flower
step "flower, replace (same handle)" $TC filter replace dev n0 egress pref 10 handle 2 \
	protocol ip flower dst_ip 10.20.0.3 action gact pass cookie a2
step "flower, a whole pref of 2 filters" $TC filter del dev n0 egress pref 20
step "u32, one filter by handle" $TC filter del dev n0 egress pref 30 handle 800::800 u32
step "u32, a whole pref (1 filter left)" $TC filter del dev n0 egress pref 30
step "chain flush (chain 5: 2 flower prefs)" $TC filter del dev n0 egress chain 5
step "matchall, by handle" $TC filter del dev n1 egress pref 1 handle 1 matchall
$TC filter add dev n1 egress pref 1 handle 1 protocol ip matchall action gact pass cookie a9
udp 10.21.0.2 3
step "clsact deleted (matchall on it)" $TC qdisc del dev n1 clsact
$TC filter add dev n0 egress pref 50 handle 1 protocol ip flower dst_ip 10.20.0.9 action gact pass cookie b1
udp 10.20.0.9 2
step "device deleted (flower on it)" $IP link del n0
EOF

vm_pack "$root" "$WORK/initrd"
vm_boot "$WORK/initrd" "$share" "$WORK/console.log" "${TCX_VM_TIMEOUT:-300}" 512
[ "$VM_RC" = 0 ] || fail "the probe failed in the VM (status $VM_RC)"
cat "$share/report"
