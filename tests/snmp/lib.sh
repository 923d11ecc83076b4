# Helpers of the SNMP integration tests (tests/snmp/*.sh), on top of
# tests/lib/common.sh. Source it after common.sh:
#
#   . "$here/../lib/common.sh"
#   . "$here/lib.sh"
#
# Every test runs its body in a private network namespace (unshare -n): the
# veth pairs and filters, snmpd's UDP port on 127.0.0.1 and the daemon's
# HTTP port are private to it, so tests can run in parallel with each other
# and with anything on the host. Each snmpd is private too: its own
# configuration file, AgentX socket, pid file and persistent directory in the
# test's work directory ($WORK), and SNMPCONFPATH pointing at an empty
# directory so that no system configuration is read. net-snmp's command-line
# tools and tcexporter get persistent directories of their own as well.
#
# Every process started with bg_start (snmpd, tcexporter, helpers) is killed
# when the test exits, whatever the reason (SIGTERM, then SIGKILL after 5 s).
# shellcheck shell=bash

# The tcexporter subtree (TCEXPORTER-MIB, agent/mib.h).
# shellcheck disable=SC2034 # used by the scripts that source this file
readonly TCX_OID=.1.3.6.1.4.1.8072.9999.9999.4242
readonly TCX_SCALARS=$TCX_OID.1.1
readonly TCX_ACTION_ENTRY=$TCX_OID.1.2.1
readonly TCX_LABEL_ENTRY=$TCX_OID.1.3.1
readonly OID_ROWS=$TCX_SCALARS.1.0
readonly OID_LAST_CHANGE=$TCX_SCALARS.2.0
readonly OID_LAST_COLLECTION=$TCX_SCALARS.3.0
readonly OID_SYSUPTIME=.1.3.6.1.2.1.1.3.0

SNMPT_PIDS=()

# snmp_prereqs: the checks that decide on a skip, before entering the
# namespace: root, unshare -n, the tools, python3, and a tcexporter built
# with the AgentX subagent (HAVE_SNMP in the build's config.h, else the
# executable's libraries).
snmp_prereqs() {
	require_bin
	require_root -n
	require_cmd ip tc curl snmpd snmpget snmpbulkwalk snmpwalk sysctl
	find_python
	if [ -n "${TCX_BUILDDIR:-}" ] && [ -f "$TCX_BUILDDIR/config.h" ]; then
		grep -q '^#define HAVE_SNMP 1' "$TCX_BUILDDIR/config.h" ||
			skip "tcexporter was built without the AgentX subagent (configure --with-snmp)"
	elif ! grep -q netsnmpagent <<<"$(ldd "$TCX_BIN" 2>/dev/null)"; then
		skip "$TCX_BIN is not linked with net-snmp's agent library"
	fi
}


# snmpt_setup: inside the namespace: loopback up, no IPv6 noise, the work
# directory, the exit trap, private directories for net-snmp's tools.
snmpt_setup() {
	ip link set lo up
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		2>/dev/null || true
	make_workdir
	trap '_snmpt_exit' EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap 'exit 129' HUP
	mkdir -p "$WORK/tools/persist" "$WORK/tools/conf" "$WORK/tcx-persist"
	# The tools (snmpget, snmpbulkwalk): numeric OIDs, no MIB files, no
	# system configuration, no state written outside $WORK.
	export MIBS='' MIBDIRS='' SNMPCONFPATH="$WORK/tools/conf"
	export SNMP_PERSISTENT_DIR="$WORK/tools/persist"
	T_START=$(date +%s%N)
}

