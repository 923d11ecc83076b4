#!/bin/bash
# What libmicrohttpd answers itself, and an address in use, in a private
# network namespace (root):
#   - requests libmicrohttpd rejects before the handler sees them are
#     answered and counted in tc_exporter_http_requests_total: 400 (a
#     malformed Content-Length), 413 (a Content-Length beyond 64 bits), 414
#     (a request line longer than the buffer), 431 (a 64 KiB header), 505
#     (HTTP/2.0): each code counts exactly its requests, and none is logged
#     as a warning;
#   - RFC 9112: Content-Length headers that differ (a smuggled request in
#     the body), Transfer-Encoding with Content-Length, a Transfer-Encoding
#     other than chunked, or one in an HTTP/1.0 request get 400 and their
#     connection closed (two equal Content-Length headers are served); an
#     absolute-form target (GET http://x/metrics) is served as its path;
#     600 query arguments get 414 (libmicrohttpd 0.9.75 would close the
#     connection with no answer); an invalid Content-Length gets one
#     answer, 413 or 400 (0.9.75 sends its header block twice); each
#     counted by the status sent, none logged as a warning;
#   - a second daemon on the address of a running one exits 1 within 10 s
#     and names the address taken (no SO_REUSEPORT sharing of the port); the
#     first one keeps serving every request;
#   - a reload that adds an address in use (between two the daemon keeps)
#     is rejected, naming the address, and both kept addresses answer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
in_netns TCXD_HTTP_ERRORS_INSIDE -n

daemon_setup
read -r port port2 port3 < <(free_ports 3)
cat >"$WORK/tcx.yaml" <<YAML
interval: 1s
targets: [{all: true}]
http:
  listen: ["127.0.0.1:$port"]
YAML
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
base=http://127.0.0.1:$port
wait_http 200 30 "$base/healthz"

note "the answers libmicrohttpd makes itself"
# raw.py PORT NAME: sends the request NAME as raw bytes and prints the status
# of the answer ("reset" when the connection was reset before one came).
cat >"$WORK/raw.py" <<'PY'
import socket, sys
port, name = int(sys.argv[1]), sys.argv[2]
req = {
    "400": b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    "413": b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "414": b"GET /" + b"a" * 40000,
    "431": b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 65536 + b"\r\n\r\n",
    "505": b"GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n",
}[name]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
got = b""
try:
    s.sendall(req)
except OSError:
    pass  # the answer may come before all was sent
try:
    while b"\r\n" not in got:
        b = s.recv(4096)
        if not b:
            break
        got += b
except ConnectionResetError:
    pass
print(got.split(b" ")[1].decode() if got.startswith(b"HTTP/1.") else "reset")
PY
for code in 400 413 414 431 505; do
	got=$("$PYTHON" "$WORK/raw.py" "$port" "$code")
	note "request for $code: $got"
	case "$code:$got" in
	"$code:$code") ;;
	414:reset | 431:reset) ;; # closed with unread bytes: the answer may be lost
	*) fail "the request made for $code got '$got'" ;;
	esac
done
# Twice more for 400, to see that a code counts each request.
"$PYTHON" "$WORK/raw.py" "$port" 400 >/dev/null
"$PYTHON" "$WORK/raw.py" "$port" 400 >/dev/null
# The counters are rendered with each new snapshot (interval 1s).
deadline=$((SECONDS + 15))
while :; do
	scrape "$WORK/m.txt" "$base/metrics"
	ok=1
	for code in 400 413 414 431 505; do
		want=1
		[ $code != 400 ] || want=3
		[ "$(metric_value "$WORK/m.txt" "tc_exporter_http_requests_total{code=\"$code\"}")" = $want ] || ok=0
	done
	[ $ok = 0 ] || break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "tc_exporter_http_requests_total does not count them: $(grep '^tc_exporter_http_requests_total' "$WORK/m.txt" | tr '\n' ' ')"
	sleep 0.3
done
grep '^tc_exporter_http_requests_total' "$WORK/m.txt"
# A client can send these at will: no warning for any, or one client could
# flood the log.
if grep 'warning: http:' "$WORK/tcx.err" >&2; then
	fail "malformed requests were logged as warnings (above)"
fi
alive "$pid" tcx

note "RFC 9112: framing, the absolute form, and two answers libmicrohttpd 0.9.75 gets wrong"
# rfc.py PORT NAME: sends the request NAME, reads what comes back until the
# server closes (5 s at most), and prints the status of each answer read by
# its own framing (Content-Length, chunked, or to the end), then "garbage"
# if bytes follow that are no answer, then "closed" or "open" (not closed
# within 5 s).
cat >"$WORK/rfc.py" <<'PY'
import socket, sys
port, name = int(sys.argv[1]), sys.argv[2]
h = b"Host: x\r\n"
req = {
    # a body of 25 bytes, or none: the body is a second request
    "cl_conflict": b"GET /healthz HTTP/1.1\r\n" + h + b"Content-Length: 0\r\nContent-Length: 25\r\n\r\n"
                   b"GET /nope HTTP/1.1\r\nH: x\r\n\r\n",
    "cl_same": b"GET /healthz HTTP/1.1\r\n" + h + b"Content-Length: 3\r\nContent-Length: 3\r\n"
               b"Connection: close\r\n\r\nabc",
    "te_cl": b"GET /healthz HTTP/1.1\r\n" + h + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
             b"0\r\n\r\n",
    "te_gzip": b"GET /healthz HTTP/1.1\r\n" + h + b"Transfer-Encoding: gzip\r\n\r\n",
    "te_http10": b"GET /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "absolute": b"GET http://x/metrics HTTP/1.1\r\n" + h + b"Connection: close\r\n\r\n",
    "absolute_query": b"GET HTTP://x:9/healthz?a=1 HTTP/1.1\r\n" + h + b"Connection: close\r\n\r\n",
    "args600": b"GET /healthz?" + b"a=b&" * 600 + b" HTTP/1.1\r\n" + h + b"\r\n",
    "cl_huge": b"GET /metrics HTTP/1.1\r\n" + h + b"Content-Length: 99999999999999999999\r\n\r\n",
    "cl_abc": b"GET /metrics HTTP/1.1\r\n" + h + b"Content-Length: abc\r\n\r\n",
}[name]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(req)
d, state = b"", "closed"
try:
    while True:
        x = s.recv(65536)
        if not x:
            break
        d += x
except socket.timeout:
    state = "open"
except ConnectionResetError:
    state = "reset"
out = []
while d:
    head, sep, rest = d.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    if not sep or not lines[0].startswith(b"HTTP/1.1 "):
        out.append("garbage")
        break
    hdr = dict((k.strip().lower(), v.strip()) for k, _, v in (l.partition(b":") for l in lines[1:]))
    out.append(lines[0].split(b" ")[1].decode())
    if b"content-length" in hdr:
        d = rest[int(hdr[b"content-length"]):]
    elif hdr.get(b"transfer-encoding") == b"chunked":
        while True:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size, 16)
            rest = rest[n + 2:]
            if n == 0:
                break
        d = rest
    else:
        d = b""
