#!/bin/bash
# A real Prometheus (2.42, Debian's package) scrapes the daemon every second
# in a private network namespace with tagged u32 filters and traffic, and
# what it stores is what the kernel counted:
#
#   job plain  the daemon over plain HTTP. Prometheus asks for OpenMetrics
#              and gzip, so that is the path it takes; the target metadata
#              proves it (family tc_action_bytes, type info for
#              tc_filter_flags: only the OpenMetrics parser names them so).
#   job text   the same daemon through a small proxy (python3) that rewrites
#              Accept to text/plain;version=0.0.4 and logs what came back:
#              Prometheus ingests the 0.0.4 text format (gzip).
#   job tls    a second daemon with a web config (exporter-toolkit format):
#              TLS (server certificate for IP 127.0.0.1 from a test CA), a
#              required and verified client certificate, and basic auth
#              (bcrypt); Prometheus has scheme https, tls_config and
#              basic_auth.
#
# For every job: the target is up with no error; tc_action_bytes_total of a
# cookie's labels equals the kernel's counter (tc -s -j filter show) once
# traffic has stopped, before and after a second burst (so that Prometheus
# saw the counter change); the label value made of ", \ and a newline (from
# the cookie map) comes back exactly; /api/v1/metadata says counter.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc openssl prometheus promtool sysctl
in_netns TCXD_PROMETHEUS_INSIDE -n

# ---- inside a private network namespace -----------------------------------------------
daemon_setup

note "topology: v0p -> v0 (clsact), u32 filters with mirred mirrors to m0 and md0 (down)"
# Traffic leaves v0p for 10.6.0.x (static neighbours: no ARP) and enters v0,
# whose ingress filters count it and mirror it to m0 (its peer m0p has no
# address: copies die there) or to md0, which is down (the mirror fails and
# counts an overlimit): no mirred loop anywhere.
veth m0 m0p
ip link add md0 type veth peer name md1
veth v0 v0p
ip addr add 10.6.0.1/24 dev v0p
for h in 2 3 4; do ip neigh add 10.6.0.$h lladdr 02:00:00:00:06:0$h dev v0p; done
tc qdisc add dev v0 clsact
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 \
	action mirred egress mirror dev m0 cookie 01
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.3/32 \
	action mirred egress mirror dev m0 cookie aa \
	action mirred egress mirror dev md0 cookie bb
tc filter add dev v0 ingress pref 2 protocol ip u32 match ip dst 10.6.0.4/32 \
	action mirred egress mirror dev m0 cookie 0011223344556677

# kernel.py: the kernel's byte counter of every cookie on v0 ingress, as JSON.
cat >"$WORK/kernel.py" <<'PY'
import json, subprocess
out = subprocess.run(["tc", "-s", "-j", "filter", "show", "dev", "v0", "ingress"],
                     check=True, capture_output=True, text=True).stdout
res = {}
for f in json.loads(out):
    for a in f.get("options", {}).get("actions", []):
        res[a["cookie"]] = a["stats"]["bytes"]
print(json.dumps(res, sort_keys=True))
PY
# stable_counters: waits until the kernel's counters stand still (the veth
# receive side runs in softirq context); prints them (JSON).
stable_counters() {
	local a b
	a=$("$PYTHON" "$WORK/kernel.py")
	for _ in $(seq 1 100); do
		sleep 0.1
		b=$("$PYTHON" "$WORK/kernel.py")
		if [ "$a" = "$b" ]; then
			echo "$b"
			return 0
		fi
		a=$b
	done
	fail "the tc counters keep changing: something else sends packets"
}

note "first burst of traffic"
traffic 10.6.0.2 7 100 10.6.0.3 5 300 10.6.0.4 3 1000
k1=$(stable_counters)
note "kernel counters: $k1"
# Every cookie saw traffic (bb: the mirror to the down md0 still counts).
"$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (len(d) == 4 and all(d.values())))' "$k1" ||
	fail "some action did not count the traffic: $k1"

note "certificates, bcrypt hash, configurations"
make_certs "$WORK/pki"
password='pa"ss\word:x'
hash=$(bcrypt "$password")
read -r port_plain port_tls port_proxy port_prom < <(free_ports 4)

cat >"$WORK/common.yaml" <<'YAML'
interval: 1s
targets:
  - {dev: v0, parent: ingress}
labels: [tenant, rule]
unmapped: export
cookies:
  "01": {tenant: acme, rule: "q\"uo\\te\nnl"}
  "aa": [globex, "plain rule"]
  "0x0011223344556677": {tenant: initech, rule: "sixteen"}
