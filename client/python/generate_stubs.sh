#!/usr/bin/env bash
# Generates the Python gRPC stubs of mtserve.v1 into DIR (default: build/python, not committed),
# with Debian's protoc and grpc_python_plugin
# (apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf).
# Then: PYTHONPATH=DIR client/python/translate.py ... (or --stubs_dir=DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/python}
plugin=$(command -v grpc_python_plugin) ||
  { echo "grpc_python_plugin not found (Debian package protobuf-compiler-grpc)" >&2; exit 1; }
mkdir -p "$out"
protoc --python_out="$out" --grpc_out="$out" --plugin=protoc-gen-grpc="$plugin" \
  -I"$root/proto" "$root/proto/mtserve/v1/translation.proto"
echo "$out"
