#!/usr/bin/env python3
"""Resident memory of `exspec serve` against the bytes of the weights it serves (issue 51): for each
model and each case (a dtype, or any serve flags), the peak during load (VmHWM once the server says
ready) and the resident memory at rest after one request (VmRSS), each the median of --reps starts.

The yardstick is the checkpoint's own count: its parameters times the served dtype's element size
(read from the safetensors headers, a tied head counted once), not what the server says it holds.
The process itself (libtorch, oneDNN, CAF, Beast: about 210 MB) is taken out as the first model's
figure in the same case (the demo target, whose own weights are small), as the issue measures it;
the table also shows the stricter figure that takes the baseline's weights and KV store out first.

usage: bench/memory_bench.py [--exspec build/exspec] [--model NAME=DIR ...] [--case LABEL=FLAGS ...]
           [--kv-cache-memory 16M] [--reps 3] [--out result.json] [--markdown table.md]
Defaults: --model demo=demo/target --model 150m=models/m150 (`exspec make-model --arch llama
--preset 150m --dtype bfloat16 --out models/m150`); --model pair=demo/target+demo/draft serves a
target with its draft. --case bfloat16='--dtype bfloat16' --case float32='--dtype float32'.
int8 weights: add a case with the flags that select them, e.g. --case int8='--dtype bfloat16
--weights int8' (a case whose label is not a float dtype takes its weight bytes from the server's
start-up line, which counts scales and padding).
Standard library only. Run it alone on the machine (flock /work/.heavy.lock on a shared one).
"""
import argparse, json, os, re, shlex, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "train"))
from safetensors_np import read_header  # noqa: E402

ELEMENT = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2}
MIB = 1024.0 * 1024.0


def checkpoint_parameters(model_dir):
    """Parameters of a checkpoint directory from its safetensors headers (all shards)."""
    n = 0
    for name in sorted(os.listdir(model_dir)):
        if not name.endswith(".safetensors"):
            continue
        for entry in read_header(os.path.join(model_dir, name))[0].values():
            count = 1
            for d in entry["shape"]:
                count *= d
            n += count
    return n


def proc_status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if v.strip().endswith("kB"):
                out[k] = int(v.split()[0]) * 1024
    return out


def serve_once(exspec, target, draft, flags, kv):
    """Starts a server, returns {peak, rest, weights_logged, kv_logged} in bytes."""
    log = tempfile.NamedTemporaryFile(prefix="memory_bench_", suffix=".log", delete=False)
    cmd = [exspec, "serve", "--model", target, "--draft", draft or "", "--port", "0", "--kv-cache-memory", kv]
    cmd += shlex.split(flags)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.time() + 600
        text = ""
        while "exspec serve: ready" not in text:
            if p.poll() is not None or time.time() > deadline:
                raise RuntimeError("server did not start: %s\n%s" % (" ".join(cmd), open(log.name).read()))
            time.sleep(0.05)
            text = open(log.name).read()
        peak = proc_status(p.pid)["VmHWM"]
        url = re.search(r"listening on (http://[0-9.:]+)", text).group(1)
        body = json.dumps({"prompt": "Once upon a time", "max_tokens": 16}).encode()
        req = urllib.request.Request(url + "/v1/completions", body, {"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=300).read()
        time.sleep(1.0)
        rest = proc_status(p.pid)["VmRSS"]
        text = open(log.name).read()
        logged = {m.group(1): (int(m.group(2)), m.group(3))
                  for m in re.finditer(r"exspec: memory: (\w+) weights (\d+) bytes .*?KV store (\d+|per batch)", text)}
        weights = sum(w for w, _ in logged.values()) if logged else None
        kv_bytes = sum(int(k) for _, k in logged.values() if k.isdigit()) if logged else None
        return {"peak": peak, "rest": rest, "weights_logged": weights, "kv_logged": kv_bytes}
    finally:
        p.terminate()
        p.wait(timeout=60)
        os.unlink(log.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exspec", default="build/exspec")
    ap.add_argument("--model", action="append", help="NAME=DIR or NAME=TARGET+DRAFT; the first is the baseline")
    ap.add_argument("--case", action="append", help="LABEL=SERVE FLAGS")
    ap.add_argument("--kv-cache-memory", default="16M")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    models = [m.split("=", 1) for m in (a.model or ["demo=demo/target", "150m=models/m150"])]
    cases = [c.split("=", 1) for c in (a.case or ["bfloat16=--dtype bfloat16", "float32=--dtype float32"])]
    rows = []
    for label, flags in cases:
        base = None
        for name, dirs in models:
            target, _, draft = dirs.partition("+")
            runs = [serve_once(a.exspec, target, draft, flags, a.kv_cache_memory) for _ in range(a.reps)]
            med = lambda k: statistics.median(r[k] for r in runs)
            spread = lambda k: (min(r[k] for r in runs), max(r[k] for r in runs))
            params = sum(checkpoint_parameters(d) for d in (target, draft) if d)
            weights = params * ELEMENT[label] if label in ELEMENT else runs[0]["weights_logged"]
            row = {"case": label, "flags": flags, "model": name, "dirs": dirs, "parameters": params,
                   "weight_bytes": weights, "weights_logged": runs[0]["weights_logged"], "kv_logged": runs[0]["kv_logged"],
                   "rest": med("rest"), "rest_range": spread("rest"), "peak": med("peak"), "peak_range": spread("peak")}
            if base is None:
                base = row
            elif not draft:  # a pair's figures are shown as they are: its draft has a KV store of its own
                for k in ("rest", "peak"):
                    row[k + "_less_base"] = row[k] - base[k]
                    row[k + "_ratio"] = row[k + "_less_base"] / weights
                    # The stricter process figure: the baseline less its own weights and KV store.
                    if base["weights_logged"] is not None and base["kv_logged"] is not None:
                        process = base[k] - base["weights_logged"] - base["kv_logged"]
                        row[k + "_strict_ratio"] = (row[k] - process - (row["kv_logged"] or 0)) / weights
            rows.append(row)
            print(json.dumps(row), flush=True)
    table = markdown(rows, a.exspec, a.kv_cache_memory, a.reps)
    print(table)
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rows": rows, "kv_cache_memory": a.kv_cache_memory, "reps": a.reps}, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)


def markdown(rows, exspec, kv, reps):
    mb = lambda b: "%.0f" % (b / 1e6)
    ratio = lambda r, k: ("%.2f×" % r[k]) if k in r else "—"
    out = ["| case | model | weight bytes (params × size) | at rest, MB (range) | less baseline / weights | strict | "
           "load peak, MB (range) | less baseline / weights | strict |", "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        out.append("| %s | %s | %s MB | %s (%s–%s) | %s | %s | %s (%s–%s) | %s | %s |" % (
            r["case"], r["model"], mb(r["weight_bytes"]), mb(r["rest"]), mb(r["rest_range"][0]), mb(r["rest_range"][1]),
            ratio(r, "rest_ratio"), ratio(r, "rest_strict_ratio"), mb(r["peak"]), mb(r["peak_range"][0]),
            mb(r["peak_range"][1]), ratio(r, "peak_ratio"), ratio(r, "peak_strict_ratio")))
    out.append("")
    out.append("`%s serve --model M [--draft D] --kv-cache-memory %s FLAGS`, median of %d starts; baseline: the "
               "first model in the same case; strict: less the baseline's process alone (its RSS less its weights "
               "and KV store) and this model's KV store." % (exspec, kv, reps))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
