#!/bin/bash
# The Debian package (debian/), as an operator gets it: built with
# `dpkg-buildpackage -us -uc -b` from a copy of the source tree in a
# temporary directory (never writing into the tree); lintian reports no error
# and no warning; `dpkg -i` installs the files where the README says, enables
# the unit and makes the system user; the installed tcexporter collects with
# the installed conffile (exit 0) as that user, with no capability, in a user
# namespace of its own (the unit's PrivateUsers=); the unit
# passes `systemd-analyze verify` and `systemd-analyze security --offline`
# (exposure <= 2.0; this machine need not run systemd); the daemon started
# with the unit's ExecStart (ARGS from /etc/default/tcexporter), as its
# User=, says READY=1 on NOTIFY_SOCKET (Type=notify), logs "<6>" prefixes to
# a journal stream, reloads with ExecReload, serves /metrics, and is the
# AgentX subagent of an snmpd configured as Debian's plus the package's
# snmpd.conf.d lines uncommented (agentXPerms for its group, the view); `dpkg
# --purge` removes every file, the user and group and the enablement, and
# keeps a file of the user's in /etc/tcexporter. The installed user enters a
# named netns with the CAP_SYS_ADMIN of the drop-in netns.conf, and not
# without. Root; the machine is left
# as it was found whatever happens (the exit trap purges). 1 to 3 minutes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/snmp.sh
. "$here/../lib/snmp.sh"

srcdir=${TCX_SRCDIR:-$here/../..}
require_root
require_cmd dpkg-buildpackage dh lintian systemd-analyze setpriv curl ip tc snmpd snmpget
find_python
# What the test would replace, or purge along with its own: never.
if dpkg-query -W -f='${db:Status-Status}' tcexporter 2>/dev/null | grep -qv '^not-installed$'; then
	skip "a tcexporter package is installed here; this test would replace and purge it"
fi
for f in /etc/tcexporter /etc/default/tcexporter /etc/snmp/snmpd.conf.d/tcexporter.conf; do
	[ ! -e "$f" ] || skip "$f exists (not from a package); the package would take it over"
done
getent passwd tcexporter >/dev/null && skip "a user tcexporter exists; purging the package would delete it"
getent group tcexporter >/dev/null && skip "a group tcexporter exists; purging the package would delete it"
# A private network namespace, and mount namespace for a private /run/netns
# (over the host's /run/netns when there is one, else over /run: the host's
# is not written to, and postinst sees no running systemd to start the unit
# in the host's namespace).
in_netns TCX_DEB_NS -m -n --propagation private
daemon_setup
private_netns_dir

# ---- the machine as found, and the exit trap that restores it --------------------------
# The trees the package writes to (its files, dpkg's and systemd's state),
# those that exist (/usr/share/tcexporter is the package's own).
snapshot() {
	local d trees=()
	for d in /etc /lib/systemd /usr/bin /usr/share/doc /usr/share/man/man8 /usr/share/snmp \
		/usr/share/tcexporter /var/lib/systemd /var/lib/dpkg/info; do
		[ ! -e "$d" ] || trees+=("$d")
	done
	find "${trees[@]}" -xdev 2>/dev/null | sort
}
snapshot >"$WORK/before.lst"
INSTALLED=0
USER_FILE=/etc/tcexporter/local.yml
_deb_exit() {
	local rc=$?
	set +e
	stop_bg # (processes of the user tcexporter keep postrm from removing it)
	if [ "$INSTALLED" = 1 ]; then
		echo "(purging the package after a failure)" >&2
		dpkg --purge tcexporter >"$WORK/purge-trap.out" 2>&1 || cat "$WORK/purge-trap.out" >&2
	fi
	rm -f "$USER_FILE"
	rmdir /etc/tcexporter 2>/dev/null
	(exit "$rc")
	_daemon_exit
}
trap _deb_exit EXIT

# ---- build ------------------------------------------------------------------------------
note "Build-Depends (debian/control) = packaging/build-deps.txt (but build-essential)"
"$PYTHON" - "$srcdir/debian/control" "$srcdir/packaging/build-deps.txt" <<'PY' ||
import re, sys
control = open(sys.argv[1]).read()
m = re.search(r"^Build-Depends:(.*?)^\S", control, re.S | re.M)
deps = {re.sub(r"[\s(<\[].*", "", d.strip()) for d in m.group(1).replace("\n", " ").split(",") if d.strip()}
deps.discard("debhelper-compat")
listed = {l.strip() for l in open(sys.argv[2]) if l.strip()} - {"build-essential"}
if deps != listed:
    print("only in debian/control:", sorted(deps - listed), "only in build-deps.txt:", sorted(listed - deps))
    sys.exit(1)
