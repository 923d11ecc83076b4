# Helpers of the daemon tests (tests/daemon/*.sh), on top of
# tests/lib/common.sh. Source it after common.sh:
#
#   . "$here/../lib/common.sh"
#   . "$here/lib.sh"
#
# Every test runs its body in a private network namespace (unshare -n), so
# the loopback ports it listens on cannot clash with anything on the host or
# with a test running in parallel; the ports are still picked by the kernel
# (bind to port 0) so that two servers of one test never clash either.
#
# Every process started with bg_start is killed (SIGKILL after a grace
# period) when the test exits, whatever the reason; so is every process of
# the test's process group that is still around (python helpers, curl).
# shellcheck shell=bash
# shellcheck disable=SC2034 # TCX_PID, BG_PID, STOP_MS are for the tests

TCXD_PIDS=()


# netns_basics: loopback up, no IPv6 autoconfiguration noise (no router
# solicitations, DAD or MLD that would count as traffic).
netns_basics() {
	ip link set lo up
	sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
		2>/dev/null || true
	# 127.0.0.0/8 is local on lo: 127.0.0.2 works as a second client address.
}

# tcxd_setup: the work directory and the exit trap (kills what we started,
# then removes the work directory).
tcxd_setup() {
	make_workdir
	trap '_tcxd_exit' EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	trap 'exit 129' HUP
}

_tcxd_exit() {
	local rc=$? p
	trap - EXIT TERM INT HUP
	for p in "${TCXD_PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${TCXD_PIDS[@]}"; do
		wait_gone "$p" 5 || kill -KILL "$p" 2>/dev/null || true
	done
	if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${WORK:-}" ]; then
		# The daemons' logs tell what went wrong.
		for p in "$WORK"/*.err; do
			[ -s "$p" ] || continue
			echo "--- $p (last 30 lines)" >&2
			tail -n 30 "$p" >&2
		done
	fi
	if [ -n "${WORK:-}" ]; then
		if [ "${TCX_KEEP_WORK:-0}" = 1 ]; then
			echo "(kept work directory $WORK)" >&2
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}

# bg_start NAME CMD...: starts CMD in the background, stdout and stderr in
# $WORK/NAME.out and $WORK/NAME.err; sets BG_PID. Killed at exit.
bg_start() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	BG_PID=$!
	TCXD_PIDS+=("$BG_PID")
}



# free_ports N: N distinct free TCP ports on 127.0.0.1, one per line.
free_ports() {
	"$PYTHON" - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

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
		sleep 0.1
	done
}

# wait_log SECONDS PATTERN: waits until the stderr of the daemon started as
# "tcx" matches. mark_log: wait_log looks only at what the daemon logs after
# this point, so that a line logged by an earlier reload cannot answer for a
# later one.
LOG_MARK=0
mark_log() {
	LOG_MARK=$(wc -c <"$WORK/tcx.err")
}
wait_log() {
	local deadline=$((SECONDS + $1))
	until tail -c +$((LOG_MARK + 1)) "$WORK/tcx.err" | grep -qE -- "$2"; do
		[ "$SECONDS" -lt "$deadline" ] || fail "the daemon did not log '$2' within $1 s"
		sleep 0.1
	done
}

# start_tcx NAME CONFIG [EXTRA ARGS]: starts the daemon (the words of the
# array TCXD_WRAP, e.g. valgrind, go in front) and sets TCX_PID.
TCXD_WRAP=()
start_tcx() {
	local name=$1 cfg=$2
	shift 2
	bg_start "$name" "${TCXD_WRAP[@]}" "$TCX_BIN" --config "$cfg" "$@"
	TCX_PID=$BG_PID
}

# daemon_alive PID NAME: fails the test when the daemon has died.
daemon_alive() {
	if ! kill -0 "$1" 2>/dev/null || [ "$(proc_state "$1")" = Z ]; then
		fail "the daemon $2 (pid $1) died; its stderr: $(tail -n 20 "$WORK/$2.err")"
	fi
}

# sanitizer_check NAME: fails when a sanitizer reported anything in
# $WORK/NAME.err (the sanitizer build runs these tests too).
sanitizer_check() {
	if has_sanitizer_report "$WORK/$1.err"; then
		cat "$WORK/$1.err" >&2
		fail "$1: sanitizer report"
	fi
}

# stop_tcx PID NAME SECONDS: SIGTERM, then the daemon must exit 0 within
# SECONDS. Sets STOP_MS to the time it took.
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

# metric_value FILE SERIES: the value of the sample whose name and labels are
# exactly SERIES (e.g. 'tc_exporter_config_last_reload_successful') in a text
# exposition; empty when absent.
metric_value() {
	awk -v s="$2" 'index($0, s " ") == 1 { print substr($0, length(s) + 2); exit }' "$1"
}
