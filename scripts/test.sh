#!/usr/bin/env bash
# The test command, in two tiers (docs/testing.md, "Tiers"):
#
#   scripts/test.sh        the quick tier, to run often (at most 10 minutes on two cores from a
#                          warm build directory): installs what is missing (install-deps.sh),
#                          builds (build.sh), runs every test but the soak test (ctest -LE soak:
#                          unit and in-process, process-level, browser, client and deployment
#                          tests, fuzz replays), then fuzzes each parser for 5 s (fuzz.sh)
#   scripts/test.sh --all  what CI runs (.ci/run; under 60 minutes on an idle 2-core machine): the
#                          same with 15 s of fuzzing a parser, then the soak test (ctest -L soak),
#                          the sanitizer builds and their suites (test-sanitizers.sh: ASan, then
#                          TSan; MTSERVE_SANITIZERS=0 skips them) and the container check
#                          (deploy/container-check.sh; needs root and podman, which it installs;
#                          MTSERVE_SKIP_CONTAINER_CHECK=1 skips it)
#
# The first failure stops the run. At the end each phase's time is printed to stderr and written
# to BUILD_DIR/test-times.txt. BUILD_DIR (default build), JOBS (build jobs, default 2) and
# FUZZ_SECONDS (a target's fuzzing time) override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
all=0
for arg in "$@"; do
  case $arg in
    --all) all=1 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "test: unknown argument $arg" >&2; usage >&2; exit 2 ;;
  esac
done
build_dir=${BUILD_DIR:-build}
tier=$( ((all)) && echo "scripts/test.sh --all" || echo "scripts/test.sh")
warm=$([[ -f $build_dir/CMakeCache.txt ]] && echo warm || echo empty)
load=$(cut -d' ' -f1-3 /proc/loadavg)

# phase NAME COMMAND...: runs COMMAND and records its time; skip NAME WHY records a skipped phase.
rows=() phase_name='' phase_start=0
phase() {
  phase_name=$1 phase_start=$SECONDS
  shift
  "$@"
  rows+=("$(printf '%-22s %6d s' "$phase_name" $((SECONDS - phase_start)))")
  phase_name=''
}
skip() { rows+=("$(printf '%-22s %6s    skipped: %s' "$1" - "$2")"); }

# The table of phases, also when a phase failed.
report() {
  local status=$? cpu
  [[ -n $phase_name ]] &&
    rows+=("$(printf '%-22s %6d s  FAILED' "$phase_name" $((SECONDS - phase_start)))")
  cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
  mkdir -p "$build_dir"
  {
    echo "$tier: $(date -u '+%Y-%m-%d %H:%M UTC'), $cpu, $(nproc) cores," \
      "load at start $load, $build_dir $warm at start"
    printf '%s\n' "${rows[@]}"
    printf '%-22s %6d s  %s\n' total "$SECONDS" "$( ((status == 0)) && echo passed || echo FAILED)"
  } | tee "$build_dir/test-times.txt" >&2
}
trap report EXIT

phase install scripts/install-deps.sh
phase build scripts/build.sh
phase ctest ctest --test-dir "$build_dir" --output-on-failure -j2 -LE soak
phase fuzz env FUZZ_SECONDS="${FUZZ_SECONDS:-$( ((all)) && echo 15 || echo 5)}" scripts/fuzz.sh
((all)) || exit 0

phase soak ctest --test-dir "$build_dir" --output-on-failure -L soak
if [[ ${MTSERVE_SANITIZERS:-1} != 0 ]]; then
  phase "ASan build+tests" env SANITIZERS=address,undefined scripts/test-sanitizers.sh
  phase "TSan build+tests" env SANITIZERS=thread scripts/test-sanitizers.sh
else
  skip "ASan, TSan" MTSERVE_SANITIZERS=0
fi
if [[ ${MTSERVE_SKIP_CONTAINER_CHECK:-0} != 1 ]]; then
  phase "container check" deploy/container-check.sh
else
  skip "container check" MTSERVE_SKIP_CONTAINER_CHECK=1
fi
