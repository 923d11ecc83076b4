#!/usr/bin/env python3
"""Checks of the SNMP tests (tests/snmp/*.sh): parses an snmpbulkwalk of the
TCEXPORTER-MIB subtree, `tc -s -j filter show` output and the daemon's
/metrics text, and compares them. Standard library only.

Walk files come from `snmpbulkwalk -v2c -On -Ox` (numeric OIDs, octet
strings in hex).

Subcommands (exit 0 when every check passes, 1 with the reasons otherwise):

  check-walk --walk W --tc DEV PARENT TCJSON [--tc ...] --metrics M
             [--labels a,b --cookie-map JSON] [--min-bytes N]
      the action table holds exactly the actions tc lists, with equal
      counters, cookie, kinds and ifIndex; /metrics has the same rows and
      counters; the label table has the right names and values (the cookie
      map, "" for an unmapped cookie) and they equal /metrics' labels; the
      scalars say rows = number of rows, status ok(1), 0 targets failed;
      every column has its SMI type, the times' columns included (tc's
      rules are dumped in full: every row has its times). --min-bytes: some
      row's bytes must be at least N (a Counter64 above 2^32).

  check-times --walk W --metrics M [--used HEX,...] [--unused HEX,...]
              [--no-times HEX,...] [--installed-between T0 T1]
              [--used-between T0 T1]
      the times' columns of the action table against the
      tc_action_*_timestamp_seconds of /metrics M of the same collection
      pass (the caller makes sure of that): tcxActionInstallTime and
      tcxActionLastUseTime are 11-octet DateAndTimes in UTC ('+', 0, 0)
      of the /metrics time truncated to the deci-second (0 <= /metrics -
      SNMP < 0.1 s), tcxActionNeverUsed is true(1) exactly when /metrics has
      no first-use sample of the row and false(2) otherwise, and a row
      without an install time in /metrics has no instance in the three.
      --used, --unused: the rows of these cookies have never-used false(2),
      true(1) (and then a last use equal to the install time); --no-times:
      these rows have no times; --installed-between: every row with times
      was installed between T0 and T1 (Unix seconds, the deci-second of T0
      included); --used-between: the last use of each --used row is
      between T0 and T1 the same way.

  rows --walk W
      prints identity -> {index, bytes, discontinuity, ...} as JSON.

  check-change --before W1 --after W2 --gone PREF[,PREF] --new PREF[,PREF]
      rows present in both keep their index; the rows of the filters at the
      --gone prefs are gone (and only they), the rows at the --new prefs are
      new (and only they), with indices above every index of W1 and a
      non-zero discontinuity time; tcxActionTableLastChange increased.

  tc-counters TCJSON
      prints the counters of every action of a tc -s -j output.

  check-timestamps --walk W --uptime T [--zero HEX,...] [--nonzero HEX,...]
             [--last-change zero|nonzero]
      every TimeStamp of the walk (tcxActionTableLastChange,
      tcxLastCollectionTime, each tcxActionDiscontinuityTime) is at most T,
      the master's sysUpTime read after the walk (RFC 2579); the rows with
      the --zero cookies have a discontinuity time of 0, those with the
      --nonzero cookies one above 0; tcxActionTableLastChange is 0 or not.

  check-replace --before W1 --after W2 --pref P [--cookie HEX]
      the rows at pref P keep their index, their counters restarted (lower
      than before), their discontinuity time increased; every other row is
      unchanged in index and discontinuity; --cookie: the new cookie.

  check-classes --walk W --tc DIR --metrics M [--labels a,b --class-map JSON]
      tcxClassTable holds exactly the classes of the tc capture DIR
      (tests/integration/compare_qdisc.py capture), with equal identity,
      counters and backlog, ifIndex, SMI types, a discontinuity time of 0;
      tcxClassRows is the number of rows; tcxClassLabelTable gives each row
      the configured labels in order, with the values of the class map
      ({"DEV CLASSID": {label: value}}, "" when not there); /metrics has the
      same classes, counters and labels.

  check-qdiscs --walk W --tc DIR --metrics M [--labels a,b]
      tcxQdiscTable holds exactly the qdiscs of the tc capture DIR (every
      device of the namespace, from `tc -s -j qdisc show`), with equal
      identity (kind, handle, parent as tc prints them), counters and
      backlog, ifIndex, SMI types, a discontinuity time of 0; tcxQdiscRows
      is the number of rows; /metrics has the same qdiscs and counters
      (--labels: the user labels of its class series).

  check-filters --walk W --json J [--prefs P[,P]] [--expect-rows N]
                [--ifindex-file F]
      tcxFilterTable holds one row per filter line ("type":"filter") of
      `tcexporter --once --format json` output J that has a hit counter
      (lookups, hits, u32_mark_success), none for the others, with the same
      identity and values, the ifIndex, SMI types and a discontinuity time
      of 0; a counter the filter lacks has no instance in its row;
      tcxFilterRows is the number of rows and tcxFilterTableLastChange a
      TimeStamp. --prefs: the JSON lists a filter at each of these prefs (the
      comparison is not empty); --expect-rows: the table has N rows;
      --ifindex-file: the devices' indices, a "NAME INDEX" a line (for a
      walk made on another machine: the test VM), not this namespace's.

  check-plans --walk W --json J [--expect F] [--index-out F]
      the plan columns of tcxClassTable (rate, ceil, burst, cburst, prio,
      quantum, level) and tcxQdiscTable (rate, burst, limit_packets,
      limit_bytes, default_class) against the "plans" of each class and
      qdisc line of `tcexporter --once --format json` output J: each column
      whose role the row's kind has (PLAN_ROLES, this file's own table of
      the kinds the tests use) has the JSON's value and type (TcxGauge64:
      Counter64; Unsigned32: Gauge32), every other plan column has no
      instance, a row of a kind without plans none at all; a kind with
      plans that PLAN_ROLES does not know is an error. --expect: lines
      "class|qdisc DEV HANDLE COLUMN VALUE" (VALUE "-": no instance, "N~T":
      N give or take T, for the sizes tc rounds when it prints them), the
      values the tc commands set or tc prints, checked as well. --index-out: writes
      "class|qdisc DEV HANDLE KIND INDEX" for each row.
"""

import argparse
import datetime
import json
import os
import re
import socket
import sys

ROOT = (1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 4242)
SCALARS = ROOT + (1, 1)
ACTION = ROOT + (1, 2, 1)
LABEL = ROOT + (1, 3, 1)
# tcxQdiscTable, tcxClassTable (INDEX the row), tcxClassLabelTable (INDEX
# the class row, the label number) and tcxFilterTable (INDEX the row):
# tcxObjects 4, 5, 6, 7.
TABLES = {4: 1, 5: 1, 6: 2, 7: 1}
CLASS_COL = dict(netns=2, device=3, ifindex=4, kind=5, handle=6, parent=7, bytes=8, packets=9,
                 drops=10, overlimits=11, requeues=12, backlog_bytes=13, backlog_packets=14,
                 discontinuity=15)
