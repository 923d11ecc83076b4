#!/bin/bash
# Slow clients cannot lock Prometheus out, in a private network namespace
# (root); max_connections 256, max_connections_per_ip 64, timeout 3s:
#   - the request deadline: a client that sends one header byte every 0.5 s
#     (never idle long enough for the inactivity timeout) is closed about
#     3 s after it connected, not kept for as long as it keeps sending; so
#     is one that sends its headers at once, then its body one byte every
#     0.5 s;
#   - the attack: 12 addresses (127.0.0.2 to 127.0.0.13) x 64 connections
#     (768, three times max_connections), each sending one header byte per
#     second, every connection the server closes reopened at once, for a
#     bounded time; meanwhile 20 of 20 scrapes from 127.0.0.1 get 200 in
#     under 1 s each, and so do 3 that wait 1 s after connecting before
#     they send their request (their slot is not given to the attackers'
#     reconnections); afterwards the daemon still serves and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
in_netns TCXD_SLOW_CLIENTS_INSIDE -n

daemon_setup
read -r port < <(free_ports 1)
cat >"$WORK/tcx.yaml" <<YAML
interval: 1h
targets: [{all: true}]
http:
  listen: ["127.0.0.1:$port"]
  renders_per_ip: 1024 # each GET a render of its own: not what this tests
  renders: 1024
  max_connections: 256
  max_connections_per_ip: 64
  timeout: 3s
YAML
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
base=http://127.0.0.1:$port
wait_http 200 30 "$base/healthz"

note "request deadline: one byte every 0.5 s from 127.0.0.14"
# drip.py SRC PORT MAX_S headers|body: sends a request's headers one byte
# every 0.5 s and never ends them; or sends headers announcing a body at
# once, then the body one byte every 0.5 s. Prints how long the server kept
# the connection open ("open" when it still was after MAX_S).
cat >"$WORK/drip.py" <<'PY'
import socket, sys, time
src, port, max_s, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = socket.socket()
s.bind((src, 0))
s.connect(("127.0.0.1", port))
s.settimeout(0.5)
head = b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
if mode == "body":
    s.sendall(head + b"Content-Length: 100000\r\n\r\n")
    head = b""
else:
    head += b"X-Slow: "
t0 = time.monotonic()
i = 0
while time.monotonic() - t0 < max_s:
    try:
        s.send(head[i:i + 1] if i < len(head) else b"a")
        i += 1
        if s.recv(1) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
else:
    print("open")
    sys.exit(0)
print("%.2f" % (time.monotonic() - t0))
PY
for mode in headers body; do
	kept=$("$PYTHON" "$WORK/drip.py" 127.0.0.14 "$port" 10 $mode)
	[ "$kept" != open ] ||
		fail "a client sending its $mode one byte every 0.5 s was still connected after 10 s (timeout: 3s)"
	note "$mode one byte every 0.5 s: closed after $kept s"
	awk -v k="$kept" 'BEGIN { exit !(k >= 2.5 && k < 5) }' ||
		fail "the client sending its $mode slowly was closed after $kept s, expected about 3 s (the timeout)"
done

note "768 slow connections from 127.0.0.2-13 vs 20 scrapes from 127.0.0.1"
# slowloris.py PORT SECONDS READY: 64 connections from each of 127.0.0.2 to
# 127.0.0.13, each sending one header byte per second (a request line, then
# a header that never ends); every connection the server closes is opened
# again at once. Writes READY after 3 s, stops after SECONDS (or SIGTERM) and
# prints how many connections it opened and how many were open at the end.
cat >"$WORK/slowloris.py" <<'PY'
import errno, select, signal, socket, sys, time
port, secs, ready = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
poll = select.poll()
conns = {}  # fd -> [socket, source, bytes sent]
opened = 0
def open_one(src):
    global opened
    s = socket.socket()
    s.setblocking(False)
    s.bind((src, 0))
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        s.close()
        return
    conns[s.fileno()] = [s, src, 0]
    poll.register(s.fileno(), select.POLLIN)
    opened += 1
def drop(fd):
    s, src, _ = conns.pop(fd)
    poll.unregister(fd)
    s.close()
    return src
for a in range(2, 14):
    for _ in range(64):
        open_one("127.0.0.%d" % a)
t0 = time.monotonic()
next_byte = t0
signalled = False
while not stop and time.monotonic() - t0 < secs:
    if not signalled and time.monotonic() - t0 >= 3:
        open(ready, "w").close()
        signalled = True
    if time.monotonic() >= next_byte:
        for fd, c in list(conns.items()):
            s, _, n = c
            try:
                s.send(head[n:n + 1] if n < len(head) else b"a")
                c[2] += 1
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                open_one(drop(fd))
        next_byte += 1
    for fd, ev in poll.poll(100):
        if fd not in conns:
            continue
        s = conns[fd][0]
        try:
            if s.recv(64) != b"":
                continue
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            pass
        open_one(drop(fd))  # closed by the server: at once again
print("opened %d open_at_end %d" % (opened, len(conns)), flush=True)
PY
bg_start slowloris "$PYTHON" "$WORK/slowloris.py" "$port" 60 "$WORK/slowloris.ready"
atk_pid=$BG_PID
wait_file "$WORK/slowloris.ready" 20 "$atk_pid" slowloris
times=()
for i in $(seq 1 20); do
	r=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "$base/metrics" || true)
	read -r code secs <<<"$r"
	times+=("$secs")
	[ "$code" = 200 ] ||
		fail "scrape $i of 20 during the attack got '$code' after ${secs:-?} s (earlier ones: ${times[*]})"
	awk -v t="$secs" 'BEGIN { exit !(t < 1) }' ||
		fail "scrape $i of 20 during the attack took $secs s (earlier ones: ${times[*]})"
	alive "$pid" tcx
	sleep 0.2
done
note "20 scrapes during the attack, seconds each: ${times[*]}"
# late.py PORT DELAY: connects from 127.0.0.1, waits DELAY s (a TLS
# handshake over a long path, say), then sends a scrape; prints the status.
cat >"$WORK/late.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
time.sleep(float(sys.argv[2]))
got = b""
try:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    while b"\r\n" not in got:
        b = s.recv(4096)
        if not b:
            break
        got += b
except OSError:
    pass
print(got.split(b" ")[1].decode() if got.startswith(b"HTTP/1.") else "closed")
PY
for i in 1 2 3; do
	code=$("$PYTHON" "$WORK/late.py" "$port" 1)
	[ "$code" = 200 ] ||
		fail "a scrape that waited 1 s after connecting got '$code' during the attack (closed for the attackers' connections?)"
done
note "3 scrapes that waited 1 s after connecting: 200"
kill -0 "$atk_pid" 2>/dev/null || fail "slowloris.py ended before the scrapes did: $(cat "$WORK/slowloris.err")"
kill -TERM "$atk_pid"
wait_gone "$atk_pid" 10 || fail "slowloris.py did not stop"
wait "$atk_pid" || fail "slowloris.py failed: $(cat "$WORK/slowloris.err")"
note "attackers: $(cat "$WORK/slowloris.out")"
read -r _ n_opened _ _ < <(cat "$WORK/slowloris.out")
[ "$n_opened" -ge 768 ] || fail "the attack opened only $n_opened connections"

[ "$(http_code "$base/metrics")" = 200 ] || fail "no 200 after the attack"
stop_tcx "$pid" tcx 5
echo "slow_clients: all checks passed in $(elapsed_ms) ms"
