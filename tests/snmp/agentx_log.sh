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
# shellcheck source-path=SCRIPTDIR source=../lib/common.sh
. "$here/../lib/common.sh"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

snmp_prereqs
require_cmd setpriv
nobody_uid=$(id -u nobody 2>/dev/null) || skip "no user 'nobody'"
as_nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups)
"${as_nobody[@]}" test -x "$TCX_BIN" || skip "user nobody cannot run $TCX_BIN"
in_netns TCX_SNMP_AGENTX_LOG_INSIDE

# ---- inside a private network namespace -----------------------------------------------
snmpt_setup
snmpd_config
HTTP_PORT=$(free_port tcp)
# The configuration in a directory that nobody can read too, for (e).
chmod 0711 "$WORK"
mkdir -m 0755 "$WORK/pub"
tcx_config "$WORK/pub/tcx.yaml" "$HTTP_PORT" 1s "targets: [{all: true}]"
chmod 0644 "$WORK/pub/tcx.yaml"

# mark: the current length of tcexporter's log; since MARK PATTERN: the lines
# after MARK matching PATTERN (grep -i -E).
mark() { wc -l <"$WORK/tcx.err"; }
since() { tail -n +"$(($1 + 1))" "$WORK/tcx.err" | grep -i -E "$2" || true; }
# Both net-snmp's line and ours.
readonly FAILED='connect to the agentx master'
# wait_line MARK PATTERN SECONDS: waits until a line after MARK matches.
wait_line() {
	local deadline=$((SECONDS + $3))
	until [ -n "$(since "$1" "$2")" ]; do
		alive "$TCX_PID" tcx
		[ "$SECONDS" -lt "$deadline" ] || fail "no line matching '$2' within $3 s"
		sleep 0.1
	done
}
# expect_one MARK PATTERN WHAT: exactly one line after MARK matches PATTERN.
expect_one() {
	local lines n
	lines=$(since "$1" "$2")
	n=$(printf '%s' "$lines" | grep -c . || true)
	[ "$n" = 1 ] || {
		printf '%s\n' "$lines" >&2
		fail "$3: $n lines matching '$2', expected 1 (see above)"
	}
	printf '%s\n' "$lines"
}

note "(a) tcexporter, no snmpd and no socket: 4 s after the first failure"
start_tcx "$WORK/pub/tcx.yaml"
m=0
wait_line "$m" "$FAILED" 15
sleep 4
alive "$TCX_PID" tcx
line=$(expect_one "$m" "$FAILED" "no socket")
note "$line"
grep -q "unix:$AGENTX_SOCK: No such file or directory" <<<"$line" ||
	fail "the warning does not name the socket and 'No such file or directory': $line"

note "(b) snmpd starts"
m=$(mark)
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 >/dev/null
sleep 0.5
line=$(expect_one "$m" 'connected to the agentx master' "connection")
note "$line"
grep -q "at unix:$AGENTX_SOCK after [0-9]* failed attempts" <<<"$line" ||
	fail "the connection line does not say how many attempts failed: $line"
[ -z "$(since "$m" "$FAILED")" ] || fail "a connection failure logged after snmpd started"

note "(c) snmpd killed: its socket file stays; 4 s after the first failure"
m=$(mark)
stop_snmpd KILL
[ -S "$AGENTX_SOCK" ] || fail "snmpd left no socket file behind after SIGKILL"
wait_line "$m" "$FAILED" 10
sleep 4
line=$(expect_one "$m" "$FAILED" "stale socket")
note "$line"
grep -q "unix:$AGENTX_SOCK: Connection refused" <<<"$line" ||
	fail "the warning does not say 'Connection refused': $line"

note "(d) snmpd back"
m=$(mark)
rm -f "$AGENTX_SOCK"
start_snmpd
wait_snmpd 10
wait_tcx_rows 10 >/dev/null
sleep 0.5
expect_one "$m" 'connected to the agentx master' "reconnection" >/dev/null
tcx_checks
stop_tcx_clean

note "(e) tcexporter as nobody, the socket in a 0700 directory of root's"
chmod 0700 "$WORK/snmpd"
[ -S "$AGENTX_SOCK" ] || fail "snmpd has no socket $AGENTX_SOCK"
m=$(mark)
bg_start tcx env SNMP_PERSISTENT_DIR="$WORK/tcx-persist" SNMPCONFPATH="$WORK/tcx-persist" \
	"${as_nobody[@]}" "$TCX_BIN" --config "$WORK/pub/tcx.yaml"
TCX_PID=$BG_PID
wait_line "$m" "$FAILED" 15
sleep 3
line=$(expect_one "$m" "$FAILED" "as nobody")
note "$line"
grep -q "unix:$AGENTX_SOCK: permission denied: uid $nobody_uid .*agentXPerms" <<<"$line" ||
	fail "the warning does not say 'permission denied' for uid $nobody_uid with the agentXPerms hint: $line"
chmod 0755 "$WORK/snmpd"
chmod 0666 "$AGENTX_SOCK"
wait_tcx_rows 10 >/dev/null
sleep 0.5
expect_one "$m" 'connected to the agentx master' "connection as nobody" >/dev/null
tcx_checks
stop_tcx_clean
stop_snmpd TERM
echo "agentx_log.sh: all checks passed in $(elapsed_ms) ms"