PY
	fail "debian/control's Build-Depends and packaging/build-deps.txt differ"

note "a copy of the source tree, then dpkg-buildpackage -us -uc -b"
mkdir "$WORK/src"
if [ "$(git -C "$srcdir" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$srcdir" && pwd -P)" ]; then
	# A git checkout: its tracked and new files, as they are in the work
	# tree (not the ignored build products). Not a dist tree that merely
	# lies inside one (make distcheck in a build directory of a checkout).
	(cd "$srcdir" && git ls-files -z -co --exclude-standard | tar -c --null -T - -f -) |
		tar -x -C "$WORK/src" -f -
else
	# A dist tree (make distcheck): its files, not the build under it.
	tar -c -C "$srcdir" --exclude=./_build --exclude=./build -f - . | tar -x -C "$WORK/src" -f -
fi
[ -f "$WORK/src/debian/rules" ] || fail "no debian/rules in the copy of $srcdir"
# (make check's jobserver is not for dpkg-buildpackage's make)
(cd "$WORK/src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
	dpkg-buildpackage -us -uc -b >"$WORK/build.log" 2>&1) ||
	{ tail -n 40 "$WORK/build.log" >&2; fail "dpkg-buildpackage failed (last lines above)"; }
case " ${DEB_BUILD_OPTIONS:-} " in
*" nocheck "*) ;;
*)
	grep -q '^PASS: tests/unit/test_parse' "$WORK/build.log" ||
		fail "the package build did not run the unit tests (debian/rules: make check-unit)"
	;;
esac
debs=("$WORK"/tcexporter_*.deb)
[ "${#debs[@]}" = 1 ] || fail "dpkg-buildpackage made ${#debs[@]} tcexporter_*.deb, not 1"
[ -f "${debs[0]}" ] || fail "dpkg-buildpackage made no tcexporter_*.deb"
deb=${debs[0]}

note "lintian: no error, no warning"
lintian --fail-on error,warning "$WORK"/tcexporter_*.changes >"$WORK/lintian.out" 2>&1 ||
	{ cat "$WORK/lintian.out" >&2; fail "lintian reports errors or warnings (above)"; }
! grep -E '^[EW]: ' "$WORK/lintian.out" || fail "lintian reports errors or warnings (above)"

# ---- install ----------------------------------------------------------------------------
note "dpkg -i $(basename "$deb")"
INSTALLED=1
dpkg -i "$deb" >"$WORK/install.out" 2>&1 || { cat "$WORK/install.out" >&2; fail "dpkg -i failed"; }
snapshot >"$WORK/installed.lst"
dpkg -L tcexporter | sort >"$WORK/files.lst"
for f in /usr/bin/tcexporter /usr/share/man/man8/tcexporter.8.gz \
	/usr/share/snmp/mibs/TCEXPORTER-MIB.txt /lib/systemd/system/tcexporter.service \
	/etc/default/tcexporter /etc/tcexporter/tcexporter.yaml \
	/usr/share/doc/tcexporter/examples/tcexporter.yaml /usr/share/doc/tcexporter/examples/netns.conf \
	/usr/share/doc/tcexporter/copyright /etc/snmp/snmpd.conf.d/tcexporter.conf \
	/usr/share/tcexporter/tcexporter-dashboard.json /usr/share/tcexporter/tcexporter.rules.yml \
	/usr/share/tcexporter/tcexporter.rules.test.yml; do
	grep -qx "$f" "$WORK/files.lst" || fail "the package does not install $f"
done
# tcexporter(8)'s FILES: what an operator looks for.
zcat /usr/share/man/man8/tcexporter.8.gz >"$WORK/man.8"
while read -r f; do
	[ -d "$f" ] || [ "$f" = /usr/share/doc/tcexporter/copyright ] ||
		[ "$f" = /usr/share/doc/tcexporter/changelog.Debian.gz ] ||
		grep -qxF ".I $f" "$WORK/man.8" || fail "tcexporter(8) does not list $f (FILES)"
