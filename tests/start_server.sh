# Sourced by test scripts: start_server EXSPEC LOG ARGS... starts `exspec serve ARGS --port 0` in
# the background, sets $server (its pid) and $port once /health answers 200 (bounded: 60 s), and
# kills it when the script exits. Fails with the server's log otherwise. stop_server stops it at
# once (the benchmarks that start one server after another).
start_server() {
  local exspec=$1 log=$2
  shift 2
  : > "$log"  # exists before the loop reads it (the background shell opens it when it gets to run)
  "$exspec" serve "$@" --port 0 2> "$log" &
  server=$!
  trap 'kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true' EXIT
  port=
  for _ in $(seq 600); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log")
    [ -n "$port" ] && curl -sf "127.0.0.1:$port/health" > /dev/null && return 0
    kill -0 "$server" 2> /dev/null || { cat "$log"; return 1; }
    sleep 0.1
  done
  echo "the server did not get ready"
  cat "$log"
  return 1
}

stop_server() {
  kill "$server"
  wait "$server" 2> /dev/null || true
}
