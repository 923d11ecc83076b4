#!/bin/bash
# SIGTERM is never held up by a password check: with basic auth at the
# highest bcrypt cost accepted (14, about 1 s a check), requests with
# credentials keep both HTTP threads in bcrypt when SIGTERM comes; the daemon
# must exit 0 in well under the time of one check (it waited for them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs
in_netns TCXD_STOP_AUTH_INSIDE -n

daemon_setup
read -r port < <(free_ports 1)
# exporter-toolkit's dummy hash, at cost 14: any password is wrong
cat >"$WORK/web.yml" <<'YAML'
basic_auth_users:
  alice: $2y$14$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi
YAML
cat >"$WORK/tcx.yaml" <<YAML
interval: 1h
targets: [{all: true}]
http:
  listen: ["127.0.0.1:$port"]
  web_config: web.yml
YAML
url=http://127.0.0.1:$port/metrics

for round in 1 2; do
	start_tcx "tcx$round" "$WORK/tcx.yaml"
	wait_http 401 20 "$url" # no credentials: no bcrypt
	# a known and an unknown user: both cost a bcrypt of cost 14
	for user in alice mallory alice mallory; do
		curl -s -o /dev/null -m 30 -u "$user:guess" "$url" &
	done
	sleep 0.3 # the checks are under way
	stop_tcx "$TCX_PID" "tcx$round" 10
	note "round $round: stopped in $STOP_MS ms with 4 password checks in flight"
	[ "$STOP_MS" -lt 500 ] ||
		fail "round $round: SIGTERM took $STOP_MS ms: it waited for password checks"
	wait # the clients got an answer or a closed connection
done
echo "stop_auth: all checks passed"
