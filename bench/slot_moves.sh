#!/usr/bin/env bash
# Slot moves on and off (--no-slot-moves) in one binary, served in turns over HTTP with
# bench/serve_bench.py: ROUNDS rounds, each starting the server with moves, running the clients,
# reading /metrics and stopping it, then the same without. Prints each run's output tok/s, the
# share of steps whose rows were gathered from scattered slots, and the moves; then the medians
# and the median of the per-round ratios. SERVE_ARGS go to both; PROMPTS (default 32) requests a run.
# usage: bench/slot_moves.sh EXSPEC OUT_DIR ROUNDS CLIENTS OUTPUT_LEN SERVE_ARGS...
# e.g.   bench/slot_moves.sh build/exspec slot-moves 3 8 64 --model models/m150 --draft models/m150-draft --dtype bfloat16
set -euo pipefail
cd "$(dirname "$0")/.."
exe=$1 out=$2 rounds=$3 clients=$4 len=$5
shift 5
py=/usr/bin/python3
. tests/start_server.sh
mkdir -p "$out"
metric() { curl -sf "127.0.0.1:$port/metrics" | sed -n "s/^$1 //p"; }
for round in $(seq "$rounds"); do
  for which in moves no-moves; do
    extra=()
    [ "$which" = no-moves ] && extra=(--no-slot-moves)
    start_server "$exe" "$out/serve-$which-$round.log" "$@" "${extra[@]}"
    $py bench/serve_bench.py --url "http://127.0.0.1:$port" --dataset prompts --num-prompts "${PROMPTS:-32}" \
      --output-len "$len" --max-concurrency "$clients" --label "$which r$round" --out "$out/$which-r$round.json" > /dev/null
    printf '{"steps": %s, "gathered": %s, "moves": %s}\n' "$(metric exspec_steps_total)" \
      "$(metric exspec_gathered_steps_total)" "$(metric exspec_slot_moves_total)" > "$out/$which-r$round.metrics.json"
    stop_server
  done
done
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def run(w, r):
    b = json.load(open(f"{out}/{w}-r{r}.json"))
    m = json.load(open(f"{out}/{w}-r{r}.metrics.json"))
    return b["output_throughput"], m["gathered"] / max(1, m["steps"]), m["moves"]
for w in ("moves", "no-moves"):
    rs = [run(w, r) for r in range(1, rounds + 1)]
    print(f"{w}: output tok/s " + ", ".join(f"{x[0]:.1f}" for x in rs) +
          f" (median {statistics.median(x[0] for x in rs):.1f}); gathered steps " +
          ", ".join(f"{100 * x[1]:.0f} %" for x in rs) + "; moves " + ", ".join(str(int(x[2])) for x in rs))
ratios = [run("moves", r)[0] / run("no-moves", r)[0] for r in range(1, rounds + 1)]
print(f"moves / no moves: median {statistics.median(ratios):.3f} (rounds {', '.join(f'{x:.3f}' for x in ratios)})")
PY
