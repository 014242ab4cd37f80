#!/usr/bin/env bash
# The default mode against --mode nonspec over HTTP, with bench/serve_bench.py: the two servers
# take turns (one at a time, so they never share the cores), ROUNDS rounds, each server running
# every concurrency; then per concurrency the medians and the median of per-round ratios.
# usage: bench/serve_compare.sh [MODEL DRAFT [OUT_DIR [ROUNDS [CONCURRENCIES [SERVE_ARGS...]]]]]
#        (defaults: models/demo models/demo-draft serve-compare 3 "1 8"; SERVE_ARGS go to both
#        servers, e.g. --dtype bfloat16)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/demo}
draft=${2:-models/demo-draft}
out=${3:-serve-compare}
rounds=${4:-3}
concurrencies=${5:-1 8}
shift $(($# < 5 ? $# : 5))
py=/usr/bin/python3
. tests/start_server.sh
. bench/server_turns.sh
mkdir -p "$out"
run() {  # MODE ROUND: every concurrency against the server on $port
  local c
  for c in $concurrencies; do
    $py bench/serve_bench.py --url "http://127.0.0.1:$port" --dataset prompts --num-prompts 32 --output-len 64 \
      --max-concurrency "$c" --label "$1 c$c r$2" --out "$out/$1-c$c-r$2.json" > /dev/null
  done
}
# The prefix cache off: requests resend the prompts file's lines, which in place would find in
# the slots earlier ones left, and nonspec has no cache (bench/multiturn.sh measures it).
server_turns "$rounds" "$out" run --model "$model" --draft "$draft" --no-prefix-cache "$@"
$py - "$out" "$rounds" $concurrencies <<'PY'
import json, statistics, sys
out, rounds, concs = sys.argv[1], int(sys.argv[2]), [int(c) for c in sys.argv[3:]]
load = lambda m, c: [json.load(open(f"{out}/{m}-c{c}-r{r}.json")) for r in range(1, rounds + 1)]
med = lambda xs: round(statistics.median(xs), 2)
print("| clients | default tok/s | nonspec tok/s | default / nonspec (per-round median, range) | TTFT median ms | TPOT median ms | E2E p99 ms |")
print("|--:|--:|--:|--:|--:|--:|--:|")
for c in concs:
    d, n = load("default", c), load("nonspec", c)
    ratios = [a["output_throughput"] / b["output_throughput"] for a, b in zip(d, n)]
    pick = lambda js, k, s: med([j[k][s] for j in js])
    print(f"| {c} | {med([j['output_throughput'] for j in d])} | {med([j['output_throughput'] for j in n])} | "
          f"{med(ratios)} ({min(ratios):.2f}-{max(ratios):.2f}) | {pick(d, 'ttft_ms', 'median')} / {pick(n, 'ttft_ms', 'median')} | "
          f"{pick(d, 'tpot_ms', 'median')} / {pick(n, 'tpot_ms', 'median')} | {pick(d, 'e2el_ms', 'p99')} / {pick(n, 'e2el_ms', 'p99')} |")
PY
