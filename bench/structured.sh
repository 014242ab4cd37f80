#!/usr/bin/env bash
# Structured output served (docs/structured-output.md, "Figures"): output tokens/s of requests
# under a strict JSON schema with long keys (bench/structured_schema.json) against the same
# requests unconstrained, at 1 and 8 clients, on the default mode (in place with the draft) and on
# --mode nonspec. Constrained requests end where their object does; unconstrained ones run
# OUTPUT_LEN tokens (ignore_eos). Each cell serves 16 requests (bench/prompts/mixed.jsonl); the
# servers take turns, ROUNDS rounds. Prints per cell the median tokens/s and the median of the
# per-round ratios constrained / unconstrained, with their range, and the grammar's metrics.
# usage: bench/structured.sh [TARGET [DRAFT [OUT_DIR [ROUNDS [OUTPUT_LEN]]]]]
#        (defaults: demo/target demo/draft structured 3 128)
set -euo pipefail
# Intentionally alike in every serving benchmark (duplicates pairs them): the positional arguments
# with this script's own defaults; what the scripts share runs in bench/server_turns.sh.
cd "$(dirname "$0")/.."
target=${1:-demo/target}
draft=${2:-demo/draft}
out=${3:-structured}
rounds=${4:-3}
len=${5:-128}
py=/usr/bin/python3
. tests/start_server.sh
. bench/server_turns.sh
mkdir -p "$out"
run() {  # MODE ROUND: unconstrained and schema requests at 1 and 8 clients, then the grammar metrics
  local mode=$1 r=$2 c kind fmt
  for c in 1 8; do
    for kind in free schema; do
      fmt=()
      [ "$kind" = schema ] && fmt=(--response-format bench/structured_schema.json)
      $py bench/serve_bench.py --url "http://127.0.0.1:$port" --dataset prompts --num-prompts 16 --max-concurrency "$c" \
        --output-len "$len" --label "$mode $kind c$c r$r" --out "$out/$mode-$kind-c$c-r$r.json" "${fmt[@]}" > /dev/null
    done
  done
  curl -s "127.0.0.1:$port/metrics" | grep -E '^exspec_grammar_(masks|mask_seconds|forced|drafts_cut)|proposer="grammar"' \
    > "$out/metrics-$mode-$r.txt"
}
# Greedy, as the figures were measured: not the demo's sampling defaults (generation_config.json).
server_turns "$rounds" "$out" run --model "$target" --draft "$draft" --dtype float32 --generation-config none
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda m, k, c: [json.load(open(f"{out}/{m}-{k}-c{c}-r{r}.json")) for r in range(1, rounds + 1)]
med = statistics.median
print("| mode | clients | unconstrained tok/s | schema tok/s | schema / unconstrained (range) | schema tokens per request |")
print("|---|--:|--:|--:|--:|--:|")
for m in ("default", "nonspec"):
    for c in (1, 8):
        f, s = load(m, "free", c), load(m, "schema", c)
        for x in f + s:
            assert x["failed"] == 0, x["errors"]
        tf, ts = [x["output_throughput"] for x in f], [x["output_throughput"] for x in s]
        ratio = [b / a for a, b in zip(tf, ts)]
        per = med([x["total_output_tokens"] / x["completed"] for x in s])
        print("| %s | %d | %.0f | %.0f | %.2f (%.2f-%.2f) | %.0f |" % (m, c, med(tf), med(ts), med(ratio), min(ratio), max(ratio), per))
PY
for mode in default nonspec; do echo "$mode (round $rounds):"; cat "$out/metrics-$mode-$rounds.txt"; done
