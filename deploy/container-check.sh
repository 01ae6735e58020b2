#!/usr/bin/env bash
# Builds mtserve's container image (the top-level Dockerfile) with podman on this machine and
# checks it end to end. No Docker engine and no registry are needed (see README.md, "Container"):
#
#   1. installs podman, buildah, runc, debootstrap... from Debian if missing (needs root);
#   2. makes the base images debian:bookworm and debian:bookworm-slim with debootstrap from the
#      mirror this machine's apt uses, cached as tarballs in ${MTSERVE_CACHE_DIR:-~/.cache/mtserve};
#   3. builds the image (podman build --format docker, timed);
#   4. runs it with --network host on free loopback ports and checks: health SERVING, English to
#      German translations (mtclient inside the container and, if built, build/bin/mtclient on the
#      host), language detection with the image's model, the HEALTHCHECK, /metrics, a model
#      mounted as a volume, a model repository (MTSERVE_MODEL_DIR) within a budget, that mtserve is PID 1 and not root, that the image has no compiler or
#      -dev package, that SIGTERM (podman stop) ends it promptly with exit code 0, and TLS with an
#      API key from mounted directories (gRPC, HTTPS, the HEALTHCHECK, certificate rotation);
#   5. prints a summary (PASS/FAIL per step, build time, image size) and removes what it created:
#      containers, images and the podman storage, which lives in a temporary directory.
#
# Usage: deploy/container-check.sh [--run-tests] [--refresh-base] [--save=FILE.tar] [--fresh-debian]
#   --run-tests     build with --build-arg RUN_TESTS=1 (the builder also runs ctest)
#   --refresh-base  remake the cached base images
#   --save=FILE     also save the image (docker-archive) to FILE before cleaning up
#   --fresh-debian  instead of steps 3-4: the README's test command (scripts/test.sh, the quick
#                   tier: no soak test, sanitizer builds or this check) in a container of plain
#                   debian:bookworm, on a copy of the working tree: the set-up contract on a
#                   fresh Debian 12, with Debian's Node and npm (this machine kind has its own),
#                   chromium and clang installed by install-deps.sh
# Exit status 0 only if every step passes.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
suite=bookworm
image=localhost/mtserve:check
run_tests=0
refresh_base=0
fresh_debian=0
save_file=

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
for arg in "$@"; do
  case $arg in
    --run-tests) run_tests=1 ;;
    --refresh-base) refresh_base=1 ;;
    --fresh-debian) fresh_debian=1 ;;
    --save=*) save_file=$(realpath -m "${arg#--save=}") ;;
    -h | --help) usage; exit 0 ;;
    *) echo "container-check: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done

# podman (rootful here) and debootstrap need root.
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "container-check: run as root" >&2; exit 1; }
  exec sudo --preserve-env=MTSERVE_CACHE_DIR,XDG_CACHE_HOME "$0" "$@"
fi

cache_dir=${MTSERVE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mtserve}
start_seconds=$SECONDS
# Empty directories podman and runc create in /run; removed at the end if they are new and empty.
run_dirs=()
for d in /run/runc /run/containers/networks /run/containers; do
  [[ -e $d ]] || run_dirs+=("$d")
done
started_at=$(date -u '+%Y-%m-%d %H:%M UTC')

# ------------------------------------------------------------------------------------------------
# Results and cleanup.

step_names=()
step_results=()
step_details=()
failures=0
build_time=
image_size=
base_size=

record() {  # record NAME PASS|FAIL|SKIP [DETAIL]
  step_names+=("$1")
  step_results+=("$2")
  step_details+=("${3:-}")
  [[ $2 != FAIL ]] || failures=$((failures + 1))
  printf '==> %-28s %s%s\n' "$1" "$2" "${3:+  ($3)}" >&2
}

# check NAME COMMAND...: runs the command, records PASS or FAIL; never stops the script.
# The command may set check_detail for the summary.
check_detail=
check() {
  local name=$1
  shift
  check_detail=
  if "$@"; then record "$name" PASS "$check_detail"; else record "$name" FAIL "$check_detail"; fi
}

