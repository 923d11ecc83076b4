#!/bin/bash
# Real-kernel test: boots Debian's own kernel under QEMU with an initramfs
# built here from this machine's files, runs the cases of tests/vm/cases.sh
# inside it (flower, matchall, u32, every action kind, chains, shared
# blocks, traffic, replace, delete), and compares on the host, row by row
# and counter by counter, every `tcexporter --once` output (JSON and
# Prometheus) with the `tc -s -j filter show` output captured in the VM right
# before and right after it (tests/integration/compare_tc.py --tc-json; the
# two tc captures must be identical, so nothing moved meanwhile). It also
# checks the collector's meta series: flower alone is dumped terse, flower +
# matchall is terse plus a full re-dump of each matchall pref
# ("terse+repair": a terse dump silently skips matchall filters on 6.1 and
# 6.12), and a u32 pref aborts the terse dump, which is then redone in full.
# Case c10_churn runs the daemon instead, with `aggregate`, while flower
# filters are replaced make-before-break (issue #11's software-switch case;
# see cases.sh): no aggregate may go down from one scrape to the next, and
# each must end at what was sent within 0.5% (exact only with the final
# counters of the deletion notifications). Case c17_liveness runs the
# daemon with liveness passes every 5 s and checks the action times of its
# scrapes against tc's ages and the traffic sent; c19_ovs runs Open vSwitch
# with its flows offloaded to TC flower and checks each flow's last use
# against OVS's (issue #25). c20_libreqos (issue #26) builds a LibreQoS-sized
# shaper, mq with an HTB tree per tx queue and 2,000 cake diffserv4 leaves,
# compares it with tc under a `families: xstats:` choice of fields, and
# counts the series a leaf and a tree give (README.md's recipe).
# c21_ovs_scale runs OVS with about 2,000 flows that expire and come
# back under two daemons with `aggregate`, one with a notification buffer
# too small (issue #26).
#
# One boot runs every case (about 10 s of boot under TCG, the rest is tc
# and tcexporter under emulation). Results come back through a 9p share;
# the serial console carries markers (TCXVM-*, see lib.sh) and the payload's
# status. A VM that does not boot, hangs (TCX_VM_TIMEOUT, default 720 s:
# one run takes 280 to 345 s in the VM at load average 5 to 8 on a 2-core
# machine, c20's tree 40 s of it and c21_ovs_scale's 60 s of traffic, and
# `make -j2 check` may run the two kernels' tests at once) or loses a
# marker fails the test. The VM has 3 GiB: c20's 2,000 cake qdiscs take
# 2.1 GiB of the kernel's memory (cake allocates its 8 tins' flow tables,
# about 1 MiB, whatever its diffserv mode).
#
#   tests/vm/run.sh [SERIES]
# boots the newest installed kernel of SERIES (6.1: linux-image-amd64 on
# Debian 12; 6.12: linux-image-6.12-amd64), as tests/vm/linux-SERIES.sh do
# for `make check`; without SERIES, TCX_VM_KERNEL or else the newest
# /boot/vmlinuz-* with modules.
#
# Environment: TCX_BIN (tcexporter to test), TCX_SRCDIR; TCX_VM_KERNEL (a
# vmlinuz, used without SERIES), TCX_VM_TIMEOUT, TCX_KEEP_WORK=1 (keep the
# work directory: initramfs, console log, outputs).
# Exit: 0 pass, 1 fail, 77 skip (no qemu, busybox-static, snmpd,
# openvswitch-switch or kernel image of SERIES; with TCX_REQUIRE_ROOT=1 that
# is a failure).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

require_bin
find_python
compare=$here/../integration/compare_tc.py
compare_q=$here/../integration/compare_qdisc.py
for f in "$compare" "$compare_q"; do
	[ -f "$f" ] || fail "$f not found"
done
[ -f "$here/cases.sh" ] || fail "$here/cases.sh not found"
vm_require_tools
vm_find_kernel "${1:-}"
for b in /sbin/tc /sbin/ip; do
	[ -x "$b" ] || skip "$b is not installed (iproute2)"
done
timeout_s=${TCX_VM_TIMEOUT:-720}
start=$(date +%s%N)

make_workdir
root=$WORK/root
share=$WORK/out
mkdir -p "$share"

# ---- the initramfs ---------------------------------------------------------------------
note "initramfs for $VM_KERNEL ($VM_KVER)"
vm_init_root "$root"
vm_add_modules "$root" cls_flower cls_matchall cls_u32 cls_basic act_gact act_mirred act_police \
	act_pedit act_skbedit act_tunnel_key act_vlan act_csum act_ct act_bpf act_nat act_sample \
	act_connmark act_ctinfo act_skbmod act_mpls act_gate act_ife act_meta_mark act_simple \
	sch_ingress dummy veth sch_tbf sch_codel sch_sfq sch_red sch_fq sch_cake sch_pie sch_hfsc \
	sch_htb sch_fq_pie sch_choke sch_sfb sch_netem em_cmp openvswitch \
	nf_conntrack_netlink pktgen
vm_add_bin "$root" /sbin/tc /sbin/tc
vm_add_bin "$root" /sbin/ip /sbin/ip
vm_add_bin "$root" "$TCX_BIN" /tcx/tcexporter
# A private snmpd and the tools that walk it (c14_hits: tcxFilterTable)
for b in snmpd snmpget snmpbulkwalk; do
	p=$(command -v "$b") || skip "$b is not installed (snmpd, snmp)"
	vm_add_bin "$root" "$p" "$p"
done
# Open vSwitch (c19_ovs: its flows offloaded to TC)
vm_add_ovs "$root"
cp "$here/cases.sh" "$root/tcx/payload"
# Sanitizer settings of a sanitizer build reach the VM.
for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
	[ -z "${!v:-}" ] || printf 'export %s=%q\n' "$v" "${!v}" >>"$root/tcx/env"
done
vm_pack "$root" "$WORK/initrd"

# ---- the boot ------------------------------------------------------------------------------
note "booting (TCG, timeout $timeout_s s)"
boot_start=$(date +%s%N)
vm_boot "$WORK/initrd" "$share" "$WORK/console.log" "$timeout_s" 3072
boot_end=$(date +%s%N)
note "VM done in $(((boot_end - boot_start) / 1000000)) ms, payload status $VM_RC"

# ---- the checks ------------------------------------------------------------------------
mapfile -t cases < <(sed -n 's/^CASES=(\(.*\))$/\1/p' "$here/cases.sh" | tr ' ' '\n')
[ "${#cases[@]}" -ge 8 ] || fail "cannot read the case list of cases.sh"
n_checks=0
failed=()

# check NAME CMD...: one check; its output is shown, a failure recorded.
check() {
	local name=$1 out rc=0
	shift
	n_checks=$((n_checks + 1))
	out=$("$@" 2>&1) || rc=$?
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/    /'
	if [ "$rc" = 0 ]; then
		echo "ok   $name"
	else
		echo "FAIL $name"
		failed+=("$name")
	fi
}

# targets CASE RUN PHASE TARGET[:MODE...]...: compare_tc.py target arguments
# into TA, each with its tc capture (TARGET: DEV-PARENT or block-N), and
# --terse when MODE is terse or terse+repair.
targets() {
	local d=$share/$1 run=$2 ph=$3 spec t mode
	shift 3
	TA=()
	for spec in "$@"; do
		t=${spec%%:*}
		mode=$(cut -d: -f2 <<<"$spec:")
		case "$t" in
		block-*) TA+=(--block "" "${t#block-}") ;;
		*) TA+=(--dev "" "${t%-*}" "${t##*-}" "${t##*-}") ;;
		esac
		TA+=(--tc-json "$d/tc-$run-$ph-$t.json")
		case "$mode" in terse | terse+repair) TA+=(--terse) ;; esac
	done
}

# n_actions CASE TARGET...: actions the case created on these targets.
n_actions() {
	local d=$share/$1 t n=0
	shift
	for t in "$@"; do
		[ -f "$d/n-$t" ] || { echo "no action count $d/n-$t" >&2; return 1; }
		n=$((n + $(cat "$d/n-$t")))
	done
	echo "$n"
}

# run_ok CASE RUN FMT WANT_RC: tcexporter exited WANT_RC, did not crash,
# no sanitizer report; stderr empty when WANT_RC is 0.
run_ok() {
	local p=$share/$1/$2.$3 rc
	[ -f "$p.rc" ] || { echo "$p.rc missing: the case did not run tcexporter"; return 1; }
	rc=$(cat "$p.rc")
	if grep -qE 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|SUMMARY: [A-Za-z]+Sanitizer' "$p.err"; then
		cat "$p.err"
		echo "sanitizer report"
		return 1
	fi
	if [ "$rc" -ge 126 ]; then
		cat "$p.err"
		echo "tcexporter died with status $rc"
		return 1
	fi
	if [ "$rc" != "$4" ]; then
		cat "$p.err"
		echo "exit status $rc, expected $4"
		return 1
	fi
	if [ "$4" = 0 ] && [ -s "$p.err" ]; then
		cat "$p.err"
		echo "stderr not empty"
		return 1
	fi
}

# same_tc CASE RUN TARGET...: the tc captures before and after tcexporter
# are identical (no counter moved: the comparison is meaningful).
same_tc() {
	local c=$1 run=$2
	shift 2
	targets "$c" "$run" pre "$@"
	"$PYTHON" "$compare" snapshot "${TA[@]}" -o "$WORK/$c-$run-pre.rows" >/dev/null &&
		targets "$c" "$run" post "$@" &&
		"$PYTHON" "$compare" snapshot "${TA[@]}" -o "$WORK/$c-$run-post.rows" >/dev/null &&
		"$PYTHON" "$compare" same "$WORK/$c-$run-pre.rows" "$WORK/$c-$run-post.rows"
}

# compare_run CASE RUN TARGET:MODE:TERSE:FULL... -- COMPARE-OPTIONS: JSON and
# Prometheus outputs against tc, with the number of rows the case created;
# then each target's meta series: success, mode MODE, TERSE terse and FULL
# full dump requests.
compare_run() {
	local c=$1 run=$2 n spec t sel mode terse full tg=() specs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		specs+=("$1")
		tg+=("${1%%:*}")
		shift
	done
	[ $# -eq 0 ] || shift
	n=$(n_actions "$c" "${tg[@]}") || n=-1
	check "$c/$run: tc before = tc after" same_tc "$c" "$run" "${tg[@]}"
	targets "$c" "$run" post "${specs[@]}"
	check "$c/$run: JSON = tc" "$PYTHON" "$compare" json --exporter "$share/$c/$run.json.out" \
		"${TA[@]}" --expect-rows "$n" "$@"
	check "$c/$run: Prometheus = tc, filter counts" "$PYTHON" "$compare" prom \
		--exporter "$share/$c/$run.prom.out" "${TA[@]}" --expect-rows "$n" \
		--check-filter-counts "$@"
	for spec in "${specs[@]}"; do
		t=${spec%%:*}
		case "$t" in
		block-*) sel="block=\"${t#block-}\"" ;;
		*) sel="device=\"${t%-*}\",parent=\"${t##*-}\"" ;;
		esac
		IFS=: read -r _ mode terse full <<<"$spec"
		meta "$c" "$run" "$sel" "$mode" "$terse" "$full"
	done
}