CLASS_COL_TYPE = {2: "STRING", 3: "STRING", 4: "INTEGER", 5: "STRING", 6: "STRING", 7: "STRING",
                  8: "Counter64", 9: "Counter64", 10: "Counter32", 11: "Counter32",
                  12: "Counter32", 13: "Gauge32", 14: "Gauge32", 15: "Timeticks"}

COL = dict(netns=2, device=3, ifindex=4, block=5, parent=6, chain=7, pref=8, protocol=9,
           classifier=10, handle=11, order=12, kind=13, cookie=14, bytes=15, packets=16,
           hw_bytes=17, hw_packets=18, drops=19, overlimits=20, discontinuity=21,
           install_time=22, last_use_time=23, never_used=24)
NAME = {v: k for k, v in COL.items()}
# SMI type of every column as net-snmp prints it (Unsigned32 is Gauge32 on the
# wire; InterfaceIndexOrZero is an INTEGER).
COL_TYPE = {2: "STRING", 3: "STRING", 4: "INTEGER", 5: "Gauge32", 6: "STRING", 7: "Gauge32",
            8: "Gauge32", 9: "STRING", 10: "STRING", 11: "STRING", 12: "Gauge32", 13: "STRING",
            14: "STRING", 15: "Counter64", 16: "Counter64", 17: "Counter64", 18: "Counter64",
            19: "Counter32", 20: "Counter32", 21: "Timeticks", 22: "STRING", 23: "STRING",
            24: "INTEGER"}
# The columns of an action's times (DateAndTime, DateAndTime, TruthValue): a
# row whose times are unknown has none of them.
TIME_COLS = (22, 23, 24)
DATE_AND_TIME = (22, 23)
SCALAR_TYPE = {1: "Gauge32", 2: "Timeticks", 3: "Timeticks", 4: "INTEGER", 5: "Gauge32"}
# tcxFilterTable: the identity columns of tcxActionTable's filter part, then
# the hit counters (each only where the filter has it; named by its JSON
# key), the discontinuity time.
FILTER_COL = dict(netns=2, device=3, ifindex=4, block=5, parent=6, chain=7, pref=8, protocol=9,
                  kind=10, handle=11, lookups=12, hits=13, u32_mark_success=14,
                  discontinuity=15)
FILTER_COL_TYPE = {2: "STRING", 3: "STRING", 4: "INTEGER", 5: "Gauge32", 6: "STRING",
                   7: "Gauge32", 8: "Gauge32", 9: "STRING", 10: "STRING", 11: "STRING",
                   12: "Counter64", 13: "Counter64", 14: "Counter32", 15: "Timeticks"}
FILTER_HITS = ("lookups", "hits", "u32_mark_success")
# The plan columns (TCEXPORTER-MIB): name -> (column, SMI type on the wire),
# of tcxClassTable (5) and tcxQdiscTable (4).
PLAN_COLS = {
    5: dict(rate=(16, "Counter64"), ceil=(17, "Counter64"), burst=(18, "Counter64"),
            cburst=(19, "Counter64"), prio=(20, "Gauge32"), quantum=(21, "Gauge32"),
            level=(22, "Gauge32")),
    4: dict(rate=(16, "Counter64"), burst=(17, "Counter64"), limit_packets=(18, "Gauge32"),
            limit_bytes=(19, "Gauge32"), default_class=(20, "Gauge32")),
}
# Which JSON plan key of a kind gives each column: ("class"|"qdisc", kind)
# -> {column name: JSON key}. Written from tc's own words (tc-htb(8),
# tc-tbf(8), tc-pfifo(8)), not from collectors/plans.c.
PLAN_ROLES = {
    ("class", "htb"): dict(rate="rate_bytes_per_second", ceil="ceil_bytes_per_second",
                           burst="burst_bytes", cburst="cburst_bytes", prio="prio",
                           quantum="quantum_bytes", level="level"),
    ("qdisc", "htb"): dict(default_class="default_class"),
    ("qdisc", "tbf"): dict(rate="rate_bytes_per_second", burst="burst_bytes",
                           limit_bytes="limit_bytes"),
    ("qdisc", "pfifo"): dict(limit_packets="limit_packets"),
    ("qdisc", "bfifo"): dict(limit_bytes="limit_bytes"),
}
FILTER_IDENT = ("netns", "device", "block", "parent", "chain", "protocol", "pref", "kind",
                "handle")
IDENT = ("device", "parent", "chain", "pref", "protocol", "handle", "order", "cookie")
COUNTERS = ("bytes", "packets", "drops", "overlimits")


class Fail(Exception):
    pass


# ---- walks -------------------------------------------------------------------------------

LINE = re.compile(r'^(\.[0-9.]+) = (?:([A-Za-z][A-Za-z0-9-]*): ?)?(.*)$')


def parse_walk(path):
    """{scalars: {n: (type, value)}, rows: {index: {col: (type, value)}},
    labels: {index: {num: {col: (type, value)}}}}; strings are bytes."""
    entries = []
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = LINE.match(line)
            if m:
                entries.append([m.group(1), m.group(2), m.group(3)])
            elif entries and entries[-1][1] == "Hex-STRING" and re.match(r'^[0-9A-Fa-f ]*$', line):
                entries[-1][2] += " " + line  # -Ox wraps long strings
            elif line.strip():
                raise Fail("%s: cannot parse line %r" % (path, line))
    w = {"scalars": {}, "rows": {}, "labels": {}, "tables": {}, "order": []}
    seen = set()
    for oid_s, typ, val in entries:
        oid = tuple(int(x) for x in oid_s.strip(".").split("."))
        if oid in seen:
            raise Fail("%s: %s twice in the walk" % (path, oid_s))
        seen.add(oid)
        w["order"].append(oid)
        if typ in ("Hex-STRING", "STRING") or (typ is None and val == '""'):
            if typ == "STRING":
                v = json.loads(val).encode() if val.startswith('"') else val.encode()
            else:
                v = bytes.fromhex(val.replace(" ", "")) if typ else b""
            typ = "STRING"
        elif typ is None:
            raise Fail("%s: no type in %s = %s" % (path, oid_s, val))
        elif typ == "Timeticks":
            m = re.match(r'^\(?(\d+)\)?', val)
            if not m:
                raise Fail("%s: bad Timeticks %r" % (path, val))
            v = int(m.group(1))
        else:
            try:
                v = int(val.split()[0])
            except (ValueError, IndexError):
                raise Fail("%s: %s = %s: %s" % (path, oid_s, typ, val))
        if oid[:len(SCALARS)] == SCALARS and len(oid) == len(SCALARS) + 2 and oid[-1] == 0:
            w["scalars"][oid[len(SCALARS)]] = (typ, v)
        elif oid[:len(ACTION)] == ACTION and len(oid) == len(ACTION) + 2:
            col, idx = oid[len(ACTION):]
            w["rows"].setdefault(idx, {})[col] = (typ, v)
        elif oid[:len(LABEL)] == LABEL and len(oid) == len(LABEL) + 3:
            col, idx, num = oid[len(LABEL):]
            w["labels"].setdefault(idx, {}).setdefault(num, {})[col] = (typ, v)
        elif (oid[:len(ROOT) + 1] == ROOT + (1,) and len(oid) > len(ROOT) + 3 and
              oid[len(ROOT) + 2] == 1 and len(oid) == len(ROOT) + 4 +
              TABLES.get(oid[len(ROOT) + 1], -9)):
            t, col, idx = oid[len(ROOT) + 1], oid[len(ROOT) + 3], oid[len(ROOT) + 4:]
            w["tables"].setdefault(t, {}).setdefault(idx, {})[col] = (typ, v)
        elif oid[:len(ROOT)] == ROOT:
            raise Fail("%s: unexpected OID %s" % (path, oid_s))
    # A bulk walk must come back in lexicographic order.
    if w["order"] != sorted(w["order"]):
        raise Fail("%s: the walk is not in OID order" % path)
    return w


