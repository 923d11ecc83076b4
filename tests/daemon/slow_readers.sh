#!/bin/bash
# Slow readers cannot make the daemon keep the collections they read, in a
# private network namespace (root). 200,000 u32 filters with cookies (a
# collection takes about 50 MB: README, "The daemon"), each collection
# scraped as Prometheus 3 does (OpenMetrics + gzip, rendered ahead); then 16
# connections from 127.0.0.2, one opened after each collection, each reading
# its answer at 160 KB/s: plain text (streamed, 185 MB) and Prometheus's
# variant (rendered ahead, 5 MB) in turn, so that the plain text is never
# rendered ahead. Before, each kept its collection until it had read it all
# (a plain-text one for 20 minutes): VmRSS grew by a collection per reader.
#   - the daemon's peak memory (VmHWM) stays under what it took with
#     Prometheus alone plus max_stale_mib (the default, 256) plus 0.5 MiB per
#     reader (README, "The daemon");
#   - every Prometheus scrape during the attack gets 200 and the whole body;
#   - readers were closed, counted in
#     tc_exporter_http_responses_cut_total{reason="memory"}, logged once;
#   - the daemon exits cleanly.
# Collections are asked for (SIGHUP, interval 1h), so that the attack follows
# them exactly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc awk gzip
in_netns TCXD_SLOW_READERS_INSIDE -n

daemon_setup
n=200000
readers=16
stale_mib=256 # the default of http.max_stale_mib
per_reader_kb=512
u32_filters "$n"

read -r port < <(free_ports 1)
base=http://127.0.0.1:$port
printf 'interval: 1h\ntargets:\n  - {dev: v0, parent: ingress}\nhttp: {listen: ["127.0.0.1:%s"], timeout: 10s, renders_per_ip: 1024, renders: 1024}\n' \
	"$port" >"$WORK/tcx.yaml"
# ASan keeps freed memory in quarantine: none here, so that RSS means the same
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 120 "$base/healthz"
note "at $(elapsed_ms) ms, the first collection is published"

mem_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$TCX_PID/status"; }

# Prometheus 3's Accept header (its default scrape_protocols).
prom3='application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2'

# scrape_prom: one scrape as Prometheus 3 makes it, checked (200, gzip, every
# row, # EOF); prints when its snapshot was taken.
scrape_prom() {
	local code
	code=$(curl -sS --max-time 10 -D "$WORK/prom.hdr" -o "$WORK/prom.gz" -w '%{http_code}' \
		-H "Accept: $prom3" -H 'Accept-Encoding: gzip' "$base/metrics") ||
		fail "a Prometheus scrape failed: $code"
	[ "$code" = 200 ] || fail "a Prometheus scrape got $code"
	grep -qi '^content-encoding: *gzip' "$WORK/prom.hdr" || fail "the Prometheus scrape is not gzip"
	gzip -dc "$WORK/prom.gz" >"$WORK/prom.txt" || fail "the Prometheus scrape does not decompress"
	[ "$(grep -c '^tc_action_bytes_total{' "$WORK/prom.txt")" = "$n" ] ||
		fail "a Prometheus scrape has $(grep -c '^tc_action_bytes_total{' "$WORK/prom.txt") rows, expected $n"
	[ "$(tail -n 1 "$WORK/prom.txt")" = "# EOF" ] || fail "a Prometheus scrape does not end with # EOF"
	metric_value "$WORK/prom.txt" tc_exporter_snapshot_timestamp_seconds
}

# collect: a new collection (a reload collects at once), scraped by
# Prometheus once it is published.
last=$(scrape_prom)
scrapes=1
collect() {
	local c deadline=$((SECONDS + 60))
	kill -HUP "$TCX_PID"
	while c=$(scrape_prom) && [ "$c" = "$last" ]; do
		scrapes=$((scrapes + 1))
		alive "$TCX_PID" tcx
		[ "$SECONDS" -lt "$deadline" ] || fail "no new collection within 60 s"
		sleep 0.2
	done
	scrapes=$((scrapes + 1))
	last=$c
}

# Prometheus's variant is rendered ahead from the third collection on; the
# daemon's peak with Prometheus alone (VmHWM from VmRSS: proc(5),
# clear_refs).
collect
collect
echo 5 >"/proc/$TCX_PID/clear_refs" || fail "cannot reset VmHWM (/proc/PID/clear_refs)"
collect
collect
hwm0=$(mem_kb VmHWM)
bound=$((hwm0 + stale_mib * 1024 + readers * per_reader_kb))
note "at $(elapsed_ms) ms, Prometheus alone: VmRSS $(mem_kb VmRSS) kB, VmHWM $hwm0 kB; bound $bound kB"

