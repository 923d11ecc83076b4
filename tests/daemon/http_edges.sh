#!/bin/bash
# HTTP edge cases of the daemon, with curl and python3 sockets, in a private
# network namespace (root) with a few u32 filters:
#   - content negotiation: Prometheus's Accept -> OpenMetrics 1.0.0 ending
#     in "# EOF"; text/plain, */*, no Accept, OpenMetrics with a lower q ->
#     text 0.0.4; gzip that decodes (gzip -dc, curl --compressed) to the
#     plain variant of the same snapshot; Vary; gzip;q=0 -> no gzip; the
#     same variant twice in one snapshot -> the same bytes but for the
#     daemon's counters rendered with each (nothing is scraped every
#     interval, so nothing is rendered ahead: each answer is streamed,
#     chunked, with no Content-Length);
#   - HEAD (the headers of a GET, no body), 404, 405 with Allow: GET, HEAD;
#   - promtool check metrics on the text variant: no findings;
#   - /healthz, and / (a link to metrics, the version);
#   - an oversized header (64 KiB) -> 431/413 or a closed connection, and
#     the daemon keeps serving;
#   - 300 idle connections from 127.0.0.2 do not starve a scrape from
#     127.0.0.1 (per-IP limit 64: the rest are closed at once; the idle ones
#     that were accepted are closed by the connection timeout);
#   - basic auth: none / wrong password / unknown user -> 401 with
#     WWW-Authenticate: Basic realm=..., the right one -> 200;
#   - TLS (min_version TLS13): plain HTTP against the TLS port gets no HTTP
#     answer, https with the CA -> 200, TLS 1.2 only -> refused;
#   - mTLS (RequireAndVerifyClientCert): no client certificate or one from
#     another CA -> refused (403 or a TLS failure), the right one -> 200;
#   - listen addresses ":PORT" (dual stack), "[::1]:PORT", and the default
#     [::]:9591 (no http section), over IPv4 and IPv6.
# The collection interval is 1h: the snapshot does not change during the test.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc openssl promtool gzip
in_netns TCXD_HTTP_EDGES_INSIDE -n

# IPv6 stays on (for ::1 and the dual-stack default); nothing here counts
# packets.
daemon_setup ipv6
veth v0 v0p
tc qdisc add dev v0 clsact
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 \
	action mirred egress mirror dev v0p cookie 01
tc filter add dev v0 egress pref 2 protocol all u32 match u32 0 0 \
	action mirred egress mirror dev v0p cookie aa

make_certs "$WORK/pki"
password='correct horse'
hash=$(bcrypt "$password")
read -r p_plain p_auth p_tls p_mtls p_any p_v6 < <(free_ports 6)