def date_and_time(b):
    """The Unix time (seconds, to the deci-second) of an 11-octet DateAndTime
    in UTC (RFC 2579: year, month, day, hour, minutes, seconds, deci-seconds,
    '+', 0, 0); raises ValueError for any other form."""
    if len(b) != 11:
        raise ValueError("%d octets, not 11" % len(b))
    year, month, day, hour, minute, sec, deci = (b[0] << 8 | b[1],) + tuple(b[2:8])
    if b[8:] != b"+\x00\x00":
        raise ValueError("offset %r, not UTC ('+', 0, 0)" % b[8:])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and
            sec <= 60 and deci <= 9):
        raise ValueError("fields out of range: %r" % list(b[:8]))
    t = datetime.datetime(year, month, day, hour, minute, sec, tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) + deci / 10


def walk_rows(w, errors):
    """identity -> row dict (column names -> plain values), checking types;
    a DateAndTime becomes its Unix time in seconds, absent times None."""
    rows = {}
    for idx, cols in sorted(w["rows"].items()):
        missing = sorted(set(COL_TYPE) - set(cols) - set(TIME_COLS))
        if missing:
            errors.append("row %d lacks the columns %s" % (idx, missing))
            continue
        present = [c for c in TIME_COLS if c in cols]
        if present and len(present) != len(TIME_COLS):
            errors.append("row %d has the times' columns %s only" % (idx, present))
        r = {"index": idx}
        r.update((NAME[c], None) for c in TIME_COLS)
        for c, (typ, v) in cols.items():
            if COL_TYPE.get(c) != typ:
                errors.append("row %d column %d (%s) has type %s, expected %s"
                              % (idx, c, NAME.get(c, "?"), typ, COL_TYPE.get(c)))
            if c in DATE_AND_TIME and typ == "STRING":
                try:
                    v = date_and_time(v)
                except ValueError as e:
                    errors.append("row %d column %d (%s): not a DateAndTime in UTC: %s (%s)"
                                  % (idx, c, NAME[c], v.hex(), e))
                    v = None
            elif c == COL["never_used"] and v not in (1, 2):
                errors.append("row %d: tcxActionNeverUsed %r, not a TruthValue" % (idx, v))
            elif typ == "STRING" and c != COL["cookie"]:
                v = v.decode("utf-8", "replace")
            elif c == COL["cookie"]:
                v = v.hex()
            r[NAME[c]] = v
        key = ident_key(r)
        if key in rows:
            errors.append("rows %d and %d have the same identity %s"
                          % (rows[key]["index"], idx, key))
        rows[key] = r
    return rows


def ident_key(r):
    return "|".join(str(r[k]) for k in IDENT)


def walk_labels(w):
    """index -> [(name, value), ...] in label-number order (strings)."""
    out = {}
    for idx, nums in w["labels"].items():
        lst = []
        for num in sorted(nums):
            cols = nums[num]
            lst.append((num, cols.get(2, (None, b""))[1].decode("utf-8", "replace"),
                        cols.get(3, (None, b""))[1].decode("utf-8", "replace"),
                        cols.get(2, ("?",))[0], cols.get(3, ("?",))[0]))
        out[idx] = lst
    return out


# ---- tc --------------------------------------------------------------------------------

def tc_rows(dev, parent, path, errors):
    with open(path) as f:
        text = f.read().strip()
    rows = {}
    for e in json.loads(text) if text else []:
        opts = e.get("options") or {}
        for a in opts.get("actions") or []:
            r = {"device": dev, "parent": parent, "chain": e.get("chain", 0), "pref": e["pref"],
                 "protocol": e["protocol"], "handle": opts.get("fh"), "order": a["order"],
                 "classifier": e["kind"], "kind": a["kind"], "cookie": a.get("cookie", ""),
                 "action_index": a.get("index")}
            st = a.get("stats") or {}
            for c in COUNTERS:
                r[c] = st.get(c, 0)
            r["hw_bytes"] = st.get("hw_bytes", 0)
            r["hw_packets"] = st.get("hw_packets", 0)
            k = ident_key(r)
            if k in rows and rows[k] != r:
                errors.append("tc lists %s twice with different values" % k)
            rows[k] = r
    return rows


# ---- /metrics ------------------------------------------------------------------------------

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def unescape(s):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


# The time families of /metrics: name -> key of a row's "times".
TIME_FAMILIES = {"tc_action_installed_timestamp_seconds": "installed",
                 "tc_action_first_used_timestamp_seconds": "first_used",
                 "tc_action_last_used_timestamp_seconds": "last_used"}


def parse_metrics(path):
    """identity -> {labels: {...}, bytes:, packets:, ..., times: {installed:,
    first_used:, last_used:}} of tc_action_*_total and the time families
    (a time without a sample is not in times)."""
    rows = {}
    fam = {"tc_action_bytes_total": "bytes", "tc_action_packets_total": "packets",
           "tc_action_drops_total": "drops", "tc_action_overlimits_total": "overlimits",
           "tc_action_hw_bytes_total": "hw_bytes", "tc_action_hw_packets_total": "hw_packets"}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            m = SAMPLE.match(line)
            if not m:
                raise Fail("%s: cannot parse %r" % (path, line))
            if m.group(1) not in fam and m.group(1) not in TIME_FAMILIES:
                continue
            labels = {k: unescape(v) for k, v in LABEL_RE.findall(m.group(2) or "")}
            r = {"device": labels.get("device"), "parent": labels.get("parent"),
                 "chain": int(labels.get("chain", 0)), "pref": int(labels["pref"]),
                 "protocol": labels.get("protocol"), "handle": labels.get("handle"),
                 "order": int(labels["order"]), "cookie": labels.get("cookie", "")}
            k = ident_key(r)
            d = rows.setdefault(k, {"labels": labels, "times": {}})
            v = m.group(3)
            if m.group(1) in TIME_FAMILIES:
                d["times"][TIME_FAMILIES[m.group(1)]] = float(v)
                continue
            # Integers must be printed exactly (no float rounding above 2^53
            # either): accept an integer or an exact float spelling.
            d[fam[m.group(1)]] = int(v) if re.match(r'^\d+$', v) else int(float(v))
            d.setdefault("raw", {})[fam[m.group(1)]] = v
    # hw: auto (the default) leaves the hw_* families out while no row has
    # hardware counters: their rows then count 0.
    present = {c for d in rows.values() for c in d if c != "times"}
    for d in rows.values():
        for c in ("hw_bytes", "hw_packets"):
            if c not in present:
                d[c] = 0
                d["raw"][c] = "(no hw_* family)"
    return rows


