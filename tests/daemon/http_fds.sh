#!/bin/bash
# File descriptors and HTTP, in a private network namespace (root). The
# daemon runs at RLIMIT_NOFILE 1024 (soft and hard) with two listen
# addresses and max_connections 512 on each, timeout 60s (no connection is
# closed for its age during the test):
#   - at load, the limits add up: 2 x 512 connections do not fit in 1024
#     descriptors with what the rest of the daemon needs, so each address's
#     max_connections is lowered to fit, and a warning says so; under the
#     attack below, the daemon holds fewer than 1010 descriptors;
#   - 1040 incomplete requests from 16 addresses (127.0.0.2 to 127.0.0.17,
#     alternating between the two ports, each connection the server closes
#     reopened at once) leave room for a scrape from 127.0.0.100: it gets 200
#     within 5 s;
#   - the same attack once the daemon's limit is lowered to 400 (prlimit on
#     the running process, as if something else held the descriptors): its
#     accept() fails with EMFILE, a connection still waiting for its request
#     is closed for each failure, and the scrape gets 200 within 5 s again;
#     the failures are counted in tc_exporter_http_accept_errors_total
#     {cause="resource"}, and libmicrohttpd's lines about them are logged at
#     most once a minute each (a handful in all, where main logged
#     thousands).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs prlimit
in_netns TCXD_HTTP_FDS_INSIDE -n

daemon_setup
read -r p1 p2 < <(free_ports 2)
cat >"$WORK/tcx.yaml" <<YAML
interval: 1s
targets: [{all: true}]
http:
  listen: ["127.0.0.1:$p1", "127.0.0.1:$p2"]
  max_connections: 512
  max_connections_per_ip: 64
  timeout: 60s
YAML
TCX_WRAP=(prlimit --nofile=1024:1024 -- "${TCX_WRAP[@]}")
start_tcx tcx "$WORK/tcx.yaml"
pid=$TCX_PID
wait_http 200 30 "http://127.0.0.1:$p1/healthz"
wait_http 200 30 "http://127.0.0.1:$p2/healthz"

# hold.py N PORTS FIRST NSRC READY STOP: N connections, the i-th from
# 127.0.0.(FIRST + i % NSRC) to port PORTS[i % len], each sending a request
# that never ends; every connection the server closes is opened again at
# once. Creates READY once all N are open, stops when STOP exists (60 s at
# most); prints what it did.
cat >"$WORK/hold.py" <<'PY'
import os, resource, select, socket, sys, time
n, ports, first, nsrc, ready, stop = int(sys.argv[1]), [int(p) for p in sys.argv[2].split(",")], \
    int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
resource.setrlimit(resource.RLIMIT_NOFILE, (4 * n, 4 * n))
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Never-Ends: "
poll = select.poll()
socks = {}  # fd -> (socket, i)
opened = failed = 0
def open_one(i):
    global opened, failed
    s = socket.socket()
    s.settimeout(2)
    try:
        s.bind(("127.0.0.%d" % (first + i % nsrc), 0))
        s.connect(("127.0.0.1", ports[i % len(ports)]))
        s.sendall(req)
    except OSError:
        failed += 1
        s.close()
        return
    opened += 1
    socks[s.fileno()] = (s, i)
    poll.register(s, select.POLLIN)
for i in range(n):
    open_one(i)
open(ready, "w").close()
t0 = time.time()
while not os.path.exists(stop) and time.time() - t0 < 60:
    for fd, ev in poll.poll(100):
        s, i = socks.pop(fd)
        poll.unregister(fd)
        s.close()
        open_one(i)
print("opened %d failed %d open_at_end %d" % (opened, failed, len(socks)), flush=True)
PY

# nfds: how many descriptors the daemon holds.
nfds() {
	find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l
}

