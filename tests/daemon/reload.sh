#!/bin/bash
# Reloads, shutdown and systemd notification of the daemon, in a private
# network namespace (root) with u32 filters tagged by cookies:
#   - SIGHUP with a broken configuration (an unknown key; a YAML syntax
#     error; a web_config whose certificate is missing): rejected, logged as
#     FILE:LINE:COL on stderr, /metrics answers 200 throughout (a poller
#     checks it every 20 ms), collections go on, and a later snapshot has
#     tc_exporter_config_last_reload_successful 0;
#   - SIGHUP adding a cookie mapping: the new labels appear at the next
#     collection, tc_exporter_config_last_reload_successful back to 1;
#   - tc_exporter_http_requests_total{code} counts 200, 404, 405, 401;
#   - 40 SIGHUPs changing the connection limits (same port, new servers
#     started on the old listen socket before the old ones stop): no
#     request of 12 polling threads fails meanwhile;
#   - SIGHUP changing the listen port: the new port answers, the old stops;
#   - SIGTERM and SIGINT: exit 0 within 2 s (measured);
#   - the same under valgrind (memcheck, leaks): a few collections, scrapes
#     of every variant, a reload, /metrics over TLS, then SIGTERM: exit 0,
#     no error, no definite or indirect leak (skipped when valgrind is
#     missing, or in a sanitizer build);
#   - NOTIFY_SOCKET (plain protocol, path and abstract socket): READY=1 once
#     the first collection is served, RELOADING=1 then READY=1 on SIGHUP,
#     STOPPING=1 on SIGTERM.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc openssl
in_netns TCXD_RELOAD_INSIDE -n

daemon_setup
veth v0 v0p
tc qdisc add dev v0 clsact
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.2/32 \
	action mirred egress mirror dev v0p cookie 01
tc filter add dev v0 ingress pref 1 protocol ip u32 match ip dst 10.6.0.3/32 \
	action mirred egress mirror dev v0p cookie aa