# ---- commands ------------------------------------------------------------------------------

def cmd_check_walk(a):
    errors = []
    w = parse_walk(a.walk)
    rows = walk_rows(w, errors)
    labels = walk_labels(w)
    tc = {}
    for dev, parent, path in a.tc:
        tc.update(tc_rows(dev, parent, path, errors))
    prom = parse_metrics(a.metrics)
    names = a.labels.split(",") if a.labels else []
    cmap = {}
    if a.cookie_map:
        with open(a.cookie_map) as f:
            cmap = {k.lower(): v for k, v in json.load(f).items()}

    # scalars
    for n, typ in SCALAR_TYPE.items():
        if n not in w["scalars"]:
            errors.append("scalar %d missing from the walk" % n)
        elif w["scalars"][n][0] != typ:
            errors.append("scalar %d has type %s, expected %s" % (n, w["scalars"][n][0], typ))
    sc = {n: v for n, (t, v) in w["scalars"].items()}
    if sc.get(1) != len(w["rows"]):
        errors.append("tcxActionRows = %s, the table has %d rows" % (sc.get(1), len(w["rows"])))
    if sc.get(4) != 1:
        errors.append("tcxLastCollectionStatus = %s, expected ok(1)" % sc.get(4))
    if sc.get(5) != 0:
        errors.append("tcxTargetsFailed = %s, expected 0" % sc.get(5))

    # the same set of rows everywhere
    for what, other in (("tc", tc), ("/metrics", prom)):
        for k in sorted(set(rows) - set(other)):
            errors.append("SNMP row %d %s is not in %s" % (rows[k]["index"], k, what))
        for k in sorted(set(other) - set(rows)):
            errors.append("%s has %s, the SNMP table has not" % (what, k))
    if a.expect_rows is not None and len(rows) != a.expect_rows:
        errors.append("%d SNMP rows, expected %d" % (len(rows), a.expect_rows))

    ifindex = {}
    for k in sorted(set(rows) & set(tc)):
        r, t = rows[k], tc[k]
        p = prom.get(k, {})
        dev = r["device"]
        if dev not in ifindex:
            try:  # (not /sys/class/net: sysfs may belong to another netns)
                ifindex[dev] = socket.if_nametoindex(dev)
            except OSError:
                ifindex[dev] = None
        for c in COUNTERS + ("hw_bytes", "hw_packets"):
            if r[c] != t[c]:
                errors.append("row %d %s: %s = %d over SNMP, tc says %d"
                              % (r["index"], k, c, r[c], t[c]))
            if p and p.get(c) != r[c]:
                errors.append("row %d %s: %s = %d over SNMP, /metrics says %s"
                              % (r["index"], k, c, r[c], p.get("raw", {}).get(c)))
        for c in ("cookie", "kind", "classifier"):
            if r[c] != t[c]:
                errors.append("row %d %s: %s = %r over SNMP, tc says %r"
                              % (r["index"], k, c, r[c], t[c]))
        if p and p["labels"].get("cookie", "") != r["cookie"]:
            errors.append("row %d: cookie %r, /metrics says %r"
                          % (r["index"], r["cookie"], p["labels"].get("cookie")))
        if r["ifindex"] != ifindex[dev]:
            errors.append("row %d: ifIndex %d, %s has %s" % (r["index"], r["ifindex"], dev,
                                                              ifindex[dev]))
        if r["netns"] != "" or r["block"] != 0:
            errors.append("row %d: netns %r block %d, expected '' and 0"
                          % (r["index"], r["netns"], r["block"]))
        # (tc's rules here are dumped in full, which carries the times)
        for c in TIME_COLS:
            if r[NAME[c]] is None:
                errors.append("row %d %s: no %s" % (r["index"], k, NAME[c]))
        # labels
        got = labels.get(r["index"], [])
        want_vals = cmap.get(r["cookie"]) if r["cookie"] else None
        if isinstance(want_vals, dict):
            want_vals = [want_vals.get(n, "") for n in names]
        if want_vals is None:
            want_vals = [""] * len(names)
        want = [(i + 1, n, v) for i, (n, v) in enumerate(zip(names, want_vals))]
        if [(x[0], x[1], x[2]) for x in got] != want:
            errors.append("row %d %s: label rows %s, expected %s"
                          % (r["index"], k, [x[:3] for x in got], want))
        for x in got:
            if x[3] != "STRING" or x[4] != "STRING":
                errors.append("row %d label %d: types %s/%s" % (r["index"], x[0], x[3], x[4]))
        if p:
            pl = [(i + 1, n, p["labels"].get(n)) for i, n in enumerate(names)]
            if pl != want:
                errors.append("row %d: /metrics labels %s, expected %s" % (r["index"], pl, want))
    for idx in sorted(set(labels) - set(w["rows"])):
        errors.append("label rows for index %d, which is not in the action table" % idx)

    if a.min_bytes is not None and not any(r["bytes"] >= a.min_bytes for r in rows.values()):
        errors.append("no row has bytes >= %d" % a.min_bytes)

    print("%d SNMP rows (%d varbinds), %d tc actions, %d /metrics rows, labels %s"
          % (len(rows), len(w["order"]), len(tc), len(prom), names or "none"))
    for k, r in sorted(rows.items(), key=lambda kv: kv[1]["index"]):
        print("  %4d %-40s cookie=%-32s bytes=%-11d pkts=%-6d ovl=%-6d labels=%s"
              % (r["index"], k, r["cookie"] or "-", r["bytes"], r["packets"], r["overlimits"],
                 [x[2] for x in labels.get(r["index"], [])]))
    if len({r["bytes"] for r in rows.values()}) < min(3, len(rows)):
        errors.append("the byte counters hardly differ: traffic did not reach the filters?")
    return errors


def row_summary(path):
    errors = []
    w = parse_walk(path)
    rows = walk_rows(w, errors)
    if errors:
        raise Fail("; ".join(errors))
    return w, rows


def cmd_rows(a):
    _, rows = row_summary(a.walk)
    print(json.dumps(rows, indent=1, sort_keys=True))
    return []


def prefs(s):
    return {int(x) for x in s.split(",") if x}


