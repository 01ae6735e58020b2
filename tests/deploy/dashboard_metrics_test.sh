#!/usr/bin/env bash
# Every metric the Grafana dashboard, the alert rules and the prometheus-adapter rule use is one
# mtserve exports, and their queries work on real data:
#   1. the PromQL extractor's self-test (tests/deploy/promql_refs.py);
#   2. a real mtserve on loopback ports serving a model repository with a budget of one model
#      (the embedded model with --model, the repository's German-English one and a checkpoint
#      with a corrupt tokenizer in a --model_dir), with traffic: translations by both models, so
#      that each load unloads the other, a request for the corrupt one (its load fails), and a
#      request for an unknown model (NOT_FOUND), so that load, unload and error series exist;
#   3. its /metrics scrape must hold every metric name referenced (histograms as _bucket, _sum,
#      _count) with every label the queries filter or group by;
#   4. a real Prometheus, configured from deploy/prometheus/prometheus.yml (job "mtserve", the
#      alert rules) but scraping every second: each dashboard query (Grafana variables filled in)
#      and the adapter's query must return data, and each alert rule must load and evaluate
#      without error.
# Needs the Debian package prometheus (prometheus, promtool), curl, /usr/bin/python3 with yaml.
#
# Usage: tests/deploy/dashboard_metrics_test.sh [--mtserve=build/bin/mtserve]
#                                               [--mtclient=build/bin/mtclient] [--timeout=SECONDS]
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/lib/mtserve.sh
source "$root/scripts/lib/mtserve.sh"
# shellcheck source=scripts/lib/prometheus.sh
source "$root/scripts/lib/prometheus.sh"
refs=$root/tests/deploy/promql_refs.py
mtserve=$root/${BUILD_DIR:-build}/bin/mtserve
mtclient=$root/${BUILD_DIR:-build}/bin/mtclient
timeout=60
for arg in "$@"; do
  case $arg in
    --mtserve=*) mtserve=${arg#*=} ;;
    --mtclient=*) mtclient=${arg#*=} ;;
    --timeout=*) timeout=${arg#*=} ;;
    *)
      echo "usage: $0 [--mtserve=PATH] [--mtclient=PATH] [--timeout=SECONDS]" >&2
      exit 2
      ;;
  esac
done

init_scratch_and_cleanup

passed=0
pass() {
  passed=$((passed + 1))
  echo "ok: $1"
}
fail() {
  echo "FAIL: $*" >&2
  echo "dashboard_metrics_test: FAIL" >&2
  exit 1
}

for tool in promtool prometheus curl; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps.sh installs it)"
done
[[ -x $mtserve ]] || fail "no mtserve binary at $mtserve (build it, or pass --mtserve=PATH)"
[[ -x $mtclient ]] || fail "no mtclient binary at $mtclient (build it, or pass --mtclient=PATH)"

/usr/bin/python3 "$refs" self-test || fail "promql_refs.py self-test"
pass "PromQL extractor self-test"

# --- mtserve with traffic ----------------------------------------------------------------------
# The repository: multi30k-de-en, and x-broken (multi30k-fr-en with source.spm overwritten:
# its size is estimated from config.json and model.safetensors, so only the load fails). In
# float32 each model holds 31.9 MiB (docs/operations.md, "A model's memory"): 40 MiB holds one.
mkdir -p "$tmp/models/x-broken"
ln -s "$root/models/multi30k-de-en" "$tmp/models/multi30k-de-en"
cp "$root"/models/multi30k-fr-en/{config.json,model.safetensors,vocab.json,target.spm} \
  "$tmp/models/x-broken/"
printf 'not a SentencePiece model' >"$tmp/models/x-broken/source.spm"
start_mtserve "$mtserve" "$tmp/mtserve.log" --workers=2 --compute_type=float32 \
  --model="multi30k-en-de=$root/models/multi30k-en-de" --model_dir="$tmp/models" \
  --model_memory=40MiB || fail "mtserve did not start"
server=127.0.0.1:$grpc_port
pass "mtserve started: gRPC $server, metrics 127.0.0.1:$metrics_port"

