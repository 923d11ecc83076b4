#!/bin/bash
# The conventions users of Prometheus exporters check first:
#  - --web.listen-address (repeated) replaces http.listen, and
#    --web.config.file replaces http.web_config, at start and at a reload;
#  - http_server_config.headers of the web config are on every response
#    (/metrics in both formats, /, /healthz, 401, 404), as exporter-toolkit
#    sets them;
#  - the process_* metrics of the official clients, in the text and the
#    OpenMetrics /metrics, agree with /proc/PID of the daemon;
#  - tc_exporter_build_info carries what --version prints;
#  - every metric family of a real scrape is documented in the man page.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
in_netns TCXD_CONVENTIONS_INSIDE -n
daemon_setup

read -r p_file p_a p_b < <(free_ports 3)
h=$(bcrypt secret)
cat >"$WORK/file-web.yml" <<'YAML'
http_server_config:
  headers:
    X-Frame-Options: sameorigin
YAML
cat >"$WORK/web.yml" <<YAML
http_server_config:
  headers:
    X-Frame-Options: deny
    X-Content-Type-Options: nosniff
    Content-Security-Policy: default-src 'none'
basic_auth_users:
  alice: $h
YAML
cat >"$WORK/tcx.yaml" <<YAML
interval: 200ms
targets: [{all: true}]
families: {hw: on} # every family, for the man page's check
http:
  listen: ["127.0.0.1:$p_file"]
  web_config: file-web.yml
YAML
start_tcx tcx "$WORK/tcx.yaml" --web.listen-address="127.0.0.1:$p_a" \
	--web.listen-address "127.0.0.1:$p_b" --web.config.file="$WORK/web.yml"
auth=(-u alice:secret)

note "--web.listen-address: each one given is listened on, http.listen is not"
for p in "$p_a" "$p_b"; do
	wait_http 200 20 "http://127.0.0.1:$p/metrics" "${auth[@]}"
