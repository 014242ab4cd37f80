#!/usr/bin/env bash
# What a verify step costs against a plain step (issue 62), for two exspec builds in turns:
# `exspec generate` with the draft at a fixed K (so both builds verify K + 1 rows every step) and
# without it (the plain step), on one prompt, ROUNDS rounds, the order of the builds flipped each
# round; and in the same turn each build's decoder_bench forwards of 1 and of K + 1 new tokens
# (repeated back to back: no draft between them).
# Prints one markdown row a run and checks that every run wrote the same tokens.
# Run under the CPU lock on a shared machine: flock /tmp/cpu.lock bench/verify_cost.sh ...
# usage: bench/verify_cost.sh BEFORE_DIR AFTER_DIR TARGET DRAFT PROMPTS_JSONL ROUNDS [K] [DTYPE]
#   BEFORE_DIR, AFTER_DIR: build folders holding exspec and decoder_bench
#   BEFORE_ARGS, AFTER_ARGS (environment): more options for each build's speculative run, e.g.
#   the same build twice with AFTER_ARGS="--draft-screen 16"
# e.g.   bench/verify_cost.sh /tmp/before build models/m150t models/m150t-draft /tmp/p1.jsonl 3
set -euo pipefail
before=$1 after=$2 target=$3 draft=$4 prompts=$5 rounds=$6 k=${7:-6} dtype=${8:-int8}
out=$(mktemp -d)
field() { /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, s))" "$1" "$2"; }
echo "| round | build | speculative tok/s | verify ms | draft token ms | plain tok/s | plain step ms | verify / plain step |"
echo "|--:|--|--:|--:|--:|--:|--:|--:|"
for round in $(seq "$rounds"); do
  order="before after"
  [ $((round % 2)) -eq 0 ] && order="after before"
  for which in $order; do
    dir=$before extra=${BEFORE_ARGS:-}
    [ "$which" = after ] && dir=$after extra=${AFTER_ARGS:-}
    read -ra extra <<< "$extra"
    common=(generate --model "$target" --dtype "$dtype" --batch 1 --max-tokens 128 --ignore-eos --prompts-file "$prompts")
    "$dir/exspec" "${common[@]}" --draft "$draft" --draft-tokens "$k" "${extra[@]}" --stats "$out/spec.json" > "$out/$which-spec-$round.txt" 2> /dev/null
    "$dir/exspec" "${common[@]}" --stats "$out/plain.json" > "$out/$which-plain-$round.txt" 2> /dev/null
    sv=$(field "$out/spec.json" "ms_per_verify") pv=$(field "$out/plain.json" "ms_per_verify")
    printf "| %s | %s | %.1f | %.2f | %.3f | %.1f | %.2f | %.2f |\n" "$round" "$which" \
      "$(field "$out/spec.json" "tokens_per_s")" "$sv" "$(field "$out/spec.json" "1000 * draft_s / max(drafted, 1)")" \
      "$(field "$out/plain.json" "tokens_per_s")" "$pv" "$(/usr/bin/python3 -c "print($sv / $pv)")"
    "$dir/decoder_bench" "$target" --threads 2 --dtypes "$dtype" --paths packed --batches 1 --tokens "1,$((k + 1))" \
      --reps 15 2>&1 | grep "^$dtype " | sed "s/^/round $round $which: /" >> "$out/forwards.log"
  done
done
echo
echo "decoder_bench (ms a forward: median of 15, min-max):"
cat "$out/forwards.log"
# Every run, speculative or plain, either build: the same tokens.
first=$(ls "$out"/*.txt | head -1)
for f in "$out"/*.txt; do
  cmp -s <(grep -o '"token_ids":\[[0-9,]*\]' "$first") <(grep -o '"token_ids":\[[0-9,]*\]' "$f") ||
    { echo "verify_cost.sh: $f wrote other tokens than $first" >&2; exit 1; }
done
echo "tokens: the same in all $(ls "$out"/*.txt | wc -l) runs"
rm -rf "$out"