# lines CASE RUN LINE...: each line appears verbatim in the Prometheus output.
lines() {
	local f=$share/$1/$2.prom.out l bad=0
	shift 2
	for l in "$@"; do
		if ! grep -qxF -e "$l" "$f"; then
			echo "missing: $l"
			bad=1
		fi
	done
	if [ "$bad" = 1 ]; then
		echo "--- its tc_scrape_collector_ series:"
		grep '^tc_scrape_collector_' "$f" || true
	fi
	return "$bad"
}

# meta CASE RUN SEL MODE TERSE FULL: the collector's mode and dump counts of
# one target (SEL: its labels, as device="d1",parent="ingress").
meta() {
	local c=$1 run=$2 sel=$3
	check "$c/$run: {$sel} mode $4, $5 terse + $6 full dumps" lines "$c" "$run" \
		"tc_scrape_collector_success{$sel} 1" \
		"tc_scrape_collector_mode_info{$sel,mode=\"$4\"} 1" \
		"tc_scrape_collector_dump_requests{$sel,type=\"terse\"} $5" \
		"tc_scrape_collector_dump_requests{$sel,type=\"full\"} $6"
}

# Every case ran to its end in the VM.
for c in "${cases[@]}"; do
	if ! grep -q "TCXVM-CASE $c rc=0" "$WORK/console.log"; then
		echo "---- log of case $c:"
		cat "$share/$c/log" 2>/dev/null || echo "(none)"
		failed+=("$c: did not run to its end in the VM (no 'TCXVM-CASE $c rc=0')")
	fi
done
[ "$VM_RC" = 0 ] || failed+=("the VM's payload exited with status $VM_RC")

for f in json prom; do
	for cr in c1_flower/r c2_mixed/r c3_multi/r c4_chains/r c5_block/r c6_traffic/r \
		c7_replace/r1 c7_replace/r2 c8_delete/r1 c9_actions/r c9_actions/s c11_qdiscs/r c12_hfsc/r \
		c13_police/r c14_hits/r c16_plans/r; do
		check "${cr%/*}/${cr#*/}: tcexporter $f exit 0" run_ok "${cr%/*}" "${cr#*/}" "$f" 0
	done
	check "c8_delete/r2: tcexporter $f exit 1" run_ok c8_delete r2 "$f" 1
done

note "1. flower on clsact ingress and egress: terse dumps only"
compare_run c1_flower r d1-ingress:terse:1:0 d1-egress:terse:1:0 -- --min-distinct-bytes 2

note "2. flower + matchall + u32 on one qdisc: no row lost; the fallbacks"
compare_run c2_mixed r v2a-ingress:full:1:1 v2a-egress:terse+repair:1:2 -- \
	--min-distinct-bytes 5 --require-nonzero packets

# Where a classifier keeps hit counters, a full dump carries them and so does
# the full re-dump of a terse target's matchall prefs (terse+repair): each
# matchall and u32 rule's hits equal its one action's packets (every match
# runs the action), flower rules (no hit counter) have none.
hits_match_actions() {
	"$PYTHON" - "$share/c2_mixed/r.json.out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
acts = [r for r in lines if "action" in r]
flt = [l for l in lines if l["type"] == "filter"]
ok, n = True, 0
for f in flt:
    if f["kind"] == "u32" and "::" not in f["handle"]:
        continue  # a hash table
    mine = [a for a in acts if all(a[k] == f[k] for k in ("parent", "pref", "kind", "handle"))]
    if f["kind"] == "flower":
        if "hits" in f or "lookups" in f:
            print("flower keeps no hit counter: %r" % f)
            ok = False
        continue
    if len(mine) != 1 or f.get("hits") != mine[0]["packets"]:
        print("%s %s pref %s: hits %r, its action's packets %r" % (f["parent"], f["kind"], f["pref"], f.get("hits"), [a["packets"] for a in mine]))
        ok = False
    n += 1
print("%d matchall and u32 rules: hits = their action's packets" % n)
sys.exit(0 if ok and n == 5 else 1)
PY
}
check "c2_mixed/r: hit counters in the full dump and the terse+repair re-dump = the actions' packets" \
	hits_match_actions

note "3. several actions per filter, filters without actions"
compare_run c3_multi r d3-egress:terse:1:0 d3-ingress:full:1:1 -- --min-distinct-bytes 3
check "c3_multi/r: the action-less filters are counted" lines c3_multi r \
	'tc_scrape_collector_filters{device="d3",parent="egress"} 4' \
	'tc_scrape_collector_actions{device="d3",parent="egress"} 7' \
	'tc_scrape_collector_filters{device="d3",parent="ingress"} 3' \
	'tc_scrape_collector_actions{device="d3",parent="ingress"} 2'

note "4. chains and goto chain"
compare_run c4_chains r d4-egress:terse+repair:1:1 -- --min-distinct-bytes 3 \
	--require-nonzero packets

note "5. a shared block on two devices: one target, labelled by block"
compare_run c5_block r block-55:terse:1:0 block-56:terse:1:0 -- --min-distinct-bytes 3
only_blocks() {
	local f=$share/c5_block/r.prom.out n
	n=$(grep -c '^tc_scrape_collector_success{' "$f" || true)
	[ "$n" = 2 ] || {
		grep '^tc_scrape_collector_success{' "$f"
		echo "$n targets, want 2 (block 55 and block 56 only)"
		return 1
	}
	! grep -E '^tc_action_[a-z_]+\{([^}]*,)?device=' "$f" || {
		echo "action rows labelled by device"
		return 1
	}
}
check "c5_block/r: exactly the two block targets, no per-device row" only_blocks

note "6. traffic: distinct, non-zero counters, drops and overlimits"
compare_run c6_traffic r d6-egress:terse+repair:1:1 v6a-ingress:full:1:1 -- \
	--min-distinct-bytes 8 --require-nonzero bytes --require-nonzero packets \
	--require-nonzero drops --require-nonzero overlimits

note "7. a filter replaced under the same handle and cookie"
compare_run c7_replace r1 d7-egress:terse:1:0 -- --min-distinct-bytes 2
compare_run c7_replace r2 d7-egress:terse:1:0 -- --min-distinct-bytes 2
replaced() {
	"$PYTHON" - "$share/c7_replace/r1.json.out" "$share/c7_replace/r2.json.out" <<'PY'
import json, sys
runs = [[r for r in map(json.loads, open(p)) if "action" in r] for p in sys.argv[1:]]
ok = True
for name, rows, want in (("before", runs[0], 5), ("after", runs[1], 2)):
    r = [x for x in rows if x["handle"] == "0x1"]
    o = [x for x in rows if x["handle"] == "0x2"]
    if len(rows) != 2 or len(r) != 1 or len(o) != 1:
        print("%s the replace: %d rows, %d of handle 0x1, want 2 and 1" % (name, len(rows), len(r)))
        ok = False
        continue
    if r[0]["cookie"] != "77" * 16 or r[0]["packets"] != want or o[0]["packets"] != 2:
        print("%s the replace: %r, %r: want %d packets on 0x1, 2 on 0x2, same cookie" % (
            name, r[0], o[0], want))
        ok = False
sys.exit(0 if ok else 1)
PY
}
check "c7_replace: the counters of the replaced filter restart (5 -> 2 packets), one row" \
	replaced

note "8. a device deleted between two collections"
compare_run c8_delete r1 d8a-egress:terse:1:0 d8b-egress:terse+repair:1:1 -- \
	--min-distinct-bytes 2
compare_run c8_delete r2 d8b-egress:terse+repair:1:1 -- --min-distinct-bytes 1
gone() {
	local e
	for e in json prom; do
		grep -qF d8a "$share/c8_delete/r2.$e.err" || {
			cat "$share/c8_delete/r2.$e.err"
			echo "r2 ($e): stderr does not name d8a"
			return 1
		}
	done
	lines c8_delete r2 'tc_scrape_collector_success{device="d8a",parent="egress"} 0' \
		'tc_scrape_collector_success{device="d8b",parent="egress"} 1'
}
check "c8_delete/r2: d8a reported failed and named, d8b collected" gone

note "9. every action kind: the index of each from a full dump, none from a terse one"
compare_run c9_actions r d9-egress:full:1:1 d9f-egress:terse:1:0 -- --min-distinct-bytes 30
indices() {
	"$PYTHON" - "$share/c9_actions/r.json.out" "$share/c9_actions/s.json.out" <<'PY'
import json, sys
rows = [r for p in sys.argv[1:] for r in map(json.loads, open(p)) if "action" in r]
bad = []
def by_index(pairs):  # null (None) first
    return sorted(pairs, key=lambda p: (p[0] is not None, p[0] or 0, p[1]))
u32 = by_index((r["index"], r["action"]) for r in rows if r["kind"] == "u32")
if [i for i, _ in u32] != list(range(100, 120)) or len({a for _, a in u32}) != 19:
    bad.append("u32 rows (index, action): %r, want indices 100..119 on 19 kinds" % u32)
terse = [r["index"] for r in rows if r["device"] == "d9f"]
if len(terse) != 16 or any(i is not None for i in terse):
    bad.append("d9f's flower rows (terse): indices %r, want 16 nulls" % terse)
full = by_index((r["index"], r["action"]) for r in rows if r["device"] == "d9s" and r["kind"] == "flower")
if full != [(216, "nat"), (217, "gate"), (218, "simple"), (219, "skbmod")]:
    bad.append("d9s's flower rows (full dump): %r, want indices 216..219" % full)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c9_actions: the indices given, from full dumps (19 kinds), none from a terse one" indices
meta c9_actions s 'device="d9s",parent="egress"' full 1 1

# daemon_ended P: the daemon whose exit status and stderr a case left in
# P.rc and P.err stopped with status 0 after SIGTERM, with no sanitizer
# report.
daemon_ended() {
	[ -f "$1.rc" ] || { echo "no ${1##*/}.rc: the case did not stop the daemon"; return 1; }
	if has_sanitizer_report "$1.err"; then
		cat "$1.err"
		echo "sanitizer report"
		return 1
	fi
	[ "$(cat "$1.rc")" = 0 ] || {
		tail -n 20 "$1.err"
		echo "the daemon's exit status after SIGTERM: $(cat "$1.rc"), expected 0"
		return 1
	}
}
note "10. flower filters replaced make-before-break under the daemon's aggregates"
churn_daemon() {
	local d=$share/c10_churn rounds secs
	daemon_ended "$d/tcx" || return 1
	read -r rounds secs <"$d/rounds"
	echo "$rounds rounds of 3 replacements in $secs s"
}
# churn MODE: the scrapes of c10_churn, in order. monotonic: no aggregate
# ever went down or vanished; exact: the last minus the first is what was
# sent (sent-DST: packets, frame bytes), within 0.5%.
churn() {
	"$PYTHON" - "$share/c10_churn" "$1" <<'PY'
import glob, os, re, sys
d, mode = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(d, "scrape-*.prom")),
               key=lambda p: int(re.search(r"scrape-(\d+)", p).group(1)))
files.append(os.path.join(d, "final.prom"))
AGG = {"10.10.0.2": ("acme", "dns"), "10.10.0.3": ("acme", "dns"), "10.10.0.4": ("beta", "web")}
FAMS = ("tc_action_packets_total", "tc_action_bytes_total")
def values(p):
    out = {}
    for m in re.finditer(r'^(tc_action_\w+_total)\{tenant="(\w*)",rule="(\w*)"\} (\d+)$',
                         open(p).read(), re.M):
        out[(m.group(1), m.group(2), m.group(3))] = int(m.group(4))
    return out
