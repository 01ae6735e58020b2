#!/usr/bin/env bash
# Fuzzes every parser of untrusted bytes for a bounded time (part of the test command): builds the
# libFuzzer targets of tests/fuzz/ with clang, ASan and UBSan into ${FUZZ_BUILD_DIR:-build-fuzz},
# then runs each for ${FUZZ_SECONDS:-15} seconds from its seed corpus and its regressions (replayed
# first: a crash once found fails at once). Any crash, leak, undefined behaviour, timeout or memory
# blow-up fails, leaving the input in build-fuzz/artifacts/NAME/. Without clang it says so and
# does nothing. Arguments name targets to run (default: all, one per tests/fuzz/corpus/ dir);
# extra libFuzzer flags go in FUZZ_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; the fuzz targets are not run (apt-get install clang)"
  exit 0
fi
build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMTSERVE_FUZZ=ON >/dev/null
cmake --build "$build_dir" -j"${JOBS:-2}"

targets=("$@")
if [[ ${#targets[@]} == 0 ]]; then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
for name in "${targets[@]}"; do
  # New inputs go to the build tree's corpus, never into the repository's.
  mkdir -p "$build_dir/corpus/$name" "$build_dir/artifacts/$name"
  dirs=("$build_dir/corpus/$name" "tests/fuzz/corpus/$name")
  [[ -d tests/fuzz/regressions/$name ]] && dirs+=("tests/fuzz/regressions/$name")
  # The words of the format, which random mutation takes long to spell.
  dict=()
  [[ -f tests/fuzz/dicts/$name.dict ]] && dict=(-dict="tests/fuzz/dicts/$name.dict")
  log="$build_dir/artifacts/$name/log"
  # -timeout: seconds one input may take; -rss_limit_mb: the process's memory (the parsers bound
  # what they allocate far below it); -max_len: inputs up to 16 KiB (a real safetensors header).
  if ! "$build_dir/fuzz/${name}_fuzzer" -max_total_time="${FUZZ_SECONDS:-15}" -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$build_dir/artifacts/$name/" \
    "${dict[@]}" ${FUZZ_FLAGS:-} "${dirs[@]}" >"$log" 2>&1; then
    tail -n 80 "$log"
    echo "fuzz: $name FAILED; the input is in $build_dir/artifacts/$name/ (reproduce:" \
      "$build_dir/fuzz/${name}_fuzzer FILE; then add it to tests/fuzz/regressions/$name/)"
    exit 1
  fi
  echo "fuzz: $name: $(grep -E '^Done [0-9]+ runs' "$log")"
done