summary() {
  local i total=$((SECONDS - start_seconds))
  echo
  echo "== mtserve container check, $started_at, $(hostname), $(nproc) cores"
  for i in "${!step_names[@]}"; do
    printf '  %-4s  %-28s %s\n' "${step_results[i]}" "${step_names[i]}" "${step_details[i]}"
  done
  [[ -z $build_time ]] || echo "  image build time: ${build_time} s"
  [[ -z $image_size ]] || echo "  image size: $image_size (base debian:bookworm-slim: $base_size)"
  echo "  total time: ${total} s"
  if ((failures == 0)); then echo "RESULT: PASS"; else echo "RESULT: FAIL ($failures failed)"; fi
}

work=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $work && -d $work ]]; then
    if [[ -n ${CONTAINERS_STORAGE_CONF:-} ]] && command -v podman >/dev/null; then
      podman rm --all --force --time 0 >/dev/null 2>&1
      podman rmi --all --force >/dev/null 2>&1
    fi
    # Anything still mounted under the work directory (overlay layers, a failed debootstrap).
    awk -v dir="$work" 'index($2, dir "/") == 1 { print $2 }' /proc/mounts | sort -r |
      while read -r mount_point; do umount -l "$mount_point"; done
    rm -rf --one-file-system "$work"
  fi
  for d in "${run_dirs[@]}"; do
    rmdir "$d" 2>/dev/null
  done
  summary >&2
  ((failures == 0 && rc == 0)) || { ((rc != 0)) || rc=1; }
  exit "$rc"
}
trap cleanup EXIT

# A signal stops the long command under way (run through in_background), then the EXIT trap
# cleans up. In the foreground, podman build would hold the signal until the build ends.
bg_pid=
on_signal() {
  trap - INT TERM
  if [[ -n $bg_pid ]]; then
    kill -TERM "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
  fi
  record interrupted FAIL "$1"
  exit 130
}
trap 'on_signal SIGINT' INT
trap 'on_signal SIGTERM' TERM

in_background() {  # in_background COMMAND...: runs COMMAND, which a signal to this script stops.
  local rc=0
  "$@" &
  bg_pid=$!
  wait "$bg_pid" || rc=$?
  bg_pid=
  return "$rc"
}

fatal() {  # fatal NAME DETAIL: records a failed step that the rest depends on and stops.
  record "$1" FAIL "$2"
  exit 1
}

# ------------------------------------------------------------------------------------------------
# 1. Packages.

packages=(podman buildah runc debootstrap iptables uidmap slirp4netns netavark aardvark-dns
  catatonit curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "container-check: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; then
    record packages PASS "installed ${missing[*]}"
  else
    fatal packages "apt-get install ${missing[*]} failed"
  fi
else
  record packages PASS "already installed"
fi

# ------------------------------------------------------------------------------------------------
# Podman configuration: storage, runtime and temporary state under one temporary directory.

work=$(mktemp -d /var/tmp/mtserve-container-check.XXXXXX)
cat >"$work/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$work/storage"
runroot = "$work/run"
EOF
# runc: crun rejects this machine kind's hybrid cgroup layout. No systemd: cgroupfs, file events.
cat >"$work/containers.conf" <<EOF
[containers]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$work/events.log"
tmp_dir = "$work/libpod"

[network]
network_backend = "netavark"
EOF
export CONTAINERS_STORAGE_CONF=$work/storage.conf CONTAINERS_CONF=$work/containers.conf
# buildah's run directories (TMPDIR) and runc's container state there too: an interrupted build
# would leave them in /var/tmp and /run. podman is a wrapper that passes runc its state directory
# and execs podman, so that the process in_background starts is podman itself.
mkdir -p "$work/tmp" "$work/runc" "$work/bin"
export TMPDIR=$work/tmp
printf '#!/bin/sh\nexec %q --runtime-flag %q "$@"\n' "$(command -v podman)" "root=$work/runc" \
  >"$work/bin/podman"
chmod +x "$work/bin/podman"
PATH=$work/bin:$PATH
# podman run cannot raise the limits here; its defaults are higher than root's.
run_limits=(--ulimit nofile=20000:20000 --ulimit nproc=32768:32768)

# podman without its complaints about systemd timers for health checks (no systemd here; the
# check runs the HEALTHCHECK itself). The exit status is podman's.
podman_quiet() {
  { podman "$@" 2>&1 1>&3 3>&- | { grep -v 'systemd connection' >&2 || true; }; } 3>&1
}

# ------------------------------------------------------------------------------------------------
# 2. Base images, made with debootstrap from this machine's own Debian mirror.

# The first URI of an enabled "deb" entry for $suite in apt's sources (deb822, then one-line).
find_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v suite="$suite" '
      function flush() {
        if (uri != "" && index(" " types " ", " deb ") && index(" " suites " ", " " suite " ") &&
            tolower(enabled) != "no") { print uri; found = 1; exit }
        uri = ""; suites = ""; types = ""; enabled = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      tolower($1) == "types:" { $1 = ""; types = $0 }
      tolower($1) == "enabled:" { enabled = $2 }
      END { if (!found) flush() }' "$f" | head -n 1 | grep . && return 0
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v suite="$suite" '$1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit }
      }' "$f" | head -n 1 | grep . && return 0
  done
  return 1
}

