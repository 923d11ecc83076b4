#!/bin/bash
# monitoring/: the Prometheus rules pass `promtool check rules` and their unit
# tests (`promtool test rules`: every alert firing and not firing, every
# recording rule); the Grafana dashboard has Grafana 9's schema, takes its
# datasource from a ${datasource} variable only (no hard-coded uid), and
# each of its queries is PromQL that promtool parses (tests/lib/monitoring.py
# lint); the queries of the action times panels pass their promtool unit
# tests (dashboard_queries.test.yml, with the variable idle at an hour).
# tests/daemon/monitoring.sh checks the names they use against a real scrape.
#
# Each check must be able to fail: a copy of the rules with every alert's
# `for` a minute shorter fails the unit tests of each alert, a copy of the
# dashboard with a hard-coded datasource uid or a query promtool cannot parse
# fails, and copies of the dashboard whose never-matched table takes the
# actions that matched, or whose idle table leaves out those that never
# matched, fail the query tests.
set -euo pipefail

# shellcheck source=tests/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"

: "${TCX_SRCDIR:?TCX_SRCDIR must point at the source tree}"
mon=$TCX_SRCDIR/monitoring
lib=$TCX_SRCDIR/tests/lib
require_cmd promtool
find_python
"$PYTHON" -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (apt-get install python3-yaml)"
make_workdir

# promtool_ok NAME CMD...: runs promtool CMD, output in $WORK/NAME.out; fails
# the test unless it succeeds.
promtool_ok() {
	local name=$1
	shift
	promtool "$@" >"$WORK/$name.out" 2>&1 || {
		cat "$WORK/$name.out" >&2
		fail "promtool $* failed"
	}
}

note "promtool check rules tcexporter.rules.yml"
promtool_ok check check rules "$mon/tcexporter.rules.yml"
note "promtool test rules tcexporter.rules.test.yml"
promtool_ok test test rules "$mon/tcexporter.rules.test.yml"

# Every alert of the rules has a test case that expects it firing and one
# that expects it not firing (an empty exp_alerts).
"$PYTHON" - "$mon/tcexporter.rules.yml" "$mon/tcexporter.rules.test.yml" <<'PY' || fail "alerts without a firing and a not-firing unit test (above)"
import sys
import yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
cases = [c for t in tests["tests"] for c in t.get("alert_rule_test", [])]
bad = 0
for a in alerts:
    mine = [c for c in cases if c["alertname"] == a]
    if not any(c.get("exp_alerts") for c in mine):
        print("alert %s: no test expects it firing" % a, file=sys.stderr)
        bad += 1
    if not any(not c.get("exp_alerts") for c in mine):
        print("alert %s: no test expects it not firing" % a, file=sys.stderr)
        bad += 1
if not alerts:
    print("no alert in %s" % sys.argv[1], file=sys.stderr)
    bad += 1
print("%d alerts, each tested firing and not firing" % len(alerts))
sys.exit(1 if bad else 0)
PY

note "the dashboard: schema, \${datasource}, queries promtool parses"
"$PYTHON" "$lib/monitoring.py" lint "$mon/tcexporter-dashboard.json" "$mon/tcexporter.rules.yml" \
	"$WORK/dashboard.rules.yml" || fail "the dashboard does not pass tests/lib/monitoring.py lint (above)"
promtool_ok dashboard check rules "$WORK/dashboard.rules.yml"

# query_tests DASHBOARD: the unit tests of DASHBOARD's queries, in
# $WORK/queries; their output in $WORK/queries.out.
query_tests() {
	rm -rf "$WORK/queries"
	mkdir "$WORK/queries"
	cp "$TCX_SRCDIR/tests/integration/dashboard_queries.test.yml" "$WORK/queries/"
	"$PYTHON" "$lib/monitoring.py" lint "$1" "$mon/tcexporter.rules.yml" \
		"$WORK/queries/dashboard.rules.yml" idle=3600 >/dev/null || fail "the lint of $1 failed"
	promtool test rules "$WORK/queries/dashboard_queries.test.yml" >"$WORK/queries.out" 2>&1
}
note "promtool test rules dashboard_queries.test.yml (the dashboard's queries, idle 1h)"
query_tests "$mon/tcexporter-dashboard.json" || {
	cat "$WORK/queries.out" >&2
	fail "the dashboard's queries fail their unit tests"
}

