#!/usr/bin/env bash
# Row buckets (issue 60, --row-buckets) on against off on this machine: `exspec generate`, the
# batch-1 plain step (in place, no draft) and the default mode at B 8 with K 3, the two settings
# alternating for ROUNDS rounds (tok/s and ms a step of each run, then the medians).
#   bench/row_buckets.sh EXSPEC MODEL_DIR [ROUNDS=3] [DEVICE=cpu] [DTYPE=float32]
# MODEL_DIR holds target/ and draft/ (scripts/gpu-check's pairs: gpu-report/models/small).
set -euo pipefail
exe=$1 m=$2 rounds=${3:-3} device=${4:-cpu} dtype=${5:-float32}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -n 16 "$(dirname "$0")/prompts/mixed.jsonl" > "$tmp/prompts.jsonl"
for round in $(seq "$rounds"); do
  for setting in off on; do
    for cfg in "plain 1" "default 8"; do
      set -- $cfg
      args=(generate --model "$m/target" --dtype "$dtype" --device "$device" --batch "$2" --max-tokens 32
            --prompts-file "$tmp/prompts.jsonl" --stats "$tmp/s.json" --row-buckets "$setting")
      [ "$1" = default ] && args+=(--draft "$m/draft" --draft-tokens 3)
      "$exe" "${args[@]}" > /dev/null 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
      /usr/bin/python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(sys.argv[2], s['tokens_per_s'], s['ms_per_verify'])" \
        "$tmp/s.json" "$setting-$1-b$2" | tee -a "$tmp/all"
    done
  done
done
/usr/bin/python3 - "$tmp/all" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, tps, ms = line.split()
    rows.setdefault(k, []).append((float(tps), float(ms)))
for k in sorted(rows):
    print(f"median {k}: {statistics.median(t for t, _ in rows[k]):.1f} tok/s, {statistics.median(m for _, m in rows[k]):.3f} ms a step")
for case in ("plain-b1", "default-b8"):
    on, off = rows.get("on-" + case), rows.get("off-" + case)
    if on and off:
        print(f"{case}: on / off step time {statistics.median(m for _, m in on) / statistics.median(m for _, m in off):.3f}")
PY
