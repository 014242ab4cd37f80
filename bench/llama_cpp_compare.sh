#!/usr/bin/env bash
# exspec against llama.cpp (node-llama-cpp's prebuilt CPU binary: tests/gguf/fetch.sh) on the same
# GGUF files of the 150M llama shape: the m150t pair (docs/performance.md: a 150M target whose
# one-layer draft agrees like a good real pair) written by tests/gguf/write_gguf.py as Q8_0 and as
# Q4_K_M. exspec serves them under --dtype int8 (Q8_0 on the int8 kernels, Q4_K/Q6_K on the
# K-quant kernel), greedy, N tokens a prompt (llama.cpp: or until EOS), THREADS threads for exspec,
# llama.cpp's best of 1 and THREADS:
#   plain    exspec without a draft at batch 1 against llama.cpp with one sequence;
#   1, 8     exspec's default mode (in place, auto K) with the draft at 1 and 8 concurrent
#            sequences (generate --batch) against llama.cpp's best of 1 and 8 parallel
#            sequences (one context; llama.cpp batches their steps) for as many prompts.
# Each round runs every setting of both in turns, the order flipped each round; then per setting
# the median tok/s of each and the median of the per-round ratios exspec / llama.cpp with their
# range. Decoding only: the load is left out of both (exspec's wall time from submission).
# FIRST > 1 adds rounds FIRST.. to WORK_DIR's earlier ones (one lock hold a round on a shared
# machine); the table covers every round there.
# usage: bench/llama_cpp_compare.sh EXSPEC WORK_DIR ROUNDS [N] [THREADS] [FIRST]
# e.g.   for r in 1 2 3; do flock /tmp/cpu.lock bench/llama_cpp_compare.sh build/exspec /tmp/lcc 1 128 2 $r; done
set -euo pipefail
exspec=$1 work=$2 rounds=$3 n=${4:-128} threads=${5:-2} first=${6:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$root/tests/gguf/llama_cpp/node_modules/@node-llama-cpp/linux-x64" ] || { echo "run tests/gguf/fetch.sh first"; exit 1; }
mkdir -p "$work"
[ -d "$work/m150t" ] || "$exspec" make-model --arch llama --preset 150m --seed 1 --damp-std 0.0001 --out "$work/m150t"
[ -d "$work/m150t-draft" ] || "$exspec" make-model --draft-of "$work/m150t" --layers 1 --out "$work/m150t-draft"
for type in q8_0 q4_k_m; do
  for m in m150t m150t-draft; do
    [ -f "$work/$m-$type.gguf" ] || /usr/bin/python3 "$root/tests/gguf/write_gguf.py" "$work/$m" "$work/$m-$type.gguf" --type $type
  done
done
# 16 prompts of 8 to 15 byte-level ids (the made tokenizer spells ids 0..257).
mapfile -t prompts < <(/usr/bin/python3 -c '
import random
r = random.Random(7)
for i in range(16): print(",".join(str(r.randrange(32, 127)) for _ in range(8 + i % 8)))')
ours() {  # TYPE BATCH PROMPTS [--draft FILE]: tok/s
  local type=$1 batch=$2 count=$3
  shift 3
  local args=()
  for p in "${prompts[@]:0:$count}"; do args+=(--prompt-ids "$p"); done
  "$exspec" generate --model "$work/m150t-$type.gguf" "$@" --dtype int8 --batch "$batch" --max-tokens "$n" --ignore-eos \
    --generation-config none --torch-threads "$threads" --stats "$work/stats.json" "${args[@]}" > /dev/null 2>&1
  /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["tokens_per_s"])' "$work/stats.json"
}
theirs() {  # TYPE PARALLEL PROMPTS: tok/s, llama.cpp's best of 1 and THREADS threads (on a small shared
  # VM one thread can beat two: the threads wait on each other at every operator)
  local best=0 t r
  for t in $(echo 1 "$threads" | tr ' ' '\n' | sort -u); do
    r=$(node "$root/bench/llama_cpp_decode.mjs" "$work/m150t-$1.gguf" "$n" "$2" "$t" "${prompts[@]:0:$3}" |
      /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["tok_s"])')
    best=$(/usr/bin/python3 -c "print(max($best, $r))")
  done
  echo "$best"
}
[ "$first" -gt 1 ] || : > "$work/runs.tsv"
for round in $(seq "$first" $((first + rounds - 1))); do
  for type in q8_0 q4_k_m; do
    for side in exspec llama; do
      [ $((round % 2)) -eq 0 ] && side=$([ $side = exspec ] && echo llama || echo exspec)
      if [ $side = exspec ]; then
        echo -e "$round\t$type\tplain\texspec\t$(ours $type 1 4)" >> "$work/runs.tsv"
        echo -e "$round\t$type\t1\texspec\t$(ours $type 1 4 --draft "$work/m150t-draft-$type.gguf")" >> "$work/runs.tsv"
        echo -e "$round\t$type\t8\texspec\t$(ours $type 8 16 --draft "$work/m150t-draft-$type.gguf")" >> "$work/runs.tsv"
      else
        one=$(theirs $type 1 4)
        echo -e "$round\t$type\tplain\tllama\t$one" >> "$work/runs.tsv"
        echo -e "$round\t$type\t1\tllama\t$one" >> "$work/runs.tsv"
        # 8 clients: llama.cpp's best of one sequence at a time and 8 parallel sequences.
        a=$(theirs $type 1 16) b=$(theirs $type 8 16)
        echo -e "$round\t$type\t8\tllama\t$(/usr/bin/python3 -c "print(max($a, $b))")\t$a\t$b" >> "$work/runs.tsv"
      fi
    done
    echo "round $round $type done" >&2
  done
done
/usr/bin/python3 - "$work/runs.tsv" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    runs[(f[1], f[2])].setdefault(f[3], {})[int(f[0])] = float(f[4])
print("| file | setting | exspec tok/s | llama.cpp tok/s | exspec / llama.cpp (range) |")
print("|---|---|--:|--:|--:|")
for (t, s), sides in runs.items():
    ratios = [sides["exspec"][r] / sides["llama"][r] for r in sides["exspec"] if r in sides["llama"]]
    med = statistics.median
    name = {"plain": "batch 1, no draft", "1": "1 client, draft", "8": "8 clients, draft"}[s]
    print("| %s | %s | %.1f | %.1f | %.2fx (%.2f-%.2f) |" % (t, name, med(sides["exspec"].values()), med(sides["llama"].values()),
                                                          med(ratios), min(ratios), max(ratios)))
PY
