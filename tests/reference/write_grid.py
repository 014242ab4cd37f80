#!/usr/bin/python3
"""Writes the reference grid: tiny Hugging Face checkpoints for every architecture exspec loads,
over the shape families where decoders go wrong (1 / 2 / all key-value heads, head_dim equal to
and different from hidden / heads, GLM's partial rotary 0.5 and 1.0, tied and untied embeddings,
with and without attention biases, Mistral's sliding window, Gemma 3's layers of two kinds,
Qwen3-MoE's layers of experts, Phi-3's longrope, Gemma 2's soft-capping), each with a draft made
of its first layer.

Written here from the Hugging Face config keys and tensor names alone, with numpy: it shares no
code with `exspec make-model`, so a fault in how exspec writes or reads a checkpoint cannot hide
itself in both.

  write_grid.py --out DIR [--only NAME]
Writes DIR/NAME (target) and DIR/NAME-draft for each grid entry and DIR/grid.json (the names).
"""
import argparse, json, os, struct

import numpy as np

VOCAB, HIDDEN, HEADS, INTER, LAYERS = 300, 48, 4, 64, 2
DAMP = 0.2  # layers after the first: a one-layer draft then agrees on roughly half the tokens
CLASSES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
           "glm": "GlmForCausalLM", "glm4": "Glm4ForCausalLM", "mistral": "MistralForCausalLM",
           "phi3": "Phi3ForCausalLM", "gemma3": "Gemma3ForCausalLM", "qwen3moe": "Qwen3MoeForCausalLM",
           "gemma2": "Gemma2ForCausalLM"}
# Mistral's and Phi-3's sliding window: shorter than the longest prompt, so that prefill, padded
# batches and decoding all meet keys the window has passed. Neither has biases: their "bias"
# rows have none. Phi-3 takes the rows' partial rotary factor (rotate-half over those dims).
# Qwen2's and Qwen3's tied rows switch their window on for the layers from the first on.
# Gemma 3's layer 0 slides (its local rope) and layer 1 is full (sliding_window_pattern 2), without
# biases, its scores scaled by a query_pre_attn_scalar of 1.5 head_dim; its tied rows scale the
# full layers' rope linearly, as Gemma 3 4B and up do.
WINDOW = 5
# Qwen3-MoE (Qwen3's attention): 4 experts of EXPERT_INTER, 2 a row, on both layers, the top two
# renormalised; and, untied, only on layer 1 (decoder_sparse_step 2) with the softmax's own
# weights. Its first two rows only: the others add no expert case.
EXPERTS, EXPERT_INTER = 4, 32
# Phi-3's longrope (Phi-3-128k, Phi-3.5, Phi-4-mini), one extra row on its second shape (partial
# rotary 0.5: 8 rotary dims, 4 factors a list): pretrained on 64 positions of 256 (attention
# factor sqrt(1 + ln 4 / ln 64)), so the grid's sequences (17 + 24 at most) stay within the
# original context and take the short factors, as exspec's default --longrope short serves them.
# Neither list's factors are float32 values: the reference rounds them as HF does.
LONGROPE = {"original_max_position_embeddings": 64,
            "rope_scaling": {"rope_type": "longrope", "short_factor": [1.0, 1.19, 1.53, 2.41],
                             "long_factor": [1.0, 2.3, 5.7, 11.9]}}

