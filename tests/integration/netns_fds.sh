#!/bin/bash
# `--once` over 300 named namespaces and the open files limit (issue #18,
# point 4), as root, in private mount and network namespaces (a private
# /run/netns). Each namespace costs 2 fds (its /run/netns entry and its
# netlink socket: README.md):
#
#   - soft limit 128, hard 20000: the soft limit is raised to the hard one at
#     start, and every namespace is collected (exit 0, nothing on stderr);
#     main failed 239 of them with "Too many open files";
#   - soft and hard 128: collection stops short of the reserve (a quarter of
#     a limit below 256): the namespaces that do not fit fail with cause
#     resource, counted, in one line on stderr, and the others are
#     collected (exit 1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root -m -n
require_cmd ip tc mount prlimit
in_netns TCX_NETNS_FDS_INSIDE -m -n --propagation private

# ---- inside private mount and network namespaces --------------------------------------
make_workdir
private_netns_dir
N=300
P=tcxo$$-
if ! out=$(many_netns "$P" "$N" 0a01 2>&1); then
	many_netns_del "$P" "$N"
	skip "kernel lacks a feature this test needs (clsact, u32, mirred): $out"
fi
printf 'targets: [{all: true, netns: "%s*"}]\n' "$P" >"$WORK/tcx.yaml"

# count NAME VALUE: the targets with tc_scrape_collector_success VALUE.
count() { grep -c "^tc_scrape_collector_success{.*} $2\$" "$WORK/$1.out" || true; }

note "soft limit 128, hard 20000: raised, all $N namespaces collected"
TCX_WRAP=(prlimit --nofile=128:20000 --)
run_tcx raised --once --config "$WORK/tcx.yaml"
expect_rc raised 0
expect_empty raised err
[ "$(count raised 1)" = "$N" ] || fail "raised: $(count raised 1) of $N targets collected"
[ "$(grep -c '^tc_action_packets_total{.*cookie="0a01"' "$WORK/raised.out")" = "$N" ] ||
	fail "raised: not one row per namespace"

note "soft and hard limit 128: those that do not fit fail with cause resource"
TCX_WRAP=(prlimit --nofile=128:128 --)
run_tcx capped --once --config "$WORK/tcx.yaml"
expect_rc capped 1
ok=$(count capped 1)
n_failed=$(count capped 0)
[ "$((ok + n_failed))" = "$N" ] || fail "capped: $ok + $n_failed targets, expected $N"
# 128 - 32 (the reserve) fds, less those of the process itself.
if [ "$ok" -lt 30 ] || [ "$ok" -ge 48 ]; then
	fail "capped: $ok namespaces collected, expected 30 to 47"
fi
expect_grep capped out -x "tc_exporter_snapshot_errors{cause=\"resource\"} $n_failed"
[ "$(wc -l <"$WORK/capped.err")" = 1 ] || fail "capped: not one line on stderr"
expect_grep capped err -E "^tcexporter: error: $n_failed targets: not opened: its sockets would leave fewer than 32 of the 128 open files \(the soft limit\) free, and those are kept for HTTP and reading /run/netns \(all netns ${P}[0-9]+, all netns ${P}[0-9]+, all netns ${P}[0-9]+ and $((n_failed - 3)) more\)$"

many_netns_del "$P" "$N"
note "netns_fds: all checks passed"
