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
mapfile -t sources < <(find agent collectors config lib tests -name '*.[ch]' | sort)
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

note "the layers: config/ and lib/ include nothing of collectors/ or agent/, lib/ nothing of config/"
broken 'an include up the layers (lib below config below collectors and agent)' \
	"$({ grep -nE '^\s*#\s*include\s+"(collectors|agent)/' config/*.[ch] lib/*.[ch]
		grep -nE '^\s*#\s*include\s+"config/' lib/*.[ch]; } || true)"

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

note "no modules depend on each other in a circle, by include or by call"
# A module is a .c with its .h; a .c without a .h of its own belongs to the
# module whose header declares what it defines, a .h without a .c is a module
# of its own (or part of the module it says it is private to). A depends on B
# when a file of A includes B's header, or A's object uses a symbol B's object
# defines (nm of the built objects).
builddir=${TCX_BUILDDIR:-}
if [ -z "$builddir" ] || [ ! -f "$builddir/libtcexporter.a" ]; then
	fail "no libtcexporter.a in TCX_BUILDDIR=${builddir:-unset}: the module check reads the built objects (make check sets it)"
fi
mapfile -t product < <(find agent collectors config lib -name '*.[ch]' | LC_ALL=C sort)
product_h=()
for f in "${product[@]}"; do
	case $f in *.h) product_h+=("$f") ;; esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Product headers without comments, for which of them declares a symbol.
awk '
	FNR == 1 { inc = 0 }
	{ line = $0; out = ""
	  while (line != "") {
		if (inc) { i = index(line, "*/"); if (!i) break
			line = substr(line, i + 2); inc = 0; continue }
		i = index(line, "/*"); j = index(line, "//")
		if (j && (!i || j < i)) { out = out substr(line, 1, j - 1); break }
		if (!i) { out = out line; break }
		out = out substr(line, 1, i - 1) " "; line = substr(line, i + 2); inc = 1
	  }
	  print FILENAME "\t" out }' "${product_h[@]}" >"$work/headers"
# The objects: DEF and USE lines (file, symbol) from nm.
objs=() built=()
for f in "${product[@]}"; do
	case $f in *.c) ;; *) continue ;; esac
	o=$builddir/${f%.c}.o
	[ -f "$o" ] || o=$builddir/$(dirname "$f")/libtcexporter_a-$(basename "${f%.c}").o
	if [ ! -f "$o" ]; then
		note "$f: no object in $builddir (not configured in): its includes only"
		continue
	fi
	[ ! "$f" -nt "$o" ] || fail "$o is older than $f: build first (make)"
	printf '%s\t%s\n' "$o" "$f" >>"$work/objects"
	objs+=("$o") built+=("$(basename "$o")")
done
[ "${#objs[@]}" -gt 0 ] || fail "no object of any product source in $builddir"
nm -P -A "${objs[@]}" | awk -F'\t' '
	NR == FNR { src[$1 ":"] = $2; next }
	{ i = index($0, ": "); f = src[substr($0, 1, i)]; split(substr($0, i + 2), w, " ") }
	w[2] == "U" { print "USE\t" f "\t" w[1]; next }
	w[2] ~ /^[A-TV-Z]$/ { print "DEF\t" f "\t" w[1] }' "$work/objects" - >"$work/nm"
while read -r m; do
	case " ${built[*]} " in *" $m "*) ;; *) fail "libtcexporter.a holds $m, which no product source here made" ;; esac
done < <(ar t "$builddir/libtcexporter.a")
# A header private to a module says so in its comment ("Private to the
# module collectors/collect"): it is part of that module (collectors/pass.h).
module_of_h() {
	local m
	m=$(sed -n 's|.*Private to the module \([A-Za-z0-9_/]*\).*|\1|p' "$1" | head -n 1)
	echo "${m:-${1%.h}}"
}
# Each file's module.
for f in "${product[@]}"; do
	case $f in
	*.h) echo "$f	$(module_of_h "$f")" ;;
	*.c) if [ -f "${f%.c}.h" ]; then echo "$f	${f%.c}"; else
		m=$(awk -F'\t' -v f="$f" -v self="${f%.c}" '
			NR == FNR { if ($1 == "DEF" && $2 == f) sym[$3] = 1; next }
			{ for (s in sym) if ($2 ~ ("(^|[^A-Za-z0-9_])" s "[ \t]*[(;[]") && !seen[$1, s]++)
				n[$1]++ }
			END { best = self; most = 0
			      for (h in n) if (n[h] > most || (n[h] == most && h < best)) { most = n[h]; best = h }
			      print best }' "$work/nm" "$work/headers")
		case $m in *.h) m=$(module_of_h "$m") ;; esac
		echo "$f	$m"
	   fi ;;
	esac
done >"$work/modules"
# The edges: FROM-module TO-module why.
{
	printf '%s\n' "${product[@]}" | awk '
		NR == FNR { ours[$0] = 1; next }
		/^[ \t]*#[ \t]*include[ \t]*"/ { h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h)
			if (h in ours) print "INC\t" FILENAME "\t" h }' - "${product[@]}"
	cat "$work/nm"
} | awk -F'\t' '
	FILENAME == ARGV[1] { mod[$1] = $2; next }
	$1 == "DEF" { def[$3] = $2; next }
	$1 == "INC" { print mod[$2] "\t" mod[$3] "\t" $2 " includes " $3; next }
	$1 == "USE" { use[++n] = $2 "\t" $3 }
	END { for (i = 1; i <= n; i++) { split(use[i], u, "\t")
		if (u[2] in def) print mod[u[1]] "\t" mod[def[u[2]]] "\t" u[1] " uses " u[2] } }
	' "$work/modules" - >"$work/edges"
