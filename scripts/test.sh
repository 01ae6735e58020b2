#!/usr/bin/env bash
# The test command (what CI runs, .ci/run): installs what is missing, builds, runs every test,
# fuzzes every parser for a bounded time (scripts/fuzz.sh, with clang), runs the suites again in
# sanitizer builds (scripts/test-sanitizers.sh: AddressSanitizer with UBSan, ThreadSanitizer;
# about 25 minutes, README "Sanitizer builds"; MTSERVE_SANITIZERS=0 skips them), then builds the
# container image and checks it (deploy/container-check.sh, about 3 minutes; needs root and
# podman, which it installs: MTSERVE_SKIP_CONTAINER_CHECK=1 skips it on machines that cannot run
# containers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build_dir=${BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j2
scripts/fuzz.sh
# The suites again under AddressSanitizer + UBSan and ThreadSanitizer (build-asan, build-tsan).
if [[ ${MTSERVE_SANITIZERS:-1} != 0 ]]; then
  scripts/test-sanitizers.sh
fi
if [[ ${MTSERVE_SKIP_CONTAINER_CHECK:-0} != 1 ]]; then
  deploy/container-check.sh
fi
