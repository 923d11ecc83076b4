#!/bin/bash
# The landing page as a live view (issue 24), loaded by a browser: headless
# Chromium reads GET / of the daemon while traffic goes through an HTB tree,
# and the DOM it built must hold, for c0, every qdisc and class that tc lists
# under its parent, each class's rate and ceil in bit/s equal to tc's, a byte
# rate near the one /metrics gives over the same seconds for the class the
# traffic goes through (and for its parents), none for the class without
# traffic, drops for the qdisc of the class over its ceil, and the use of
# the ceil consistent with its byte rate; then the age of the collection,
# the result of the last reload (and of a rejected one), and the targets.
# The screenshot is kept: tests/daemon/landing_page.png in the build tree
# (its path is printed). A second daemon, with the web config's basic auth
# and headers, answers / with 401 and those headers without credentials,
# and the page with them.
#
# c0's tree (veth c0/c1): 1: htb -> 1:1 (100mbit) -> 1:10 (10mbit ceil
# 100mbit, pfifo 10:), 1:20 (5mbit ceil 50mbit, pfifo 20:), 1:30 (1mbit
# ceil 2mbit, pfifo 30: limit 20); u32 filters send UDP port 1010 to 1:10,
# 1030 to 1:30. Traffic: 2000 datagrams/s of 1000 bytes to 1010 (16 Mbit/s,
# within 1:10's ceil) and 600/s to 1030 (4.8 Mbit/s: over 1:30's ceil of
# 2 Mbit/s, so its pfifo of 20 drops).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc chromium
in_netns TCXD_LANDING_PAGE_NS
daemon_setup

shot_dir=${TCX_BUILDDIR:-$WORK}/tests/daemon
mkdir -p "$shot_dir"
shot=$shot_dir/landing_page.png
rm -f "$shot"

veth c0 c1
tc qdisc add dev c0 root handle 1: htb default 20
tc class add dev c0 parent 1: classid 1:1 htb rate 100mbit
tc class add dev c0 parent 1:1 classid 1:10 htb rate 10mbit ceil 100mbit
tc class add dev c0 parent 1:1 classid 1:20 htb rate 5mbit ceil 50mbit
tc class add dev c0 parent 1:1 classid 1:30 htb rate 1mbit ceil 2mbit
tc qdisc add dev c0 parent 1:10 handle 10: pfifo limit 1000
tc qdisc add dev c0 parent 1:20 handle 20: pfifo limit 1000
tc qdisc add dev c0 parent 1:30 handle 30: pfifo limit 20
for m in 10 30; do
	tc filter add dev c0 parent 1: pref 1 protocol ip u32 match ip dport "10$m" 0xffff \
		flowid "1:$m"
done

read -r port port_auth < <(free_ports 2)
base=http://127.0.0.1:$port
cat >"$WORK/tcx.yaml" <<EOF
interval: 1s
targets: [{all: true}]
# This script's GETs of /metrics, beside the browser's, are from one
# address: a second render in a collection would wait for the next one and
# be read a collection late (its rates then off). Not a budget test.
http: {listen: "127.0.0.1:$port", renders_per_ip: 8}
EOF
start_tcx tcx "$WORK/tcx.yaml"
tcx_pid=$TCX_PID
wait_http 200 10 "$base/metrics"

# chromium ARGS... URL: headless, its profile in $WORK, its stderr in
# $WORK/chromium.err (its chatter about D-Bus and GPUs is not ours).
chromium_run() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --user-data-dir="$WORK/chromium-profile" "$@" 2>>"$WORK/chromium.err"
}

note "traffic through 1:10 and over 1:30's ceil (stopped at the end)"
bg_start traffic "$PYTHON" "$TCX_TESTLIB/udp_raw.py" c0 --for 120 --rate 2600 \
	1010:1000 1010:1000 1010:1000 1010:1000 1010:1000 1010:1000 1010:1000 1010:1000 \
	1010:1000 1010:1000 1030:1000 1030:1000 1030:1000
traffic_pid=$BG_PID
# two collections while the traffic flows, then /metrics over 2 s around
# the browser's load
sleep 2.5
scrape "$WORK/m1.txt" "$base/metrics"
t1=$(date +%s.%N)
sleep 1
chromium_run --dump-dom "$base/" >"$WORK/dom.html" || fail "chromium --dump-dom failed (exit $?)"
sleep 1
scrape "$WORK/m2.txt" "$base/metrics"
t2=$(date +%s.%N)
alive "$traffic_pid" traffic # it flowed all along
chromium_run --screenshot="$shot" --window-size=1200,2000 "$base/" >/dev/null ||
	fail "chromium --screenshot failed"
[ -s "$shot" ] || fail "chromium wrote no screenshot at $shot"
echo "landing_page: screenshot: $shot"
tc class show dev c0 >"$WORK/classes.txt"
tc -j qdisc show dev c0 >"$WORK/qdiscs.json"

