#!/usr/bin/env python3
"""Compare tcexporter's qdisc and class rows with what tc reports.

tc is the ground truth, read from a capture directory:
    DIR/qdisc.json     tc -s -j qdisc show         (every device)
    DIR/qdisc.txt      tc -s qdisc show
    DIR/devices        the devices, one a line
    DIR/class.D.txt    tc -s class show dev D      for each of them (iproute2
                                                   6.1's class show ignores
                                                   -j, and wants a device)
`capture` writes one (running tc on the host); tests/vm/cases.sh writes the
same layout inside the VM. When the JSON does not parse, the qdiscs are read
from the text, which is allowed only where iproute2 6.1 is known to print
invalid JSON (hfsc's options) and only for kinds without statistics of their
own: then the generic counters are compared, backlog within tc's rounding
("2Kb" is 2048 +- 15).

Subcommands:
  capture DIR [--netns NS]          run tc for every device of the namespace
  same DIR1 DIR2                    the two captures give identical rows
  prom --tc DIR --exporter FILE     compare `tcexporter --once` text (or a
                                    /metrics body)
  json --tc DIR --exporter FILE     compare `tcexporter --once --format json`
  show --tc DIR                     print the rows tc gives (for the logs)

What is compared, for every qdisc and every class tc lists, and no other:
the # TYPE of every tc_qdisc_* and tc_class_* family (prom: counter for a
name ending in _total, gauge for any other), the identity (netns, device,
kind, handle, parent: "root", "ingress" or
"clsact" for those, else the parent as tc prints it), the generic counters
(bytes packets drops overlimits requeues backlog_bytes backlog_packets) and
every per-kind statistic tc prints (XSTATS below: tc's key -> the field of
tcexporter's family tc_qdisc_<kind>_<field> / tc_class_<kind>_<field>,
`_total` for counters, times in seconds; cake's tins as
tc_qdisc_cake_tin_<field>{tin="N"}). A statistic tc leaves out while it is 0
must be 0 in tcexporter when it is there. HTB's tokens and ctokens change
with time: compared within --tokens-slack seconds. An mq qdisc must equal
the sum of its children, in tc and in tcexporter. In the text output, labels
come in the order device, netns (only with --netns), kind, handle, parent,
then tin (cake's tins) or the configured user labels (classes); no series
appears twice. `--labels L1,L2 --class-map FILE` (JSON: {"DEV HANDLE":
{label: value}}) gives the user labels every class must carry (empty
when the map has no entry). `--xstats KIND:F1,F2` (a `families: xstats:` choice, the fields by
their names there: lends, tin_sent_bytes; `KIND:` for none) compares only
those fields of KIND, and any other field of KIND in tcexporter is a
problem. `--devices D1,D2` takes tc's rows of those
devices only (a `devices:` filter): a row of any other device in tcexporter
is EXTRA. `--device-series` (prom) also checks tc_scrape_device_success,
_qdiscs and _classes: one series each per device tc lists qdiscs on (of
--devices), and none for any other device; success 1, and the number of its
qdiscs and classes tc lists.
Standard library only; tests/integration/compare_tc.py's text parser.
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_tc import LABEL_RE, Mismatch, parse_labels, read_exporter_json, samples  # noqa: E402

GENERIC = ("bytes", "packets", "drops", "overlimits", "requeues", "backlog_bytes",
           "backlog_packets")
GENERIC_FAMILY = {"bytes": "bytes_total", "packets": "packets_total", "drops": "drops_total",
                  "overlimits": "overlimits_total", "requeues": "requeues_total",
                  "backlog_bytes": "backlog_bytes", "backlog_packets": "backlog_packets"}
KEY = ("netns", "device", "kind", "handle", "parent")

# Per-kind statistics: tc's key -> (tcexporter's field, counter?, scale, how tc
# prints it). The field is the uapi member (include/uapi/linux/pkt_sched.h;
# cake: TCA_CAKE_{,TIN_}STATS_* lower-cased, without the 64) with its unit
# (config/xstats.c's rule: _bytes, _seconds, ...). scale: tc's number times scale is tcexporter's
# ("us": microseconds, "ns", "tick": psched ticks of 64 ns, "p32": a fixed-point
# probability of which 2^32-1 is 1; 1 otherwise). The table agrees with the
# decoder's, config/xstats.c, for every field tc prints.
# how: "always"; "nz" (tc leaves it out while 0); "cond" (left out under some
# other condition: nothing to compare then); "bool" (true or left out: 1/0).
C, G = True, False
XSTATS = {
    ("qdisc", "fq_codel"): {
        "maxpacket": ("maxpacket_bytes", G, 1, "always"),
        "drop_overlimit": ("drop_overlimit", C, 1, "always"),
        "new_flow_count": ("new_flow_count", C, 1, "always"),
        "ecn_mark": ("ecn_mark", C, 1, "always"),
        "ce_mark": ("ce_mark", C, 1, "nz"),
        "memory_used": ("memory_usage_bytes", G, 1, "nz"),  # tc's name for memory_usage
        "drop_overmemory": ("drop_overmemory", C, 1, "nz"),
        "new_flows_len": ("new_flows_len", G, 1, "always"),
        "old_flows_len": ("old_flows_len", G, 1, "always"),
    },
    ("qdisc", "codel"): {
        "count": ("count_packets", G, 1, "always"),
        "lastcount": ("lastcount_packets", G, 1, "always"),
        "ldelay": ("ldelay_seconds", G, "us", "always"),
        "dropping": ("dropping", G, 1, "bool"),
        "drop_next": ("drop_next_seconds", G, "us", "always"),
        "maxpacket": ("maxpacket_bytes", G, 1, "always"),
        "ecn_mark": ("ecn_mark", C, 1, "always"),
        "drop_overlimit": ("drop_overlimit", C, 1, "always"),
        "ce_mark": ("ce_mark", C, 1, "nz"),
    },
    ("qdisc", "pie"): {
        "prob": ("prob_ratio", G, 1, "always"),  # a fraction of 1 in tc, as %g
        "delay": ("delay_seconds", G, "us", "always"),
        "avg_dq_rate": ("avg_dq_rate_bytes_per_second", G, 1, "cond"),
        "pkts_in": ("packets_in", C, 1, "always"),
        "overlimit": ("overlimit", C, 1, "always"),
        "dropped": ("dropped", C, 1, "always"),
        "maxq": ("maxq_packets", G, 1, "always"),
        "ecn_mark": ("ecn_mark", C, 1, "always"),
    },
    ("qdisc", "fq"): {
        "flows": ("flows", G, 1, "always"),
        "inactive": ("inactive_flows", G, 1, "always"),
        # tc prints "throttled" twice: throttled_flows first, then the counter
        "throttled#1": ("throttled_flows", G, 1, "always"),
        "throttled#2": ("throttled", C, 1, "always"),
        "next_packet_delay": ("time_next_delayed_flow_seconds", G, "ns", "cond"),
        "gc": ("gc_flows", C, 1, "always"),
        "highprio": ("highprio_packets", C, 1, "always"),
        "retrans": ("tcp_retrans", C, 1, "nz"),
        "latency": ("unthrottle_latency_seconds", G, "ns", "nz"),
        "ce_mark": ("ce_mark", C, 1, "nz"),
        "flows_plimit": ("flows_plimit", C, 1, "nz"),
        "pkts_too_long": ("pkts_too_long", C, 1, "nz"),
        "alloc_errors": ("allocation_errors", C, 1, "nz"),
        "horizon_drops": ("horizon_drops", C, 1, "nz"),
        "horizon_caps": ("horizon_caps", C, 1, "nz"),
    },
    ("qdisc", "cake"): {
        "memory_used": ("memory_used_bytes", G, 1, "cond"),
        "memory_limit": ("memory_limit_bytes", G, 1, "cond"),
        "capacity_estimate": ("capacity_estimate_bytes_per_second", G, 1, "cond"),
        "min_network_size": ("min_netlen_bytes", G, 1, "cond"),
        "max_network_size": ("max_netlen_bytes", G, 1, "cond"),
        "min_adj_size": ("min_adjlen_bytes", G, 1, "cond"),
        "max_adj_size": ("max_adjlen_bytes", G, 1, "cond"),
        "avg_hdr_offset": ("avg_netoff_bytes", G, 1, "cond"),
    },
    ("tin", "cake"): {
        "threshold_rate": ("threshold_rate_bytes_per_second", G, 1, "cond"),
        "sent_bytes": ("sent_bytes", C, 1, "cond"),
        "backlog_bytes": ("backlog_bytes", G, 1, "cond"),
        "target_us": ("target_seconds", G, "us", "cond"),
        "interval_us": ("interval_seconds", G, "us", "cond"),
        "peak_delay_us": ("peak_delay_seconds", G, "us", "cond"),
        "avg_delay_us": ("avg_delay_seconds", G, "us", "cond"),
        "base_delay_us": ("base_delay_seconds", G, "us", "cond"),
        "sent_packets": ("sent_packets", C, 1, "cond"),
        "way_indirect_hits": ("way_indirect_hits", C, 1, "cond"),
        "way_misses": ("way_misses", C, 1, "cond"),
        "way_collisions": ("way_collisions", C, 1, "cond"),
        "drops": ("dropped_packets", C, 1, "cond"),
        "ecn_mark": ("ecn_marked_packets", C, 1, "cond"),
        "ack_drops": ("acks_dropped_packets", C, 1, "cond"),
        "sparse_flows": ("sparse_flows", G, 1, "cond"),
        "bulk_flows": ("bulk_flows", G, 1, "cond"),
        "unresponsive_flows": ("unresponsive_flows", G, 1, "cond"),
        "max_pkt_len": ("max_skblen_bytes", G, 1, "cond"),
        "flow_quantum": ("flow_quantum_bytes", G, 1, "cond"),
    },
    ("qdisc", "red"): {
        "marked": ("marked", C, 1, "always"),
        "early": ("early", C, 1, "always"),
        "pdrop": ("pdrop", C, 1, "always"),
        "other": ("other", C, 1, "always"),
    },
    # Classes: from tc's text (see CLASS_XSTATS_RE).
    ("class", "htb"): {
        "lended": ("lends", C, 1, "always"),
        "borrowed": ("borrows", C, 1, "always"),
        "giants": ("giants", C, 1, "always"),
        "tokens": ("tokens_seconds", G, "tick", "always"),
        "ctokens": ("ctokens_seconds", G, "tick", "always"),
    },
    ("class", "hfsc"): {
        "period": ("period", C, 1, "always"),
        "work": ("work_bytes", C, 1, "nz"),
        "rtwork": ("rtwork_bytes", C, 1, "nz"),
        "level": ("level", G, 1, "always"),
    },
    ("class", "sfq"): {"allot": ("allot_bytes", G, 1, "always")},
    ("class", "fq_codel"): {
        "deficit": ("deficit_bytes", G, 1, "always"),
        "count": ("count_packets", G, 1, "always"),
        "lastcount": ("lastcount_packets", G, 1, "always"),
        "dropping": ("dropping", G, 1, "bool"),
    },
    ("class", "cake"): {
        "deficit": ("deficit_bytes", G, 1, "always"),
        "count": ("cobalt_count_packets", G, 1, "always"),
        "dropping": ("dropping", G, 1, "bool"),
        "blue_prob": ("p_drop_ratio", G, "p32", "cond"),  # tc: the u32; a ratio of 1
    },
}
SCALE = {1: 1, "us": 1e-6, "ns": 1e-9, "tick": 64e-9, "p32": 1 / 4294967295}
TOLERANT = {("class", "htb", "tokens_seconds"), ("class", "htb", "ctokens_seconds")}
# Kinds whose qdisc JSON iproute2 6.1 prints invalid (options with fprintf).
BAD_JSON_KINDS = {"hfsc"}


# ---- tc --------------------------------------------------------------------------------------


def run_tc(netns, args):
    cmd = ["tc"] + (["-n", netns] if netns else []) + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise Mismatch("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return p.stdout


def cmd_capture(args):
    os.makedirs(args.dir, exist_ok=True)
    cmd = ["ip"] + (["-n", args.netns] if args.netns else []) + ["-j", "link", "show"]
    links = json.loads(subprocess.run(cmd, stdout=subprocess.PIPE, check=True,
                                      universal_newlines=True).stdout)
    devs = [l["ifname"] for l in links]
    files = [("qdisc.json", ["-s", "-j", "qdisc", "show"]), ("qdisc.txt", ["-s", "qdisc", "show"])]
    files += [("class.%s.txt" % d, ["-s", "class", "show", "dev", d]) for d in devs]
    for name, a in files:
        with open(os.path.join(args.dir, name), "w") as f:
            f.write(run_tc(args.netns, a))
    with open(os.path.join(args.dir, "devices"), "w") as f:
        f.write("".join(d + "\n" for d in devs))
    return 0


def pairs_hook(pairs):
    """json object_pairs_hook: a key that comes again is KEY#2, KEY#3 (fq's
    two "throttled"); the first stays KEY and is also KEY#1."""
    out, seen = {}, {}
    for k, v in pairs:
        seen[k] = seen.get(k, 0) + 1
        if seen[k] == 1:
            out[k] = v
            out[k + "#1"] = v
        else:
            out["%s#%d" % (k, seen[k])] = v
    return out


