#!/usr/bin/env bash
# Speed and memory of the offline engine, as the README reports them: mttranslate --benchmark on
# test_2016_flickr.en (1,000 sentences) with the embedded model, and with a random-weight
# checkpoint of OPUS-MT transformer-base shape (en-mg tokenizer and config) forced to 64 tokens a
# sentence. Same settings as the CTranslate2 figures the README compares with: batch 32, two
# compute threads. Run after scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/bin
input=tests/data/multi30k/test_2016_flickr.en
base=${BASE_MODEL_DIR:-/tmp/mtserve-opus-base-random}
[[ -f $base/model.safetensors ]] ||
  "$bin/make_random_checkpoint" --tokenizer_dir=tests/data/opus-mt/en-mg --out="$base" --seed=1

for beam in 4 1; do
  "$bin/mttranslate" --benchmark --beam_size=$beam --batch_size=32 --threads=2 \
    <"$input" 2>&1 >/dev/null | grep benchmark
done
for beam in 4 1; do
  "$bin/mttranslate" --benchmark --model="$base" --beam_size=$beam --batch_size=32 --threads=2 \
    --min_length=64 --max_length=64 <"$input" 2>&1 >/dev/null | grep benchmark
done
