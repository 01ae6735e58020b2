# shellcheck shell=bash
# Shell helpers for scripts that run an mtserve of their own. Source it, then:
#   start_mtserve BINARY LOG [FLAGS...]
# starts BINARY on loopback ports the kernel chooses (FLAGS may override them), waits until it
# serves, and sets server_pid, grpc_port, metrics_port and http_port. On failure it prints the log and
# returns 1. Callers stop the server themselves (kill -TERM "$server_pid"; wait "$server_pid").

start_mtserve() {
  local binary=$1 log=$2
  shift 2
  : >"$log"  # Exists before the server writes to it.
  "$binary" --listen=127.0.0.1:0 --metrics_listen=127.0.0.1:0 --http_listen=127.0.0.1:0 "$@" \
    2>"$log" &
  server_pid=$!
  local i
  for ((i = 0; i < 1200; i++)); do
    grep -q '^mtserve: serving' "$log" && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$log" >&2
      echo "mtserve exited before serving" >&2
      return 1
    fi
    sleep 0.1
  done
  if ! grep -q '^mtserve: serving' "$log"; then
    cat "$log" >&2
    echo "mtserve not serving after 120 s" >&2
    return 1
  fi
  # "mtserve: listening on HOST:PORT (port N), metrics on HOST:PORT (port M)"
  # shellcheck disable=SC2034
  grpc_port=$(sed -n 's/^mtserve: listening on [^ ]* (port \([0-9]*\)).*/\1/p' "$log")
  # shellcheck disable=SC2034  # Read by the scripts that source this file.
  metrics_port=$(sed -n 's/^mtserve: listening on .*, metrics on [^ ]* (port \([0-9]*\))$/\1/p' "$log")
  # "mtserve: HTTP on HOST:PORT (port N)" (or "HTTP off")
  # shellcheck disable=SC2034
  http_port=$(sed -n 's/^mtserve: HTTP on [^ ]* (port \([0-9]*\))$/\1/p' "$log")
  [[ -n $grpc_port ]] || { echo "no ports in mtserve's log" >&2; return 1; }
}