def qdisc_parent(kind, root, parent):
    if root:
        return "root"
    if parent == "ffff:fff1" and kind in ("ingress", "clsact"):
        return kind
    return parent


def xstats_of(table, kind, src, where, problems):
    """The statistics tc printed for (table, kind) from src (tc's keys), as
    {field: (value, how)}, plus every field tc could have printed as
    (None, how) when it did not."""
    spec = XSTATS.get((table, kind), {})
    out = {}
    for key, (field, _counter, scale, how) in spec.items():
        base = key.split("#")[0]
        if key in src or (key == base and base in src):
            v = src[key]
            if how == "bool":
                v = 1 if v is True else v
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                problems.append("%s: tc's %s is %r, not a number" % (where, key, v))
                continue
            out[field] = (v * SCALE[scale] if scale != 1 else v, how)
        else:
            out[field] = (None, how)
    return out


# tc's own keys of a qdisc object that are not statistics.
QDISC_KEYS = {"kind", "handle", "root", "refcnt", "parent", "dev", "options", "bytes", "packets",
              "drops", "overlimits", "requeues", "backlog", "qlen", "ingress_block",
              "egress_block", "offloaded", "tins"}


def qdiscs_from_json(ns, entries, problems):
    rows = []
    for e in entries:
        kind, dev = e["kind"], e.get("dev")
        where = "tc: qdisc %s %s dev %s" % (kind, e["handle"], dev)
        if not dev:
            problems.append("%s: no \"dev\" key in tc's JSON" % where)
        row = {"netns": ns, "device": dev, "kind": kind, "handle": e["handle"],
               "parent": qdisc_parent(kind, e.get("root"), e.get("parent")),
               "bytes": e["bytes"], "packets": e["packets"], "drops": e["drops"],
               "overlimits": e["overlimits"], "requeues": e["requeues"],
               "backlog_bytes": e["backlog"], "backlog_packets": e["qlen"],
               "xstats": xstats_of("qdisc", kind, e, where, problems)}
        known = {k.split("#")[0] for k in XSTATS.get(("qdisc", kind), {})}
        for k in e:
            if k.split("#")[0] not in QDISC_KEYS | known:
                problems.append("%s: tc prints %r, which this comparator does not map "
                                "(extend XSTATS)" % (where, k))
        if "tins" in e:
            row["tins"] = [xstats_of("tin", kind, t, "%s tin %d" % (where, i), problems)
                           for i, t in enumerate(e["tins"])]
            for i, t in enumerate(e["tins"]):
                for k in t:
                    if k.split("#")[0] not in XSTATS[("tin", kind)]:
                        problems.append("%s tin %d: tc prints %r, which this comparator does "
                                        "not map" % (where, i, k))
        rows.append(row)
    return rows


