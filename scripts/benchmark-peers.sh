#!/usr/bin/env bash
# mtserve's engine beside CTranslate2, side by side in one run on this machine, as docs/README
# report it: the rows of scripts/benchmark.sh (embedded model on test_2016_flickr, beam 4 and
# greedy; a random-weight OPUS-MT base-shape checkpoint forced to 64 tokens, first 200 lines),
# both engines 2 workers x 1 thread, batch 32, alternating engine by engine in ROUNDS rounds
# (default 2; quote the best of each). CTranslate2 at both of its CPU kernels (its AVX2 default
# and CT2_FORCE_CPU_ISA=AVX512: take the better), float32 and int8 (it has no bfloat16 on CPU).
# Needs CTranslate2's command-line translator and its benchmark script (run_bench.py) in CT2_DIR,
# and Debian's python3-numpy and python3-sentencepiece. Run after scripts/build.sh, alone on the
# machine: a second process on two cores changes every figure.
# Usage: scripts/benchmark-peers.sh CT2_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
ct2_dir=$(realpath "${1:?usage: scripts/benchmark-peers.sh CT2_DIR}")
bin=${BUILD_DIR:-build}/bin
input=tests/data/multi30k/test_2016_flickr.en
base=${BASE_MODEL_DIR:-/tmp/mtserve-opus-base-random}
[[ -f $base/model.safetensors ]] ||
  "$bin/make_random_checkpoint" --tokenizer_dir=tests/data/opus-mt/en-mg --out="$base" --seed=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n 200 "$input" >"$work/first200.en"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
  "mtserve $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u +%F)"
ct2() {  # MODEL SOURCE [run_bench.py flags]
  local model=$1 source=$2
  shift 2
  for isa in default AVX512; do
    echo "CTranslate2, kernels: $isa"
    isa_env=()
    [[ $isa == default ]] || isa_env=(CT2_FORCE_CPU_ISA="$isa")
    env "${isa_env[@]}" /usr/bin/python3 \
      "$ct2_dir/run_bench.py" --hf-model "$model" --src "$source" --compute-types float32,int8 \
      --beams 4,1 --runs 1 --threads 1 --inter-threads 2 --batch-size 32 \
      --out-dir "$work/ct2" "$@" | grep -E '^\|'
  done
}
for round in $(seq "${ROUNDS:-2}"); do
  echo "== round $round"
  ct2 models/multi30k-en-de "$input"
  ct2 "$base" "$work/first200.en" --fixed-len 64
  echo "mtserve (mttranslate --benchmark)"
  scripts/benchmark.sh float32 bfloat16 int8
done