_snmpt_exit() {
	local rc=$? p
	trap - EXIT TERM INT HUP
	for p in "${SNMPT_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${SNMPT_PIDS[@]}"; do
		wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
	done
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${WORK:-}" ]; then
		for p in "$WORK"/*.err "$WORK"/snmpd*.out; do
			[ -s "$p" ] || continue
			echo "--- $p (last 30 lines)" >&2
			tail -n 30 "$p" >&2
		done
	fi
	# (Not `(exit $rc); _tcx_cleanup`: under set -e the subshell's failure
	# would end the trap before the work directory is removed.)
	if [ "${TCX_KEEP_WORK:-0}" = 1 ]; then
		echo "(kept work directory $WORK)" >&2
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# elapsed_ms: milliseconds since snmpt_setup.
elapsed_ms() {
	echo $((($(date +%s%N) - T_START) / 1000000))
}

# bg_start NAME CMD...: starts CMD in the background, stdout and stderr in
# $WORK/NAME.out and $WORK/NAME.err (appended: a restarted snmpd keeps its
# earlier log); sets BG_PID. Killed at exit.
bg_start() {
	local name=$1
	shift
	"$@" >>"$WORK/$name.out" 2>>"$WORK/$name.err" &
	BG_PID=$!
	SNMPT_PIDS+=("$BG_PID")
}



# alive PID NAME: fails the test when PID has died.
alive() {
	if ! kill -0 "$1" 2>/dev/null || [ "$(proc_state "$1")" = Z ]; then
		fail "$2 (pid $1) died; its stderr: $(tail -n 20 "$WORK/$2.err" 2>/dev/null)"
	fi
}

# free_port tcp|udp: a free port on 127.0.0.1 (picked by the kernel).
free_port() {
	"$PYTHON" - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1] == "tcp" else socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
PY
}

# ---- snmpd -----------------------------------------------------------------------------

# snmpd_config: writes $WORK/snmpd/snmpd.conf (UDP on 127.0.0.1 at a free
# port, master agentx on a private socket); sets SNMPD_PORT, AGENTX_SOCK,
# SNMPD_AGENT (the address for the tools).
snmpd_config() {
	SNMPD_PORT=$(free_port udp)
	AGENTX_SOCK=$WORK/snmpd/agentx.sock
	SNMPD_AGENT=127.0.0.1:$SNMPD_PORT
	mkdir -p "$WORK/snmpd/persist" "$WORK/snmpd/conf"
	cat >"$WORK/snmpd/snmpd.conf" <<EOF
agentAddress udp:127.0.0.1:$SNMPD_PORT
master agentx
agentXSocket unix:$AGENTX_SOCK
rocommunity public 127.0.0.1
dontLogTCPWrappersConnects yes
EOF
}

# start_snmpd [SNMPD ARGS...]: starts snmpd in the foreground (in the
# background of the test) with the private configuration; sets SNMPD_PID.
# Does not wait.
# shellcheck disable=SC2120 # the arguments are optional
start_snmpd() {
	bg_start snmpd env SNMP_PERSISTENT_DIR="$WORK/snmpd/persist" \
		SNMPCONFPATH="$WORK/snmpd/conf" MIBS= MIBDIRS= \
		snmpd -f -Lo -C -c "$WORK/snmpd/snmpd.conf" -p "$WORK/snmpd/snmpd.pid" "$@"
	SNMPD_PID=$BG_PID
}

# stop_snmpd SIGNAL: stops snmpd with SIGNAL (TERM or KILL) and waits.
stop_snmpd() {
	# (stderr off: no "Killed" job notice from bash)
	{
		kill "-$1" "$SNMPD_PID" || true
		wait_gone "$SNMPD_PID" 10 || fail "snmpd (pid $SNMPD_PID) still runs 10 s after SIG$1"
	} 2>/dev/null
}

# snmp_q ARGS...: a quick SNMP request to our snmpd (v2c, 0.3 s timeout, no
# retry): snmpget/snmpbulkwalk/... with the common options.
sget() {
	snmpget -v2c -c public -On -Ox -t 0.3 -r 0 "$SNMPD_AGENT" "$@"
}

# wait_snmpd SECONDS: polls snmpd's own sysUpTime until it answers.
wait_snmpd() {
	local deadline=$((SECONDS + $1))
	until sget "$OID_SYSUPTIME" >/dev/null 2>&1; do
		alive "$SNMPD_PID" snmpd
		[ "$SECONDS" -lt "$deadline" ] || fail "snmpd did not answer within $1 s"
		sleep 0.05
	done
}

# snmp_value OID: the value of OID (type prefix removed), or empty when the
# request fails or the OID has no value (noSuchInstance/Object).
snmp_value() {
	local out
	out=$(sget "$1" 2>/dev/null) || return 0
	case $out in
	*"No Such"*) return 0 ;;
	esac
	out=${out#* = }
	out=${out#*: }
	out=${out%"${out##*[! ]}"} # trailing blanks (-Ox ends hex with one)
	printf '%s\n' "$out"
}

# wait_tcx_rows SECONDS [N]: polls tcxActionRows until it answers (through
# snmpd, i.e. the subagent is registered), and equals N when given; prints
# the wall-clock milliseconds it took (polls every 50 ms).
wait_tcx_rows() {
	local secs=$1 want=${2:-} t0 deadline v
	t0=$(date +%s%N)
	deadline=$((t0 + secs * 1000000000))
	while :; do
		v=$(snmp_value "$OID_ROWS")
		if [ -n "$v" ] && { [ -z "$want" ] || [ "$v" = "$want" ]; }; then
			echo $((($(date +%s%N) - t0) / 1000000))
			return 0
		fi
		[ "$(date +%s%N)" -lt "$deadline" ] ||
			fail "tcxActionRows did not answer${want:+ $want} within $secs s (last: '${v}')"
		sleep 0.05
	done
}

# timeticks OID: a TimeTicks value as a plain number (empty when absent).
timeticks() {
	snmp_value "$1" | sed -n 's/^(\([0-9]*\)).*/\1/p'
}

