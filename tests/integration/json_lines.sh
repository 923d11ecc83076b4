#!/bin/bash
# `--format json` for scripts (issue #24): JSON Lines, one object per line,
# each opening with its "type":
#  - the types come in the documented order: action (or aggregate), filter
#    (or filter_aggregate), qdisc, class, target, device, and collection last
#    and once; one line per qdisc, per class and per filter, no arrays;
#  - each line agrees with what was set up in this namespace: an HTB tree and
#    an ingress u32 rule with a mirred action and a cookie on v0, a class
#    label from `classes:`; a target on a missing device is a target line
#    with success false and an error naming it, and the collection line
#    counts it; its timestamp lies between two readings of the clock;
#  - every jq recipe of tcexporter(8)'s JSON OUTPUT section runs on that
#    output and prints what it says;
#  - with `aggregate`, aggregate lines with "labels", no action nor filter
#    line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"

require_bin
require_root
require_cmd ip tc jq
find_python
in_netns TCX_JSON_LINES_IN_NETNS
make_workdir
man=${TCX_SRCDIR:-$here/../..}/doc/tcexporter.8
[ -f "$man" ] || fail "$man not found"

# no IPv6 chatter (router solicitations) through the classes
sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
ip link add v0 type veth peer name v1
ip link set v0 up
ip link set v1 up
tc qdisc add dev v0 root handle 1: htb default 10
tc class add dev v0 parent 1: classid 1:1 htb rate 100mbit quantum 1514
tc class add dev v0 parent 1:1 classid 1:10 htb rate 10mbit ceil 100mbit quantum 1514
tc qdisc add dev v0 ingress
tc filter add dev v0 parent ffff: pref 10 protocol ip u32 match ip dst 10.9.0.1/32 \
	action mirred egress mirror dev v1 cookie 0a0b
cat >"$WORK/c.yaml" <<'YAML'
targets:
  - {dev: v0, parent: ingress}
  - {dev: nosuch0, parent: ingress}
labels: [tenant]
cookies:
  "0a0b": [acme]
classes:
  "v0 1:10": [acme]
YAML

before=$(date +%s.%N)
run_tcx json --once --config "$WORK/c.yaml" --format json
after=$(date +%s.%N)
expect_rc json 1 # the missing device's target
grep -qF nosuch0 "$WORK/json.err" || fail "stderr does not name nosuch0: $(cat "$WORK/json.err")"

note "the lines, their types and their order"
"$PYTHON" - "$WORK/json.out" "$before" "$after" <<'PY' || fail "the JSON lines (see above)"
import json, sys
path, before, after = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ORDER = ["action", "aggregate", "filter", "filter_aggregate", "qdisc", "class", "target",
         "device", "collection"]
bad = []
objs = []
for n, line in enumerate(open(path), 1):
    o = json.loads(line)
    if not line.startswith('{"type":') or o.get("type") not in ORDER:
        bad.append("line %d does not open with a known type: %s" % (n, line[:120]))
        continue
    objs.append(o)
ranks = [ORDER.index(o["type"]) for o in objs]
if ranks != sorted(ranks):
    bad.append("types out of order: %s" % [o["type"] for o in objs])
if not objs or objs[-1]["type"] != "collection" or ranks.count(ORDER.index("collection")) != 1:
    bad.append("the collection line is not last, or not once")
by = {t: [o for o in objs if o["type"] == t] for t in ORDER}
for o in objs:
    if any(isinstance(v, list) and v and isinstance(v[0], dict) for v in o.values()):
        bad.append("an array of objects in a line: %r" % o)
act = by["action"]
if len(act) != 1 or act[0]["cookie"] != "0a0b" or act[0]["labels"] != {"tenant": "acme"} \
        or act[0]["action"] != "mirred" or act[0]["device"] != "v0":
    bad.append("action lines: %r" % act)
flt = by["filter"]
if sorted(f["handle"] for f in flt) != ["800:", "800::800"]:
    bad.append("filter lines: %r" % flt)
qd = [(q["device"], q["kind"], q["handle"]) for q in by["qdisc"] if q["device"] == "v0"]
if sorted(qd) != [("v0", "htb", "1:"), ("v0", "ingress", "ffff:")]:
    bad.append("v0's qdisc lines: %r" % qd)
cl = {c["handle"]: c for c in by["class"] if c["device"] == "v0"}
if sorted(cl) != ["1:1", "1:10"] or cl["1:10"]["labels"] != {"tenant": "acme"} \
        or "lends" not in cl["1:10"]["xstats"]:
    bad.append("v0's class lines: %r" % cl)
