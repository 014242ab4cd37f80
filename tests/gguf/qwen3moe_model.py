#!/usr/bin/python3
"""Writes a tiny random Qwen3-MoE checkpoint (Qwen3MoeForCausalLM, config.json's keys and tensor
names as Hugging Face's) with the demo target's byte-level BPE tokenizer and its vocabulary, for
checking tests/reference/hf_reference.py and write_gguf.py against llama.cpp (qwen3moe_agree.py).

The router's rows are drawn wide enough that tokens' expert probabilities spread (a router of
small weights would route every token near-uniformly and the choice of experts would not matter);
the experts and the head no wider than that: wider ones make the random model chaotic, so that
llama.cpp's float16 keys and values and quantised activations move its logits far (measured in
qwen3moe_agree.py's figures). Written with numpy alone (write_grid.py's writer).

usage: qwen3moe_model.py OUT_DIR [--seed N] [--hidden H] [--head-dim D] [--moe-intermediate M] [--layers L]
                         [--experts E] [--top-k K] [--mlp-only-layers I,J] [--attention-bias]
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "reference"))
from write_grid import write_model  # noqa: E402

DEMO = os.path.join(here, "..", "..", "demo", "target")
HEADS, KV_HEADS = 4, 2


def config(a, vocab):
    demo = json.load(open(os.path.join(DEMO, "config.json")))
    return {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": a.hidden,
        "intermediate_size": 2 * a.hidden, "num_hidden_layers": a.layers, "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS, "head_dim": a.head_dim, "vocab_size": vocab, "max_position_embeddings": 1024,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_scaling": None, "hidden_act": "silu",
        "attention_bias": a.attention_bias, "tie_word_embeddings": False, "use_sliding_window": False,
        "num_experts": a.experts, "num_experts_per_tok": a.top_k, "moe_intermediate_size": a.moe_intermediate,
        "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": a.mlp_only_layers,
        "torch_dtype": "float32", "bos_token_id": demo["bos_token_id"], "eos_token_id": demo["eos_token_id"],
    }


def tensors(rng, cfg):
    """{HF name: float32 array}: norms near 1, matrices of spread 1/sqrt(fan-in) times a gain."""
    H, V, E, M, I, hd = (cfg["hidden_size"], cfg["vocab_size"], cfg["num_experts"], cfg["moe_intermediate_size"],
                         cfg["intermediate_size"], cfg["head_dim"])
    mat = lambda rows, cols, gain=1.0: rng.normal(0.0, gain / np.sqrt(cols), (rows, cols))
    norm = lambda n: 1.0 + rng.normal(0.0, 0.1, (n,))
    q_out, kv_out = HEADS * hd, KV_HEADS * hd
    t = {"model.embed_tokens.weight": rng.normal(0.0, 1.0, (V, H)), "model.norm.weight": norm(H),
         "lm_head.weight": mat(V, H, 2.0)}
    for i in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{i}.", f"model.layers.{i}.self_attn."
        t[p + "input_layernorm.weight"], t[p + "post_attention_layernorm.weight"] = norm(H), norm(H)
        t[a + "q_proj.weight"], t[a + "k_proj.weight"] = mat(q_out, H), mat(kv_out, H)
        t[a + "v_proj.weight"], t[a + "o_proj.weight"] = mat(kv_out, H), mat(H, q_out)
        t[a + "q_norm.weight"], t[a + "k_norm.weight"] = norm(hd), norm(hd)
        if cfg["attention_bias"]:
            for proj, rows in (("q", q_out), ("k", kv_out), ("v", kv_out), ("o", H)):
                t[a + proj + "_proj.bias"] = rng.normal(0.0, 0.1, (rows,))
        if i in cfg["mlp_only_layers"]:
            t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = mat(I, H), mat(I, H)
            t[p + "mlp.down_proj.weight"] = mat(H, I)
            continue
        t[p + "mlp.gate.weight"] = mat(E, H, 3.0)  # logits of spread 3 over the experts
        for e in range(E):
            x = f"{p}mlp.experts.{e}."
            t[x + "gate_proj.weight"], t[x + "up_proj.weight"] = mat(M, H), mat(M, H)
            t[x + "down_proj.weight"] = mat(H, M)
    return {k: v.astype(np.float32) for k, v in t.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--head-dim", type=int, default=16)
    ap.add_argument("--moe-intermediate", type=int, default=32)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--mlp-only-layers", type=lambda s: [int(i) for i in s.split(",") if i], default=[])
    ap.add_argument("--attention-bias", action="store_true")
    a = ap.parse_args()
    vocab = json.load(open(os.path.join(DEMO, "config.json")))["vocab_size"]
    cfg = config(a, vocab)
    write_model(a.out, cfg, tensors(np.random.default_rng(a.seed), cfg))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(DEMO, name), os.path.join(a.out, name))
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": cfg["bos_token_id"], "eos_token_id": cfg["eos_token_id"]}, f, indent=2)


if __name__ == "__main__":
    main()
