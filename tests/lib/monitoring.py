#!/usr/bin/env python3
"""Checks of monitoring/ (the Grafana dashboard and the Prometheus rules).

  monitoring.py lint DASHBOARD RULES OUT [VARIABLE=VALUE...]
      The dashboard's structure: Grafana 9+ schema, a ${datasource}
      variable and no other datasource (no hard-coded uid), unique panel
      ids, every $variable defined, every recording rule it uses defined in
      RULES. Writes OUT, a rules file with one recording rule per dashboard
      query (Grafana's variables replaced by values: VAR_VALUES, or those
      given), for `promtool check rules` to parse the PromQL and for
      `promtool test rules` to test it: dashboard_panel_ID_REFID for a
      panel's query, dashboard_variable_NAME for a variable's.

  monitoring.py names DASHBOARD RULES SCRAPE
      Every metric name used in the dashboard and the rules is in SCRAPE (a
      /metrics body of the daemon), or is a recording rule of RULES, or is
      Prometheus's own `up`; every label they select, group by, match on or
      print ({{label}} in legends, $labels.label in annotations) is a label of
      one of the metrics of that query in SCRAPE, or a target label
      Prometheus adds (job, instance).

  monitoring.py evaluate DASHBOARD RULES PROMETHEUS_URL
      A Prometheus that scrapes the daemon and loads RULES answers every
      dashboard query and every recorded name with data (a query ending in
      `> 0` at least without it), and evaluates every rule without error.

  monitoring.py alerts PROMETHEUS_URL SECONDS [NAME/STATE[/LABEL=VALUE]...]
      Waits up to SECONDS until that Prometheus's active alerts are exactly
      those given (state pending or firing; LABEL=VALUE tells which).

Exit status 1 with one line per problem on stderr.
"""
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

PROMETHEUS_METRICS = {"up"}  # made by Prometheus, not scraped
TARGET_LABELS = {"job", "instance"}  # added by Prometheus to every scraped series
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range", "__interval_ms",
                    "__range_s", "__range_ms"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "and", "or", "unless", "offset", "inf", "nan", "atan2"}
# Values Grafana's variables take, to make a dashboard query valid PromQL.
# idle (seconds) is 0, not one of its choices: the daemon's actions in
# tests/daemon/monitoring.sh were installed seconds before, and the idle
# actions' query must answer with them there.
VAR_VALUES = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h", "top": "10",
              "idle": "0", "job": ".+", "instance": ".+", "datasource": "x"}

errors = []


def error(msg):
    errors.append(msg)


def walk(node, path=""):
    """Yields (path, key, value) for every key of every mapping in node."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, k, v
            yield from walk(v, "%s.%s" % (path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, "%s[%d]" % (path, i))


def panels(dash):
    for p in dash.get("panels", []):
        yield p
        yield from p.get("panels", [])  # collapsed rows hold their panels


def dashboard_queries(dash):
    """(where, expr, legend, record name) of every query: panel targets and variables."""
    out = []
    for p in panels(dash):
        for t in p.get("targets", []):
            if "expr" in t:
                out.append(("panel '%s' (id %s) ref %s" % (p.get("title"), p.get("id"),
                                                          t.get("refId")),
                            t["expr"], t.get("legendFormat", ""),
                            "dashboard_panel_%s_%s" % (p.get("id"), t.get("refId"))))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else q or ""
        m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_]\w*)\s*\)\s*", q)
        record = "dashboard_variable_%s" % v.get("name")
        if m:  # label_values(SELECTOR, LABEL): the label is grouped on
            out.append(("variable $%s" % v.get("name"),
                        "count by (%s) (%s)" % (m.group(2), m.group(1)), "", record))
        elif q:
            out.append(("variable $%s" % v.get("name"), q, "", record))
    return out


def rules_queries(rules):
    """(where, expr, label references) of every rule, and the recorded names."""
    out, records = [], {}
    for g in rules.get("groups", []):
        for r in g.get("rules", []):
            name = r.get("record") or r.get("alert")
            refs = " ".join(str(v) for v in (r.get("annotations") or {}).values())
            refs = re.findall(r"\$labels\.([A-Za-z_]\w*)", refs)
            out.append(("rule %s" % name, r["expr"], refs))
            if "record" in r:
                records[r["record"]] = r["expr"]
    return out, records


def blank(expr):
    """expr without strings and Grafana variables (strings become "")."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    return re.sub(r"\$\{[^}]*\}|\$\w+", "1", e)


def parse(expr):
    """(metric names, {metric: matcher labels}, grouping labels) of a PromQL expr."""
    e = blank(expr)
    selectors = {}
    for m in re.finditer(r"(?<![\w:])([A-Za-z_:][\w:]*)\s*\{([^}]*)\}", e):
        labels = re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", m.group(2))
        selectors.setdefault(m.group(1), set()).update(labels)
    grouping = set()
    for m in re.finditer(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", e):
        grouping.update(x.strip() for x in m.group(1).split(",") if x.strip())
    e = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w:.])([A-Za-z_:][\w:]*)", e):
        tok = m.group(1)
        if tok in KEYWORDS or e[m.end():].lstrip().startswith("("):
            continue  # a keyword, a function or an aggregation
        names.add(tok)
    return names, selectors, grouping