YAML
# Prometheus, the proxy and this script's own GETs all come from
# 127.0.0.1: one client address, whose one render on demand a collection
# (http.renders_per_ip) they would share. Not a budget test (render_flood.sh).
{
	cat "$WORK/common.yaml"
	printf 'http:\n  listen: ["127.0.0.1:%s"]\n  renders_per_ip: 8\n' "$port_plain"
} >"$WORK/plain.yaml"
{
	cat "$WORK/common.yaml"
	printf 'http:\n  listen: ["127.0.0.1:%s"]\n  web_config: web.yml\n  renders_per_ip: 8\n' "$port_tls"
} >"$WORK/tls.yaml"
# web.yml is relative to the configuration file.
cat >"$WORK/web.yml" <<YAML
tls_server_config:
  cert_file: pki/server.crt
  key_file: pki/server.key
  client_ca_file: pki/ca.crt
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS12
basic_auth_users:
  prometheus: '$hash'
YAML
for c in plain tls; do
	"$TCX_BIN" --check-config "$WORK/$c.yaml" >"$WORK/check-$c.log" 2>&1 ||
		fail "tcexporter --check-config $c.yaml: $(cat "$WORK/check-$c.log")"
done

# The proxy of job text: Accept rewritten to the 0.0.4 text format,
# Accept-Encoding passed on; every answer's Content-Type and Content-Encoding
# logged.
cat >"$WORK/proxy.py" <<'PY'
import http.server, sys, urllib.request, urllib.error
listen, upstream, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        hdrs = {"Accept": "text/plain;version=0.0.4"}
        if self.headers.get("Accept-Encoding"):
            hdrs["Accept-Encoding"] = self.headers["Accept-Encoding"]
        req = urllib.request.Request(upstream + self.path, headers=hdrs)
        try:
            r = urllib.request.urlopen(req, timeout=5)
            code = r.status
        except urllib.error.HTTPError as e:
            r, code = e, e.code
        body = r.read()
        with open(log, "a") as f:
            f.write("%d|%s|%s|%s\n" % (code, r.headers.get("Content-Type"),
                    r.headers.get("Content-Encoding"), self.headers.get("Accept")))
        self.send_response(code)
        for k in ("Content-Type", "Content-Encoding", "Vary"):
            if r.headers.get(k):
                self.send_header(k, r.headers[k])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", listen), H).serve_forever()
PY

printf '%s' "$password" >"$WORK/password"
cat >"$WORK/p.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1m
scrape_configs:
  - job_name: plain
    static_configs: [{targets: ["127.0.0.1:$port_plain"]}]
  - job_name: text
    static_configs: [{targets: ["127.0.0.1:$port_proxy"]}]
  - job_name: tls
    scheme: https
    tls_config:
      ca_file: $WORK/pki/ca.crt
      cert_file: $WORK/pki/client.crt
      key_file: $WORK/pki/client.key
    basic_auth:
      username: prometheus
      password_file: $WORK/password
    static_configs: [{targets: ["127.0.0.1:$port_tls"]}]
YAML
promtool check config "$WORK/p.yml" >"$WORK/promtool-config.log" 2>&1 ||
	fail "promtool check config: $(cat "$WORK/promtool-config.log")"

note "daemons on 127.0.0.1:$port_plain (HTTP) and :$port_tls (TLS, client cert, basic auth), proxy :$port_proxy"
start_tcx tcx_plain "$WORK/plain.yaml"
pid_plain=$TCX_PID
start_tcx tcx_tls "$WORK/tls.yaml"
pid_tls=$TCX_PID
bg_start proxy "$PYTHON" "$WORK/proxy.py" "$port_proxy" "http://127.0.0.1:$port_plain" "$WORK/proxy.log"
curl_tls=(--cacert "$WORK/pki/ca.crt" --cert "$WORK/pki/client.crt" --key "$WORK/pki/client.key"
	-u "prometheus:$password")
