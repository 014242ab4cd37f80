#!/usr/bin/env bash
# Speculation without a draft model (docs/speculation.md, "Proposers"): output tokens/s of
# --speculate ngram (prompt lookup) and of requests carrying a prediction (their expected answer,
# on a server without a proposer), against plain decoding (no draft, K = 0), at 1, 8 and 16
# clients, on the served model's own workloads (bench/make_repeat_prompts.py):
#   repeat   the answer goes on with text the prompt already holds
#   plain    a short prompt's answer
#   sampled  random prompts sampled at temperature 1: text that does not repeat (no prediction)
# Each server serves 16 requests of OUTPUT_LEN tokens per cell; the servers take turns, ROUNDS
# rounds. Prints per cell the median tokens/s and the median of the per-round ratios to plain
# decoding, with their range.
# usage: bench/proposers.sh [MODEL [OUT_DIR [ROUNDS [OUTPUT_LEN]]]]   (defaults: models/demo proposers 3 64)
set -euo pipefail
# Intentionally alike in every serving benchmark (duplicates pairs them): the positional arguments
# with this script's own defaults; what the scripts share runs in bench/server_turns.sh.
cd "$(dirname "$0")/.."
model=${1:-models/demo}
out=${2:-proposers}
rounds=${3:-3}
len=${4:-64}
py=/usr/bin/python3
. tests/start_server.sh
. bench/server_turns.sh
mkdir -p "$out"
serve=(--model "$model" --draft "" --dtype float32 --batch 16)
start_server build/exspec "$out/serve-workloads.log" "${serve[@]}"
$py bench/make_repeat_prompts.py --url "http://127.0.0.1:$port" --out "$out" --len "$len" | tee "$out/workloads.json"
stop_server
cell() {  # KIND WORKLOAD CLIENTS ROUND [serve_bench args]
  local kind=$1 wl=$2 c=$3 r=$4
  shift 4
  local data=(--dataset prompts --prompts "$out/$wl.jsonl")
  [ "$wl" = sampled ] && data=(--dataset random --input-len 32 --temperature 1.0 --seed "$r")
  $py bench/serve_bench.py --url "http://127.0.0.1:$port" "${data[@]}" --num-prompts 16 --max-concurrency "$c" \
    --output-len "$len" --label "$kind $wl c$c r$r" --out "$out/$kind-$wl-c$c-r$r.json" "$@" > /dev/null
}
run() {  # KIND ROUND: every workload at 1, 8 and 16 clients; plain steps also with predictions
  local kind=$1 r=$2 c wl
  for c in 1 8 16; do
    for wl in repeat plain sampled; do cell "$kind" "$wl" "$c" "$r"; done
    if [ "$kind" = plain ]; then
      for wl in repeat plain; do cell predict "$wl" "$c" "$r" --predict; done
    fi
  done
}
server_turns_of plain "" ngram "--speculate ngram" "$rounds" "$out" run "${serve[@]}"
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda k, w, c: [json.load(open(f"{out}/{k}-{w}-c{c}-r{r}.json")) for r in range(1, rounds + 1)]
med = lambda xs: statistics.median(xs)
print("| workload | clients | plain tok/s | ngram tok/s | ngram / plain (range) | prediction tok/s | prediction / plain (range) | prediction tokens accepted |")
print("|---|--:|--:|--:|--:|--:|--:|--:|")
for w in ("repeat", "plain", "sampled"):
    for c in (1, 8, 16):
        tp, tn = [x["output_throughput"] for x in load("plain", w, c)], [x["output_throughput"] for x in load("ngram", w, c)]
        rn = [b / a for a, b in zip(tp, tn)]
        row = [w, str(c), "%.0f" % med(tp), "%.0f" % med(tn), "%.2f (%.2f-%.2f)" % (med(rn), min(rn), max(rn))]
        if w != "sampled":
            q = load("predict", w, c)
            rq = [b["output_throughput"] / a for a, b in zip(tp, q)]
            acc = sum(x["accepted_prediction_tokens"] for x in q) / max(1, sum(x["accepted_prediction_tokens"] + x["rejected_prediction_tokens"] for x in q))
            row += ["%.0f" % med([x["output_throughput"] for x in q]), "%.2f (%.2f-%.2f)" % (med(rq), min(rq), max(rq)), "%.2f" % acc]
        else:
            row += ["-", "-", "-"]
        print("| " + " | ".join(row) + " |")
PY
