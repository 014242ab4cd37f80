#!/usr/bin/env python3
"""How often the demo draft's greedy token equals the target's along held-out text (teacher
forced: both read the same true prefix), overall, by position in the document and by document.
That is the acceptance a greedy speculative step would see on that text, token by token.
usage: agreement.py TARGET_DIR DRAFT_DIR CORPUS_DIR [--docs N]   (float32 on the CPU)
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import Llama  # noqa: E402
from safetensors_np import read_arrays  # noqa: E402


def read_safetensors(path):
    return {name: torch.from_numpy(a.astype(np.float32)) for name, a in read_arrays(path).items()}


def load(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    shape = dict(hidden=cfg["hidden_size"], layers=cfg["num_hidden_layers"], heads=cfg["num_attention_heads"],
                 kv_heads=cfg["num_key_value_heads"], head_dim=cfg["head_dim"], intermediate=cfg["intermediate_size"])
    model = Llama(shape, cfg["vocab_size"])
    tensors = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".safetensors"):
            tensors.update(read_safetensors(os.path.join(folder, name)))
    state = model.hf_state()
    with torch.no_grad():
        for name, p in state.items():
            p.copy_(tensors[name])
    return model.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target")
    ap.add_argument("draft")
    ap.add_argument("corpus")
    ap.add_argument("--docs", type=int, default=60)
    ap.add_argument("--context", type=int, default=512)
    a = ap.parse_args()
    target, draft = load(a.target), load(a.draft)
    ids = np.fromfile(os.path.join(a.corpus, "heldout.ids"), dtype=np.uint16).astype(np.int64)
    bos = target.vocab - 2
    starts = [int(i) for i in np.flatnonzero(ids == bos)][: a.docs]
    buckets = [(0, 8), (8, 32), (32, 128), (128, 512)]
    hits = {b: [0, 0] for b in buckets}
    per_doc = []
    with torch.no_grad():
        for s in starts:
            end = s + 1
            while end < len(ids) and ids[end] != bos and end - s < a.context:
                end += 1
            x = torch.from_numpy(ids[s:end])[None]
            same = (target(x).argmax(-1) == draft(x).argmax(-1))[0].tolist()
            per_doc.append(sum(same) / len(same))
            for pos, ok in enumerate(same):
                for b in buckets:
                    if b[0] <= pos < b[1]:
                        hits[b][0] += ok
                        hits[b][1] += 1
    total = sum(h[0] for h in hits.values()) / sum(h[1] for h in hits.values())
    print(f"greedy agreement, draft vs target, {len(per_doc)} held-out documents: {total:.1%}")
    for b, (k, n) in hits.items():
        if n:
            print(f"  positions {b[0]:>3}-{b[1] - 1:<3}: {k / n:.1%} of {n}")
    q = np.percentile(per_doc, [10, 50, 90])
    print(f"  by document: 10th percentile {q[0]:.1%}, median {q[1]:.1%}, 90th {q[2]:.1%}")


if __name__ == "__main__":
    main()
