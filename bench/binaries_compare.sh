#!/usr/bin/env bash
# Two exspec binaries (before and after a change) served in turns over HTTP with
# bench/serve_bench.py: ROUNDS rounds, each starting BEFORE, running the clients, stopping it,
# then the same with AFTER (never both at once); then the medians and the median of the per-round
# ratios. SERVE_ARGS go to both servers, BEFORE_ARGS and AFTER_ARGS (words) to one each;
# PROMPTS (default 16) requests a run.
# usage: bench/binaries_compare.sh BEFORE AFTER OUT_DIR ROUNDS CLIENTS OUTPUT_LEN SERVE_ARGS...
# e.g.   bench/binaries_compare.sh /tmp/prev/build/exspec build/exspec threads 3 1 128 \
#            --model models/m150 --dtype bfloat16 --no-prefix-cache
#        BEFORE_ARGS="--dtype bfloat16" AFTER_ARGS="--dtype int8" \
#            bench/binaries_compare.sh build/exspec build/exspec int8 3 1 128 --model models/m150 ...
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 out=$3 rounds=$4 clients=$5 len=$6
shift 6
py=/usr/bin/python3
. tests/start_server.sh
mkdir -p "$out"
for round in $(seq "$rounds"); do
  for which in before after; do
    bin=$before own=${BEFORE_ARGS:-}
    [ "$which" = after ] && bin=$after own=${AFTER_ARGS:-}
    # shellcheck disable=SC2086  # the own arguments are words
    start_server "$bin" "$out/serve-$which-$round.log" "$@" $own
    $py bench/serve_bench.py --url "http://127.0.0.1:$port" --dataset prompts --num-prompts "${PROMPTS:-16}" --output-len "$len" \
      --max-concurrency "$clients" --label "$which r$round" --out "$out/$which-r$round.json" > /dev/null
    stop_server
  done
done
$py - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
load = lambda w: [json.load(open(f"{out}/{w}-r{r}.json")) for r in range(1, rounds + 1)]
b, a = load("before"), load("after")
tps = lambda js: [j["output_throughput"] for j in js]
ratios = [x / y for x, y in zip(tps(a), tps(b))]
med = lambda xs: round(statistics.median(xs), 2)
print(f"before {med(tps(b))} tok/s {[round(x, 1) for x in tps(b)]}; after {med(tps(a))} tok/s {[round(x, 1) for x in tps(a)]}; "
      f"after / before {med(ratios)} ({min(ratios):.2f}-{max(ratios):.2f}); TPOT median ms "
      f"{med([j['tpot_ms']['median'] for j in b])} / {med([j['tpot_ms']['median'] for j in a])}")
PY