scrapes = [(os.path.basename(p), values(p)) for p in files]
bad = []
if mode == "monotonic":
    for (pn, prev), (n, cur) in zip(scrapes, scrapes[1:]):
        for k, v in prev.items():
            if k not in cur:
                bad.append("%s: %s vanished (was %d in %s)" % (n, k, v, pn))
            elif cur[k] < v:
                bad.append("%s: %s went down: %d in %s, %d" % (n, k, v, pn, cur[k]))
    print("%d scrapes, %d series each" % (len(scrapes), len(scrapes[-1][1])))
else:
    sent = {}
    for dst, agg in AGG.items():
        pk, by = (int(x) for x in open(os.path.join(d, "sent-" + dst)).read().split())
        for f, v in zip(FAMS, (pk, by)):
            sent[(f,) + agg] = sent.get((f,) + agg, 0) + v
    first, last = scrapes[0][1], scrapes[-1][1]
    print("%-10s %-24s %10s %10s %7s" % ("aggregate", "family", "sent", "counted", "ratio"))
    for k in sorted(sent):
        counted = last.get(k, 0) - first.get(k, 0)
        ratio = counted / sent[k] if sent[k] else float("nan")
        print("%-10s %-24s %10d %10d %7.4f" % (k[1] + "/" + k[2], k[0], sent[k], counted, ratio))
        if k not in first or k not in last:
            bad.append("%s missing from the first or the last scrape" % (k,))
        if not sent[k] or abs(counted - sent[k]) > 0.005 * sent[k]:
            bad.append("%s/%s %s: counted %d, sent %d (ratio %.4f, not within 0.5%%)" % (
                k[1], k[2], k[0], counted, sent[k], ratio))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c10_churn: the daemon ran through the churn and stopped with status 0" churn_daemon
check "c10_churn: no aggregate ever went down" churn monotonic
check "c10_churn: each aggregate is what was sent, within 0.5%" churn exact

# qdisc_case CASE REQUIREMENT...: a case of qdiscs and classes: its two tc
# captures equal, tc's view printed, tcexporter's JSON and text equal to it
# (compare_qdisc.py), with each TABLE:KIND:FIELD of REQUIREMENT non-zero in
# tc (a comparison of zeros would prove little) and cake's 4 tins; promtool
# finds nothing in the text.
qdisc_case() {
	local d=$share/$1 c=$1 r req=()
	shift
	for r in "$@"; do req+=(--require "$r"); done
	check "$c: tc before = tc after" "$PYTHON" "$compare_q" same "$d/pre" "$d/post"
	check "$c: what tc reports" "$PYTHON" "$compare_q" show --tc "$d/post"
	check "$c/r: JSON = tc" "$PYTHON" "$compare_q" json --tc "$d/post" \
		--exporter "$d/r.json.out" --expect-tins 4 "${req[@]}"
	check "$c/r: Prometheus = tc" "$PYTHON" "$compare_q" prom --tc "$d/post" \
		--exporter "$d/r.prom.out" --expect-tins 4 "${req[@]}"
	if command -v promtool >/dev/null 2>&1; then
		check "$c/r: promtool check metrics" promtool_clean "$d/r.prom.out"
	fi
}
# promtool_clean FILE: promtool check metrics finds nothing in FILE.
promtool_clean() {
	local out rc=0
	out=$(promtool check metrics <"$1" 2>&1) || rc=$?
	[ -z "$out" ] || echo "$out"
	[ "$rc" = 0 ] && [ -z "$out" ]
}

note "11. qdiscs and classes of every kind with statistics, mq the sum of its children"
qdisc_case c11_qdiscs qdisc:fq_codel:drop_overlimit qdisc:fq_codel:backlog_bytes \
	qdisc:fq_codel:new_flow_count qdisc:fq_codel:memory_usage_bytes qdisc:codel:drop_overlimit \
	qdisc:codel:maxpacket_bytes qdisc:sfq:drops qdisc:sfq:backlog_packets qdisc:red:early \
	qdisc:fq:flows qdisc:fq:flows_plimit qdisc:cake:memory_used_bytes qdisc:cake:tin.sent_packets \
	qdisc:cake:tin.backlog_bytes qdisc:cake:tin.peak_delay_seconds qdisc:pie:packets_in \
	qdisc:mq:packets qdisc:pfifo:packets qdisc:tbf:overlimits class:mq:packets \
	class:fq_codel:backlog_packets class:sfq:allot_bytes class:cake:deficit_bytes

note "12. hfsc (its qdisc read from tc's text) and its classes"
qdisc_case c12_hfsc qdisc:hfsc:packets class:hfsc:packets class:hfsc:work_bytes class:hfsc:rtwork_bytes \
	class:hfsc:period

note "13. legacy policers (police without action): u32 on ingress, basic on egress"
# police_rows: each target's one filter with a policer in tc -s -j (its
# statistics, the same before and after tcexporter ran) has one row in
# tcexporter's JSON, action police and order 1, with tc's bytes, packets,
# drops and overlimits; packets were both passed and dropped.
police_rows() {
	"$PYTHON" - "$share/c13_police" <<'PY'
import json, os, re, sys
d = sys.argv[1]
rows = [r for r in map(json.loads, open(os.path.join(d, "r.json.out"))) if "action" in r]
# iproute2 6.1 prints the old TCA_STATS as text inside its JSON (which is
# then invalid): its figures are read from that text.
SENT = re.compile(r"Sent (\d+) bytes (\d+) pkts \(dropped (\d+), overlimits (\d+)\)")
def stats(path):
    text = open(path).read()
    try:
        tree = json.loads(text)
    except ValueError:
        return [dict(zip(("bytes", "packets", "drops", "overlimits"), map(int, m)))
                for m in SENT.findall(text)]
    found = []
    def walk(o):
        if isinstance(o, dict):
            s = o.get("stats")
            if isinstance(s, dict) and "bytes" in s:
                found.append(s)
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(tree)
    return found
ok = len(rows) == 2
if not ok:
    print("%d action rows, want 2: %r" % (len(rows), rows))
for dev, parent, kind in (("v13a", "ingress", "u32"), ("d13", "egress", "basic")):
    t = "%s-%s" % (dev, parent)
    pre, post = (stats(os.path.join(d, "tc-r-%s-%s.json" % (ph, t))) for ph in ("pre", "post"))
    mine = [r for r in rows if r["device"] == dev and r["parent"] == parent]
    if len(post) != 1 or pre != post or len(mine) != 1:
        print("%s: tc statistics before %r, after %r; rows %r" % (t, pre, post, mine))
        print(open(os.path.join(d, "tc-r-post-%s.txt" % t)).read())
        ok = False
        continue
    st, r = post[0], mine[0]
    want = {k: st[k] for k in ("bytes", "packets", "drops", "overlimits")}
    got = {k: r.get(k) for k in want}
    if r["action"] != "police" or r["order"] != 1 or r["kind"] != kind or got != want:
        print("%s: row %r, want action police, order 1, kind %s, %r" % (t, r, kind, want))
        ok = False
    elif not 0 < st["drops"] < st["packets"]:
        print("%s: %r: want packets both passed and dropped" % (t, want))
        ok = False
    else:
        print("%s: %r" % (t, got))
sys.exit(0 if ok else 1)
PY
}
check "c13_police/r: each policer's row = tc -s -j (bytes, packets, drops, overlimits)" police_rows

note "14. rules that only classify: their hit counters, as tc -s counts them"
# Each rule's hits and lookups in tcexporter's JSON filters line equal tc -s
# filter show's (rule hit N success M), each u32 key's its (success N ), the
# mark's its (success N), and what was sent; each u32 knode once, under the
# parent whose table holds it; basic and matchall (tc prints no counter of
# theirs) equal what was sent. The Prometheus families carry the same values.
hit_rows() {
	"$PYTHON" - "$share/c14_hits" <<'PY'
import json, os, re, sys
d = sys.argv[1]
lines = [json.loads(l) for l in open(os.path.join(d, "r.json.out"))]
flt = [l for l in lines if l["type"] == "filter"]
prom = open(os.path.join(d, "r.prom.out")).read()
ok = True
def tc_knodes(path):
    """u32 knodes of tc -s text: handle -> (lookups, hits, mark, [keys])."""
    out = {}
    for block in re.split(r"\n(?=filter )", open(path).read()):
        m = re.search(r" fh (\S+::\S+) ", block)
        if not m:
            continue
        rh = re.search(r"\(rule hit (\d+) success (\d+)\)", block)
        mk = re.search(r"mark 0x\S+ 0x\S+ \(success (\d+)\)", block)
        keys = [int(k) for k in re.findall(r"\(success (\d+) \)", block)]
        out[m.group(1)] = (int(rh.group(1)) if rh else None, int(rh.group(2)) if rh else None,
                           int(mk.group(1)) if mk else None, keys)
    return out
pre = [open(os.path.join(d, "tc-r-pre-%s.txt" % p)).read() for p in ("1", "1_1")]
post = [open(os.path.join(d, "tc-r-post-%s.txt" % p)).read() for p in ("1", "1_1")]
if pre != post:
    print("tc's counters moved while tcexporter ran")
    ok = False
tc = tc_knodes(os.path.join(d, "tc-r-post-1.txt"))
tc_inner = tc_knodes(os.path.join(d, "tc-r-post-1_1.txt"))
if tc != tc_inner:
    print("tc lists the shared knodes differently under 1: and 1:1: %r %r" % (tc, tc_inner))
    ok = False
# (parent, pref, kind, handle): lookups, hits, mark, keys, from what was sent
want = {
    ("1:", 10, "u32", "800::800"): (21, 7, None, [7, 7]),
    ("1:", 10, "u32", "800::801"): (14, 5, 14, [5]),
    ("1:", 10, "u32", "800::802"): (9, 4, None, [4]),
    ("1:1", 10, "u32", "801::800"): (4, 4, None, [4]),
    ("1:", 20, "basic", None): (5, 3, None, []),
    ("1:", 30, "matchall", None): (None, 2, None, []),
}
got = {}
for f in flt:
    if f["kind"] == "u32" and "::" not in f["handle"]:
        continue  # a hash table
    key = (f["parent"], f["pref"], f["kind"], f["handle"] if f["kind"] == "u32" else None)
    if key in got:
        print("listed twice: %r" % (key,))
        ok = False
    got[key] = (f.get("lookups"), f.get("hits"), f.get("u32_mark_success"), f.get("key_hits", []))
if got != want:
    print("tcexporter %r\nwant       %r" % (got, want))
    ok = False
for (parent, pref, kind, h), v in want.items():
    if kind == "u32" and tc.get(h) != v:
        print("%s: tc says %r, sent %r" % (h, tc.get(h), v))
        ok = False
# the Prometheus families: one series per counter kept, with these values
for (parent, pref, kind, h), (lk, ht, mk, keys) in got.items():
    for fam, v in (("lookups", lk), ("hits", ht), ("u32_mark_success", mk)):
        pat = r'^tc_filter_%s_total\{device="d14",parent="%s",chain="0",protocol="ip",pref="%d",kind="%s",handle="[^"]*"\} (\d+)$' % (fam, re.escape(parent), pref, kind)
        vals = [int(x) for x in re.findall(pat, prom, re.M)]
        if kind == "u32":
            vals = [int(x) for x in re.findall(pat.replace('handle="[^"]*"', 'handle="%s"' % h), prom, re.M)]
        if vals != ([] if v is None else [v]):
            print("prometheus %s of %r: %r, want %r" % (fam, (parent, pref, kind, h), vals, v))
            ok = False
print("%d rules, %d knodes in tc's listing" % (len(got), len(tc)))
sys.exit(0 if ok else 1)
PY
}
check "c14_hits/r: each rule's hits, lookups, mark and key hits = tc -s = what was sent, each knode once" hit_rows

