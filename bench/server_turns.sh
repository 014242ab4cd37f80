# Sourced by the serving benchmarks (serve_compare.sh, arrivals.sh), after tests/start_server.sh:
# server_turns ROUNDS OUT RUN SERVE_ARGS... starts `build/exspec serve SERVE_ARGS` once per round
# for each mode (the default, then --mode nonspec), calls `RUN MODE ROUND` with $port set, and
# stops it: the two servers take turns and never share the cores.
server_turns() {
  local rounds=$1 out=$2 run=$3 round mode
  shift 3
  for round in $(seq "$rounds"); do
    for mode in default nonspec; do
      local extra=()
      [ "$mode" = nonspec ] && extra=(--mode nonspec)
      start_server build/exspec "$out/serve-$mode-$round.log" "$@" "${extra[@]}"
      "$run" "$mode" "$round"
      stop_server
    done
  done
}
