#!/usr/bin/env bash
# Speed and memory of the offline engine, as the README reports them: mttranslate --benchmark on
# test_2016_flickr.en (1,000 sentences) with the embedded model, and with a random-weight
# checkpoint of OPUS-MT transformer-base shape (en-mg tokenizer and config) forced to 64 tokens a
# sentence (the first BASE_LINES lines, 200 unless set, as in the peers' figures). Same settings
# as the CTranslate2 figures the README compares with: batch 32, two compute threads.
# Arguments: the compute types to measure (default: float32 bfloat16 int8). EMBEDDED_MODEL_DIR
# and BASE_MODEL_DIR replace the two models (scripts/benchmark-peers.sh passes copies with a
# lexical shortlist). Run after scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/bin
input=tests/data/multi30k/test_2016_flickr.en
base=${BASE_MODEL_DIR:-/tmp/mtserve-opus-base-random}
[[ -f $base/model.safetensors ]] ||
  "$bin/make_random_checkpoint" --tokenizer_dir=tests/data/opus-mt/en-mg --out="$base" --seed=1

base_input=$(mktemp)
trap 'rm -f "$base_input"' EXIT
head -n "${BASE_LINES:-200}" "$input" >"$base_input"
types=("$@")
[[ $# -gt 0 ]] || types=(float32 bfloat16 int8)

for type in "${types[@]}"; do
  for beam in 4 1; do
    "$bin/mttranslate" --benchmark --compute_type="$type" --beam_size=$beam --batch_size=32 \
      --threads=2 ${EMBEDDED_MODEL_DIR:+--model="$EMBEDDED_MODEL_DIR"} <"$input" 2>&1 \
      >/dev/null | grep benchmark
  done
  for beam in 4 1; do
    "$bin/mttranslate" --benchmark --compute_type="$type" --model="$base" --beam_size=$beam \
      --batch_size=32 --threads=2 --min_length=64 --max_length=64 <"$base_input" 2>&1 \
      >/dev/null | grep benchmark
  done
done
