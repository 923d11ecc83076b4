#!/bin/bash
# `promtool check metrics` accepts the text exposition with no findings, on
# real filters whose label values need escaping.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_BIN:?TCX_BIN must point at the tcexporter binary}"
command -v promtool >/dev/null || skip "promtool not installed (apt-get install prometheus)"
[ "$(id -u)" = 0 ] || skip "needs root for a network namespace"
unshare -n true 2>/dev/null || skip "unshare -n does not work here"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# (liveness off: --once would dump in full at once, for the action times)
cat >"$work/tcx.yaml" <<'YAML'
families: {liveness: off}
targets:
  - dev: p0
labels: [tenant, note]
cookies:
  "c0ffee": {tenant: "acme \"east\"", note: "back\\slash and\nnewline"}
  "01": [globex, "r\u00e9gle"]
YAML

unshare -n bash -s "$TCX_BIN" "$work" <<'NS'
set -euo pipefail
bin=$1 work=$2
ip link add p0 type veth peer name p1
ip link set p0 up
ip link set p1 up
tc qdisc add dev p0 clsact
tc filter add dev p0 ingress pref 1 protocol ip u32 match ip dst 10.1.0.1/32 \
	action mirred egress mirror dev p1 cookie c0ffee
tc filter add dev p0 egress pref 2 protocol all u32 match u32 0 0 \
	action mirred egress mirror dev p1 cookie 01 \
	action mirred egress mirror dev p1
"$bin" --once --config "$work/tcx.yaml" >"$work/metrics"
NS

grep -q 'note="back\\\\slash and\\nnewline"' "$work/metrics" ||
	{ echo "escaped label value missing" >&2; exit 1; }
[ "$(grep -c '^tc_action_bytes_total{' "$work/metrics")" = 3 ] ||
	{ echo "expected 3 action rows" >&2; exit 1; }
# u32 has no terse dump: the kernel aborts the terse request with EMSGSIZE in
# NLMSG_DONE (which libmnl alone would take for a clean end), and the
# collector falls back to one full dump per target.
for parent in ingress egress; do
	for want in "tc_scrape_collector_mode_info{device=\"p0\",parent=\"$parent\",mode=\"full\"} 1" \
		"tc_scrape_collector_dump_requests{device=\"p0\",parent=\"$parent\",type=\"terse\"} 1" \
		"tc_scrape_collector_dump_requests{device=\"p0\",parent=\"$parent\",type=\"full\"} 1"; do
		grep -qxF "$want" "$work/metrics" || { echo "missing: $want" >&2; exit 1; }
	done
done
if ! out=$(promtool check metrics <"$work/metrics" 2>&1); then
	echo "promtool check metrics failed:" >&2
	echo "$out" >&2
	exit 1
fi
if [ -n "$out" ]; then
	echo "promtool reported findings:" >&2
	echo "$out" >&2
	exit 1
fi
echo "promtool: no findings on $(wc -l <"$work/metrics") lines"
