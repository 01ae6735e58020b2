#!/usr/bin/env bash
# The run command: installs what is missing, builds, and starts mtserve on the embedded model
# (gRPC on 127.0.0.1:50051, metrics on 127.0.0.1:9464). Arguments are passed to mtserve.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec "${BUILD_DIR:-build}/bin/mtserve" "$@"