# wait_collections N SECONDS: waits until tcxLastCollectionTime changed N
# times (N fresh collection passes reached the agent).
wait_collections() {
	local n=$1 deadline=$((SECONDS + $2)) last cur
	last=$(timeticks "$OID_LAST_COLLECTION")
	while [ "$n" -gt 0 ]; do
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "no new collection within $2 s (tcxLastCollectionTime stays '$last')"
		sleep 0.1
		cur=$(timeticks "$OID_LAST_COLLECTION")
		if [ -n "$cur" ] && [ "$cur" != "$last" ]; then
			n=$((n - 1))
			last=$cur
		fi
	done
}

# walk FILE [OID]: snmpbulkwalk -v2c of OID (default: the whole tcexporter
# subtree) into FILE: numeric OIDs, octet strings in hex.
walk() {
	local file=$1 oid=${2:-$TCX_OID}
	snmpbulkwalk -v2c -c public -On -Ox -Cr10 -t 2 -r 1 "$SNMPD_AGENT" "$oid" \
		>"$file" 2>"$file.err" || fail "snmpbulkwalk of $oid failed: $(cat "$file.err")"
	[ -s "$file" ] || fail "snmpbulkwalk of $oid returned nothing"
	if grep -q 'No more variables\|No Such' "$file"; then
		fail "snmpbulkwalk of $oid: $(grep -m1 'No more variables\|No Such' "$file")"
	fi
}

# ---- tcexporter ------------------------------------------------------------------------

# start_tcx CONFIG: starts the daemon with its own persistent directory for
# net-snmp; sets TCX_PID.
start_tcx() {
	bg_start tcx env SNMP_PERSISTENT_DIR="$WORK/tcx-persist" SNMPCONFPATH="$WORK/tcx-persist" \
		"$TCX_BIN" --config "$1"
	TCX_PID=$BG_PID
}

# tcx_config FILE HTTP_PORT PING_INTERVAL BODY: BODY (targets, labels,
# cookies) plus interval 1s, the http and snmp sections.
tcx_config() {
	{
		echo "interval: 1s"
		printf '%s\n' "$4"
		printf 'http:\n  listen: ["127.0.0.1:%s"]\n' "$2"
		printf 'snmp: {enabled: true, agentx_socket: "unix:%s", ping_interval: %s}\n' \
			"$AGENTX_SOCK" "$3"
	} >"$1"
	"$TCX_BIN" --check-config "$1" >"$WORK/check-config.log" 2>&1 ||
		fail "tcexporter --check-config $1: $(cat "$WORK/check-config.log")"
}

