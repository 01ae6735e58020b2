#!/usr/bin/env bash
# Checks the Prometheus files under deploy/prometheus/ with promtool (Debian package prometheus):
#   1. `promtool check config prometheus.yml` (the compose stack's config, its rule file included);
#   2. `promtool check rules alerts.yml`;
#   3. `promtool test rules alerts_test.yml`: the unit tests of the alerts;
#   4. that those tests cover every alert both firing and staying silent, and that every alert
#      has a `for:`, a severity label and summary and description annotations.
#
# Usage: tests/deploy/promtool_check.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/deploy/prometheus

passed=0
pass() {
  passed=$((passed + 1))
  echo "ok: $1"
}
fail() {
  echo "FAIL: $*" >&2
  echo "promtool_check: FAIL" >&2
  exit 1
}

command -v promtool >/dev/null || fail "promtool not found (Debian package prometheus; see scripts/install-deps.sh)"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Run from the directory of the files: the paths inside them are relative to it.
run() {  # run DESCRIPTION COMMAND...: the command's output is shown only when it fails.
  local what=$1
  shift
  (cd "$dir" && "$@") >"$out" 2>&1 || { cat "$out" >&2; fail "$what"; }
  pass "$what"
}
run "promtool check config prometheus.yml" promtool check config prometheus.yml
run "promtool check rules alerts.yml" promtool check rules alerts.yml
run "promtool test rules alerts_test.yml" promtool test rules alerts_test.yml

/usr/bin/python3 - "$dir/alerts.yml" "$dir/alerts_test.yml" <<'EOF' || fail "alert rules or their tests are incomplete"
import sys, yaml
rules_file, tests_file = sys.argv[1:]
rules = [r for g in yaml.safe_load(open(rules_file))["groups"] for r in g["rules"]]
tests = yaml.safe_load(open(tests_file))
problems = []
alerts = [r["alert"] for r in rules if "alert" in r]
if not alerts:
    problems.append("no alert in alerts.yml")
for rule in rules:
    name = rule.get("alert")
    if name is None:
        continue
    if "for" not in rule:
        problems.append(f"{name}: no for:")
    if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
        problems.append(f"{name}: labels.severity is not critical, warning or info")
    for key in ("summary", "description"):
        if not rule.get("annotations", {}).get(key):
            problems.append(f"{name}: no annotations.{key}")
fires, silent = set(), set()
for test in tests["tests"]:
    for case in test.get("alert_rule_test", []):
        (fires if case.get("exp_alerts") else silent).add(case["alertname"])
for name in alerts:
    if name not in fires:
        problems.append(f"{name}: no test in alerts_test.yml where it fires")
    if name not in silent:
        problems.append(f"{name}: no test in alerts_test.yml where it stays silent")
for name in (fires | silent) - set(alerts):
    problems.append(f"alerts_test.yml tests {name}, which alerts.yml does not define")
for p in problems:
    print(f"  {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
pass "every alert has for, severity, summary, description, and tests firing and silent"

echo "promtool_check: PASS ($passed checks)"
