#!/bin/bash
# A flood of wrong passwords does not hold up the real scraper, in a private
# network namespace (root). User alice at bcrypt cost 10 (about 60 ms a
# check); 4 attacking addresses (127.0.0.2 to 127.0.0.5) x 32 keep-alive
# connections send alice:wrong back to back, while a scraper from 127.0.0.1,
# whose password was verified (and cached) before the flood, scrapes every
# second:
#   - every one of its scrapes gets 200 in under 1 s (from a daemon whose
#     HTTP threads waited for the bcrypt checks, the first ones took 2-3 s,
#     then none was answered within 3 s);
#   - the failed checks of each attacking address are limited (default: a
#     burst of 10, then one a second): the 401s of the flood stay within
#     4 x (10 + its duration in seconds), the rest of its requests get 429
#     with a Retry-After, and both are counted in
#     tc_exporter_http_requests_total;
#   - SIGTERM in the middle of the flood (checks in flight, connections
#     waiting for them) stops the daemon cleanly (exit 0, no sanitizer
#     report) within 2 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
in_netns TCXD_AUTH_FLOOD_INSIDE -n

daemon_setup
read -r port < <(free_ports 1)
password='correct horse'
hash=$(bcrypt "$password")
cat >"$WORK/web.yml" <<YAML
basic_auth_users:
  alice: '$hash'
YAML
cat >"$WORK/tcx.yaml" <<YAML
interval: 1h
targets: [{all: true}]
http:
  listen: ["127.0.0.1:$port"]
  web_config: web.yml
  max_connections: 512
  max_connections_per_ip: 64
YAML
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
url=http://127.0.0.1:$port/metrics
wait_http 200 30 "$url" -u "alice:$password" # verified: cached from now on

# flood.py PORT SECONDS SRC...: 32 keep-alive connections from each SRC,
# each sending GET /metrics with alice:wrong as soon as the previous answer
# came (a closed connection is opened again), for SECONDS (0: until killed).
# One thread (selectors), so that it takes at most one CPU. Writes its
# answers by status, as JSON, to flood.json when it ends.
cat >"$WORK/flood.py" <<'PY'
import base64, json, os, selectors, signal, socket, sys, time

port, secs, srcs = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
auth = base64.b64encode(b"alice:wrong").decode()
req = ("GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic %s\r\n\r\n" % auth).encode()
sel = selectors.DefaultSelector()
counts = {}
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def connect(src):
    s = socket.socket()
    s.bind((src, 0))
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    st = {"src": src, "out": req, "in": b"", "answered": False}
    sel.register(s, selectors.EVENT_WRITE, st)


def answer(st):
    """Takes whole answers off st['in']: True when one was taken."""
    head, sep, rest = st["in"].partition(b"\r\n\r\n")
    if not sep:
        return False
    lines = head.split(b"\r\n")
    code = lines[0].split()[1].decode()
    length = 0
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    if len(rest) < length:
        return False
    st["in"] = rest[length:]
    counts[code] = counts.get(code, 0) + 1
    return True


for src in srcs:
    for _ in range(32):
        connect(src)
t0 = time.monotonic()
while not stop and (secs == 0 or time.monotonic() - t0 < secs):
    for key, ev in sel.select(0.2):
        s, st = key.fileobj, key.data
        try:
            if ev & selectors.EVENT_WRITE:
                n = s.send(st["out"])
                st["out"] = st["out"][n:]
                if not st["out"]:
                    sel.modify(s, selectors.EVENT_READ, st)
                continue
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:  # by the server (or refused, once it is gone)
            sel.unregister(s)
            s.close()
            what = "closed" if st["answered"] else "closed unanswered"
            counts[what] = counts.get(what, 0) + 1
            if not st["answered"]:
                time.sleep(0.01)
            connect(st["src"])
            continue
        st["in"] += data
        if answer(st):
            st["answered"] = True
            st["out"] = req
            sel.modify(s, selectors.EVENT_WRITE, st)
