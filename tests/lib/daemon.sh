# Helpers of the tests that run the daemon, or any other long-running
# process, in a private network namespace: tests/daemon/*.sh and, through
# tests/lib/snmp.sh, tests/snmp/*.sh. Source it instead of common.sh (it
# sources common.sh):
#
#   . "$here/../lib/daemon.sh"
#
# A test checks what decides on a skip (daemon_prereqs), re-executes itself
# in a private network namespace (in_netns), then calls daemon_setup. The
# loopback ports it listens on cannot clash with anything on the host or with
# a test running in parallel; they are still picked by the kernel (bind to
# port 0) so that two servers of one test never clash either.
#
# Every process started with bg_start, or added to BG_PIDS, is stopped when
# the test exits, whatever the reason (SIGTERM, then SIGKILL after 5 s); on
# a failure the logs in $WORK are shown.
# shellcheck shell=bash
# shellcheck disable=SC2034 # TCX_PID, BG_PID, STOP_MS, NOTIFY_PID are for the tests

# The directory of this file (tests/lib), for the helpers next to it.
# Exported: Python helpers import tests/lib/prom.py from it.
TCX_TESTLIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TCX_TESTLIB
# shellcheck source=common.sh
. "$TCX_TESTLIB/common.sh"

# The pids to stop at exit: bg_start adds its own; add those of processes
# started otherwise.
BG_PIDS=()

# daemon_prereqs [CMD...]: the checks that decide on a skip, before entering
# the namespace: the binary, root and `unshare -n`, ip, curl and every CMD,
# python3.
# shellcheck disable=SC2120 # the arguments are optional
daemon_prereqs() {
	require_bin
	require_root -n
	require_cmd ip curl "$@"
	find_python
}

# daemon_setup [ipv6]: inside the namespace: loopback up; IPv6 off unless
# "ipv6" is given (no router solicitations, DAD or MLD that would count as
# traffic); the work directory and the exit trap; T_START for elapsed_ms.
# 127.0.0.0/8 is local on lo: 127.0.0.2 and up work as other client
# addresses.
# shellcheck disable=SC2120 # the argument is optional
daemon_setup() {
	ip link set lo up
	if [ "${1:-}" != ipv6 ]; then
		sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
			2>/dev/null || true
	fi
	make_workdir
	trap '_daemon_exit' EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap 'exit 129' HUP
	T_START=$(date +%s%N)
}

# stop_bg: stops every process of BG_PIDS (SIGTERM, then SIGKILL after 5 s).
# The exit trap does; a test's own exit work that must come after it (e.g.
# removing the user they run as) calls it first.
stop_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${BG_PIDS[@]}"; do
		wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
	done
}

