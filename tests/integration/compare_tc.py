#!/usr/bin/env python3
"""Compare tcexporter's rows with what `tc -s -j filter show` reports.

tc is the ground truth. Targets are given as
    --dev NETNS DEV PARENT_LABEL TC_PARENT   (NETNS "" for the current namespace;
                                              TC_PARENT: ingress, egress or a
                                              handle such as 1:, as tc takes it)
    --block NETNS INDEX
and every action of every filter tc lists for them becomes one expected row.
By default tc is run for each target; `--tc-json FILE` right after a target
reads that target's `tc -s -j filter show ...` output from FILE instead (for
example captured inside a VM, tests/vm/run.sh).

Subcommands:
  snapshot TARGETS -o FILE       write the tc rows to FILE (JSON)
  same FILE1 FILE2               the two snapshots are identical
  json TARGETS --exporter FILE   compare `tcexporter --once --format json`
  prom TARGETS --exporter FILE   compare `tcexporter --once --format prometheus`

json and prom run tc themselves (after the exporter ran; no traffic must flow
meanwhile) unless given --tc-json files, require the exact same set of rows
with equal identity and counters, and exit 1 with a diff on any mismatch.
Rows from a terse dump carry no action index (null in tcexporter's JSON):
`--terse` right after a target accepts a null index on that target's flower
rows (the only classifier with terse dumps); everywhere else the index must
equal tc's. prom
--check-filter-counts also checks each target's tc_scrape_collector_filters
against the filters tc lists (actions or not; u32 hash tables count).
Standard library only.
"""

import argparse
import json
import re
import subprocess
import sys

# Identity of a row: no two rows of a correct output share one.
KEY_FIELDS = ("netns", "device", "block", "parent", "chain", "protocol", "pref", "kind", "handle",
              "order")
# Compared besides the key.
VALUE_FIELDS = ("action", "index", "cookie", "flags", "bytes", "packets", "drops", "overlimits",
                "hw_bytes", "hw_packets")
COUNTERS = ("bytes", "packets", "drops", "overlimits")
FLAG_NAMES = ("skip_hw", "skip_sw", "in_hw", "not_in_hw")  # tcexporter's order


class Mismatch(Exception):
    pass


# ---- ground truth ------------------------------------------------------------------------