# Text: the generic statistics of a qdisc or a class.
SENT_RE = re.compile(r"^\s*Sent (\d+) bytes (\d+) pkts? \(dropped (\d+), overlimits (\d+)"
                     r"(?: requeues (\d+))?\)")
QUEUE_RE = re.compile(r"^\s*\(dropped (\d+), overlimits (\d+) requeues (\d+)\)")
BACKLOG_RE = re.compile(r"^\s*(?:rate \S+ \S+ )?backlog (\d+)(b|Kb|Mb) (\d+)p requeues (\d+)")
QDISC_HEAD_RE = re.compile(r"^qdisc (\S+) (\S+) (?:dev (\S+) )?(root|parent (\S+))")
CLASS_HEAD_RE = re.compile(r"^class (\S+) (\S+) ()(root|parent (\S+))")


def backlog_value(n, unit):
    """tc's backlog text: an exact byte count, or the range that rounds to it."""
    n = int(n)
    if unit == "b":
        return n
    mult, slack = (1024, 16) if unit == "Kb" else (1024 * 1024, 1024)
    return ("range", n * mult - slack + 1, n * mult + slack - 1)


def parse_text(ns, dev, text, table, problems):
    """Rows of `tc -s qdisc show` or `tc -s class show dev DEV` text (a
    qdisc line names its device); class rows get the statistics of
    CLASS_XSTATS_RE."""
    rows, row = [], None
    head = QDISC_HEAD_RE if table == "qdisc" else CLASS_HEAD_RE
    for line in text.split("\n"):
        m = head.match(line)
        if m:
            kind, handle = m.group(1), m.group(2)
            parent = "root" if m.group(4) == "root" else m.group(5)
            if table == "qdisc":
                parent = qdisc_parent(kind, parent == "root", parent)
            row = {"netns": ns, "device": m.group(3) or dev, "kind": kind, "handle": handle,
                   "parent": parent,
                   "xstats": {}, "_text": []}
            # A class without statistics (tbf's): the kernel's are all 0.
            row.update({g: 0 for g in GENERIC})
            rows.append(row)
            continue
        if row is None or not line.strip():
            continue
        m = SENT_RE.match(line)
        if m:
            row.update(bytes=int(m.group(1)), packets=int(m.group(2)), drops=int(m.group(3)),
                       overlimits=int(m.group(4)))
            if m.group(5) is not None:
                row["requeues"] = int(m.group(5))
            continue
        m = QUEUE_RE.match(line)  # statistics without the basic ones (fq_codel's flows)
        if m:
            row.update(drops=int(m.group(1)), overlimits=int(m.group(2)),
                       requeues=int(m.group(3)))
            continue
        m = BACKLOG_RE.match(line)
        if m:
            row.update(backlog_bytes=backlog_value(m.group(1), m.group(2)),
                       backlog_packets=int(m.group(3)))
            continue
        row["_text"].append(line)
    for r in rows:
        if table == "class":
            r["xstats"] = class_xstats(r, problems)
        del r["_text"]
    return rows