read -r port_a port_b port_v port_n < <(free_ports 4)
cfg=$WORK/tcx.yaml
# write_cfg PORT [COOKIE LINES...]: the configuration of this test, with
# cookie 01 mapped, and the given lines added to the cookie map.
write_cfg() {
	local port=$1
	shift
	{
		cat <<YAML
interval: 1s
targets:
  - {dev: v0, parent: ingress}
labels: [tenant]
unmapped: export
cookies:
  "01": [acme]
YAML
		[ $# -eq 0 ] || printf '%s\n' "$@"
		# The pollers below ask for the same body 200-2,400 times a
		# second from one address: not a budget test (render_flood.sh).
		printf 'http:\n  listen: ["127.0.0.1:%s"]\n  renders_per_ip: 1024\n  renders: 1024\n' "$port"
	} >"$cfg.new"
	mv "$cfg.new" "$cfg"
}
write_cfg "$port_a"
start_tcx tcx "$cfg"
pid=$TCX_PID
base=http://127.0.0.1:$port_a
wait_http 200 30 "$base/healthz"

# wait_metric SECONDS PATTERN: polls /metrics until a line matches the grep
# -E PATTERN; fails after SECONDS.
wait_metric() {
	local deadline=$((SECONDS + $1))
	while :; do
		scrape "$WORK/m.txt" "$base/metrics"
		grep -qE -- "$2" "$WORK/m.txt" && return 0
		[ "$SECONDS" -lt "$deadline" ] ||
			fail "no line matches '$2' in /metrics within $1 s; last: $(grep -E '^tc_(action_bytes|exporter_config)' "$WORK/m.txt")"
		sleep 0.2
	done
}

wait_metric 10 '^tc_action_bytes_total\{.*cookie="01",tenant="acme"\} '
grep -qE '^tc_action_bytes_total\{.*cookie="aa",tenant=""\} ' "$WORK/m.txt" ||
	fail "the unmapped cookie aa is not exported with an empty tenant"
[ "$(metric_value "$WORK/m.txt" tc_exporter_config_last_reload_successful)" = 1 ] ||
	fail "tc_exporter_config_last_reload_successful is not 1 at start"

# The poller: THREADS threads GET /metrics every PAUSE s until told to stop;
# one line per request that did not get 200.
cat >"$WORK/poll.py" <<'PY'
import os, sys, threading, time, urllib.request
url, stop, out, nthreads, pause = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
lock = threading.Lock()
n = [0, 0]
f = open(out, "w")
def run():
    while not os.path.exists(stop):
        err = None
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                r.read()
                if r.status != 200:
                    err = "status %d" % r.status
        except Exception as e:
            err = repr(e)
        with lock:
            n[0] += 1
            if err:
                n[1] += 1
                f.write("%.3f %s\n" % (time.time(), err))
                f.flush()
        time.sleep(pause)
ts = [threading.Thread(target=run) for _ in range(nthreads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("%d requests, %d failed" % (n[0], n[1]))
PY
poll_start() {
	rm -f "$WORK/poll.stop" "$WORK/poll.out"
	bg_start poll "$PYTHON" "$WORK/poll.py" "$1/metrics" "$WORK/poll.stop" "$WORK/poll.bad" "${2:-1}" "${3:-0.02}"
	poll_pid=$BG_PID
	sleep 0.3
}
# Failures that do not stop the test (the later checks still run); the test
# fails at the end when there is any.
LATE_FAILURES=()
poll_stop() { # WHAT [late]: fails (at the end with "late") when a request failed
	touch "$WORK/poll.stop"
	wait_gone "$poll_pid" 10 || fail "the poller did not stop"
	wait "$poll_pid" || fail "the poller failed: $(cat "$WORK/poll.err")"
	note "poller during $1: $(cat "$WORK/poll.out")"
	if [ -s "$WORK/poll.bad" ] || ! grep -q ' 0 failed$' "$WORK/poll.out"; then
		head -n 20 "$WORK/poll.bad" >&2
		echo "(failures by kind:)" >&2
		cut -d' ' -f2- "$WORK/poll.bad" | sort | uniq -c >&2
		[ "${2:-}" = late ] || fail "$1: /metrics did not answer 200 throughout (above)"
		echo "FAIL (reported at the end): $1: /metrics did not answer 200 throughout" >&2
		LATE_FAILURES+=("$1: /metrics did not answer 200 throughout: $(cat "$WORK/poll.out")")
	fi
}

note "reload with broken configurations: rejected, logged with FILE:LINE:COL, still serving"
poll_start "$base"
c0=$(collections "$base/metrics")
# 1. An unknown key at line 4, column 5.
cp "$cfg" "$WORK/good.yaml"
cat >"$cfg" <<YAML
interval: 1s
targets:
  - dev: v0
    parnet: ingress
http:
  listen: ["127.0.0.1:$port_a"]
YAML
mark_log
kill -HUP "$pid"
wait_log 10 "$cfg:4:5: .*parnet"
wait_log 10 'reload rejected'
grep -E "$cfg:4:5: " "$WORK/tcx.err" | grep -qE '^tcexporter: error: ' ||
	fail "the FILE:LINE:COL error is not logged as 'tcexporter: error: ...'"
wait_metric 10 '^tc_exporter_config_last_reload_successful 0$'
# 2. A YAML syntax error (unclosed flow sequence) at line 3, column 1.
printf 'interval: 1s\ntargets: [{dev: v0, parent: ingress}\nlabels: [tenant]\n' >"$cfg"
mark_log
kill -HUP "$pid"
wait_log 10 "$cfg:3:1: YAML syntax error"
wait_log 10 'reload rejected'
# 3. A web config with an unknown key (line 3, column 3), then one whose
# certificate file does not exist.
cp "$WORK/good.yaml" "$cfg"
printf '  web_config: bad-web.yml\n' >>"$cfg"
printf 'tls_server_config:\n  cert_file: nosuch.crt\n  kee_file: nosuch.key\n' >"$WORK/bad-web.yml"
mark_log
kill -HUP "$pid"
wait_log 10 "bad-web.yml:3:3: .*kee_file"
wait_log 10 'reload rejected'
printf 'tls_server_config:\n  cert_file: nosuch.crt\n  key_file: nosuch.key\n' >"$WORK/bad-web.yml"
mark_log
kill -HUP "$pid"
wait_log 10 "^tcexporter: error: .*nosuch.crt"
wait_log 10 'reload rejected'
# Still the old configuration: plain HTTP on port A, collecting every 1 s,
# the old labels.
sleep 1.5
wait_metric 10 '^tc_exporter_config_last_reload_successful 0$'
grep -qE '^tc_action_bytes_total\{.*cookie="01",tenant="acme"\} ' "$WORK/m.txt" ||
	fail "the old configuration's labels are gone after rejected reloads"
c1=$(collections "$base/metrics")
[ "${c1%%.*}" -gt "${c0%%.*}" ] || fail "no collection after the rejected reloads ($c0 -> $c1)"
alive "$pid" tcx
poll_stop "the rejected reloads"

note "reload adding a cookie mapping: new labels at the next collection"
poll_start "$base"
write_cfg "$port_a" '  "aa": [globex]'
t0=$(date +%s%N)
mark_log
kill -HUP "$pid"
wait_metric 10 '^tc_action_bytes_total\{.*cookie="aa",tenant="globex"\} '
note "new labels after $((($(date +%s%N) - t0) / 1000000)) ms"
grep -qE '^tc_action_bytes_total\{.*cookie="01",tenant="acme"\} ' "$WORK/m.txt" ||
	fail "cookie 01 lost its labels"
! grep -qE '^tc_action_bytes_total\{.*cookie="aa",tenant=""\} ' "$WORK/m.txt" ||
	fail "the old row of aa (tenant=\"\") is still there"
[ "$(metric_value "$WORK/m.txt" tc_exporter_config_last_reload_successful)" = 1 ] ||
	fail "tc_exporter_config_last_reload_successful is not 1 after a good reload"
wait_log 5 'configuration reloaded'
poll_stop "the good reload"

note "tc_exporter_http_requests_total by code"
curl -s -o /dev/null "$base/nope" || true
curl -s -o /dev/null -X POST "$base/metrics" || true
n200=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="200"}')
deadline=$((SECONDS + 10))
while :; do
	scrape "$WORK/m.txt" "$base/metrics"
	v404=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="404"}')
	v405=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="405"}')
	v200=$(metric_value "$WORK/m.txt" 'tc_exporter_http_requests_total{code="200"}')
	[ "${v404:-0}" -ge 1 ] && [ "${v405:-0}" -ge 1 ] && [ "${v200:-0}" -gt "${n200:-0}" ] && break
	[ "$SECONDS" -lt "$deadline" ] ||
		fail "http_requests_total: 200=$v200 (before: $n200) 404=$v404 405=$v405"
	sleep 0.3