_daemon_exit() {
	local rc=$? p
	trap - EXIT TERM INT HUP
	stop_bg
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${WORK:-}" ]; then
		# The logs tell what went wrong (snmpd logs to its stdout).
		for p in "$WORK"/*.err "$WORK"/snmpd*.out; do
			[ -s "$p" ] || continue
			echo "--- $p (last 30 lines)" >&2
			tail -n 30 "$p" >&2
		done
	fi
	# (Not `(exit $rc); _tcx_cleanup`: under set -e the subshell's failure
	# would end the trap before the work directory is removed.)
	if [ -n "${WORK:-}" ]; then
		if [ "${TCX_KEEP_WORK:-0}" = 1 ]; then
			echo "(kept work directory $WORK)" >&2
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# elapsed_ms: milliseconds since daemon_setup.
elapsed_ms() {
	echo $((($(date +%s%N) - T_START) / 1000000))
}

# bg_start NAME CMD...: starts CMD in the background, stdout and stderr
# appended to $WORK/NAME.out and $WORK/NAME.err (a restarted process keeps
# its earlier log, and a mark_log taken before the restart stays valid);
# sets BG_PID. Stopped at exit.
bg_start() {
	local name=$1
	shift
	"$@" >>"$WORK/$name.out" 2>>"$WORK/$name.err" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# alive PID NAME: fails the test when PID (started as NAME) has died.
alive() {
	if ! kill -0 "$1" 2>/dev/null || [ "$(proc_state "$1")" = Z ]; then
		fail "$2 (pid $1) died; its stderr: $(tail -n 20 "$WORK/$2.err" 2>/dev/null)"
	fi
}

# wait_file FILE SECONDS PID NAME: waits until FILE exists (a helper's "I am
# ready"); fails when PID (started as NAME) died or after SECONDS.
wait_file() {
	local deadline=$((SECONDS + $2))
	until [ -e "$1" ]; do
		alive "$3" "$4"
		[ "$SECONDS" -lt "$deadline" ] || fail "$4 was not ready ($1) within $2 s"
		sleep 0.05
	done
}

# free_ports N [tcp|udp]: N distinct free ports on 127.0.0.1 (default TCP),
# on one line: `read -r a b < <(free_ports 2)`, `port=$(free_ports 1)`.
free_ports() {
	"$PYTHON" - "$1" "${2:-tcp}" <<'PY'
import socket, sys
kind = socket.SOCK_STREAM if sys.argv[2] == "tcp" else socket.SOCK_DGRAM
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# ---- HTTP ------------------------------------------------------------------------------

# Prometheus's Accept header (2.42): OpenMetrics first, the 0.0.4 text after.
readonly PROM_ACCEPT='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

# http_code URL [CURL ARGS...]: prints the status code (000 when no HTTP
# answer came), never fails.
http_code() {
	local url=$1
	shift
	curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$@" "$url" 2>/dev/null || true
}

# wait_http WANT SECONDS URL [CURL ARGS...]: polls URL until it answers WANT
# (e.g. 200); fails the test after SECONDS.
wait_http() {
	local want=$1 secs=$2 url=$3 code deadline
	shift 3
	deadline=$((SECONDS + secs))
	while :; do
		code=$(http_code "$url" "$@")
		[ "$code" = "$want" ] && return 0
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "$url did not answer $want within $secs s (last: $code)"
		sleep 0.05
	done
}

# scrape FILE URL [CURL ARGS...]: GET URL into FILE; fails unless 200.
scrape() {
	local file=$1 url=$2 code
	shift 2
	code=$(curl -s -o "$file" --max-time 10 -w '%{http_code}' "$@" "$url" || true)
	[ "$code" = 200 ] || fail "GET $url answered '$code', expected 200"
}

# metric_value FILE SERIES: the value of the sample whose name and labels are
# exactly SERIES (e.g. 'tc_exporter_config_last_reload_successful') in a text
# exposition; empty when absent.
metric_value() {
	awk -v s="$2" 'index($0, s " ") == 1 { print substr($0, length(s) + 2); exit }' "$1"
}

# collections URL: tc_exporter_collections_total in a scrape of URL (its
# /metrics), which stays in $WORK/collections.txt.
collections() {
	scrape "$WORK/collections.txt" "$1"
	metric_value "$WORK/collections.txt" tc_exporter_collections_total
}

# ---- Prometheus ------------------------------------------------------------------------

# start_prometheus PORT TARGET...: a real Prometheus (2.42 on Debian 12) on
# 127.0.0.1:PORT, scraping each TARGET (HOST:PORT, job "tcx") every second,
# as it negotiates (OpenMetrics); its data in $WORK/tsdb. Waits until it is
# ready; sets PROM to its base URL (for tests/lib/prom.py).
start_prometheus() {
	local port=$1 t targets=
	shift
	for t in "$@"; do targets="$targets${targets:+, }\"$t\""; done
	cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1m}
scrape_configs:
  - job_name: tcx
    static_configs: [{targets: [$targets]}]
YAML
	bg_start prometheus prometheus --config.file="$WORK/prometheus.yml" \
		--storage.tsdb.path="$WORK/tsdb" --web.listen-address="127.0.0.1:$port" --log.level=warn
	PROM=http://127.0.0.1:$port
	wait_http 200 60 "$PROM/-/ready"
}

# udp_raw DEV ARGS...: tests/lib/udp_raw.py (UDP datagrams written raw out of
# DEV, counted by the sender: see its header); its JSON on stdout.
udp_raw() {
	"$PYTHON" "$TCX_TESTLIB/udp_raw.py" "$@" || fail "sending traffic out of $1 failed"
}

# ---- the daemon ------------------------------------------------------------------------

# notify_listen ADDR OUT: a receiver of sd_notify(3) messages on the unix
# socket ADDR (@name: abstract), as systemd's NOTIFY_SOCKET
# (tests/lib/sd_notify.py: one line per message in OUT), started with
# bg_start as "notify"; returns once it listens. Sets NOTIFY_PID.
notify_listen() {
	bg_start notify "$PYTHON" "$TCX_TESTLIB/sd_notify.py" "$1" "$2"
	NOTIFY_PID=$BG_PID
	wait_file "$2.bound" 10 "$NOTIFY_PID" notify
}

# sanitizer_build: is the daemon under test built with ASan or TSan?
sanitizer_build() {
	grep -q -e libasan -e libtsan <<<"$(ldd "$TCX_BIN" 2>/dev/null)"
}

# start_tcx NAME CONFIG [EXTRA ARGS]: starts the daemon as NAME (bg_start;
# the words of the array TCX_WRAP, e.g. valgrind, go in front) and sets
# TCX_PID.
start_tcx() {
	local name=$1 cfg=$2
	shift 2
	bg_start "$name" "${TCX_WRAP[@]}" "$TCX_BIN" --config "$cfg" "$@"
	TCX_PID=$BG_PID
}

# stop_tcx PID NAME SECONDS: SIGTERM, then the daemon must exit 0 within
# SECONDS, with no sanitizer report. Sets STOP_MS to the time it took.
stop_tcx() {
	local pid=$1 name=$2 secs=$3 t0 rc=0
	t0=$(date +%s%N)
	kill -TERM "$pid"
	if ! wait_gone "$pid" "$secs"; then
		kill -KILL "$pid" 2>/dev/null || true
		fail "$name: still running $secs s after SIGTERM"
	fi
	wait "$pid" || rc=$?
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	sanitizer_check "$name"
	[ "$rc" = 0 ] || fail "$name: exit status $rc after SIGTERM, expected 0"
}

# mark_log: logged and wait_log look only at what the daemon started as
# "tcx" logs after this point, so that a line logged by an earlier reload
# cannot answer for a later one.
LOG_MARK=0
mark_log() {
	LOG_MARK=$(stat -c %s "$WORK/tcx.err" 2>/dev/null || echo 0)
}

# logged PATTERN: the lines of "tcx"'s stderr since mark_log that match the
# grep -E PATTERN, case-insensitive; never fails.
logged() {
	tail -c +$((LOG_MARK + 1)) "$WORK/tcx.err" 2>/dev/null | grep -iE -- "$1" || true
}

# wait_log SECONDS PATTERN: waits until "tcx" logs a line matching PATTERN
# (see logged).
wait_log() {
	local deadline=$((SECONDS + $1))
	until [ -n "$(logged "$2")" ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "the daemon did not log '$2' within $1 s"
		sleep 0.1
	done
}

# ---- the network -----------------------------------------------------------------------

# veth NAME PEER: a veth pair, both ends up.
veth() {
	ip link add "$1" type veth peer name "$2"
	ip link set "$1" up
	ip link set "$2" up
}

# u32_filters N: veth v0/v1, clsact on v0 and N u32 filters on v0 ingress,
# 4000 per pref (past 4095 filters in one u32 hash table the kernel reuses
# handles), each with a mirred action and the unique cookie
# 74637862656e6368 ("tcxbench") + its number in 16 hex digits.
u32_filters() {
	veth v0 v1
	tc qdisc add dev v0 clsact
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "filter add dev v0 ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev v1 cookie 74637862656e6368%016x\n",
			       1 + int(i / 4000), int(i / 65536) % 256, int(i / 256) % 256, i % 256, i
	}' >"$WORK/filters.batch"
	tc -batch "$WORK/filters.batch" || fail "tc -batch of $1 filters failed"
}

# class_tree DEV PEER DIR: veth DEV/PEER, DEV with an HTB tree 1: -> 1:1 ->
# 1:10, 1:20, 1:30 (a pfifo on each) and u32 filters at parent 1: sending UDP
# ports 1010, 1020 and 1030 to them; 30 and 20 datagrams (udp_raw) to the
# first two. Once every queue of DEV drained (its counters stand still),
# tc's view of the namespace is captured into DIR and printed
# (tests/integration/compare_qdisc.py). For the tests of class labels,
# tests/daemon/class_labels.sh and tests/snmp/class_table.sh.
class_tree() {
	local dev=$1 m deadline
	veth "$dev" "$2"
	tc qdisc add dev "$dev" root handle 1: htb default 30
	tc class add dev "$dev" parent 1: classid 1:1 htb rate 100mbit
	for m in 10 20 30; do
		tc class add dev "$dev" parent 1:1 classid "1:$m" htb rate 10mbit ceil 100mbit
		tc qdisc add dev "$dev" parent "1:$m" handle "$m:" pfifo limit 1000
		tc filter add dev "$dev" parent 1: pref 1 protocol ip u32 \
			match ip dport "10$m" 0xffff flowid "1:$m"
	done
	udp_raw "$dev" 1010:500:30 1020:700:20 >/dev/null
	deadline=$((SECONDS + 10))
	until [ "$(tc -s -j qdisc show dev "$dev" | "$PYTHON" -c '
import json, sys
print(sum(q["qlen"] for q in json.load(sys.stdin)))')" = 0 ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "the queues of $dev did not drain within 10 s"
		sleep 0.1
	done
	"$PYTHON" "$TCX_TESTLIB/../integration/compare_qdisc.py" capture "$3" >/dev/null ||
		fail "capturing tc's view failed"
	"$PYTHON" "$TCX_TESTLIB/../integration/compare_qdisc.py" show --tc "$3"
}

# traffic DST COUNT SIZE [DST COUNT SIZE]...: COUNT UDP datagrams of SIZE
# bytes to port 9 of DST, for each triple.
traffic() {
	[ -f "$WORK/send.py" ] || cat >"$WORK/send.py" <<'PY'
import errno, socket, sys
a = sys.argv[1:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
for i in range(0, len(a), 3):
    dst, count, size = a[i], int(a[i + 1]), int(a[i + 2])
    buf = b"x" * size
    for _ in range(count):
        try:
            s.sendto(buf, (dst, 9))
        except OSError as e:  # a full queue or a redirect to a down device
            if e.errno != errno.ENOBUFS:
                raise
PY
	"$PYTHON" "$WORK/send.py" "$@" || fail "sending traffic failed"
}

# ---- credentials -----------------------------------------------------------------------

# bcrypt PASSWORD: a bcrypt hash ($2b$, cost 10) from python3's crypt module
# (glibc/libxcrypt crypt(3)); skips when it cannot make one.
bcrypt() {
	"$PYTHON" -W ignore - "$1" <<'PY' || skip "python3 cannot make a bcrypt hash (crypt module)"
import sys
import crypt
h = crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
if not h or not h.startswith("$2"):
    sys.exit(1)
print(h)
PY
}

# make_certs DIR: a CA, a server certificate for 127.0.0.1 (SAN IP), a client
# certificate, and a client certificate from another CA; EC P-256.
make_certs() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d"
		key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
		ca() {
			key "$1.key"
			openssl req -new -x509 -key "$1.key" -out "$1.crt" -days 2 -subj "/CN=$2" \
				-addext "basicConstraints=critical,CA:TRUE" \
				-addext "keyUsage=critical,keyCertSign,cRLSign"
		}
		leaf() { # NAME CN CA EKU SAN SERIAL
			key "$1.key"
			openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2"
			printf '%s\n' "basicConstraints=critical,CA:FALSE" \
				"keyUsage=critical,digitalSignature" "extendedKeyUsage=$4" \
				"subjectAltName=$5" >"$1.ext"
			openssl x509 -req -in "$1.csr" -CA "$3.crt" -CAkey "$3.key" -set_serial "$6" \
				-days 2 -extfile "$1.ext" -out "$1.crt"
		}
		ca ca "tcexporter daemon test CA"
		ca other-ca "tcexporter other CA"
		leaf server 127.0.0.1 ca serverAuth IP:127.0.0.1 2
		leaf client scraper ca clientAuth DNS:scraper 3
		leaf intruder intruder other-ca clientAuth DNS:intruder 4
	) >"$d/openssl.log" 2>&1 || fail "openssl could not make the test certificates: $(cat "$d/openssl.log")"
}
