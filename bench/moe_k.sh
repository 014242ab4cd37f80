#!/usr/bin/env bash
# The draft length policy's K against the measured best fixed K on a target with layers of experts
# (issue 72): `exspec generate` of the same prompts with the draft at --draft-tokens 0..KMAX and
# auto (0: no draft, plain steps), B rows, ROUNDS rounds in turns; per setting the median tok/s (min-max) and, for auto, the
# mean K it chose. Greedy, EOS ignored, int8.
# usage: bench/moe_k.sh EXSPEC TARGET DRAFT [B] [ROUNDS] [N] [KMAX]
# e.g.   flock /tmp/cpu.lock bench/moe_k.sh build/exspec /work/moebench/target /work/moebench/draft 1 3 64 5
set -euo pipefail
exspec=$1 target=$2 draft=$3 B=${4:-1} rounds=${5:-3} n=${6:-64} kmax=${7:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prompts=()
for p in "1,2,3,4,5,6,7,8" "40,41,42" "100,7,9,200,3" "250,12,99,14,15,16" "5,5,5" "77,88,99,111" "3,1,4,1,5,9,2,6" "60,61"; do
  prompts+=(--prompt-ids "$p")
done
settings=(auto)
for k in $(seq 0 "$kmax"); do settings+=("$k"); done
for r in $(seq 1 "$rounds"); do
  for s in "${settings[@]}"; do
    with=(--draft "$draft" --draft-tokens "$s")
    [ "$s" = 0 ] && with=(--mode inplace)
    "$exspec" generate --model "$target" "${with[@]}" --dtype int8 --batch "$B" --max-tokens "$n" --ignore-eos \
      "${prompts[@]}" --stats "$work/$s-$r.json" > /dev/null 2>&1
  done
done
/usr/bin/python3 - "$work" "$rounds" "${settings[@]}" <<'PY'
import json, statistics, sys
work, rounds, settings = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| --draft-tokens | tok/s median (min-max) | mean K | acceptance |")
print("|---|--:|--:|--:|")
for s in settings:
    runs = [json.load(open(f"{work}/{s}-{r}.json")) for r in range(1, rounds + 1)]
    t = sorted(x["tokens_per_s"] for x in runs)
    print(f"| {s} | {statistics.median(t):.1f} ({t[0]:.1f}-{t[-1]:.1f}) | {statistics.mean(x['mean_draft_tokens'] for x in runs):.2f} "
          f"| {statistics.mean(x['acceptance_rate'] for x in runs):.2f} |")
PY
