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

# broken RULE GREP_ARGS...: report every line matching GREP_ARGS as breaking RULE.
broken() {
	local rule=$1 hits
	shift
	hits=$(grep -n "$@" || true)
	if [ -n "$hits" ]; then
		echo "FAIL: $TCX_TEST_NAME: $rule:" >&2
		echo "$hits" | sed 's/^/  /' >&2
		bad=$((bad + 1))
	fi
}

note "autoconf's header is build.h: \"config.h\" is only ever config/config.h"
broken 'includes "config.h" (autoconf'"'"'s header is "build.h"; ours is "config/config.h")' \
	-E '^\s*#\s*include\s+["<]config\.h[">]' "${sources[@]}"

[ "$bad" -eq 0 ] || fail "$bad rule(s) broken"
echo "source rules: ${#sources[@]} files follow them"
