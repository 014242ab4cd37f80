#!/usr/bin/env python3
"""Logprobs of sampled generation against `exspec forward` logits, computed here independently.

  logprobs_check.py extend --prompts P --plain A.jsonl --spec B.jsonl --out FULL.jsonl
      checks that speculative sampling (B) equals plain sampling (A) token for token, and writes
      each prompt followed by its generated ids (for `exspec forward`).
  logprobs_check.py compare --prompts P --plain A.jsonl --spec B.jsonl --logits L.safetensors
      log_softmax (float64, torch) of the forward's logits at every generated position must equal
      both runs' logprobs (1e-9), and their top-N ids must be the N largest.
"""
import argparse, json, os, sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_reference import read_safetensors  # noqa: E402


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["extend", "compare"])
    ap.add_argument("--prompts", required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--spec", required=True)
    ap.add_argument("--out")
    ap.add_argument("--logits")
    a = ap.parse_args()
    prompts = [p["prompt_ids"] for p in read_jsonl(a.prompts)]
    plain, spec = read_jsonl(a.plain), read_jsonl(a.spec)
    assert len(plain) == len(spec) == len(prompts), "one output line per prompt"
    for i, (x, y) in enumerate(zip(plain, spec)):
        if x["token_ids"] != y["token_ids"]:
            sys.exit(f"prompt {i}: speculative sampling {y['token_ids']} != plain sampling {x['token_ids']}")
    if a.step == "extend":
        with open(a.out, "w") as f:
            for p, x in zip(prompts, plain):
                f.write(json.dumps({"prompt_ids": p + x["token_ids"]}) + "\n")
        return
    logits, _ = read_safetensors(a.logits)
    worst, n = 0.0, 0
    for i, (p, x) in enumerate(zip(prompts, plain)):
        lsm = torch.log_softmax(logits[f"logits.{i}"], dim=-1)
        for run in (x, spec[i]):
            assert len(run["logprobs"]) == len(run["token_ids"]), f"prompt {i}: one logprob per token"
            for j, (tok, lp) in enumerate(zip(run["token_ids"], run["logprobs"])):
                row = lsm[len(p) - 1 + j]
                assert lp["token_id"] == tok
                worst = max(worst, abs(lp["logprob"] - row[tok].item()))
                top = [t[0] for t in lp["top"]]
                want = torch.topk(row, len(top)).indices.tolist()
                if top != want:
                    sys.exit(f"prompt {i} token {j}: top ids {top} != {want}")
                for t_id, t_lp in lp["top"]:
                    worst = max(worst, abs(t_lp - row[t_id].item()))
                n += 1
    if worst > 1e-9:
        sys.exit(f"logprobs differ from log_softmax of the forward logits by {worst:.3g}")
    print(f"logprobs: {n} tokens, plain and speculative sampling, max |diff| {worst:.2g}")


if __name__ == "__main__":
    main()