def run_tc(netns, args):
    cmd = ["tc"] + (["-n", netns] if netns else []) + ["-s", "-j"] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise Mismatch("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    text = p.stdout.strip()
    return json.loads(text) if text else []


def tc_entries(target):
    """tc's JSON entries of one target: from its --tc-json file, or from tc."""
    if target.get("tc_json"):
        with open(target["tc_json"]) as f:
            text = f.read().strip()
        try:
            return json.loads(text) if text else []
        except ValueError as e:
            raise Mismatch("%s: not tc's JSON: %s" % (target["tc_json"], e))
    if target["block"] is not None:
        entries = run_tc(target["netns"], ["filter", "show", "block", str(target["block"])])
    else:
        tp = target["tc_parent"]
        where = [tp] if tp in ("ingress", "egress", "root") else ["parent", tp]
        entries = run_tc(target["netns"], ["filter", "show", "dev", target["device"]] + where)
    return entries


def tc_handle(opts):
    """The filter handle as tcexporter prints it: u32's "fh" as is, the
    numeric "handle" of the other classifiers in hex; None for a tp header."""
    if not opts:
        return None
    if "fh" in opts:
        return opts["fh"]
    h = opts.get("handle")
    if isinstance(h, int):
        return "0x%x" % h
    return h


def tc_filter_count(target):
    """Filters tc lists for one target (tp headers excluded)."""
    return sum(1 for e in tc_entries(target) if tc_handle(e.get("options")) is not None)


def tc_rows(target):
    """Rows of one target from tc."""
    entries = tc_entries(target)
    rows = []
    for e in entries:
        opts = e.get("options")
        if not opts or not opts.get("actions"):
            continue  # tp header, u32 hash table, or a filter without actions
        flags = ",".join(f for f in FLAG_NAMES if opts.get(f))
        for a in opts["actions"]:
            st = a.get("stats", {})
            rows.append({
                "netns": target["netns"],
                "device": target["device"],
                "block": target["block"],
                "parent": target["parent"],
                "chain": e.get("chain", 0),
                "protocol": e["protocol"],
                "pref": e["pref"],
                "kind": e["kind"],
                "handle": tc_handle(opts),
                "order": a["order"],
                "action": a["kind"],
                "index": a.get("index"),
                "cookie": a.get("cookie", ""),
                "flags": flags,
                "bytes": st.get("bytes", 0),
                "packets": st.get("packets", 0),
                "drops": st.get("drops", 0),
                "overlimits": st.get("overlimits", 0),
                "hw_bytes": st.get("hw_bytes", 0),
                "hw_packets": st.get("hw_packets", 0),
            })
    return rows


def truth(targets):
    rows = []
    for t in targets:
        rows.extend(tc_rows(t))
    return rows


def parse_targets(args):
    targets = []
    for kind, values, tc_json, terse in getattr(args, "targets", None) or []:
        if kind == "dev":
            ns, dev, label, tcp = values
            targets.append({"netns": ns, "device": dev, "block": None, "parent": label,
                            "tc_parent": tcp, "tc_json": tc_json, "terse": terse})
        else:
            ns, idx = values
            targets.append({"netns": ns, "device": None, "block": int(idx), "parent": "block",
                            "tc_json": tc_json, "terse": terse})
    if not targets:
        raise Mismatch("no target given (--dev/--block)")
    return targets


# ---- comparison ----------------------------------------------------------------------------


def key_of(row):
    return tuple(row.get(f) for f in KEY_FIELDS)


def fmt_key(k):
    d = dict(zip(KEY_FIELDS, k))
    where = ("block %s" % d["block"]) if d["block"] is not None else (
        "dev %s %s" % (d["device"], d["parent"]))
    if d["netns"]:
        where += " netns %s" % d["netns"]
    return "%s chain %s %s pref %s %s %s order %s" % (
        where, d["chain"], d["protocol"], d["pref"], d["kind"], d["handle"], d["order"])


def index_rows(rows, what, problems):
    out = {}
    for r in rows:
        k = key_of(r)
        if k in out:
            problems.append("%s: duplicate row %s" % (what, fmt_key(k)))
        else:
            out[k] = r
    return out


def diff_rows(want_rows, got_rows, fields, got_name, terse=()):
    """Lines describing every difference; [] when identical. A flower row of
    a target in terse (target keys) whose index tcexporter reports as null
    (it came from a terse dump) is not compared on the index."""
    problems = []
    want = index_rows(want_rows, "tc", problems)
    got = index_rows(got_rows, got_name, problems)
    for k in sorted(want.keys() - got.keys(), key=repr):
        problems.append("MISSING from %s: %s  (tc: %s)" % (
            got_name, fmt_key(k), ", ".join("%s=%r" % (f, want[k][f]) for f in fields)))
    for k in sorted(got.keys() - want.keys(), key=repr):
        problems.append("EXTRA in %s: %s  (%s)" % (
            got_name, fmt_key(k), ", ".join("%s=%r" % (f, got[k].get(f)) for f in fields)))
    for k in sorted(want.keys() & got.keys(), key=repr):
        bad = ["%s: %s=%r tc=%r" % (f, got_name, got[k].get(f), want[k][f])
               for f in fields if got[k].get(f) != want[k][f] and not (
                   f == "index" and got[k].get(f) is None and got[k].get("kind") == "flower"
                   and target_key(got[k]) in terse)]
        if bad:
            problems.append("DIFFERENT %s: %s" % (fmt_key(k), "; ".join(bad)))
    return problems


def check_not_vacuous(rows, args):
    """The rows compared must be many and carry real, differing counters."""
    problems = []
    if args.expect_rows is not None and len(rows) != args.expect_rows:
        problems.append("tc lists %d action rows for these targets, the test set up %d" % (
            len(rows), args.expect_rows))
    if not rows:
        problems.append("no action rows at all: the comparison would be vacuous")
    nonzero = {r["bytes"] for r in rows if r["bytes"]}
    if len(nonzero) < args.min_distinct_bytes:
        problems.append("only %d distinct non-zero byte counters (%s), want >= %d" % (
            len(nonzero), sorted(nonzero), args.min_distinct_bytes))
    for field in args.require_nonzero or []:
        if not any(r[field] for r in rows):
            problems.append("no row has a non-zero %s counter" % field)
    return problems


def cookie_norm(c):
    c = c.lower()
    return c[2:] if c.startswith("0x") else c


def load_cookie_map(args):
    if not args.cookie_map:
        return None
    with open(args.cookie_map) as f:
        m = json.load(f)
    return {cookie_norm(k): v for k, v in m.items()}


def expected_labels(row, labels, cmap):
    mapped = cmap.get(row["cookie"]) if cmap is not None else None
    return {name: (mapped[name] if mapped else "") for name in labels}


def restrict_unmapped(rows, args, cmap, problems):
    if args.unmapped_drop:
        if cmap is None:
            raise Mismatch("--unmapped-drop needs --cookie-map")
        kept = [r for r in rows if r["cookie"] in cmap]
        if not kept or len(kept) == len(rows):
            problems.append("unmapped: drop keeps %d of %d rows: the test needs some of "
                            "each" % (len(kept), len(rows)))
        rows = kept
    return rows


def summary(rows):
    per = {}
    for r in rows:
        t = ("block %s" % r["block"]) if r["block"] is not None else (
            "%s/%s" % (r["device"], r["parent"]))
        if r["netns"]:
            t += "@" + r["netns"]
        per[t] = per.get(t, 0) + 1
    return ", ".join("%s: %d" % kv for kv in sorted(per.items()))


def report(problems, what, n):
    if problems:
        print("%s: %d problem(s):" % (what, len(problems)))
        for p in problems:
            print("  " + p)
        return 1
    print("%s: %d rows identical to tc" % (what, n))
    return 0


# ---- exporter outputs -------------------------------------------------------------------


def read_json_rows(path):
    """The action rows of `tcexporter --once --format json`."""
    return read_exporter_json(path)[0]


JSON_TYPES = ("action", "aggregate", "filter", "filter_aggregate", "qdisc", "class", "target",
              "device", "collection")


def read_json_lines(path):
    """The objects of `tcexporter --once --format json` output: JSON Lines,
    one object a line, each with a "type" of JSON_TYPES first, and a last
    line of type collection (the only one)."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    objs = []
    for n, line in enumerate(lines, 1):
        try:
            o = json.loads(line)
        except ValueError as e:
            raise Mismatch("%s:%d: not JSON: %s: %r" % (path, n, e, line[:200]))
        if not isinstance(o, dict) or not line.startswith('{"type":') or \
                o.get("type") not in JSON_TYPES:
            raise Mismatch("%s:%d: not an object opening with a known \"type\": %r" % (
                path, n, line[:200]))
        objs.append(o)
    kinds = [o["type"] for o in objs]
    if not kinds or kinds[-1] != "collection" or kinds.count("collection") != 1:
        raise Mismatch("%s: the last line, and only it, must be of type collection (types: %s)"
                       % (path, sorted(set(kinds))))
    return objs


def read_exporter_json(path):
    """(action rows, qdisc objects, class objects) of a JSON output."""
    objs = read_json_lines(path)
    return tuple([o for o in objs if o["type"] == t] for t in ("action", "qdisc", "class"))


def cmd_json(args):
    targets = parse_targets(args)
    got = read_json_rows(args.exporter)
    want = truth(targets)
    cmap = load_cookie_map(args)
    labels = args.labels.split(",") if args.labels else []
    problems = check_not_vacuous(want, args)
    want = restrict_unmapped(want, args, cmap, problems)
    terse = {target_key(t) for t in targets if t["terse"]}
    problems += diff_rows(want, got, VALUE_FIELDS, "tcexporter", terse)
    if len(got) != len(want):
        problems.append("tcexporter printed %d rows, tc lists %d" % (len(got), len(want)))
    # Structure of each row, and the labels the cookie maps to.
    for r in got:
        if (r.get("device") is None) == (r.get("block") is None):
            problems.append("row with both or neither of dev and block: %r" % r)
        want_l = expected_labels(r, labels, cmap)
        if r.get("labels") != want_l:
            problems.append("labels of %s (cookie %r): tcexporter=%r expected=%r" % (
                fmt_key(key_of(r)), r.get("cookie"), r.get("labels"), want_l))
    print("compared: %s" % summary(want))
    return report(problems, "json " + args.exporter, len(want))


# Prometheus text: name{labels} value
SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (\S+))?$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"(,|$)')
FAMILIES = {"tc_action_bytes_total": "bytes", "tc_action_packets_total": "packets",
            "tc_action_drops_total": "drops", "tc_action_overlimits_total": "overlimits",
            "tc_action_hw_bytes_total": "hw_bytes", "tc_action_hw_packets_total": "hw_packets"}
UNESCAPE = {"\\": "\\", '"': '"', "n": "\n"}


def samples(text, problems, where=""):
    """(line number, match of SAMPLE_RE) of each sample of a text exposition;
    a line that is not a sample (nor a comment) goes into problems."""
    for n, line in enumerate(text.split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            problems.append("%sline %d: not a sample: %r" % (where, n, line))
            continue
        yield n, m


def parse_labels(text, where):
    out = {}
    pos = 0
    while pos < len(text):
        m = LABEL_RE.match(text, pos)
        if not m:
            raise Mismatch("%s: cannot parse labels at %r" % (where, text[pos:pos + 60]))
        raw = m.group(2)
        val = []
        i = 0
        while i < len(raw):
            if raw[i] == "\\":
                if raw[i + 1] not in UNESCAPE:
                    raise Mismatch("%s: bad escape \\%s in %r" % (where, raw[i + 1], raw))
                val.append(UNESCAPE[raw[i + 1]])
                i += 2
            else:
                val.append(raw[i])
                i += 1
        if m.group(1) in out:
            raise Mismatch("%s: label %s twice" % (where, m.group(1)))
        out[m.group(1)] = "".join(val)
        pos = m.end()
    return out


def target_key(t):
    """(netns, dev, parent, block) of a target, from compare_tc's target or
    from the labels of a tc_scrape_collector_* sample."""
    block = t.get("block")
    if block is not None:
        return (t.get("netns") or "", None, None, int(block))
    return (t.get("netns") or "", t.get("device"), t.get("parent"), None)


def cmd_prom(args):
    targets = parse_targets(args)
    with open(args.exporter) as f:
        text = f.read()
    want = truth(targets)
    cmap = load_cookie_map(args)
    labels = args.labels.split(",") if args.labels else []
    problems = check_not_vacuous(want, args)
    want = restrict_unmapped(want, args, cmap, problems)
    builtin = {"device", "parent", "block", "netns", "chain", "protocol", "pref", "kind", "handle",
               "order", "action", "cookie"}
    rows = {}  # key -> row assembled from the families
    seen = {}  # (family, key) -> line number
    n_filters = {}  # target key -> tc_scrape_collector_filters
    for n, m in samples(text, problems):
        if m.group(1) == "tc_scrape_collector_filters" and args.check_filter_counts:
            tk = target_key(parse_labels(m.group(2) or "", "line %d" % n))
            if tk in n_filters:
                problems.append("line %d: a second tc_scrape_collector_filters for %r" % (n, tk))
            n_filters[tk] = float(m.group(3))
            continue
        fam = FAMILIES.get(m.group(1))
        if not fam:
            continue
        lab = parse_labels(m.group(2) or "", "line %d" % n)
        block = lab.get("block")
        key_row = {
            "netns": lab.get("netns", ""),
            "device": lab.get("device") if block is None else None,
            "block": int(block) if block is not None else None,
            "parent": lab.get("parent") if block is None else "block",
            "chain": int(lab.get("chain", -1)),
            "protocol": lab.get("protocol"),
            "pref": int(lab.get("pref", -1)),
            "kind": lab.get("kind"),
            "handle": lab.get("handle"),
            "order": int(lab.get("order", -1)),
        }
        k = key_of(key_row)
        if (fam, k) in seen:
            problems.append("line %d: duplicate series of %s for %s (first on line %d)" % (
                n, m.group(1), fmt_key(k), seen[(fam, k)]))
            continue
        seen[(fam, k)] = n
        if block is not None and ("device" in lab or "parent" in lab):
            problems.append("line %d: block row with dev/parent labels" % n)
        if "netns" in lab and not lab["netns"]:
            problems.append("line %d: empty netns label" % n)
        extra = set(lab) - builtin - set(labels)
        missing = set(labels) - set(lab)
        if extra or missing:
            problems.append("line %d: unexpected labels %s, missing %s" % (
                n, sorted(extra), sorted(missing)))
        row = rows.setdefault(k, dict(key_row))
        row.update({"action": lab.get("action"), "cookie": lab.get("cookie")})
        row[fam] = int(m.group(3))
        row["_labels"] = {l: lab.get(l) for l in labels}
    fields = ("action", "cookie") + COUNTERS + ("hw_bytes", "hw_packets")
    # hw: auto (the default) leaves the hw_* families out while no row has
    # hardware counters: their rows then count 0, which tc must say too.
    present = {fam for fam, _ in seen}
    for k, r in rows.items():
        for fam in FAMILIES.values():
            if fam not in r and fam.startswith("hw_") and fam not in present:
                r[fam] = 0
            elif fam not in r:
                problems.append("%s: no sample in the %s family" % (fmt_key(k), fam))
        want_l = expected_labels(r, labels, cmap)
        if r["_labels"] != want_l:
            problems.append("labels of %s (cookie %r): tcexporter=%r expected=%r" % (
                fmt_key(k), r["cookie"], r["_labels"], want_l))
    problems += diff_rows(want, list(rows.values()), fields, "tcexporter")
    if args.check_filter_counts:
        for t in targets:
            tk = target_key(t)
            want_n = tc_filter_count(t)
            if tk not in n_filters:
                problems.append("no tc_scrape_collector_filters sample for target %r" % (tk,))
            elif n_filters[tk] != want_n:
                problems.append("tc_scrape_collector_filters for %r: tcexporter=%g tc=%d" % (
                    tk, n_filters[tk], want_n))
    for t in args.expect_text or []:
        if t not in text:
            problems.append("text %r does not appear in the output" % t)
    print("compared: %s" % summary(want))
    return report(problems, "prometheus " + args.exporter, len(want))


def cmd_snapshot(args):
    rows = truth(parse_targets(args))
    with open(args.output, "w") as f:
        json.dump(rows, f, indent=1, sort_keys=True)
    print("snapshot: %d rows (%s)" % (len(rows), summary(rows)))
    return 0


def cmd_same(args):
    with open(args.a) as f:
        a = json.load(f)
    with open(args.b) as f:
        b = json.load(f)
    problems = diff_rows(a, b, VALUE_FIELDS, args.b)
    if problems:
        print("tc counters changed between %s and %s: traffic was still flowing, the "
              "comparison is meaningless" % (args.a, args.b))
    return report(problems, "tc snapshots", len(a))


class TargetAction(argparse.Action):
    """--dev and --block: appended in order, with room for a --tc-json file."""

    def __call__(self, parser, namespace, values, option_string=None):
        targets = getattr(namespace, self.dest, None) or []
        targets.append([option_string.lstrip("-"), values, None, False])
        setattr(namespace, self.dest, targets)


class TcJsonAction(argparse.Action):
    """--tc-json FILE: for the target given just before it."""

    def __call__(self, parser, namespace, values, option_string=None):
        targets = getattr(namespace, self.dest, None) or []
        if not targets:
            parser.error("--tc-json must follow a --dev or --block target")
        if targets[-1][2] is not None:
            parser.error("two --tc-json files for one target")
        targets[-1][2] = values
        setattr(namespace, self.dest, targets)


class TerseAction(argparse.Action):
    """--terse: for the target given just before it."""

    def __call__(self, parser, namespace, values, option_string=None):
        targets = getattr(namespace, self.dest, None) or []
        if not targets:
            parser.error("--terse must follow a --dev or --block target")
        targets[-1][3] = True
        setattr(namespace, self.dest, targets)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    for name in ("snapshot", "json", "prom"):
        p = sub.add_parser(name)
        p.add_argument("--dev", nargs=4, action=TargetAction, dest="targets",
                       metavar=("NETNS", "DEV", "PARENT_LABEL", "TC_PARENT"))
        p.add_argument("--block", nargs=2, action=TargetAction, dest="targets",
                       metavar=("NETNS", "INDEX"))
        p.add_argument("--tc-json", action=TcJsonAction, dest="targets", metavar="FILE",
                       help="the previous target's `tc -s -j filter show` output, read "
                       "from FILE instead of running tc")
        if name == "snapshot":
            p.add_argument("-o", "--output", required=True)
            continue
        p.add_argument("--exporter", required=True, help="tcexporter's output")
        p.add_argument("--expect-rows", type=int,
                       help="action rows tc must list (before --unmapped-drop)")
        p.add_argument("--min-distinct-bytes", type=int, default=0,
                       help="distinct non-zero byte counters tc must show")
        p.add_argument("--require-nonzero", action="append", choices=COUNTERS,
                       help="some row must have this counter non-zero")
        p.add_argument("--labels", help="configured label names, comma-separated")
        p.add_argument("--cookie-map", help="JSON file: {cookie hex: {label: value}}")
        p.add_argument("--unmapped-drop", action="store_true",
                       help="the config drops rows whose cookie is not in the map")
        p.add_argument("--terse", action=TerseAction, nargs=0, dest="targets",
                       help="the previous target was dumped terse: accept a null action "
                       "index on its flower rows")
        if name == "prom":
            p.add_argument("--expect-text", action="append",
                           help="text that must appear verbatim in the output")
            p.add_argument("--check-filter-counts", action="store_true",
                           help="tc_scrape_collector_filters of each target equals the "
                           "number of filters tc lists")
    p = sub.add_parser("same")
    p.add_argument("a")
    p.add_argument("b")
    args = ap.parse_args()
    if not args.cmd:
        ap.error("give a subcommand")
    try:
        return {"snapshot": cmd_snapshot, "same": cmd_same, "json": cmd_json,
                "prom": cmd_prom}[args.cmd](args)
    except Mismatch as e:
        print("error: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