# tcxFilterTable through the VM's private snmpd: the walk made between two
# JSON runs that agree with each other and with r's (nothing moved) holds a
# row per rule with hit counters, with the JSON's figures (snmpcmp.py
# check-filters; the 6 rules of hit_rows).
snmp_filter_rows() {
	local d=$share/c14_hits f
	daemon_ended "$d/s.tcx" || return 1
	for f in r.json.out s.json1.out s.json2.out; do
		grep '^{"type":"filter",' "$d/$f" >"$WORK/c14-$f.filters" || { echo "$f: no filter line"; return 1; }
	done
	if ! cmp -s "$WORK/c14-r.json.out.filters" "$WORK/c14-s.json1.out.filters" ||
		! cmp -s "$WORK/c14-s.json1.out.filters" "$WORK/c14-s.json2.out.filters"; then
		echo "the filters' counters moved between the runs"
		return 1
	fi
	"$PYTHON" "$here/../snmp/snmpcmp.py" check-filters --walk "$d/s.walk" --json "$d/s.json1.out" \
		--prefs 10,20,30 --expect-rows 6 --ifindex-file "$d/s.ifindex"
}
check "c14_hits/s: tcxFilterTable through snmpd = the JSON filters line, a row per rule with hit counters" \
	snmp_filter_rows

