#!/usr/bin/env bash
# Plan-ahead (issue 60, --plan-ahead) on against off on this machine: `exspec generate`, the
# default mode (in place with the draft) at B 8 with K 3, the two settings alternating for ROUNDS
# rounds. Per run: the host time planning a step after the results it follows (plan_s / steps,
# the critical path), the time planning ahead while a step ran (plan_ahead_s / steps), the plans
# kept and made again, and the wall per verification; then per setting the medians and the
# spread (min-max).
#   bench/plan_ahead.sh EXSPEC MODEL_DIR [ROUNDS=5] [DEVICE=cpu] [DTYPE=float32]
# MODEL_DIR holds target/ and draft/ (scripts/gpu-check's pairs: gpu-report/models/small).
set -euo pipefail
exe=$1 m=$2 rounds=${3:-5} device=${4:-cpu} dtype=${5:-float32}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 16 "$(dirname "$0")/prompts/mixed.jsonl" > "$tmp/prompts.jsonl"
for round in $(seq "$rounds"); do
  for setting in off on; do
    "$exe" generate --model "$m/target" --draft "$m/draft" --draft-tokens 3 --dtype "$dtype" --device "$device" \
      --batch 8 --max-tokens 32 --prompts-file "$tmp/prompts.jsonl" --stats "$tmp/s.json" --plan-ahead "$setting" \
      > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    /usr/bin/python3 - "$tmp/s.json" "$setting" <<'PY' | tee -a "$tmp/all"
import json, sys
s = json.load(open(sys.argv[1]))
n = max(1, s["verify_calls"])
print(sys.argv[2], 1e6 * s["plan_s"] / n, 1e6 * s["plan_ahead_s"] / n, s["plans_kept"], s["plans_redone"], 1e3 * s["wall_s"] / n)
PY
  done
done
/usr/bin/python3 - "$tmp/all" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, *v = line.split()
    rows.setdefault(k, []).append([float(x) for x in v])
names = ["planning after the results, us a step", "planning ahead, us a step", "plans kept", "plans made again", "wall, ms a verification"]
for k in ("off", "on"):
    for i, name in enumerate(names):
        xs = [r[i] for r in rows[k]]
        print(f"{k}: {name}: median {statistics.median(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f})")
for i in (0, 4):
    print(f"on / off {names[i]}: {statistics.median(r[i] for r in rows['on']) / statistics.median(r[i] for r in rows['off']):.3f}")
PY
