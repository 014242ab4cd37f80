#!/usr/bin/env python3
"""What int8 weights cost in accuracy (issue 47), on the demo pair's held-out text: each document
from <s> up to --context tokens, teacher forced (every model reads the true text), logits from
`exspec forward` in each dtype. Prints, per model and dtype, the perplexity of the true next
token; against float32, how often the greedy (top-1) token is the same; and for each dtype how
often the draft's greedy token is the target's (the acceptance a greedy step would see there,
as scripts/train/agreement.py measures it in PyTorch).

The held-out text: scripts/train-demo --stage corpus (or scripts/train/corpus.py) writes
DATA/heldout.txt; it is tokenized here with the target's tokenizer.json, as the trainer did.
usage: bench/int8_accuracy.py EXSPEC DATA/heldout.txt TARGET_DIR DRAFT_DIR
       [--docs N] [--context 512] [--dtypes float32,bfloat16,int8] [--batch 16] [--json OUT]
Needs Debian's python3-numpy (/usr/bin/python3).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "train"))
import bpe  # noqa: E402  (the trainer's own BPE: the same ids as heldout.ids)
from safetensors_np import read_arrays  # noqa: E402


def documents(path, model_dir, context, limit):
    tok = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in tok["model"]["merges"]]
    specials = {t["content"]: t["id"] for t in tok.get("added_tokens", [])}
    encode_word = bpe.encoder(merges, vocab)
    docs = []
    for doc in open(path, encoding="ascii").read().split(f"\n{bpe.SEP}\n"):
        ids = [specials["<s>"]]
        for w in bpe.words_of(doc):
            ids += encode_word(w)
        ids.append(specials["</s>"])
        docs.append(ids[:context])
    return docs[:limit] if limit > 0 else docs


def read_logits(path):
    """exspec forward's output: logits.{i} [T_i, vocab] float64."""
    out = {int(name.split(".")[1]): a for name, a in read_arrays(path, lambda n: n.startswith("logits.")).items()}
    return [out[i] for i in range(len(out))]


def forward(exspec, model, dtype, docs):
    """Per document: (log-probability of each true next token, the greedy token at each position)."""
    with tempfile.TemporaryDirectory() as tmp:
        prompts, out = os.path.join(tmp, "p.jsonl"), os.path.join(tmp, "l.safetensors")
        with open(prompts, "w") as f:
            for d in docs:
                f.write(json.dumps({"prompt_ids": d}) + "\n")
        subprocess.run([exspec, "forward", "--model", model, "--dtype", dtype, "--prompts-file", prompts, "--out", out,
                        "--torch-threads", "2"], check=True, stderr=subprocess.DEVNULL)
        res = []
        for d, lg in zip(docs, read_logits(out)):
            lse = np.log(np.exp(lg - lg.max(-1, keepdims=True)).sum(-1)) + lg.max(-1)
            true = np.asarray(d[1:])
            res.append((lg[np.arange(len(d) - 1), true] - lse[:-1], lg.argmax(-1)))
        return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exspec")
    ap.add_argument("heldout")
    ap.add_argument("target")
    ap.add_argument("draft")
    ap.add_argument("--docs", type=int, default=0, help="documents (0: all)")
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--dtypes", default="float32,bfloat16,int8")
    ap.add_argument("--batch", type=int, default=16, help="documents a forward")
    ap.add_argument("--json")
    a = ap.parse_args()
    docs = documents(a.heldout, a.target, a.context, a.docs)
    dtypes = a.dtypes.split(",")
    runs = {}
    for role, model in (("target", a.target), ("draft", a.draft)):
        for dt in dtypes:
            r = []
            for i in range(0, len(docs), a.batch):
                r += forward(a.exspec, model, dt, docs[i:i + a.batch])
            runs[role, dt] = r
    report = {"documents": len(docs), "tokens": sum(len(d) - 1 for d in docs), "context": a.context, "models": {}}
    print(f"{len(docs)} held-out documents, {report['tokens']} predicted tokens (context {a.context})")
    print(f"{'model':7} {'dtype':9} {'perplexity':>10} {'vs float32':>11} {'top-1 = float32':>16}")
    for role in ("target", "draft"):
        base = runs.get((role, "float32"))
        for dt in dtypes:
            r = runs[role, dt]
            nll = -np.concatenate([lp for lp, _ in r]).mean()
            ppl = float(np.exp(nll))
            row = {"perplexity": round(ppl, 4)}
            same = ""
            if base is not None:
                b_ppl = float(np.exp(-np.concatenate([lp for lp, _ in base]).mean()))
                row["perplexity_vs_float32"] = round(ppl / b_ppl - 1, 6)
                eq = np.concatenate([g == bg for (_, g), (_, bg) in zip(r, base)])
                row["top1_agreement_with_float32"] = round(float(eq.mean()), 6)
                same = f"{100 * eq.mean():.2f} %"
            report["models"].setdefault(role, {})[dt] = row
            print(f"{role:7} {dt:9} {ppl:10.3f} {100 * row.get('perplexity_vs_float32', 0):+10.3f}% {same:>16}")
    print("draft's greedy token = the target's, same dtype (greedy acceptance along the text):")
    for dt in dtypes:
        eq = np.concatenate([tg == dg for (_, tg), (_, dg) in zip(runs["target", dt], runs["draft", dt])])
        report.setdefault("draft_agreement", {})[dt] = round(float(eq.mean()), 6)
        print(f"  {dt:9} {100 * eq.mean():.2f} %")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
