# shellcheck shell=bash
# Shell helpers for scripts that run a real Prometheus of their own. Source it, then:
#   start_prometheus CONFIG DIR
# starts Debian's prometheus with CONFIG on a free loopback port, its data and log in DIR, waits
# until it is ready, and sets prometheus_pid and prometheus (its base URL). On failure it prints
# the log and returns 1. Callers stop it themselves (kill -TERM "$prometheus_pid"; wait ...), or
# call init_scratch_and_cleanup first.

# A free loopback port (another process may take it before the caller binds: callers retry).
free_port() {
  /usr/bin/python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

start_prometheus() {
  local config=$1 dir=$2 attempt i port
  for attempt in 1 2 3; do
    port=$(free_port)
    prometheus --config.file="$config" --storage.tsdb.path="$dir/data" \
      --web.listen-address="127.0.0.1:$port" >"$dir/prometheus.log" 2>&1 &
    prometheus_pid=$!
    for ((i = 0; i < 100; i++)); do
      curl -fsS --max-time 2 "http://127.0.0.1:$port/-/ready" >/dev/null 2>&1 && break
      kill -0 "$prometheus_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$prometheus_pid" 2>/dev/null; then
      # shellcheck disable=SC2034  # Read by the scripts that source this file.
      prometheus=http://127.0.0.1:$port
      return 0
    fi
    wait "$prometheus_pid" || true
    prometheus_pid=
    # The port was taken between free_port and the bind: try another one.
    grep -q 'address already in use' "$dir/prometheus.log" && ((attempt < 3)) && continue
    cat "$dir/prometheus.log" >&2
    echo "prometheus exited" >&2
    return 1
  done
}

# Makes a temporary directory, $tmp, and arranges that when the script exits (INT, TERM and HUP
# make it exit) the Prometheus and mtserve it started, if any ($prometheus_pid, $server_pid), get
# SIGTERM and are waited for, and $tmp is removed.
init_scratch_and_cleanup() {
  tmp=$(mktemp -d)
  server_pid=
  prometheus_pid=
  trap stop_and_clean_up EXIT
  trap 'exit 1' INT TERM HUP
}

stop_and_clean_up() {
  local pid
  for pid in "$prometheus_pid" "$server_pid"; do
    [[ -z $pid ]] && continue
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