# attack NAME MIN PORTS: 1040 incomplete requests from 16 addresses to PORTS
# (comma-separated); waits until all are open and the daemon holds at least
# MIN descriptors.
attack() {
	local name=$1 min=$2 deadline
	rm -f "$WORK/$name.ready" "$WORK/$name.stop"
	bg_start "$name" "$PYTHON" "$WORK/hold.py" 1040 "$3" 2 16 "$WORK/$name.ready" "$WORK/$name.stop"
	ATTACK_PID=$BG_PID
	wait_file "$WORK/$name.ready" 30 "$ATTACK_PID" "$name"
	deadline=$((SECONDS + 10))
	while [ "$(nfds)" -lt "$min" ]; do
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "$name: the daemon holds only $(nfds) descriptors, expected $min or more"
		sleep 0.1
	done
	note "$name: the daemon holds $(nfds) descriptors"
}

# scrape_during NAME PORT: a scrape from 127.0.0.100 gets 200 within 5 s.
scrape_during() {
	local t0 code ms
	t0=$(date +%s%N)
	code=$(curl -s -o "$WORK/$1.body" --max-time 5 --interface 127.0.0.100 -w '%{http_code}' \
		"http://127.0.0.1:$2/metrics" || true)
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$code" = 200 ] ||
		fail "$1: a scrape from 127.0.0.100 got '$code' after $ms ms (expected 200 within 5 s)"
	note "$1: the scrape from 127.0.0.100 got 200 in $ms ms"
}

stop_attack() {
	touch "$WORK/$1.stop"
	wait_gone "$ATTACK_PID" 70 || fail "$1: hold.py did not stop"
	wait "$ATTACK_PID" || fail "$1: hold.py failed: $(cat "$WORK/$1.err")"
	note "$1: $(cat "$WORK/$1.out")"
}

note "1040 incomplete requests at RLIMIT_NOFILE 1024"
attack flood 900 "$p1,$p2"
scrape_during flood "$p1"
# What fits was taken: the daemon's descriptors stay below the limit (the
# fewest of 5 looks 0.1 s apart: connections closed here hold theirs for a
# moment), where main held all 1024.
least=1024
for _ in 1 2 3 4 5; do
	k=$(nfds)
	[ "$k" -ge "$least" ] || least=$k
	sleep 0.1
done
note "flood: the daemon holds $least descriptors at the least"
[ "$least" -lt 1010 ] || fail "flood: the daemon holds $least of its 1024 descriptors (the limits do not add up)"
alive "$pid" tcx
stop_attack flood
grep -E 'warning: http: .*max_connections 512 .*2 listen addresses.*RLIMIT_NOFILE.*1024' "$WORK/tcx.err" ||
	fail "no warning that 2 x max_connections 512 do not fit in RLIMIT_NOFILE 1024: $(grep -i 'http' "$WORK/tcx.err")"

note "the same at RLIMIT_NOFILE 400 (lowered on the running daemon): accept() fails with EMFILE"
deadline=$((SECONDS + 20))
while [ "$(nfds)" -gt 100 ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the daemon still holds $(nfds) descriptors after the first attack"
	sleep 0.1
done
prlimit --pid "$pid" --nofile=400:400
attack emfile 390 "$p1"
scrape_during emfile "$p2"
alive "$pid" tcx
stop_attack emfile
wait_http 200 20 "http://127.0.0.1:$p1/healthz"
deadline=$((SECONDS + 15))
while :; do
	scrape "$WORK/m.txt" "http://127.0.0.1:$p2/metrics"
	n=$(metric_value "$WORK/m.txt" 'tc_exporter_http_accept_errors_total{cause="resource"}')
	[ -z "$n" ] || [ "$n" = 0 ] || break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "tc_exporter_http_accept_errors_total{cause=\"resource\"} is '$n' after accept() failed with EMFILE"
	sleep 0.3
done
note "accept errors counted: $n"
lines=$(grep -cE 'Error accepting connection|resource limit' "$WORK/tcx.err" || true)
note "accept error lines logged: $lines"
[ "$lines" -le 6 ] ||
	fail "$lines lines about accept errors were logged (at most one a minute per cause expected): $(grep -E 'Error accepting|resource limit' "$WORK/tcx.err" | sort | uniq -c | sort -rn | head -5)"
stop_tcx "$pid" tcx 10
echo "http_fds: all checks passed in $(elapsed_ms) ms"