# Class statistics as tc prints them: "KEY: N" (htb) or "KEY N" pairs.
CLASS_XSTATS_RE = re.compile(r"([a-z_]+):? (-?\d+)(?= |$)")


def class_xstats(row, problems):
    spec = XSTATS.get(("class", row["kind"]))
    if not spec:
        return {}
    src = {}
    for line in row["_text"]:
        words = line.split()
        if row["kind"] == "hfsc":  # period N work N bytes rtwork N bytes level N
            words = [w for w in words if w != "bytes"]
        for m in CLASS_XSTATS_RE.finditer(" ".join(words)):
            if m.group(1) in spec:
                src[m.group(1)] = int(m.group(2))
        if "dropping" in words:
            src["dropping"] = True
    where = "tc: class %s %s dev %s" % (row["kind"], row["handle"], row["device"])
    if not src:
        problems.append("%s: no statistics of its kind in tc's text %r" % (where, row["_text"]))
    return xstats_of("class", row["kind"], src, where, problems)


def read_capture(d, ns):
    """(qdisc rows, class rows, notes) of a capture directory."""
    problems, notes, classes = [], [], []
    with open(os.path.join(d, "qdisc.json")) as f:
        jtext = f.read().strip()
    try:
        entries = json.loads(jtext, object_pairs_hook=pairs_hook) if jtext else []
        qdiscs = qdiscs_from_json(ns, entries, problems)
    except ValueError as e:
        with open(os.path.join(d, "qdisc.txt")) as f:
            qdiscs = parse_text(ns, None, f.read(), "qdisc", problems)
        kinds = {r["kind"] for r in qdiscs}
        if not kinds & BAD_JSON_KINDS:
            problems.append("tc -s -j qdisc show: not JSON (%s), and no qdisc of a kind known "
                            "to print invalid JSON" % e)
        for k in sorted(kinds):
            if ("qdisc", k) in XSTATS or ("tin", k) in XSTATS:
                problems.append("tc's JSON is invalid (%s), and the text has no %s statistics "
                                "to compare: put the %s qdiscs in another namespace" % (
                                    ", ".join(sorted(kinds & BAD_JSON_KINDS)), k,
                                    ", ".join(sorted(kinds & BAD_JSON_KINDS))))
        notes.append("tc's JSON is invalid (%s): the qdiscs read from the text" % ", ".join(
            sorted(kinds & BAD_JSON_KINDS)))
    with open(os.path.join(d, "devices")) as f:
        devs = [l.strip() for l in f if l.strip()]
    for dev in devs:
        with open(os.path.join(d, "class.%s.txt" % dev)) as f:
            classes += parse_text(ns, dev, f.read(), "class", problems)
    if problems:
        raise Mismatch("the tc capture in %s:\n  %s" % (d, "\n  ".join(problems)))
    return qdiscs, classes, notes


