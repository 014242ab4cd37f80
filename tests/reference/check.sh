#!/usr/bin/env bash
# Compares exspec with an independent reference (tests/reference/hf_reference.py, written from the
# Hugging Face model definitions, run on Debian's python3-torch): float64 logits of every prompt
# position and greedy ids, for every architecture, stored dtype and sharding we generate; and the
# logprobs of sampled generation, plain and speculative, against `exspec forward` logits.
# usage: check.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
if ! $py -c 'import torch, numpy' 2>/dev/null; then
  echo "check.sh: $py lacks torch/numpy: run scripts/setup (python3-torch, python3-numpy)" >&2
  exit 1
fi
$py "$here/hf_reference.py" --self-test  # the reference's own rope and causality checks
rm -rf "$work"
mkdir -p "$work"
prompts=$work/prompts.jsonl
cat > "$prompts" <<'JSONL'
{"prompt_ids": [1, 2, 3]}
{"prompt_ids": [256, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100]}
{"prompt_ids": [42]}
{"prompt_ids": [7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 200]}
{"prompt_ids": [255, 0, 128, 64, 32]}
JSONL

# The exspec commands go to one `exspec script` (a libtorch start-up for all instead of one a
# command, docs/testing.md), run before the comparisons; each line's stderr into exspec.err.
cmds=$work/commands.txt
: > "$cmds"
words() { printf '%q ' "$@"; }
add() { echo "$(words "$@") 2>> $(words "$work/exspec.err")" >> "$cmds"; }  # a command, its stdout the script's
add_to() { local out=$1; shift; echo "$(words "$@") > $(words "$out") 2>> $(words "$work/exspec.err")" >> "$cmds"; }
checks=()  # what the comparisons take: NAME|PROMPTS|OUTPUT STEM|the flags, as "== NAME FLAGS" shows them

check() {  # name [prompts file [exspec flags...]]: compares the model in $work/NAME
  local name=$1 m=$work/$1 p=${2:-$prompts}
  # Its outputs are numbered: all commands run before any comparison, and a model checked twice
  # (phi3-longrope, short and long factors) would otherwise have its first outputs overwritten.
  local out=$m/check${#checks[@]}
  shift $(( $# < 2 ? $# : 2 ))
  add forward --model "$m" --dtype float64 --prompts-file "$p" --out "$out.logits.safetensors" "$@"
  add_to "$out.generate.jsonl" generate --model "$m" --dtype float64 --batch 3 --max-tokens 24 --prompts-file "$p" "$@"
  checks+=("$name|$p|$out|$*")
}

run() {  # name, make-model flags...
  local name=$1
  shift
  add make-model "$@" --out "$work/$name"
  check "$name"
}

run llama-gqa-llama3rope --arch llama --preset tiny --seed 3
run qwen2-bias --arch qwen2 --preset tiny --seed 3
run qwen3-qknorm-tied --arch qwen3 --preset tiny --seed 3
run llama-bf16-sharded --arch llama --preset tiny --seed 4 --dtype bfloat16 --shards 2
run qwen3-f16 --arch qwen3 --preset tiny --seed 5 --dtype float16
run llama-attention-bias --arch llama --preset tiny --seed 6 --attention-bias
run glm-partial-interleaved-rope --arch glm --preset tiny --seed 3
run glm4-sandwich-norms --arch glm4 --preset tiny --seed 3
run glm4-bf16-sharded --arch glm4 --preset tiny --seed 7 --dtype bfloat16 --shards 3
run mistral-window16 --arch mistral --preset tiny --seed 3  # a window of 16: the longest prompt outgrows it
run phi3-fused-partial-window --arch phi3 --preset tiny --seed 3  # fused q/k/v and gate/up, 3/4 of each head rotates
run phi3-longrope --arch phi3 --preset tiny --seed 3 --longrope  # Phi-3.5's longrope, its short factors (original context 128)
# Its long factors (--longrope long) on prompts longer than the original, where HF takes them too.
$py - "$work/long-prompts.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for n, a in ((129, 3), (150, 7)):
        f.write(json.dumps({"prompt_ids": [(a * i + 1) % 256 for i in range(n)]}) + "\n")
PY
check phi3-longrope "$work/long-prompts.jsonl" --longrope long
run gemma2-softcaps --arch gemma2 --preset tiny --seed 3  # scores and logits soft-capped, each 2nd layer sliding
run gemma3-two-kinds --arch gemma3 --preset tiny --seed 3  # (1 + w) sandwich norms, GELU-tanh, local and global rope
run gemma3-bf16 --arch gemma3 --preset tiny --seed 8 --dtype bfloat16  # the (1 + w) multiplier made in float32 from bfloat16 weights
run qwen3moe-experts --arch qwen3moe --preset tiny --seed 3  # 8 experts, 2 a token, renormalised, on every layer
run qwen3moe-bf16 --arch qwen3moe --preset tiny --seed 9 --dtype bfloat16  # the router's softmax in float32
# A draft of GLM-4's first layers is a GLM-4 checkpoint of its own.
add make-model --draft-of "$work/glm4-sandwich-norms" --layers 2 --out "$work/glm4-draft2"
check glm4-draft2
# Sampled generation: speculative (exspec, a one-layer draft) equals plain sampling, and both
# runs' logprobs equal log_softmax of `exspec forward` logits computed here in Python.
m=$work/llama-gqa-llama3rope
add make-model --draft-of "$m" --layers 1 --out "$m-draft"
sample=(--dtype float64 --max-tokens 16 --temperature 0.9 --top-p 0.95 --seed 11 --logprobs 3 --prompts-file "$prompts")
add_to "$m/plain.jsonl" generate --model "$m" --oracle "${sample[@]}"
add_to "$m/spec.jsonl" generate --model "$m" --draft "$m-draft" --mode exspec --batch 3 --draft-tokens 3 "${sample[@]}"

"$exspec" script "$cmds" 2> "$work/script.err" ||
  { echo "exspec failed:"; cat "$work/script.err"; tail -20 "$work/exspec.err"; exit 1; }
for c in "${checks[@]}"; do
  IFS='|' read -r name p out flags <<< "$c"
  echo "== $name${flags:+ $flags}"
  $py "$here/hf_reference.py" --model "$work/$name" --prompts "$p" --max-tokens 24 \
    --exspec-logits "$out.logits.safetensors" --exspec-generate "$out.generate.jsonl"
done
$py "$here/logprobs_check.py" extend --prompts "$prompts" --plain "$m/plain.jsonl" --spec "$m/spec.jsonl" --out "$m/full.jsonl"
"$exspec" forward --model "$m" --dtype float64 --prompts-file "$m/full.jsonl" --out "$m/full.safetensors" 2>/dev/null
$py "$here/logprobs_check.py" compare --prompts "$prompts" --plain "$m/plain.jsonl" --spec "$m/spec.jsonl" \
  --logits "$m/full.safetensors"
echo "reference check: all architectures match"
