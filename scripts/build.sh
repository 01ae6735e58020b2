#!/usr/bin/env bash
# Configures and builds mtserve into ${BUILD_DIR:-build} (Release, two jobs: the machines have two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j"${JOBS:-2}"