with open(os.path.join(os.path.dirname(sys.argv[0]), "flood.json"), "w") as f:
    json.dump(counts, f)
PY

note "flood: 4 addresses x 32 connections sending alice:wrong"
t_flood=$(date +%s%N)
bg_start flood "$PYTHON" "$WORK/flood.py" "$port" 0 127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5
flood_pid=$BG_PID
sleep 2 # the flood is under way

# 18 scrapes, one a second, each timed (curl's time_total); a scrape that
# gets no answer within 3 s counts as 3 s.
slow=0 n=0 worst=0 times=()
for _ in $(seq 18); do
	t0=$(date +%s%N)
	out=$(curl -s -o /dev/null --max-time 3 -w '%{http_code} %{time_total}' \
		-u "alice:$password" "$url" || true)
	read -r code secs <<<"${out:-000 3}"
	ms=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')
	times+=("$code/${ms}ms")
	n=$((n + 1))
	[ "$code" = 200 ] && [ "$ms" -lt 1000 ] || slow=$((slow + 1))
	[ "$ms" -le "$worst" ] || worst=$ms
	left=$((1000 - ($(date +%s%N) - t0) / 1000000))
	[ "$left" -le 0 ] || sleep "$(awk -v m="$left" 'BEGIN { printf "%.3f", m / 1000 }')"
done
alive "$flood_pid" flood
note "the scraper during the flood (status/latency): ${times[*]}"
[ "$slow" = 0 ] ||
	fail "$slow of $n scrapes during the flood were not 200 within 1 s (the worst: $worst ms)"

# A 429 says when to try again. (The flood takes each token of 127.0.0.2
# within a millisecond of its coming: one try in three gets one at most.)
for _ in 1 2 3; do
	curl -s -D "$WORK/limited.hdr" -o /dev/null --max-time 3 --interface 127.0.0.2 \
		-u alice:wrong "$url" || true
	tr -d '\r' <"$WORK/limited.hdr" >"$WORK/limited.txt"
	! grep -q '^HTTP/1.1 429' "$WORK/limited.txt" || break
done
grep -q '^HTTP/1.1 429' "$WORK/limited.txt" ||
	fail "a wrong password from a flooding address: not 429: $(head -n 1 "$WORK/limited.txt")"
grep -qiE '^retry-after: [0-9]+$' "$WORK/limited.txt" ||
	fail "a 429 without a Retry-After: $(cat "$WORK/limited.txt")"

# The daemon's counts: each attacking address had a burst of 10 failed
# checks, then one a second (its 32 connections share one budget).
scrape "$WORK/m.txt" "$url" -u "alice:$password"
flood_ms=$((($(date +%s%N) - t_flood) / 1000000))
n401=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="401"}')
n429=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="429"}')
note "after $flood_ms ms of flood: ${n401:-no} 401 (a bcrypt each), ${n429:-no} 429"
max401=$((4 * (10 + flood_ms / 1000 + 1)))
[ "${n401:-0}" -le "$max401" ] ||
	fail "$n401 wrong passwords were checked in $flood_ms ms; at most $max401 (4 addresses x (10 + 1 a second))"
[ "${n429:-0}" -gt 0 ] || fail "no 429 counted: the flood's failed checks were not limited"

# SIGTERM with the flood still on: checks in flight, connections waiting
# for them (libmicrohttpd must find none suspended when it stops). It took
# 9-97 ms, 230-740 ms in the ASan build; stop_auth.sh is the one that
# tells a stop that waits for checks.
stop_tcx "$pid" tcx 10
note "stopped in $STOP_MS ms during the flood"
[ "$STOP_MS" -lt 2000 ] || fail "SIGTERM during the flood took $STOP_MS ms"
alive "$flood_pid" flood
kill -TERM "$flood_pid"
wait "$flood_pid" || fail "the flood client failed: $(tail -n 5 "$WORK/flood.err")"
note "the flood's answers: $(cat "$WORK/flood.json")"
echo "auth_flood: all checks passed"
