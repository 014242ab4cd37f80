#!/usr/bin/env bash
# A draft head over a shortlist (issue 62, --draft-shortlist): acceptance against what a draft
# token costs, per shortlist size. The shortlist is counted by `exspec shortlist` on the first
# half of PROMPTS (the target's greedy outputs) and measured on the second half, so no prompt is
# both counted and measured. Per round, each size in turn (and the whole head, "full"), then a
# plain run: `exspec generate` at batch 1, greedy (--generation-config none), with K fixed, so every size verifies the same rows
# (K=auto: the adaptive policy, calibrated on the draft as loaded, picks K; the mean K shows it).
# Per size: the share of the measured outputs' tokens it holds (acceptance's ceiling), acceptance, ms a draft token (draft_s / drafted), that as a share of a plain step
# (the plain run's ms_per_verify), ms a verification, tokens/s, and tokens/s over plain's; then
# medians and spread (min-max) over the rounds. Every run's tokens are checked equal to plain's.
# COUNT=same counts on the measured prompts themselves instead: the best case, a shortlist that
# holds every token the target emits there (what the head's cost alone gives), not a forecast.
#   bench/shortlist_curve.sh EXSPEC TARGET DRAFT PROMPTS [ROUNDS=3] [SIZES="256 1024 4096"] [K=6] [DTYPE=int8] [TOKENS=128] [COUNT=half|same]
set -euo pipefail
exe=$1 target=$2 draft=$3 prompts=$4 rounds=${5:-3} sizes=${6:-"256 1024 4096"} k=${7:-6} dtype=${8:-int8} tokens=${9:-128}
count=${10:-half}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$(grep -c . "$prompts")
head -n $((n / 2)) "$prompts" > "$tmp/count.jsonl"
tail -n +$((n / 2 + 1)) "$prompts" | head -n 8 > "$tmp/measure.jsonl"
[ "$count" = same ] && cp "$tmp/measure.jsonl" "$tmp/count.jsonl"
"$exe" shortlist --model "$target" --prompts-file "$tmp/count.jsonl" --max-tokens "$tokens" --dtype "$dtype" \
  --out "$tmp/shortlist.json" 2> "$tmp/count.err" || { cat "$tmp/count.err" >&2; exit 1; }
cat "$tmp/count.err" >&2
run() {  # NAME ARGS...: one generate run, its stats as a line of $tmp/all
  local name=$1; shift
  "$exe" generate --model "$target" --generation-config none --dtype "$dtype" --batch 1 --max-tokens "$tokens" --ignore-eos \
    --prompts-file "$tmp/measure.jsonl" --stats "$tmp/s.json" "$@" > "$tmp/out.$name" 2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  /usr/bin/python3 - "$tmp/s.json" "$name" <<'PY' >> "$tmp/runs"
import json, sys
s = json.load(open(sys.argv[1]))
drafted = max(1, s["drafted"])
print(sys.argv[2], s["acceptance_rate"], 1e3 * s["draft_s"] / drafted, s["ms_per_verify"], s["tokens_per_s"], s["mean_draft_tokens"])
PY
}
for round in $(seq "$rounds"); do
  run plain
  run full --draft "$draft" --draft-tokens "$k"
  for size in $sizes; do run "$size" --draft "$draft" --draft-tokens "$k" --draft-shortlist "$tmp/shortlist.json" --draft-shortlist-size "$size"; done
  for name in full $sizes; do cmp -s "$tmp/out.plain" "$tmp/out.$name" || { echo "round $round: $name's tokens differ from plain decoding's" >&2; exit 1; }; done
done
/usr/bin/python3 - "$tmp/runs" "full $sizes" "$tmp/shortlist.json" "$tmp/out.plain" <<'PY'
import json, statistics, sys
ranked = json.load(open(sys.argv[3]))["tokens"]
emitted = [t for line in open(sys.argv[4]) for t in json.loads(line)["token_ids"]]
def coverage(name):  # the share of the measured outputs' tokens the shortlist holds: acceptance's ceiling
    if name == "full": return "100"
    keep = set(ranked[:int(name)])
    return f"{100 * sum(t in keep for t in emitted) / len(emitted):.1f}"
rows = {}
for line in open(sys.argv[1]):
    k, *v = line.split()
    rows.setdefault(k, []).append([float(x) for x in v])
plain_step = [r[2] for r in rows["plain"]]
plain_tps = [r[3] for r in rows["plain"]]
def med(xs): return f"{statistics.median(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"
print("| shortlist | measured outputs covered | acceptance | mean K | draft token ms | draft token / plain step | verify ms | tok/s | tok/s / plain |")
print("|--|--:|--:|--:|--:|--:|--:|--:|--:|")
print(f"| plain (no draft) | | | | | | {med(plain_step)} | {med(plain_tps)} | 1 |")
for name in sys.argv[2].split():
    rs = rows[name]
    share = [100 * r[1] / p for r, p in zip(rs, plain_step)]
    speed = [r[3] / p for r, p in zip(rs, plain_tps)]
    print(f"| {name} | {coverage(name)} % | {med([r[0] for r in rs])} | {med([r[4] for r in rs])} | {med([r[1] for r in rs])} | {med(share)} % | {med([r[2] for r in rs])} | "
          f"{med([r[3] for r in rs])} | {med(speed)} |")
PY