# conf NAME PORT [WEB_CONFIG]: writes $WORK/NAME.yaml.
conf() {
	cat >"$WORK/$1.yaml" <<YAML
interval: 1h
targets: [{all: true}]
labels: [tenant, rule]
cookies:
  "01": {tenant: acme, rule: "q\"uo\\\\te\\nnl"}
http:
  listen: ["127.0.0.1:$2"]
  renders_per_ip: 1024 # each GET a render of its own: not what this tests
  renders: 1024
  max_connections: 512
  max_connections_per_ip: 64
  timeout: 3s
YAML
	[ $# -lt 3 ] || echo "  web_config: $3" >>"$WORK/$1.yaml"
}
conf plain "$p_plain"
conf auth "$p_auth" auth-web.yml
conf tls "$p_tls" tls-web.yml
conf mtls "$p_mtls" mtls-web.yml
cat >"$WORK/auth-web.yml" <<YAML
basic_auth_users:
  alice: '$hash'
YAML
cat >"$WORK/tls-web.yml" <<YAML
tls_server_config:
  cert_file: pki/server.crt
  key_file: pki/server.key
  min_version: TLS13
YAML
cat >"$WORK/mtls-web.yml" <<YAML
tls_server_config:
  cert_file: pki/server.crt
  key_file: pki/server.key
  client_ca_file: pki/ca.crt
  client_auth_type: RequireAndVerifyClientCert
YAML

# dual: ":PORT" (every address, dual stack) and "[::1]:PORT".
conf dual "$p_any"
sed -i "s/^  listen: .*/  listen: [\":$p_any\", \"[::1]:$p_v6\"]/" "$WORK/dual.yaml"
# dflt: no http section at all: the default [::]:9591 (free in this namespace).
printf 'interval: 1h\ntargets: [{all: true}]\n' >"$WORK/dflt.yaml"
pid_plain=
for n in plain auth tls mtls dual dflt; do
	start_tcx "$n" "$WORK/$n.yaml"
	eval "pid_$n=\$TCX_PID"
done
base=http://127.0.0.1:$p_plain
ca=(--cacert "$WORK/pki/ca.crt")
client=(--cert "$WORK/pki/client.crt" --key "$WORK/pki/client.key")
wait_http 200 30 "$base/healthz"
wait_http 200 30 "http://127.0.0.1:$p_auth/healthz" -u "alice:$password"
wait_http 200 30 "https://127.0.0.1:$p_tls/healthz" "${ca[@]}"
wait_http 200 30 "https://127.0.0.1:$p_mtls/healthz" "${ca[@]}" "${client[@]}"

# get NAME URL [CURL ARGS...]: GET into $WORK/NAME.body, headers (lower-case
# names, no CR) into $WORK/NAME.hdr; fails unless curl got an HTTP answer.
get() {
	local name=$1 url=$2
	shift 2
	curl -sS --max-time 10 -D "$WORK/$name.hdr.raw" -o "$WORK/$name.body" "$@" "$url" ||
		fail "$name: curl $* $url failed"
	tr -d '\r' <"$WORK/$name.hdr.raw" | sed 's/^[^:]*:/\L&/' >"$WORK/$name.hdr"
}
status_of() { sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$WORK/$1.hdr"; }
header_of() { sed -n "s/^$2: //p" "$WORK/$1.hdr" | head -n 1; }
expect_status() {
	local got
	got=$(status_of "$1")
	[ "$got" = "$2" ] || fail "$1: status $got, expected $2; headers: $(cat "$WORK/$1.hdr")"
}
expect_header() { # NAME HEADER VALUE
	local got
	got=$(header_of "$1" "$2")
	[ "$got" = "$3" ] || fail "$1: $2 is '$got', expected '$3'"
}

TEXT='text/plain; version=0.0.4; charset=utf-8'
OM='application/openmetrics-text; version=1.0.0; charset=utf-8'

note "content negotiation"
get om "$base/metrics" -H "Accept: $PROM_ACCEPT"
expect_status om 200
expect_header om content-type "$OM"
expect_header om vary "Accept, Accept-Encoding"
[ -z "$(header_of om content-encoding)" ] || fail "om: gzip without Accept-Encoding"
[ "$(tail -n 1 "$WORK/om.body")" = "# EOF" ] || fail "om: the body does not end with '# EOF'"
grep -q '^tc_action_bytes_total{device="v0",parent="ingress",.*,cookie="01",tenant="acme",rule="q\\"uo\\\\te\\nnl"} 0$' \
	"$WORK/om.body" || fail "om: the action row of cookie 01 is missing"
expect_header om transfer-encoding chunked
[ -z "$(header_of om content-length)" ] || fail "om: a Content-Length: not streamed"
# The self metrics rendered with each answer (HTTP requests so far, age of
# the snapshot, the process's CPU time, memory and open files) differ between
# answers; everything else is the same.
strip_render_time() {
	grep -vE '^(tc_exporter_(http_requests_total|snapshot_age_seconds)|process_(cpu_seconds_total|resident_memory_bytes|virtual_memory_bytes|open_fds))[{ ]' "$1"
}
get om_only "$base/metrics" -H 'Accept: application/openmetrics-text; version=1.0.0'
expect_header om_only content-type "$OM"
diff -u <(strip_render_time "$WORK/om.body") <(strip_render_time "$WORK/om_only.body") ||
	fail "two OpenMetrics answers of one snapshot differ"
i=0
for accept in 'text/plain' 'text/plain;version=0.0.4' '*/*' '' \
	'application/openmetrics-text;version=1.0.0;q=0.2,text/plain;version=0.0.4;q=0.9' \
	'application/json'; do
	i=$((i + 1))
	get "text$i" "$base/metrics" -H "Accept: $accept"
	expect_status "text$i" 200
	[ "$(header_of "text$i" content-type)" = "$TEXT" ] ||
		fail "Accept: '$accept' got Content-Type '$(header_of "text$i" content-type)', expected '$TEXT'"
	expect_header "text$i" vary "Accept, Accept-Encoding"
	[ -z "$(header_of "text$i" content-encoding)" ] || fail "text$i: gzip without Accept-Encoding"
done
# One snapshot: the same bytes every time, but for the self metrics.
for j in $(seq 2 $i); do
	diff -u <(strip_render_time "$WORK/text1.body") <(strip_render_time "$WORK/text$j.body") ||
		fail "two text answers of one snapshot differ (text1, text$j)"
done
! grep -q '^# EOF' "$WORK/text1.body" || fail "the text variant has '# EOF'"
grep -q '^# TYPE tc_action_bytes_total counter$' "$WORK/text1.body" ||
	fail "text: no '# TYPE tc_action_bytes_total counter'"

for v in text om; do
	if [ $v = text ]; then acc='text/plain'; plain=text1; else acc=$PROM_ACCEPT; plain=om; fi
	for enc in 'gzip' 'gzip, deflate, br' 'deflate;q=1, gzip;q=0.5'; do
		get "${v}_gz" "$base/metrics" -H "Accept: $acc" -H "Accept-Encoding: $enc"
		expect_status "${v}_gz" 200
		expect_header "${v}_gz" content-encoding gzip
		expect_header "${v}_gz" vary "Accept, Accept-Encoding"
		[ "$(header_of "${v}_gz" content-type)" = "$(header_of "$plain" content-type)" ] ||
			fail "$v with gzip: Content-Type $(header_of "${v}_gz" content-type)"
		gzip -dc <"$WORK/${v}_gz.body" >"$WORK/${v}_gz.txt" ||
			fail "$v, Accept-Encoding: $enc: the body is not gzip"
		diff -u <(strip_render_time "$WORK/$plain.body") <(strip_render_time "$WORK/${v}_gz.txt") ||
			fail "$v: gzip decodes to something else than the plain variant (Accept-Encoding: $enc)"
		[ "$(wc -l <"$WORK/${v}_gz.txt")" = "$(wc -l <"$WORK/$plain.body")" ] ||
			fail "$v: gzip and plain have different line counts"
	done
	# curl --compressed: libcurl's decoder (zlib) reads one gzip member, as
	# gzip -dc did.
	get "${v}_curl" "$base/metrics" -H "Accept: $acc" --compressed
	expect_header "${v}_curl" content-encoding gzip
	diff -u <(strip_render_time "$WORK/${v}_gz.txt") <(strip_render_time "$WORK/${v}_curl.body") ||
		fail "$v: curl --compressed decodes something else than gzip -dc"
	for enc in 'gzip;q=0' 'identity' 'br'; do
		get "${v}_nogz" "$base/metrics" -H "Accept: $acc" -H "Accept-Encoding: $enc"
		[ -z "$(header_of "${v}_nogz" content-encoding)" ] ||
			fail "$v: Accept-Encoding: '$enc' got Content-Encoding $(header_of "${v}_nogz" content-encoding)"
		diff -u <(strip_render_time "$WORK/$plain.body") <(strip_render_time "$WORK/${v}_nogz.body") ||
			fail "$v: Accept-Encoding: '$enc' did not get the plain variant"
	done
done

note "promtool check metrics on the text variant"
if ! out=$(promtool check metrics <"$WORK/text1.body" 2>&1); then
	fail "promtool check metrics failed: $out"
fi
[ -z "$out" ] || fail "promtool check metrics has findings: $out"

note "HEAD, 404, 405"
# HEAD: the headers of GET, no body (read to the end of the connection).
cat >"$WORK/raw.py" <<'PY'
import socket, sys
# raw.py PORT REQUEST: sends REQUEST (\r\n line ends added), prints what comes
# back until the server closes (5 s at most).
port, req = int(sys.argv[1]), sys.argv[2].replace("\n", "\r\n").encode()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(req)
d = b""
try:
    while True:
        x = s.recv(65536)
        if not x:
            break
        d += x
except socket.timeout:
    sys.exit("no close within 5 s; got %r" % d[:200])
sys.stdout.buffer.write(d)
PY
"$PYTHON" "$WORK/raw.py" "$p_plain" $'HEAD /metrics HTTP/1.1\nHost: x\nConnection: close\n\n' \
	>"$WORK/head.raw" || fail "HEAD /metrics: $(cat "$WORK/head.raw")"
tr -d '\r' <"$WORK/head.raw" >"$WORK/head.txt"
head -n 1 "$WORK/head.txt" | grep -q '^HTTP/1.1 200 ' || fail "HEAD /metrics: $(head -n 1 "$WORK/head.txt")"
grep -qx "Content-Type: $TEXT" "$WORK/head.txt" || fail "HEAD /metrics: no text Content-Type: $(cat "$WORK/head.txt")"
# streamed, as a GET is: its length is not known ahead, and there are no
# chunks (not even the last) to end
! grep -qi "^Content-Length:" "$WORK/head.txt" || fail "HEAD /metrics: a Content-Length"
! grep -qi "^Transfer-Encoding:" "$WORK/head.txt" || fail "HEAD /metrics: Transfer-Encoding"
if [ "$(tail -c 2 "$WORK/head.raw" | od -An -c | tr -d ' ')" != '\r\n' ] ||
	[ "$(sed -n '/^$/,$p' "$WORK/head.txt" | wc -c)" != 1 ]; then
	fail "HEAD /metrics sent a body: $(sed -n '/^$/,$p' "$WORK/head.txt" | head -c 200)"
fi
get head_curl "$base/metrics" -I
expect_status head_curl 200
for path in /nope /metrics/ /metricsx /healthz/x '/metrics?x=1/..'; do
	get nf "$base$path"
	case "$path" in
	'/metrics?x=1/..') expect_status nf 200 ;; # a query string does not change the path
	*) expect_status nf 404 ;;
	esac