# ---- the checks can fail ----------------------------------------------------------------
note "a rule changed (every alert's 'for' a minute shorter) fails each alert's unit tests"
mkdir "$WORK/mutant"
sed 's/^\(        for: \)5m$/\14m/; s/^\(        for: \)10m$/\19m/' "$mon/tcexporter.rules.yml" \
	>"$WORK/mutant/tcexporter.rules.yml"
cp "$mon/tcexporter.rules.test.yml" "$WORK/mutant/"
cmp -s "$mon/tcexporter.rules.yml" "$WORK/mutant/tcexporter.rules.yml" &&
	fail "could not change 'for: 5m' in a copy of the rules"
! grep -E '^        for: ' "$mon/tcexporter.rules.yml" | grep -vE ' (5|10)m$' >&2 ||
	fail "an alert's 'for' (above) is neither 5m nor 10m: the mutant leaves it alone"
promtool test rules "$WORK/mutant/tcexporter.rules.test.yml" >"$WORK/mutant.out" 2>&1 &&
	fail "promtool test rules passed with every alert's 'for' a minute shorter: the unit tests are ineffective"
grep -q 'FAILED' "$WORK/mutant.out" || fail "promtool test rules failed without FAILED: $(cat "$WORK/mutant.out")"
for a in $(sed -n 's/^ *- alert: //p' "$mon/tcexporter.rules.yml"); do
	grep -q "alertname: $a," "$WORK/mutant.out" ||
		fail "the tests of $a pass with its 'for' a minute shorter"
done

note "a hard-coded datasource uid, and a query that is not PromQL, fail the lint"
# shellcheck disable=SC2016 # a literal ${datasource}
sed '0,/"uid": "${datasource}"/s//"uid": "P1809F7CD0C75ACF3"/' "$mon/tcexporter-dashboard.json" >"$WORK/uid.json"
cmp -s "$mon/tcexporter-dashboard.json" "$WORK/uid.json" && fail "could not hard-code a uid in a copy"
! "$PYTHON" "$lib/monitoring.py" lint "$WORK/uid.json" "$mon/tcexporter.rules.yml" "$WORK/uid.rules.yml" \
	2>"$WORK/uid.err" || fail "the lint accepted a hard-coded datasource uid"
grep -q 'P1809F7CD0C75ACF3' "$WORK/uid.err" || fail "the lint did not name the uid: $(cat "$WORK/uid.err")"
sed '0,/"expr": "topk(/s//"expr": "topk(((/' "$mon/tcexporter-dashboard.json" >"$WORK/syntax.json"
cmp -s "$mon/tcexporter-dashboard.json" "$WORK/syntax.json" && fail "could not break a query in a copy"
"$PYTHON" "$lib/monitoring.py" lint "$WORK/syntax.json" "$mon/tcexporter.rules.yml" \
	"$WORK/syntax.rules.yml" >/dev/null || fail "the lint failed on a query promtool should reject"
! promtool check rules "$WORK/syntax.rules.yml" >"$WORK/syntax.out" 2>&1 ||
	fail "promtool check rules accepted a dashboard query with unbalanced parentheses"

note "a never-matched table with the actions that matched, an idle table without those that never did: the query tests fail"
# mutant_query NAME PANEL SED: a copy of the dashboard changed by SED must
# fail the query tests of PANEL (dashboard_panel_PANEL_A).
mutant_query() {
	sed "$3" "$mon/tcexporter-dashboard.json" >"$WORK/$1.json"
	cmp -s "$mon/tcexporter-dashboard.json" "$WORK/$1.json" && fail "could not change a query in a copy ($1)"
	! query_tests "$WORK/$1.json" || fail "the query tests pass with the dashboard's $1 ($3)"
	grep -q "expr: \"dashboard_panel_$2_A\"" "$WORK/queries.out" ||
		fail "the query tests of $1 did not fail on panel $2: $(cat "$WORK/queries.out")"
}
mutant_query never 36 's/ unless tc_action_first_used_timestamp_seconds/ and tc_action_first_used_timestamp_seconds/'
# shellcheck disable=SC2016 # a literal $idle
mutant_query idle 37 '/"expr": "sort_desc(time() - tc_action_last_used_timestamp_seconds/s/ > \$idle)"/ > $idle and tc_action_first_used_timestamp_seconds)"/'

echo "rules: promtool check and test rules pass; the dashboard lints, its queries parse and pass their tests"