wait_http 200 30 "http://127.0.0.1:$port_plain/healthz"
wait_http 200 30 "https://127.0.0.1:$port_tls/healthz" "${curl_tls[@]}"
wait_http 200 30 "http://127.0.0.1:$port_proxy/metrics"
# Prometheus's own Accept header: the daemon answers OpenMetrics + gzip.
for u in "http://127.0.0.1:$port_plain/metrics" "https://127.0.0.1:$port_tls/metrics"; do
	hdr=$(curl -sS --max-time 10 -D - -o "$WORK/om.gz" -H "Accept: $PROM_ACCEPT" \
		-H 'Accept-Encoding: gzip' "${curl_tls[@]}" "$u" | tr -d '\r') ||
		fail "curl $u with Prometheus's Accept header failed"
	grep -qix 'content-type: application/openmetrics-text; version=1.0.0; charset=utf-8' <<<"$hdr" ||
		fail "$u: Prometheus's Accept header did not get OpenMetrics: $hdr"
	grep -qix 'content-encoding: gzip' <<<"$hdr" || fail "$u: no gzip for Prometheus: $hdr"
	[ "$(gzip -dc "$WORK/om.gz" | tail -n 1)" = "# EOF" ] || fail "$u: the OpenMetrics body does not end with # EOF"
done

note "Prometheus on 127.0.0.1:$port_prom"
bg_start prometheus prometheus --config.file="$WORK/p.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$port_prom" --log.level=warn
prom=http://127.0.0.1:$port_prom
wait_http 200 60 "$prom/-/ready"

# prom.py BASE MODE ARGS...: queries the Prometheus API (see each mode).
cat >"$WORK/prom.py" <<'PY'
import json, sys, time, urllib.parse, urllib.request
base, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
def get(path, **q):
    url = base + path + ("?" + urllib.parse.urlencode(q) if q else "")
    with urllib.request.urlopen(url, timeout=5) as r:
        d = json.load(r)
    if d.get("status") != "success":
        raise SystemExit("%s: %s" % (url, d))
    return d["data"]
def query(q):
    return get("/api/v1/query", query=q)["result"]
if mode == "targets_up":
    # targets_up N SECONDS: every one of the N active targets is up, no error.
    n, deadline = int(args[0]), time.time() + float(args[1])
    while True:
        t = get("/api/v1/targets", state="active")["activeTargets"]
        bad = [(x["labels"]["job"], x["health"], x["lastError"]) for x in t
               if x["health"] != "up" or x["lastError"] != ""]
        if len(t) == n and not bad:
            print(" ".join(sorted(x["labels"]["job"] for x in t)))
            break
        if time.time() > deadline:
            raise SystemExit("targets not all up with no error: %d targets, %s" % (len(t), bad))
        time.sleep(0.5)
elif mode == "equal":
    # equal SECONDS KERNEL_JSON JOB...: for every job and cookie, the latest
    # tc_action_bytes_total equals the kernel's counter (waits for it).
    deadline, kernel, jobs = time.time() + float(args[0]), json.loads(args[1]), args[2:]
    while True:
        diff = []
        for job in jobs:
            res = query('tc_action_bytes_total{job="%s",device="v0",parent="ingress"}' % job)
            got = {r["metric"].get("cookie"): int(float(r["value"][1])) for r in res}
            if got != kernel:
                diff.append((job, got))
        if not diff:
            break
        if time.time() > deadline:
            raise SystemExit("Prometheus's tc_action_bytes_total differs from the kernel's %s: %s"
                             % (kernel, diff))
        time.sleep(0.5)
elif mode == "labels":
    # labels JOB: the label values from the cookie map, exactly, with
    # tenant="acme" (cookie 01) holding ", \ and a newline.
    job = args[0]
    want = {"01": ("acme", 'q"uo\\te\nnl'), "aa": ("globex", "plain rule"),
            "bb": ("", ""), "0011223344556677": ("initech", "sixteen")}
    res = query('tc_action_bytes_total{job="%s"}' % job)
    got = {r["metric"]["cookie"]: (r["metric"].get("tenant", ""), r["metric"].get("rule", ""))
           for r in res}
    if got != want:
        raise SystemExit("job %s: labels %r, expected %r" % (job, got, want))
    res = query('tc_action_bytes_total{job="%s",tenant="acme"}' % job)
    if len(res) != 1 or res[0]["metric"]["rule"] != 'q"uo\\te\nnl':
        raise SystemExit("job %s: the escaped label did not round-trip: %r" % (job, res))
    # The other direction: a matcher with the same value finds the series.
    res = query('tc_action_bytes_total{job="%s",rule="q\\"uo\\\\te\\nnl"}' % job)
    if len(res) != 1 or res[0]["metric"]["cookie"] != "01":
        raise SystemExit("job %s: matching on the escaped value: %r" % (job, res))
elif mode == "scalar":
    # scalar QUERY: the one value of QUERY (fails unless exactly one).
    res = query(args[0])
    if len(res) != 1:
        raise SystemExit("%s: %d results: %r" % (args[0], len(res), res))
    print(res[0]["value"][1])
