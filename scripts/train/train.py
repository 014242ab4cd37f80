#!/usr/bin/env python3
"""Trains one model of the demo pair on the corpus that bpe.py encoded, and writes it as a Hugging
Face checkpoint (bfloat16 safetensors, shards of at most 12 MiB) that exspec serves.

Deterministic from --seed on one device kind (torch's deterministic algorithms; a CPU and a GPU run
give different weights). Prints the training loss and the held-out perplexity as it goes, and keeps
the checkpoint of the best held-out loss.
usage: train.py --role target|draft --data DIR --out DIR [--steps N] [--batch B] [--context T]
                [--lr LR] [--seed S] [--max-seconds S] [--last-step N] [--eval-every N] [--device cpu|cuda]
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import SHAPES, Llama  # noqa: E402

SHARD_BYTES = 12 << 20  # the device tool brings back files of at most 16 MiB


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().to("cpu", torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head)
        for b in blobs:
            f.write(b)


def export(model, data, out, context, meta):
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    state = model.hf_state()
    shards, cur, size = [], {}, 0
    for name, t in state.items():
        if cur and size + 2 * t.numel() > SHARD_BYTES:
            shards.append(cur)
            cur, size = {}, 0
        cur[name] = t
        size += 2 * t.numel()
    shards.append(cur)
    if len(shards) == 1:
        write_safetensors(os.path.join(tmp, "model.safetensors"), shards[0])
    else:
        weight_map = {}
        for i, shard in enumerate(shards):
            fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
            write_safetensors(os.path.join(tmp, fname), shard)
            weight_map.update({n: fname for n in shard})
        index = {"metadata": {"total_size": sum(2 * t.numel() for t in state.values())}, "weight_map": weight_map}
        with open(os.path.join(tmp, "model.safetensors.index.json"), "w") as f:
            json.dump(index, f, indent=1)
    vocab = model.vocab
    bos, eos = vocab - 2, vocab - 1
    files = {
        "config.json": model.hf_config(bos, eos, context),
        "generation_config.json": {"bos_token_id": bos, "eos_token_id": eos},
        "tokenizer_config.json": {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
                                  "eos_token": "</s>", "model_max_length": context,
                                  "tokenizer_class": "PreTrainedTokenizerFast"},
        "training.json": meta,
    }
    for name, obj in files.items():
        with open(os.path.join(tmp, name), "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    shutil.copy(os.path.join(data, "tokenizer.json"), os.path.join(tmp, "tokenizer.json"))
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)


def batches(ids, batch, context, gen, device):
    starts = torch.randint(0, len(ids) - context - 1, (batch,), generator=gen)
    x = torch.stack([ids[s:s + context + 1] for s in starts.tolist()]).to(device)
    return x[:, :-1], x[:, 1:]


def held_out_loss(model, held, context, device, amp):
    model.eval()
    n = min(64, (len(held) - 1) // context)
    total = 0.0
    with torch.no_grad(), amp():
        for i in range(0, n, 16):
            x = torch.stack([held[j * context:(j + 1) * context + 1] for j in range(i, min(n, i + 16))]).to(device)
            logits = model(x[:, :-1]).float()
            total += torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                                       reduction="sum").item()
    model.train()
    return total / (n * context)


def time_step(a, vocab, train, device, amp, n=8):
    model = Llama(SHAPES[a.role], vocab).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(0)
    for i in range(n + 2):
        if i == 2:  # the first steps pay for kernel selection and allocation
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.time()
        x, y = batches(train, a.batch, a.context, gen, device)
        with amp():
            loss = torch.nn.functional.cross_entropy(model(x).float().reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.time() - t0) / n


def bar(done, total, width=24):
    fill = int(width * done / max(total, 1))
    return "[" + "#" * fill + "." * (width - fill) + "]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=sorted(SHAPES), required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3000, help="0: as many as --max-seconds allows, timed first")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=0)
    ap.add_argument("--last-step", type=int, default=0, help="stop after this step of the --steps schedule")
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()

    torch.use_deterministic_algorithms(True, warn_only=True)
    device = torch.device(a.device)
    amp = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if device.type == "cuda" else (
        lambda: torch.autocast("cpu", enabled=False))
    train = torch.from_numpy(np.fromfile(os.path.join(a.data, "train.ids"), dtype=np.uint16).astype(np.int64))
    held = torch.from_numpy(np.fromfile(os.path.join(a.data, "heldout.ids"), dtype=np.uint16).astype(np.int64))
    vocab = len(json.load(open(os.path.join(a.data, "tokenizer.json")))["model"]["vocab"])
    if a.steps == 0:  # time a few steps on a scratch model, so that the schedule knows its length
        a.steps = max(10, int(0.9 * a.max_seconds / time_step(a, vocab, train, device, amp)))
        print(f"[{a.role}] --steps 0: {a.steps} steps fit in {a.max_seconds:.0f} s (repeat with --steps {a.steps})",
              file=sys.stderr)
    torch.manual_seed(a.seed)
    model = Llama(SHAPES[a.role], vocab).to(device)
    params = sum(p.numel() for p in model.parameters())
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    warm = max(1, a.steps // 30)
    lr_at = lambda s: a.lr * (s + 1) / warm if s < warm else a.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * (s - warm) / (a.steps - warm))))
    gen = torch.Generator().manual_seed(a.seed)
    print(f"[{a.role}] {params / 1e6:.2f}M parameters, {len(train)} training tokens, {len(held)} held out, "
          f"{a.steps} steps of {a.batch}x{a.context} on {device}", file=sys.stderr, flush=True)
    t0, best, seen, curve = time.time(), float("inf"), 0, []
    for step in range(a.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = batches(train, a.batch, a.context, gen, device)
        with amp():
            logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += x.numel()
        last = step + 1 in (a.steps, a.last_step) or (a.max_seconds and time.time() - t0 > a.max_seconds)
        if (step + 1) % a.eval_every == 0 or last:
            h = held_out_loss(model, held, a.context, device, amp)
            el = time.time() - t0
            curve.append({"step": step + 1, "tokens": seen, "train_loss": round(loss.item(), 4), "heldout_loss": round(h, 4)})
            mark = ""
            if h < best:
                best, mark = h, " *"
                export(model, a.data, a.out, 2 * a.context, {
                    "role": a.role, "shape": SHAPES[a.role], "parameters": params, "seed": a.seed, "step": step + 1,
                    "steps": a.steps, "batch": a.batch, "context": a.context, "lr": a.lr, "device": str(device),
                    "torch": torch.__version__, "heldout_loss": round(h, 4), "heldout_ppl": round(math.exp(h), 2),
                    "curve": curve})
            print(f"[{a.role}] {bar(step + 1, a.steps)} step {step + 1}/{a.steps} loss {loss.item():.3f} "
                  f"held-out ppl {math.exp(h):.1f}{mark} {seen / el / 1e3:.0f}k tok/s {el:.0f}s", file=sys.stderr, flush=True)
        if last:
            break
    print(f"[{a.role}] best held-out perplexity {math.exp(best):.2f}; checkpoint in {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
