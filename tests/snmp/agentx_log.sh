#!/bin/bash
# What the subagent logs while it cannot reach snmpd (root: a private network
# namespace and a private snmpd, as in walk.sh; ping_interval 1 s, so that
# the subagent tries again every second):
#
#  (a) no socket yet: one warning that names the socket and the cause ("No
#      such file or directory"), and no other in the 4 s (4 more attempts)
#      after it; not one per attempt with an empty reason.
#  (b) snmpd starts: one line "connected to the AgentX master at ... after N
#      failed attempts".
#  (c) snmpd is killed and leaves a stale socket file: one warning,
#      "Connection refused" (a new cause is logged at once), and no other in
#      the next 4 s; (d) snmpd back: one "connected" line again.
#  (e) tcexporter runs as nobody, the socket in a 0700 directory owned by
#      root (a stock snmpd's /var/agentx): one warning that says "permission
#      denied" for nobody's uid and names agentXPerms. Once the directory is
#      opened (0755) and the socket made writable, the subagent connects and
#      says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

snmp_prereqs
require_cmd setpriv
nobody_uid=$(id -u nobody 2>/dev/null) || skip "no user 'nobody'"
as_nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
"${as_nobody[@]}" test -x "$TCX_BIN" || skip "user nobody cannot run $TCX_BIN"
in_netns TCX_SNMP_AGENTX_LOG_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmp_setup
snmpd_config
HTTP_PORT=$(free_ports 1)
# The configuration in a directory that nobody can read too, for (e).
chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/pub"
tcx_config "$WORK/pub/tcx.yaml" "$HTTP_PORT" 1s "targets: [{all: true}]"
chmod 0644 "$WORK/pub/tcx.yaml"

# Both net-snmp's line and ours (logged and wait_log match case-insensitively).
readonly FAILED='connect to the agentx master'
# expect_one PATTERN WHAT: exactly one line since mark_log matches PATTERN;
# prints it.
expect_one() {
	local lines n
	lines=$(logged "$1")
	n=$(printf '%s' "$lines" | grep -c . || true)
	[ "$n" = 1 ] || {
		printf '%s\n' "$lines" >&2
		fail "$2: $n lines matching '$1', expected 1 (see above)"
	}
	printf '%s\n' "$lines"
}

note "(a) tcexporter, no snmpd and no socket: 4 s after the first failure"
mark_log
start_tcx tcx "$WORK/pub/tcx.yaml"
wait_log 15 "$FAILED"
sleep 4
alive "$TCX_PID" tcx
line=$(expect_one "$FAILED" "no socket")
note "$line"
grep -q "unix:$AGENTX_SOCK: No such file or directory" <<<"$line" ||
	fail "the warning does not name the socket and 'No such file or directory': $line"

note "(b) snmpd starts"
mark_log
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 >/dev/null
sleep 0.5
line=$(expect_one 'connected to the agentx master' "connection")
note "$line"
grep -q "at unix:$AGENTX_SOCK after [0-9]* failed attempts" <<<"$line" ||
	fail "the connection line does not say how many attempts failed: $line"
[ -z "$(logged "$FAILED")" ] || fail "a connection failure logged after snmpd started"

note "(c) snmpd killed: its socket file stays; 4 s after the first failure"
mark_log
stop_snmpd KILL
[ -S "$AGENTX_SOCK" ] || fail "snmpd left no socket file behind after SIGKILL"
wait_log 10 "$FAILED"
sleep 4
line=$(expect_one "$FAILED" "stale socket")
note "$line"
grep -q "unix:$AGENTX_SOCK: Connection refused" <<<"$line" ||
	fail "the warning does not say 'Connection refused': $line"

note "(d) snmpd back"
mark_log
rm -f "$AGENTX_SOCK"
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 >/dev/null
sleep 0.5
expect_one 'connected to the agentx master' "reconnection" >/dev/null
tcx_checks
stop_tcx_clean

note "(e) tcexporter as nobody, the socket in a 0700 directory of root's"
chmod 0700 "$WORK/snmpd"
[ -S "$AGENTX_SOCK" ] || fail "snmpd has no socket $AGENTX_SOCK"
mark_log
TCX_WRAP+=("${as_nobody[@]}")
start_tcx tcx "$WORK/pub/tcx.yaml"
wait_log 15 "$FAILED"
sleep 3
line=$(expect_one "$FAILED" "as nobody")
note "$line"
grep -q "unix:$AGENTX_SOCK: permission denied: uid $nobody_uid .*agentXPerms" <<<"$line" ||
	fail "the warning does not say 'permission denied' for uid $nobody_uid with the agentXPerms hint: $line"
chmod 0755 "$WORK/snmpd"
chmod 0666 "$AGENTX_SOCK"
wait_tcx_rows 10 >/dev/null
sleep 0.5
expect_one 'connected to the agentx master' "connection as nobody" >/dev/null
tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "agentx_log.sh: all checks passed in $(elapsed_ms) ms"