# (kv heads, head_dim, tied, bias, GLM partial_rotary_factor): each architecture takes every row,
# so each of its families meets each value at least once, and 1 kv head meets both head_dims,
# both biases and both rotary factors. Qwen2's q/k/v always carry a bias (its config has no
# switch), so "no bias" there is the o_proj it never has.
SHAPES = [
    (1, HIDDEN // HEADS, False, True, 0.5),   # the multi-query GLM of the reported fault
    (2, 16, True, False, 0.5),
    (HEADS, 16, False, True, 1.0),
    (1, 16, True, False, 1.0),
]
# Gemma 2 (Gemma2Config: Gemma 3's layers without q/k norms, one rope, layer 0 sliding and layer 1
# full), two rows after all the others (so they keep their seeds), without biases, embeddings of
# a real Gemma's small spread. Tied: both soft-cappings at values that bite on these weights
# (attention 3: greedy ids differ from the uncapped model's on all 4 grid prompts; final 2 bends
# logits of up to ~1 but, monotonic, leaves greedy ids as they are), window 5 and
# query_pre_attn_scalar 1.5 head_dim. Untied, multi-query: attn_logit_softcapping null (none) and
# no final_logit_softcapping key (Gemma2Config's 30.0, which moves these logits by ~0.1), window 9
# (the 9-token prompt's last token still sees the first, the next does not; ids differ from no
# window on all 4 prompts) and query_pre_attn_scalar head_dim.
GEMMA2_SHAPES = [SHAPES[1], SHAPES[0]]
GEMMA2_CAPS = {True: {"attn_logit_softcapping": 3.0, "final_logit_softcapping": 2.0, "sliding_window": WINDOW},
               False: {"attn_logit_softcapping": None, "sliding_window": 9}}


def grid():
    """[(name, arch, kv, head_dim, tied, bias, rotary, longrope)] in a fixed order: every
    architecture's rows, then Phi-3's longrope row, then Gemma 2's (each added last, so that the
    others keep their seeds)."""
    out = [row + (False,) for row in plain_grid()]
    row = next(r for r in out if r[1] == "phi3" and r[2:5] == SHAPES[1][:3])
    out.append((row[0] + "-longrope",) + row[1:7] + (True,))
    out += [row + (False,) for row in plain_grid(["gemma2"])]
    return out


def plain_grid(arches=None):
    """[(name, arch, kv, head_dim, tied, bias, rotary)]: each architecture (all but Gemma 2 unless
    named) on its shapes."""
    out = []
    for arch in arches or [a for a in CLASSES if a != "gemma2"]:
        shapes = SHAPES[:2] if arch == "qwen3moe" else GEMMA2_SHAPES if arch == "gemma2" else SHAPES
        for kv, hd, tied, bias, rot in shapes:
            glm = arch in ("glm", "glm4")
            partial = glm or arch == "phi3"
            bias = bias and arch not in ("mistral", "phi3", "gemma3", "gemma2")
            name = f"{arch}-kv{kv}-hd{hd}-{'tied' if tied else 'untied'}-{'bias' if bias else 'nobias'}"
            if partial:
                name += f"-rot{rot:g}"
            if arch in ("qwen2", "qwen3") and tied:
                name += "-swa"  # Qwen2's and Qwen3's switch: layer 0 full, layer 1 sliding
            if arch == "gemma2":
                name += "-softcap" if GEMMA2_CAPS[tied].get("attn_logit_softcapping") else "-noattncap"
            out.append((name, arch, kv, hd, tied, bias, rot if partial else None))
    return out


def config(arch, kv, hd, tied, bias, rot, layers, longrope=False):
    c = {
        "architectures": [CLASSES[arch]], "model_type": arch, "hidden_size": HIDDEN,
        "intermediate_size": INTER, "num_hidden_layers": layers, "num_attention_heads": HEADS,
        "num_key_value_heads": kv, "head_dim": hd, "vocab_size": VOCAB, "max_position_embeddings": 256,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None, "hidden_act": "silu",
        "tie_word_embeddings": tied, "torch_dtype": "float32", "bos_token_id": 1, "eos_token_id": 2,
    }
    if arch not in ("qwen2", "mistral", "phi3"):
        c["attention_bias"] = bias
    if arch == "qwen3moe":
        c.update(model_type="qwen3_moe", num_experts=EXPERTS, num_experts_per_tok=2, moe_intermediate_size=EXPERT_INTER,
                 norm_topk_prob=tied, decoder_sparse_step=1 if tied else 2, mlp_only_layers=[])
    if arch in ("mistral", "phi3"):
        c["sliding_window"] = WINDOW
    if arch in ("qwen2", "qwen3") and tied:  # a layer of each kind in one model: two masks a forward
        c.update(use_sliding_window=True, sliding_window=WINDOW, max_window_layers=1)
    if rot is not None:
        c["partial_rotary_factor"] = rot
    if arch == "gemma3":
        del c["hidden_act"]
        c.update(model_type="gemma3_text", hidden_activation="gelu_pytorch_tanh", sliding_window=WINDOW,
                 sliding_window_pattern=2, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                 query_pre_attn_scalar=1.5 * hd, attention_bias=False)
        if tied:
            c["rope_scaling"] = {"rope_type": "linear", "factor": 8.0}
    if arch == "gemma2":
        del c["hidden_act"]
        c.update(model_type="gemma2", hidden_activation="gelu_pytorch_tanh", attention_bias=False,
                 query_pre_attn_scalar=1.5 * hd if tied else hd, **GEMMA2_CAPS[tied])
    if longrope:
        c.update(json.loads(json.dumps(LONGROPE)))
    return c


def tensors(rng, arch, kv, hd, tied, bias, layers):
    """{HF tensor name: float32 array}. Norm weights near 1, matrices with a spread that gives the
    greedy choice clear margins. Layers after the first add little to the residual stream (small
    o_proj / down_proj), so a draft of the first layer agrees with the target often but not
    always: verification accepts and rejects."""
    glm = arch in ("glm", "glm4")
    qkv_bias = arch == "qwen2" or bias
    o_bias = arch in ("llama", "qwen3", "qwen3moe") and bias  # Llama / Qwen3 attention_bias covers o_proj too
    mat = lambda *s: rng.normal(0.0, 0.25, s)
    gemma = arch in ("gemma3", "gemma2")  # Gemma's RMSNorm multiplies by 1 + w: its weights lie around 0
    norm = lambda n: (0.0 if gemma else 1.0) + rng.normal(0.0, 0.1, (n,))
    # Gemma's embeddings small, as a real Gemma's: times sqrt(hidden) they weigh less than a
    # (normalised) layer's output; at 1 they drown it, and a tied head repeats the last token
    embed_std = 0.3 * HIDDEN ** -0.5 if gemma else 1.0
    t = {"model.embed_tokens.weight": rng.normal(0.0, embed_std, (VOCAB, HIDDEN))}
    for i in range(layers):
        p, a = f"model.layers.{i}.", f"model.layers.{i}.self_attn."
        t[p + "input_layernorm.weight"] = norm(HIDDEN)
        t[p + "post_attention_layernorm.weight"] = norm(HIDDEN)  # Gemma's: after attention; the others': before the MLP
        if arch == "phi3":  # Phi3Attention's one qkv_proj: q rows, then k, then v
            t[a + "qkv_proj.weight"] = mat((HEADS + 2 * kv) * hd, HIDDEN)
        for proj, rows in (("q", HEADS * hd), ("k", kv * hd), ("v", kv * hd)):
            if arch != "phi3":
                t[a + proj + "_proj.weight"] = mat(rows, HIDDEN)
            if qkv_bias:
                t[a + proj + "_proj.bias"] = rng.normal(0.0, 0.5, (rows,))
        t[a + "o_proj.weight"] = mat(HIDDEN, HEADS * hd) * (1.0 if i == 0 else DAMP)
        if o_bias:
            t[a + "o_proj.bias"] = rng.normal(0.0, 0.5, (HIDDEN,))
        if arch in ("qwen3", "gemma3", "qwen3moe"):
            t[a + "q_norm.weight"], t[a + "k_norm.weight"] = norm(hd), norm(hd)
        if arch == "qwen3moe" and (tied or i % 2 == 1):  # a layer of experts (untied: layer 1 only)
            t[p + "mlp.gate.weight"] = rng.normal(0.0, 2.0 / HIDDEN ** 0.5, (EXPERTS, HIDDEN))
            for e in range(EXPERTS):
                q = f"{p}mlp.experts.{e}."
                t[q + "gate_proj.weight"], t[q + "up_proj.weight"] = mat(EXPERT_INTER, HIDDEN), mat(EXPERT_INTER, HIDDEN)
                t[q + "down_proj.weight"] = mat(HIDDEN, EXPERT_INTER) * (1.0 if i == 0 else DAMP)
        else:
            if glm or arch == "phi3":
                t[p + "mlp.gate_up_proj.weight"] = mat(2 * INTER, HIDDEN)
            else:
                t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = mat(INTER, HIDDEN), mat(INTER, HIDDEN)
            t[p + "mlp.down_proj.weight"] = mat(HIDDEN, INTER) * (1.0 if i == 0 else DAMP)
        if arch == "glm4":
            t[p + "post_self_attn_layernorm.weight"] = norm(HIDDEN)
            t[p + "post_mlp_layernorm.weight"] = norm(HIDDEN)
        if gemma:
            t[p + "pre_feedforward_layernorm.weight"] = norm(HIDDEN)
            t[p + "post_feedforward_layernorm.weight"] = norm(HIDDEN)
    t["model.norm.weight"] = norm(HIDDEN)
    if not tied:
        t["lm_head.weight"] = mat(VOCAB, HIDDEN)
    return {k: v.astype(np.float32) for k, v in t.items()}


def write_safetensors(path, arrays):
    """The safetensors layout: u64 header length, JSON header (padded to 8 bytes), raw data.
    Intentionally apart from scripts/train/train.py's writer: the reference grid's checkpoints are
    written by code that shares nothing with exspec's own tools (see hf_reference.py's reader)."""
    header, offset, blobs = {}, 0, []
    for name in sorted(arrays):
        raw = np.ascontiguousarray(arrays[name]).astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arrays[name].shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_model(out, cfg, arrays):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out, "model.safetensors"), arrays)


def first_layers(arrays, layers):
    """A draft: the target's first `layers` layers with its embeddings, final norm and head."""
    keep = lambda n: not n.startswith("model.layers.") or int(n.split(".")[2]) < layers
    return {n: a for n, a in arrays.items() if keep(n)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="write this grid entry alone")
    args = ap.parse_args()
    names = []
    for seed, (name, arch, kv, hd, tied, bias, rot, longrope) in enumerate(grid()):
        if args.only and name != args.only:
            continue
        arrays = tensors(np.random.default_rng(1000 + seed), arch, kv, hd, tied, bias, LAYERS)
        write_model(os.path.join(args.out, name), config(arch, kv, hd, tied, bias, rot, LAYERS, longrope), arrays)
        write_model(os.path.join(args.out, name + "-draft"), config(arch, kv, hd, tied, bias, rot, 1, longrope),
                    first_layers(arrays, 1))
        names.append(name)
    if not names:
        raise SystemExit(f"write_grid.py: no grid entry named {args.only!r}")
    with open(os.path.join(args.out, "grid.json"), "w") as f:
        json.dump(names, f, indent=1)


if __name__ == "__main__":
    main()
