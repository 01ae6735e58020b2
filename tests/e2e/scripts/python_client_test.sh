#!/usr/bin/env bash
# Tests the Python client example (client/python/translate.py) against a real mtserve: its output
# must equal mttranslate's for the same lines and options (greedy, beam search with n-best and
# scores, several batches, streaming), and errors must exit 1 with the gRPC code on stderr. Also
# checks server reflection and, after the traffic, the metrics (scripts/prometheus-check.sh).
#
# Usage: tests/e2e/scripts/python_client_test.sh [--bin_dir=build/bin] [--stubs_dir=DIR]
# Without --stubs_dir the stubs are generated into a temporary directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
bin_dir=$root/build/bin
stubs_dir=
for arg in "$@"; do
  case $arg in
    --bin_dir=*) bin_dir=${arg#*=} ;;
    --stubs_dir=*) stubs_dir=${arg#*=} ;;
    *) echo "usage: $0 [--bin_dir=DIR] [--stubs_dir=DIR]" >&2; exit 2 ;;
  esac
done
python=/usr/bin/python3  # Debian's, with python3-grpcio and python3-protobuf.
# shellcheck source=scripts/lib/mtserve.sh
source "$root/scripts/lib/mtserve.sh"
client=$root/client/python/translate.py

tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if [[ -z $stubs_dir ]]; then
  stubs_dir=$tmp/python
  "$root/client/python/generate_stubs.sh" "$stubs_dir" >/dev/null
fi

# Ten test sentences with an empty line among them (an empty line gives an empty line).
input=$tmp/input.txt
{
  head -n 5 "$root/tests/data/multi30k/test_2016_flickr.en"
  echo
  sed -n 6,10p "$root/tests/data/multi30k/test_2016_flickr.en"
} >"$input"

start_mtserve "$bin_dir/mtserve" "$tmp/server.log" || fail "mtserve did not start"
port=$grpc_port
server=127.0.0.1:$port

# check NAME MTTRANSLATE_OPTIONS -- CLIENT_OPTIONS: both outputs must be identical.
check() {
  local name=$1 expected=$tmp/$1.expected actual=$tmp/$1.actual
  shift
  local mt_options=()
  while [[ $1 != -- ]]; do mt_options+=("$1"); shift; done
  shift
  "$bin_dir/mttranslate" "${mt_options[@]}" <"$input" >"$expected"
  "$python" "$client" --server="$server" --stubs_dir="$stubs_dir" "${mt_options[@]}" "$@" \
    <"$input" >"$actual" || fail "$name: the client failed"
  [[ -s $expected ]] || fail "$name: mttranslate wrote nothing"
  if ! cmp -s "$expected" "$actual"; then
    # Texts must be identical; scores only close: the server batches texts differently from
    # mttranslate, which may change a float's last bits.
    if [[ " ${mt_options[*]} " != *" --with_scores "* ]] || ! scores_close "$expected" "$actual"; then
      diff -u "$expected" "$actual" >&2
      fail "$name: the client's output differs from mttranslate's"
    fi
  fi
  echo "ok: $name ($(wc -l <"$actual") lines)"
}

# scores_close EXPECTED ACTUAL: the same "SCORE<TAB>TEXT" lines, scores within 1e-4.
scores_close() {
  "$python" - "$1" "$2" <<'EOF_PY'
import sys
expected, actual = (open(f, encoding="utf-8").read().split("\n") for f in sys.argv[1:3])
def close(e, a):
    try:
        (es, et), (as_, at) = e.split("\t", 1), a.split("\t", 1)
        return et == at and abs(float(es) - float(as_)) <= 1e-4
    except ValueError:
        return False
sys.exit(len(expected) != len(actual) or not all(e == a or close(e, a) for e, a in zip(expected, actual)))
EOF_PY
}

check greedy --beam_size=1 --
check greedy_batches_of_3 --beam_size=1 -- --batch_size=3
check beam4 --beam_size=4 --
check beam4_nbest_scores --beam_size=4 --num_hypotheses=2 --with_scores --
check stream_greedy --beam_size=1 -- --stream
check stream_beam4 --beam_size=4 -- --stream
check stream_beam4_nbest_scores --beam_size=4 --num_hypotheses=3 --with_scores -- --stream

# expect_error NAME CODE CLIENT_OPTIONS: the client must exit 1 with "error: CODE: " on stderr.
expect_error() {
  local name=$1 code=$2 status=0
  shift 2
  "$python" "$client" --server="$server" --stubs_dir="$stubs_dir" "$@" \
    <"$input" >"$tmp/$name.out" 2>"$tmp/$name.err" || status=$?
  [[ $status -eq 1 ]] || { cat "$tmp/$name.err" >&2; fail "$name: exit status $status, not 1"; }
  grep -q "^error: $code: " "$tmp/$name.err" ||
    { cat "$tmp/$name.err" >&2; fail "$name: no 'error: $code: ' on stderr"; }
  # Nothing translated: no output at all, or (a stream's texts fail one by one) empty lines.
  ! grep -q . "$tmp/$name.out" || fail "$name: wrote translations despite the error"
  echo "ok: $name ($(head -n 1 "$tmp/$name.err"))"
}

expect_error unknown_model NOT_FOUND --model=nope
expect_error stream_unknown_model NOT_FOUND --model=nope --stream
expect_error beam_too_large INVALID_ARGUMENT --beam_size=1000
expect_error no_server UNAVAILABLE --server=127.0.0.1:1 --timeout=5

# Server reflection, as generic tools (grpcurl, Postman, ...) use it: list the services, then
# fetch the file that defines ours. Raw bytes: ServerReflectionRequest{list_services: ""} is
# field 7 and {file_containing_symbol: S} field 4 of grpc.reflection.v1alpha, whose Python stubs
# Debian does not package.
"$python" - "$server" <<'EOF_PY' || fail "server reflection"
import sys
import grpc
channel = grpc.insecure_channel(sys.argv[1])
call = channel.stream_stream("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
symbol = b"mtserve.v1.Translator"
answers = list(call(iter([b"\x3a\x00", b"\x22" + bytes([len(symbol)]) + symbol]), timeout=10))
assert b"mtserve.v1.Translator" in answers[0] and b"grpc.health.v1.Health" in answers[0], answers[0]
assert b"mtserve/v1/translation.proto" in answers[1] and b"TranslateRequest" in answers[1]
EOF_PY
echo "ok: reflection lists mtserve.v1.Translator and serves its .proto"

# The metrics after this traffic (labelled counters and histograms, error codes) pass promtool
# and a real Prometheus.
"$root/scripts/prometheus-check.sh" --server_metrics="127.0.0.1:$metrics_port" >"$tmp/prometheus-check.log" 2>&1 ||
  { cat "$tmp/prometheus-check.log" >&2; fail "prometheus-check.sh after the traffic"; }
echo "ok: $(tail -n 1 "$tmp/prometheus-check.log") after the traffic"

# SIGTERM stops the server cleanly.
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
[[ $status -eq 0 ]] || { cat "$tmp/server.log" >&2; fail "mtserve exited $status on SIGTERM"; }
echo "PASS: python client example"
