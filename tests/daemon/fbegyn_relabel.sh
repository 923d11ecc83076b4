#!/bin/bash
# monitoring/fbegyn-relabel.yml (issue #24) maps fbegyn/tc_exporter's qdisc
# and class series onto tcexporter's: a real Prometheus scrapes, with that
# list as the job's metric_relabel_configs, what fbegyn/tc_exporter prints
# for the qdiscs and classes of this namespace (its families and labels:
# host, netns "default", linkindex, link, type, handle "1:0", parent
# "ffff:ffff"; written here, served by python), and every series it stores
# must have the name of a tcexporter family of its object and exactly the
# labels tcexporter gives that object (`tcexporter --once` on the same
# namespace); fbegyn's own names and labels are gone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc prometheus
in_netns TCXD_FBEGYN_RELABEL_INSIDE -n

daemon_setup
find_python
relabel=${TCX_SRCDIR:-$here/../..}/monitoring/fbegyn-relabel.yml
[ -f "$relabel" ] || fail "$relabel not found"

veth e0 e1
tc qdisc add dev e0 root handle 1: htb default 10
tc class add dev e0 parent 1: classid 1:1 htb rate 100mbit quantum 1514
tc class add dev e0 parent 1:1 classid 1:10 estimator 250ms 1sec htb rate 10mbit quantum 1514
tc qdisc add dev e0 parent 1:10 handle 10: pfifo
tc qdisc add dev e1 clsact
printf 'targets: [{all: true}]\n' >"$WORK/c.yaml"
run_tcx ours --once --config "$WORK/c.yaml"
expect_rc ours 0

# fbegyn/tc_exporter's exposition of the same objects (collector/qdisc.go,
# collector/class.go): every qdisc and class of e0 and e1
idx0=$(ip -o link show e0 | cut -d: -f1)
idx1=$(ip -o link show e1 | cut -d: -f1)
mkdir -p "$WORK/www"
"$PYTHON" - "$WORK/www/metrics" "$idx0" "$idx1" <<'PY'
import sys
out, idx = sys.argv[1], {"e0": sys.argv[2], "e1": sys.argv[3]}
objs = {"qdisc": [("e0", "htb", "1:0", "ffff:ffff"), ("e0", "pfifo", "10:0", "1:10"),
                  ("e1", "clsact", "ffff:0", "ffff:fff1")],
        "class": [("e0", "htb", "1:1", "ffff:ffff"), ("e0", "htb", "1:10", "1:1")]}
fams = {"qdisc": ["bytes_total", "packets_total", "bps", "pps", "backlog_total", "drops_total",
                  "overlimits_total", "qlen_total"],
        "class": ["bytes_total", "packets_total", "drops_total", "overlimits_total", "bps",
                  "pps", "qlen_total", "backlog_total", "requeque_total"]}
with open(out, "w") as f:
    for t, rows in objs.items():
        for fam in fams[t]:
            f.write("# TYPE tc_%s_%s %s\n" % (t, fam, "gauge" if fam in ("bps", "pps") else "counter"))
            for dev, kind, h, p in rows:
                f.write('tc_%s_%s{host="h1",netns="default",linkindex="%s",link="%s",type="%s",'
                        'handle="%s",parent="%s"} 7\n' % (t, fam, idx[dev], dev, kind, h, p))
PY
read -r wport pport < <(free_ports 2)
bg_start www "$PYTHON" -m http.server --bind 127.0.0.1 --directory "$WORK/www" "$wport"
wait_http 200 10 "http://127.0.0.1:$wport/metrics"

"$PYTHON" - "$relabel" "$WORK/prometheus.yml" "$wport" <<'PY'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
cfg = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
       "scrape_configs": [{"job_name": "fbegyn", "metrics_path": "/metrics",
                           "static_configs": [{"targets": ["127.0.0.1:" + sys.argv[3]]}],
                           "metric_relabel_configs": rules}]}
yaml.safe_dump(cfg, open(sys.argv[2], "w"))
PY
bg_start prometheus prometheus --config.file="$WORK/prometheus.yml" \
	--storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$pport" --log.level=warn
PROM=http://127.0.0.1:$pport
wait_http 200 60 "$PROM/-/ready"

"$PYTHON" - "$PROM" "$WORK/ours.out" <<'PY' || fail "the relabelled series differ from tcexporter's (see above)"
import os, re, sys
sys.path.insert(0, os.environ["TCX_TESTLIB"])
import prom
p = prom.Prom(sys.argv[1])
ours = {}  # (table, device, handle): labels; and the families of each table
fams = {"qdisc": set(), "class": set()}
for m in re.finditer(r'^(tc_(qdisc|class)_[a-z_]+)\{([^}]*)\} ', open(sys.argv[2]).read(), re.M):
    if m.group(1).startswith(("tc_qdisc_htb_", "tc_class_htb_")) or m.group(1) == "tc_class_info":
        continue
    lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3)))
    ours[(m.group(2), lab["device"], lab["handle"])] = lab
    fams[m.group(2)].add(m.group(1))
def stored():
    r = p.query('{job="fbegyn",__name__=~"tc_.*"}')
    return r if len(r) >= 3 * 8 + 2 * 9 else None
series = prom.wait(30, stored, "the fbegyn job's series")
bad, n = [], 0
for s in series:
    lab = {k: v for k, v in s["metric"].items() if k not in ("job", "instance")}
    name = lab.pop("__name__")
    t = "qdisc" if name.startswith("tc_qdisc_") else "class"
    want = ours.get((t, lab.get("device"), lab.get("handle")))
    n += 1
    if name not in fams[t] and not name.endswith("_per_second"):
        bad.append("%s: not a tcexporter family of a %s (%s)" % (name, t, sorted(fams[t])))
    if want != lab:
        bad.append("%s%r: tcexporter labels that %s %r" % (name, lab, t, want))
rate = [s for s in series if s["metric"]["__name__"] == "tc_class_rate_bytes_per_second"]
if len(rate) != 2 or "tc_class_rate_bytes_per_second" not in fams["class"]:
    bad.append("the class rate series: %r; tcexporter's families %r" % (rate, fams["class"]))
print("%d series relabelled onto tcexporter's names and labels" % n)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
note "fbegyn_relabel: all checks passed"