done
for m in POST PUT DELETE PATCH OPTIONS; do
	for path in /metrics / /nope; do
		get m405 "$base$path" -X "$m" -d 'x=1'
		expect_status m405 405
		expect_header m405 allow "GET, HEAD"
	done
done

note "/healthz and the landing page"
get health "$base/healthz"
expect_status health 200
get landing "$base/"
expect_status landing 200
case "$(header_of landing content-type)" in text/html*) ;; *) fail "/: Content-Type $(header_of landing content-type)" ;; esac
grep -qE '<a href="(/|\./)?metrics">' "$WORK/landing.body" || fail "/: no link to metrics: $(cat "$WORK/landing.body")"
version=$("$TCX_BIN" --version | head -n 1 | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?[^ ]*' | head -n 1)
[ -n "$version" ] || fail "tcexporter --version prints no version"
grep -qF "$version" "$WORK/landing.body" || fail "/: the version $version is not on the page"
grep -q 'v0' "$WORK/landing.body" || fail "/: the targets' state (v0) is not on the page"

note "listen addresses: :PORT, [::1]:PORT, the default [::]:9591"
wait_http 200 30 "http://127.0.0.1:$p_any/healthz"
for u in "http://[::1]:$p_any/metrics" "http://[::1]:$p_v6/metrics" \
	"http://127.0.0.1:9591/metrics" "http://[::1]:9591/metrics"; do
	wait_http 200 10 "$u"
done
[ "$(http_code "http://127.0.0.1:$p_v6/metrics")" = 000 ] ||
	fail "[::1]:$p_v6 also answers on 127.0.0.1"

note "an oversized header (64 KiB)"
"$PYTHON" -c 'print("X-Big: " + "a" * 65536)' >"$WORK/big.hdr"
code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H @"$WORK/big.hdr" "$base/metrics" || true)
case "$code" in
431 | 413 | 400 | 000) note "oversized header: HTTP $code" ;;
*) fail "an oversized header got HTTP $code, expected 431, 413 (or a closed connection)" ;;
esac
# Many header lines, 1 KiB each, 64 KiB in all.
"$PYTHON" -c '
for i in range(64): print("X-H%d: %s" % (i, "b" * 1024))' >"$WORK/many.hdr"
code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -H @"$WORK/many.hdr" "$base/metrics" || true)
case "$code" in
431 | 413 | 400 | 000) note "64 header lines of 1 KiB: HTTP $code" ;;
*) fail "64 KiB of header lines got HTTP $code, expected 431, 413 (or a closed connection)" ;;
esac
[ "$(http_code "$base/metrics")" = 200 ] || fail "no 200 after the oversized headers"
alive "$pid_plain" plain