done

# 40 reloads, each restarting the HTTP server on the same port (new limits),
# 0.1 s apart, while 12 threads request /metrics every 5 ms: many requests
# are in flight at every restart (with 6 threads every 20 ms, a restart that
# drops in-flight requests was caught in only 9 runs of 12).
note "40 reloads changing the connection limits (same port): no failed request"
poll_start "$base" 12 0.005
for i in $(seq 1 40); do
	write_cfg "$port_a" '  "aa": [globex]'
	printf '  max_connections: %d\n  max_connections_per_ip: 50\n  timeout: 5s\n' $((100 + i)) >>"$cfg"
	mark_log
	kill -HUP "$pid"
	wait_log 10 'configuration reloaded'
	sleep 0.1
done
sleep 0.5
n_listen=$(grep -c "listening on 127.0.0.1:$port_a" "$WORK/tcx.err")
[ "$n_listen" -ge 41 ] ||
	fail "the HTTP server was not restarted by every reload that changed its limits ($n_listen starts)"
poll_stop "40 restarts of the HTTP server on the same port" late

note "reload changing the listen port: $port_a -> $port_b"
write_cfg "$port_b"
kill -HUP "$pid"
wait_http 200 10 "http://127.0.0.1:$port_b/metrics"
deadline=$((SECONDS + 10))
while [ "$(http_code "$base/metrics")" != 000 ]; do
	[ "$SECONDS" -lt "$deadline" ] || fail "the old port $port_a still answers 10 s after the reload"
	sleep 0.1