traffic() {
  echo "Ein Hund läuft im Schnee." |
    "$mtclient" translate --server="$server" --model=multi30k-de-en >/dev/null ||
    fail "mtclient translate --model=multi30k-de-en failed"
  if echo "Un chien." | "$mtclient" translate --server="$server" --model=x-broken >/dev/null 2>"$tmp/err.txt"; then
    fail "a request for model x-broken (a corrupt tokenizer) succeeded"
  fi
  grep -q source.spm "$tmp/err.txt" || { cat "$tmp/err.txt" >&2; fail "x-broken's error does not name source.spm"; }
  if echo "Hello." | "$mtclient" translate --server="$server" --model=nope >/dev/null 2>"$tmp/err.txt"; then
    fail "a request for model 'nope' succeeded"
  fi
  grep -q NOT_FOUND "$tmp/err.txt" || { cat "$tmp/err.txt" >&2; fail "model 'nope' did not give NOT_FOUND"; }
  # Last, so that a model is loaded when Prometheus scrapes: x-broken's load may have unloaded
  # the others to make room before it failed.
  printf '%s\n' "A man is riding a bike." "Two dogs play in the snow." "A girl reads a book." |
    "$mtclient" translate --server="$server" >"$tmp/translations.txt" ||
    fail "mtclient translate failed"
  [[ $(wc -l <"$tmp/translations.txt") -eq 3 ]] || fail "expected 3 translations"
}
traffic
pass "traffic: 3 texts translated by the default model and one by multi30k-de-en, x-broken's load failed, one NOT_FOUND"
grep -q "model multi30k-en-de unloaded (--model_memory)" "$tmp/mtserve.log" ||
  fail "loading multi30k-de-en within --model_memory=40MiB did not unload multi30k-en-de"

curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics" >"$tmp/scrape.txt" ||
  fail "cannot scrape /metrics"
/usr/bin/python3 "$refs" check-scrape "$tmp/scrape.txt" ||
  fail "the deployment files use metrics or labels that mtserve does not export"
pass "every referenced metric and label is in mtserve's scrape"

# --- a real Prometheus -------------------------------------------------------------------------
# deploy/prometheus/prometheus.yml with the mtserve job pointed at this server, the rules by
# absolute path, every interval 1 s, and no other job.
/usr/bin/python3 - "$root/deploy/prometheus/prometheus.yml" "$tmp/prometheus.yml" \
  "127.0.0.1:$metrics_port" <<'EOF'
import os, sys, yaml
source, target, address = sys.argv[1:]
config = yaml.safe_load(open(source))
config["global"].update(scrape_interval="1s", scrape_timeout="1s", evaluation_interval="1s")
here = os.path.dirname(source)
config["rule_files"] = [os.path.join(here, f) for f in config["rule_files"]]
jobs = [j for j in config["scrape_configs"] if j["job_name"] == "mtserve"]
assert len(jobs) == 1, "prometheus.yml has no job mtserve"
jobs[0]["static_configs"] = [{"targets": [address]}]
config["scrape_configs"] = jobs
yaml.safe_dump(config, open(target, "w"))
EOF
promtool check config "$tmp/prometheus.yml" >"$tmp/promtool.out" 2>&1 ||
  { cat "$tmp/promtool.out" >&2; fail "promtool check config on the test's prometheus.yml"; }

start_prometheus "$tmp/prometheus.yml" "$tmp" || fail "prometheus did not start"
pass "prometheus started on $prometheus with deploy/prometheus/alerts.yml"

# query_value PROMQL: the value of the first result of an instant query (empty if none).
query_value() {
  curl -fsS --max-time 5 -G --data-urlencode "query=$1" "$prometheus/api/v1/query" |
    /usr/bin/python3 -c '
import json, sys
result = json.load(sys.stdin)["data"]["result"]
print(result[0]["value"][1] if result else "")'
}

# Wait for a few scrapes (rate() needs two samples), then more traffic, and wait until Prometheus
# has scraped all of it.
deadline=$((SECONDS + timeout))
until [[ $(query_value 'count_over_time(up{job="mtserve"}[1m])' 2>/dev/null || true) -ge 3 ]]; do
  ((SECONDS < deadline)) || { tail -n 20 "$tmp/prometheus.log" >&2; fail "the mtserve target was not scraped 3 times in ${timeout} s"; }
  sleep 0.5
done
[[ $(query_value 'up{job="mtserve"}') == 1 ]] || fail "up{job=\"mtserve\"} is not 1"
traffic
total=$(curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics" |
  awk '/^mtserve_requests_total/ {sum += $NF} END {print sum}')
until [[ $(query_value 'sum(mtserve_requests_total{job="mtserve"})' 2>/dev/null || true) == "$total" ]]; do
  ((SECONDS < deadline)) || fail "Prometheus did not see all $total requests in ${timeout} s"
  sleep 0.5
done
pass "prometheus scraped the target (up = 1) and all $total requests"

/usr/bin/python3 "$refs" check-live "$prometheus" ||
  fail "dashboard or alert queries fail on a live Prometheus"
pass "dashboard, adapter and alert queries work on live data"

echo "dashboard_metrics_test: PASS ($passed checks)"