def key_of(r):
    return tuple(r.get(k) for k in KEY)


def fmt_key(table, k):
    d = dict(zip(KEY, k))
    return "%s %s %s dev %s%s parent %s" % (table, d["kind"], d["handle"], d["device"],
                                           " netns " + d["netns"] if d["netns"] else "",
                                           d["parent"])


# ---- checks ---------------------------------------------------------------------------------


def check_mq(table_rows, who, problems):
    """Every mq qdisc equals the sum of its children."""
    for r in table_rows:
        if r["kind"] != "mq":
            continue
        major = r["handle"].split(":")[0]
        kids = [c for c in table_rows if c is not r and c["netns"] == r["netns"]
                and c["device"] == r["device"] and c["parent"] not in ("root", "ingress", "clsact")
                and c["parent"].split(":")[0] == major]
        if not kids:
            problems.append("%s: mq %s dev %s has no children" % (who, r["handle"], r["device"]))
            continue
        for g in GENERIC:
            vals = [c.get(g) for c in kids]
            if any(isinstance(v, tuple) or v is None for v in vals + [r.get(g)]):
                continue
            if sum(vals) != r[g]:
                problems.append("%s: mq %s dev %s: %s %r, its %d children sum to %r" % (
                    who, r["handle"], r["device"], g, r[g], len(kids), sum(vals)))


def equal(want, got, field, tolerant, slack):
    if got is None:
        return False
    if isinstance(want, tuple):  # tc's rounded backlog text
        return want[1] <= got <= want[2]
    if tolerant:
        return abs(got - want) <= slack
    if isinstance(want, int) and isinstance(got, int):
        return want == got
    return abs(got - want) <= 1e-12 + 1e-6 * abs(want)


def compare(table, want_rows, got, args, problems):
    """got: {key: {"generic": {field: v}, "xstats": {field: v}, "tins": [{...}],
    "labels": {...}}} from the exporter."""
    want = {}
    for r in want_rows:
        k = key_of(r)
        if k in want:
            problems.append("tc lists %s twice" % fmt_key(table, k))
        want[k] = r
    for k in sorted(want.keys() - got.keys(), key=repr):
        w = want[k]
        problems.append("MISSING from tcexporter: %s (tc: %s)" % (
            fmt_key(table, k), ", ".join("%s=%r" % (g, w[g]) for g in GENERIC)))
    for k in sorted(got.keys() - want.keys(), key=repr):
        problems.append("EXTRA in tcexporter: %s (tc lists no such %s%s)" % (
            fmt_key(table, k), table, " on --devices" if args.devices is not None else ""))
    for k in sorted(want.keys() & got.keys(), key=repr):
        w, g = want[k], got[k]
        bad = []
        for f in GENERIC:
            if not equal(w[f], g["generic"].get(f), f, False, 0):
                bad.append("%s: tcexporter=%r tc=%r" % (f, g["generic"].get(f), w[f]))
        sets = [("", w["xstats"], g["xstats"], table)]
        chosen = args.xstats_chosen.get(w["kind"])
        if chosen is not None:
            # `families: xstats:` chose these fields of the kind: tc's others
            # are not compared, and tcexporter must have none of them
            tin_chosen = {f[4:] for f in chosen if f.startswith("tin_")}
            for f in sorted(set(g["xstats"]) - chosen):
                bad.append("%s: in tcexporter, not chosen (--xstats)" % f)
            for i, t in enumerate(g.get("tins", [])):
                for f in sorted(set(t) - tin_chosen):
                    bad.append("tin %d %s: in tcexporter, not chosen (--xstats)" % (i, f))
            sets = [("", {f: v for f, v in w["xstats"].items() if f in chosen}, g["xstats"],
                     table)]
            if not tin_chosen and "tins" in w:
                w = dict(w)
                del w["tins"]
                if g.get("tins"):
                    bad.append("tins: in tcexporter, no tin field chosen (--xstats)")
            elif "tins" in w:
                w = dict(w, tins=[{f: v for f, v in t.items() if f in tin_chosen}
                                  for t in w["tins"]])
        if "tins" in w:
            if len(g.get("tins", [])) != len(w["tins"]):
                bad.append("tins: tcexporter has %d, tc %d" % (len(g.get("tins", [])),
                                                              len(w["tins"])))
            for i, t in enumerate(w["tins"]):
                gt = g["tins"][i] if i < len(g.get("tins", [])) else {}
                sets.append(("tin %d " % i, t, gt, "tin"))
        for prefix, wx, gx, tb in sets:
            for f, (v, how) in sorted(wx.items()):
                tol = (table, w["kind"], f) in TOLERANT
                if v is None:
                    if how in ("nz", "bool") and f in gx and gx[f] != 0:
                        bad.append("%s%s: tcexporter=%r, tc leaves it out (0)" % (prefix, f,
                                                                                  gx[f]))
                    continue
                if not equal(v, gx.get(f), f, tol, args.tokens_slack):
                    bad.append("%s%s: tcexporter=%r tc=%r%s" % (
                        prefix, f, gx.get(f), v, " (within %g)" % args.tokens_slack if tol
                        else ""))
        if table == "class" and args.labels is not None:
            lw = expected_labels(args, w)
            if g.get("labels") != lw:
                bad.append("labels: tcexporter=%r expected=%r" % (g.get("labels"), lw))
        if bad:
            problems.append("DIFFERENT %s: %s" % (fmt_key(table, k), "; ".join(bad)))