note "300 idle connections from 127.0.0.2 vs a scrape from 127.0.0.1"
# idle.py: opens N connections from SRC and sends nothing; reports on stdout
# how many connected, how many the server closed at once (after 1 s), then
# signals readiness (file READY) and reports how many the server closed by
# the end (after HOLD s).
cat >"$WORK/idle.py" <<'PY'
import os, select, socket, sys, time
n, src, port, hold, ready = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
socks, errs = [], 0
for _ in range(n):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        socks.append(s)
    except OSError:
        errs += 1
        s.close()
def closed():
    c = 0
    for s in socks:
        r, _, _ = select.select([s], [], [], 0)
        if r:
            try:
                if s.recv(1, socket.MSG_PEEK) == b"":
                    c += 1
            except OSError:
                c += 1
    return c
time.sleep(1)
c1 = closed()
print("connected %d failed %d closed_at_once %d" % (len(socks), errs, c1), flush=True)
open(ready, "w").close()
t0 = time.time()
while time.time() - t0 < hold and closed() < len(socks):
    time.sleep(0.2)
print("closed_by_end %d after %.1f s" % (closed(), time.time() - t0), flush=True)
PY
bg_start idle "$PYTHON" "$WORK/idle.py" 300 127.0.0.2 "$p_plain" 8 "$WORK/idle.ready"
idle_pid=$BG_PID
wait_file "$WORK/idle.ready" 20 "$idle_pid" idle
t0=$(date +%s%N)
code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$base/metrics" || true)
t_scrape=$((($(date +%s%N) - t0) / 1000000))
[ "$code" = 200 ] || fail "a scrape from 127.0.0.1 got '$code' while 300 idle connections from 127.0.0.2 were open"
note "scrape during the idle connections: 200 in $t_scrape ms"
[ "$t_scrape" -lt 3000 ] || fail "the scrape took $t_scrape ms while the idle connections were open"
# The auth, TLS and mTLS servers are unaffected too.
[ "$(http_code "http://127.0.0.1:$p_auth/metrics" -u "alice:$password")" = 200 ] ||
	fail "the basic-auth server did not answer during the idle connections"
wait_gone "$idle_pid" 20 || fail "idle.py did not finish"
wait "$idle_pid" || fail "idle.py failed: $(cat "$WORK/idle.err")"
idle_report=$(tr '\n' ' ' <"$WORK/idle.out")
note "idle connections: $idle_report"
read -r _ n_conn _ _ _ n_at_once _ n_end _ < <(echo "$idle_report"; echo)
[ "$n_conn" -ge 64 ] || fail "only $n_conn of 300 idle connections could connect"
# Per-IP limit 64: at most 64 stay open; the connection timeout (3 s) closes
# those within the 8 s the script waits.
[ $((n_conn - n_at_once)) -le 64 ] ||
	fail "$((n_conn - n_at_once)) idle connections from one IP stayed open (max_connections_per_ip: 64)"
[ "$n_end" = "$n_conn" ] || fail "the 3 s connection timeout did not close every idle connection ($n_end of $n_conn)"
[ "$(http_code "$base/metrics")" = 200 ] || fail "no 200 after the idle connections"

note "basic auth"
auth=http://127.0.0.1:$p_auth
get a_none "$auth/metrics"
expect_status a_none 401
case "$(header_of a_none www-authenticate)" in
'Basic realm='*) ;;
*) fail "401 without 'WWW-Authenticate: Basic realm=...': $(cat "$WORK/a_none.hdr")" ;;
esac
get a_wrong "$auth/metrics" -u 'alice:wrong'
expect_status a_wrong 401
case "$(header_of a_wrong www-authenticate)" in 'Basic realm='*) ;; *) fail "wrong password: no WWW-Authenticate" ;; esac
get a_user "$auth/metrics" -u "mallory:$password"
expect_status a_user 401
get a_empty "$auth/metrics" -u 'alice:'
expect_status a_empty 401
get a_ok "$auth/metrics" -u "alice:$password"
expect_status a_ok 200
expect_header a_ok content-type "$TEXT"
get a_health "$auth/healthz"
expect_status a_health 401
get a_landing "$auth/" -u "alice:$password"
expect_status a_landing 200
! grep -q 'tc_action' "$WORK/a_none.body" || fail "a 401 answer leaked metrics"