# The circles: strongly connected components (Tarjan), each printed as a
# circle through all its modules (a closed walk where there is no simple
# one), with why each step depends, and what files make a module where they
# are more than its .c and .h.
circles=$(awk -F'\t' '
	FILENAME == ARGV[1] { files[$2] = files[$2] " " $1; n_files[$2]++
		if ($1 != $2 ".c" && $1 != $2 ".h") odd[$2] = 1; next }
	$1 == $2 { next }
	{ node[$1] = node[$2] = 1
	  if (!(($1, $2) in n_why)) adj[$1] = adj[$1] " " $2
	  n_why[$1, $2]++
	  kind = $3 ~ / includes / ? "inc" : "use"
	  if (!(($1, $2, kind) in why)) why[$1, $2, kind] = $3 }
	function sortw(ws, k,    i, j, x) {
		for (i = 2; i <= k; i++) { x = ws[i]
			for (j = i - 1; j >= 1 && ws[j] > x; j--) ws[j + 1] = ws[j]
			ws[j + 1] = x }
	}
	function tarjan(v,    k, w, ws, i) {
		idx[v] = low[v] = ++counter; stack[++sp] = v; on[v] = 1
		k = split(adj[v], ws, " "); sortw(ws, k)
		for (i = 1; i <= k; i++) { w = ws[i]
			if (!(w in idx)) { tarjan(w); if (low[w] < low[v]) low[v] = low[w] }
			else if (on[w] && idx[w] < low[v]) low[v] = idx[w] }
		if (low[v] == idx[v]) { ncomp++
			do { w = stack[sp--]; on[w] = 0; comp[w] = ncomp; size[ncomp]++ } while (w != v) }
	}
	# A simple circle from walk[1] through every module of component c, in
	# walk[1..wl] (walk[wl] == walk[1]): 1, or 0 when there is none.
	function simple(c, v, depth,    k, ws, i, w) {
		if (depth == size[c]) { if ((v, walk[1]) in n_why) { walk[wl = depth + 1] = walk[1]; return 1 }
			return 0 }
		k = split(adj[v], ws, " "); sortw(ws, k)
		for (i = 1; i <= k; i++) { w = ws[i]
			if (comp[w] != c || inwalk[w]) continue
			walk[depth + 1] = w; inwalk[w] = 1
			if (simple(c, w, depth + 1)) return 1
			inwalk[w] = 0 }
		return 0
	}
	# The shortest path from a to the nearest module of component c whose
	# want[] is set, in path[1..plen] (breadth first, neighbours by name).
	function bfs(a, c,    q, h, t, v, k, ws, i, w, prev, rev, x, n) {
		q[t = 1] = a; prev[a] = ""; h = 1
		while (h <= t) { v = q[h++]
			if (v != a && want[v]) break
			k = split(adj[v], ws, " "); sortw(ws, k)
			for (i = 1; i <= k; i++) { w = ws[i]
				if (comp[w] == c && !(w in prev)) { prev[w] = v; q[++t] = w } } }
		n = 0; for (x = v; x != a; x = prev[x]) rev[++n] = x
		plen = 0; for (i = n; i >= 1; i--) path[++plen] = rev[i]
	}
	function closed_walk(c, s,    j, left, cur, k) {
		for (j in want) delete want[j]
		left = 0
		for (j = 1; j <= nn; j++) if (comp[names[j]] == c && names[j] != s) { want[names[j]] = 1; left++ }
		walk[wl = 1] = s; cur = s
		while (left) { bfs(cur, c)
			for (k = 1; k <= plen; k++) { walk[++wl] = path[k]
				if (want[path[k]]) { want[path[k]] = 0; left-- } }
			cur = walk[wl] }
		want[s] = 1; bfs(cur, c); for (k = 1; k <= plen; k++) walk[++wl] = path[k]
	}
	END {
		for (v in node) names[++nn] = v
		sortw(names, nn)
		for (i = 1; i <= nn; i++) if (!(names[i] in idx)) tarjan(names[i])
		for (i = 1; i <= nn; i++) { c = comp[names[i]]
			if (size[c] < 2 || done[c]++) continue
			s = names[i]; for (j in inwalk) delete inwalk[j]
			walk[1] = s; inwalk[s] = 1
			if (size[c] > 8 || !simple(c, s, 1)) closed_walk(c, s)
			line = walk[1]; for (k = 2; k <= wl; k++) line = line " -> " walk[k]
			print line
			for (k = 1; k < wl; k++) { a = walk[k]; b = walk[k + 1]
				if (shown[a, b]++) continue
				r = ""; m = n_why[a, b]
				if ((a, b, "inc") in why) { r = why[a, b, "inc"]; m-- }
				if ((a, b, "use") in why) { r = r (r ? "; " : "") why[a, b, "use"]; m-- }
				print "    " a " -> " b ": " r (m ? " (and " m " more)" : "") }
			for (j = 1; j <= nn; j++) if (comp[names[j]] == c && odd[names[j]])
				print "    (" names[j] " is" files[names[j]] ")"
		}
	}' "$work/modules" "$work/edges")
broken 'modules that depend on each other in a circle (by include or by call)' "$circles"

[ "$bad" -eq 0 ] || fail "$bad rule(s) broken"
echo "source rules: ${#sources[@]} files follow them"