# Debian's official images carry these apt settings; the slim one also drops documentation.
write_image_config() {  # write_image_config ROOTFS
  local rootfs=$1
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  echo 'Acquire::GzipIndexes "true";' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' \
    >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
}

slimify() {  # slimify ROOTFS
  local rootfs=$1
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda}/*
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
}

# Writes $base_tar and $slim_tar. Runs in an "||" list, where set -e does not apply: every step
# that matters checks its status.
make_base_images() {
  local mirror rootfs f key
  mirror=$(find_mirror) || { echo "no '$suite' deb entry in /etc/apt/sources*" >&2; return 1; }
  [[ $mirror =~ ^(https?|file):// ]] || { echo "unsupported mirror $mirror" >&2; return 1; }
  echo "container-check: debootstrap $suite from $mirror" >&2
  rootfs=$work/rootfs
  in_background debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    return 1
  }
  # The machine's apt sources (and the keyrings they name), so that apt works in image builds.
  rm -f "$rootfs/etc/apt/sources.list"
  [[ ! -s /etc/apt/sources.list ]] || cp /etc/apt/sources.list "$rootfs/etc/apt/" || return 1
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    cp "$f" "$rootfs/etc/apt/sources.list.d/" || return 1
    sed -n 's/.*[Ss]igned-[Bb]y[:=][ ]*\([^] ]*\).*/\1/p' "$f" | while read -r key; do
      [[ -f $key && ! -e $rootfs$key ]] || continue
      mkdir -p "$(dirname "$rootfs$key")"
      cp "$key" "$rootfs$key"
    done
  done
  write_image_config "$rootfs" || return 1
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/{dpkg.log,bootstrap.log,alternatives.log}
  rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/hostname"  # podman provides them
  : >"$rootfs/etc/machine-id"
  mkdir -p "$cache_dir" &&
    tar --numeric-owner -C "$rootfs" -cf - . | gzip -1 >"$base_tar.tmp" &&
    slimify "$rootfs" &&
    tar --numeric-owner -C "$rootfs" -cf - . | gzip -1 >"$slim_tar.tmp" &&
    mv "$base_tar.tmp" "$base_tar" && mv "$slim_tar.tmp" "$slim_tar" || return 1
  rm -rf --one-file-system "$rootfs"
}

base_tar=$cache_dir/debian-$suite-minbase.tar.gz
slim_tar=$cache_dir/debian-$suite-slim.tar.gz
t0=$SECONDS
if ((refresh_base)) || [[ ! -s $base_tar || ! -s $slim_tar ]]; then
  make_base_images || fatal "base images" "making them failed (see above)"
  base_source="made in $((SECONDS - t0)) s"
else
  base_source="cached $(date -r "$base_tar" '+%Y-%m-%d')"
