#!/bin/bash
# mibs/TCEXPORTER-MIB.txt passes `smilint -l 6` with no message at all, and
# agent/snmp/mib.h has the MIB's OIDs: the subtree roots, every scalar and column
# number, the enumeration values, and each table's accessible column range;
# but for the counter columns, which the counter tables of
# collectors/counters.h give (their number and SNMP type).
#
# smilint exits 0 even on errors, so any output is a failure. The IETF base
# modules the MIB imports (SNMPv2-SMI, IF-MIB, ...) are not in Debian; they
# are vendored in mibs/base, and smilint and snmptranslate read those and
# nothing outside the repository: smilint gets SMIPATH (no default path) and
# no configuration file (/etc/smi.conf adds /usr/share/snmp/mibs, where
# Debian's libsnmp-base has NET-SNMP-MIB); snmptranslate gets MIBDIRS and a
# private SNMPCONFPATH. A copy of mibs/base without NET-SNMP-MIB must fail.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_SRCDIR:?TCX_SRCDIR must point at the source tree}"
mib=$TCX_SRCDIR/mibs/TCEXPORTER-MIB.txt
hdr=$TCX_SRCDIR/agent/snmp/mib.h
[ -f "$mib" ] || fail "$mib is missing"
[ -f "$hdr" ] || fail "$hdr is missing"

command -v smilint >/dev/null 2>&1 || skip "smilint is not installed (apt-get install smitools)"
base=$TCX_SRCDIR/mibs/base
[ -f "$base/SNMPv2-SMI.txt" ] || fail "$base/SNMPv2-SMI.txt is missing (the vendored base MIB modules)"
find_python
make_workdir

# lint FILE [BASE]: smilint's messages (stdout and stderr) about FILE at level
# 6, with the base modules in BASE (default: mibs/base) and FILE's directory
# as the only search path, and no configuration file.
lint() {
	SMIPATH="${2:-$base}:$(dirname "$1")" smilint -c /dev/null -l 6 -s "$1" 2>&1
}

note "smilint -c /dev/null -l 6 -s $mib (SMIPATH=$base:$TCX_SRCDIR/mibs)"
out=$(lint "$mib")
if [ -n "$out" ]; then
	echo "$out" >&2
	fail "smilint reported $(printf '%s\n' "$out" | wc -l) line(s) on mibs/TCEXPORTER-MIB.txt"
fi

# The linter must be able to fail: a copy with an undefined type is reported.
mkdir "$WORK/bad"
sed '0,/SYNTAX      Counter64/s//SYNTAX      Counter65/' "$mib" >"$WORK/bad/TCEXPORTER-MIB.txt"
cmp -s "$mib" "$WORK/bad/TCEXPORTER-MIB.txt" && fail "could not inject an error into a copy of the MIB"
[ -n "$(lint "$WORK/bad/TCEXPORTER-MIB.txt")" ] ||
	fail "smilint printed nothing for a MIB with an undefined type: the lint check is ineffective"