note "the DOM: every qdisc and class of c0 in its tree, with its figures"
"$PYTHON" - "$WORK" "$t1" "$t2" <<'PY' || fail "the page does not show c0 as tc and /metrics do (above)"
import json, re, sys
from html.parser import HTMLParser

work, t1, t2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
errors = []


class Page(HTMLParser):
    """Each device's rows: handle -> (kind, depth, cells: text and title)."""

    def __init__(self):
        super().__init__()
        self.devs, self.dev, self.row, self.cell, self.text = {}, None, None, None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details":
            self.dev = a.get("data-dev")
            self.devs[self.dev] = {"open": "open" in a, "rows": {}}
        elif tag == "tr" and "data-handle" in a and self.dev is not None:
            self.row = {"obj": a["class"], "cells": []}
            self.devs[self.dev]["rows"][(a["class"], a["data-handle"])] = self.row
        elif tag == "td" and self.row is not None:
            self.cell = {"title": a.get("title"), "style": a.get("style") or ""}
            self.text = []

    def handle_endtag(self, tag):
        if tag == "td" and self.row is not None and self.cell is not None:
            self.cell["text"] = "".join(self.text).strip()
            self.row["cells"].append(self.cell)
            self.cell = None
        elif tag == "tr":
            self.row = None
        elif tag == "details":
            self.dev = None

    def handle_data(self, data):
        if self.cell is not None:
            self.text.append(data)


dom = open(work + "/dom.html").read()
p = Page()
p.feed(dom)
if "c0" not in p.devs:
    sys.exit("no tree of c0 in the DOM: %s" % dom[:2000])
rows = p.devs["c0"]["rows"]
UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def bits(s):  # tc's "10Mbit" in bit/s (iproute2 6.1 has no tc -j class show)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)bit", s)
    return float(m.group(1)) * UNIT[m.group(2)]


classes = []
for line in open(work + "/classes.txt"):
    f = line.split()
    if f[:2] == ["class", "htb"]:
        d = dict(zip(f, f[1:]))
        classes.append({"handle": f[2], "rate": bits(d["rate"]), "ceil": bits(d["ceil"])})
if len(classes) != 4:
    errors.append("tc lists %d classes of c0, not 4" % len(classes))
qdiscs = json.load(open(work + "/qdiscs.json"))
COLS = ["name", "kind", "parent", "bytes_s", "packets_s", "drops_s", "backlog", "rate", "ceil", "use"]


def cells(obj, handle):
    r = rows.get((obj, handle))
    if r is None:
        errors.append("%s %s of tc is not on the page" % (obj, handle))
        return None
    if len(r["cells"]) != len(COLS):
        errors.append("%s %s: %d cells" % (obj, handle, len(r["cells"])))
        return None
    return dict(zip(COLS, r["cells"]))


def figure(c, unit):
    """The exact value in a cell's title, e.g. '1250000 bit/s'."""
    t = c["title"]
    if t is None or not t.endswith(" " + unit):
        return None
    return float(t[: -len(unit) - 1])


def depth(c):
    m = re.search(r"padding-left:([0-9.]+)em", c["style"])
    return round((float(m.group(1)) - 0.3) / 1.2) if m else None


# the rates of /metrics over [t1, t2]
def counters(path):
    out = {}
    for line in open(path):
        m = re.match(r'(tc_(?:class|qdisc)_(?:bytes|drops)_total)\{([^}]*)\} (\S+)', line)
        if m and 'device="c0"' in m.group(2):
            h = re.search(r'handle="([^"]+)"', m.group(2)).group(1)
            out[(m.group(1), h)] = float(m.group(3))
    return out


m1, m2 = counters(work + "/m1.txt"), counters(work + "/m2.txt")


def metrics_rate(family, h):
    return (m2[(family, h)] - m1[(family, h)]) / (t2 - t1)


want_depth = {"1:": 0, "1:1": 1, "1:10": 2, "1:20": 2, "1:30": 2, "10:": 3, "20:": 3, "30:": 3}
for q in qdiscs:
    c = cells("q", q["handle"])
    if c is None:
        continue
    if c["kind"]["text"] != q["kind"]:
        errors.append("qdisc %s: kind %s, tc %s" % (q["handle"], c["kind"]["text"], q["kind"]))
    if depth(c["name"]) != want_depth.get(q["handle"]):
        errors.append("qdisc %s at depth %s" % (q["handle"], depth(c["name"])))
