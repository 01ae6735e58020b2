#!/usr/bin/env bash
# The sanitized test runs (scripts/test.sh --all calls this; docs/testing.md, "Sanitizer builds"):
#   build-asan  MTSERVE_SANITIZE=address,undefined: the unit and in-process tests (ctest label
#               `unit`), the fuzz targets' replays (`fuzz`) and the few process-level suites
#               named in asan_e2e below, which drive the server's own request code: the core, the
#               gRPC, HTTP, LibreTranslate and DeepL front ends, draining, malformed requests and files
#   build-tsan  MTSERVE_SANITIZE=thread: the unit tests (built and run alone: target unit_tests,
#               label `unit`), whose threads and locks TSan sees; the server's requests run on
#               gRPC's threads, which Debian did not build for it
# SANITIZERS="thread" (or "address,undefined") runs one. Each prints its build and test times.
set -euo pipefail
cd "$(dirname "$0")/.."

# The process-level suites the ASan build runs (docs/testing.md, "Sanitizer builds", says why).
asan_e2e='^(server_test\..*|http_api_test|http_framing_test|libretranslate_test'
asan_e2e+='|deepl_api_test|broken_checkpoint_test)$'

# Tests that compare the heap or resident memory with what the code counted: the sanitizers'
# allocators keep freed memory in quarantine and add redzones, so they run in the plain build.
rss_tests='ResidentBytesMatchProcessGrowth|ProcessMemoryTest|TokenizerRuleMatchesItsHeap'
# Translation quality over whole test sets, which the plain build checks: nothing in them is
# reached only there (shortlist_decoding_test drives the same code), and under TSan they took a
# minute or two each.
quality_tests='ShortlistQualityTest'

# build BUILD_DIR SANITIZERS TARGET; run_tests BUILD_DIR CTEST_ARGS...
build() {
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTSERVE_SANITIZE="$2" >/dev/null
  cmake --build "$1" -j"${JOBS:-2}" --target "$3"
}
run_tests() { ctest --test-dir "$1" --output-on-failure --no-tests=error -j2 "${@:2}"; }

for sanitize in ${SANITIZERS:-address,undefined thread}; do
  start=$SECONDS
  case $sanitize in
    address,undefined)
      build build-asan "$sanitize" all
      built=$SECONDS
      run_tests build-asan -L '^(unit|fuzz)$' -E "$rss_tests|$quality_tests"
      run_tests build-asan -R "$asan_e2e"
      ;;
    thread)
      build build-tsan "$sanitize" unit_tests
      built=$SECONDS
      run_tests build-tsan -L '^unit$' -E "$rss_tests|$quality_tests"
      ;;
    *) echo "test-sanitizers: unknown SANITIZERS entry '$sanitize'" >&2; exit 2 ;;
  esac
  echo "test-sanitizers: $sanitize: build $((built - start)) s, tests $((SECONDS - built)) s" >&2
done
