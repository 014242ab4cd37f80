#!/usr/bin/env bash
# GGUF files of every weight type llama.cpp v0.5.0's llama-quantize makes (bench/llama_cpp_build.sh)
# from a made llama of the 150M shape and its one-layer draft: each loads and serves under
# --dtype int8, and seeded sampling at batch 16 in the default mode (in place, the draft
# proposing 3 tokens a step: auto K drafts little with this random draft) gives the tokens of
# batch-1 plain decoding (--mode nonspec --batch 1) of the same file.
# Prints the tensor types of each file, what int8 does with them, and tok/s of both runs.
# usage: bench/weight_types_check.sh EXSPEC WORK_DIR [TYPES...]   (default: the issue-70 list)
set -euo pipefail
exspec=$1 work=$2
shift 2
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(Q4_0 Q4_1 Q5_0 Q5_1 Q5_K_M IQ4_NL IQ4_XS Q3_K_M Q2_K)
root=$(cd "$(dirname "$0")/.." && pwd)
quantize=$root/third_party/llama.cpp-v0.5.0/build-native/bin/llama-quantize
[ -x "$quantize" ] || { echo "build llama.cpp first: bench/llama_cpp_build.sh"; exit 1; }
mkdir -p "$work"
[ -d "$work/m150" ] || "$exspec" make-model --arch llama --preset 150m --seed 1 --out "$work/m150" 2> /dev/null
[ -d "$work/m150-draft" ] || "$exspec" make-model --draft-of "$work/m150" --layers 1 --out "$work/m150-draft" 2> /dev/null
for m in m150 m150-draft; do
  [ -f "$work/$m-F32.gguf" ] || /usr/bin/python3 "$root/tests/gguf/write_gguf.py" "$work/$m" "$work/$m-F32.gguf" --type f32
done
mapfile -t prompts < <(/usr/bin/python3 -c '
import random
r = random.Random(7)
for i in range(16): print(",".join(str(r.randrange(32, 127)) for _ in range(8 + i % 8)))')
args=()
for p in "${prompts[@]}"; do args+=(--prompt-ids "$p"); done
fails=0
for t in "${types[@]}"; do
  for m in m150 m150-draft; do
    [ -f "$work/$m-$t.gguf" ] || "$quantize" "$work/$m-F32.gguf" "$work/$m-$t.gguf" "$t" 2 > "$work/$m-$t.log" 2>&1
  done
  common=(--model "$work/m150-$t.gguf" --dtype int8 --max-tokens 32 --temperature 0.9 --seed 5 --generation-config none "${args[@]}")
  "$exspec" generate "${common[@]}" --mode nonspec --batch 1 --stats "$work/plain.json" > "$work/plain.jsonl" 2> "$work/$t.err"
  "$exspec" generate "${common[@]}" --draft "$work/m150-draft-$t.gguf" --draft-tokens 3 --batch 16 --stats "$work/default.json" > "$work/default.jsonl" 2>> "$work/$t.err"
  tps() { /usr/bin/python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["tokens_per_s"])' "$1"; }
  kinds=$({ grep -o 'exspec: gguf: .*' "$work/$t.err" || true; } | sort -u | sed 's/^exspec: gguf: //' | paste -sd ';' -)
  if cmp -s "$work/plain.jsonl" "$work/default.jsonl" && [ "$(wc -l < "$work/plain.jsonl")" = 16 ]; then
    accepted=$(grep -o 'acceptance [0-9.]*' "$work/$t.err" | tail -1)
    echo "$t: equal (16 prompts, 32 tokens, seeded; default mode $accepted); plain $(tps "$work/plain.json") tok/s, default $(tps "$work/default.json") tok/s; ${kinds:-all blocks kept}"
  else
    echo "$t: DIFFERS"; fails=$((fails + 1))
  fi
done
exit $fails
