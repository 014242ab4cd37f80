#!/usr/bin/env python3
"""Turns what scripts/gpu-check recorded (gpu-report/) into report.md and results.json.

usage: gpu_check_report.py WORK_DIR REPORT.md RESULTS.json

Exact match is the share of prompts whose generated ids equal the reference's, id for id;
token match is the mean share of each reference's ids matched before the first difference.
References: the float64 oracle (batch-1 plain greedy loop) and, in the same dtype, batch-1
nonspec through the engine (the paper's notion of output equivalence).
"""
import json
import os
import sys

MODES = {"oracle": 0, "nonspec": 1, "eqspec": 2, "exspec": 3, "inplace": 4, "inplace-auto": 5, "inplace-ngram": 6, "nonspec-sync": 7,
         "inplace-auto-sync": 8}


def read_kv(path):
    out = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            key, _, value = line.rstrip("\n").partition("\t")
            out[key] = value
    return out


def read_runs(work):
    rows = []
    path = os.path.join(work, "runs.tsv")
    if not os.path.exists(path):
        return rows
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8:
            continue
        run = dict(kind=f[0], pair=f[1], dtype=f[2], mode=f[3], batch=int(f[4]), name=f[5], rc=int(f[6]),
                   seconds=int(f[7]))
        base = os.path.join(work, "runs", run["name"])
        run["outputs"] = load_outputs(base + ".jsonl") if run["rc"] == 0 else None
        run["stats"] = load_json(base + ".stats.json") if run["rc"] == 0 else None
        if run["rc"] != 0:
            err = open(base + ".err", encoding="utf-8", errors="replace").read().strip().splitlines() \
                if os.path.exists(base + ".err") else []
            said = [l for l in err if "error" in l.lower()]  # not the stack frames after it
            run["error"] = (said or err or ["no output"])[0]
        rows.append(run)
    return rows


def load_outputs(path):
    try:
        lines = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
        return [l["token_ids"] for l in sorted(lines, key=lambda l: l["index"])]
    except (OSError, ValueError, KeyError):
        return None


def load_json(path):
    try:
        return json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError):
        return None


def compare(got, want):
    if got is None or want is None or len(got) != len(want) or not want:
        return None, None
    exact = sum(g == w for g, w in zip(got, want)) / len(want)
    shares = []
    for g, w in zip(got, want):
        n = 0
        while n < min(len(g), len(w)) and g[n] == w[n]:
            n += 1
        shares.append(n / len(w) if w else 1.0)
    return exact, sum(shares) / len(shares)


def pct(x):
    return "–" if x is None else f"{100 * x:.1f} %"


def num(x, fmt="{:.2f}"):
    return "–" if x is None else fmt.format(x)


def annotate(runs):
    """Adds exact/token match against the float64 oracle and the same-dtype batch-1 nonspec run."""
    for r in runs:
        oracle = next((o for o in runs if o["kind"] == r["kind"] and o["pair"] == r["pair"]
                       and o["mode"] == "oracle"), None)
        base = next((o for o in runs if o["kind"] == r["kind"] and o["pair"] == r["pair"]
                     and o["dtype"] == r["dtype"] and o["mode"] == "nonspec" and o["batch"] == 1), None)
        r["exact_vs_f64"], r["tokens_vs_f64"] = compare(r["outputs"], oracle and oracle["outputs"])
        r["exact_vs_b1"], _ = compare(r["outputs"], base and base["outputs"])
        s = r["stats"] or {}
        r["tokens_per_s"] = s.get("tokens_per_s")
        b1 = (base or {}).get("stats") or {}
        r["speedup"] = r["tokens_per_s"] / b1["tokens_per_s"] if r["tokens_per_s"] and b1.get("tokens_per_s") else None


def row_key(r):
    return (r["dtype"] != "float64", r["dtype"], MODES.get(r["mode"], 9), r["batch"])


def spec(r, key):
    s = r["stats"] or {}
    return s.get(key) if r["mode"] not in ("oracle", "nonspec", "nonspec-sync") else None