fi
for variant in "$suite:$base_tar" "$suite-slim:$slim_tar"; do
  podman import --quiet --change 'CMD ["bash"]' "${variant#*:}" "localhost/debian:${variant%%:*}" \
    >/dev/null || fatal "base images" "podman import of ${variant#*:} failed"
done
base_size=$(podman images --format '{{.Size}}' "localhost/debian:$suite-slim")
record "base images" PASS "$base_source in $cache_dir"

# The test command on a fresh Debian 12: the repository's files (tracked and new, not ignored),
# as a fresh clone has them, and nothing of this machine's but its apt sources (in the base
# image) and trusted CAs.
if ((fresh_debian)); then
  fresh_src=$work/fresh-src
  mkdir -p "$fresh_src"
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    tar -C "$repo" --null -T - -cf - | tar -C "$fresh_src" -xf -
  # And the CAs this machine trusts, as a new machine of its kind has them: the network's own
  # (an egress proxy's) signs what the npm registry presents here. Node reads NODE_EXTRA_CA_CERTS.
  trust=(-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/machine-ca-certificates.crt:ro
    -e NODE_EXTRA_CA_CERTS=/etc/ssl/machine-ca-certificates.crt)
  t0=$SECONDS
  if in_background podman run --rm --network host "${run_limits[@]}" -v "$fresh_src:/src" -w /src \
    "${trust[@]}" localhost/debian:$suite \
    scripts/test.sh > >(tee "$work/fresh-debian.log" >&2) 2>&1; then
    record "test command, fresh Debian" PASS "$((SECONDS - t0)) s"
  else
    record "test command, fresh Debian" FAIL "after $((SECONDS - t0)) s"
  fi
  exit 0
fi

# ------------------------------------------------------------------------------------------------
# 3. The image.

build_args=(--build-arg "RUN_TESTS=$run_tests")
# A machine whose TLS is intercepted by a CA of its own names the bundle in SSL_CERT_FILE or
# NODE_EXTRA_CA_CERTS: the builder's npm download needs it (the Dockerfile's ca_bundle secret).
for ca_bundle in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}"; do
  if [[ -n $ca_bundle && -s $ca_bundle ]]; then
    build_args+=(--secret "id=ca_bundle,src=$ca_bundle")
    break
  fi
done
echo "container-check: podman build ${build_args[*]} (compiles mtserve: several minutes)" >&2
t0=$SECONDS
if ! in_background podman build --format docker --network host --pull=never "${build_args[@]}" \
  -t "$image" -f "$repo/Dockerfile" "$repo" > >(tee "$work/build.log" >&2) 2>&1; then
  fatal "image build" "podman build failed after $((SECONDS - t0)) s"
fi
build_time=$((SECONDS - t0))
size_bytes=$(podman image inspect --format '{{.Size}}' "$image")
image_size="$(podman images --format '{{.Size}}' "$image") ($size_bytes bytes)"
if ((run_tests)); then
  record "image build" PASS "${build_time} s, tests run in the builder"
else
  record "image build" PASS "${build_time} s"
fi

