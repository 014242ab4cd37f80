#!/usr/bin/python3
"""Compares the reference grid's outputs (tests/reference/grid.sh) with the float64 reference:
for every checkpoint in GRID/grid.json and every path, GRID/NAME/PATH.jsonl must hold the
reference's greedy ids and finish reason for each prompt, and GRID/NAME/check.txt must say that
`exspec check` passed. Prints a table (one row a checkpoint, one column a path) and every
mismatch with its first differing position.

  grid_check.py --grid DIR --prompts P.jsonl --max-tokens N --paths a,b,c
Exit status: 0 all match, 1 a mismatch, 2 unreadable input.
"""
import argparse, json, os, sys

import torch

from hf_reference import Model, UsageError, eos_ids, greedy, load_weights, read_json, read_jsonl


def first_difference(theirs, ours):
    return next((j for j, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))


def compare_path(path_file, expected):
    """None when the file holds the expected ids; else a description of the first difference."""
    try:
        lines = read_jsonl(path_file)
    except UsageError as e:
        return str(e)
    got = {rec.get("index"): rec for rec in lines}
    for i, (toks, reason, margins) in enumerate(expected):
        rec = got.get(i)
        if rec is None:
            return f"no line for prompt {i}"
        theirs = rec.get("token_ids") if isinstance(rec.get("token_ids"), list) else []
        if theirs != toks:
            at = first_difference(theirs, toks)
            pick = lambda xs: xs[at] if at < len(xs) else "<end>"
            margin = f", reference margin {margins[at]:.2e}" if at < len(margins) else ""
            return f"prompt {i}: token {at} is {pick(theirs)}, reference {pick(toks)}{margin}"
        if rec.get("finish_reason") != reason:
            return f"prompt {i}: finish_reason {rec.get('finish_reason')!r}, reference {reason!r}"
    if len(got) != len(expected):
        return f"{len(got)} lines for {len(expected)} prompts"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", required=True)
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--max-tokens", type=int, required=True)
    ap.add_argument("--paths", required=True)
    args = ap.parse_args()
    paths = args.paths.split(",")
    try:
        names = read_json(os.path.join(args.grid, "grid.json"))
        prompts = [rec["prompt_ids"] for rec in read_jsonl(args.prompts)]
        failures, rows = [], []
        for name in names:
            d = os.path.join(args.grid, name)
            cfg = read_json(os.path.join(d, "config.json"))
            model, eos = Model(cfg, load_weights(d)), eos_ids(d, cfg)
            expected = [greedy(model, p, args.max_tokens, eos) for p in prompts]
            cells = []
            for p in paths:
                problem = compare_path(os.path.join(d, p + ".jsonl"), expected)
                cells.append("ok" if problem is None else "FAIL")
                if problem:
                    failures.append(f"{name} {p}: {problem}")
            with open(os.path.join(d, "check.txt")) as f:
                check = f.read()
            passed = "check FAILED" not in check and "check: passed" in check
            cells.append("ok" if passed else "FAIL")
            if not passed:
                failures.append(f"{name} exspec check: {check.strip().splitlines()[-1] if check.strip() else 'no output'}")
            rows.append((name, cells))
    except (UsageError, KeyError, OSError) as e:
        print(f"grid_check.py: {e}", file=sys.stderr)
        return 2
    width = max(len(n) for n, _ in rows)
    print(" " * width + "  " + "  ".join(paths + ["check"]))
    for name, cells in rows:
        print(name.ljust(width) + "  " + "  ".join(c.ljust(len(h)) for c, h in zip(cells, paths + ["check"])))
    for f in failures:
        print("MISMATCH " + f, file=sys.stderr)
    total = len(rows) * (len(paths) + 1)
    print(f"grid: {total - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    with torch.no_grad():
        sys.exit(main())
