# shellcheck shell=bash
# Shell helpers for scripts that run an mtserve of their own. Source it, then:
#   start_mtserve BINARY LOG [FLAGS...]
# starts BINARY on loopback ports the kernel chooses (FLAGS may override them) with its stderr in
# LOG and its --ready_file in LOG.ready.json, waits until that file says it serves, and sets
# server_pid, grpc_port, metrics_port and http_port (empty: that listener is off). On failure it
# prints the log and returns 1. Callers stop the server themselves (kill -TERM "$server_pid";
# wait "$server_pid").

# ready_field FILE NAME: the value of NAME in mtserve's ready file FILE (one JSON object on one
# line: {"state":"serving","grpc":N,"http":N,"metrics":N}); empty for null.
ready_field() {
  sed -n "s/.*\"$2\": *\"\{0,1\}\([a-z0-9]*\)\"\{0,1\}[,}].*/\1/p" "$1" | sed 's/^null$//'
}

start_mtserve() {
  local binary=$1 log=$2
  shift 2
  local ready=$log.ready.json
  : >"$log"  # Exists before the server writes to it.
  rm -f "$ready"
  "$binary" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --http_listen=127.0.0.1:0 \
    --ready_file="$ready" "$@" 2>"$log" &
  server_pid=$!
  local i state=
  for ((i = 0; i < 1200; i++)); do
    [[ -f $ready ]] && state=$(ready_field "$ready" state)
    [[ $state == serving ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$log" >&2
      echo "mtserve exited before serving" >&2
      return 1
    fi
    sleep 0.1
  done
  if [[ $state != serving ]]; then
    cat "$log" >&2
    echo "mtserve not serving after 120 s (its ready file: $(cat "$ready" 2>/dev/null))" >&2
    return 1
  fi
  # shellcheck disable=SC2034  # Read by the scripts that source this file.
  grpc_port=$(ready_field "$ready" grpc)
  # shellcheck disable=SC2034
  metrics_port=$(ready_field "$ready" metrics)
  # shellcheck disable=SC2034
  http_port=$(ready_field "$ready" http)
  [[ -n $grpc_port ]] || { echo "no gRPC port in mtserve's ready file" >&2; return 1; }
}