# metrics FILE: the daemon's /metrics in the text format.
metrics() {
	local code
	code=$(curl -s -o "$1" -w '%{http_code}' --max-time 5 \
		-H 'Accept: text/plain;version=0.0.4' "http://127.0.0.1:$HTTP_PORT/metrics" ||
		true)
	[ "$code" = 200 ] || fail "GET /metrics answered '$code', expected 200"
}

# wait_http SECONDS: polls /metrics until it answers 200.
wait_http() {
	local deadline=$((SECONDS + $1)) code
	while :; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
			"http://127.0.0.1:$HTTP_PORT/metrics" 2>/dev/null || true)
		[ "$code" = 200 ] && return 0
		alive "$TCX_PID" tcx
		[ "$SECONDS" -lt "$deadline" ] || fail "/metrics did not answer within $1 s (last: $code)"
		sleep 0.05
	done
}

# tcx_checks: the daemon is alive, reported no sanitizer error, and wrote no
# state into its net-snmp persistent directory.
tcx_checks() {
	local f
	alive "$TCX_PID" tcx
	if has_sanitizer_report "$WORK/tcx.err"; then
		fail "sanitizer report in tcexporter's log (see below)"
	fi
	f=$(find "$WORK/tcx-persist" -type f | head -n 5)
	[ -z "$f" ] || fail "tcexporter wrote net-snmp persistent state: $f"
}

# stop_tcx_clean: SIGTERM; the daemon must exit 0 within 10 s, and must not
# have written net-snmp state. Sets STOP_MS.
stop_tcx_clean() {
	local rc=0 f t0 deadline
	t0=$(date +%s%N)
	deadline=$((SECONDS + 10))
	kill -TERM "$TCX_PID"
	# Until it is a zombie (or gone): then `wait` returns its status at once.
	while kill -0 "$TCX_PID" 2>/dev/null && [ "$(proc_state "$TCX_PID")" != Z ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			kill -KILL "$TCX_PID" 2>/dev/null || true
			fail "tcexporter still ran 10 s after SIGTERM"
		fi
		sleep 0.02
	done
	wait "$TCX_PID" || rc=$?
	# shellcheck disable=SC2034 # for the caller
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	[ "$rc" = 0 ] || fail "tcexporter exited with status $rc after SIGTERM, expected 0"
	if has_sanitizer_report "$WORK/tcx.err"; then
		fail "sanitizer report in tcexporter's log"
	fi
	f=$(find "$WORK/tcx-persist" -type f | head -n 5)
	[ -z "$f" ] || fail "tcexporter wrote net-snmp persistent state: $f"
}

# ---- traffic ---------------------------------------------------------------------------

# write_sender: $WORK/send.py DST COUNT SIZE [DST COUNT SIZE]...: UDP
# datagrams of SIZE bytes to port 9.
write_sender() {
	cat >"$WORK/send.py" <<'PY'
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
}

traffic() {
	"$PYTHON" "$WORK/send.py" "$@" || fail "sending traffic failed"
}

# stable_tc DEV PARENT FILE: waits until the counters of `tc -s -j filter
# show dev DEV PARENT` stand still (veth receive runs in softirq context),
# keeps that output in FILE.
stable_tc() {
	local _
	tc -s -j filter show dev "$1" "$2" >"$3"
	snmpcmp tc-counters "$3" >"$3.a"
	for _ in $(seq 1 100); do
		sleep 0.1
		tc -s -j filter show dev "$1" "$2" >"$3"
		snmpcmp tc-counters "$3" >"$3.b"
		cmp -s "$3.a" "$3.b" && return 0
		mv "$3.b" "$3.a"
	done
	fail "the tc counters of $1 $2 keep changing: something else sends packets"
}

# same_tc_counters FILE1 FILE2: the counters of two tc outputs are equal.
same_tc_counters() {
	[ "$(snmpcmp tc-counters "$1")" = "$(snmpcmp tc-counters "$2")" ]
}

# snmpcmp ARGS...: tests/snmp/snmpcmp.py (parses walks, /metrics, tc JSON);
# $here is the directory of the sourcing script (tests/snmp).
snmpcmp() {
	"$PYTHON" "${here:?}/snmpcmp.py" "$@"
}