elif mode == "metadata":
    # metadata METRIC: the types /api/v1/metadata knows for METRIC.
    d = get("/api/v1/metadata", metric=args[0])
    print(" ".join(sorted({m["type"] for m in d.get(args[0], [])})))
elif mode == "target_metadata":
    # target_metadata JOB METRIC: the type the target's metadata has.
    d = get("/api/v1/targets/metadata", match_target='{job="%s"}' % args[0], metric=args[1])
    print(" ".join(sorted({m["type"] for m in d})))
else:
    raise SystemExit("unknown mode " + mode)
PY
promq() { "$PYTHON" "$WORK/prom.py" "$prom" "$@"; }

note "waiting for the 3 targets to be up with no error"
jobs=$(promq targets_up 3 60) || fail "$jobs"
[ "$jobs" = "plain text tls" ] || fail "unexpected jobs: $jobs"

note "tc_action_bytes_total = kernel counters (after the first burst)"
promq equal 30 "$k1" plain text tls || fail "first burst: see above"

note "second burst while Prometheus scrapes"
traffic 10.6.0.2 11 200 10.6.0.3 13 64 10.6.0.4 2 1200
k2=$(stable_counters)
note "kernel counters: $k2"
[ "$k1" != "$k2" ] || fail "the second burst did not change the kernel counters"
promq equal 30 "$k2" plain text tls || fail "second burst: see above"
for job in plain text tls; do
	ch=$(promq scalar "changes(tc_action_bytes_total{job=\"$job\",cookie=\"01\"}[5m])") ||
		fail "$ch"
	[ "${ch%%.*}" -ge 1 ] || fail "job $job: Prometheus did not see the counter change ($ch)"
done

note "label values with \", \\ and a newline round-trip"
for job in plain text tls; do
	promq labels "$job" || fail "job $job: labels (see above)"
done

note "every target collected; up == 1"
for job in plain text tls; do
	v=$(promq scalar "up{job=\"$job\"}") || fail "$v"
	[ "$v" = 1 ] || fail "up{job=$job} = $v"
	v=$(promq scalar "tc_scrape_collector_success{job=\"$job\",device=\"v0\",parent=\"ingress\"}") ||
		fail "$v"
	[ "$v" = 1 ] || fail "tc_scrape_collector_success{job=$job} = $v"
	v=$(promq scalar "tc_exporter_collections_total{job=\"$job\"}") || fail "$v"
	[ "${v%%.*}" -ge 2 ] || fail "job $job: tc_exporter_collections_total = $v"
done

note "metadata: counters; OpenMetrics for plain and tls, the 0.0.4 text for text"
t=$(promq metadata tc_action_bytes) || fail "$t"
[ "$t" = counter ] || fail "/api/v1/metadata?metric=tc_action_bytes: type '$t', expected counter"
for job in plain tls; do
	t=$(promq target_metadata "$job" tc_action_bytes) || fail "$t"
	[ "$t" = counter ] || fail "job $job: metadata of tc_action_bytes: '$t' (not scraped as OpenMetrics?)"
	t=$(promq target_metadata "$job" tc_filter_flags) || fail "$t"
	[ "$t" = info ] || fail "job $job: metadata of tc_filter_flags: '$t', expected info (OpenMetrics)"
done
t=$(promq target_metadata text tc_action_bytes_total) || fail "$t"
[ "$t" = counter ] || fail "job text: metadata of tc_action_bytes_total: '$t' (not the 0.0.4 text?)"
# The proxy's log: Prometheus's requests (its Accept names OpenMetrics;
# the proxy replaced it) got 200, the 0.0.4 text, gzip.
grep -F '|application/openmetrics-text;' "$WORK/proxy.log" >"$WORK/proxy-prom.log" ||
	fail "the proxy of job text logged no request from Prometheus"
if grep -v '^200|text/plain; version=0.0.4; charset=utf-8|gzip|' "$WORK/proxy-prom.log" >&2; then
	fail "job text: the answers above are not 200, text 0.0.4 and gzip"
fi

note "the daemons still run; SIGTERM exits 0"
alive "$pid_plain" tcx_plain
alive "$pid_tls" tcx_tls
stop_tcx "$pid_plain" tcx_plain 5
stop_tcx "$pid_tls" tcx_tls 5
for n in tcx_plain tcx_tls; do
	if grep -E 'tcexporter: (error|warning):' "$WORK/$n.err" >&2; then
		fail "$n logged the errors or warnings above"
	fi
done
echo "prometheus: all checks passed in $(elapsed_ms) ms"