def expected_labels(args, row):
    names = [n for n in args.labels.split(",") if n]
    mapped = args.class_map_data.get("%s %s" % (row["device"], row["handle"]), {})
    return {n: mapped.get(n, "") for n in names}


def check_requires(want, args, problems):
    """--require TABLE:KIND:FIELD: some row tc lists has FIELD non-zero (a
    generic counter, a statistic, or tin.FIELD)."""
    for spec in args.require or []:
        table, kind, field = spec.split(":")
        found = False
        for r in want[table]:
            if r["kind"] != kind:
                continue
            if field.startswith("tin."):
                vals = [t.get(field[4:], (None,))[0] for t in r.get("tins", [])]
            elif field in GENERIC:
                vals = [r[field]]
            else:
                vals = [r["xstats"].get(field, (None,))[0]]
            if any(v not in (None, 0) for v in vals):
                found = True
        if not found:
            problems.append("tc shows no %s %s with a non-zero %s: the comparison would "
                            "prove less than the test claims" % (table, kind, field))
    for r in want["qdisc"]:
        if args.expect_tins is not None and r["kind"] == "cake" and len(r.get("tins", [])) != \
                args.expect_tins:
            problems.append("tc shows %d tins on cake %s dev %s, the test set up %d" % (
                len(r.get("tins", [])), r["handle"], r["device"], args.expect_tins))
    for table, n in (("qdisc", args.expect_qdiscs), ("class", args.expect_classes)):
        if n is not None and len(want[table]) != n:
            problems.append("tc lists %d %ss, the test set up %d" % (len(want[table]), table, n))
    if not want["qdisc"]:
        problems.append("tc lists no qdisc at all: the comparison would be vacuous")


# ---- tcexporter's outputs -------------------------------------------------------------------


def number(text):
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def family_maps(table):
    """{family name: (kind or None, field, "generic"|"xstats"|"tin")} for every
    family this comparator knows of the table."""
    out = {"tc_%s_%s" % (table, fam): (None, g, "generic") for g, fam in GENERIC_FAMILY.items()}
    for (tb, kind), spec in XSTATS.items():
        if tb == table or (tb == "tin" and table == "qdisc"):
            for field, counter, _s, _h in spec.values():
                name = "tc_%s_%s_%s%s%s" % (table, kind, "tin_" if tb == "tin" else "", field,
                                            "_total" if counter else "")
                out[name] = (kind, field, "tin" if tb == "tin" else "xstats")
    return out


def read_prom(path, args, problems):
    """{table: {key: {...}}} from a text exposition."""
    with open(path) as f:
        text = f.read()
    fams = {t: family_maps(t) for t in ("qdisc", "class")}
    user = [n for n in (args.labels or "").split(",") if n]
    got = {"qdisc": {}, "class": {}}
    seen = {}
    unknown = set()
    # "# TYPE": a family ending in _total is a counter (OpenMetrics names
    # the family without it), every other one a gauge.
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    typed = set()
    for n, m in samples(text, problems):
        name = m.group(1)
        table = "qdisc" if name.startswith("tc_qdisc_") else (
            "class" if name.startswith("tc_class_") else None)
        if table is None:
            continue
        if name not in typed:
            typed.add(name)
            t = types.get(name)
            if t is None and name.endswith("_total"):
                t = types.get(name[:-len("_total")])
            if t is None and name.endswith("_info"):  # OpenMetrics: the family without _info
                t = types.get(name[:-len("_info")])
            want_t = "counter" if name.endswith("_total") else (
                "info" if name.endswith("_info") and t == "info" else "gauge")
            if t != want_t:
                problems.append("line %d: %s has # TYPE %s, expected %s" % (n, name, t, want_t))
        ident = (name, m.group(2))
        if ident in seen:
            problems.append("line %d: the series %s{%s} again (first on line %d)" % (
                n, name, m.group(2), seen[ident]))
            continue
        seen[ident] = n
        if name not in fams[table]:
            unknown.add(name)
            continue
        kind, field, where = fams[table][name]
        lab = parse_labels(m.group(2) or "", "line %d" % n)
        order = [x.group(1) for x in LABEL_RE.finditer(m.group(2) or "")]
        want_order = ["device"] + (["netns"] if "netns" in lab else []) + [
            "kind", "handle", "parent"] + (["tin"] if where == "tin" else []) + (
            user if table == "class" else [])
        if order != want_order:
            problems.append("line %d: labels %s, expected %s" % (n, order, want_order))
        if "netns" in lab and not lab["netns"]:
            problems.append("line %d: an empty netns label" % n)
        if kind is not None and lab.get("kind") != kind:
            problems.append("line %d: %s on a row of kind %r" % (n, name, lab.get("kind")))
        k = tuple(lab.get(x, "") for x in KEY)
        row = got[table].setdefault(k, {"generic": {}, "xstats": {}, "tins": [],
                                        "labels": {u: lab.get(u) for u in user}})
        v = number(m.group(3))
        if where == "generic":
            row["generic"][field] = v
        elif where == "xstats":
            row["xstats"][field] = v
        else:
            i = int(lab.get("tin", -1))
            if i < 0:
                problems.append("line %d: a tin family without a tin label" % n)
                continue
            while len(row["tins"]) <= i:
                row["tins"].append({})
            row["tins"][i][field] = v
    for table in got:
        for k, r in got[table].items():
            missing = [g for g in GENERIC if g not in r["generic"]]
            if missing:
                problems.append("%s: no sample in %s" % (fmt_key(table, k), ", ".join(
                    "tc_%s_%s" % (table, GENERIC_FAMILY[g]) for g in missing)))
    # Families tc prints nothing for (fields iproute2 6.1 does not show):
    # listed, not compared.
    if unknown:
        print("note: families not compared (tc does not print them): " + ", ".join(
            sorted(unknown)))
    return got


