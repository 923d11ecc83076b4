# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared parts of the benchmarks tests/bench/run.sh (make bench),
# tests/bench/scale.sh (make bench-scale) and tests/bench/qdisc.sh (make
# bench-qdisc). Source it after setting
# BENCH_TAG (the prefix of messages, e.g. "bench"):
#
#   . "$srcdir/lib.sh"
#
# The filters: in a private network namespace, a veth pair v0/v1, clsact on
# v0, and N u32 filters on v0 ingress, each with one mirred action and a
# unique 16-byte cookie (74637862656e6368 = "tcxbench", then the filter's
# number). u32 inserts into one hash bucket in quadratic time (10k filters
# take ~1 s, 50k ~60 s), so filters are spread over several prefs, PER per
# pref: one u32 tp (and one root hash table) per pref. Keep PER under 4096:
# the node part of a u32 handle has 12 bits, and past 4095 filters in one
# hash table the kernel hands out the same handle again (800::fff), so that
# filters can then be told apart only by their cookies.
# shellcheck shell=bash

die() {
	echo "$BENCH_TAG: $*" >&2
	exit 1
}

skip() {
	echo "$BENCH_TAG: SKIP: $*" >&2
	exit 77
}

# bench_require TOOL...: skips (77) unless we are root, every TOOL exists and
# network namespaces can be made.
bench_require() {
	local tool
	((EUID == 0)) || skip "must be run as root (it creates network namespaces and TC filters)"
	for tool in "$@"; do
		command -v "$tool" > /dev/null || skip "$tool is not installed"
	done
	unshare -n true 2> /dev/null || skip "cannot create a network namespace (unshare -n)"
}

# bench_exe PATH: dies unless PATH is an executable (a build problem, not a
# skip); warns when it is a sanitizer build.
bench_exe() {
	[[ -x $1 ]] || die "$1: not found or not executable (build first)"
	if ldd "$1" 2> /dev/null | grep -q 'lib[at]san\|libubsan'; then
		echo "$BENCH_TAG: WARNING: $1 is built with sanitizers: figures are not representative" >&2
	fi
}