done
base=http://127.0.0.1:$port_b
alive "$pid" tcx

note "SIGTERM: exit 0 within 2 s"
stop_tcx "$pid" tcx 2
note "SIGTERM to exit: $STOP_MS ms"
t_term=$STOP_MS
wait_log 1 'SIGTERM'
if grep -vE '^tcexporter: (info|warning|error): ' "$WORK/tcx.err" >&2; then
	fail "stderr lines above are not 'tcexporter: LEVEL: message'"
fi

note "SIGINT: exit 0 within 2 s"
write_cfg "$port_a"
start_tcx tcx_int "$cfg"
wait_http 200 30 "http://127.0.0.1:$port_a/healthz"
t0=$(date +%s%N)
kill -INT "$TCX_PID"
wait_gone "$TCX_PID" 2 || fail "still running 2 s after SIGINT"
rc=0
wait "$TCX_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc after SIGINT"
note "SIGINT to exit: $((($(date +%s%N) - t0) / 1000000)) ms"

note "NOTIFY_SOCKET: READY=1, RELOADING=1, STOPPING=1"
for addr in "$WORK/notify.sock" "@tcx-test-notify-$$"; do
	out=$WORK/notify.$(echo "$addr" | tr -dc 'a-z@').log
	notify_listen "$addr" "$out"
	npid=$NOTIFY_PID
	write_cfg "$port_n"
	NOTIFY_SOCKET=$addr start_tcx tcx_notify "$cfg"
	deadline=$((SECONDS + 15))
	until grep -q '^READY=1' "$out" 2>/dev/null; do
		alive "$TCX_PID" tcx_notify
		[ "$SECONDS" -lt "$deadline" ] || fail "$addr: no READY=1 within 15 s; got: $(cat "$out" 2>/dev/null)"
		sleep 0.05
	done
	# READY=1 comes after the first collection: /metrics has it already.
	code=$(http_code "http://127.0.0.1:$port_n/metrics")
	[ "$code" = 200 ] || fail "$addr: READY=1 was sent but /metrics answers $code"
	kill -HUP "$TCX_PID"
	deadline=$((SECONDS + 10))
	until [ "$(grep -c '^READY=1' "$out")" -ge 2 ]; do
		[ "$SECONDS" -lt "$deadline" ] || fail "$addr: no READY=1 after the reload; got: $(cat "$out")"
		sleep 0.05
	done
	grep -q '^RELOADING=1' "$out" || fail "$addr: no RELOADING=1 on SIGHUP; got: $(cat "$out")"
	stop_tcx "$TCX_PID" tcx_notify 2
	deadline=$((SECONDS + 5))
	until grep -q '^STOPPING=1' "$out"; do
		[ "$SECONDS" -lt "$deadline" ] || fail "$addr: no STOPPING=1 on SIGTERM; got: $(cat "$out")"
		sleep 0.05
	done
	note "$addr: $(tr '\n' ' ' <"$out")"
	# In this order: READY, RELOADING, READY, STOPPING.
	order=$(grep -oE '^(READY|RELOADING|STOPPING)=1' "$out" | tr '\n' ' ')
	[ "$order" = "READY=1 RELOADING=1 READY=1 STOPPING=1 " ] || fail "$addr: messages in the order: $order"
	! grep -q 'sd_notify' "$WORK/tcx_notify.err" || fail "$addr: $(grep sd_notify "$WORK/tcx_notify.err")"
	kill "$npid"
	wait "$npid" 2>/dev/null || true
	rm -f "$WORK/notify.sock"
done

# ---- valgrind --------------------------------------------------------------------------
vg_note="skipped"
if ! command -v valgrind >/dev/null 2>&1; then
	# Not a pass where every check must run (CI).
	[ "${TCX_REQUIRE_ROOT:-0}" != 1 ] ||
		fail "valgrind is not installed, and TCX_REQUIRE_ROOT=1 allows no skipped part"
	note "valgrind is not installed: the valgrind part is skipped"