note "15. hit counters aggregated while u32 rules are replaced make-before-break"
# Every scrape's tc_filter_hits_total{device="d15"} is at least the one
# before; the last minus the first is every datagram sent (each matched by
# one rule), within 0.5% as c10's, the deleted rules' last hits coming from
# their deletion notifications (without them, 19 rounds of 20 would lose
# the hits since the last collection).
hits_churn() {
	local d=$share/c15_hits_churn
	daemon_ended "$d/tcx" || return 1
	"$PYTHON" - "$d" <<'PY'
import glob, os, re, sys
d = sys.argv[1]
files = sorted(glob.glob(os.path.join(d, "scrape-*.prom")),
               key=lambda p: int(re.search(r"scrape-(\d+)", p).group(1)))
files.append(os.path.join(d, "final.prom"))
def hits(p):
    m = re.search(r'^tc_filter_hits_total\{device="d15"\} (\d+)$', open(p).read(), re.M)
    return int(m.group(1)) if m else None
vals = [hits(p) for p in files]
sent = int(open(os.path.join(d, "sent")).read())
rounds = open(os.path.join(d, "rounds")).read().split()
bad = []
if None in vals:
    bad.append("a scrape without tc_filter_hits_total{device=\"d15\"}: %r" % vals)
else:
    bad += ["went down: %d then %d" % (a, b) for a, b in zip(vals, vals[1:]) if b < a]
    counted = vals[-1] - vals[0]
    print("%s rounds in %s s, %d scrapes; sent %d, counted %d (ratio %.4f)" % (
        rounds[0], rounds[1], len(vals), sent, counted, counted / sent if sent else 0))
    if not sent or abs(counted - sent) > 0.005 * sent:
        bad.append("counted %d, sent %d: not within 0.5%%" % (counted, sent))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c15_hits_churn: the hit aggregate never went down and counted every datagram sent, within 0.5%" hits_churn

note "16. plans of every kind, as tc -d prints them; a rate estimator against the traffic"
# Every plan tc -d prints of c16's qdiscs (tc -d -j, and hfsc's from the
# text) equals tcexporter's series (times in seconds, rates in bytes per
# second; tc's probabilities are printed to 6 digits: within 1e-5), every
# plan series of those devices has its tc counterpart, the JSON's "plans"
# equal the text, and promtool finds nothing to say.
plans_rows() {
	local d=$share/c16_plans out
	out=$(promtool check metrics <"$d/r.prom.out" 2>&1) || { echo "promtool: $out"; return 1; }
	[ -z "$out" ] || { echo "promtool: $out"; return 1; }
	"$PYTHON" - "$d" <<'PY'
import json, re, sys
d = sys.argv[1]
US = 1e-6
# tc's key -> (tcexporter's field, scale to its unit); a "label:" field is an info family's label
MAP = {
    "fq_codel": {"limit": ("limit_packets", 1), "flows": ("flows", 1), "quantum": ("quantum_bytes", 1),
                 "target": ("target_seconds", US), "ce_threshold": ("ce_threshold_seconds", US),
                 "interval": ("interval_seconds", US), "memory_limit": ("memory_limit_bytes", 1),
                 "ecn": ("ecn", 1), "drop_batch": ("drop_batch_packets", 1)},
    "codel": {"limit": ("limit_packets", 1), "target": ("target_seconds", US),
              "ce_threshold": ("ce_threshold_seconds", US), "interval": ("interval_seconds", US),
              "ecn": ("ecn", 1)},
    "fq": {"limit": ("limit_packets", 1), "flow_limit": ("flow_limit_packets", 1), "buckets": ("buckets", 1),
           "quantum": ("quantum_bytes", 1), "initial_quantum": ("initial_quantum_bytes", 1),
           "maxrate": ("maxrate_bytes_per_second", 1),
           "low_rate_threshold": ("low_rate_threshold_bytes_per_second", 1),
           "refill_delay": ("refill_delay_seconds", US), "ce_threshold": ("ce_threshold_seconds", US),
           "horizon": ("horizon_seconds", US)},
    "fq_pie": {"limit": ("limit_packets", 1), "flows": ("flows", 1), "target": ("target_seconds", US),
               "tupdate": ("tupdate_seconds", US), "quantum": ("quantum_bytes", 1),
               "memory_limit": ("memory_limit_bytes", 1), "ecn": ("ecn", 1)},
    "pie": {"limit": ("limit_packets", 1), "target": ("target_seconds", US),
            "tupdate": ("tupdate_seconds", US), "ecn": ("ecn", 1), "bytemode": ("bytemode", 1)},
    "red": {"limit": ("limit_bytes", 1), "min": ("min_bytes", 1), "max": ("max_bytes", 1),
            "probability": ("probability_ratio", 1)},
    "choke": {"limit": ("limit_packets", 1), "min": ("min_packets", 1), "max": ("max_packets", 1),
              "probability": ("probability_ratio", 1)},
    "sfb": {"rehash": ("rehash_seconds", US), "db": ("db_seconds", US), "limit": ("limit_packets", 1),
            "max": ("max_packets", 1), "target": ("target_packets", 1),
            "penalty_rate": ("penalty_rate_packets_per_second", 1),
            "penalty_burst": ("penalty_burst_packets", 1)},
    "sfq": {"limit": ("limit_packets", 1), "quantum": ("quantum_bytes", 1), "depth": ("depth_packets", 1),
            "flows": ("flows", 1), "divisor": ("divisor", 1), "perturb": ("perturb_seconds", 1)},
    "pfifo": {"limit": ("limit_packets", 1)}, "pfifo_head_drop": {"limit": ("limit_packets", 1)},
    "bfifo": {"limit": ("limit_bytes", 1)},
    "netem": {"limit": ("limit_packets", 1), "delay.delay": ("delay_seconds", 1),
              "delay.jitter": ("jitter_seconds", 1), "loss-random.loss": ("loss_ratio", 1),
              "duplicate.duplicate": ("duplicate_ratio", 1), "rate.rate": ("rate_bytes_per_second", 1)},
    "cake": {"bandwidth": ("bandwidth_bytes_per_second", 1), "rtt": ("rtt_seconds", US),
             "diffserv": ("label:diffserv", 1), "flowmode": ("label:flow_mode", 1)},
    "tbf": {"rate": ("rate_bytes_per_second", 1)},
}
INFO = {"label:diffserv": "diffserv_info", "label:flow_mode": "flow_mode_info"}
want, bad = {}, []
text = open(d + "/tc-d.json").read()
dec, i = json.JSONDecoder(), 0
while True:
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    arr, i = dec.raw_decode(text, i)
    for q in arr:
        if not q.get("root"):
            continue
        k, opts = q["kind"], q.get("options", {})
        for key, (field, scale) in MAP[k].items():
            v = opts
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            if v is None:
                continue
            if field.startswith("label:"):
                want[("qdisc", k, "1:", INFO[field], v)] = 1
            else:
                want[("qdisc", k, "1:", field, None)] = (1 if v is True else 0 if v is False else v) * scale
UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
def rate(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)bit", s)
    return float(m.group(1)) * UNIT[m.group(2)] / 8
def dur(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s)", s)
    return float(m.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1}[m.group(2)]
for line in open(d + "/tc-d-class-hfsc.txt"):
    f = line.split()
    if f[:2] != ["class", "hfsc"]:
        continue
    h = f[2]
    for j, w in enumerate(f):
        if w in ("rt", "ls", "ul") and f[j + 1] == "m1":
            want[("class", "hfsc", h, w + "_m1_bytes_per_second", None)] = rate(f[j + 2])
            want[("class", "hfsc", h, w + "_m1_duration_seconds", None)] = dur(f[j + 4])
            want[("class", "hfsc", h, w + "_m2_bytes_per_second", None)] = rate(f[j + 6])
m = re.search(r"default (\w+)", open(d + "/tc-d-hfsc.txt").read())
want[("qdisc", "hfsc", "1:", "default_class", None)] = int(m.group(1), 16)
# tcexporter's plans: the JSON's "plans" of every qdisc and class of those
# kinds (one device each; its keys are exactly the plan families), each
# equal to its text series
got, n_text = {}, 0
prom = open(d + "/r.prom.out").read()
for o in map(json.loads, open(d + "/r.json.out")):
    if o.get("type") not in ("qdisc", "class") or (o["kind"] not in MAP and o["kind"] != "hfsc"):
        continue
    for field, v in o.get("plans", {}).items():
        obj, k, h = o["type"], o["kind"], o["handle"]
        if (obj, k) == ("qdisc", "tbf") and field != "rate_bytes_per_second":
            continue  # tbf's others: tests/integration/plans.sh, from tc -d's text
        if isinstance(v, str):  # a mode: its info series, the mode a label
            key, fam, extra, v = (obj, k, h, field + "_info", v), "%s_info" % field, ',%s="%s"' % (field, v), 1
        else:
            key, fam, extra = (obj, k, h, field, None), field, ""
        got[key] = v
        pat = r'^tc_%s_%s_%s\{device="%s",kind="%s",handle="%s",[^}]*%s\} (\S+)$' % (
            obj, k, fam, o["device"], k, re.escape(h), re.escape(extra))
        t = re.findall(pat, prom, re.M)
        n_text += 1
        if len(t) != 1 or abs(float(t[0]) - v) > 1e-12 * max(1, abs(v)):
            bad.append("%r: JSON %r, text %r" % (key, v, t))
for k in sorted(set(want) | set(got), key=str):
    if k not in got:
        bad.append("%r: tc -d says %r, tcexporter nothing" % (k, want[k]))
    elif k not in want:
        bad.append("%r: tcexporter %r, tc -d prints nothing" % (k, got[k]))
    elif abs(got[k] - want[k]) > max(1e-9, 1e-5 * abs(want[k])):
        bad.append("%r: tcexporter %r, tc -d %r" % (k, got[k], want[k]))
kinds = sorted({k[1] for k in want})
print("%d plans of %d kinds = tc -d (%s), each the same in the text" % (len(got), len(kinds), " ".join(kinds)))
print("\n".join(bad))
sys.exit(1 if bad or len(kinds) < 16 else 0)
PY
}
check "c16_plans: every plan tc -d prints of 16 kinds = tcexporter's (text and JSON), nothing more; promtool silent" plans_rows

# The estimator of pe's 1:10, flooded through its 1mbit ceil: within 30% of
# the bytes the class sent per second between two tc reads 3 s apart. The
# estimator is an average of the last second, the bytes one of 6 s, and a
# sender in a TCG VM beside another VM does not fill the ceil evenly: under
# load average 5 to 8 they parted by 0.92 to 1.25 (seven runs). What this
# check can tell is the unit and the class: bits for bytes is 8x, a rate per
# 250 ms sample 0.25x; tests/integration/rate_est.sh checks the value against
# tc on the host.
estimator() {
	"$PYTHON" - "$share/c16_plans" <<'PY'
import re, sys
d = sys.argv[1]
t1, t2 = map(float, open(d + "/est-times").read().split())
b1, b2 = (int(re.search(r"Sent (\d+) bytes", open(d + "/est-tc-%d.txt" % n).read()).group(1)) for n in (1, 2))
sent = (b2 - b1) / (t2 - t1)
m = re.search(r'^tc_class_rate_bytes_per_second\{device="pe",[^}]*handle="1:10"[^}]*\} (\S+)$',
              open(d + "/est.prom.out").read(), re.M)
if not m:
    sys.exit("no tc_class_rate_bytes_per_second for pe 1:10")
est = float(m.group(1))
print("1:10 sent %.0f bytes/s over %.2f s; its estimator %.0f bytes/s (%.3fx); the ceil 125000" % (sent, t2 - t1, est, est / sent))
sys.exit(0 if abs(est - sent) <= 0.30 * sent else 1)
PY
}
check "c16_plans: the rate estimator of an HTB class is within 30% of the bytes it sent per second" estimator

note "17. action times: the daemon's liveness passes and the rows kept between them"
# c17_liveness's scrapes (one per collection: scrapes lists "N COLLECTIONS
# LIVENESS_PASS SNAPSHOT_TIMESTAMP"), tc -s -j before the traffic and after
# the liveness pass that followed it, --once JSON beside each. tc prints an
# action's ages in whole seconds as of its read (made between the two wall
# clock readings of tc-NAME.t, t0 and t1): a time T of tcexporter agrees
# with tc's age A when -1 <= T - (t0 - A) <= t1 - t0, to the kernel's
# resolution (10 ms ticks, 4 ms jiffies: 0.02 s below) and the delay
# between the kernel's writing the dump and tcexporter's reading the clock
# (0.25 s above, for a loaded machine). The traffic's times: first_used in
# the wall clock window around the first datagram to 17a1 and 17d1,
# last_used in the window around the last, by the same margins. Two
# readings of the kernel's times by tcexporter agree within 0.25 s.
liveness_daemon() {
	local d=$share/c17_liveness r
	daemon_ended "$d/tcx" || return 1
	for r in pre post; do
		if [ "$(cat "$d/once-$r.rc" 2>/dev/null)" != 0 ] || [ -s "$d/once-$r.err" ]; then
			cat "$d/once-$r.err" 2>/dev/null
			echo "--once --format json ($r) failed: status $(cat "$d/once-$r.rc" 2>/dev/null)"
			return 1
		fi
	done
	echo "$(wc -l <"$d/scrapes") collections scraped"
}
liveness() {
	"$PYTHON" - "$share/c17_liveness" "$1" <<'PY'
import json, os, re, sys
d, mode = sys.argv[1], sys.argv[2]
FLOWER = ("17a1", "17b1", "17c1")  # terse targets' flower rows: times kept between liveness passes
MALL = "17d1"                       # matchall on the terse+repair target: dumped in full every time
ROWS = FLOWER + (MALL,)
USED = ("17a1", "17d1")             # the rules the traffic went through
TM = ("installed", "first_used", "last_used")
LO, HI, SAME = 0.02, 0.25, 0.25
LIVENESS_GAP = 4.4                  # liveness passes are >= 5 s - 1 s / 2 apart

def rd(name):
    try:
        return open(os.path.join(d, name)).read()
    except OSError as e:
        sys.exit("%s (the case did not get that far: its log is above)" % e)

def prom_rows(text, where):
    rows = {}
    for m in re.finditer(r'^tc_action_(installed|first_used|last_used)_timestamp_seconds\{([^}]*)\} (\S+)$|'
                         r'^tc_action_packets_total\{([^}]*)\} (\d+)$', text, re.M):
        labels = m.group(2) or m.group(4)
        ck = re.search(r'cookie="([0-9a-f]*)"', labels)
        if not ck:
            sys.exit("%s: a row without a cookie label: %s" % (where, m.group(0)))
        r = rows.setdefault(ck.group(1), {})
        if m.group(1):
            if m.group(1) in r:
                sys.exit("%s: %s twice for %s" % (where, m.group(1), ck.group(1)))
            r[m.group(1)] = float(m.group(3))
        else:
            r["packets"] = int(m.group(5))
    return rows

scrapes = []
for line in rd("scrapes").split("\n"):
    if not line:
        continue
    n, c, live, ts = line.split()
    text = rd("scrape-%s.prom" % n)
    scrapes.append({"n": int(n), "c": int(c), "live": int(live), "ts": float(ts),
                    "text": text, "rows": prom_rows(text, "scrape-%s" % n)})
ta = [float(x) for x in rd("traffic-a").split()]
tb = [float(x) for x in rd("traffic-b").split()]

def tc_read(name):
    t0, t1 = (float(x) for x in rd("tc-%s.t" % name).split())
    rows = {}
    for tgt in ("d17-egress", "d17m-egress"):
        for e in json.loads(rd("tc-%s-%s.json" % (name, tgt))):
            for a in (e.get("options") or {}).get("actions", []):
                rows[a.get("cookie", "")] = dict({k: a[k] for k in TM if k in a},
                                                 packets=a.get("stats", {}).get("packets"))
    return t0, t1, rows

bad = []
def agree_tc(what, got, tc, worst):
    """got (tcexporter's rows) against tc's read (t0, t1, rows): each time tc
    prints, none that it does not."""
    t0, t1, want = tc
    if sorted(want) != sorted(ROWS):
        bad.append("%s: tc lists the cookies %r, want %r" % (what, sorted(want), sorted(ROWS)))
        return
    for ck in ROWS:
        g, w = got.get(ck, {}), want[ck]
        for k in TM:
            if (k in g) != (k in w):
                bad.append("%s %s: %s is %r in tcexporter, %r in tc" % (what, ck, k, g.get(k), w.get(k)))
                continue
            if k not in g:
                continue
            off = g[k] - (t0 - w[k])
            worst[0] = min(worst[0], off)
            worst[1] = max(worst[1], off - (t1 - t0))
            worst[2] += 1
            if not -1 - LO <= off <= t1 - t0 + HI:
                bad.append("%s %s: %s %.3f, tc's age %d s read in [%.3f, %.3f]: %.3f s off" % (
                    what, ck, k, g[k], w[k], t0, t1, off))

def same_as(what, got, ref, tol, worst=None):
    for ck in ROWS:
        g, r = got.get(ck, {}), ref.get(ck, {})
        for k in TM:
            if (k in g) != (k in r):
                bad.append("%s %s: %s %r, want %r" % (what, ck, k, g.get(k), r.get(k)))
            elif k in g:
                if worst is not None:
                    worst[0] = max(worst[0], abs(g[k] - r[k]))
                if abs(g[k] - r[k]) > tol:
                    bad.append("%s %s: %s %.3f, want %.3f (+-%g)" % (what, ck, k, g[k], r[k], tol))

live = [s for s in scrapes if s["live"]]
pre = [s for s in scrapes if s["ts"] < ta[0]]
after = [s for s in live if s["ts"] > tb[1]]
if not live or scrapes[0] is not live[0]:
    sys.exit("the first collection scraped is no liveness pass: %r" % [(s["c"], s["live"]) for s in scrapes])
if not after:
    sys.exit("no liveness pass after the traffic")
L3 = after[0]
L2 = [s for s in live if s["ts"] < ta[0]][-1]
where = lambda s: "scrape %d (collection %d, %s)" % (s["n"], s["c"], "liveness pass" if s["live"] else "kept")

if mode == "pre":
    # (a) before the traffic: every row has installed = last_used and no
    # first_used, as tc says
    worst = [99.0, -99.0, 0]
    tc = tc_read("pre")
    for s in pre:
        for ck in ROWS:
            r = s["rows"].get(ck, {})
            if "installed" not in r or "last_used" not in r or "first_used" in r or r["installed"] != r["last_used"]:
                bad.append("%s %s: %r: want installed = last_used, no first_used" % (where(s), ck, r))
        agree_tc(where(s), s["rows"], tc, worst)
    print("%d collections before the traffic (%d liveness passes), 4 rows each; %d times against tc's: "
          "T - (t0 - A) from %.3f s to t1 - t0 %+.3f s (t1 - t0 = %.3f s)" % (
              len(pre), sum(s["live"] for s in pre), worst[2], worst[0], worst[1], tc[1] - tc[0]))
    if len(pre) < 4 or sum(s["live"] for s in pre) < 2:
        bad.append("%d collections before the traffic, %d liveness passes: want 4 and 2" % (
            len(pre), sum(s["live"] for s in pre)))
elif mode == "kept":
    # (b) a collection that is no liveness pass gives each flower row the
    # times of the last liveness pass, to the millisecond, even after the
    # traffic moved its counters (the kernel's times are then newer)
    n = {"before": 0, "after traffic": 0, "after": 0}
    for s in scrapes:
        if s["live"]:
            continue
        prev = [l for l in live if l["c"] < s["c"]]
        if not prev:
            bad.append("%s: no liveness pass scraped before it" % where(s))
            continue
        L = prev[-1]
        between = set(range(L["c"] + 1, s["c"])) - {x["c"] for x in scrapes}
        if between and s["ts"] - L["ts"] >= LIVENESS_GAP:
            continue  # an unscraped liveness pass may lie between
        for ck in FLOWER:
            g, r = ({k: x[k] for k in TM if k in x} for x in (s["rows"].get(ck, {}), L["rows"].get(ck, {})))
            if not g or g != r:
                bad.append("%s %s: %r, want those of collection %d: %r" % (where(s), ck, g, L["c"], r))
        if s["ts"] < ta[0]:
            n["before"] += 1
        elif L is L2 and s["ts"] > tb[1]:
            n["after traffic"] += 1
            if s["rows"].get("17a1", {}).get("packets") != 3:
                bad.append("%s: 17a1 %r: want 3 packets" % (where(s), s["rows"].get("17a1")))
        elif L is L3:
            n["after"] += 1
    print("collections that kept the last liveness pass's flower times: %s" % (
        ", ".join("%d %s" % (v, k) for k, v in n.items())))
    if n["before"] < 2 or n["after traffic"] < 1 or n["after"] < 1:
        bad.append("want at least 2 before the traffic, 1 after it (counters moved, times kept) "
                   "and 1 after the liveness pass that followed")
elif mode == "traffic":
    # (c) the liveness pass after the traffic: first_used and a later
    # last_used on the two rules it went through, as sent and as tc says;
    # nothing on the others
    g = L3["rows"]
    for ck in ROWS:
        r = g.get(ck, {})
        if abs(r.get("installed", 0) - L2["rows"][ck]["installed"]) > SAME:
            bad.append("%s %s: installed %r, %r at collection %d" % (
                where(L3), ck, r.get("installed"), L2["rows"][ck]["installed"], L2["c"]))
        if ck in USED:
            fu, lu = r.get("first_used"), r.get("last_used")
            if r.get("packets") != 3 or fu is None or lu is None:
                bad.append("%s %s: %r: want 3 packets, first and last use" % (where(L3), ck, r))
                continue
            if not ta[0] - LO <= fu <= ta[1] + HI:
                bad.append("%s %s: first_used %.3f, the first datagram sent in [%.3f, %.3f]" % (
                    where(L3), ck, fu, ta[0], ta[1]))
            if not tb[0] - LO <= lu <= tb[1] + HI or lu <= L2["rows"][ck]["last_used"]:
                bad.append("%s %s: last_used %.3f (%.3f before), the last datagram sent in [%.3f, %.3f]" % (
                    where(L3), ck, lu, L2["rows"][ck]["last_used"], tb[0], tb[1]))
            print("%s: first_used %+.3f s from the clock read before the first datagram (read again "
                  "%.3f s later), last_used %+.3f s from that before the last (%.3f s)" % (
                      ck, fu - ta[0], ta[1] - ta[0], lu - tb[0], tb[1] - tb[0]))
        elif r.get("packets") != 0 or "first_used" in r or r.get("last_used") != r.get("installed"):
            bad.append("%s %s: %r: want 0 packets, no first_used, last_used = installed" % (where(L3), ck, r))
    worst = [99.0, -99.0, 0]
    tc = tc_read("post")
    agree_tc(where(L3), g, tc, worst)
    print("collection %d (a liveness pass %.3f s after the traffic), %d times against tc's after it: "
          "T - (t0 - A) from %.3f s to t1 - t0 %+.3f s (t1 - t0 = %.3f s)" % (
              L3["c"], L3["ts"] - tb[1], worst[2], worst[0], worst[1], tc[1] - tc[0]))
elif mode == "matchall":
    # (d) the matchall row (terse+repair: dumped in full in every
    # collection) has its times in every collection, new ones as soon as
    # the traffic is over, liveness pass or not
    n = 0
    for s in scrapes:
        r = s["rows"].get(MALL, {})
        if "installed" not in r or "last_used" not in r:
            bad.append("%s: %s has no times: %r" % (where(s), MALL, r))
        elif s["ts"] > tb[1]:
            n += not s["live"]
            if not (ta[0] - LO <= r.get("first_used", 0) <= ta[1] + HI and tb[0] - LO <= r["last_used"] <= tb[1] + HI):
                bad.append("%s: %s %r: want first_used in [%.3f, %.3f], last_used in [%.3f, %.3f]" % (
                    where(s), MALL, r, ta[0], ta[1], tb[0], tb[1]))
    print("%d collections with the matchall's times, %d after the traffic that were no liveness pass" % (len(scrapes), n))
    if n < 1:
        bad.append("no collection after the traffic that was no liveness pass")
elif mode == "meta":
    # every collection: d17 terse, d17m terse+repair, modes kept in
    # liveness passes; a liveness pass dumps a target found terse before in
    # full alone, and the first terse then in full (it knows no mode yet);
    # other collections dump both terse, d17m's matchall pref again in full
    for s in scrapes:
        first = s is scrapes[0] and s["c"] == 1
        terse = 1 if first or not s["live"] else 0
        for dev, md in (("d17", "terse"), ("d17m", "terse+repair")):
            full = 1 if s["live"] or dev == "d17m" else 0
            sel = 'device="%s",parent="egress"' % dev
            for l in ("tc_scrape_collector_success{%s} 1" % sel,
                      'tc_scrape_collector_mode_info{%s,mode="%s"} 1' % (sel, md),
                      'tc_scrape_collector_dump_requests{%s,type="terse"} %d' % (sel, terse),
                      'tc_scrape_collector_dump_requests{%s,type="full"} %d' % (sel, full)):
                if l not in s["text"].split("\n"):
                    bad.append("%s: missing %s" % (where(s), l))
    print("%d collections: modes and dump requests" % len(scrapes))
elif mode == "once":
    # --once --format json: every pass a liveness pass; its times are the
    # daemon's and tc's, before and after the traffic
    for name, ref in (("pre", scrapes[0]), ("post", L3)):
        got = {}
        for o in map(json.loads, rd("once-%s.json" % name).split("\n")[:-1]):
            if o["type"] == "action":
                got[o["cookie"]] = {k: o[k] for k in TM if o.get(k) is not None}
        worst, dif = [99.0, -99.0, 0], [0.0]
        same_as("once-%s.json" % name, got, ref["rows"], SAME, dif)
        tc = tc_read(name)
        agree_tc("once-%s.json" % name, got, tc, worst)
        print("once-%s.json: %d rows, at most %.3f s from collection %d's times; %d times against "
              "tc's: T - (t0 - A) from %.3f s to t1 - t0 %+.3f s" % (
                  name, len(got), dif[0], ref["c"], worst[2], worst[0], worst[1]))
        if sorted(got) != sorted(ROWS):
            bad.append("once-%s.json: rows %r" % (name, sorted(got)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c17_liveness: the daemon ran and stopped with status 0, --once with it" liveness_daemon
check "c17_liveness: before traffic, every row's install and last use = tc's, no first use" liveness pre
check "c17_liveness: collections between liveness passes keep the flower rows' times, to the ms" liveness kept
check "c17_liveness: after the traffic's liveness pass, first and last use as sent and as tc says" liveness traffic
check "c17_liveness: the matchall row (terse+repair) has its times in every collection, fresh ones" liveness matchall
check "c17_liveness: d17 terse with a full dump in liveness passes, d17m terse+repair" liveness meta
check "c17_liveness: --once --format json gives the daemon's and tc's times" liveness once

note "18. action times over SNMP, a row without times (issue 25)"
# The walk and /metrics of one pass agree on every time (snmpcmp.py
# check-times): 18a1 used, 18b1 never used (true(1)), both with the times
# of the first (liveness) pass; 18c1, added after it, has no times in
# either: no instance in the times' columns of the walk, and a GET of them
# answers noSuchInstance while its discontinuity time is there.
snmp_times() {
	local d=$share/c18_snmp_times n
	daemon_ended "$d/s.tcx" || return 1
	"$PYTHON" "$here/../snmp/snmpcmp.py" check-times --walk "$d/s.walk" --metrics "$d/s.prom" \
		--used 18a1 --unused 18b1 --no-times 18c1 || return 1
	cat "$d/s.get-c"
	n=$(grep -c ' = No Such Instance currently exists at this OID$' "$d/s.get-c" || true)
	{ grep -qE '^\.[0-9.]+\.1\.2\.1\.21\.[0-9]+ = Timeticks: ' "$d/s.get-c" && [ "$n" = 3 ]; } || {
		echo "GET of 18c1's row: expected its discontinuity time and noSuchInstance in columns 22 to 24"
		return 1
	}
}
check "c18_snmp_times: the times' columns = /metrics of the same pass; a row without times has no instance in them" \
	snmp_times

note "19. Open vSwitch's flows offloaded to TC: each flow's last use = OVS's"
# c19_ovs's two `ovs-appctl dpctl/dump-flows -m type=tc` (flows-N.txt, the
# wall clock t0 and t1 around each in flows-N.t) around tcexporter --once
# (r.json.out, r.prom.out). OVS gives every TC action of a flow the flow's
# ufid as cookie (lib/netdev-offload-tc.c: act_cookie = ufid, 16 bytes, as
# in memory: the four 32-bit words that "ufid:" prints as a UUID, each
# little-endian). OVS prints a flow's last use as an age ("used:0.530s",
# the latest lastuse of its actions, to the kernel's 10 ms) as of its dump,
# or "used:never" when TC never matched it (lastuse = install): its last
# use is t0 - AGE, give or take t1 - t0. tcexporter's
# tc_action_last_used_timestamp_seconds (and the JSON's last_used) of the
# flow's actions, their latest, must agree within 1 s; a flow OVS says
# never used must have no first use in tcexporter. tcexporter labels each
# row with its cookie as a ufid (decoder uuid, layout ovs): the flow's.
ovs_ran() {
	local d=$share/c19_ovs f
	for f in ovs-vswitchd.log arping.txt ping-1.txt ping-2.txt flows-1.txt flows-2.txt; do
		[ -f "$d/$f" ] || { echo "$f missing: the case did not get that far (its log is above)"; return 1; }
	done
	if ! grep -q 'netdev: Flow API Enabled' "$d/ovs-vswitchd.log" ||
		! grep -q "tc: Using policy 'skip_hw'" "$d/ovs-vswitchd.log"; then
		grep -v '|DBG|' "$d/ovs-vswitchd.log" | tail -n 30
		echo "ovs-vswitchd did not log 'netdev: Flow API Enabled' and 'tc: Using policy 'skip_hw''"
		return 1
	fi
	grep -q 'Received 1 response' "$d/arping.txt" || {
		cat "$d/arping.txt"
		echo "arping.txt: the ARP request through br19 had no answer"
		return 1
	}
	for f in ping-1.txt ping-2.txt; do
		grep -q '3 packets transmitted, 3 packets received' "$d/$f" || {
			cat "$d/$f"
			echo "$f: the pings through br19 did not all come back"
			return 1
		}
	done
	if grep -E '\|(ERR|EMER)\|' "$d/ovs-vswitchd.log"; then
		echo "ovs-vswitchd logged errors"
		return 1
	fi
	grep -E '\|WARN\|' "$d/ovs-vswitchd.log" | sed 's/^/(warning) /' || true
	echo "OVS $(sed -n 's/.*ovs-vswitchd (Open vSwitch) \([0-9.]*\).*/\1/p' "$d/ovs-vswitchd.log" | head -n 1): flow API enabled, policy skip_hw; an arping and 6 pings answered"
}
ovs_flows() {
	"$PYTHON" - "$share/c19_ovs" "$1" <<'PY'
import json, os, re, struct, sys
d, mode = sys.argv[1], sys.argv[2]
TOL = 1.0  # the issue's: OVS's age against tcexporter's time

def rd(name):
    try:
        return open(os.path.join(d, name)).read()
    except OSError as e:
        sys.exit("%s (the case did not get that far: its log is above)" % e)

def cookie_of(ufid):
    """The TC cookie OVS gives a flow: its ufid's 16 bytes as in memory."""
    g = ufid.split("-")
    words = (int(g[0], 16), int(g[1] + g[2], 16), int(g[3] + g[4][:4], 16), int(g[4][4:], 16))
    return struct.pack("<4I", *words).hex()

def flows(n):
    t0, t1 = (float(x) for x in rd("flows-%d.t" % n).split())
    out = {}
    for line in rd("flows-%d.txt" % n).splitlines():
        m = re.match(r"ufid:([0-9a-f-]{36}), (.*), packets:(\d+), bytes:\d+, used:(never|[0-9.]+s),(.*)$", line)
        if not m:
            sys.exit("flows-%d.txt: not a flow with a ufid: %r" % (n, line))
        if " dp:tc" not in m.group(5):
            sys.exit("flows-%d.txt: a flow not in TC: %r" % (n, line))
        used = None if m.group(4) == "never" else float(m.group(4)[:-1])
        out[cookie_of(m.group(1))] = {"ufid": m.group(1), "key": m.group(2), "packets": int(m.group(3)),
                                       "used": used, "line": line}
    return t0, t1, out

def tc_cookies():
    """cookie -> [(device, pref, handle, action kinds)] of tc's filters;
    the kinds of the actions without a cookie."""
    out, bare = {}, []
    for dev in ("p19a", "p19b"):
        for e in json.loads(rd("tc-%s.json" % dev)):
            o = e.get("options") or {}
            if o.get("actions") is None:
                continue
            cks = {a["cookie"] for a in o["actions"] if a.get("cookie")}
            bare += [a["kind"] for a in o["actions"] if not a.get("cookie")]
            if len(cks) != 1:
                sys.exit("tc: %s pref %s: its actions' cookies %r, want one" % (dev, e.get("pref"), cks))
            out.setdefault(cks.pop(), []).append((dev, e["pref"], o.get("handle"), [a["kind"] for a in o["actions"]]))
    return out, bare

FILTER = ("device", "parent", "chain", "pref", "kind", "handle")
def by_cookie(rows):
    """cookie -> the rows of the filter whose actions carry it (OVS's cookie
    is on its output, goto, ct and drop actions, not on the skbedit,
    vlan, pedit... before them: the filter's rows are all of the flow's)."""
    filt = {}
    for r in rows:
        filt.setdefault(tuple(r["id"][k] for k in FILTER), []).append(r)
    out = {}
    for f in filt.values():
        for ck in {r["id"]["cookie"] for r in f if r["id"]["cookie"]}:
            out.setdefault(ck, []).extend(f)
    return out

def json_rows():
    rows = []
    for line in rd("r.json.out").splitlines():
        o = json.loads(line)
        if o["type"] == "action":
            r = {k: o[k] for k in ("installed", "first_used", "last_used") if o.get(k) is not None}
            r["id"] = {k: str(o[k]) for k in FILTER + ("cookie",)}
            r["id"]["ufid"] = o.get("labels", {}).get("ufid", "")
            rows.append(r)
    return by_cookie(rows)

def prom_rows():
    rows = {}
    for m in re.finditer(r'^tc_action_(installed|first_used|last_used)_timestamp_seconds\{([^}]*)\} (\S+)$',
                         rd("r.prom.out"), re.M):
        r = rows.setdefault(m.group(2), {"id": dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))})
        r["id"].setdefault("cookie", "")
        r["id"].setdefault("ufid", "")
        r[m.group(1)] = float(m.group(3))
    return by_cookie(rows.values())

bad = []
f1, f2 = flows(1), flows(2)
if mode == "cookies":
    # every flow OVS lists in TC has one filter whose actions carry its
    # ufid as cookie, and every filter on the ports is one of those flows;
    # the two dumps list the same flows with the same packets
    tc, bare = tc_cookies()
    for ck, f in f1[2].items():
        if len(tc.get(ck, [])) != 1:
            bad.append("ufid %s (cookie %s): tc filters %r, want one" % (f["ufid"], ck, tc.get(ck)))
    for ck in tc:
        if ck not in f1[2]:
            bad.append("a tc filter with cookie %s %r: no flow of OVS has that ufid" % (ck, tc[ck]))
    if {c: f["packets"] for c, f in f1[2].items()} != {c: f["packets"] for c, f in f2[2].items()}:
        bad.append("the flows or their packets changed between the two dumps:\n%s\n%s" % (
            rd("flows-1.txt"), rd("flows-2.txt")))
    used = [f for f in f1[2].values() if f["used"] is not None]
    never = [f for f in f1[2].values() if f["used"] is None]
    for f in f1[2].values():
        k = " ".join(re.findall(r"(?:in_port|eth|eth_type)\([^)]*\)", f["key"]))
        print("  %s %s packets:%d used:%s" % (f["ufid"], k, f["packets"],
                                              "never" if f["used"] is None else "%.3fs" % f["used"]))
    print("%d flows in TC (%d used, %d never), each one filter with its ufid as cookie: %d actions, "
          "%d without a cookie (%s)" % (len(f1[2]), len(used), len(never),
                                        sum(len(k) for v in tc.values() for (_, _, _, k) in v),
                                        len(bare), " ".join(sorted(set(bare))) or "none"))
    if len(used) < 2 or not never:
        bad.append("want the two ICMP flows used in TC and a flow (ARP) never used")
else:
    # each flow's last use (the latest of its actions') against OVS's, both
    # dumps, and a never-used flow without a first use
    rows = json_rows() if mode == "json" else prom_rows()
    lo, hi, n, nn = 99.0, -99.0, 0, 0
    for t0, t1, fl in (f1, f2):
        for ck, f in fl.items():
            # tcexporter's uuid decoder (layout ovs) prints the cookie as OVS its ufid
            lab = {x["id"]["ufid"] for x in rows.get(ck, []) if x["id"]["cookie"]}
            if lab != {f["ufid"]}:
                bad.append("%s: the rows of cookie %s are labelled ufid %r" % (f["ufid"], ck, sorted(lab)))
            r = [{k: v for k, v in x.items() if k != "id"} for x in rows.get(ck, [])]
            if not r or any("installed" not in x or "last_used" not in x for x in r):
                bad.append("%s (ufid %s): rows %r, want each with its install and last use" % (ck, f["ufid"], r))
                continue
            if f["used"] is None:
                if any("first_used" in x or x["last_used"] != x["installed"] for x in r):
                    bad.append("%s: OVS says used:never, tcexporter %r" % (f["ufid"], r))
                nn += 1
                continue
            last = max(x["last_used"] for x in r)
            off = last - (t0 - f["used"])
            lo, hi, n = min(lo, off), max(hi, off - (t1 - t0)), n + 1
            if not -TOL <= off <= t1 - t0 + TOL or any("first_used" not in x for x in r):
                bad.append("%s: last use %.3f, OVS's used:%.3fs between %.3f and %.3f: %.3f s off; rows %r" % (
                    f["ufid"], last, f["used"], t0, t1, off, r))
    print("%s: %d last uses of flows against OVS's ages: T - (t0 - AGE) from %.3f s to t1 - t0 %+.3f s "
          "(both dumps; dpctl took %.3f s and %.3f s); %d never used, without a first use" % (
              mode, n, lo, hi, f1[1] - f1[0], f2[1] - f2[0], nn))
    if not n:
        bad.append("no flow with a last use to compare")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c19_ovs: OVS ran in the VM with TC offload (skip_hw) and switched the pings" ovs_ran
check "c19_ovs: each OVS flow in TC is one filter whose actions' cookie is its ufid" ovs_flows cookies
check "c19_ovs: each flow's last use in tcexporter's JSON = OVS's used: within 1 s, its ufid label OVS's" ovs_flows json
check "c19_ovs: each flow's tc_action_last_used_timestamp_seconds = OVS's used: within 1 s, its ufid label OVS's" ovs_flows prom
check "c19_ovs/r: tcexporter json exit 0" run_ok c19_ovs r json 0
check "c19_ovs/r: tcexporter prom exit 0" run_ok c19_ovs r prom 0

note "20. LibreQoS-sized: mq, an HTB tree per tx queue, 2,000 cake diffserv4 leaves, xstats chosen"
c20=$share/c20_libreqos
c20_choice=(--xstats cake:tin_sent_bytes,tin_dropped_packets,tin_ecn_marked_packets,tin_avg_delay_seconds
	--xstats htb:)
# c20_traffic: each tree's first leaf, Q:3, sent its Q + 4 datagrams of
# 100 * Q bytes on its own tx queue, in its tin (tc's view; the u32 filter's
# skbedit and pedit worked), and no other leaf sent any.
c20_traffic() {
	"$PYTHON" - "$c20/post/qdisc.json" <<'PY'
import json, sys
bad, leaves = [], 0
for r in json.load(open(sys.argv[1])):
    if r.get("kind") != "cake":
        continue
    leaves += 1
    q, _c, minor = r["parent"].partition(":")
    sent = [t.get("sent_packets", 0) for t in r.get("tins", [])]
    if minor == "3":
        want = [0, 0, 0, 0]
        want[int(q) - 1] = int(q) + 4
        if sent != want or r["packets"] != int(q) + 4:
            bad.append("cake %s on %s: tins sent %r packets (of %d), expected %r" % (
                r["handle"], r["parent"], sent, r["packets"], want))
    elif r["packets"]:
        bad.append("cake %s on %s sent %d packets, expected none" % (r["handle"], r["parent"],
                                                                   r["packets"]))
if leaves != 2000:
    bad.append("%d cake leaves, expected 2000" % leaves)
print("\n".join(bad) if bad else "2000 cake leaves; Q:3 of each tree sent Q + 4 in tin Q - 1")
sys.exit(1 if bad else 0)
PY
}
# c20_series FILE PER_LEAF PER_QUEUE: the series of the exposition FILE by
# family, and how many belong to each leaf (its HTB class Q:3 .. Q:1f6 and
# the cake qdisc under it), to each of the 4 trees (HTB qdisc Q:, its top
# class Q:1, mq's class 7fff:Q) and to the rest: a leaf must have PER_LEAF,
# a tree PER_QUEUE (README.md's LibreQoS recipe says how they add up). With
# the recipe (PER_LEAF 41), the cake tin families are the four chosen, 4
# tins of each of the 2,000 leaves, and there is no HTB field.
c20_series() {
	"$PYTHON" - "$@" <<'PY'
import collections, re, sys
path, per_leaf, per_queue = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fam = collections.Counter()
leaf_fam = collections.Counter()
part = collections.Counter()
lab_re = re.compile(r'(\w+)="([^"]*)"')
for line in open(path):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?", line)
    name, lab = m.group(1), dict(lab_re.findall(m.group(2) or ""))
    fam[name] += 1
    where = "rest"
    if lab.get("device") == "m20":
        h, p = lab.get("handle", ""), lab.get("parent", "")
        for x in (h if name.startswith("tc_class_") else p, ):
            q, _c, minor = x.partition(":")
            if q in "1234" and q and re.fullmatch(r"[0-9a-f]+", minor) and \
                    3 <= int(minor, 16) < 503:
                where = "leaf"
        if where == "rest" and (re.fullmatch(r"[1-4]:1?", h) or re.fullmatch(r"7fff:[1-4]", h)):
            where = "queue"
    part[where] += 1
    if where == "leaf":
        leaf_fam[name] += 1
total = sum(fam.values())
print("%s: %d series in all, of %d families: %d of the 2,000 leaves (%.2f each), "
      "%d of the 4 trees (%.2f each), %d the rest" % (
          path.rsplit("/", 1)[-1], total, len(fam), part["leaf"], part["leaf"] / 2000,
          part["queue"], part["queue"] / 4, part["rest"]))
print("  a leaf's: " + ", ".join("%s %g" % (f, n / 2000) for f, n in sorted(leaf_fam.items())))
bad = []
if part["leaf"] != 2000 * per_leaf:
    bad.append("the leaves have %d series, expected 2,000 x %d" % (part["leaf"], per_leaf))
if part["queue"] != 4 * per_queue:
    bad.append("the trees have %d series, expected 4 x %d" % (part["queue"], per_queue))
if per_leaf == 41:  # the recipe
    tin = {f: n for f, n in fam.items() if f.startswith("tc_qdisc_cake_tin_")}
    want = {"tc_qdisc_cake_tin_%s" % f: 8000 for f in (
        "sent_bytes_total", "dropped_packets_total", "ecn_marked_packets_total",
        "avg_delay_seconds")}
    if tin != want:
        bad.append("cake's tin series %r, expected %r" % (tin, want))
    htb = [f for f in fam if re.fullmatch(
        r"tc_class_htb_((lends|borrows|giants)_total|c?tokens_seconds)", f)]
    if htb:
        bad.append("HTB fields with htb: none: %s" % ", ".join(htb))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c20_libreqos: the tree (2,000 leaves): MemAvailable before and after, seconds of tc -batch" \
	cat "$c20/mem" "$c20/batch.s"
check "c20_libreqos: tc before = tc after" "$PYTHON" "$compare_q" same "$c20/pre" "$c20/post"
check "c20_libreqos: the traffic went where the filters sent it" c20_traffic
for f in json prom; do
	check "c20_libreqos/r: tcexporter $f exit 0" run_ok c20_libreqos r "$f" 0
	check "c20_libreqos/r: $f = tc, the chosen cake fields only, no HTB field" "$PYTHON" \
		"$compare_q" "$f" --tc "$c20/post" --exporter "$c20/r.$f.out" --expect-tins 4 \
		--class-kinds mq,htb --expect-classes 2008 --require qdisc:cake:tin.sent_bytes \
		--require qdisc:mq:packets --require class:htb:packets "${c20_choice[@]}"
done
check "c20_libreqos: the series of the LibreQoS recipe: 41 a leaf, 34 a tree" c20_series \
	"$c20/r.prom.out" 41 34
check "c20_libreqos/d: tcexporter prom exit 0" run_ok c20_libreqos d prom 0
check "c20_libreqos: the series with every field: 118 a leaf, 39 a tree" c20_series \
	"$c20/d.prom.out" 118 39

note "21. Open vSwitch at scale: aggregates = what TC took, notifications lost counted and marked"
# c21_ovs_scale (cases.sh): two daemons, t1 (notification buffer 4 MiB) and
# t2 (notify_buffer_kib: 4), scraped about every second while OVS's flows
# come and go. ovs_scale MODE:
#   ran: OVS offloaded (flow API, skip_hw), pktgen sent every round, the
#     daemons stopped with 0; the figures: flows at most (the daemon's
#     tc_scrape_collector_filters of p21a, OVS's upcall/show), rounds.
#   exact: from base to end, t1's aggregate of p21a (tc_action_packets_total,
#     by device) grew by what p21a received (/proc/net/dev) minus what
#     reached OVS's datapath (dpctl/show lookups hit + missed: upcalls, and
#     flows not in TC), to the packet; p21b received nothing and its
#     aggregate did not move.
#   monotonic: no aggregate of t1 or t2 went down or vanished between two
#     scrapes.
#   t1: tc_exporter_notifications_lost_total 0 in every scrape, every
#     target's tc_scrape_collector_finals_lost 0.
#   t2: some lost, every target of the namespace marked with the count (one
#     namespace: each target's finals_lost = the total), and its aggregate
#     of p21a no more than t1's (a lower bound).
ovs_scale() {
	local d=$share/c21_ovs_scale
	if [ "$1" = ran ]; then
		daemon_ended "$d/t1" || return 1
		daemon_ended "$d/t2" || return 1
		if ! grep -q 'netdev: Flow API Enabled' "$d/ovs-vswitchd.log" ||
			! grep -q "tc: Using policy 'skip_hw'" "$d/ovs-vswitchd.log"; then
			grep -v '|DBG|' "$d/ovs-vswitchd.log" | tail -n 30
			echo "ovs-vswitchd did not log 'netdev: Flow API Enabled' and 'tc: Using policy 'skip_hw''"
			return 1
		fi
		grep -E '\|WARN\|' "$d/ovs-vswitchd.log" | sed 's/^/(warning) /' | tail -n 5 || true
	fi
	"$PYTHON" - "$d" "$1" <<'PY'
import glob, os, re, sys
d, mode = sys.argv[1], sys.argv[2]
bad = []
def read(name):
    return open(os.path.join(d, name)).read()
def scrapes(t):
    files = sorted(glob.glob(os.path.join(d, t + "-[0-9]*.prom")),
                   key=lambda p: int(re.search(r"-(\d+)\.prom$", p).group(1)))
    files.insert(1, os.path.join(d, t + "-base.prom"))
    files.append(os.path.join(d, t + "-final.prom"))
    return [(os.path.basename(p), open(p).read()) for p in files]
def aggs(text):
    return {(m.group(1), m.group(2)): int(m.group(3)) for m in re.finditer(
        r'^(tc_action_\w+_total)\{device="([^"]*)"\} (\d+)$', text, re.M)}
def per_target(fam, text):
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r'^' + fam + r'\{device="([^"]*)",parent="ingress"\} (\d+)$', text, re.M)}
def scalar(fam, text):
    m = re.search(r'^' + fam + r' (\d+)$', text, re.M)
    return int(m.group(1)) if m else None
def netdev(name):  # {dev: (rx_packets, rx_dropped, tx_packets, tx_dropped)}
    out = {}
    for line in read(name).splitlines()[2:]:
        dev, f = line.split(":", 1)
        f = f.split()
        out[dev.strip()] = (int(f[1]), int(f[3]), int(f[9]), int(f[11]))
    return out
def lookups(name):
    m = re.search(r"lookups: hit:(\d+) missed:(\d+) lost:(\d+)", read(name))
    return tuple(int(x) for x in m.groups())
def upcall_max(name):
    m = re.search(r"flows\s*:\s*\(current (\d+)\) \(avg (\d+)\) \(max (\d+)\) \(limit (\d+)\)",
                  read(name))
    return tuple(int(x) for x in m.groups()) if m else None
pk = "tc_action_packets_total"
if mode == "ran":
    rounds = int(read("rounds"))
    sent = 0
    for r in range(1, rounds + 1):
        rep = read("pktgen-%d.txt" % r)
        m = re.search(r"Result: OK: .*?(\d+)\(c\d+\+d\d+\) usec, (\d+) \(60byte", rep)
        if not m:
            bad.append("pktgen round %d: %s" % (r, rep.strip().splitlines()[-1:]))
            continue
        sent += int(m.group(2))
    most = max(per_target("tc_scrape_collector_filters", t).get("p21a", 0)
               for _, t in scrapes("t1"))
    print("%d rounds, %d frames sent by pktgen; at most %d flows of p21a in TC (t1's scrapes);"
          " OVS upcall/show at the end (current, avg, max, limit): %s" % (
              rounds, sent, most, upcall_max("end.upcall")))
    # OVS lowers its flow limit to 1000 (its floor) once a dump of its
    # flows takes 2 s, as it can under TCG: the first round has them all
    if most < 1000:
        bad.append("at most %d flows in TC on p21a: far from the 2,000 asked for" % most)
elif mode == "exact":
    b, e = netdev("base.netdev"), netdev("end.netdev")
    ba, ea = netdev("base.netdev-a"), netdev("end.netdev-a")
    lb, le = lookups("base.dpctl"), lookups("end.dpctl")
    rx = {dev: e[dev][0] - b[dev][0] for dev in ("p21a", "p21b")}
    hit, missed, lost = (y - x for x, y in zip(lb, le))
    a0, a1 = aggs(read("t1-base.prom")), aggs(read("t1-final.prom"))
    got = {dev: a1.get((pk, dev), 0) - a0.get((pk, dev), 0) for dev in ("p21a", "p21b")}
    want = rx["p21a"] - hit - missed
    print("p21a received %d (h21a sent %d, dropped %d); OVS's datapath: hit %d, missed %d "
          "(upcalls), lost %d; TC took %d; t1's aggregate of p21a grew by %d (%.4f)" % (
              rx["p21a"], ea["h21a"][2] - ba["h21a"][2], ea["h21a"][3] - ba["h21a"][3],
              hit, missed, lost, want, got["p21a"], got["p21a"] / want if want else 0))
    if got["p21a"] != want:
        bad.append("t1's aggregate of p21a grew by %d, TC took %d" % (got["p21a"], want))
    if want <= 0:
        bad.append("TC took no packet: nothing compared")
    if rx["p21b"] or got["p21b"]:
        bad.append("p21b received %d, its aggregate grew by %d: expected 0 and 0" % (
            rx["p21b"], got["p21b"]))
elif mode == "monotonic":
    for t in ("t1", "t2"):
        sc = [(n, aggs(x)) for n, x in scrapes(t)]
        for (pn, prev), (n, cur) in zip(sc, sc[1:]):
            for k, v in prev.items():
                if k not in cur:
                    bad.append("%s: %s vanished (was %d in %s)" % (n, k, v, pn))
                elif cur[k] < v:
                    bad.append("%s: %s went down: %d in %s, %d" % (n, k, v, pn, cur[k]))
        print("%s: %d scrapes, %d series each at the end" % (t, len(sc), len(sc[-1][1])))
elif mode == "t1":
    seen = 0
    for n, x in scrapes("t1"):
        v = scalar("tc_exporter_notifications_lost_total", x)
        fl = per_target("tc_scrape_collector_finals_lost", x)
        seen += "p21a" in fl
        if v != 0 or any(fl.values()):
            bad.append("%s: tc_exporter_notifications_lost_total %s, finals_lost %s: "
                       "expected 0" % (n, v, fl))
    if not seen:
        bad.append("t1: no scrape has tc_scrape_collector_finals_lost of p21a")
    print("t1: no notification lost, no target marked in %d scrapes (p21a's target in %d)" % (
        len(scrapes("t1")), seen))
elif mode == "t2":
    first = None
    for n, x in scrapes("t2"):
        total = scalar("tc_exporter_notifications_lost_total", x)
        fl = per_target("tc_scrape_collector_finals_lost", x)
        if total and first is None:
            first = n
        # one namespace: each target's mark is the total, from the pass
        # that counted the loss on (a target with no filter stays, marked)
        if total and ("p21a" not in fl or any(v != total for v in fl.values())):
            bad.append("%s: %d lost, tc_scrape_collector_finals_lost %s" % (n, total, fl))
    x = read("t2-final.prom")
    total = scalar("tc_exporter_notifications_lost_total", x)
    g1 = aggs(read("t1-final.prom")).get((pk, "p21a"), 0)
    g2 = aggs(x).get((pk, "p21a"), 0)
    print("t2: %s notifications lost (the first in %s); finals_lost at the end %s; aggregate "
          "of p21a %d, t1's %d (%.4f)" % (total, first, per_target(
              "tc_scrape_collector_finals_lost", x), g2, g1, g2 / g1 if g1 else 0))
    if not total:
        bad.append("t2 lost no notification: its buffer was not too small, nothing tested")
    if g2 > g1:
        bad.append("t2's aggregate of p21a (%d) is above t1's (%d)" % (g2, g1))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "c21_ovs_scale: OVS offloaded about 2,000 flows, pktgen sent every round, the daemons stopped with 0" \
	ovs_scale ran
check "c21_ovs_scale: t1's aggregate of p21a = what p21a received minus OVS's datapath lookups (upcalls)" \
	ovs_scale exact
check "c21_ovs_scale: no aggregate of either daemon ever went down" ovs_scale monotonic
check "c21_ovs_scale: t1 (4 MiB) lost no notification, no target marked" ovs_scale t1
check "c21_ovs_scale: t2 (notify_buffer_kib: 4) lost notifications, counted them and marked its targets" \
	ovs_scale t2

end=$(date +%s%N)
echo "kernel $VM_KVER: ${#cases[@]} cases, $n_checks checks, ${#failed[@]} failed," \
	"$(((end - start) / 1000000)) ms in all"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}" >&2
	echo "---- last lines of the VM console:" >&2
	tail -n 20 "$WORK/console.log" >&2 || true
	fail "${#failed[@]} of the checks failed (TCX_KEEP_WORK=1 keeps $WORK)"
fi
echo "PASS: all cases agree with tc on kernel $VM_KVER"
