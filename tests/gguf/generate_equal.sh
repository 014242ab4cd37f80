#!/usr/bin/env bash
# `exspec generate` on F32 GGUF files of made checkpoints (target and draft, written by
# write_gguf.py) gives the same output as on their Hugging Face directories: text prompts
# (the GGUF tokenizer's ids and text), the default mode with a draft and --mode nonspec,
# greedy and seeded sampling, in float32 and int8. The qwen3 target recommends sampling in its
# generation_config.json; written as general.sampling.*, the GGUF file's runs without sampling
# flags take the same defaults. And `exspec check FILE.gguf` describes the file.
# usage: generate_equal.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
# mistral and phi3: a window of 16, which the prompts and answers outgrow; phi3: fused products,
# partial rope; gemma3: the window on layers 0 and 2 with their own rope, (1 + w) norms stored as
# the multiplier; phi3-longrope: Phi-3.5's longrope (rope_factors_long/short, attn_factor), its short
# factors in float32 and its long ones (--longrope long) in int8; gemma2: its caps
# (gemma2.attn_logit_softcapping, .final_logit_softcapping) and each 2nd layer sliding
archs=(llama qwen2 qwen3 mistral phi3 phi3-longrope gemma2 gemma3)
# The commands go to `exspec script` files, each run in one process: 144 commands on tiny models
# pay libtorch's start-up twice instead of 144 times (docs/testing.md).
words() { printf '%q ' "$@"; }
for arch in "${archs[@]}"; do
  made=(--arch "${arch%-longrope}")
  [ "$arch" = phi3-longrope ] && made+=(--longrope)
  echo "$(words make-model "${made[@]}" --preset tiny --seed 3 --out "$work/$arch")"
  echo "$(words make-model --draft-of "$work/$arch" --layers 1 --out "$work/$arch-draft")"
done > "$work/make.txt"
"$exspec" script "$work/make.txt" 2> "$work/make.err" || { echo "make-model failed:"; cat "$work/make.err"; exit 1; }
/usr/bin/python3 - "$work/qwen3/generation_config.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
g.update(temperature=0.7, top_p=0.95, top_k=20, repetition_penalty=1.1)
json.dump(g, open(sys.argv[1], "w"))
PY
runs=()  # each: ARCH|DTYPE|MODE|SAMPLING, its outputs $work/out/N.hf.jsonl and N.gguf.jsonl
mkdir -p "$work/out"
for arch in "${archs[@]}"; do
  for m in "$arch" "$arch-draft"; do /usr/bin/python3 "$here/write_gguf.py" "$work/$m" "$work/$m.gguf"; done
  for dtype in float32 int8; do
    for mode in "" "--mode nonspec"; do
      for sampling in "" "--temperature 0.8 --seed 11"; do
        args=(--prompt "hello world" --prompt "the quick brown fox jumps" --prompt-ids 5,9,200,3
              --max-tokens 24 --dtype "$dtype" $mode $sampling)
        [ "$arch" = phi3-longrope ] && [ "$dtype" = int8 ] && args+=(--longrope long)
        draft=(--draft "$work/$arch-draft")
        draft_gguf=(--draft "$work/$arch-draft.gguf")
        [ -n "$mode" ] && draft=() && draft_gguf=()
        n=${#runs[@]}
        runs+=("$arch|$dtype|$mode|$sampling")
        echo "$(words generate --model "$work/$arch" "${draft[@]}" "${args[@]}") > $(words "$work/out/$n.hf.jsonl") 2>> $(words "$work/generate.err")"
        echo "$(words generate --model "$work/$arch.gguf" "${draft_gguf[@]}" "${args[@]}") > $(words "$work/out/$n.gguf.jsonl") 2>> $(words "$work/generate.err")"
      done
    done
  done
done > "$work/generate.txt"
"$exspec" script "$work/generate.txt" 2> "$work/script.err" || { echo "generate failed:"; cat "$work/script.err"; tail -20 "$work/generate.err"; exit 1; }
for n in "${!runs[@]}"; do
  IFS='|' read -r arch dtype mode sampling <<< "${runs[n]}"
  hf=$work/out/$n.hf.jsonl
  [ "$(wc -l < "$hf")" = 3 ] || { echo "$arch $dtype $mode $sampling: no output"; exit 1; }
  if ! cmp -s "$hf" "$work/out/$n.gguf.jsonl"; then
    echo "$arch $dtype ${mode:-default mode with a draft} ${sampling:-greedy}: the GGUF file's output differs"
    diff "$hf" "$work/out/$n.gguf.jsonl" || true
    exit 1
  fi
  [ $((n % 8)) = 7 ] && echo "$arch: GGUF output equals the checkpoint's (float32, int8; default with draft, nonspec; greedy, seeded)"
done
"$exspec" check "$work/qwen3.gguf" --dtype float32 --max-tokens 4 > "$work/check.txt"
for want in "architecture qwen3" "tensors: " "F32 " "tokenizer: gpt2" "chat template:" "weights in memory: " "check: passed" \
            "sampling defaults (general.sampling.*): temperature 0.7, top_p 0.95, top_k 20, repetition_penalty 1.1"; do
  grep -q "$want" "$work/check.txt" || { echo "check lacks \"$want\":"; cat "$work/check.txt"; exit 1; }
done
echo "check: $(grep -c '^gguf:' "$work/check.txt") lines about the file"
# A llama file with a window is Mistral's, and check says so.
"$exspec" check "$work/mistral.gguf" --dtype float32 --max-tokens 4 > "$work/check-mistral.txt"
grep -q "mistral, 4 layers, .*, sliding window 16" "$work/check-mistral.txt" ||
  { echo "check of the Mistral file lacks its window:"; cat "$work/check-mistral.txt"; exit 1; }
for lr in short long; do
  "$exspec" check "$work/phi3-longrope.gguf" --dtype float32 --max-tokens 4 --longrope $lr > "$work/check-longrope.txt"
  context=$([ $lr = long ] && echo 512 || echo 128)
  grep -q "longrope: $lr factors, attention factor 1.1[0-9]*, context $context (original 128)" "$work/check-longrope.txt" ||
    { echo "check of the longrope file lacks its $lr factors:"; cat "$work/check-longrope.txt"; exit 1; }
done
"$exspec" check "$work/gemma2.gguf" --dtype float32 --max-tokens 4 > "$work/check-gemma2.txt"
grep -q "gemma2, 4 layers, .*, sliding window 16 on 2 of 4 layers, GELU-tanh, (1 + w) norms, .*scores capped at 1, logits capped at 2" "$work/check-gemma2.txt" ||
  { echo "check of the Gemma 2 file lacks its kinds:"; cat "$work/check-gemma2.txt"; exit 1; }
"$exspec" check "$work/gemma3.gguf" --dtype float32 --max-tokens 4 > "$work/check-gemma3.txt"
grep -q "gemma3, 4 layers, .*, sliding window 16 on 2 of 4 layers (their rope base 10000), GELU-tanh, (1 + w) norms" "$work/check-gemma3.txt" ||
  { echo "check of the Gemma 3 file lacks its kinds:"; cat "$work/check-gemma3.txt"; exit 1; }
