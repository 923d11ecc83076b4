#!/bin/bash
# Rules of the source tree that no compiler checks (issue #10's clean-ups):
# each names the rule it checks and every place that breaks it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

srcdir=${TCX_SRCDIR:-$here/../..}
cd "$srcdir"
[ -f config/config.c ] || fail "no source tree at $srcdir (TCX_SRCDIR=${TCX_SRCDIR:-unset})"
mapfile -t sources < <(find agent collectors config tests -name '*.[ch]' | sort)
[ "${#sources[@]}" -gt 0 ] || fail "no C files under $srcdir"
headers=()
for f in "${sources[@]}"; do
	case $f in *.h) headers+=("$f") ;; esac
done
bad=0

# broken RULE HITS: report each line of HITS (grep -n output) as breaking RULE.
broken() {
	[ -n "$2" ] || return 0
	echo "FAIL: $TCX_TEST_NAME: $1:" >&2
	echo "$2" | sed 's/^/  /' >&2
	bad=$((bad + 1))
}

note "autoconf's header is build.h: \"config.h\" is only ever config/config.h"
broken 'includes "config.h" (autoconf'"'"'s header is "build.h"; ours is "config/config.h")' \
	"$(grep -nE '^\s*#\s*include\s+["<]config\.h[">]' "${sources[@]}" || true)"

note "headers define no short lower-case macros (err_at, expect, oom...): tcx_*, and log.h's log_*"
broken 'a lower-case macro in a header, not tcx_* (or log_* in agent/log.h)' \
	"$(grep -nE '^\s*#\s*define\s+[a-z_]' "${headers[@]}" |
		grep -vE '^[^:]+:[0-9]+:\s*#\s*define\s+tcx_' |
		grep -vE '^agent/log\.h:[0-9]+:\s*#\s*define\s+log_' || true)"

note "the clsact parents are defined once: TCX_PARENT_INGRESS/EGRESS (config/config.h)"
broken 'a clsact parent written as a number (use TCX_PARENT_INGRESS/EGRESS)' \
	"$(grep -niE '0x[fF]{7}[23]|\<(TC_)?PARENT_(INGRESS|EGRESS)\>' "${sources[@]}" |
		grep -vE '^config/config\.h:' || true)"

note "a target is described by tcx_describe_target() (collectors/snapshot.c) only"
broken 'a target described by hand (use tcx_describe_target())' \
	"$(grep -nE '"(target )?(dev %s parent %s|block %u)' "${sources[@]}" |
		grep -vE '^(collectors/snapshot\.c|tests/)' || true)"

note "configuration errors are logged by tcx_log_config_error() (agent/log.c) only"
broken 'a config error callback of its own (use tcx_log_config_error())' \
	"$(grep -nE 'log_err\("%s", msg\)' "${sources[@]}" | grep -vE '^agent/log\.c:' || true)"

note "the tests read nothing beside the tree: MIB modules from mibs/base only"
# The scripts of the tests and what runs them, comments left out; not this
# file (it names the patterns), nor the fuzz corpora (data).
mapfile -t scripts < <(find tests -type f \( -name '*.sh' -o -name '*.py' \) -not -path 'tests/unit/source_rules.sh' |
	sort)
scripts+=(tests/run-all Makefile.am configure.ac)
# (A test of the installed package may name /usr/share/snmp/mibs; a MIB
# search path, SMIPATH, MIBDIRS or -M, may not.)
broken 'a path outside the source tree, or a MIB directory of the system (use mibs/base)' \
	"$(grep -nE '\.\./shared|/work/|TCX_BASE_MIBS|(SMIPATH|MIBDIRS|-M ).*/(usr/share|var/lib)/(snmp|mibs)' \
		"${scripts[@]}" | grep -vE '^[^:]+:[0-9]+:\s*#' || true)"

[ "$bad" -eq 0 ] || fail "$bad rule(s) broken"
echo "source rules: ${#sources[@]} files follow them"
