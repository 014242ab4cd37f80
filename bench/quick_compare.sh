#!/usr/bin/env bash
# Two exspec binaries (before and after a change) through `exspec bench --quick` in turns: ROUNDS
# rounds, the order flipped each round (before-after, after-before, ...) so that a drift of the
# machine falls on both alike, never both at once. Then, per setting, the median of the per-round
# ratios after / before of tokens/s with their range, and each binary's own spread over its
# rounds: the noise. A setting is "slower" only when every round's ratio is below 1 and the
# median ratio is below 1 by more than the larger of the two spreads. Also checks that every run
# of both binaries matched the oracle as often as the other (exact_match).
# Run from the repository root (the prompt sets and models/ are found there); BENCH_ARGS go to
# both, e.g. --threads 2.
# usage: bench/quick_compare.sh BEFORE AFTER OUT_DIR ROUNDS [BENCH_ARGS...]
# e.g.   flock /work/.heavy.lock bench/quick_compare.sh /tmp/prev/build/exspec build/exspec /tmp/qc 3
set -euo pipefail
before=$1 after=$2 out=$3 rounds=$4
shift 4
mkdir -p "$out"
for round in $(seq "$rounds"); do
  order="before after"
  [ $((round % 2)) -eq 0 ] && order="after before"
  for which in $order; do
    bin=$before
    [ "$which" = after ] && bin=$after
    echo "round $round: $which ($bin)" >&2
    "$bin" bench --quick --out "$out/$which-r$round" "$@" 2> "$out/$which-r$round.log"
  done
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
KEY = ("sweep", "pair", "prompt_set", "mode", "dtype", "batch_size", "draft_tokens", "adaptive", "window")
def load(which):
    per = []
    for r in range(1, rounds + 1):
        runs = json.load(open(f"{out}/{which}-r{r}/results.json"))["runs"]
        per.append({tuple(run.get(k) for k in KEY): run for run in runs})
    return per
b, a = load("before"), load("after")
keys = [k for k in b[0] if all(k in x for x in b + a)]
med = statistics.median
spread = lambda xs: (max(xs) - min(xs)) / med(xs) if med(xs) > 0 else 0
rows, slower, all_ratios, mismatched = [], [], [], []
for k in keys:
    tb = [x[k]["tokens_per_s"] for x in b]
    ta = [x[k]["tokens_per_s"] for x in a]
    ratios = [y / x for x, y in zip(tb, ta)]
    noise = max(spread(tb), spread(ta))
    m = med(ratios)
    all_ratios.append(m)
    flag = max(ratios) < 1 and m < 1 - noise
    if flag:
        slower.append(k)
    if {x[k]["exact_match"] for x in b} != {x[k]["exact_match"] for x in a}:
        mismatched.append(k)
    label = " ".join(f"{n}={v}" for n, v in zip(KEY, k) if v not in (None, 0, False, ""))
    rows.append(f"| {label} | {med(tb):.1f} | {med(ta):.1f} | {m:.3f} | {min(ratios):.3f}-{max(ratios):.3f} | "
                f"{spread(tb):.0%} / {spread(ta):.0%} | {'SLOWER' if flag else ''} |")
print(f"{len(keys)} settings, {rounds} rounds each, order flipped every round\n")
print("| setting | before tok/s (median) | after tok/s | after / before (median of rounds) | range | spread before / after | |")
print("|---|--:|--:|--:|--:|--:|---|")
print("\n".join(rows))
print(f"\nmedian over settings of the median ratio: {med(all_ratios):.3f} "
      f"(settings' medians {min(all_ratios):.3f}-{max(all_ratios):.3f})")
print(f"slower beyond noise: {len(slower)}" + ("" if not slower else " -> " + "; ".join(map(str, slower))))
print(f"exact_match differing between the binaries: {len(mismatched)}" + ("" if not mismatched else " -> " + "; ".join(map(str, mismatched))))
sys.exit(1 if slower or mismatched else 0)
PY
