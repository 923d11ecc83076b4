#!/bin/bash
# net-snmp's tools, with mibs/TCEXPORTER-MIB.txt loaded, display every
# cookie in hexadecimal as tc and /metrics write it (the DISPLAY-HINT "1x" of
# TcxCookie): 0a0b as "0a0b", not as STRING: "\n" followed by a vertical tab;
# a printable cookie (414243) as "414243", not as "ABC"; 16 bytes; none as
# the empty string. Root: a private network namespace and a private snmpd, as
# in walk.sh.
#
# The MIB imports IETF base modules that Debian does not ship; they come from
# TCX_BASE_MIBS (default: mibs/base, vendored), as for
# tests/integration/smilint.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

: "${TCX_SRCDIR:=$(cd "$here/../.." && pwd)}"
mibs=$TCX_SRCDIR/mibs
base=${TCX_BASE_MIBS:-$TCX_SRCDIR/mibs/base}
[ -f "$mibs/TCEXPORTER-MIB.txt" ] || fail "$mibs/TCEXPORTER-MIB.txt is missing"
[ -f "$base/SNMPv2-SMI.txt" ] ||
	skip "no base MIB modules in '$base' (set TCX_BASE_MIBS to a directory with SNMPv2-SMI.txt, SNMPv2-TC.txt, SNMPv2-CONF.txt, SNMP-FRAMEWORK-MIB.txt, IF-MIB.txt, NET-SNMP-MIB.txt)"
snmp_prereqs
in_netns TCX_SNMP_MIB_DISPLAY_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup

note "topology: v0 (clsact), u32 filters with mirred actions and cookies"
veth m0 m0p
veth v0 v0p
tc qdisc add dev v0 clsact || skip "no clsact qdisc in this kernel"
cookies=(0a0b 414243 00112233445566778899aabbccddeeff "")
pref=1
for c in "${cookies[@]}"; do
	tc filter add dev v0 ingress pref "$pref" protocol ip u32 match ip dst "10.6.0.$pref/32" \
		action mirred egress mirror dev m0 ${c:+cookie "$c"} ||
		skip "cannot add a u32 filter with a mirred action"
	pref=$((pref + 1))
done

snmpd_config
HTTP_PORT=$(free_ports 1)
tcx_config "$WORK/tcx.yaml" "$HTTP_PORT" 1s "targets: [{dev: v0, parent: ingress}]"
start_snmpd
wait_snmpd 10
start_tcx_http "$WORK/tcx.yaml"
wait_tcx_rows 15 "${#cookies[@]}" >/dev/null

# The rows' cookies from a walk with octet strings in hex (no MIB), and the
# cookie column as the tools display it with the MIB.
walk "$WORK/walk.txt"
snmpcmp rows --walk "$WORK/walk.txt" | "$PYTHON" -c '
import json, sys
for r in json.load(sys.stdin).values():
    print("%s.14.%d = STRING: %s" % (sys.argv[1], r["index"], r["cookie"]))' "$TCX_ACTION_ENTRY" |
	sort >"$WORK/want.txt"
snmpwalk -v2c -c public -On -t 2 -r 1 -M "$mibs:$base" -m TCEXPORTER-MIB "$SNMPD_AGENT" \
	"$TCX_ACTION_ENTRY.14" >"$WORK/display.txt" 2>"$WORK/display.err" ||
	fail "snmpwalk with the MIB failed: $(cat "$WORK/display.err")"
[ ! -s "$WORK/display.err" ] || fail "snmpwalk with the MIB complained: $(cat "$WORK/display.err")"
# (trailing blanks off: net-snmp ends an empty string's line with one)
sed 's/ *$//' "$WORK/display.txt" | sort >"$WORK/got.txt"
sed -i 's/ *$//' "$WORK/want.txt"
cat "$WORK/got.txt"
[ "$(wc -l <"$WORK/want.txt")" = "${#cookies[@]}" ] || fail "expected ${#cookies[@]} rows in the walk"
diff "$WORK/want.txt" "$WORK/got.txt" >&2 ||
	fail "the cookies are not displayed in hexadecimal with the MIB (diff: expected, got)"
for c in "${cookies[@]}"; do
	grep -q "= STRING:${c:+ $c}\$" "$WORK/got.txt" || fail "no cookie '$c' in the display"
done

tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "mib_display.sh: all checks passed in $(elapsed_ms) ms"