def cmd_check_change(a):
    errors = []
    w1, r1 = row_summary(a.before)
    w2, r2 = row_summary(a.after)
    gone, new = prefs(a.gone), prefs(a.new)
    max1 = max((r["index"] for r in r1.values()), default=0)
    for k in sorted(set(r1) & set(r2)):
        if r1[k]["index"] != r2[k]["index"]:
            errors.append("%s: index %d became %d" % (k, r1[k]["index"], r2[k]["index"]))
        if r1[k]["discontinuity"] != r2[k]["discontinuity"]:
            errors.append("%s: discontinuity time %d became %d (counters did not reset)"
                          % (k, r1[k]["discontinuity"], r2[k]["discontinuity"]))
    for k in sorted(set(r1) - set(r2)):
        if r1[k]["pref"] not in gone:
            errors.append("%s (index %d) disappeared" % (k, r1[k]["index"]))
    for k in sorted(k for k in r1 if r1[k]["pref"] in gone):
        if k in r2:
            errors.append("%s (pref %d) was deleted but is still there" % (k, r1[k]["pref"]))
    old_idx = {r["index"] for r in r1.values()}
    for k in sorted(set(r2) - set(r1)):
        r = r2[k]
        if r["pref"] not in new:
            errors.append("%s (index %d) appeared" % (k, r["index"]))
        if r["index"] <= max1:
            errors.append("new row %s has index %d, not above the previous maximum %d"
                          % (k, r["index"], max1))
        if r["index"] in old_idx:
            errors.append("new row %s reuses index %d" % (k, r["index"]))
        if r["discontinuity"] <= 0:
            errors.append("new row %s: discontinuity time 0" % k)
    if not [k for k in r2 if r2[k]["pref"] in new and k not in r1]:
        errors.append("no new row at pref(s) %s" % sorted(new))
    lc1, lc2 = w1["scalars"][2][1], w2["scalars"][2][1]
    if lc2 <= lc1:
        errors.append("tcxActionTableLastChange did not increase: %d -> %d" % (lc1, lc2))
    if w2["scalars"][1][1] != len(r2):
        errors.append("tcxActionRows = %d, %d rows" % (w2["scalars"][1][1], len(r2)))
    print("before: %d rows (indices %s), after: %d rows (indices %s); lastChange %d -> %d"
          % (len(r1), sorted(old_idx), len(r2), sorted(r["index"] for r in r2.values()), lc1, lc2))
    return errors


def cmd_check_replace(a):
    errors = []
    w1, r1 = row_summary(a.before)
    w2, r2 = row_summary(a.after)
    if set(r1) != set(r2):
        errors.append("the identities changed: gone %s, new %s"
                      % (sorted(set(r1) - set(r2)), sorted(set(r2) - set(r1))))
    hit = 0
    for k in sorted(set(r1) & set(r2)):
        x, y = r1[k], r2[k]
        if x["index"] != y["index"]:
            errors.append("%s: index %d became %d" % (k, x["index"], y["index"]))
        if x["pref"] == a.pref:
            hit += 1
            if not y["discontinuity"] > x["discontinuity"]:
                errors.append("%s: discontinuity time %d -> %d, expected an increase"
                              % (k, x["discontinuity"], y["discontinuity"]))
            if not (y["bytes"] < x["bytes"] and y["packets"] < x["packets"]):
                errors.append("%s: counters %d/%d -> %d/%d, expected a restart"
                              % (k, x["bytes"], x["packets"], y["bytes"], y["packets"]))
            if a.cookie is not None and y["cookie"] != a.cookie.lower():
                errors.append("%s: cookie %s, expected %s" % (k, y["cookie"], a.cookie))
            print("replaced %s: index %d, bytes %d -> %d, discontinuity %d -> %d, cookie %s -> %s"
                  % (k, y["index"], x["bytes"], y["bytes"], x["discontinuity"],
                     y["discontinuity"], x["cookie"], y["cookie"]))
        elif x["discontinuity"] != y["discontinuity"]:
            errors.append("%s (not replaced): discontinuity %d -> %d"
                          % (k, x["discontinuity"], y["discontinuity"]))
    if not hit:
        errors.append("no row at pref %d" % a.pref)
    return errors


def cmd_check_timestamps(a):
    errors = []
    w, rows = row_summary(a.walk)
    by_cookie = {r["cookie"]: r for r in rows.values()}
    stamps = [("tcxActionTableLastChange", w["scalars"][2][1]),
              ("tcxLastCollectionTime", w["scalars"][3][1])]
    stamps += [("tcxActionDiscontinuityTime.%d (cookie %s)" % (r["index"], r["cookie"]),
                r["discontinuity"]) for r in rows.values()]
    for name, t in stamps:
        if t > a.uptime:
            errors.append("%s = %d, later than sysUpTime %d" % (name, t, a.uptime))
    for want, cookies in (("zero", a.zero), ("nonzero", a.nonzero)):
        for c in filter(None, cookies.split(",")):
            if c not in by_cookie:
                errors.append("no row with cookie %s" % c)
            elif (by_cookie[c]["discontinuity"] == 0) != (want == "zero"):
                errors.append("row of cookie %s: discontinuity time %d, expected %s"
                              % (c, by_cookie[c]["discontinuity"], want))
    lc = w["scalars"][2][1]
    if a.last_change and (lc == 0) != (a.last_change == "zero"):
        errors.append("tcxActionTableLastChange = %d, expected %s" % (lc, a.last_change))
    print("sysUpTime %d: %s" % (a.uptime, ", ".join("%s %d" % s for s in stamps)))
    return errors


def cookies(s):
    return [c.lower() for c in (s or "").split(",") if c]


