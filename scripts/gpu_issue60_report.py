#!/usr/bin/env python3
"""scripts/gpu-issue60's report: python3 gpu_issue60_report.py WORK RUNS OUT.

WORK is gpu-check's folder (env.tsv, floor.tsv, serve/), RUNS the issue's runs (runs.tsv: name,
pair, dtype, setting, mode, B, sampling, rc, seconds; each run's .jsonl and .stats.json). Writes
OUT/report.md and OUT/results.json from whatever has run so far."""
import json
import os
import subprocess
import sys

work, runs_dir, out = sys.argv[1:4]


def tsv(path):
    try:
        return [l.rstrip("\n").split("\t") for l in open(path, encoding="utf-8") if l.strip()]
    except OSError:
        return []


def outputs(name):
    try:
        lines = [json.loads(l) for l in open(os.path.join(runs_dir, name + ".jsonl"), encoding="utf-8") if l.strip()]
        return [l["token_ids"] for l in sorted(lines, key=lambda l: l["index"])]
    except (OSError, ValueError, KeyError):
        return None


def stats(name):
    try:
        return json.load(open(os.path.join(runs_dir, name + ".stats.json"), encoding="utf-8"))
    except (OSError, ValueError):
        return {}


runs = {}
for r in tsv(os.path.join(runs_dir, "runs.tsv")):
    name, pair, dtype, setting, mode, b, sampling, rc, secs = r
    runs[name] = dict(pair=pair, dtype=dtype, setting=setting, mode=mode, batch=int(b), sampling=sampling, rc=int(rc),
                      seconds=int(secs), outputs=outputs(name) if rc == "0" else None, stats=stats(name))


def equal_share(name, ref):
    a, b = runs.get(name, {}).get("outputs"), runs.get(ref, {}).get("outputs")
    if not a or not b or len(a) != len(b):
        return None
    return sum(x == y for x, y in zip(a, b)) / len(a)


def pct(x):
    return "–" if x is None else f"{100 * x:.1f} %"


def num(x, f="{:.2f}"):
    return "–" if x is None else f.format(x)


env = dict((r[0], r[1]) for r in tsv(os.path.join(work, "env.tsv")) if len(r) > 1)
floor = dict((r[0], r[1]) for r in tsv(os.path.join(work, "floor.tsv")) if len(r) > 1)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
res = {"env": env, "commit": commit, "equality": {}, "oracle": {}, "graphs": {}, "floor": {}, "serve": {}}
md = [f"# Issue 60 on {env.get('gpu') or env.get('device', '?')}", "",
      f"Commit {commit or '?'}, {env.get('date', '?')}, torch {env.get('torch', '?')}.", ""]

def idle(name):
    d = runs.get(name, {}).get("stats", {}).get("device")
    return d.get("idle_fraction") if isinstance(d, dict) else None


md += ["## Equality with batch-1 plain decoding (default mode, the step runner on)", "",
       "| dtype | sampling | B | = in place plain B 1 | = nonspec B 1 | tok/s | device idle |", "|---|---|--:|--:|--:|--:|--:|"]
for name, r in sorted(runs.items(), key=lambda kv: (kv[1]["sampling"], kv[1]["batch"])):
    if name.startswith("eq-default-"):
        s = r["sampling"]
        a, b = equal_share(name, f"ref-plain-{s}"), equal_share(name, f"ref-nonspec-{s}")
        res["equality"][name] = {"vs_plain_b1": a, "vs_nonspec_b1": b, "tokens_per_s": r["stats"].get("tokens_per_s"),
                                 "device_idle": idle(name)}
        md.append(f"| {r['dtype']} | {s} | {r['batch']} | {pct(a)} | {pct(b)} | {num(r['stats'].get('tokens_per_s'), '{:.1f}')} "
                  f"| {pct(idle(name))} |")
for s in ("greedy", "seeded"):
    x = equal_share(f"ref-plain-{s}", f"ref-nonspec-{s}")
    if x is not None:
        md.append(f"\nIn place plain B 1 against nonspec B 1 ({s}): {pct(x)}.")
        res["equality"][f"plain-vs-nonspec-{s}"] = x

variants = {"var-plain": "in place plain decoding (no draft), the step runner on",
            "var-eager": "default mode, row buckets on, graphs off (eager parts)",
            "var-cublas": "default mode, graphs on, vLLM's batch-invariant cuBLAS settings (EXSPEC_CUBLAS_BATCH_INVARIANT=1)",
            "var-bucket64-plain": "plain decoding B 1, every forward padded to 64 rows (EXSPEC_ROW_BUCKETS=64)",
            "var-bucket64": "default mode, every forward padded to 64 rows (EXSPEC_ROW_BUCKETS=64)"}
var_rows = [(n, r) for n, r in runs.items() if n.startswith("var-")]
if var_rows:
    md += ["", "## What keeps rows batch-invariant (greedy; against batch-1 plain decoding with the step runner on)", "",
           "| run | B | = in place plain B 1 | tok/s | device idle |", "|---|--:|--:|--:|--:|"]
    for name, r in sorted(var_rows):
        what = next((v for k, v in sorted(variants.items(), key=lambda kv: -len(kv[0])) if name.startswith(k + "-")), name)
        a = equal_share(name, "ref-plain-greedy")
        res.setdefault("variants", {})[name] = {"what": what, "vs_plain_b1": a, "tokens_per_s": r["stats"].get("tokens_per_s"),
                                                "device_idle": idle(name)}
        md.append(f"| {what} | {r['batch']} | {pct(a)} | {num(r['stats'].get('tokens_per_s'), '{:.1f}')} | {pct(idle(name))} |")
    x = equal_share("var-bucket64-b8", "var-bucket64-plain-b1")
    if x is not None:
        md.append(f"\nDefault mode B 8 against plain B 1, both padded to 64 rows: {pct(x)}.")
        res["variants"]["bucket64-default-vs-plain"] = x