note "TLS (min_version TLS13)"
tls=https://127.0.0.1:$p_tls
code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "http://127.0.0.1:$p_tls/metrics" || true)
[ "$code" != 200 ] || fail "plain HTTP against the TLS port got 200"
note "plain HTTP against the TLS port: HTTP '$code'"
rc=0
curl -s -o /dev/null --max-time 10 "$tls/metrics" || rc=$?
[ "$rc" != 0 ] || fail "https without the CA was accepted by curl (the server certificate is not from the test CA?)"
get t_ok "$tls/metrics" "${ca[@]}"
expect_status t_ok 200
expect_header t_ok content-type "$TEXT"
get t_gz "$tls/metrics" "${ca[@]}" -H "Accept: $PROM_ACCEPT" -H 'Accept-Encoding: gzip'
expect_header t_gz content-type "$OM"
expect_header t_gz content-encoding gzip
[ "$(gzip -dc <"$WORK/t_gz.body" | tail -n 1)" = "# EOF" ] || fail "TLS: OpenMetrics+gzip does not decode"
code=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "${ca[@]}" --tls-max 1.2 "$tls/metrics" || true)
[ "$code" = 000 ] || fail "min_version TLS13: a TLS 1.2 client got HTTP $code"
[ "$(http_code "$tls/metrics" "${ca[@]}")" = 200 ] || fail "the TLS server stopped answering"

