#!/usr/bin/env bash
# Smoke test of the benchmark harness: `exspec bench --quick` on tiny generated models runs and
# writes well-formed results (every key a later comparison script reads), and the float64
# subset matches the oracle exactly. Timings are reported, never judged.
# usage: bench_smoke.sh EXSPEC_BINARY WORK_DIR
set -euo pipefail
exspec=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
"$exspec" make-model --arch qwen3 --preset tiny --seed 2 --out "$work/target" 2> /dev/null
"$exspec" make-model --draft-of "$work/target" --layers 1 --out "$work/draft" 2> /dev/null
here=$(cd "$(dirname "$0")/.." && pwd)
cat > "$work/config.json" <<JSON
{"mixed_prompts": "$here/bench/prompts/mixed.jsonl", "equal_prompts": "$here/bench/prompts/equal.jsonl",
 "trained_model": "$here/demo/target", "trained_draft": "$here/demo/draft",
 "trained_prompts": "$here/bench/prompts/trained.jsonl"}
JSON
"$exspec" bench --quick --config "$work/config.json" --model "$work/target" --draft "$work/draft" --out "$work/out" 2> "$work/stderr.txt" || {
  cat "$work/stderr.txt"
  exit 1
}
/usr/bin/python3 - "$work/out" <<'PY'
import json, os, sys
out = sys.argv[1]
r = json.load(open(os.path.join(out, "results.json")))
for k in ("cpu", "cores", "blas", "date", "model_parameters"):
    assert k in r["machine"], f"machine lacks {k}"
keys = ("mode", "batch_size", "draft_tokens", "window", "tokens_per_s", "exact_match", "partial_match",
        "acceptance_rate", "grouping_rate", "overhead_share", "verify_calls", "ms_per_verify", "sweep", "dtype")
runs = r["runs"]
assert len(runs) >= 15, f"only {len(runs)} runs"
for run in runs:
    for k in keys:
        assert k in run, f"run {run.get('mode')} B={run.get('batch_size')} lacks {k}"
    assert run["tokens_per_s"] > 0 and run["output_tokens"] > 0, run
    assert 0 <= run["exact_match"] <= 1 and 0 <= run["overhead_share"] <= 1, run
sweeps = {run["sweep"] for run in runs}
assert sweeps >= {"main", "grouping", "window", "draft_tokens", "float64", "adaptive", "trained"}, sweeps
assert {run["pair"] for run in runs if run["sweep"] == "trained"} == {"trained"}, "the trained sweep runs the trained pair"
adaptive = [run for run in runs if run["sweep"] == "adaptive"]
assert {run["pair"] for run in adaptive} == {"demo", "low"}, "the adaptive sweep runs both pairs"
auto = [run for run in adaptive if run["adaptive"]]
assert auto and all(sum(run["k_steps"]) == run["verify_calls"] for run in auto), "k_steps count every step"
assert all("acceptance" in run["estimates"] for run in auto), "auto runs report the policy's estimates"
f64 = [run for run in runs if run["sweep"] == "float64"]
assert f64 and all(run["exact_match"] == 1.0 for run in f64), "float64 runs must equal the oracle exactly"
assert {run["mode"] for run in runs if run["sweep"] == "main"} == {"nonspec", "eqspec", "exspec"}
summary = open(os.path.join(out, "summary.md")).read()
for section in ("Correctness", "Throughput", "Overhead anatomy", "grouping", "Adaptive draft length"):
    assert section in summary, f"summary.md lacks {section}"
print(f"bench smoke: {len(runs)} runs, well-formed; float64 subset exact")
PY