def floor_section(floor, runs):
    """The batch-1 plain step against the time to read the weights once."""
    if not floor:
        return []
    md = ["", "## Batch-1 plain step against its weight-read floor", ""]
    wb, bw = float(floor.get("weight_bytes") or 0), float(floor.get("copy_bandwidth_Bps") or 0)
    step = next((r for r in runs if r["kind"] == "bench" and r["mode"] == "nonspec" and r["batch"] == 1 and r["stats"]), None)
    ms = step["stats"].get("ms_per_verify") if step else None
    fl = 1e3 * wb / bw if wb and bw else None
    md.append(f"- weights {wb / 1e9:.3f} GB; copy bandwidth {num(bw / 1e12 if bw else None)} TB/s (read + written); "
              f"floor {num(fl, '{:.3f}')} ms")
    md.append(f"- nonspec B=1 ({step['dtype'] if step else '?'}): {num(ms, '{:.3f}')} ms a step = "
              f"{num(ms / fl if ms and fl else None)}× the floor")
    return md


def serve_results(work):
    out = {}
    d = os.path.join(work, "serve")
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if f.endswith(".json"):
            j = load_json(os.path.join(d, f)) or {}
            out[f[:-5]] = {k: j.get(k) for k in ("completed", "num_prompts", "output_throughput", "request_throughput",
                                                  "ttft_ms", "tpot_ms", "e2el_ms", "max_concurrency")}
    return out


def serve_section(serve, work):
    res = serve_results(work)
    if not serve and not res:
        return []
    md = ["", "## Served over HTTP (bench/serve_bench.py, streamed /v1/completions)", "",
          f"Servers: default {serve.get('default_ok', '?')}, nonspec {serve.get('nonspec_ok', '?')}.", "",
          "| clients | default tok/s | nonspec tok/s | default / nonspec | completed (default, nonspec) |", "|--:|--:|--:|--:|--:|"]
    clients = sorted({int(k.split("-c")[-1]) for k in res})
    for c in clients:
        d, n = res.get(f"default-c{c}", {}), res.get(f"nonspec-c{c}", {})
        a, b = d.get("output_throughput"), n.get("output_throughput")
        md.append(f"| {c} | {num(a, '{:.1f}')} | {num(b, '{:.1f}')} | {num(a / b if a and b else None, '{:.2f}×')} "
                  f"| {d.get('completed', '–')}/{d.get('num_prompts', '–')}, {n.get('completed', '–')}/{n.get('num_prompts', '–')} |")
    return md