def load_scrape(path):
    """{sample name: set of label names} of a text or OpenMetrics body."""
    fams = {}
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        m = re.match(r"([A-Za-z_:][\w:]*)(\{(.*)\})?\s", line)
        if not m:
            error("%s: cannot parse the sample line %r" % (path, line))
            continue
        labels = re.findall(r'(?:^|,)\s*([A-Za-z_]\w*)="(?:[^"\\]|\\.)*"', m.group(3) or "")
        fams.setdefault(m.group(1), set()).update(labels)
    return fams


def lint(dash_path, rules_path, out_path, *values):
    dash = json.load(open(dash_path, encoding="utf-8"))
    rules = yaml.safe_load(open(rules_path, encoding="utf-8"))
    _, records = rules_queries(rules)
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        error("dashboard: schemaVersion %r is older than Grafana 9's (36)"
              % dash.get("schemaVersion"))
    variables = dash.get("templating", {}).get("list", [])
    names = [v.get("name") for v in variables]
    ds = [v for v in variables if v.get("type") == "datasource"]
    if len(ds) != 1 or ds[0].get("name") != "datasource" or ds[0].get("query") != "prometheus":
        error("dashboard: expected one variable 'datasource' of type datasource, query "
              "prometheus; found %s" % [(v.get("name"), v.get("query")) for v in ds])
    for path, k, v in walk(dash):
        if k != "datasource":
            continue
        builtin = isinstance(v, dict) and v.get("type") == "grafana" and path.startswith(
            ".annotations")
        if not builtin and (not isinstance(v, dict) or v.get("uid") != "${datasource}"
                            or v.get("type") != "prometheus"):
            error("dashboard: %s.datasource is %s, not {type: prometheus, uid: ${datasource}}"
                  % (path, json.dumps(v)))
    ids = [p.get("id") for p in panels(dash)]
    for i in sorted({i for i in ids if ids.count(i) > 1}, key=str):
        error("dashboard: panel id %s is used %d times" % (i, ids.count(i)))
    for p in panels(dash):
        if p.get("type") != "row" and not any("expr" in t for t in p.get("targets", [])):
            error("dashboard: panel '%s' has no query" % p.get("title"))
        if not all(k in p.get("gridPos", {}) for k in "hwxy"):
            error("dashboard: panel '%s' has no complete gridPos" % p.get("title"))
    text = json.dumps(dash)
    for v in sorted(set(re.findall(r"\$\{(\w+)|\$(\w+)", text))):
        v = v[0] or v[1]
        if v not in names and v not in GRAFANA_BUILTINS:
            error("dashboard: variable $%s is not defined" % v)
    queries = dashboard_queries(dash)
    if not queries:
        error("dashboard: no query found")
    given = dict(v.split("=", 1) for v in values)
    for v in sorted(set(given) - set(names)):
        error("lint: %s=%s: the dashboard has no variable %s" % (v, given[v], v))
    rules_out = []
    for where, expr, _, record in queries:
        for name in parse(expr)[0]:
            if ":" in name and name not in records:
                error("dashboard: %s uses %s, which no rule of %s records"
                      % (where, name, rules_path))
        rules_out.append({"record": record, "expr": substitute(expr, given)})
    records_out = [r["record"] for r in rules_out]
    for r in sorted({r for r in records_out if records_out.count(r) > 1}):
        error("dashboard: two queries have the name %s (panel id and refId)" % r)
    with open(out_path, "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules_out}]}, f)
    print("lint: %d panels, %d queries" % (len(ids), len(queries)))


def names(dash_path, rules_path, scrape_path):
    dash = json.load(open(dash_path, encoding="utf-8"))
    rules = yaml.safe_load(open(rules_path, encoding="utf-8"))
    scrape = load_scrape(scrape_path)
    if not scrape:
        error("%s: no sample" % scrape_path)
    rq, records = rules_queries(rules)
    queries = [(w, e, re.findall(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}", legend), dash_path)
               for w, e, legend, _ in dashboard_queries(dash)]
    queries += [(w, e, refs, rules_path) for w, e, refs in rq]
    used = set()
    for where, expr, refs, path in queries:
        metrics, selectors, grouping = parse(expr)
        if not metrics:
            error("%s: %s: no metric name found in %r" % (path, where, expr))
        known = set(TARGET_LABELS)
        for name in metrics:
            if name in scrape:
                known |= scrape[name]
                used.add(name)
            elif name in records:  # its labels come from the metrics it is made of
                for source in parse(records[name])[0]:
                    known |= scrape.get(source, set())
            elif name not in PROMETHEUS_METRICS:
                error("%s: %s uses %s, which is not in the daemon's scrape"
                      % (path, where, name))
        for name, labels in selectors.items():
            have = scrape.get(name, set()) | TARGET_LABELS
            for label in sorted(labels - have):
                if name in scrape or name in PROMETHEUS_METRICS:
                    error("%s: %s selects %s{%s}, a label %s does not have in the scrape"
                          % (path, where, name, label, name))
        for label in sorted((grouping | set(refs)) - known):
            error("%s: %s uses the label %s, which none of its metrics (%s) has in the "
                  "scrape" % (path, where, label, ", ".join(sorted(metrics))))
    print("names: %d metric names of %d queries found in the scrape (%s)"
          % (len(used), len(queries), " ".join(sorted(used))))


def api(base, path, **params):
    """The data of a Prometheus HTTP API answer (an error when not success)."""
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            d = json.load(r)
    except urllib.error.HTTPError as e:  # 400 and 422 carry the error in JSON
        d = json.load(e)
    if d.get("status") != "success":
        raise QueryError("%s: %s: %s" % (params.get("query", path), d.get("errorType"),
                                         d.get("error")))
    return d["data"]


class QueryError(Exception):
    pass


def substitute(expr, given=None):
    values = dict(VAR_VALUES, **(given or {}))
    return re.sub(r"\$\{(\w+)\}|\$(\w+)",
                  lambda m: values.get(m.group(1) or m.group(2), "UNKNOWN_VARIABLE"), expr)


def evaluate(dash_path, rules_path, base):
    dash = json.load(open(dash_path, encoding="utf-8"))
    rules = yaml.safe_load(open(rules_path, encoding="utf-8"))
    _, records = rules_queries(rules)
    checks = [(w, substitute(e)) for w, e, _, _ in dashboard_queries(dash)]
    checks += [("recording rule %s" % r, r) for r in records]
    for where, expr in checks:
        try:
            if api(base, "/api/v1/query", query=expr)["result"]:
                continue
            # A query that keeps the non-zero values only must have data before.
            m = re.fullmatch(r"(.*\S)\s*>\s*0\s*", expr, re.S)
            if not m:
                error("%s: %r returns nothing" % (where, expr))
            elif not api(base, "/api/v1/query", query=m.group(1))["result"]:
                error("%s: %r returns nothing, even without its '> 0'" % (where, expr))
        except QueryError as e:
            error("%s: Prometheus rejects the query: %s" % (where, e))
    n = 0
    for g in api(base, "/api/v1/rules")["groups"]:
        for r in g["rules"]:
            n += 1
            if r.get("health") != "ok" or r.get("lastError"):
                error("rule %s: health %s: %s" % (r["name"], r.get("health"), r.get("lastError")))
    if n != len(rules_queries(rules)[0]):
        error("Prometheus has %d rules loaded, %s has %d" % (n, rules_path,
                                                             len(rules_queries(rules)[0])))
    print("evaluate: %d queries answered with data (or with data before their > 0); %d rules "
          "evaluated without error"
          % (len(checks), n))


def alerts(base, seconds, *want):
    """Waits until the active alerts are exactly WANT: NAME/STATE[/LABEL=VALUE]."""
    want = sorted(want)
    deadline = time.time() + float(seconds)
    while True:
        got = []
        for a in api(base, "/api/v1/alerts")["alerts"]:
            name = "%s/%s" % (a["labels"]["alertname"], a["state"])
            keys = [w.split("/", 2)[2] for w in want if w.startswith(name + "/") and
                    w.count("/") == 2]
            for k in keys:  # the label the expectation names, if the alert has it
                label, _, value = k.partition("=")
                if a["labels"].get(label) == value:
                    name += "/" + k
                    break
            got.append(name)
        if sorted(got) == want:
            print("alerts: %s" % (" ".join(want) or "none"))
            return
        if time.time() > deadline:
            error("after %s s the active alerts are %s, expected %s" % (seconds, sorted(got),
                                                                         want))
            return
        time.sleep(0.5)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "lint" and all(
            re.fullmatch(r"\w+=.*", v, re.S) for v in sys.argv[5:]):
        lint(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "names":
        names(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "evaluate":
        evaluate(*sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "alerts":
        alerts(*sys.argv[2:])
    else:
        sys.exit("usage: monitoring.py lint DASHBOARD RULES OUT [VARIABLE=VALUE...] |"
                 " names DASHBOARD RULES SCRAPE | evaluate DASHBOARD RULES PROMETHEUS_URL |"
                 " alerts PROMETHEUS_URL SECONDS [NAME/STATE[/LABEL=VALUE]...]")
    if errors:
        sys.stderr.write("".join("monitoring.py: %s\n" % e for e in errors))
        sys.exit(1)


main()
