#!/usr/bin/env bash
# Throughput, acceptance, grouping, alignment overhead and float32 exact-match rate of every mode
# on a model pair. Writes OUT/results.jsonl (one --stats object per run, plus exact_match) and
# prints a markdown table. The full harness is `exspec bench` (issue 8); this is its seed.
# usage: bench/modes.sh MODEL DRAFT PROMPTS.jsonl OUT [max_tokens] [K] [batch sizes...]
set -euo pipefail
model=$1 draft=$2 prompts=$3 out=$4
max_tokens=${5:-64}
k=${6:-3}
shift $(( $# < 6 ? $# : 6 ))
sizes=${*:-"1 2 4 8 16"}
exspec=${EXSPEC:-build/exspec}
mkdir -p "$out"
: > "$out/results.jsonl"
"$exspec" generate --model "$model" --oracle --batch 1 --max-tokens "$max_tokens" --prompts-file "$prompts" \
  > "$out/oracle.jsonl" 2> /dev/null

run() {  # name, flags...
  local name=$1
  shift
  "$exspec" generate --model "$model" --max-tokens "$max_tokens" --prompts-file "$prompts" \
    --stats "$out/$name.stats.json" "$@" > "$out/$name.jsonl" 2> /dev/null
  /usr/bin/python3 - "$out/oracle.jsonl" "$out/$name.jsonl" "$out/$name.stats.json" >> "$out/results.jsonl" <<'PY'
import json, sys
ref = [json.loads(l)["token_ids"] for l in open(sys.argv[1])]
got = [json.loads(l)["token_ids"] for l in open(sys.argv[2])]
exact = sum(a == b for a, b in zip(ref, got)) / len(ref)
def prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]: n += 1
    return n / max(len(a), 1)
partial = sum(prefix(a, b) for a, b in zip(ref, got)) / len(ref)
s = json.load(open(sys.argv[3]))
s.update(exact_match=exact, partial_match=partial)
print(json.dumps(s))
PY
}

run nonspec-b1 --mode nonspec --batch 1
run nonspec-b8 --mode nonspec --batch 8
for b in $sizes; do
  run "eqspec-b$b" --draft "$draft" --mode eqspec --batch "$b" --draft-tokens "$k"
  run "exspec-b$b" --draft "$draft" --mode exspec --batch "$b" --draft-tokens "$k"
done
/usr/bin/python3 - "$out/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = rows[0]["tokens_per_s"]
print("| mode | B | K | tokens/s | speedup vs nonspec B=1 | acceptance | tokens/verify | grouping | overhead share | ms/verify | exact match |")
print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for r in rows:
    print(f"| {r['mode']} | {r['batch_size']} | {r['draft_tokens']} | {r['tokens_per_s']:.1f} | {r['tokens_per_s']/base:.2f} | "
          f"{r['acceptance_rate']:.3f} | {r['tokens_per_verification']:.2f} | {r['grouping_rate']:.3f} | "
          f"{r['overhead_share']:.3f} | {r['ms_per_verify']:.1f} | {r['exact_match']:.3f} |")
PY
