#!/usr/bin/env bash
# The sanitized test runs (scripts/test.sh calls this; README.md, "Sanitizer builds"):
#   build-asan  MTSERVE_SANITIZE=address,undefined: every test but the soak test
#   build-tsan  MTSERVE_SANITIZE=thread: the unit tests (built and run alone: target unit_tests,
#               ctest label `unit`), whose threads and locks TSan sees; the server's requests run
#               on gRPC's threads, which Debian did not build for it
# SANITIZERS="thread" (or "address,undefined") runs one. Each prints its build and test times.
set -euo pipefail
cd "$(dirname "$0")/.."

# run_sanitized BUILD_DIR SANITIZERS TARGET CTEST_ARGS...
run_sanitized() {
  local build_dir=$1 sanitize=$2 target=$3
  shift 3
  local start=$SECONDS
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMTSERVE_SANITIZE="$sanitize" >/dev/null
  cmake --build "$build_dir" -j"${JOBS:-2}" --target "$target"
  local built=$SECONDS
  ctest --test-dir "$build_dir" --output-on-failure -j2 "$@"
  echo "test-sanitizers: $sanitize: build $((built - start)) s, tests $((SECONDS - built)) s" >&2
}

for sanitize in ${SANITIZERS:-address,undefined thread}; do
  case $sanitize in
    address,undefined) run_sanitized build-asan "$sanitize" all -E '^soak_test$' ;;
    thread) run_sanitized build-tsan "$sanitize" unit_tests -L '^unit$' ;;
    *) echo "test-sanitizers: unknown SANITIZERS entry '$sanitize'" >&2; exit 2 ;;
  esac
done
