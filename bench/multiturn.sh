#!/usr/bin/env bash
# Multi-turn chat with and without the prefix cache (docs/speculation.md, "Prefix cache"): the
# same conversations (bench/multiturn.py: each turn resends the history) against a server with
# the cache and one with --no-prefix-cache, in turn, ROUNDS rounds. Prints the later turns' time
# to first token of each (median over rounds of the per-round medians), the per-round ratios
# without / with, and whether every answer was identical.
# usage: bench/multiturn.sh [MODEL [OUT_DIR [ROUNDS [DRAFT]]]]   (defaults: models/demo multiturn 3, no draft)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/demo}
out=${2:-multiturn}
rounds=${3:-3}
draft=${4:-}
py=/usr/bin/python3
. tests/start_server.sh
. bench/server_turns.sh
mkdir -p "$out"
run() {  # KIND ROUND
  $py bench/multiturn.py --url "http://127.0.0.1:$port" --conversations 4 --turns 4 --label "$1 r$2" \
    --out "$out/$1-r$2.json" > /dev/null
}
server_turns_of cache "" nocache "--no-prefix-cache" "$rounds" "$out" run --model "$model" --draft "$draft" --dtype float32 --batch 8
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda k: [json.load(open(f"{out}/{k}-r{r}.json")) for r in range(1, rounds + 1)]
c, n = load("cache"), load("nocache")
later = lambda runs: [x["ttft_later_turns_ms"]["median"] for x in runs]
first = lambda runs: [x["ttft_first_turn_ms"]["median"] for x in runs]
ratios = [b / a for a, b in zip(later(c), later(n))]
print("| | first turn TTFT ms (median) | later turns TTFT ms (median) |")
print("|---|--:|--:|")
print("| prefix cache | %.0f | %.0f |" % (statistics.median(first(c)), statistics.median(later(c))))
print("| --no-prefix-cache | %.0f | %.0f |" % (statistics.median(first(n)), statistics.median(later(n))))
print("later turns, without / with: %.2fx (per round %s); answers identical: %s" % (
    statistics.median(ratios), ", ".join("%.2f" % x for x in ratios),
    all(a["answers"] == b["answers"] for a, b in zip(c, n))))
PY