done < <(grep -E '^/(etc|lib|usr/share/(doc|snmp|tcexporter))/' "$WORK/files.lst")
cmp -s /usr/share/doc/tcexporter/examples/tcexporter.yaml "$srcdir/config/tcexporter.yaml" ||
	fail "examples/tcexporter.yaml is not config/tcexporter.yaml"
cmp -s /etc/tcexporter/tcexporter.yaml /usr/share/doc/tcexporter/examples/tcexporter.yaml &&
	fail "the live configuration is the full example"
for f in /etc/default/tcexporter /etc/tcexporter/tcexporter.yaml /etc/snmp/snmpd.conf.d/tcexporter.conf; do
	grep -qx "$f" <(dpkg-query -W -f='${Conffiles}\n' tcexporter | awk '{print $1}') ||
		fail "$f is not a conffile"
done
grep -qE '^ARGS=' /etc/default/tcexporter || fail "/etc/default/tcexporter has no ARGS= line"
# snmpd: all commented out, and the view holds the MIB's root (agent/snmp/mib.h).
oid=.$(sed -n 's/^#define TCX_MIB_ROOT //p' "$srcdir/agent/snmp/mib.h" | tr -d ' ' | tr , .)
snmpconf=/etc/snmp/snmpd.conf.d/tcexporter.conf
! grep -vE '^[[:space:]]*(#|$)' "$snmpconf" || fail "$snmpconf has lines that are not comments (above)"
for want in '#master agentx' '#agentXPerms 0660 0755 root tcexporter' "#view systemonly included $oid"; do
	grep -qxF "$want" "$snmpconf" || fail "$snmpconf has no line '$want'"
done
note "enabled (dh_installsystemd), the system user made"
[ -L /etc/systemd/system/multi-user.target.wants/tcexporter.service ] ||
	fail "tcexporter.service is not enabled (no multi-user.target.wants link)"
uid=$(id -u tcexporter) || fail "dpkg -i made no user tcexporter"
[ "$uid" -lt 1000 ] || fail "the user tcexporter is not a system user (uid $uid)"
getent group tcexporter >/dev/null || fail "dpkg -i made no group tcexporter"

# ---- the installed program and unit -------------------------------------------------------
u32_filters 3
note "--once with the installed conffile, as the unit runs it: its user, no capability, a user namespace"
# The unit's User=, CapabilityBoundingSet= (empty), NoNewPrivileges= and
# PrivateUsers= (a user namespace of its own).
as_user=(setpriv --reuid tcexporter --regid tcexporter --clear-groups --inh-caps=-all
	--bounding-set=-all --no-new-privs unshare -U)
rc=0
"${as_user[@]}" /usr/bin/tcexporter --once -c /etc/tcexporter/tcexporter.yaml \
	>"$WORK/once.out" 2>"$WORK/once.err" || rc=$?
