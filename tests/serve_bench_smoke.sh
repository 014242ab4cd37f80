#!/usr/bin/env bash
# Smoke test of bench/serve_bench.py (vLLM's `bench serve` shape) against a real server: every
# request completes with exactly --output-len tokens (ignore_eos), at a concurrency and at a
# request rate, and the JSON result and the plot are written. Timings are reported, never judged.
# usage: serve_bench_smoke.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
"$exspec" make-model --arch llama --preset tiny --seed 1 --out "$work/target" 2> /dev/null
"$exspec" make-model --draft-of "$work/target" --layers 1 --out "$work/draft" 2> /dev/null
. "$root/tests/start_server.sh"
start_server "$exspec" "$work/serve.err" --model "$work/target" --draft "$work/draft"
bench="$py $root/bench/serve_bench.py --url http://127.0.0.1:$port --num-prompts 12 --input-len 24 --output-len 10"
$bench --max-concurrency 4 --out "$work/concurrency.json" --plot "$work/concurrency.png" > /dev/null
$bench --dataset prompts --request-rate 20 --model target --out "$work/rate.json" > /dev/null
$py - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
for name in ("concurrency", "rate"):
    r = json.load(open(os.path.join(work, name + ".json")))
    assert r["completed"] == 12 and r["failed"] == 0, (name, r["errors"])
    assert r["total_output_tokens"] == 120, (name, r["total_output_tokens"])  # ignore_eos: 10 each
    # ITL can be empty: byte-level text held back until it is valid UTF-8 may all come in one chunk.
    for key in ("ttft_ms", "tpot_ms", "e2el_ms") + (("itl_ms",) if r["itl_ms"]["median"] is not None else ()):
        assert r[key]["median"] is not None and r[key]["p99"] >= r[key]["median"] > 0, (name, key, r[key])
    assert r["request_throughput"] > 0 and r["output_throughput"] > 0
assert os.path.getsize(os.path.join(work, "concurrency.png")) > 1000
print("serve_bench: 2 passed, 0 failed")
PY