elif grep -q -e libasan -e libubsan -e libtsan <<<"$(ldd "$TCX_BIN" 2>/dev/null)"; then
	note "a sanitizer build: the valgrind part is skipped"
else
	note "under valgrind: collections, scrapes, a reload, TLS, then SIGTERM"
	mkdir -p "$WORK/vg"
	make_certs "$WORK/vg/pki"
	printf 'tls_server_config:\n  cert_file: pki/server.crt\n  key_file: pki/server.key\n' >"$WORK/vg/web.yml"
	vcfg=$WORK/vg/tcx.yaml
	cat >"$vcfg" <<YAML
interval: 1s
targets:
  - {dev: v0, parent: ingress}
  - {dev: nosuch0, parent: ingress}
labels: [tenant]
cookies:
  "01": [acme]
http:
  listen: ["127.0.0.1:$port_v"]
  web_config: web.yml
YAML
	# shellcheck disable=SC2054 # the commas are valgrind's
	TCX_WRAP=(valgrind --error-exitcode=99 --leak-check=full
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
		--log-file="$WORK/vg/valgrind.log")
	start_tcx tcx_vg "$vcfg"
	TCX_WRAP=()
	vpid=$TCX_PID
	vbase=https://127.0.0.1:$port_v
	vca=(--cacert "$WORK/vg/pki/ca.crt")
	wait_http 200 120 "$vbase/healthz" "${vca[@]}"
	for i in 1 2 3; do
		for h in 'Accept: text/plain' 'Accept: application/openmetrics-text;version=1.0.0'; do
			for e in 'Accept-Encoding: identity' 'Accept-Encoding: gzip'; do
				code=$(curl -s -o /dev/null --max-time 30 -w '%{http_code}' "${vca[@]}" -H "$h" -H "$e" \
					"$vbase/metrics" || true)
				[ "$code" = 200 ] || fail "valgrind: /metrics ($h, $e) answered '$code'"
			done
		done
		curl -s -o /dev/null --max-time 30 "${vca[@]}" "$vbase/" || true
		curl -s -o /dev/null --max-time 30 "${vca[@]}" "$vbase/nope" || true
		curl -s -o /dev/null --max-time 30 "http://127.0.0.1:$port_v/metrics" || true
		[ "$i" != 2 ] || kill -HUP "$vpid"
		sleep 1
	done
	deadline=$((SECONDS + 60))
	while :; do
		curl -s --max-time 30 "${vca[@]}" -o "$WORK/vg/m.txt" "$vbase/metrics" || true
		c=$(metric_value "$WORK/vg/m.txt" tc_exporter_collections_total)
		[ "${c:-0}" -lt 4 ] || break
		[ "$SECONDS" -lt "$deadline" ] || fail "valgrind: fewer than 4 collections in 60 s ($c)"
		sleep 0.5
	done
	grep -qE '^tc_action_bytes_total\{.*cookie="01",tenant="acme"\} ' "$WORK/vg/m.txt" ||
		fail "valgrind: no action row"
	t0=$(date +%s%N)
	kill -TERM "$vpid"
	wait_gone "$vpid" 60 || fail "valgrind: still running 60 s after SIGTERM"
	rc=0
	wait "$vpid" || rc=$?
	vg_ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$rc" != 0 ] || ! grep -q 'ERROR SUMMARY: 0 errors from 0 contexts' "$WORK/vg/valgrind.log"; then
		cat "$WORK/vg/valgrind.log" >&2
		fail "valgrind: exit status $rc (99: memcheck errors or leaks, above)"
	fi
	vg_note="clean, SIGTERM to exit $vg_ms ms under valgrind"
	note "valgrind: $vg_note"
fi

if [ ${#LATE_FAILURES[@]} -gt 0 ]; then
	fail "$(printf '%s; ' "${LATE_FAILURES[@]}")"
fi
echo "reload: all checks passed in $(elapsed_ms) ms" \
	"(SIGTERM: $t_term ms; valgrind: $vg_note)"