[ "$rc" = 0 ] || fail "tcexporter --once -c /etc/tcexporter/tcexporter.yaml: exit $rc: $(cat "$WORK/once.err")"
[ "$(grep -c '^tc_action_packets_total{.*cookie="74637862656e6368' "$WORK/once.out")" = 3 ] ||
	fail "--once did not print the 3 filters' actions"

note "netns targets: setns(2) fails without CAP_SYS_ADMIN, works with netns.conf's"
ip netns add tcxdeb
printf 'targets:\n  - {all: true, netns: tcxdeb}\n' >"$WORK/netns.yaml"
chmod 755 "$WORK" && chmod 644 "$WORK/netns.yaml"
rc=0
"${as_user[@]}" /usr/bin/tcexporter --once -c "$WORK/netns.yaml" >/dev/null 2>"$WORK/netns.err" || rc=$?
[ "$rc" = 1 ] || fail "a netns target without CAP_SYS_ADMIN: exit $rc, expected 1: $(cat "$WORK/netns.err")"
grep -q "setns: Operation not permitted" "$WORK/netns.err" ||
	fail "a netns target without CAP_SYS_ADMIN did not fail with EPERM: $(cat "$WORK/netns.err")"
dropin=/usr/share/doc/tcexporter/examples/netns.conf
for want in CapabilityBoundingSet=CAP_SYS_ADMIN AmbientCapabilities=CAP_SYS_ADMIN; do
	grep -qx "$want" "$dropin" || fail "$dropin has no line $want"
done
rc=0
setpriv --reuid tcexporter --regid tcexporter --clear-groups --inh-caps=-all,+sys_admin \
	--ambient-caps=-all,+sys_admin --bounding-set=-all,+sys_admin --no-new-privs \
	/usr/bin/tcexporter --once -c "$WORK/netns.yaml" >/dev/null 2>"$WORK/netns.err" || rc=$?
[ "$rc" = 0 ] || fail "a netns target with CAP_SYS_ADMIN: exit $rc: $(cat "$WORK/netns.err")"
ip netns del tcxdeb

unit=/lib/systemd/system/tcexporter.service
note "systemd-analyze verify and security (offline)"
systemd-analyze verify "$unit" >"$WORK/verify.out" 2>&1 ||
	{ cat "$WORK/verify.out" >&2; fail "systemd-analyze verify $unit failed"; }
[ ! -s "$WORK/verify.out" ] || { cat "$WORK/verify.out" >&2; fail "systemd-analyze verify $unit complained"; }
systemd-analyze security --offline=true --threshold=20 "$unit" >"$WORK/security.out" 2>&1 ||
	{ tail -n 5 "$WORK/security.out" >&2; fail "exposure of $unit above 2.0"; }
note "$(grep 'Overall exposure' "$WORK/security.out")"
# With the drop-in (in a unit directory of the test's: /etc is not written
# to): it parses cleanly, and grants CAP_SYS_ADMIN.
mkdir -p "$WORK/units/tcexporter.service.d"
cp "$unit" "$WORK/units/"
cp "$dropin" "$WORK/units/tcexporter.service.d/"
SYSTEMD_UNIT_PATH="$WORK/units:" systemd-analyze security --offline=true tcexporter.service \
	>"$WORK/security-netns.out" 2>&1 || { cat "$WORK/security-netns.out" >&2; fail "systemd-analyze security with netns.conf failed"; }
! grep -E 'netns.conf:[0-9]+:' "$WORK/security-netns.out" || fail "systemd complains about netns.conf (above)"
grep -q '✗ CapabilityBoundingSet=~CAP_SYS_ADMIN ' "$WORK/security-netns.out" ||
	fail "with netns.conf, the unit still has no CAP_SYS_ADMIN"
note "with netns.conf: $(grep 'Overall exposure' "$WORK/security-netns.out")"

note "the daemon, started with the unit's ExecStart and ARGS, as its User="
# The command line as systemd runs it: $ARGS is split on whitespace.
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
# shellcheck source=/dev/null
ARGS=$(set -a && . /etc/default/tcexporter && echo "${ARGS:-}")
[ -z "$ARGS" ] || fail "/etc/default/tcexporter sets ARGS=$ARGS: the conffile's default is empty"
# ARGS that name another configuration (the last --config wins), listening
# on another port: /metrics there proves that ExecStart takes ARGS.
port=$(free_ports 1)
# And the AgentX subagent, as that user, of a private snmpd configured as
# Debian's (its communities see the view systemonly only) plus the
# package's snmpd.conf.d lines uncommented: tcxActionRows answers.
snmpd_config
{
	echo "agentAddress udp:$SNMPD_AGENT"
	echo "agentXSocket unix:$AGENTX_SOCK"
	echo "view systemonly included .1.3.6.1.2.1.1"
	echo "view systemonly included .1.3.6.1.2.1.25.1"
	echo "rocommunity public 127.0.0.1 -V systemonly"
	sed -n 's/^#\([A-Za-z]\)/\1/p' "$snmpconf"
} >"$WORK/snmpd/snmpd.conf"
start_snmpd
wait_snmpd 10
{
	cat /etc/tcexporter/tcexporter.yaml
	echo "http: {listen: [\"127.0.0.1:$port\"]}"
	echo "snmp: {enabled: true, agentx_socket: \"unix:$AGENTX_SOCK\", ping_interval: 1s}"
} >"$WORK/args.yaml"
chmod 644 "$WORK/args.yaml"
sed -i "s|^ARGS=.*|ARGS=\"--config $WORK/args.yaml\"|" /etc/default/tcexporter
# shellcheck source=/dev/null
ARGS=$(set -a && . /etc/default/tcexporter && echo "${ARGS:-}")
# shellcheck disable=SC2206 # word splitting, as systemd does
cmd=(${exec_start//\$ARGS/$ARGS})
[ "${cmd[0]}" = /usr/bin/tcexporter ] || fail "ExecStart does not run /usr/bin/tcexporter: ${cmd[*]}"
[ "${cmd[*]: -2}" = "--config $WORK/args.yaml" ] || fail "ExecStart does not end with \$ARGS: ${cmd[*]}"
user=$(sed -n 's/^User=//p' "$unit")
[ "$user" = tcexporter ] || fail "the unit runs as User=$user, not tcexporter"
# NOTIFY_SOCKET: a datagram socket that writes what it receives to a file.
"$PYTHON" - "$WORK/notify.sock" "$WORK/notified" <<'PY' &
import socket, sys
import os
os.umask(0)  # the daemon runs as another user
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    m = s.recv(4096).decode()
    with open(sys.argv[2], "a") as f:
        f.write(m + "\n")
PY
BG_PIDS+=($!)
wait_file "$WORK/notify.sock" 5 "$!" notify
: >"$WORK/tcx.err"
journal=$(stat -c '%d:%i' "$WORK/tcx.err")
bg_start tcx env JOURNAL_STREAM="$journal" NOTIFY_SOCKET="$WORK/notify.sock" "${as_user[@]}" "${cmd[@]}"
TCX_PID=$BG_PID
wait_file "$WORK/notified" 10 "$TCX_PID" tcx
grep -q '^READY=1' "$WORK/notified" || fail "the daemon's first notification is not READY=1: $(cat "$WORK/notified")"
# /healthz, not /metrics: each GET of /metrics here is a render on demand
# (text is not rendered ahead), one an address a collection of 15 s
# (http.renders_per_ip), and the scrape below would wait for the next.
wait_http 200 10 "http://127.0.0.1:$port/healthz"
scrape "$WORK/metrics.txt" "http://127.0.0.1:$port/metrics"
[ "$(grep -c '^tc_action_packets_total{.*cookie="74637862656e6368' "$WORK/metrics.txt")" = 3 ] ||
	fail "/metrics does not hold the 3 filters' actions"
wait_tcx_rows 10 3 >/dev/null
grep -q '^<6>tcexporter: info: tcexporter started' "$WORK/tcx.err" ||
	fail "no '<6>' priority prefix on a journal stream: $(head -n 3 "$WORK/tcx.err")"
note "ExecReload"
reload=$(sed -n 's/^ExecReload=//p' "$unit")
mark_log
${reload//\$MAINPID/$TCX_PID}
wait_log 10 'configuration reloaded'
alive "$TCX_PID" tcx
stop_tcx "$TCX_PID" tcx 10

# ---- purge ------------------------------------------------------------------------------
note "dpkg --purge: nothing left but the user's own file"
echo "# the user's" >"$USER_FILE"
dpkg --purge tcexporter >"$WORK/purge.out" 2>&1 || { cat "$WORK/purge.out" >&2; fail "dpkg --purge failed"; }
INSTALLED=0
[ -f "$USER_FILE" ] || fail "dpkg --purge removed $USER_FILE, a file of the user's"
[ ! -e /etc/tcexporter/tcexporter.yaml ] || fail "dpkg --purge left /etc/tcexporter/tcexporter.yaml"
rm -f "$USER_FILE"
rmdir /etc/tcexporter
! getent passwd tcexporter || fail "dpkg --purge left the user tcexporter"
! getent group tcexporter || fail "dpkg --purge left the group tcexporter"
dpkg-query -W -f='${db:Status-Status}' tcexporter 2>/dev/null | grep -qv '^not-installed$' &&
	fail "dpkg still knows tcexporter: $(dpkg-query -W -f='${db:Status-Abbrev}' tcexporter)"
snapshot >"$WORK/after.lst"
if ! diff "$WORK/before.lst" "$WORK/after.lst" >"$WORK/left.diff"; then
	cat "$WORK/left.diff" >&2
	fail "the machine differs after the purge (above: < gone, > left)"
fi
# (the check above would pass on a package that installed nothing)
[ "$(comm -13 "$WORK/before.lst" "$WORK/installed.lst" | wc -l)" -gt 10 ] ||
	fail "the snapshots saw nothing installed"
note "ok"