for k in classes:
    h = k["handle"]
    c = cells("c", h)
    if c is None:
        continue
    if depth(c["name"]) != want_depth[h]:
        errors.append("class %s at depth %s, not %d" % (h, depth(c["name"]), want_depth[h]))
    # rate and ceil: tc's, in bit/s
    for key in ("rate", "ceil"):
        got = figure(c[key], "bit/s")
        if got != k[key]:
            errors.append("class %s: %s %s bit/s on the page, tc %d" % (h, key, got, k[key]))
    bps = figure(c["bytes_s"], "B/s")
    if bps is None:
        errors.append("class %s: no bytes/s" % h)
        continue
    use = figure(c["use"], "%")
    if use is None or abs(use - 800 * bps / k["ceil"]) > 0.01:
        errors.append("class %s: use of ceil %s %%, its %s B/s of %s bit/s" % (h, use, bps, k["ceil"]))
    if h in ("1:1", "1:10", "1:30"):
        ref = metrics_rate("tc_class_bytes_total", h)
        # two collections' worth of seconds, not the same two as /metrics':
        # the same order of magnitude
        if not (bps > 0 and ref > 0 and 0.5 * ref <= bps <= 2 * ref):
            errors.append("class %s: %s B/s on the page, /metrics %.0f B/s" % (h, bps, ref))
    elif bps != 0:
        errors.append("class %s has no traffic, yet %s B/s on the page" % (h, bps))
    print("class %s: %s B/s (%s), rate %s, ceil %s, use %s" % (
        h, bps, c["bytes_s"]["text"], c["rate"]["text"], c["ceil"]["text"], c["use"]["text"]))
c = cells("q", "30:")
if c is not None:
    drops = figure(c["drops_s"], "pkt/s")
    if not drops or drops <= 0 or metrics_rate("tc_qdisc_drops_total", "30:") <= 0:
        errors.append("qdisc 30: drops/s %s on the page, /metrics %s" % (
            drops, metrics_rate("tc_qdisc_drops_total", "30:")))
    if not re.fullmatch(r"\d+ B, \d+ pkt", c["backlog"]["text"]):
        errors.append("qdisc 30: backlog %r" % c["backlog"]["text"])
n = len(rows)
if n != len(classes) + len(qdiscs):
    errors.append("%d rows of c0 on the page, tc lists %d" % (n, len(classes) + len(qdiscs)))
if not p.devs["c0"]["open"]:
    errors.append("c0's tree (4 classes) is folded")
for want in ("Collected at ", "s ago (every 1 s", "Rates: over the ",
             "the last load (start or reload) succeeded", "<h2>Targets</h2>"):
    if want not in dom:
        errors.append("the page lacks %r" % want)
if errors:
    sys.exit("\n".join(errors))
PY
grep -q '<meta http-equiv="refresh" content="1">' "$WORK/dom.html" ||
	fail "the page does not refresh itself every collection (1 s)"
! grep -qiE '<script|<link|src="http' "$WORK/dom.html" || fail "the page loads something or runs a script"

note "a rejected reload is on the page"
echo "interval: [" >"$WORK/tcx.yaml"
mark_log
kill -HUP "$tcx_pid"
wait_log 10 'reload rejected'
scrape "$WORK/after.html" "$base/"
grep -qF 'the last reload was rejected' "$WORK/after.html" ||
	fail "the page does not say that the last reload was rejected: $(grep -F 'id="reload"' "$WORK/after.html")"

note "the web config's basic auth and headers on /"
h=$(bcrypt secret)
cat >"$WORK/web.yml" <<YAML
http_server_config:
  headers:
    X-Frame-Options: deny
    Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'
basic_auth_users:
  alice: $h
YAML
cat >"$WORK/auth.yaml" <<EOF
interval: 1s
targets: [{all: true}]
http: {listen: "127.0.0.1:$port_auth", web_config: web.yml}
EOF
start_tcx tcxauth "$WORK/auth.yaml"
wait_http 200 10 "http://127.0.0.1:$port_auth/metrics" -u alice:secret
for who in none alice; do
	args=()
	[ "$who" = alice ] && args=(-u alice:secret)
	code=$(curl -s -o "$WORK/auth_$who.body" -D "$WORK/auth_$who.hdr" -w '%{http_code}' \
		"${args[@]}" "http://127.0.0.1:$port_auth/")
	want=401
	[ "$who" = alice ] && want=200
	[ "$code" = "$want" ] || fail "/ as $who: $code, expected $want"
	grep -qi '^x-frame-options: deny' "$WORK/auth_$who.hdr" ||
		fail "/ as $who: no X-Frame-Options of the web config: $(cat "$WORK/auth_$who.hdr")"
	grep -qi "^content-security-policy: default-src 'none'; style-src 'unsafe-inline'" \
		"$WORK/auth_$who.hdr" || fail "/ as $who: no Content-Security-Policy of the web config"
done
grep -qi '^www-authenticate: basic' "$WORK/auth_none.hdr" || fail "/ without credentials: no WWW-Authenticate"
! grep -q 'data-handle' "$WORK/auth_none.body" || fail "a 401 answer to / shows the tree"
grep -q 'data-handle="1:10"' "$WORK/auth_alice.body" || fail "/ with credentials: no tree"

stop_tcx "$tcx_pid" tcx 10
stop_tcx "$TCX_PID" tcxauth 10
note "landing_page: all checks passed in $(elapsed_ms) ms"