on_means = "row buckets, eager: a CPU has no graphs" if env.get("device") == "cpu" else "row buckets and CUDA graphs"
md += ["", f"## The step runner on ({on_means}) against off (--row-buckets off --cuda-graphs off: as before issue 60)", "",
       "| run | on: tok/s | off: tok/s | on / off | on: ms a step | off: ms a step | on: device idle | off: device idle |",
       "|---|--:|--:|--:|--:|--:|--:|--:|"]
for label, on, off in (("plain B 1", "ref-plain-greedy", "off-plain-b1"), ("default B 1", "eq-default-b1-greedy", "off-default-b1"),
                       ("default B 8", "eq-default-b8-greedy", "off-default-b8"), ("default B 4", "eq-default-b4-greedy", "off-default-b4")):
    if on in runs and off in runs:
        a, b = runs[on]["stats"], runs[off]["stats"]
        ta, tb = a.get("tokens_per_s"), b.get("tokens_per_s")
        ratio = ta / tb if ta and tb else None
        res["graphs"][label] = {"on_tokens_per_s": ta, "off_tokens_per_s": tb, "on_ms": a.get("ms_per_verify"), "off_ms": b.get("ms_per_verify")}
        md.append(f"| {label} | {num(ta, '{:.1f}')} | {num(tb, '{:.1f}')} | {num(ratio, '{:.2f}×')} "
                  f"| {num(a.get('ms_per_verify'), '{:.3f}')} | {num(b.get('ms_per_verify'), '{:.3f}')} | {pct(idle(on))} | {pct(idle(off))} |")
        if off == "off-default-b8" or off == "off-default-b4":
            same = equal_share(on, off)
            md.append(f"| (answers equal, on vs off) | {pct(same)} | | | | |")

wb, bw = float(floor.get("weight_bytes") or 0), float(floor.get("copy_bandwidth_Bps") or 0)
if wb and bw:
    fl = 1e3 * wb / bw
    step = runs.get("ref-plain-greedy", {}).get("stats", {}).get("ms_per_verify")
    res["floor"] = {"weight_bytes": wb, "copy_bandwidth_Bps": bw, "floor_ms": fl, "plain_b1_ms": step}
    md += ["", "## Batch-1 plain step against its floor", "",
           f"- weights {wb / 1e9:.3f} GB at {bw / 1e12:.2f} TB/s (read + written): floor {fl:.3f} ms",
           f"- in place plain B 1, the step runner on: {num(step, '{:.3f}')} ms a step = {num(step / fl if step else None)}× the floor"]

serve_dir = os.path.join(work, "serve")
if os.path.isdir(serve_dir):
    md += ["", "## Served (exspec serve, bench/serve_bench.py)", "", "| mode | clients | tok/s |", "|---|--:|--:|"]
    for f in sorted(os.listdir(serve_dir)):
        if f.endswith(".json"):
            try:
                r = json.load(open(os.path.join(serve_dir, f), encoding="utf-8"))
            except (OSError, ValueError):
                continue
            mode, c = f[:-5].rsplit("-c", 1)
            res["serve"][f[:-5]] = r.get("output_throughput")
            md.append(f"| {mode} | {c} | {num(r.get('output_throughput'), '{:.1f}')} |")

oracle_rows = [(n, r) for n, r in runs.items() if n.startswith("f32-default-")]
if oracle_rows:
    md += ["", "## float32 against the float64 oracle", "", "| sampling | B | = oracle |", "|---|--:|--:|"]
    for name, r in sorted(oracle_rows, key=lambda kv: (kv[1]["sampling"], kv[1]["batch"])):
        x = equal_share(name, f"oracle-{r['sampling']}")
        res["oracle"][name] = x
        md.append(f"| {r['sampling']} | {r['batch']} | {pct(x)} |")

failed = [n for n, r in runs.items() if r["rc"] != 0]
if failed:
    md += ["", "Failed runs: " + ", ".join(failed)]
    res["failed"] = failed
tests = os.path.join(runs_dir, "tests.log")
if os.path.exists(tests):
    lines = [l.strip() for l in open(tests, encoding="utf-8", errors="replace") if l.startswith(("All tests passed", "test cases:"))]
    rc = open(os.path.join(runs_dir, "tests.rc")).read().strip() if os.path.exists(os.path.join(runs_dir, "tests.rc")) else "?"
    res["tests"] = {"rc": rc, "summary": lines[:1]}
    md += ["", f"Model tests `[step_runner],[inplace][oracle]~[glm]` on the device: rc {rc}, {lines[0] if lines else 'no summary'}"]

os.makedirs(out, exist_ok=True)
open(os.path.join(out, "report.md"), "w", encoding="utf-8").write("\n".join(md) + "\n")
json.dump(res, open(os.path.join(out, "results.json"), "w", encoding="utf-8"), indent=1)