def cmd_check_times(a):
    """See check-times in the header."""
    errors = []
    eps = 1e-6  # (floats of seconds with 3 decimals)
    w, rows = row_summary(a.walk)
    prom = parse_metrics(a.metrics)
    for k in sorted(set(rows) ^ set(prom)):
        errors.append("%s is in %s only" % (k, "the walk" if k in rows else "/metrics"))
    compared = 0
    for k in sorted(set(rows) & set(prom)):
        r, t = rows[k], prom[k]["times"]
        where = "row %d (cookie %s)" % (r["index"], r["cookie"] or "-")
        if "installed" not in t:
            for c in TIME_COLS:
                if r[NAME[c]] is not None:
                    errors.append("%s: /metrics has no times, but %s = %s" % (
                        where, NAME[c], w["rows"][r["index"]][c][1]))
            continue
        for col, key in (("install_time", "installed"), ("last_use_time", "last_used")):
            if r[col] is None:
                errors.append("%s: no %s, /metrics says %.3f" % (where, col, t.get(key, -1)))
            elif key not in t:
                errors.append("%s: /metrics has an install time but no %s" % (where, key))
            elif not -eps <= t[key] - r[col] < 0.1 - eps:
                errors.append("%s: %s %.1f, /metrics says %.3f: not its deci-second" % (
                    where, col, r[col], t[key]))
            else:
                compared += 1
        want = 2 if "first_used" in t else 1
        if r["never_used"] != want:
            errors.append("%s: tcxActionNeverUsed %s, expected %d (/metrics: first use %s)" % (
                where, r["never_used"], want, t.get("first_used", "none")))
        else:
            compared += 1
    by_cookie = {r["cookie"]: r for r in rows.values()}
    for c in cookies(a.used) + cookies(a.unused) + cookies(a.no_times):
        if c not in by_cookie:
            errors.append("no row with cookie %s" % c)
    for c in cookies(a.used):
        r = by_cookie.get(c)
        if r and r["never_used"] != 2:
            errors.append("row of cookie %s (traffic went through it): tcxActionNeverUsed %s, "
                          "expected false(2)" % (c, r["never_used"]))
        if r and a.used_between and r["last_use_time"] is not None:
            t0, t1 = a.used_between
            if not (int(t0 * 10) / 10 - eps <= r["last_use_time"] <= t1 + eps):
                errors.append("row of cookie %s: last used at %.1f, not between %.3f and %.3f "
                              "(when the traffic went)" % (c, r["last_use_time"], t0, t1))
    for c in cookies(a.unused):
        r = by_cookie.get(c)
        if r and r["never_used"] != 1:
            errors.append("row of cookie %s (no traffic): tcxActionNeverUsed %s, expected "
                          "true(1)" % (c, r["never_used"]))
        if r and r["last_use_time"] != r["install_time"]:
            errors.append("row of cookie %s, never used: last use %s, install %s: expected "
                          "the same" % (c, r["last_use_time"], r["install_time"]))
    for c in cookies(a.no_times):
        r = by_cookie.get(c)
        if r and any(r[NAME[x]] is not None for x in TIME_COLS):
            errors.append("row of cookie %s: expected no times, got %s" % (
                c, [r[NAME[x]] for x in TIME_COLS]))
    if a.installed_between:
        t0, t1 = a.installed_between
        for r in rows.values():
            if r["install_time"] is not None and not (
                    int(t0 * 10) / 10 - eps <= r["install_time"] <= t1 + eps):
                errors.append("row %d (cookie %s): installed at %.1f, not between %.3f and %.3f"
                              % (r["index"], r["cookie"], r["install_time"], t0, t1))
    if not compared:
        errors.append("no time compared at all")
    print("%d rows, %d times compared with /metrics" % (len(rows), compared))
    for r in sorted(rows.values(), key=lambda r: r["index"]):
        print("  %4d cookie=%-6s installed=%s last_used=%s never_used=%s" % (
            r["index"], r["cookie"] or "-", r["install_time"], r["last_use_time"],
            r["never_used"]))
    return errors


def cmd_tc_counters(a):
    """The counters of a tc -s -j output, one action per line (for
    comparisons that must ignore the installed/last_used times)."""
    errors = []
    rows = tc_rows("-", "-", a.json, errors)
    for k in sorted(rows):
        print(k, *[rows[k][c] for c in COUNTERS + ("hw_bytes", "hw_packets")])
    return errors


def compare_qdisc_module():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "integration"))
    import compare_qdisc
    return compare_qdisc


def check_qtable(a, table, what, errors):
    """The rows of tcxQdiscTable (table 4) or tcxClassTable (5) against the
    tc capture a.tc and the exposition a.metrics: identity -> row, with the
    checks both tables share (columns and their types, one row per identity,
    the same set of rows as tc, counters equal to tc's and /metrics', the
    ifIndex, a discontinuity time of 0, the rows scalar)."""
    cq = compare_qdisc_module()
    w = parse_walk(a.walk)
    qdiscs, classes = cq.read_capture(a.tc, "")[:2]
    tc = {cq.key_of(r): r for r in (classes if table == 5 else qdiscs)}
    col_name = {v: k for k, v in CLASS_COL.items()}
    rows = {}
    for (idx,), cols in sorted(w["tables"].get(table, {}).items()):
        r = {"index": idx}
        for c, typ in CLASS_COL_TYPE.items():
            if c not in cols:
                errors.append("%s row %d lacks column %d (%s)" % (what, idx, c, col_name[c]))
                continue
            if cols[c][0] != typ:
                errors.append("%s row %d column %d (%s) has type %s, expected %s" % (
                    what, idx, c, col_name[c], cols[c][0], typ))
            v = cols[c][1]
            r[col_name[c]] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        k = cq.key_of(r)
        if k in rows:
            errors.append("%s rows %d and %d have the same identity %r" % (
                what, rows[k]["index"], idx, k))
        rows[k] = r
    for k in sorted(set(tc) - set(rows)):
        errors.append("tc lists the %s %r, its SNMP table has not" % (what, k))
    for k in sorted(set(rows) - set(tc)):
        errors.append("%s row %d %r: tc lists no such %s" % (what, rows[k]["index"], k, what))
    sc = {n: v for n, (t, v) in w["scalars"].items()}
    n_scalar = 8 if table == 5 else 6
    if sc.get(n_scalar) != len(rows):
        errors.append("the rows scalar (tcxScalars %d) = %s, the %s table has %d rows" % (
            n_scalar, sc.get(n_scalar), what, len(rows)))
    try:
        prom = cq.read_prom(a.metrics, argparse.Namespace(labels=a.labels), errors)[what]
    except cq.Mismatch as e:
        raise Fail(str(e))
    for k in sorted(set(rows) & set(tc)):
        r, t, p = rows[k], tc[k], prom.get(k)
        for c in cq.GENERIC:
            if not cq.equal(t[c], r.get(c), c, False, 0):
                errors.append("%s row %d %r: %s = %s over SNMP, tc says %r" % (
                    what, r["index"], k, c, r.get(c), t[c]))
            if p is None or p["generic"].get(c) != r.get(c):
                errors.append("%s row %d %r: %s = %s over SNMP, /metrics says %s" % (
                    what, r["index"], k, c, r.get(c), p and p["generic"].get(c)))
        try:  # (not /sys/class/net: sysfs may belong to another netns)
            ifindex = socket.if_nametoindex(r["device"])
        except OSError:
            ifindex = None
        if r.get("ifindex") != ifindex:
            errors.append("%s row %d: ifIndex %s, %s has %s" % (
                what, r["index"], r.get("ifindex"), r["device"], ifindex))
        if r.get("discontinuity") != 0:
            errors.append("%s row %d: discontinuity time %s, expected 0 (nothing was "
                          "replaced)" % (what, r["index"], r.get("discontinuity")))
    if not rows and not errors:
        errors.append("no %s row at all: nothing was compared" % what)
    return w, rows, prom


def cmd_check_qdiscs(a):
    """See check-qdiscs in the header."""
    errors = []
    _w, rows, _prom = check_qtable(a, 4, "qdisc", errors)
    kinds = sorted({r["kind"] for r in rows.values()})
    print("%d qdisc rows compared with tc and /metrics (%s)" % (len(rows), ", ".join(kinds)))
    return errors