note "mTLS (RequireAndVerifyClientCert)"
mtls=https://127.0.0.1:$p_mtls
for who in none intruder; do
	case $who in
	none) args=() ;;
	intruder) args=(--cert "$WORK/pki/intruder.crt" --key "$WORK/pki/intruder.key") ;;
	esac
	code=$(curl -s -o "$WORK/m_$who.body" --max-time 10 -w '%{http_code}' "${ca[@]}" "${args[@]}" \
		"$mtls/metrics" || true)
	case "$code" in
	403 | 000) note "mTLS, client certificate '$who': HTTP $code" ;;
	*) fail "mTLS: client certificate '$who' got HTTP $code, expected 403 or a TLS failure" ;;
	esac
	! grep -q tc_action "$WORK/m_$who.body" 2>/dev/null || fail "mTLS: '$who' got metrics"
done
get m_ok "$mtls/metrics" "${ca[@]}" "${client[@]}"
expect_status m_ok 200

note "every daemon still serves; SIGTERM exits 0"
for n in plain auth tls mtls dual dflt; do
	eval "p=\$pid_$n"
	alive "$p" "$n"
	stop_tcx "$p" "$n" 5
done
if grep -E 'tcexporter: error:' "$WORK"/{plain,auth,tls,mtls,dual,dflt}.err >&2; then
	fail "the daemons logged the errors above"
fi
echo "http_edges: all checks passed in $(elapsed_ms) ms"
