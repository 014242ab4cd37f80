#!/usr/bin/python3
"""Exact match of lower precisions against the float64 oracle and against float32.

Runs `exspec generate` on a prompt set in float64 (the oracle loop), float32 and bfloat16, and
reports for each pair of runs the share of sequences whose tokens are identical, and the mean
share of each sequence that matches before the first difference. Standard library only.

  bench/dtype_match.py --exspec build/exspec --model models/demo [--draft models/demo-draft]
                       [--prompts bench/prompts/mixed.jsonl] [--n 32] [--max-tokens 32]
"""
import argparse, json, os, subprocess, sys, tempfile


def generate(args, dtype, extra):
    cmd = [args.exspec, "generate", "--model", args.model, "--dtype", dtype, "--max-tokens",
           str(args.max_tokens), "--prompts-file", args.prompts_subset] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [r["token_ids"] for r in sorted(rows, key=lambda r: r["index"])]


def compare(a, b):
    exact = sum(x == y for x, y in zip(a, b)) / len(a)
    prefix = 0.0
    for x, y in zip(a, b):
        n = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
        prefix += n / max(len(x), 1)
    return exact, prefix / len(a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exspec", default="build/exspec")
    ap.add_argument("--model", required=True)
    ap.add_argument("--draft")
    ap.add_argument("--prompts", default="bench/prompts/mixed.jsonl")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=32)
    args = ap.parse_args()
    with open(args.prompts) as f:
        lines = [l for l in f if l.strip()][: args.n]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as tmp:
        for l in lines:
            tmp.write(json.dumps({"prompt_ids": json.loads(l)["prompt_ids"]}) + "\n")
    args.prompts_subset = tmp.name
    try:
        runs = {"float64 oracle": generate(args, "float64", ["--oracle"])}
        for dt in ("float32", "bfloat16"):
            runs[dt + " nonspec B=1"] = generate(args, dt, ["--mode", "nonspec", "--batch", "1"])
            if args.draft:
                runs[dt + " exspec B=8"] = generate(args, dt, ["--mode", "exspec", "--batch", "8", "--draft",
                                                               args.draft])
    finally:
        os.unlink(tmp.name)
    print(f"{len(lines)} prompts x {args.max_tokens} tokens, model {args.model}")
    print("exact: share of sequences identical; prefix: mean share of a sequence before its first difference")
    print("| run | vs float64 oracle (exact / prefix) | vs float32 nonspec B=1 | vs its own dtype's nonspec B=1 |")
    print("|---|--:|--:|--:|")
    for name, toks in runs.items():
        cells = [compare(toks, runs[ref]) for ref in ("float64 oracle", "float32 nonspec B=1",
                                                      name.split()[0] + " nonspec B=1" if "B=" in name else name)]
        print(f"| {name} | " + " | ".join(f"{e:.0%} / {p:.0%}" for e, p in cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