def cmd_check_classes(a):
    """See check-classes in the header."""
    errors = []
    names = [n for n in a.labels.split(",") if n]
    cmap = {}
    if a.class_map:
        with open(a.class_map) as f:
            cmap = json.load(f)
    w, rows, prom = check_qtable(a, 5, "class", errors)
    for k, r in sorted(rows.items()):
        p = prom.get(k)
        mapped = cmap.get("%s %s" % (r["device"], r["handle"]), {})
        want = [(i + 1, n, mapped.get(n, "")) for i, n in enumerate(names)]
        got = []
        for (idx, num), cols in sorted(w["tables"].get(6, {}).items()):
            if idx != r["index"]:
                continue
            got.append((num, cols.get(2, (None, b""))[1].decode("utf-8", "replace"),
                        cols.get(3, (None, b""))[1].decode("utf-8", "replace")))
            for c in (2, 3):
                if cols.get(c, ("?",))[0] != "STRING":
                    errors.append("class label row %d.%d column %d: type %s" % (
                        idx, num, c, cols.get(c, ("?",))[0]))
        if got != want:
            errors.append("class row %d %r: label rows %s, expected %s" % (r["index"], k, got,
                                                                           want))
        if p is not None and p["labels"] != {n: v for _, n, v in want}:
            errors.append("class %r: /metrics labels %r, expected %r" % (
                k, p["labels"], {n: v for _, n, v in want}))
    orphans = {idx for idx, _num in w["tables"].get(6, {})} - {r["index"] for r in rows.values()}
    if orphans:
        errors.append("tcxClassLabelTable has rows of class rows that do not exist: %s" % sorted(
            orphans))
    print("%d class rows compared with tc and /metrics" % len(rows))
    return errors


def cmd_check_filters(a):
    """See check-filters in the header."""
    errors = []
    w = parse_walk(a.walk)
    lines = []
    with open(a.json) as f:
        for line in f:
            if line.strip():
                lines.append(json.loads(line))
    want = {}
    for f in (x for x in lines if x.get("type") == "filter"):
        f = dict(f, device=f["device"] or "", block=f["block"] or 0)
        k = tuple(f[c] for c in FILTER_IDENT)
        if k in want:
            errors.append("the JSON lists the filter %r twice" % (k,))
        want[k] = f
    for p in prefs(a.prefs or ""):
        if not any(f["pref"] == p for f in want.values()):
            errors.append("the JSON lists no filter at pref %d" % p)
    ifindices = None
    if a.ifindex_file:
        with open(a.ifindex_file) as f:
            ifindices = {n: int(i) for n, i in (line.split() for line in f if line.strip())}
    col_name = {v: k for k, v in FILTER_COL.items()}
    rows = {}
    for (idx,), cols in sorted(w["tables"].get(7, {}).items()):
        r = {"index": idx}
        for c, (typ, v) in sorted(cols.items()):
            if c not in FILTER_COL_TYPE:
                errors.append("filter row %d: column %d is not in tcxFilterEntry" % (idx, c))
                continue
            if typ != FILTER_COL_TYPE[c]:
                errors.append("filter row %d column %d (%s) has type %s, expected %s" % (
                    idx, c, col_name[c], typ, FILTER_COL_TYPE[c]))
            r[col_name[c]] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        missing = [col_name[c] for c in FILTER_COL_TYPE
                   if col_name[c] not in FILTER_HITS and col_name[c] not in r]
        if missing:
            errors.append("filter row %d lacks the columns %s" % (idx, missing))
            continue
        k = tuple(r[c] for c in FILTER_IDENT)
        if k in rows:
            errors.append("filter rows %d and %d have the same identity %r" % (
                rows[k]["index"], idx, k))
        rows[k] = r
    with_hits = {k for k, f in want.items() if any(c in f for c in FILTER_HITS)}
    for k in sorted(with_hits - set(rows), key=str):
        errors.append("the JSON has the filter %r with hit counters, tcxFilterTable has not" %
                      (k,))
    for k in sorted(set(rows) - with_hits, key=str):
        why = "without hit counters" if k in want else "not at all"
        errors.append("filter row %d %r: the JSON lists it %s" % (rows[k]["index"], k, why))
    for k in sorted(set(rows) & with_hits, key=str):
        r, f = rows[k], want[k]
        for c in FILTER_HITS:
            if f.get(c) != r.get(c):
                errors.append("filter row %d %r: %s = %s over SNMP, the JSON says %s (absent: "
                              "None)" % (r["index"], k, c, r.get(c), f.get(c)))
        if not r["device"]:
            ifindex = 0
        elif ifindices is not None:
            ifindex = ifindices.get(r["device"])
        else:
            try:  # (not /sys/class/net: sysfs may belong to another netns)
                ifindex = socket.if_nametoindex(r["device"])
            except OSError:
                ifindex = None
        if r["netns"] == "" and r["ifindex"] != ifindex:
            errors.append("filter row %d: ifIndex %s, %s has %s" % (
                r["index"], r["ifindex"], r["device"], ifindex))
        if r["discontinuity"] != 0:
            errors.append("filter row %d: discontinuity time %s, expected 0" % (
                r["index"], r["discontinuity"]))
    sc = w["scalars"]
    if sc.get(10) != ("Gauge32", len(rows)):
        errors.append("tcxFilterRows = %s, the table has %d rows (Gauge32)" % (sc.get(10),
                                                                               len(rows)))
    if (sc.get(11) or ("missing",))[0] != "Timeticks":
        errors.append("tcxFilterTableLastChange = %s, expected a TimeStamp" % (sc.get(11),))
    if a.expect_rows is not None and len(rows) != a.expect_rows:
        errors.append("%d filter rows, expected %d" % (len(rows), a.expect_rows))
    print("%d filters in the JSON, %d with hit counters; %d tcxFilterTable rows" % (
        len(want), len(with_hits), len(rows)))
    for k, r in sorted(rows.items(), key=lambda kv: kv[1]["index"]):
        print("  %4d %r %s" % (r["index"], k, {c: r[c] for c in FILTER_HITS if c in r}))
    return errors