# bench_check_sizes VAR PER N...: dies unless every N is a usable number of
# filters with PER filters per pref (VAR names the setting, for the message).
bench_check_sizes() {
	local var=$1 per=$2 n
	shift 2
	[[ $per =~ ^[1-9][0-9]*$ ]] || die "TCX_BENCH_PER_PREF must be a positive integer, not '$per'"
	(($# > 0)) || die "$var: no size given"
	for n in "$@"; do
		[[ $n =~ ^[1-9][0-9]*$ ]] || die "$var: '$n' is not a positive integer"
		((n <= 16777216)) || die "$var: $n is too large (at most 2^24)"
		(((n + per - 1) / per <= 65535)) || die "N=$n: too many prefs; raise TCX_BENCH_PER_PREF"
	done
}

# bench_out_dir DEFAULT: sets out to TCX_BENCH_OUT, else DEFAULT, else (not
# writable, e.g. make distcheck's read-only source tree) a new temporary
# directory; absolute.
bench_out_dir() {
	out=${TCX_BENCH_OUT:-$1}
	if ! mkdir -p "$out" 2> /dev/null || [[ ! -w $out ]]; then
		out=$(mktemp -d "/tmp/$BENCH_TAG.XXXXXX")
	fi
	out=$(readlink -f "$out")
}

# bench_netns_setup: (inside the namespace) loopback up, v0/v1, clsact on v0.
bench_netns_setup() {
	ip link set lo up
	ip link add v0 type veth peer name v1
	ip link set v0 up
	ip link set v1 up
	tc qdisc add dev v0 clsact
}

# bench_add_filters N PER BATCHFILE [DEV]: (inside the namespace) adds the N
# filters to the ingress of DEV (default v0, which needs a clsact) with tc
# -batch; sets BENCH_CREATE_S (seconds it took) and BENCH_PREFS.
bench_add_filters() {
	local n=$1 per=$2 batch=$3 dev=${4:-v0} t0 t1

	# Mirrored to v1 from v0, else to lo: never back into DEV (no packet
	# loop, should any traffic come).
	awk -v n="$n" -v per="$per" -v dev="$dev" -v to="$([[ $dev == v0 ]] && echo v1 || echo lo)" 'BEGIN {
		for (i = 0; i < n; i++)
			printf "filter add dev %s ingress pref %d protocol ip u32 " \
			       "match ip dst 10.%d.%d.%d/32 action mirred egress mirror " \
			       "dev %s cookie 74637862656e6368%016x\n", dev,
			       1 + int(i / per), int(i / 65536) % 256, int(i / 256) % 256,
			       i % 256, to, i
	}' > "$batch"
	BENCH_PREFS=$(((n + per - 1) / per))
	echo "$BENCH_TAG: N=$n: creating $n u32 filters over $BENCH_PREFS pref(s) ($per per pref)"
	t0=$(date +%s%N)
	tc -batch "$batch" || die "N=$n: tc -batch failed"
	t1=$(date +%s%N)
	BENCH_CREATE_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	echo "$BENCH_TAG: N=$n: created in ${BENCH_CREATE_S} s"
	rm -f "$batch"
}

# bench_check_rows N TCX CFG FLOOR PROMFILE: (inside the namespace) dies
# unless `TCX --once --config CFG` prints N action rows and FLOOR sees at
# least N filter messages on v0 ingress. Leaves the output in PROMFILE.
bench_check_rows() {
	local n=$1 tcx=$2 cfg=$3 floor=$4 prom=$5 rows msgs rc=0

	"$tcx" --once --config "$cfg" > "$prom" || rc=$?
	((rc == 0)) || die "N=$n: tcexporter --once exited with $rc"
	rows=$(grep -c '^tc_action_bytes_total{' "$prom" || true)
	if ((rows != n)); then
		die "N=$n: tcexporter --once printed $rows tc_action_bytes_total rows, expected $n (see $prom)"
	fi
	msgs=$("$floor" v0 ingress 2>&1 > /dev/null) || die "N=$n: mnl_floor failed: $msgs"
	((msgs >= n)) || die "N=$n: mnl_floor saw $msgs messages, expected at least $n"
	echo "$BENCH_TAG: N=$n: exporter printed $rows action rows ($(wc -c < "$prom") bytes);" \
		"floor saw $msgs filter messages"
}

# ---- the daemon, as Prometheus uses it (scale.sh, qdisc.sh) ---------------
# These use the caller's globals: DAEMON_PID (set when it starts the
# daemon), derr (its stderr file), n (the size, for messages), out,
# interval_s (the interval in seconds) and http_timeout.

readonly PORT=9100 # the daemon's, in the namespace's own loopback
# What Prometheus 2 asks for.
readonly ACCEPT_OM='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'

DAEMON_PID=
stop_daemon_on_exit() {
	if [[ -n $DAEMON_PID ]]; then
		kill -KILL "$DAEMON_PID" 2> /dev/null || true
		wait "$DAEMON_PID" 2> /dev/null || true
	fi
}

daemon_alive() {
	if ! kill -0 "$DAEMON_PID" 2> /dev/null || [[ $(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$DAEMON_PID/stat" 2> /dev/null) == Z ]]; then
		die "N=$n: the daemon died (during $1); its stderr: $(tail -n 20 "$derr")"
	fi
}

# start_daemon CFG SECONDS: starts "$tcx" --config CFG (stderr to $derr),
# sets DAEMON_PID, and waits at most SECONDS for its first collection
# (/healthz answers 200); then sets LAST_AGE and LAST_T for
# wait_next_collection.
start_daemon() {
	local deadline=$((SECONDS + $2))
	"$tcx" --config "$1" > /dev/null 2> "$derr" &
	DAEMON_PID=$!
	until [[ $(curl -s -o /dev/null --max-time 10 -w '%{http_code}' "http://127.0.0.1:$PORT/healthz") == 200 ]]; do
		daemon_alive "start-up"
		((SECONDS < deadline)) || die "$n: the daemon did not complete a collection in $2 s"
		sleep 0.1
	done
	LAST_AGE=$(health_age) LAST_T=$EPOCHREALTIME
}

# Seconds of CPU of the daemon, every thread: user + system, or with `user`
# user alone.
daemon_cpu() {
	daemon_alive "reading its CPU time"
	# Fields 14 and 15 of /proc/PID/stat, counted after the ") " that ends
	# the command name.
	sed 's/^.*) //' "/proc/$DAEMON_PID/stat" |
		awk -v hz="$(getconf CLK_TCK)" -v user="${1:-}" \
			'{ printf "%.3f\n", (user == "user" ? $12 : $12 + $13) / hz }'
}

# kB of FIELD (VmRSS, VmHWM) of the daemon.
daemon_mem() {
	daemon_alive "reading its memory"
	awk -v f="$1:" '$1 == f { print $2 }' "/proc/$DAEMON_PID/status"
}

# The daemon's age of the snapshot from /healthz, in seconds. A collection
# that takes more than 3 intervals (1M rows at 5s) makes /healthz answer 503
# "stale" meanwhile: counted in $out/stale-N.txt, reported.
health_age() {
	local body code
	body=$(curl -sS --max-time 10 -w '\n%{http_code}' "http://127.0.0.1:$PORT/healthz") ||
		die "N=$n: GET /healthz failed"
	code=${body##*$'\n'}
	body=${body%$'\n'*}
	if [[ $code == 200 && $body =~ ^ok:\ last\ collection\ ([0-9.]+)\ s\ ago ]]; then
		echo "${BASH_REMATCH[1]}"
	elif [[ $code == 503 && $body =~ ^stale:\ last\ collection\ ([0-9.]+)\ s\ ago ]]; then
		echo "$body" >> "$out/stale-$n.txt"
		echo "${BASH_REMATCH[1]}"
	else
		die "N=$n: GET /healthz answered $code: $body"
	fi
}

# Waits until the daemon publishes a snapshot newer than the one it had at
# the last call (health_age drops below what it would be with no new one).
LAST_AGE='' LAST_T=''
wait_next_collection() {
	local deadline age now expect sleep_s
	deadline=$(awk -v t="$EPOCHREALTIME" -v i="$interval_s" -v n="$n" \
		'BEGIN { printf "%d", t + 3 * i + 60 + n / 5000 }')
	# Sleep through most of the interval first: no polling while idle.
	sleep_s=$(awk -v a="$LAST_AGE" -v i="$interval_s" 'BEGIN { s = i - a - 0.3; printf "%.2f", (s > 0 ? s : 0) }')
	sleep "$sleep_s"
	while :; do
		daemon_alive "the wait for a collection"
		age=$(health_age)
		now=$EPOCHREALTIME
		expect=$(awk -v a="$LAST_AGE" -v t0="$LAST_T" -v t="$now" 'BEGIN { printf "%.3f", a + (t - t0) }')
		if awk -v a="$age" -v e="$expect" 'BEGIN { exit !(a + 0.15 < e) }'; then
			LAST_AGE=$age LAST_T=$now
			return 0
		fi
		awk -v t="$now" -v d="$deadline" 'BEGIN { exit !(t > d) }' &&
			die "N=$n: no new collection within $((3 * ${interval_s%.*} + 60)) s and more (snapshot age $age s)"
		sleep 0.1
	done
}

# One scrape as Prometheus makes it; the gzip body in $out/scrape-$n.gz.
scrape_om() {
	local code
	code=$(curl -sS --max-time "$http_timeout" -H "Accept: $ACCEPT_OM" -H 'Accept-Encoding: gzip' \
		-D "$out/scrape-$n.hdr" -o "$out/scrape-$n.gz" -w '%{http_code}' \
		"http://127.0.0.1:$PORT/metrics") || die "N=$n: OpenMetrics+gzip scrape failed ($1)"
	[[ $code == 200 ]] || die "N=$n: OpenMetrics+gzip scrape answered $code ($1)"
	grep -qi '^content-encoding: *gzip' "$out/scrape-$n.hdr" ||
		die "N=$n: OpenMetrics+gzip scrape: not gzip-encoded ($1)"
	grep -qi '^content-type: *application/openmetrics-text' "$out/scrape-$n.hdr" ||
		die "N=$n: OpenMetrics+gzip scrape: not OpenMetrics ($1)"
}

# ---- the report ------------------------------------------------------------

# calc EXPR [VAR=VALUE...]: awk arithmetic, e.g. calc 'a / b' a=1 b=2.
calc() {
	local expr=$1 args=() v
	shift
	for v in "$@"; do args+=(-v "$v"); done
	awk "${args[@]}" "BEGIN { printf \"%.2f\", $expr }"
}

# verdict VALUE <=|>= LIMIT: PASS or MISS.
verdict() {
	if awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { exit !(op == "<=" ? v <= l : v >= l) }'; then
		echo PASS
	else
		echo MISS
	fi
}

# row FIGURE VALUE [GOAL VERDICT]
row() {
	printf '  %-48s %-22s %-26s %s\n' "$1" "$2" "${3:-}" "${4:-}" | sed 's/ *$//'
}