# reader.py PORT VARIANT RATE ACCEPT READY: a connection from 127.0.0.2
# asking for /metrics (text: plain text; prom: as Prometheus 3, with ACCEPT)
# and reading it at RATE bytes/s; creates READY once it has the headers. On
# SIGTERM it reads what is left as fast as it can, for up to 10 s or 16 MB: a
# connection the server closed still holds up to a few MB in the sockets'
# buffers, which take tens of seconds at RATE, so the end is seen only by
# draining them. Then, or when the server ends it, prints how it ended:
# "complete", "cut" (closed before the end of its body) or "open", and the
# bytes it read.
cat >"$WORK/reader.py" <<'PY'
import signal, socket, sys, time
port, variant, rate, accept, ready = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.bind(("127.0.0.2", 0))
s.connect(("127.0.0.1", port))
req = "GET /metrics HTTP/1.1\r\nHost: x\r\n"
if variant == "prom":
    req += "Accept: %s\r\nAccept-Encoding: gzip\r\n" % accept
s.sendall((req + "\r\n").encode())
got, head, tail, state = 0, b"", b"", "open"
length = None  # None: chunked
drain_until, drain_max = None, None  # set on SIGTERM
def drain(*_):
    global drain_until, drain_max
    drain_until, drain_max = time.monotonic() + 10, got + (16 << 20)
signal.signal(signal.SIGTERM, drain)
s.settimeout(0.2)
t0 = time.monotonic()
while True:
    if drain_until is not None:
        if time.monotonic() > drain_until or got > drain_max:
            break
        want = 65536
    else:
        want = int(rate * (time.monotonic() - t0)) - got
    if want <= 0:
        time.sleep(0.05)
        continue
    try:
        b = s.recv(min(want, 65536))
    except socket.timeout:
        continue
    except OSError:
        b = b""
    if not b:
        state = "cut"
        break
    got += len(b)
    if length is None and b"\r\n\r\n" not in head:
        head += b
        if b"\r\n\r\n" in head:
            open(ready, "w").close()
            for line in head.split(b"\r\n\r\n")[0].split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1]) + head.index(b"\r\n\r\n") + 4
    tail = (tail + b)[-7:]
    if (length is not None and got >= length) or (length is None and tail == b"\r\n0\r\n\r\n"):
        state = "complete"
        break
s.close()
print(state, got, flush=True)
PY
declare -a rpids
for ((i = 0; i < readers; i++)); do
	v=text
	[ $((i % 2)) = 0 ] || v=prom
	bg_start "reader$i" "$PYTHON" "$WORK/reader.py" "$port" "$v" 160000 "$prom3" "$WORK/reader$i.ready"
	rpids+=("$BG_PID")
	wait_file "$WORK/reader$i.ready" 20 "$BG_PID" "reader$i" # its answer is under way
	collect
	note "reader $i ($v) opened; $(mem_kb VmRSS) kB, VmHWM $(mem_kb VmHWM) kB"
done
hwm1=$(mem_kb VmHWM)
note "$readers slow readers and $scrapes Prometheus scrapes, each 200: VmHWM $hwm1 kB"
for ((i = 0; i < readers; i++)); do
	kill -TERM "${rpids[$i]}" 2>/dev/null || true
done
cut=0
for ((i = 0; i < readers; i++)); do
	wait "${rpids[$i]}" || true
	read -r st bytes <"$WORK/reader$i.out" || fail "reader $i printed nothing: $(cat "$WORK/reader$i.err")"
	[ "$st" = cut ] && cut=$((cut + 1))
	note "reader $i: $st after $bytes bytes"
done
# (plain text: rendered now, with the counters as they are; the bodies
# rendered ahead have them as of before their own publication)
scrape "$WORK/now.txt" "$base/metrics"
counted=$(metric_value "$WORK/now.txt" 'tc_exporter_http_responses_cut_total{reason="memory"}')
note "readers closed: $cut seen, $counted counted"
[ "$hwm1" -le "$bound" ] ||
	fail "VmHWM $hwm1 kB with $readers slow readers, more than $bound kB (Prometheus alone: $hwm0 kB, + max_stale_mib $stale_mib MiB + $per_reader_kb kB per reader)"
[ "${counted:-0}" -ge 1 ] || fail "no reader was closed (tc_exporter_http_responses_cut_total{reason=\"memory\"} ${counted:-absent})"
[ "$cut" -ge 1 ] || fail "no reader saw its connection closed"
[ "$(grep -c 'max_stale_mib.*logged once' "$WORK/tcx.err")" = 1 ] ||
	fail "the closing of slow readers was not logged once: $(grep -c max_stale_mib "$WORK/tcx.err") lines"
stop_tcx "$TCX_PID" tcx 10
echo "slow_readers: all checks passed in $(elapsed_ms) ms"
