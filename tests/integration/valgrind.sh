#!/bin/bash
# Every unit test, and `tcexporter --once` on real filters, under valgrind:
# no error and no leak.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_BUILDDIR:?}" "${TCX_BIN:?}"
command -v valgrind >/dev/null || skip "valgrind not installed"

vg() {
	valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect,possible \
		--show-leak-kinds=definite,indirect,possible "$@"
}

ran=0
for t in test_parse test_config test_labels test_render test_collect test_expo test_gzip test_webconfig \
	test_snmp_rows; do
	bin="$TCX_BUILDDIR/tests/unit/$t"
	[ -x "$bin" ] || { echo "missing unit test $bin" >&2; exit 1; }
	echo "valgrind $t"
	TCX_SRCDIR="${TCX_SRCDIR:-.}" TCX_VALGRIND=1 vg "$bin" >/dev/null
	ran=$((ran + 1))
done

# The fuzz harnesses over their corpora and regression inputs.
for h in netlink config webconfig negotiate; do
	bin="$TCX_BUILDDIR/tests/fuzz/replay_$h"
	[ -x "$bin" ] || { echo "missing fuzz replay $bin" >&2; exit 1; }
	echo "valgrind replay_$h"
	vg "$bin" "$TCX_SRCDIR/tests/fuzz/corpus/$h" "$TCX_SRCDIR/tests/fuzz/regressions/$h" >/dev/null
	ran=$((ran + 1))
done

if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	unshare -n bash -s "$TCX_BIN" <<'NS'
set -euo pipefail
ip link add q0 type veth peer name q1
ip link set q0 up
tc qdisc add dev q0 clsact
for p in 1 2 3; do
	tc filter add dev q0 ingress pref $p protocol ip u32 match ip dst 10.2.0.$p/32 \
		action mirred egress mirror dev q1 cookie 0$p
done
valgrind -q --error-exitcode=99 --leak-check=full \
	--errors-for-leak-kinds=definite,indirect,possible \
	--show-leak-kinds=definite,indirect,possible "$1" --once >/dev/null
NS
	echo "valgrind tcexporter --once"
	ran=$((ran + 1))
	# The live netlink source's unit test makes a network namespace: root.
	echo "valgrind test_nl"
	TCX_REQUIRE_ROOT=1 vg "$TCX_BUILDDIR/tests/unit/test_nl" >/dev/null
	ran=$((ran + 1))
else
	skip "needs root for the tcexporter --once run (unit tests passed)"
fi
echo "valgrind: $ran programs clean"