# Nothing outside the repository answers for a module mibs/base lacks.
mkdir "$WORK/base"
cp "$base"/*.txt "$WORK/base/"
rm "$WORK/base/NET-SNMP-MIB.txt"
out=$(lint "$mib" "$WORK/base")
grep -q "failed to locate MIB module \`NET-SNMP-MIB'" <<<"$out" ||
	fail "smilint found NET-SNMP-MIB without mibs/base/NET-SNMP-MIB.txt: it reads MIB modules outside the repository"

# Parse the MIB (no MIB library needed) and compare with agent/snmp/mib.h.
note "agent/snmp/mib.h against the MIB"
"$PYTHON" - "$mib" "$hdr" "$TCX_SRCDIR/config/config.h" "$TCX_SRCDIR/collectors/counters.h" \
	>"$WORK/oids" <<'PY'
import re
import sys

mib_path, hdr_path, cfg_path, ctr_path = sys.argv[1:5]
errors = []

# OIDs of the symbols this MIB may hang from (imported, not parsed here).
KNOWN = {
    "netSnmpPlaypen": [1, 3, 6, 1, 4, 1, 8072, 9999, 9999],
    "netSnmpExperimental": [1, 3, 6, 1, 4, 1, 8072, 9999],
    "enterprises": [1, 3, 6, 1, 4, 1],
}

# ---- the MIB --------------------------------------------------------------
text = open(mib_path, encoding="utf-8").read()
text = re.sub(r'"[^"]*"', '""', text)  # strings first: they may hold "--"
text = re.sub(r"--.*?(--|$)", " ", text, flags=re.M)  # ASN.1 comments

defs = {}  # name -> dict(kind, parent, arc, body)
for m in re.finditer(
    r"\b([a-z][A-Za-z0-9-]*)\s+(OBJECT-TYPE|OBJECT\s+IDENTIFIER|MODULE-IDENTITY|"
    r"OBJECT-IDENTITY|OBJECT-GROUP|NOTIFICATION-GROUP|MODULE-COMPLIANCE|"
    r"NOTIFICATION-TYPE)\b(.*?)::=\s*\{\s*([A-Za-z][A-Za-z0-9-]*)\s+(\d+)\s*\}",
    text,
    re.S,
):
    name, kind, body, parent, arc = m.groups()
    if name in defs:
        errors.append("MIB: %s is defined twice" % name)
    defs[name] = {"kind": re.sub(r"\s+", " ", kind), "body": body, "parent": parent,
                  "arc": int(arc)}
if not defs:
    sys.exit("MIB: no definitions found in %s" % mib_path)

def oid(name, seen=()):
    if name in KNOWN:
        return KNOWN[name]
    if name not in defs:
        raise KeyError(name)
    if name in seen:
        sys.exit("MIB: OID loop at %s" % name)
    return oid(defs[name]["parent"], seen + (name,)) + [defs[name]["arc"]]

for name in list(defs):
    try:
        defs[name]["oid"] = oid(name)
    except KeyError as e:
        errors.append("MIB: %s hangs from %s, which this check does not know" % (name, e))
        defs[name]["oid"] = None

modules = [n for n, d in defs.items() if d["kind"] == "MODULE-IDENTITY"]
if len(modules) != 1:
    sys.exit("MIB: expected one MODULE-IDENTITY, found %d" % len(modules))
module = modules[0]

objtypes = {n: d for n, d in defs.items() if d["kind"] == "OBJECT-TYPE"}
tables = {n for n, d in objtypes.items() if re.search(r"SYNTAX\s+SEQUENCE\s+OF\b", d["body"])}
entries = {n for n, d in objtypes.items() if d["parent"] in tables}
columns = {n for n, d in objtypes.items() if d["parent"] in entries}
scalars = {n for n in objtypes if n not in tables | entries | columns}

def access(name):
    m = re.search(r"MAX-ACCESS\s+([a-z-]+)", objtypes[name]["body"])
    return m.group(1) if m else None

def snake(camel):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).upper()

def cname(name):
    """tcxActionIfIndex -> ACTION_IF_INDEX"""
    if not name.startswith("tcx"):
        errors.append("MIB: %s does not start with tcx" % name)
    return snake(name[3:])

# ---- agent/snmp/mib.h ----------------------------------------------------------
h = open(hdr_path, encoding="utf-8").read()
h = re.sub(r"/\*.*?\*/", " ", h, flags=re.S)
h = re.sub(r"//[^\n]*", " ", h)
h = re.sub(r"\\\n", " ", h)

