#!/bin/bash
# What libmicrohttpd answers itself, and an address in use, in a private
# network namespace (root):
#   - requests libmicrohttpd rejects before the handler sees them are
#     answered and counted in tc_exporter_http_requests_total: 400 (a
#     malformed Content-Length), 413 (a Content-Length beyond 64 bits), 414
#     (a request line longer than the buffer), 431 (a 64 KiB header), 505
#     (HTTP/2.0): each code counts exactly its requests, and none is logged
#     as a warning;
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
