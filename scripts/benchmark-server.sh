#!/usr/bin/env bash
# Throughput and latency of mtserve under load, as the README reports them: mtclient bench at
# concurrency 1, 8, 32 and 64, one sentence per request, beam 4, on test_2016_flickr.en, against
# a server with the default layout (one single-threaded worker per core), next to
# mttranslate --benchmark with the same threads (the offline ceiling). Both compute in
# COMPUTE_TYPE (float32, bfloat16, int8 or auto; default float32). Run after scripts/build.sh;
# the server listens on loopback ports the kernel chooses.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/bin
input=tests/data/multi30k/test_2016_flickr.en
requests=${REQUESTS:-2000}
compute_type=${COMPUTE_TYPE:-float32}

# Its line ends with the compute type it used ("auto" resolved).
"$bin/mttranslate" --benchmark --beam_size=4 --compute_type="$compute_type" <"$input" 2>&1 \
  >/dev/null | grep benchmark

# shellcheck source=scripts/lib/mtserve.sh
source scripts/lib/mtserve.sh
log=$(mktemp)
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; rm -f "$log" "$log.ready.json"' EXIT
# No cache: the runs send the same lines again, and the cache would answer them undecoded.
start_mtserve "$bin/mtserve" "$log" --metrics_listen= --cache_bytes=0 \
  --compute_type="$compute_type"
port=$grpc_port
# "mtserve: model NAME (ARCHITECTURE; TYPE) loaded from DIR ...": the type it serves in.
sed -n 's/^mtserve: model .*; \([a-z0-9]*\)) loaded from .*/server compute type: \1/p' "$log"

printf '%-12s %10s %14s %8s %8s %8s\n' concurrency requests/s target_tok/s p50_ms p90_ms p99_ms
for concurrency in 1 8 32 64; do
  "$bin/mtclient" bench --server="127.0.0.1:$port" --input="$input" --beam_size=4 \
    --concurrency=$concurrency --requests="$requests" |
    awk -v c=$concurrency '/^requests_per_s:/ {r=$2} /^target_tokens_per_s:/ {t=$2}
      /^latency_p50_ms:/ {p50=$2} /^latency_p90_ms:/ {p90=$2} /^latency_p99_ms:/ {p99=$2}
      END {printf "%-12s %10s %14s %8s %8s %8s\n", c, r, t, p50, p90, p99}'
done
