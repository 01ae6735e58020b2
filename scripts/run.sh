#!/usr/bin/env bash
# The run command: installs what is missing, builds, and translates stdin with the embedded model.
# (Until the gRPC server lands this starts the offline translator; arguments are passed through.)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec "${BUILD_DIR:-build}/bin/mttranslate" "$@"