def read_json(path, args, problems):
    _a, qd, cl = read_exporter_json(path)
    got = {"qdisc": {}, "class": {}}
    for table, objs in (("qdisc", qd), ("class", cl)):
        for o in objs:
            if not isinstance(o, dict):
                problems.append("%s: an item of the %ss array is not an object: %r" % (
                    path, table, o))
                continue
            for f in KEY:
                if not isinstance(o.get(f), str):
                    problems.append("%s object without the string %r: %r" % (table, f, o))
            for f in GENERIC:
                if not isinstance(o.get(f), int) or isinstance(o.get(f), bool):
                    problems.append("%s object: %r is not an integer: %r" % (table, f, o))
            x = o.get("xstats")
            if not isinstance(x, dict):
                problems.append("%s object without an xstats object: %r" % (table, o))
                x = {}
            if table == "class" and not isinstance(o.get("labels"), dict):
                problems.append("class object without a labels object: %r" % o)
            k = tuple(o.get(f) if o.get(f) is not None else "" for f in KEY)
            if k in got[table]:
                problems.append("%s twice in the JSON output" % fmt_key(table, k))
            # a tin's fields with or without the tin_ of their family name
            tins = [{(f[4:] if f.startswith("tin_") else f): v for f, v in t.items()}
                    for t in x.get("tins", []) if isinstance(t, dict)]
            got[table][k] = {"generic": {f: o.get(f) for f in GENERIC},
                             "xstats": {f: v for f, v in x.items() if f != "tins"},
                             "tins": tins, "labels": o.get("labels")}
    return got


def load_truth(args):
    qdiscs, classes, notes = read_capture(args.tc, args.netns or "")
    for n in notes:
        print("note: " + n)
    if args.devices is not None:
        keep = set(args.devices.split(","))
        qdiscs = [r for r in qdiscs if r["device"] in keep]
        classes = [r for r in classes if r["device"] in keep]
        missing = keep - {r["device"] for r in qdiscs}
        if missing:
            raise Mismatch("--devices %s: tc lists no qdisc on %s" % (
                args.devices, ", ".join(sorted(missing))))
    want = {"qdisc": qdiscs, "class": classes}
    if args.class_kinds is not None:
        keep = set(args.class_kinds.split(","))
        want["class"] = [c for c in classes if c["kind"] in keep]
    return want


DEVICE_SERIES = ("tc_scrape_device_success", "tc_scrape_device_qdiscs",
                 "tc_scrape_device_classes")


def check_device_series(path, want, args, problems):
    """tc_scrape_device_*: exactly the devices of want's qdiscs, each
    collected in full with tc's numbers of qdiscs and classes."""
    expect = {}
    for table in ("qdisc", "class"):
        for r in want[table]:
            d = expect.setdefault((r["netns"], r["device"]), {
                "tc_scrape_device_success": 1, "tc_scrape_device_qdiscs": 0,
                "tc_scrape_device_classes": 0})
            d["tc_scrape_device_" + {"qdisc": "qdiscs", "class": "classes"}[table]] += 1
    got = {}
    with open(path) as f:
        text = f.read()
    for n, m in samples(text, problems):
        if m.group(1) not in DEVICE_SERIES:
            continue
        lab = parse_labels(m.group(2) or "", "line %d" % n)
        d = got.setdefault((lab.get("netns", ""), lab.get("device")), {})
        if m.group(1) in d:
            problems.append("line %d: %s{%s} again" % (n, m.group(1), m.group(2)))
        d[m.group(1)] = number(m.group(3))
    for k in sorted(expect.keys() | got.keys(), key=repr):
        where = "tc_scrape_device_* of device %s%s" % (k[1], " netns " + k[0] if k[0] else "")
        if k not in got:
            problems.append("MISSING from tcexporter: %s (tc: %r)" % (where, expect[k]))
        elif k not in expect:
            problems.append("EXTRA in tcexporter: %s %r (a device not collected)" % (where,
                                                                                   got[k]))
        elif got[k] != expect[k]:
            problems.append("DIFFERENT %s: tcexporter=%r expected=%r" % (where, got[k],
                                                                        expect[k]))
    if not problems:
        print("%s: tc_scrape_device_* of %d devices as tc lists them" % (path, len(expect)))