done
[ "$(http_code "http://127.0.0.1:$p_file/metrics" "${auth[@]}")" = 000 ] ||
	fail "the daemon listens on http.listen (port $p_file) despite --web.listen-address"

note "--web.config.file: its basic auth and its headers, not http.web_config's"
[ "$(http_code "http://127.0.0.1:$p_a/metrics")" = 401 ] ||
	fail "/metrics without credentials: not 401 (--web.config.file's basic_auth_users not applied)"

# expect_headers NAME URL [CURL ARGS...]: the response carries the three
# headers of web.yml (and only one of each).
expect_headers() {
	local name=$1 url=$2
	shift 2
	curl -s -o /dev/null -D "$WORK/$name.hdr" --max-time 10 "$@" "$url" || true
	tr -d '\r' <"$WORK/$name.hdr" >"$WORK/$name.h"
	for want in "X-Frame-Options: deny" "X-Content-Type-Options: nosniff" \
		"Content-Security-Policy: default-src 'none'"; do
		[ "$(grep -ciF -x "$want" "$WORK/$name.h")" = 1 ] ||
			fail "$name ($url): not exactly one '$want' header; got: $(cat "$WORK/$name.h")"
	done
}
base=http://127.0.0.1:$p_a
expect_headers metrics_text "$base/metrics" "${auth[@]}"
expect_headers metrics_om "$base/metrics" "${auth[@]}" -H "Accept: $PROM_ACCEPT"
expect_headers metrics_gz "$base/metrics" "${auth[@]}" -H "Accept-Encoding: gzip"
expect_headers landing "$base/" "${auth[@]}"
expect_headers healthz "$base/healthz" "${auth[@]}"
expect_headers notfound "$base/nothing" "${auth[@]}"
expect_headers unauthorized "$base/metrics"
grep -q '^HTTP/1.1 401' "$WORK/unauthorized.h" || fail "no 401 without credentials"

note "process_* agree with /proc of the daemon (text and OpenMetrics)"
scrape "$WORK/text.prom" "$base/metrics" "${auth[@]}"
scrape "$WORK/om.prom" "$base/metrics" "${auth[@]}" -H "Accept: $PROM_ACCEPT"
"$PYTHON" - "$WORK/text.prom" "$WORK/om.prom" "$TCX_PID" <<'PY' || fail "process_* metrics (see above)"
import os, re, resource, sys, time
pid = sys.argv[3]
fams = {"process_cpu_seconds_total": "counter", "process_resident_memory_bytes": "gauge",
        "process_virtual_memory_bytes": "gauge", "process_open_fds": "gauge",
        "process_max_fds": "gauge", "process_start_time_seconds": "gauge"}
stat = open(f"/proc/{pid}/stat").read()
f = stat[stat.rindex(")") + 2:].split()  # from field 3
tck = os.sysconf("SC_CLK_TCK")
btime = next(int(l.split()[1]) for l in open("/proc/stat") if l.startswith("btime "))
limit = next(l for l in open(f"/proc/{pid}/limits") if l.startswith("Max open files")).split()[3]
truth = {"process_start_time_seconds": btime + int(f[19]) / tck,
         "process_max_fds": float(limit),
         "process_open_fds": len(os.listdir(f"/proc/{pid}/fd")),
         "process_virtual_memory_bytes": int(f[20]),
         "process_resident_memory_bytes": int(f[21]) * os.sysconf("SC_PAGE_SIZE"),
         "process_cpu_seconds_total": (int(f[11]) + int(f[12])) / tck}
bad = []
for path, om in ((sys.argv[1], False), (sys.argv[2], True)):
    text = open(path).read()
    for name, typ in fams.items():
        fam = name[:-6] if om and name.endswith("_total") else name
        if f"# TYPE {fam} {typ}\n" not in text:
            bad.append(f"{path}: no '# TYPE {fam} {typ}'")
            continue
        m = re.search(r"^%s (\S+)$" % name, text, re.M)
        v = float(m.group(1)) if m else None
        want = truth[name]
        # what moves between the scrape and now: memory, fds (a connection),
        # CPU time
        ok = v is not None and {
            "process_start_time_seconds": abs(v - want) <= 0.02,
            "process_max_fds": v == want,
            "process_open_fds": 3 <= v and abs(v - want) <= 8,
            "process_virtual_memory_bytes": 0 < v and abs(v - want) <= max(want * 0.5, 64 << 20),
            "process_resident_memory_bytes": 0 < v and abs(v - want) <= max(want * 0.5, 16 << 20),
            "process_cpu_seconds_total": 0 <= v <= want + 0.01,
        }[name]
        if not ok:
            bad.append(f"{path}: {name} = {v}, /proc/{pid} says {want}")
if abs(truth["process_start_time_seconds"] - time.time()) > 120:
    bad.append("the daemon did not start within the last 2 minutes?")
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

note "tc_exporter_build_info carries what --version prints"
run_tcx version --version
"$PYTHON" - "$WORK/text.prom" "$WORK/version.out" <<'PY' || fail "tc_exporter_build_info (see above)"
import re, sys
text, version = open(sys.argv[1]).read(), open(sys.argv[2]).read().strip()
m = re.search(r'^tc_exporter_build_info\{(.*)\} 1$', text, re.M)
if not m:
    sys.exit("no tc_exporter_build_info sample")
labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
want = "tcexporter %s (revision %s, libmnl %s, libmicrohttpd %s, net-snmp %s, gzip %s)" % tuple(
    labels.get(k) for k in ("version", "revision", "libmnl_version", "libmicrohttpd_version",
                            "netsnmp_version", "gzip"))
if want != version:
    sys.exit(f"build_info {labels} says '{want}', --version '{version}'")
PY

note "every metric family of the scrape is documented in doc/tcexporter.8"
man=${TCX_SRCDIR:-$here/../..}/doc/tcexporter.8
"$PYTHON" - "$WORK/text.prom" "$man" <<'PY' || fail "families missing from the man page (see above)"
import re, sys
fams = re.findall(r"^# TYPE (\S+) ", open(sys.argv[1]).read(), re.M)
man = open(sys.argv[2]).read().replace("\\-", "-")
missing = [f for f in fams if not re.search(r"(?<![\w*])%s(?![\w*])" % re.escape(f), man)]
if len(fams) < 30:
    sys.exit("only %d families in the scrape: %s" % (len(fams), fams))
for f in missing:
    print("undocumented in %s: %s" % (sys.argv[2], f), file=sys.stderr)
sys.exit(1 if missing else 0)
PY

note "a reload keeps the command line's address and web config"
mark_log
kill -HUP "$TCX_PID"
wait_log 20 'configuration reloaded'
alive "$TCX_PID" tcx
[ "$(http_code "$base/metrics")" = 401 ] || fail "after SIGHUP: /metrics without credentials is not 401"
wait_http 200 10 "http://127.0.0.1:$p_b/metrics" "${auth[@]}"
[ "$(http_code "http://127.0.0.1:$p_file/metrics" "${auth[@]}")" = 000 ] ||
	fail "after SIGHUP: the daemon listens on http.listen"
expect_headers reloaded "$base/healthz" "${auth[@]}"

stop_tcx "$TCX_PID" tcx 10

note "bad flags: exit 2 naming the flag"
run_tcx badaddr --web.listen-address=9591
expect_rc badaddr 2
expect_grep badaddr err -F "invalid --web.listen-address '9591'"
run_tcx badweb --check-config "$WORK/tcx.yaml" --web.config.file="$WORK/missing.yml"
expect_rc badweb 2
expect_grep badweb err -F "$WORK/missing.yml"
echo "conventions: all checks passed"