tg = {t["device"]: t for t in by["target"]}
if sorted(tg) != ["nosuch0", "v0"]:
    bad.append("target lines: %r" % by["target"])
else:
    ok, gone = tg["v0"], tg["nosuch0"]
    if ok["success"] is not True or ok["error"] is not None or ok["filters"] != 2 \
            or ok["actions"] != 1 or ok["mode"] != "full":
        bad.append("v0's target line: %r" % ok)
    if gone["success"] is not False or "nosuch0" not in (gone["error"] or "") \
            or gone["mode"] != "none":
        bad.append("nosuch0's target line: %r" % gone)
dev = {d["device"]: d for d in by["device"]}
if "v0" not in dev or dev["v0"]["success"] is not True or dev["v0"]["qdiscs"] != len(qd) \
        or dev["v0"]["classes"] != 2:
    bad.append("device lines: %r" % by["device"])
c = objs[-1] if objs and objs[-1]["type"] == "collection" else {}
if c and (c["targets"] != 2 or c["failed"] != 1 or c["errors"].get("notfound") != 1
          or not before <= c["timestamp"] <= after or c["complete"] is not True):
    bad.append("the collection line: %r (the clock: %f to %f)" % (c, before, after))
print("%d lines: %s" % (len(objs), {t: len(v) for t, v in by.items() if v}))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

note "the jq recipes of tcexporter(8)"
# each recipe: a comment line, then its command; `tcexporter --once --format
# json |` reads the output above instead
sed -n '/^Recipes with/,/^\.fi/p' "$man" | sed -e '1,/^\.nf/d' -e '/^\.fi/d' \
	-e 's/\\-/-/g' -e 's/\\e/\\/g' >"$WORK/recipes"
[ "$(grep -c '^#' "$WORK/recipes")" -ge 5 ] || fail "fewer than 5 recipes in $man: $(cat "$WORK/recipes")"
awk -v d="$WORK" '/^#/ { n++; print > (d "/recipe." n ".name"); next }
	{ print > (d "/recipe." n) }' "$WORK/recipes"
n=0
for f in "$WORK"/recipe.*.name; do
	comment=$(cat "$f")
	cmd=$(cat "${f%.name}")
	cmd=${cmd//tcexporter --once --format json/cat \"\$WORK\/json.out\"}
	n=$((n + 1))
	out=$(eval "$cmd") || fail "recipe '$comment' failed: $cmd"
	case $comment in
	"# the action rows") want='"cookie":"0a0b"' ;;
	"# packets per cookie") want='0a0b 0' ;;
	"# rules that never matched"*)
		# one line per filter line with "hits": 0 (none where the kernel
		# keeps no u32 hit counter: the output must then be empty)
		want=''
		n0=$("$PYTHON" -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for o in [json.loads(l)] if o["type"] == "filter" and o.get("hits") == 0))' "$WORK/json.out")
		[ "$(grep -c . <<<"$out" || true)" = "$n0" ] ||
			fail "recipe '$comment': $(grep -c . <<<"$out" || true) lines, $n0 filters with hits 0: '$out'"
		;;
	"# classes by bytes sent"*) want='v0 1:10 0' ;;
	"# the targets that failed, and why") want="nosuch0" ;;
	"# when the collection was taken") want='.' ;;
	*) fail "recipe '$comment' has no expected output here: add it to this test" ;;
	esac
	if [ -n "$want" ]; then
		grep -qF -- "$want" <<<"$out" || fail "recipe '$comment': '$out' lacks '$want'"
	fi
	echo "ok   recipe $comment"
done
[ "$n" -ge 5 ] || fail "only $n recipes ran"

note "with aggregate: aggregate lines, no action nor filter line"
printf 'aggregate: {by: [tenant]}\n' >>"$WORK/c.yaml"
run_tcx agg --once --config "$WORK/c.yaml" --format json
expect_rc agg 1
"$PYTHON" - "$WORK/agg.out" <<'PY' || fail "the aggregated JSON lines (see above)"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
types = [o["type"] for o in objs]
agg = [o for o in objs if o["type"] == "aggregate"]
bad = []
if "action" in types or "filter" in types:
    bad.append("action or filter lines with aggregate: %s" % types)
if [a["labels"] for a in agg] != [{"tenant": "acme"}] or agg[0]["packets"] != 0:
    bad.append("aggregate lines: %r" % agg)
if types[-1] != "collection":
    bad.append("the last line is a %s" % types[-1])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
note "json_lines: all checks passed"