def run_compare(args, reader):
    args.xstats_chosen = {}
    for spec in args.xstats or []:
        kind, _c, fields = spec.partition(":")
        args.xstats_chosen[kind] = {f for f in fields.split(",") if f}
    args.class_map_data = {}
    if args.class_map:
        with open(args.class_map) as f:
            args.class_map_data = json.load(f)
    want = load_truth(args)
    problems = []
    if getattr(args, "device_series", False):
        check_device_series(args.exporter, want, args, problems)
    check_requires(want, args, problems)
    check_mq(want["qdisc"], "tc", problems)
    got = reader(args.exporter, args, problems)
    if args.class_kinds is not None:
        keep = set(args.class_kinds.split(","))
        got["class"] = {k: v for k, v in got["class"].items() if k[2] in keep}
    mq_rows = [dict(zip(KEY, k), **v["generic"]) for k, v in got["qdisc"].items()]
    check_mq(mq_rows, "tcexporter", problems)
    for table in ("qdisc", "class"):
        compare(table, want[table], got[table], args, problems)
    what = "%s %s" % (args.cmd, args.exporter)
    if problems:
        print("%s: %d problem(s):" % (what, len(problems)))
        for p in problems:
            print("  " + p)
        return 1
    print("%s: %d qdiscs and %d classes identical to tc (%s)" % (
        what, len(want["qdisc"]), len(want["class"]), summary(want)))
    return 0


def summary(want):
    kinds = {}
    for table in ("qdisc", "class"):
        for r in want[table]:
            kinds["%s %s" % (table, r["kind"])] = kinds.get("%s %s" % (table, r["kind"]), 0) + 1
    return ", ".join("%s: %d" % kv for kv in sorted(kinds.items()))


def cmd_same(args):
    a = read_capture(args.a, "")[:2]
    b = read_capture(args.b, "")[:2]
    if a == b:
        print("tc captures %s and %s: identical" % (args.a, args.b))
        return 0
    print("tc captures %s and %s differ: a counter moved, the comparison would be "
          "meaningless" % (args.a, args.b))
    for table, ra, rb in (("qdisc", a[0], b[0]), ("class", a[1], b[1])):
        ia = {key_of(r): r for r in ra}
        for r in rb:
            if ia.get(key_of(r)) != r:
                print("  %s: %r -> %r" % (fmt_key(table, key_of(r)), ia.get(key_of(r)), r))
    return 1


def cmd_show(args):
    want = load_truth(args)
    for table in ("qdisc", "class"):
        for r in want[table]:
            xs = ", ".join("%s=%s" % (f, v) for f, (v, _h) in sorted(r["xstats"].items())
                           if v is not None)
            print("%s: %s%s" % (fmt_key(table, key_of(r)), ", ".join(
                "%s=%s" % (g, r[g]) for g in GENERIC), "; " + xs if xs else ""))
            for i, t in enumerate(r.get("tins", [])):
                print("    tin %d: %s" % (i, ", ".join("%s=%s" % (f, v) for f, (v, _h) in
                                                       sorted(t.items()) if v is not None)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    p = sub.add_parser("capture")
    p.add_argument("dir")
    p.add_argument("--netns", default="")
    p = sub.add_parser("same")
    p.add_argument("a")
    p.add_argument("b")
    for name in ("prom", "json", "show"):
        p = sub.add_parser(name)
        p.add_argument("--tc", required=True, help="capture directory")
        p.add_argument("--netns", default="", help="the netns label of every row")
        p.add_argument("--class-kinds", help="compare only the classes of these kinds "
                       "(comma-separated; default: every class tc lists)")
        p.add_argument("--devices", help="the rows of these devices only (comma-separated; "
                       "default: every device)")
        if name == "prom":
            p.add_argument("--device-series", action="store_true",
                           help="check tc_scrape_device_* against tc's devices too")
        if name == "show":
            continue
        p.add_argument("--exporter", required=True)
        p.add_argument("--require", action="append", metavar="TABLE:KIND:FIELD",
                       help="some row tc lists has FIELD non-zero (tin.FIELD for cake)")
        p.add_argument("--expect-qdiscs", type=int)
        p.add_argument("--expect-classes", type=int)
        p.add_argument("--expect-tins", type=int, help="tins of every cake qdisc")
        p.add_argument("--tokens-slack", type=float, default=1e-3,
                       help="seconds HTB tokens may differ by (default 0.001)")
        p.add_argument("--labels", help="configured user labels, comma-separated")
        p.add_argument("--class-map", help='JSON: {"DEV HANDLE": {label: value}}')
        p.add_argument("--xstats", action="append", metavar="KIND:FIELD,...",
                       help="the fields `families: xstats:` chose of KIND (its names: "
                       "tin_sent_bytes, lends; KIND: none): only those are compared, and "
                       "tcexporter must show no other")
    args = ap.parse_args()
    if not args.cmd:
        ap.error("give a subcommand")
    try:
        if args.cmd == "capture":
            return cmd_capture(args)
        if args.cmd == "same":
            return cmd_same(args)
        if args.cmd == "show":
            return cmd_show(args)
        return run_compare(args, read_prom if args.cmd == "prom" else read_json)
    except Mismatch as e:
        print("error: %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
