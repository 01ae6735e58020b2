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
# With SHORTLISTS=1, each round then runs both engines again with the same lexical shortlist
# (CTranslate2's --use_vmap with the vmap.txt mtserve reads from the model directory). For the
# embedded model, one candidate set for every sentence: every target of its committed list
# (tests/data/shortlists/multi30k-en-de/vmap.txt) on the always-line, derived here (CTranslate2
# 4.8.1's --use_vmap aborts with std::out_of_range on the committed list itself, a state carried
# from one batch to the next: docs/benchmarks.md). For the random-weight base model, a list
# derived by make_shortlist from its own greedy int8 translations of TRAIN_TEXT (default the first
# 500 lines of ../shared/data/multi30k/train.en): a list of random weights, stated as such. The
# output says which lists it measured.
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

if [[ ${SHORTLISTS:-0} == 1 ]]; then
  train=${TRAIN_TEXT:-../shared/data/multi30k/train.en}
  head -n 500 "$train" >"$work/train500.en"
  # Its summary, and the candidates each benchmark sentence gets.
  "$bin/make_shortlist" --model="$base" --input="$work/train500.en" --beam_size=1 \
    --compute_type=int8 --output="$work/base-vmap.txt" --evaluate="$work/first200.en"
  # The embedded model's list as one candidate set: its rules' and always-line's targets, each
  # once, on one always-line.
  en_de_list=tests/data/shortlists/multi30k-en-de/vmap.txt
  awk -F'\t' '{ n = split($2, t, " ")
                for (i = 1; i <= n; i++) if (!(t[i] in seen)) { seen[t[i]] = 1; all = all " " t[i] }
              } END { print "\t" substr(all, 2) }' "$en_de_list" >"$work/en-de-vmap.txt"
  echo "shortlists: embedded model, one list for every sentence: the" \
    "$(wc -w <"$work/en-de-vmap.txt") targets of $en_de_list on its always-line (CTranslate2's" \
    "--use_vmap aborts on that list itself); OPUS-MT base shape, the list above, derived from" \
    "a random-weight model's translations"
  # Model directories with a vmap.txt beside the (symlinked) model files.
  with_list=(/usr/bin/python3 scripts/lib/model_with_list.py)
  "${with_list[@]}" models/multi30k-en-de "$work/en-de-vmap.txt" "$work/en-de-list"
  "${with_list[@]}" "$base" "$work/base-vmap.txt" "$work/base-list"
fi

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
  "mtserve $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u +%F)"
ct2() {  # MODEL SOURCE [run_bench.py flags]
  local model=$1 source=$2
  shift 2
  # Converted once into a directory of the run's own (kept for the rounds, and for the vmap.txt
  # the shortlist runs add).
  local ct2_model=$work/ct2-$(basename "$model")
  for isa in default AVX512; do
    echo "CTranslate2, kernels: $isa"
    isa_env=()
    [[ $isa == default ]] || isa_env=(CT2_FORCE_CPU_ISA="$isa")
    env "${isa_env[@]}" /usr/bin/python3 \
      "$ct2_dir/run_bench.py" --hf-model "$model" --src "$source" --compute-types float32,int8 \
      --beams 4,1 --runs 1 --threads 1 --inter-threads 2 --batch-size 32 \
      --ct2-model "$ct2_model" --out-dir "$work/ct2" "$@" | grep -E '^\|'
  done
}
for round in $(seq "${ROUNDS:-2}"); do
  echo "== round $round"
  ct2 models/multi30k-en-de "$input"
  ct2 "$base" "$work/first200.en" --fixed-len 64
  echo "mtserve (mttranslate --benchmark)"
  scripts/benchmark.sh float32 bfloat16 int8
  if [[ ${SHORTLISTS:-0} == 1 ]]; then
    echo "== round $round, with the same lexical shortlist"
    cp "$work/en-de-vmap.txt" "$work/ct2-multi30k-en-de/vmap.txt"
    cp "$work/base-vmap.txt" "$work/ct2-$(basename "$base")/vmap.txt"
    ct2 models/multi30k-en-de "$input" --extra=--use_vmap
    ct2 "$base" "$work/first200.en" --fixed-len 64 --extra=--use_vmap
    echo "mtserve (mttranslate --benchmark), shortlist"
    EMBEDDED_MODEL_DIR=$work/en-de-list BASE_MODEL_DIR=$work/base-list \
      scripts/benchmark.sh float32 bfloat16 int8
  fi
done
