#!/bin/bash
# Qdiscs and classes replaced while the daemon collects every 200 ms and is
# scraped every 200 ms (issue 16): every scrape is valid (promtool check
# metrics finds nothing), has no series twice, has c0's HTB qdisc and its
# classes, and no counter (a tc_qdisc_* or tc_class_* family ending in
# _total) of a qdisc or class seen in two scrapes in a row is lower in the
# second.
#
# c0 has an HTB root 1: with classes 1:10..1:13 and 1:40 (the default) under
# 1:1, a pfifo on each, u32 filters at parent 1: sending UDP ports 2001..2005
# to 1:10..1:13 and to the class of the moment, and datagrams through all of
# them (tests/lib/udp_raw.py, out of c0 itself) for CHURN_SECONDS (10).
# Meanwhile, every 100 ms one of, in turn:
#   - tc class change of 1:10's rate, tc class replace of 1:11 (the same
#     class, its counters go on);
#   - tc qdisc replace of 1:12's pfifo by a pfifo of another limit (the same
#     qdisc, changed);
#   - 1:13's leaf replaced by a new qdisc, pfifo and bfifo in turn, each
#     with a handle of its own (a new identity: its counters start at 0);
#   - a new class with a pfifo, port 2005's filter moved to it, and the
#     class before it deleted (a class id of its own each time).
# A qdisc or class made again under an identity it had would count from 0
# and look like a counter going down: the churn never reuses one. The
# scrapes must see the churn (several of 1:13's leaves and of the new
# classes) and counters that grew (traffic flowed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../lib/daemon.sh
. "$here/../lib/daemon.sh"

daemon_prereqs tc promtool
in_netns TCXD_QDISC_CHURN_NS
daemon_setup

CHURN_SECONDS=${TCX_QDISC_CHURN_SECONDS:-10}
veth c0 c1
tc qdisc add dev c0 root handle 1: htb default 40
tc class add dev c0 parent 1: classid 1:1 htb rate 200mbit
for m in 10 11 12 13 40; do
	tc class add dev c0 parent 1:1 classid "1:$m" htb rate 1mbit ceil 200mbit quantum 1514
	tc qdisc add dev c0 parent "1:$m" handle "$m:" pfifo limit 1000
done
for i in 0 1 2 3; do
	tc filter add dev c0 parent 1: pref 10 protocol ip u32 match ip dport $((2001 + i)) 0xffff \
		flowid "1:1$i"
done
# the class of the moment: 1:100 first (hex, as tc takes it)
tc class add dev c0 parent 1:1 classid 1:100 htb rate 1mbit ceil 200mbit quantum 1514
tc qdisc add dev c0 parent 1:100 handle 100: pfifo limit 1000
tc filter add dev c0 parent 1: pref 50 protocol ip u32 match ip dport 2005 0xffff flowid 1:100

read -r port < <(free_ports 1)
url=http://127.0.0.1:$port/metrics
cat >"$WORK/tcx.yaml" <<EOF
interval: 200ms
targets: [{all: true}]
http: {listen: "127.0.0.1:$port"}
EOF
start_tcx tcx "$WORK/tcx.yaml"
wait_http 200 10 "$url"

# churn SECONDS: the replacements above, one every 100 ms; the number of
# rounds into $WORK/rounds.
churn() {
	local end next now round=0 leaf=0x200 cls=0x100 new
	end=$(($(date +%s%N) + $1 * 1000000000))
	next=$(date +%s%N)
	while [ "$next" -lt "$end" ]; do
		case $((round % 5)) in
		0) echo "class change dev c0 classid 1:10 parent 1:1 htb rate $((1 + round % 7))mbit ceil 200mbit quantum 1514" ;;
		1) echo "class replace dev c0 classid 1:11 parent 1:1 htb rate $((1 + round % 5))mbit ceil 200mbit quantum 1514" ;;
		2) echo "qdisc replace dev c0 parent 1:12 handle 12: pfifo limit $((900 + round % 50))" ;;
		3)
			leaf=$((leaf + 1))
			if [ $((leaf % 2)) = 0 ]; then
				printf 'qdisc replace dev c0 parent 1:13 handle %x: pfifo limit 1000\n' "$leaf"
			else
				printf 'qdisc replace dev c0 parent 1:13 handle %x: bfifo limit 1000000\n' "$leaf"
			fi
			;;
		4)
			new=$((cls + 1))
			printf 'class add dev c0 parent 1:1 classid 1:%x htb rate 1mbit ceil 200mbit quantum 1514\n' "$new"
			printf 'qdisc add dev c0 parent 1:%x handle %x: pfifo limit 1000\n' "$new" "$new"
			echo "filter del dev c0 parent 1: pref 50"
			printf 'filter add dev c0 parent 1: pref 50 protocol ip u32 match ip dport 2005 0xffff flowid 1:%x\n' "$new"
			printf 'class del dev c0 classid 1:%x\n' "$cls"
			cls=$new
			;;
		esac >"$WORK/round.batch"
		tc -batch "$WORK/round.batch" || {
			cat "$WORK/round.batch" >&2
			return 1
		}
		round=$((round + 1))
		next=$((next + 100000000))
		now=$(date +%s%N)
		[ "$next" -le "$now" ] || sleep "$(printf '0.%09d' $((next - now)))"
	done
	echo "$round" >"$WORK/rounds"
}