macros = dict(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(TCX_MIB_\w+)[ \t]+([^\n]*)$", h, re.M))

def expand(name, seen=()):
    if name in seen:
        sys.exit("mib.h: macro loop at %s" % name)
    out = []
    for tok in (t.strip() for t in macros[name].split(",")):
        if re.fullmatch(r"\d+", tok):
            out.append(int(tok))
        elif tok in macros:
            out += expand(tok, seen + (name,))
        else:
            sys.exit("mib.h: %s: cannot evaluate '%s'" % (name, tok))
    return out

consts = {}
for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", h, re.S):
    nxt = 0
    for item in (i.strip() for i in body.split(",")):
        if not item:
            continue
        m = re.fullmatch(r"(\w+)(?:\s*=\s*(\w+))?", item)
        if not m:
            sys.exit("mib.h: cannot evaluate enumerator '%s'" % item)
        n, v = m.groups()
        if v is None:
            val = nxt
        elif re.fullmatch(r"\d+", v):
            val = int(v)
        elif v in consts:
            val = consts[v]
        else:
            sys.exit("mib.h: %s = %s: unknown value" % (n, v))
        if n in consts:
            errors.append("mib.h: %s is defined twice" % n)
        consts[n] = val
        nxt = val + 1

# ---- collectors/counters.h: the counter columns -------------------------------
# Each TCX_<OBJECT>_COUNTERS(C) list: C(ID, .key = "k", ..., .snmp_col = N,
# .snmp = TCX_SNMP_TYPE, ...) is column tcx<Object><Key> of tcx<Object>Entry.
# A list of several objects, TCX_<LIST>_COUNTERS(C, obj, sw_), is so for each
# object it is made for, TCX_<LIST>_COUNTERS(DEF, "object", ...).
SNMP_SYNTAX = {"TCX_SNMP_COUNTER64": "Counter64", "TCX_SNMP_COUNTER32": "Counter32",
               "TCX_SNMP_GAUGE32": "Gauge32"}
ctr = open(ctr_path, encoding="utf-8").read()
ctr = re.sub(r"/\*.*?\*/", " ", ctr, flags=re.S)
ctr = re.sub(r"\\\n", " ", ctr)
counter_cols = {}  # MIB column -> (snmp_col, syntax, where)
lists = []  # (list name, object, body)
for name, params, body in re.findall(r"^#define\s+TCX_(\w+)_COUNTERS\(C((?:,\s*\w+)*)\)(.*)$",
                                     ctr, re.M):
    if not params:
        lists.append((name, name, body))
        continue
    objs = re.findall(r"\bTCX_%s_COUNTERS\(\s*\w+\s*,\s*\"(\w+)\"" % name, ctr)
    if not objs:
        errors.append("counters.h: TCX_%s_COUNTERS is made for no object" % name)
    lists += [(name, o.upper(), body) for o in objs]
for lst, obj, body in lists:
    entry = "tcx" + obj.title().replace("_", "") + "Entry"
    for cid, fields in re.findall(r"\bC\(\s*(\w+)\s*,(.*?)\)\s*(?=\bC\(|$)", body):
        key = re.search(r'\.key\s*=\s*"(\w+)"', fields)
        col = re.search(r"\.snmp_col\s*=\s*(\d+)", fields)
        typ = re.search(r"\.snmp\s*=\s*(\w+)", fields)
        where = "counters.h: TCX_%s_COUNTERS %s (%s)" % (lst, cid, entry)
        if not key:
            errors.append("%s has no .key" % where)
            continue
        if not col or not typ:
            continue  # not in SNMP
        name = entry[:-len("Entry")] + "".join(w.title() for w in key.group(1).split("_"))
        if typ.group(1) not in SNMP_SYNTAX:
            errors.append("%s: unknown SNMP type %s" % (where, typ.group(1)))
            continue
        counter_cols[name] = (int(col.group(1)), SNMP_SYNTAX[typ.group(1)], where, entry)
if not counter_cols:
    errors.append("counters.h: no counter with an SNMP column found")

# ---- compare ----------------------------------------------------------------
def dotted(o):
    return "." + ".".join(map(str, o)) if o else "?"

for name, (col, syntax, where, entry) in sorted(counter_cols.items()):
    if name not in columns or objtypes[name]["parent"] != entry:
        errors.append("%s: %s, column %d of %s, is not in the MIB" % (where, name, col, entry))
        continue
    if defs[name]["arc"] != col:
        errors.append("%s: snmp_col %d, but %s is column %d in the MIB"
                      % (where, col, name, defs[name]["arc"]))
    got = re.search(r"SYNTAX\s+(\w+)", objtypes[name]["body"])
    if not got or got.group(1) != syntax:
        errors.append("%s: %s, but %s is %s in the MIB"
                      % (where, syntax, name, got.group(1) if got else "?"))

want_macros = {"TCX_MIB_ROOT": module}
for n in [d for d in defs if d != module and defs[d]["kind"] == "OBJECT IDENTIFIER"]:
    want_macros["TCX_MIB_" + cname(n)] = n
for n in tables | entries:
    want_macros["TCX_MIB_" + cname(n)] = n
for mac, n in sorted(want_macros.items()):
    if mac not in macros:
        # Not every subtree needs a macro; the ones the agent registers do.
        if n in entries or n == module or any(
                objtypes[s]["parent"] == n for s in scalars):
            errors.append("mib.h: no %s for %s (%s)" % (mac, n, dotted(defs[n]["oid"])))
        continue
    got = expand(mac)
    if got != defs[n]["oid"]:
        errors.append("mib.h: %s is %s, but %s is %s in the MIB"
                      % (mac, dotted(got), n, dotted(defs[n]["oid"])))
for mac in sorted(set(macros) - set(want_macros)):
    errors.append("mib.h: %s names nothing in the MIB" % mac)

want = {}  # C constant -> (value, what)
for n in sorted(scalars):
    want["TCX_SCALAR_" + cname(n)] = (defs[n]["arc"], n)
for n in sorted(columns):
    if n not in counter_cols:
        want["TCX_COL_" + cname(n)] = (defs[n]["arc"], n)
for e in sorted(entries):
    cols = [c for c in columns if objtypes[c]["parent"] == e]
    acc = [defs[c]["arc"] for c in cols if access(c) != "not-accessible"]
    t = cname(re.sub(r"Entry$", "", e))
    if acc:
        want["TCX_%s_MIN_COL" % t] = (min(acc), "lowest accessible column of " + e)
        # A table with counter columns has no MAX_COL: the agent takes the
        # highest of its own columns and its counters'.
        if not any(c in counter_cols for c in cols):
            want["TCX_%s_MAX_COL" % t] = (max(acc), "highest accessible column of " + e)
for n in sorted(objtypes):
    m = re.search(r"SYNTAX\s+INTEGER\s*\{(.*?)\}", objtypes[n]["body"], re.S)
    if m:
        for label, v in re.findall(r"([a-z][A-Za-z0-9-]*)\s*\(\s*(-?\d+)\s*\)", m.group(1)):
            want["TCX_%s_%s" % (cname(n), snake(label).replace("-", "_"))] = (
                int(v), "%s %s" % (n, label))
for c, (v, what) in sorted(want.items()):
    if c not in consts:
        errors.append("mib.h: %s (%s = %d) is missing" % (c, what, v))
    elif consts[c] != v:
        errors.append("mib.h: %s is %d, but %s is %d in the MIB" % (c, consts[c], what, v))
for c in sorted(set(consts) - set(want)):
    errors.append("mib.h: %s names nothing in the MIB" % c)

# ---- limits shared with the collector -------------------------------------------
try:
    cfg = open(cfg_path, encoding="utf-8").read()
except OSError as e:
    cfg = ""
    errors.append("cannot read %s: %s" % (cfg_path, e))

def cdefine(name):
    m = re.search(r"^#define\s+%s\s+(\d+)" % name, cfg, re.M)
    if not m:
        errors.append("config/config.h: no #define %s" % name)
    return int(m.group(1)) if m else None

# Textual conventions of this MIB: name -> the line of their SYNTAX.
tcs = dict(re.findall(r"\b([A-Z][A-Za-z0-9-]*)\s*::=\s*TEXTUAL-CONVENTION\b.*?SYNTAX\s+([^\n]*)",
                      text, re.S))

def upper_bound(name):
    syntax = re.search(r"SYNTAX\s+([^\n]*)", objtypes.get(name, {}).get("body", ""))
    syntax = syntax.group(1).strip() if syntax else ""
    if syntax in tcs:  # the size of a textual convention
        syntax = tcs[syntax]
    m = re.search(r"\(\s*(?:SIZE\s*\(\s*)?\d+\s*\.\.\s*(\d+)\s*\)", syntax)
    if not m:
        errors.append("MIB: %s has no range or size" % name)
    return int(m.group(1)) if m else None

for obj, define in (("tcxLabelNumber", "TCX_MAX_LABELS"), ("tcxClassLabelNumber", "TCX_MAX_LABELS"),
                    ("tcxActionCookie", "TCX_COOKIE_MAX")):
    a, b = upper_bound(obj), cdefine(define)
    if None not in (a, b) and a != b:
        errors.append("MIB: %s goes up to %d, but config/config.h has %s %d"
                      % (obj, a, define, b))

for n in sorted(defs, key=lambda n: defs[n]["oid"] or []):
    print(n, dotted(defs[n]["oid"]))
if errors:
    sys.stderr.write("\n".join(errors) + "\n")
    sys.exit(1)
sys.stderr.write("mib.h: %d macros and %d constants, counters.h: %d counter columns agree "
                 "with %d MIB definitions\n"
                 % (len(macros), len(consts), len(counter_cols), len(defs)))
PY

# When net-snmp is installed, its parser must agree with ours on every OID.
if command -v snmptranslate >/dev/null 2>&1; then
	note "snmptranslate -On agrees with the OIDs above"
	mkdir -p "$WORK/persist"
	mapfile -t names < <(cut -d' ' -f1 "$WORK/oids")
	cut -d' ' -f2 "$WORK/oids" >"$WORK/oids.want"
	SNMPCONFPATH="$WORK" SNMP_PERSISTENT_DIR="$WORK/persist" \
		MIBDIRS="$base:$TCX_SRCDIR/mibs" MIBS=TCEXPORTER-MIB \
		snmptranslate -On "${names[@]/#/TCEXPORTER-MIB::}" 2>"$WORK/snmptranslate.err" |
		sed '/^$/d' >"$WORK/oids.got" || true
	if ! cmp -s "$WORK/oids.want" "$WORK/oids.got"; then
		echo "--- name, OID from the MIB parse, OID from snmptranslate:" >&2
		paste -d' ' <(printf '%s\n' "${names[@]}") "$WORK/oids.want" "$WORK/oids.got" >&2
		echo "--- snmptranslate stderr:" >&2
		cat "$WORK/snmptranslate.err" >&2
		fail "snmptranslate -On disagrees with the MIB parse"
	fi
else
	note "snmptranslate not installed (apt-get install snmp): net-snmp cross-check skipped"
fi
echo "smilint: TCEXPORTER-MIB clean at -l 6; agent/snmp/mib.h matches $(wc -l <"$WORK/oids") OIDs"