image_config_ok() {
  local user env health ports
  user=$(podman image inspect --format '{{.Config.User}}' "$image")
  env=$(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image")
  health=$(podman image inspect --format '{{if .HealthCheck}}{{.HealthCheck.Test}}{{end}}' "$image")
  ports=$(podman image inspect --format '{{range $p, $v := .Config.ExposedPorts}}{{$p}} {{end}}' \
    "$image")
  check_detail="user $user, ports ${ports% }"
  [[ -n $user && $user != root && $user != 0 && ${user%%:*} != 0 ]] &&
    grep -qx 'MTSERVE_LISTEN=0.0.0.0:50051' <<<"$env" &&
    grep -qx 'MTSERVE_METRICS_LISTEN=0.0.0.0:9464' <<<"$env" &&
    grep -qx 'MTSERVE_HTTP_LISTEN=0.0.0.0:8080' <<<"$env" &&
    [[ $health == *mtclient* ]] &&
    [[ $ports == *50051/tcp* && $ports == *8080/tcp* && $ports == *9464/tcp* ]]
}
check "image config" image_config_ok

no_build_tools() {
  local found
  found=$(podman_quiet run --rm --network host "${run_limits[@]}" --entrypoint /bin/sh "$image" -c \
    "dpkg-query -W -f '\${Package}\n' | grep -E -- '-dev\$|^(gcc|g\+\+|cpp|cmake|make)(-[0-9]+)?\$' || true")
  check_detail=${found:+found: $(echo "$found" | tr '\n' ' ')}
  [[ -z $found ]]
}
check "no compiler, no -dev" no_build_tools

# ------------------------------------------------------------------------------------------------
# 4. The container: free loopback ports, set through the environment as in any deployment.

port_in_use() {
  if command -v ss >/dev/null; then
    ss -Htan "( sport = :$1 )" | grep -q .
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {  # free_port [PORT_TO_AVOID...]
  local port i
  for ((i = 0; i < 200; i++)); do
    port=$((20000 + RANDOM % 30000))
    [[ " $* " != *" $port "* ]] || continue
    port_in_use "$port" || { echo "$port"; return 0; }
  done
  return 1
}

container=mtserve-check-$$
grpc_port=$(free_port)
metrics_port=$(free_port "$grpc_port")
server=127.0.0.1:$grpc_port

# wait_serving CONTAINER SERVER [MTCLIENT_FLAG...]: polls mtclient health inside the container
# for up to 120 s.
wait_serving() {
  local i
  for ((i = 0; i < 240; i++)); do
    if [[ $(podman inspect --format '{{.State.Running}}' "$1" 2>/dev/null) != true ]]; then
      podman logs "$1" >&2
      check_detail="container exited"
      return 1
    fi
    if podman exec "$1" mtclient health --server="$2" --timeout=2 "${@:3}" >/dev/null 2>&1; then
      check_detail="after $((i / 2)) s"
      return 0
    fi
    sleep 0.5
  done
  podman logs "$1" >&2
  check_detail="not serving after 120 s"
  return 1
}

t0=$SECONDS
# Hardened as deploy/compose and deploy/k8s run it: read-only root, no capabilities.
if podman_quiet run -d --name "$container" --network host "${run_limits[@]}" \
  --read-only --cap-drop ALL --security-opt no-new-privileges \
  -e MTSERVE_LISTEN="$server" -e MTSERVE_METRICS_LISTEN="127.0.0.1:$metrics_port" \
  -e MTSERVE_HTTP_LISTEN=127.0.0.1:0 \
  "$image" >/dev/null; then
  record "container start" PASS "ports $grpc_port, $metrics_port; read-only, no capabilities"
else
  fatal "container start" "podman run failed"
fi
check "health SERVING" wait_serving "$container" "$server"

sources=("A man is riding a bike." "Two dogs are playing in the snow.")
translations_ok() {  # translations_ok OUTPUT
  local -a lines
  mapfile -t lines <<<"$1"
  check_detail="\"${sources[0]}\" -> \"${lines[0]:-}\""
  ((${#lines[@]} == ${#sources[@]})) && [[ -n ${lines[0]} && -n ${lines[1]} ]] &&
    [[ ${lines[0]} == *Mann* ]]  # Ein Mann fährt auf einem Fahrrad.
}
translate_in_container() {
  local out
  out=$(printf '%s\n' "${sources[@]}" |
    podman exec -i "$container" mtclient translate --server="$server" --timeout=30) || return 1
  translations_ok "$out"
}
check "translate (container)" translate_in_container

# The image's language model: a German and a French line detected as such (all languages).
detect_in_container() {
  local out
  out=$(printf '%s\n' "Zwei Hunde spielen im Schnee." "Un homme fait du vélo." |
    podman exec -i "$container" mtclient detect --server="$server" --all_languages \
      --timeout=30) || return 1
  check_detail=$(echo "$out" | tr '\n' ' ')
  [[ $(echo "$out" | awk '{print $1}' | tr '\n' ' ') == "de fr " ]]
}
check "detect (container)" detect_in_container

host_mtclient=$repo/${BUILD_DIR:-build}/bin/mtclient
translate_from_host() {
  local out
  out=$(printf '%s\n' "${sources[@]}" |
    "$host_mtclient" translate --server="$server" --timeout=30) || return 1
  translations_ok "$out"
}
if [[ -x $host_mtclient ]]; then
  check "translate (host mtclient)" translate_from_host
else
  record "translate (host mtclient)" SKIP "no $host_mtclient"
fi

health_ok() {
  podman exec "$container" mtclient health --server="$server" --timeout=5 >/dev/null &&
    podman exec "$container" mtclient health --server="$server" --timeout=5 \
      --service=mtserve.v1.Translator >/dev/null
}
check "mtclient health" health_ok

# The image's own HEALTHCHECK command, run once (podman schedules it with systemd timers, which
# this machine does not have).
healthcheck_ok() {
  local status
  podman healthcheck run "$container" >/dev/null || return 1
  status=$(podman inspect --format \
    '{{.State.Health.Status}}{{range .State.Health.Log}}, {{.Output}}{{end}}' "$container")
  check_detail=$status
  [[ $status == healthy* ]]
}
check "HEALTHCHECK" healthcheck_ok

metrics_ok() {
  local body
  body=$(curl -fsS --max-time 10 "http://127.0.0.1:$metrics_port/metrics") || return 1
  check_detail="$(grep -c '^mtserve_' <<<"$body") mtserve_ samples"
  grep -q '^mtserve_requests_total{.*code="OK"' <<<"$body" &&
    grep -q '^mtserve_model_info{' <<<"$body"
}
check "metrics" metrics_ok

non_root_pid1() {
  local pid uid comm
  pid=$(podman inspect --format '{{.State.Pid}}' "$container")
  uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
  comm=$(cat "/proc/$pid/comm")
  check_detail="PID 1 is $comm, uid $uid"
  [[ $comm == mtserve && -n $uid && $uid != 0 ]]
}
check "non-root PID 1" non_root_pid1

# SIGTERM: mtserve drains and exits 0 on its own, long before podman's kill (30 s here).
stop_ok() {
  local t0 t1 exit_code
  t0=$(date +%s%N)
  podman_quiet stop --time 30 "$container" >/dev/null || return 1
  t1=$(date +%s%N)
  exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$container")
  check_detail="exit code $exit_code, podman stop took $(((t1 - t0) / 1000000)) ms"
  [[ $exit_code == 0 ]] && ((t1 - t0 <= 10000000000)) &&
    podman logs "$container" 2>&1 | grep -q '^mtserve: .*draining' &&
    podman logs "$container" 2>&1 | grep -q '^mtserve: stopped'
}
check "SIGTERM stop" stop_ok
container_time=$((SECONDS - t0))

# A model from a volume: the embedded model's files, mounted read-only under another name.
volume_container=mtserve-check-volume-$$
volume_model() {
  local out models
  podman_quiet run -d --name "$volume_container" --network host "${run_limits[@]}" \
    -v "$repo/models/multi30k-en-de:/models/en-de:ro" -e MTSERVE_MODEL=en-de=/models/en-de \
    -e MTSERVE_LISTEN="$server" -e MTSERVE_METRICS_LISTEN="127.0.0.1:$metrics_port" \
    -e MTSERVE_HTTP_LISTEN=127.0.0.1:0 \
    "$image" >/dev/null || return 1
  wait_serving "$volume_container" "$server" || return 1
  models=$(podman exec "$volume_container" mtclient models --server="$server") || return 1
  out=$(printf '%s\n' "${sources[@]}" | podman exec -i "$volume_container" mtclient translate \
    --server="$server" --model=en-de --timeout=30) || return 1
  translations_ok "$out" || return 1
  check_detail="en-de from /models/en-de: \"${out%%$'\n'*}\""
  grep -q en-de <<<"$models" && podman_quiet stop --time 30 "$volume_container" >/dev/null
}
check "model from a volume" volume_model

# The model repository as compose and Kubernetes mount it: the repository's models/ read-only at
# /models, MTSERVE_MODEL_DIR=/models, a budget of one model (each 31.9 MiB in float32): a
# German line loads multi30k-de-en on demand, then an English line multi30k-en-de, unloading it.
repository_container=mtserve-check-repository-$$
model_repository() {
  local out metrics
  podman_quiet run -d --name "$repository_container" --network host "${run_limits[@]}" \
    -v "$repo/models:/models:ro" -e MTSERVE_MODEL_DIR=/models -e MTSERVE_MODEL_MEMORY=40MiB \
    -e MTSERVE_COMPUTE_TYPE=float32 \
    -e MTSERVE_LISTEN="$server" -e MTSERVE_METRICS_LISTEN="127.0.0.1:$metrics_port" \
    -e MTSERVE_HTTP_LISTEN=127.0.0.1:0 \
    "$image" >/dev/null || return 1
  wait_serving "$repository_container" "$server" || return 1
  out=$(echo "Ein Mann fährt Fahrrad." | podman exec -i "$repository_container" mtclient \
    translate --server="$server" --model=multi30k-de-en --timeout=30) || return 1
  printf '%s\n' "${sources[@]}" | podman exec -i "$repository_container" mtclient translate \
    --server="$server" --model=multi30k-en-de --timeout=30 >/dev/null || return 1
  metrics=$(curl -fsS --max-time 5 "http://127.0.0.1:$metrics_port/metrics") || return 1
  check_detail="multi30k-de-en on demand: \"$out\""
  grep -q '^mtserve_model_memory_budget_bytes 41943040$' <<<"$metrics" &&
    grep -q '^mtserve_model_unloads_total{model="multi30k-de-en"} 1$' <<<"$metrics" &&
    podman_quiet stop --time 30 "$repository_container" >/dev/null
}
check "model repository" model_repository

# TLS and an API key, set up as deploy/compose and deploy/k8s show: certificates and keys file in
# read-only mounted directories, the HEALTHCHECK given MTSERVE_HEALTHCHECK_FLAGS. Certificates
# made here with openssl (EC P-256, for 127.0.0.1 and localhost).
tls_dir=$work/tls keys_dir=$work/keys
make_certificate() {  # make_certificate NAME: NAME.crt and NAME.key in $tls_dir, signed by ca
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
    -keyout "$tls_dir/$1.key" -out "$tls_dir/$1.csr" 2>/dev/null &&
    openssl x509 -req -in "$tls_dir/$1.csr" -CA "$tls_dir/ca.crt" -CAkey "$tls_dir/ca.key" \
      -CAcreateserial -days 2 -out "$tls_dir/$1.crt" 2>/dev/null \
      -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n')
}
served_serial() {  # the serial number of the certificate the server presents on port $1
  openssl s_client -connect "127.0.0.1:$1" -CAfile "$tls_dir/ca.crt" </dev/null 2>/dev/null |
    openssl x509 -noout -serial 2>/dev/null
}
api_key=$(openssl rand -hex 32)
tls_container=mtserve-check-tls-$$
http_port=$(free_port "$grpc_port" "$metrics_port")
tls_flags=(--server="localhost:$grpc_port" --tls_ca=/tls/ca.crt)
tls_start() {
  mkdir -p "$tls_dir" "$keys_dir" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
      -subj /CN=mtserve-check-ca -keyout "$tls_dir/ca.key" -out "$tls_dir/ca.crt" 2>/dev/null &&
    make_certificate first && cp "$tls_dir/first.crt" "$tls_dir/tls.crt" &&
    cp "$tls_dir/first.key" "$tls_dir/tls.key" &&
    echo "check sha256:$(printf %s "$api_key" | sha256sum | cut -d' ' -f1)" >"$keys_dir/keys.txt" &&
    chmod 755 "$tls_dir" "$keys_dir" && chmod 644 "$tls_dir"/* "$keys_dir"/* || return 1
  podman_quiet run -d --name "$tls_container" --network host "${run_limits[@]}" \
    --read-only --cap-drop ALL --security-opt no-new-privileges \
    -v "$tls_dir:/tls:ro" -v "$keys_dir:/keys:ro" \
    -e MTSERVE_TLS_CERT=/tls/tls.crt -e MTSERVE_TLS_KEY=/tls/tls.key \
    -e MTSERVE_API_KEYS_FILE=/keys/keys.txt -e MTSERVE_RELOAD_INTERVAL=1s \
    -e MTSERVE_HEALTHCHECK_FLAGS="${tls_flags[*]}" \
    -e MTSERVE_LISTEN="$server" -e MTSERVE_METRICS_LISTEN="127.0.0.1:$metrics_port" \
    -e MTSERVE_HTTP_LISTEN="127.0.0.1:$http_port" "$image" >/dev/null &&
    wait_serving "$tls_container" "$server" "${tls_flags[@]}"
}
tls_ok() {
  local out code
  # gRPC: translated with the CA and the key; refused without the key, and in plain text.
  out=$(printf '%s\n' "${sources[@]}" | podman exec -i "$tls_container" mtclient translate \
    "${tls_flags[@]}" --api_key="$api_key" --timeout=30) && translations_ok "$out" || return 1
  ! podman exec "$tls_container" mtclient models "${tls_flags[@]}" >/dev/null 2>&1 || return 1
  ! podman exec "$tls_container" mtclient models --server="$server" --api_key="$api_key" \
    --timeout=5 >/dev/null 2>&1 || return 1
  # HTTPS: 200 with the key, 401 without; the HEALTHCHECK, with MTSERVE_HEALTHCHECK_FLAGS.
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 30 --cacert "$tls_dir/ca.crt" \
    -H "Authorization: Bearer $api_key" -d '{"texts": ["A dog."]}' \
    "https://localhost:$http_port/v1/translate") && [[ $code == 200 ]] || return 1
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 30 --cacert "$tls_dir/ca.crt" \
    -d '{"texts": ["A dog."]}' "https://localhost:$http_port/v1/translate") &&
    [[ $code == 401 ]] || return 1
  podman healthcheck run "$tls_container" >/dev/null &&
    [[ $(podman inspect --format '{{.State.Health.Status}}' "$tls_container") == healthy ]] &&
    check_detail="gRPC and HTTPS with the key; refused without it and in plain text; healthy"
}
# Rotation as Kubernetes does it: new files renamed into the mounted directory, no restart.
tls_rotation_ok() {
  local first second i
  first=$(served_serial "$grpc_port")
  make_certificate second && second=$(openssl x509 -noout -serial -in "$tls_dir/second.crt") &&
    [[ -n $first && $first != "$second" ]] || return 1
  cp "$tls_dir/second.key" "$tls_dir/tls.key.new" && cp "$tls_dir/second.crt" "$tls_dir/tls.crt.new" &&
    chmod 644 "$tls_dir"/*.new && mv "$tls_dir/tls.key.new" "$tls_dir/tls.key" &&
    mv "$tls_dir/tls.crt.new" "$tls_dir/tls.crt" || return 1
  for ((i = 0; i < 60; i++)); do
    if [[ $(served_serial "$grpc_port") == "$second" && $(served_serial "$http_port") == "$second" ]]
    then
      check_detail="gRPC and HTTPS present the new certificate after $((i / 2)) s"
      podman_quiet stop --time 30 "$tls_container" >/dev/null
      return 0
    fi
    sleep 0.5
  done
  check_detail="still $(served_serial "$grpc_port") after 30 s"
  return 1
}
if tls_start; then
  record "TLS container start" PASS "certificates and keys file mounted read-only"
  check "TLS and API key" tls_ok
  check "TLS rotation" tls_rotation_ok
else
  record "TLS container start" FAIL "$check_detail"
fi

if [[ -n $save_file ]]; then
  if podman save --format docker-archive -o "$save_file" "$image"; then
    record "save" PASS "$save_file"
  else
    record "save" FAIL "$save_file"
  fi
fi
echo "container-check: container checks took ${container_time} s" >&2
((failures == 0))