note "$CHURN_SECONDS s of replacements, traffic, and a scrape every 200 ms"
scrape "$WORK/scrape-0.prom" "$url"
churn "$CHURN_SECONDS" >"$WORK/churn.out" 2>"$WORK/churn.err" &
churn_pid=$!
BG_PIDS+=("$churn_pid")
udp_raw c0 --for "$CHURN_SECONDS" --rate 1000 2001:300 2002:400 2003:500 2004:600 2005:700 \
	>"$WORK/sent.json" &
sender_pid=$!
BG_PIDS+=("$sender_pid")
n=0
t=$(date +%s%N)
end=$((t + CHURN_SECONDS * 1000000000))
while [ "$t" -lt "$end" ]; do
	n=$((n + 1))
	scrape "$WORK/scrape-$n.prom" "$url"
	t=$((t + 200000000))
	now=$(date +%s%N)
	[ "$t" -le "$now" ] || sleep "$(printf '0.%09d' $((t - now)))"
done
wait "$churn_pid" || fail "the churn loop failed: $(tail -n 20 "$WORK/churn.err")"
wait "$sender_pid" || fail "the sender failed"
alive "$TCX_PID" tcx
n=$((n + 1))
scrape "$WORK/scrape-$n.prom" "$url"
note "$(cat "$WORK/rounds") rounds of replacements, $((n + 1)) scrapes, sent $(cat "$WORK/sent.json")"

note "every scrape: promtool, no series twice, no counter down"
for i in $(seq 0 "$n"); do
	if ! out=$(promtool check metrics <"$WORK/scrape-$i.prom" 2>&1) || [ -n "$out" ]; then
		echo "$out" >&2
		fail "scrape $i: promtool check metrics finds problems"
	fi
done
"$PYTHON" - "$WORK" "$n" <<'PY' || fail "the scrapes are not what they should be (above)"
import os, sys
sys.path.insert(0, os.path.join(os.environ["TCX_TESTLIB"], "..", "integration"))
from compare_tc import parse_labels, samples
work, n = sys.argv[1], int(sys.argv[2])
bad = []
def scrape(i):
    """{(family, device, kind, handle, parent[, tin]): value} of the qdisc and
    class counters; every series once."""
    seen, out = set(), {}
    with open("%s/scrape-%d.prom" % (work, i)) as f:
        text = f.read()
    for _n, m in samples(text, bad, "scrape %d: " % i):
        ident = (m.group(1), m.group(2))
        if ident in seen:
            bad.append("scrape %d: %s{%s} twice" % (i, m.group(1), m.group(2)))
        seen.add(ident)
        name = m.group(1)
        if name.startswith(("tc_qdisc_", "tc_class_")) and name.endswith("_total"):
            lab = parse_labels(m.group(2) or "", "scrape %d" % i)
            out[(name,) + tuple(sorted(lab.items()))] = float(m.group(3))
    return out
def labels(k):
    return dict(k[1:])
scrapes = [scrape(i) for i in range(n + 1)]
leaves, classes = set(), set()
for i, s in enumerate(scrapes):
    keys = [labels(k) for k in s if k[0] == "tc_qdisc_packets_total"]
    ckeys = [labels(k) for k in s if k[0] == "tc_class_packets_total"]
    if not any(l.get("device") == "c0" and l.get("kind") == "htb" and l.get("parent") == "root"
               for l in keys):
        bad.append("scrape %d: no tc_qdisc_packets_total of c0's HTB root" % i)
    for want in ("1:1", "1:10", "1:11", "1:12", "1:13", "1:40"):
        if not any(l.get("device") == "c0" and l.get("handle") == want for l in ckeys):
            bad.append("scrape %d: no tc_class_packets_total of class %s" % (i, want))
    leaves |= {l["handle"] for l in keys if l.get("parent") == "1:13"}
    classes |= {l["handle"] for l in ckeys if l.get("device") == "c0"
                and int(l["handle"].split(":")[1] or "0", 16) >= 0x100}
for i in range(1, n + 1):
    for k, v in scrapes[i - 1].items():
        if k in scrapes[i] and scrapes[i][k] < v:
            bad.append("scrape %d: %s%r went down from %g to %g" % (i, k[0], labels(k), v,
                                                                 scrapes[i][k]))
first = [v for k, v in scrapes[0].items() if k[0] == "tc_qdisc_packets_total"
         and labels(k).get("kind") == "htb"]
last = [v for k, v in scrapes[-1].items() if k[0] == "tc_qdisc_packets_total"
        and labels(k).get("kind") == "htb"]
if not first or not last or last[0] - first[0] < 1000:
    bad.append("c0's HTB counted %r packets first and %r last: the traffic did not go "
               "through" % (first, last))
if len(leaves) < 5 or len(classes) < 5:
    bad.append("the scrapes saw %d of 1:13's leaves (%s) and %d churned classes (%s): want "
               "5 or more of each" % (len(leaves), sorted(leaves), len(classes), sorted(classes)))
print("%d scrapes; %d leaves of 1:13 and %d churned classes seen; HTB packets %s -> %s" % (
    n + 1, len(leaves), len(classes), first, last))
print("\n".join(bad[:40]))
sys.exit(1 if bad else 0)
PY
stop_tcx "$TCX_PID" tcx 10
note "qdisc_churn: all checks passed in $(elapsed_ms) ms"