def cmd_check_plans(a):
    """See check-plans in the header."""
    errors = []
    w = parse_walk(a.walk)
    want = {}  # (what, device, handle) -> (kind, plans)
    with open(a.json) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            if o.get("type") not in ("class", "qdisc") or o.get("netns"):
                continue
            k = (o["type"], o["device"], o["handle"])
            if k in want:
                errors.append("the JSON lists the %s %s %s twice" % k)
            want[k] = (o["kind"], o.get("plans"))
    got = {}  # (what, device, handle) -> (index, kind, {column name: (type, value)})
    for table, what in ((5, "class"), (4, "qdisc")):
        names = {c: n for n, (c, _t) in PLAN_COLS[table].items()}
        for (idx,), cols in sorted(w["tables"].get(table, {}).items()):
            if cols.get(2, (None, b""))[1] != b"":
                continue  # another namespace: not in the JSON of this one
            dev = cols.get(3, (None, b"?"))[1].decode()
            kind = cols.get(5, (None, b"?"))[1].decode()
            handle = cols.get(6, (None, b"?"))[1].decode()
            plans = {names[c]: tv for c, tv in cols.items() if c in names}
            for c in cols:
                if c > max(names):
                    errors.append("%s row %d: column %d is not in the table" % (what, idx, c))
            got[(what, dev, handle)] = (idx, kind, plans)
    for k in sorted(set(want) - set(got)):
        errors.append("the JSON lists the %s %s %s, the SNMP table has not" % k)
    for k in sorted(set(got) - set(want)):
        errors.append("%s row %d (%s %s): the JSON has no such %s" % (k[0], got[k][0], k[1],
                                                                     k[2], k[0]))
    compared = absent = 0
    for k in sorted(set(want) & set(got)):
        what, dev, handle = k
        kind, plans = want[k]
        idx, skind, cols = got[k]
        table = 5 if what == "class" else 4
        where = "%s row %d (%s %s %s)" % (what, idx, dev, handle, kind)
        if skind != kind:
            errors.append("%s: kind %s over SNMP" % (where, skind))
        roles = PLAN_ROLES.get((what, kind))
        if plans and roles is None:
            errors.append("%s: the JSON has plans %s, but this test does not know the roles "
                          "of %s %s (PLAN_ROLES)" % (where, sorted(plans), kind, what))
            continue
        for name, (col, typ) in sorted(PLAN_COLS[table].items(), key=lambda x: x[1][0]):
            key = (roles or {}).get(name)
            exp = (plans or {}).get(key) if key else None
            if exp is None:
                absent += 1
                if name in cols:
                    errors.append("%s: column %d (%s) = %s %s, but the %s has no %s: "
                                  "expected no instance" % (where, col, name, cols[name][0],
                                                            cols[name][1], what, name))
                continue
            compared += 1
            if name not in cols:
                errors.append("%s: no instance in column %d (%s), the JSON says %s = %s" % (
                    where, col, name, key, exp))
            elif cols[name] != (typ, exp):
                errors.append("%s: column %d (%s) = %s %s, expected %s %s (JSON %s)" % (
                    where, col, name, cols[name][0], cols[name][1], typ, exp, key))
    if a.expect:
        with open(a.expect) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                what, dev, handle, name, val = line.split()
                k = (what, dev, handle)
                if k not in got:
                    errors.append("expected %s %s %s: no such row over SNMP" % k)
                    continue
                idx, _kind, cols = got[k]
                if name not in PLAN_COLS[5 if what == "class" else 4]:
                    raise Fail("--expect: %s has no column %s" % (what, name))
                if val == "-":
                    if name in cols:
                        errors.append("%s row %d (%s %s): %s = %s, tc set none: expected no "
                                      "instance" % (what, idx, dev, handle, name, cols[name]))
                elif ("~" in val and (name not in cols or abs(
                        cols[name][1] - int(val.split("~")[0])) > int(val.split("~")[1]))) or (
                        "~" not in val and cols.get(name, (None, None))[1] != int(val)):
                    errors.append("%s row %d (%s %s): %s = %s, tc set %s" % (
                        what, idx, dev, handle, name, cols.get(name, ("no instance",))[-1],
                        val))
                compared += 1
    if a.index_out:
        with open(a.index_out, "w") as f:
            for k, (idx, kind, _c) in sorted(got.items()):
                f.write("%s %s %s %s %d\n" % (k[0], k[1], k[2], kind, idx))
    if not compared:
        errors.append("no plan value compared at all")
    print("%d plan values compared, %d absent plan columns checked, over %d rows" % (
        compared, absent, len(got)))
    return errors


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check-walk")
    c.add_argument("--walk", required=True)
    c.add_argument("--tc", nargs=3, action="append", required=True,
                   metavar=("DEV", "PARENT", "JSON"))
    c.add_argument("--metrics", required=True)
    c.add_argument("--labels", default="")
    c.add_argument("--cookie-map")
    c.add_argument("--expect-rows", type=int)
    c.add_argument("--min-bytes", type=int)
    c = sub.add_parser("rows")
    c.add_argument("--walk", required=True)
    c = sub.add_parser("check-change")
    c.add_argument("--before", required=True)
    c.add_argument("--after", required=True)
    c.add_argument("--gone", required=True)
    c.add_argument("--new", required=True)
    c = sub.add_parser("check-replace")
    c.add_argument("--before", required=True)
    c.add_argument("--after", required=True)
    c.add_argument("--pref", type=int, required=True)
    c.add_argument("--cookie")
    c = sub.add_parser("tc-counters")
    c.add_argument("json")
    c = sub.add_parser("check-classes")
    c.add_argument("--walk", required=True)
    c.add_argument("--tc", required=True)
    c.add_argument("--metrics", required=True)
    c.add_argument("--labels", default="")
    c.add_argument("--class-map")
    c = sub.add_parser("check-qdiscs")
    c.add_argument("--walk", required=True)
    c.add_argument("--tc", required=True)
    c.add_argument("--metrics", required=True)
    c.add_argument("--labels", default="")
    c = sub.add_parser("check-filters")
    c.add_argument("--walk", required=True)
    c.add_argument("--json", required=True)
    c.add_argument("--prefs")
    c.add_argument("--expect-rows", type=int)
    c.add_argument("--ifindex-file")
    c = sub.add_parser("check-plans")
    c.add_argument("--walk", required=True)
    c.add_argument("--json", required=True)
    c.add_argument("--expect")
    c.add_argument("--index-out")
    c = sub.add_parser("check-times")
    c.add_argument("--walk", required=True)
    c.add_argument("--metrics", required=True)
    c.add_argument("--used")
    c.add_argument("--unused")
    c.add_argument("--no-times")
    c.add_argument("--installed-between", nargs=2, type=float, metavar=("T0", "T1"))
    c.add_argument("--used-between", nargs=2, type=float, metavar=("T0", "T1"))
    c = sub.add_parser("check-timestamps")
    c.add_argument("--walk", required=True)
    c.add_argument("--uptime", type=int, required=True)
    c.add_argument("--zero", default="")
    c.add_argument("--nonzero", default="")
    c.add_argument("--last-change", choices=("zero", "nonzero"))
    a = p.parse_args()
    try:
        errors = {"check-walk": cmd_check_walk, "rows": cmd_rows, "check-change": cmd_check_change,
                  "check-replace": cmd_check_replace,
                  "tc-counters": cmd_tc_counters,
                  "check-timestamps": cmd_check_timestamps,
                  "check-times": cmd_check_times,
                  "check-classes": cmd_check_classes,
                  "check-qdiscs": cmd_check_qdiscs,
                  "check-filters": cmd_check_filters,
                  "check-plans": cmd_check_plans}[a.cmd](a)
    except Fail as e:
        errors = [str(e)]
    for e in errors:
        print("MISMATCH: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