print(" ".join(out + [state]))
PY
scrape "$WORK/m0.txt" "$base/metrics"
for t in cl_conflict:400 cl_same:200 te_cl:400 te_gzip:400 te_http10:400 absolute:200 \
	absolute_query:200 args600:414 cl_huge:413 cl_abc:400; do
	name=${t%:*} want="${t#*:} closed"
	got=$("$PYTHON" "$WORK/rfc.py" "$port" "$name")
	note "$name: $got"
	[ "$got" = "$want" ] || fail "request $name got '$got', expected '$want'"
done
grep -q '^tc_exporter_http_requests_total' <("$PYTHON" - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET http://x/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
d = b""
while True:
    x = s.recv(65536)
    if not x:
        break
    d += x
sys.stdout.write(d.decode())
PY
) || fail "GET http://x/metrics did not get the metrics"
# Each answer is counted by the status sent: 400 five times more, 413 and
# 414 once more.
deadline=$((SECONDS + 15))
while :; do
	scrape "$WORK/m1.txt" "$base/metrics"
	ok=1
	for c in 400:5 413:1 414:1; do
		series="tc_exporter_http_requests_total{code=\"${c%:*}\"}"
		before=$(metric_value "$WORK/m0.txt" "$series")
		after=$(metric_value "$WORK/m1.txt" "$series")
		[ $((after - before)) = "${c#*:}" ] || ok=0
	done
	[ $ok = 0 ] || break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "the answers are not counted by their status: before $(grep '^tc_exporter_http_requests_total' "$WORK/m0.txt" | tr '\n' ' '), after $(grep '^tc_exporter_http_requests_total' "$WORK/m1.txt" | tr '\n' ' ')"
	sleep 0.3
done
if grep 'warning: http:' "$WORK/tcx.err" >&2; then
	fail "these requests were logged as warnings (above)"
fi
alive "$pid" tcx

note "a second daemon on the same address"
start_tcx second "$WORK/tcx.yaml"
pid2=$TCX_PID
if ! wait_gone "$pid2" 10; then
	fail "a second daemon on 127.0.0.1:$port is still running after 10 s (sharing the port?)"
fi
rc=0
wait "$pid2" || rc=$?
sanitizer_check second
[ "$rc" = 1 ] || fail "the second daemon exited $rc, expected 1; its stderr: $(cat "$WORK/second.err")"
grep -E "error: .*127\.0\.0\.1:$port.*in use" "$WORK/second.err" ||
	fail "the second daemon does not say that 127.0.0.1:$port is in use: $(cat "$WORK/second.err")"
for i in $(seq 1 20); do
	[ "$(http_code "$base/metrics")" = 200 ] || fail "request $i to the first daemon failed"
done
alive "$pid" tcx

note "a reload that adds an address in use"
# hold.py PORT: listens on 127.0.0.1:PORT (no SO_REUSEPORT) until killed.
cat >"$WORK/hold.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("listening", flush=True)
time.sleep(3600)
PY
bg_start hold "$PYTHON" "$WORK/hold.py" "$port2"
deadline=$((SECONDS + 10))
until grep -q listening "$WORK/hold.out"; do
	[ "$SECONDS" -lt "$deadline" ] || fail "hold.py did not listen: $(cat "$WORK/hold.err")"
	sleep 0.1
done
listen() { sed -i "s/^  listen: .*/  listen: [$1]/" "$WORK/tcx.yaml"; }
listen "\"127.0.0.1:$port\", \"127.0.0.1:$port3\""
mark_log
kill -HUP "$pid"
wait_log 10 'configuration reloaded'
wait_http 200 10 "http://127.0.0.1:$port3/metrics"
listen "\"127.0.0.1:$port\", \"127.0.0.1:$port2\", \"127.0.0.1:$port3\""
mark_log
kill -HUP "$pid"
wait_log 10 "reload rejected: cannot listen on 127\.0\.0\.1:$port2: Address already in use"
for p in "$port" "$port3"; do
	[ "$(http_code "http://127.0.0.1:$p/metrics")" = 200 ] ||
		fail "127.0.0.1:$p does not answer after the rejected reload"
done
alive "$pid" tcx
stop_tcx "$pid" tcx 5
echo "http_errors: all checks passed in $(elapsed_ms) ms"
