#!/usr/bin/env bash
# Checks mtserve's Prometheus endpoint end to end:
#   1. `promtool check metrics` on a live scrape of /metrics (must pass without a warning);
#   2. `promtool check config` on a minimal prometheus.yml scraping mtserve every second;
#   3. a real Prometheus with that config: the mtserve target must come up and a query of
#      mtserve_model_info must return the served model.
# Starts its own mtserve on loopback ports chosen by the kernel, or uses a running one given by
# --server_metrics. Needs the Debian package prometheus (prometheus, promtool) and curl or python3.
#
# Usage: scripts/prometheus-check.sh [--mtserve=build/bin/mtserve] [--server_metrics=HOST:PORT]
#                                    [--timeout=SECONDS]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/mtserve.sh
source "$root/scripts/lib/mtserve.sh"
# shellcheck source=scripts/lib/prometheus.sh
source "$root/scripts/lib/prometheus.sh"
mtserve=$root/${BUILD_DIR:-build}/bin/mtserve
metrics=
timeout=30
for arg in "$@"; do
  case $arg in
    --mtserve=*) mtserve=${arg#*=} ;;
    --server_metrics=*) metrics=${arg#*=} ;;
    --timeout=*) timeout=${arg#*=} ;;
    *)
      echo "usage: $0 [--mtserve=PATH] [--server_metrics=HOST:PORT] [--timeout=SECONDS]" >&2
      exit 2
      ;;
  esac
done

init_scratch_and_cleanup

passed=()
pass() {
  passed+=("$1")
  echo "ok: $1"
}
fail() {
  echo "FAIL: $*" >&2
  for p in "${passed[@]}"; do echo "  passed before: $p" >&2; done
  echo "prometheus-check: FAIL" >&2
  exit 1
}

for tool in promtool prometheus; do
  command -v "$tool" >/dev/null || fail "$tool not found (Debian package prometheus; see scripts/install-deps.sh)"
done

# http_get URL [NAME=VALUE]: the body of a GET, the parameter URL-encoded; fails on HTTP errors.
http_get() {
  if command -v curl >/dev/null; then
    if (($# > 1)); then
      curl -fsS --max-time 5 -G --data-urlencode "$2" "$1"
    else
      curl -fsS --max-time 5 "$1"
    fi
  else
    /usr/bin/python3 - "$@" <<'EOF'
import sys, urllib.parse, urllib.request
url = sys.argv[1]
if len(sys.argv) > 2:
    name, _, value = sys.argv[2].partition("=")
    url += "?" + urllib.parse.urlencode({name: value})
sys.stdout.write(urllib.request.urlopen(url, timeout=5).read().decode())
EOF
  fi
}

# json_query EXPRESSION: evaluates a Python expression over the JSON document `d` read on stdin
# and prints it (empty when it raises).
json_query() {
  /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
try:
    print(eval(sys.argv[1]))
except (KeyError, IndexError, TypeError, StopIteration):
    pass' "$1"
}


# --- mtserve ---------------------------------------------------------------------------------
if [[ -z $metrics ]]; then
  [[ -x $mtserve ]] || fail "no mtserve binary at $mtserve (build it, or pass --mtserve=PATH)"
  start_mtserve "$mtserve" "$tmp/mtserve.log" || fail "mtserve did not start"
  port=$metrics_port
  metrics=127.0.0.1:$port
  pass "mtserve started, metrics on $metrics"
fi

# --- promtool check metrics on a live scrape ---------------------------------------------------
http_get "http://$metrics/metrics" >"$tmp/scrape.txt" || fail "cannot scrape http://$metrics/metrics"
grep -q '^mtserve_model_info{' "$tmp/scrape.txt" || { cat "$tmp/scrape.txt" >&2; fail "no mtserve_model_info in the scrape"; }
status=0
promtool check metrics <"$tmp/scrape.txt" >"$tmp/promtool.out" 2>&1 || status=$?
if [[ $status -ne 0 || -s $tmp/promtool.out ]]; then
  cat "$tmp/promtool.out" >&2
  fail "promtool check metrics (exit $status) on the scrape of http://$metrics/metrics"
fi
pass "promtool check metrics: $(grep -c '^# TYPE' "$tmp/scrape.txt") metric families, no warnings"

# --- prometheus.yml ----------------------------------------------------------------------------
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mtserve
    static_configs:
      - targets: ["$metrics"]
EOF
promtool check config "$tmp/prometheus.yml" >"$tmp/promtool.out" 2>&1 ||
  { cat "$tmp/promtool.out" >&2; fail "promtool check config"; }
pass "promtool check config"

# --- a real Prometheus -------------------------------------------------------------------------
start_prometheus "$tmp/prometheus.yml" "$tmp" || fail "prometheus did not start"
pass "prometheus started on $prometheus"

# The mtserve target up: Prometheus scraped it successfully.
health=
deadline=$((SECONDS + timeout))
while ((SECONDS < deadline)); do
  health=$(http_get "$prometheus/api/v1/targets" 2>/dev/null | json_query \
    'next(t["health"] + " " + t["lastError"] for t in d["data"]["activeTargets"] if t["labels"]["job"] == "mtserve")' ||
    true)
  [[ $health != "up "* ]] || break
  sleep 0.5
done
if [[ $health != "up "* ]]; then
  tail -n 20 "$tmp/prometheus.log" >&2
  if [[ -n $server_pid ]]; then
    kill -0 "$server_pid" 2>/dev/null || echo "prometheus-check: mtserve is no longer running" >&2
    cat "$tmp/mtserve.log" >&2
  fi
  fail "the mtserve target is not up after ${timeout} s (health, last error: '${health}')"
fi
up=$(http_get "$prometheus/api/v1/query" 'query=up{job="mtserve"}' | json_query 'd["data"]["result"][0]["value"][1]')
[[ $up == 1 ]] || fail "query up{job=\"mtserve\"} gave '$up', not 1"
pass "target up: up{job=\"mtserve\"} = 1"

# An mtserve metric is queryable, with its labels.
http_get "$prometheus/api/v1/query" 'query=mtserve_model_info{job="mtserve"}' >"$tmp/query.json" ||
  fail "query mtserve_model_info failed"
model=$(json_query 'd["data"]["result"][0]["metric"]["model"]' <"$tmp/query.json")
value=$(json_query 'd["data"]["result"][0]["value"][1]' <"$tmp/query.json")
[[ -n $model && $value == 1 ]] || { cat "$tmp/query.json" >&2; fail "query mtserve_model_info returned no model"; }
pass "query mtserve_model_info: model=\"$model\" = 1"

echo "prometheus-check: PASS (${#passed[@]} checks)"
