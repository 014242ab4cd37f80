#!/usr/bin/env bash
# Serving without a draft when requests arrive one after another: N requests sent at once against
# N sent INTERVAL seconds apart (bench/serve_bench.py --interval), aggregate output tokens/s, for
# the default mode (in place, plain steps: later requests join the running batch) and for
# --mode nonspec (fixed batches: each arrival forms its own). The servers take turns, ROUNDS
# rounds; per mode the medians and the median of per-round ratios staggered / at once.
# usage: bench/arrivals.sh [MODEL [OUT_DIR [ROUNDS [N [INTERVAL [OUTPUT_LEN]]]]]]
#        (defaults: models/demo arrivals 3 8 0.3 64)
set -euo pipefail
# Intentionally alike in every serving benchmark (duplicates pairs them): the positional arguments
# with this script's own defaults; what the scripts share runs in bench/server_turns.sh.
cd "$(dirname "$0")/.."
model=${1:-models/demo}
out=${2:-arrivals}
rounds=${3:-3}
n=${4:-8}
interval=${5:-0.3}
len=${6:-64}
py=/usr/bin/python3
. tests/start_server.sh
. bench/server_turns.sh
mkdir -p "$out"
run() {  # MODE ROUND: the N requests at once, then INTERVAL apart, against the server on $port
  local arrival gap
  for arrival in once staggered; do
    gap=0
    [ "$arrival" = staggered ] && gap=$interval
    $py bench/serve_bench.py --url "http://127.0.0.1:$port" --dataset prompts --num-prompts "$n" \
      --output-len "$len" --interval "$gap" --label "$1 $arrival r$2" --out "$out/$1-$arrival-r$2.json" > /dev/null
  done
}
# The prefix cache off, as in serve_compare.sh: nonspec has none.
server_turns "$rounds" "$out" run --model "$model" --batch "$n" --no-prefix-cache
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda m, a: [json.load(open(f"{out}/{m}-{a}-r{r}.json")) for r in range(1, rounds + 1)]
med = lambda xs: round(statistics.median(xs), 2)
print("| mode | at once tok/s | staggered tok/s | staggered / at once (per-round median, range) | TTFT median ms (once / staggered) |")
print("|---|--:|--:|--:|--:|")
for m in ("default", "nonspec"):
    o, s = load(m, "once"), load(m, "staggered")
    r = [b["output_throughput"] / a["output_throughput"] for a, b in zip(o, s)]
    print(f"| {m} | {med([j['output_throughput'] for j in o])} | {med([j['output_throughput'] for j in s])} | "
          f"{med(r)} ({min(r):.2f}-{max(r):.2f}) | {med([j['ttft_ms']['median'] for j in o])} / {med([j['ttft_ms']['median'] for j in s])} |")
PY