def main():
    work, report_path, results_path = sys.argv[1:4]
    env, build, test, glm, rest, models, floor, serve = (
        read_kv(os.path.join(work, f + ".tsv"))
        for f in ("env", "build", "test", "test-glm", "tests-rest", "models", "floor", "serve"))
    runs = read_runs(work)
    annotate(runs)
    device = env.get("device", "?")
    md = [f"# exspec gpu-check: {device}" + (" (quick)" if env.get("quick") == "1" else ""), ""]
    if device == "cpu":
        md += ["**CPU dry run**: proves the script end to end; no figure below is a GPU figure.", ""]
    md += ["## Machine", ""]
    for k in ("date", "gpu", "host_cpu", "cores", "os", "torch", "nvcc", "compiler", "cmake", "glibc", "gpu_deps"):
        if env.get(k):
            md.append(f"- {k}: {env[k]}")
    md += ["", "## Build", ""]
    if build:
        md.append(f"- ok: {build.get('ok', '?')}; configure {build.get('configure_s', '?')} s, build "
                  f"{build.get('build_s', '?')} s (targets exspec, model_tests; -DEXSPEC_WITH_HTTP={build.get('http', 'OFF')})")
        if build.get("http") == "ON":
            md.append(f"- libraries from gpu-deps: {build.get('deps_libs', '?')}; not found: {build.get('missing_libs') or 'none'}")
        md.append(f"- libtorch: {build.get('torch_prefix', '?')}; C++{build.get('cxx_std', '?')}; "
                  f"exspec binary {build.get('exspec_size', '?')}; links {build.get('torch_libs', '?')}")
    else:
        md.append("- not run in this report's steps")
    md += ["", "## Model tests on the device (the float64 oracle tests first, then the rest)", ""]
    for part in (test, glm, rest):
        if part:
            md.append(f"- filter {part.get('filter')}: rc {part.get('rc')} in {part.get('seconds')} s: {part.get('summary')}")
            if part.get("failed"):
                md += ["", "```", part["failed"][:2000], "```"]
    if not (test or glm or rest):
        md.append("- not run in this report's steps")
    for k, v in sorted(models.items()):
        md.append(f"- models: {k} {v} s")

    match = sorted((r for r in runs if r["kind"] == "match"), key=row_key)
    if match:
        md += ["", f"## Exact match against the float64 oracle ({match[0]['pair']} pair)", "",
               "| dtype | mode | B | exact vs float64 | tokens vs float64 | exact vs same-dtype B=1 nonspec | acceptance | tokens/s |",
               "|---|---|--:|--:|--:|--:|--:|--:|"]
        for r in match:
            if r["rc"] != 0:
                md.append(f"| {r['dtype']} | {r['mode']} | {r['batch']} | failed: {r['error'][:80]} | | | | |")
                continue
            md.append(f"| {r['dtype']} | {r['mode']} | {r['batch']} | {pct(r['exact_vs_f64'])} | {pct(r['tokens_vs_f64'])} "
                      f"| {pct(r['exact_vs_b1'])} | {pct(spec(r, 'acceptance_rate'))} | {num(r['tokens_per_s'], '{:.1f}')} |")
    bench = sorted((r for r in runs if r["kind"] == "bench"), key=row_key)
    if bench:
        md += ["", f"## Throughput ({bench[-1]['pair']} pair, {bench[-1]['dtype']})", ""]
        if env.get("bench_note"):
            md += [f"Timing: {env['bench_note']}.", ""]
        md += ["| mode | B | tokens/s | vs nonspec B=1 | acceptance | tokens/verify | grouping | overhead share "
               "| ms/verify | exact vs B=1 nonspec | exact vs float64 |",
               "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
        for r in bench:
            if r["rc"] != 0:
                md.append(f"| {r['mode']} ({r['dtype']}) | {r['batch']} | failed: {r['error'][:80]} | | | | | | | | |")
                continue
            s = r["stats"] or {}
            md.append(f"| {r['mode']}{' (' + r['dtype'] + ')' if r['mode'] == 'oracle' else ''} | {r['batch']} "
                      f"| {num(r['tokens_per_s'], '{:.1f}')} | {num(r['speedup'], '{:.2f}×')} "
                      f"| {pct(spec(r, 'acceptance_rate'))} | {num(spec(r, 'tokens_per_verification'))} "
                      f"| {pct(spec(r, 'grouping_rate'))} | {pct(spec(r, 'overhead_share'))} "
                      f"| {num(s.get('ms_per_verify') if r['mode'] != 'oracle' else None)} | {pct(r['exact_vs_b1'])} | {pct(r['exact_vs_f64'])} |")
        ex8 = next((r for r in bench if r["mode"] == "exspec" and r["batch"] == 8 and r["speedup"]), None)
        if ex8:
            md += ["", f"Headline: exspec at B=8 runs {ex8['speedup']:.2f}× batch-1 nonspec "
                       "(the paper's bar: ≥ 3× on an A100 in fp16)."]
    md += floor_section(floor, runs) + serve_section(serve, work)
    failed = [r for r in runs if r["rc"] != 0]
    if failed:
        md += ["", "## Failed runs", ""] + [f"- {r['name']}: rc {r['rc']}: {r['error'][:200]}" for r in failed]
    md.append("")
    with open(report_path, "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    for r in runs:
        r.pop("outputs", None)
    with open(results_path, "w", encoding="utf-8") as f:
        json.dump({"env": env, "build": build, "test": test, "test_glm": glm, "models": models, "floor": floor,
                   "serve": serve_results(work), "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()
