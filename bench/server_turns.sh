# Sourced by the serving benchmarks (serve_compare.sh, arrivals.sh, structured.sh, proposers.sh,
# multiturn.sh), after tests/start_server.sh. Two servers take turns and never share the cores:
# server_turns_of A "A_FLAGS" B "B_FLAGS" ROUNDS OUT RUN SERVE_ARGS... starts
# `build/exspec serve SERVE_ARGS A_FLAGS` (words) once per round, calls `RUN A ROUND` with $port
# set, stops it, then the same for B; the logs are OUT/serve-A-ROUND.log.
# server_turns ROUNDS OUT RUN SERVE_ARGS... is that for the default mode against --mode nonspec.
server_turns_of() {
  local names=("$1" "$3") flags=("$2" "$4") rounds=$5 out=$6 run=$7 round i
  shift 7
  for round in $(seq "$rounds"); do
    for i in 0 1; do
      # shellcheck disable=SC2086  # a turn's flags are words
      start_server build/exspec "$out/serve-${names[$i]}-$round.log" "$@" ${flags[$i]}
      "$run" "${names[$i]}" "$round"
      stop_server
    done
  done
}

server_turns() {
  server_turns_of default "" nonspec "--mode nonspec" "$@"
}
