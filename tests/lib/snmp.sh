# Helpers of the SNMP integration tests (tests/snmp/*.sh), on top of
# tests/lib/daemon.sh (and common.sh), which it sources:
#
#   . "$here/../lib/snmp.sh"
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
# snmpd and tcexporter are started with bg_start (daemon.sh): stopped when
# the test exits, whatever the reason.
# shellcheck shell=bash
# shellcheck disable=SC2153 # TCX_PID is set by start_tcx (daemon.sh)
# shellcheck disable=SC2034 # the OIDs are for the scripts that source this file

# shellcheck source=daemon.sh
. "$(dirname "${BASH_SOURCE[0]}")/daemon.sh"

# The tcexporter subtree (TCEXPORTER-MIB, agent/snmp/mib.h).
readonly TCX_OID=.1.3.6.1.4.1.8072.9999.9999.4242
readonly TCX_SCALARS=$TCX_OID.1.1
readonly TCX_ACTION_ENTRY=$TCX_OID.1.2.1
readonly TCX_LABEL_ENTRY=$TCX_OID.1.3.1
readonly OID_ROWS=$TCX_SCALARS.1.0
readonly OID_LAST_CHANGE=$TCX_SCALARS.2.0
readonly OID_LAST_COLLECTION=$TCX_SCALARS.3.0
readonly OID_SYSUPTIME=.1.3.6.1.2.1.1.3.0

# snmp_prereqs: the checks that decide on a skip, before entering the
# namespace: root, unshare -n, the tools, python3, and a tcexporter built
# with the AgentX subagent (HAVE_SNMP in the build's build.h, else the
# executable's libraries).
snmp_prereqs() {
	daemon_prereqs tc snmpd snmpget snmpbulkwalk snmpwalk sysctl
	if [ -n "${TCX_BUILDDIR:-}" ] && [ -f "$TCX_BUILDDIR/build.h" ]; then
		grep -q '^#define HAVE_SNMP 1' "$TCX_BUILDDIR/build.h" ||
			skip "tcexporter was built without the AgentX subagent (configure --with-snmp)"
	elif ! grep -q netsnmpagent <<<"$(ldd "$TCX_BIN" 2>/dev/null)"; then
		skip "$TCX_BIN is not linked with net-snmp's agent library"
	fi
}

# snmp_setup: inside the namespace: daemon_setup, private directories for
# net-snmp's tools, and tcexporter started by start_tcx with its own
# persistent directory for net-snmp.
snmp_setup() {
	daemon_setup
	mkdir -p "$WORK/tools/persist" "$WORK/tools/conf" "$WORK/tcx-persist"
	# The tools (snmpget, snmpbulkwalk): numeric OIDs, no MIB files, no
	# system configuration, no state written outside $WORK.
	export MIBS='' MIBDIRS='' SNMPCONFPATH="$WORK/tools/conf"
	export SNMP_PERSISTENT_DIR="$WORK/tools/persist"
	TCX_WRAP=(env SNMP_PERSISTENT_DIR="$WORK/tcx-persist" SNMPCONFPATH="$WORK/tcx-persist")
}

# ---- snmpd -----------------------------------------------------------------------------

# snmpd_config: writes $WORK/snmpd/snmpd.conf (UDP on 127.0.0.1 at a free
# port, master agentx on a private socket); sets SNMPD_PORT, AGENTX_SOCK,
# SNMPD_AGENT (the address for the tools).
snmpd_config() {
	SNMPD_PORT=$(free_ports 1 udp)
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

# sget ARGS...: a quick snmpget from our snmpd (v2c, 0.3 s timeout, no
# retry, numeric OIDs, octet strings in hex).
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

# wait_class_rows N: polls tcxClassRows (through snmpd) until it answers N,
# 15 s at most, checking the daemon meanwhile: the subagent registered and a
# collection reached it.
wait_class_rows() {
	local deadline=$((SECONDS + 15))
	until [ "$(snmp_value "$TCX_SCALARS.8.0")" = "$1" ]; do
		tcx_checks
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "tcxClassRows is '$(snmp_value "$TCX_SCALARS.8.0")' after 15 s, expected $1"
		sleep 0.1
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

# tcx_config FILE HTTP_PORT PING_INTERVAL BODY [INTERVAL]: BODY (targets,
# labels, cookies) plus interval INTERVAL (default 1s), the http and snmp
# sections.
tcx_config() {
	{
		echo "interval: ${5:-1s}"
		printf '%s\n' "$4"
		printf 'http:\n  listen: ["127.0.0.1:%s"]\n' "$2"
		printf 'snmp: {enabled: true, agentx_socket: "unix:%s", ping_interval: %s}\n' \
			"$AGENTX_SOCK" "$3"
	} >"$1"
	"$TCX_BIN" --check-config "$1" >"$WORK/check-config.log" 2>&1 ||
		fail "tcexporter --check-config $1: $(cat "$WORK/check-config.log")"
}

# start_tcx_http CONFIG: start_tcx tcx CONFIG, then waits until /metrics on
# HTTP_PORT answers 200.
start_tcx_http() {
	start_tcx tcx "$1"
	wait_http 200 10 "http://127.0.0.1:$HTTP_PORT/metrics"
}

# metrics FILE: the daemon's /metrics in the text format.
metrics() {
	scrape "$1" "http://127.0.0.1:$HTTP_PORT/metrics" -H 'Accept: text/plain;version=0.0.4'
}

# no_snmp_state: tcexporter wrote nothing into its net-snmp persistent
# directory.
no_snmp_state() {
	local f
	f=$(find "$WORK/tcx-persist" -type f | head -n 5)
	[ -z "$f" ] || fail "tcexporter wrote net-snmp persistent state: $f"
}

# tcx_checks: the daemon is alive, reported no sanitizer error, and wrote no
# net-snmp state.
tcx_checks() {
	alive "$TCX_PID" tcx
	sanitizer_check tcx
	no_snmp_state
}

# stop_tcx_clean: stop_tcx (SIGTERM: exit 0 within 10 s, sets STOP_MS), and
# no net-snmp state written at exit either.
stop_tcx_clean() {
	stop_tcx "$TCX_PID" tcx 10
	no_snmp_state
}

# ---- traffic ---------------------------------------------------------------------------

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

# snmpcmp ARGS...: tests/snmp/snmpcmp.py (parses walks, /metrics, tc JSON).
snmpcmp() {
	"$PYTHON" "$TCX_TESTLIB/../snmp/snmpcmp.py" "$@"
}
