"""Self-tests of the reference itself (hf_reference.py --self-test): a tiny random Llama and a tiny
random GLM-4 are causal-consistent and resume greedy decoding identically, GLM's rope equals
complex rotation, a Mistral window bounds how far a token reaches, Gemma 3's GELU-tanh is
torch's, Qwen3-MoE's sparse block equals a dense formulation of it, its layers of the right
kinds, Phi-3's longrope switches its factors past original_max_position_embeddings, rounds
them to float32 and scales cos and sin by its attention factor, and a tiny Gemma 2 equals a
token-by-token formulation of it with its soft-capping."""
import math

import numpy as np
import torch

from hf_reference import (F64, GEMMA2, GEMMA3, GLM4, LLAMA, MISTRAL, PHI3, QWEN3MOE, Model, UsageError, gelu_tanh,
                          glm_rope, greedy, longrope_params, rope_inv_freq, rope_kind, route, sparse_layers,
                          sparse_moe)


def prefix_worst(model, seq):
    """The largest difference between the logits of the whole sequence and of each of its prefixes:
    0 up to rounding for a causal model."""
    full = model.forward(seq)
    return max(float((model.forward(seq[:t]) - full[:t]).abs().max()) for t in range(1, len(seq)))


def self_test():
    """Tiny random Llama (GQA, llama3 rope covering all three frequency bands): checks that the
    full recomputation is causal-consistent and that greedy decoding resumes identically."""
    g = torch.Generator().manual_seed(0)
    H, I, V, nh, nkv, hd, layers = 32, 48, 50, 4, 2, 8, 2
    cfg = dict(architectures=[LLAMA], hidden_size=H, intermediate_size=I, vocab_size=V,
               num_hidden_layers=layers, num_attention_heads=nh, num_key_value_heads=nkv,
               rms_norm_eps=1e-5, rope_theta=10000.0,
               rope_scaling=dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                 high_freq_factor=4.0, original_max_position_embeddings=64))
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    per_layer = {"input_layernorm": (H,), "post_attention_layernorm": (H,), "mlp.down_proj": (H, I),
                 "self_attn.q_proj": (nh * hd, H), "self_attn.k_proj": (nkv * hd, H),
                 "self_attn.v_proj": (nkv * hd, H), "self_attn.o_proj": (H, nh * hd),
                 "mlp.gate_proj": (I, H), "mlp.up_proj": (I, H)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.{n}.weight": s for n, s in per_layer.items()})
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (1.0 if len(s) == 1 else 0.3) for n, s in shapes.items()}
    model = Model(cfg, weights)
    seq = torch.randint(0, V, (20,), generator=g).tolist()
    worst = prefix_worst(model, seq)
    toks, _, _ = greedy(model, seq[:5], 10, set())
    resumed, _, _ = greedy(model, seq[:5] + toks[:4], 6, set())
    ok = worst <= 1e-12 and resumed == toks[4:]
    print(f"self-test: prefix max|diff| {worst:.3e}, greedy resume {'ok' if resumed == toks[4:] else 'DIFFERS'}")
    passed = [glm_self_test(g), window_self_test(g, shapes), gemma_self_test(g), moe_self_test(g),
              longrope_self_test(g), gemma2_self_test(g)]
    return 0 if ok and all(passed) else 1


def gemma_self_test(g):
    """Gemma 3's activation against torch's own tanh GELU (which HF's gelu_pytorch_tanh calls), and
    a tiny Gemma 3 (a sliding layer, then a full one) causal-consistent like the Llama one."""
    x = torch.linspace(-12, 12, 2001, dtype=F64)
    act_err = float((gelu_tanh(x) - torch.nn.functional.gelu(x, approximate="tanh")).abs().max())
    H, I, V, nh, nkv, hd, layers = 32, 48, 50, 4, 2, 8, 2
    cfg = dict(architectures=[GEMMA3], hidden_size=H, intermediate_size=I, vocab_size=V, num_hidden_layers=layers,
               num_attention_heads=nh, num_key_value_heads=nkv, head_dim=hd, rms_norm_eps=1e-6, sliding_window=3,
               sliding_window_pattern=2, query_pre_attn_scalar=12)
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    per_layer = {"input_layernorm": (H,), "post_attention_layernorm": (H,), "pre_feedforward_layernorm": (H,),
                 "post_feedforward_layernorm": (H,), "self_attn.q_norm": (hd,), "self_attn.k_norm": (hd,),
                 "self_attn.q_proj": (nh * hd, H), "self_attn.k_proj": (nkv * hd, H), "self_attn.v_proj": (nkv * hd, H),
                 "self_attn.o_proj": (H, nh * hd), "mlp.gate_proj": (I, H), "mlp.up_proj": (I, H), "mlp.down_proj": (H, I)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.{n}.weight": s for n, s in per_layer.items()})
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (0.1 if len(s) == 1 else 0.3) for n, s in shapes.items()}
    worst = prefix_worst(Model(cfg, weights), torch.randint(0, V, (12,), generator=g).tolist())
    print(f"self-test: Gemma GELU-tanh vs torch {act_err:.3e}, Gemma 3 prefix max|diff| {worst:.3e}")
    return act_err <= 1e-12 and worst <= 1e-12


def window_self_test(g, shapes):
    """A tiny Mistral with a window of 3 over 2 layers: a token reaches the positions up to
    2 * (3 - 1) after it and no further, so changing the first token changes the logits at
    positions 0..4 and leaves those from 5 on as they were."""
    cfg = dict(architectures=[MISTRAL], hidden_size=32, intermediate_size=48, vocab_size=50, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=3)
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (1.0 if len(s) == 1 else 0.3) for n, s in shapes.items()}
    model = Model(cfg, weights)
    seq = torch.randint(1, 50, (12,), generator=g).tolist()
    diff = (model.forward(seq) - model.forward([0] + seq[1:])).abs().amax(dim=-1)
    reached = [float(d) > 1e-9 for d in diff]
    ok = reached == [True] * 5 + [False] * 7 and float(diff[5:].max()) == 0.0
    print(f"self-test: Mistral window 3, 2 layers: the first token reaches positions "
          f"{[t for t, r in enumerate(reached) if r]} {'ok' if ok else 'WRONG (want 0..4)'}")
    return ok


def glm_self_test(g):
    """GLM's rope against complex multiplication: pair (2i, 2i+1) is the complex number
    x_2i + j x_2i+1, turned by angle pos * inv_freq[i]; dims past the rotary ones are untouched.
    Then a tiny GLM-4 model is causal-consistent like the Llama one."""
    hd, rotary, T = 16, 8, 5
    inv = rope_inv_freq({"rope_theta": 10000.0}, rotary)
    angles = torch.arange(T, dtype=F64)[:, None] * 7 * inv[None, :]
    emb = torch.cat((angles, angles), dim=-1)[:, None, :]
    x = torch.randn((T, 3, hd), generator=g, dtype=F64)
    got = glm_rope(x, emb.cos(), emb.sin())
    z = torch.view_as_complex(x[..., :rotary].reshape(T, 3, rotary // 2, 2).contiguous())
    want = torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)[:, None, :]).reshape(T, 3, rotary)
    rope_err = float((got[..., :rotary] - want).abs().max())
    passed = torch.equal(got[..., rotary:], x[..., rotary:])

    H, I, V, nh, nkv, layers = 32, 48, 50, 4, 2, 2
    cfg = dict(architectures=[GLM4], hidden_size=H, intermediate_size=I, vocab_size=V, num_hidden_layers=layers,
               num_attention_heads=nh, num_key_value_heads=nkv, head_dim=hd, rms_norm_eps=1e-5,
               partial_rotary_factor=0.5)
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    per_layer = {"input_layernorm.weight": (H,), "post_attention_layernorm.weight": (H,),
                 "post_self_attn_layernorm.weight": (H,), "post_mlp_layernorm.weight": (H,),
                 "self_attn.q_proj.weight": (nh * hd, H), "self_attn.q_proj.bias": (nh * hd,),
                 "self_attn.k_proj.weight": (nkv * hd, H), "self_attn.k_proj.bias": (nkv * hd,),
                 "self_attn.v_proj.weight": (nkv * hd, H), "self_attn.v_proj.bias": (nkv * hd,),
                 "self_attn.o_proj.weight": (H, nh * hd), "mlp.gate_up_proj.weight": (2 * I, H),
                 "mlp.down_proj.weight": (H, I)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.{n}": s for n, s in per_layer.items()})
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (1.0 if len(s) == 1 else 0.3) for n, s in shapes.items()}
    worst = prefix_worst(Model(cfg, weights), torch.randint(0, V, (12,), generator=g).tolist())
    print(f"self-test: GLM rope vs complex rotation {rope_err:.3e}, pass-through {'exact' if passed else 'CHANGED'}, "
          f"GLM-4 prefix max|diff| {worst:.3e}")
    return rope_err <= 1e-12 and passed and worst <= 1e-12


def dense_moe(x, router, experts, top_k, norm_topk_prob):
    """Qwen3MoeSparseMoeBlock written another way, token by token: every expert computed, its
    weight its router probability when among the top_k (ties to the lower index), else zero."""
    out = torch.zeros_like(x)
    for t in range(x.shape[0]):
        logits = router @ x[t]
        p = torch.exp(logits - logits.max())
        p = p / p.sum()
        top = sorted(range(len(p)), key=lambda e: (-float(p[e]), e))[:top_k]
        w = torch.zeros_like(p)
        w[top] = p[top]
        if norm_topk_prob:
            w = w / w.sum()
        for e, (gate, up, down) in enumerate(experts):
            h = torch.nn.functional.silu(gate @ x[t]) * (up @ x[t])
            out[t] += w[e] * (down @ h)
    return out


def moe_weights(g, cfg):
    """Random weights with the tensor names of Qwen3MoeForCausalLM for config `cfg`."""
    H, I, E, Im = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_experts"], cfg["moe_intermediate_size"]
    nh, nkv, hd, V = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"], cfg["vocab_size"]
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    attn = {"input_layernorm.weight": (H,), "post_attention_layernorm.weight": (H,),
            "self_attn.q_norm.weight": (hd,), "self_attn.k_norm.weight": (hd,),
            "self_attn.q_proj.weight": (nh * hd, H), "self_attn.q_proj.bias": (nh * hd,),
            "self_attn.k_proj.weight": (nkv * hd, H), "self_attn.k_proj.bias": (nkv * hd,),
            "self_attn.v_proj.weight": (nkv * hd, H), "self_attn.v_proj.bias": (nkv * hd,),
            "self_attn.o_proj.weight": (H, nh * hd), "self_attn.o_proj.bias": (H,)}
    dense = {"mlp.gate_proj.weight": (I, H), "mlp.up_proj.weight": (I, H), "mlp.down_proj.weight": (H, I)}
    sparse = {"mlp.gate.weight": (E, H)}
    for e in range(E):
        sparse.update({f"mlp.experts.{e}.gate_proj.weight": (Im, H), f"mlp.experts.{e}.up_proj.weight": (Im, H),
                       f"mlp.experts.{e}.down_proj.weight": (H, Im)})
    for i, is_sparse in enumerate(sparse_layers(cfg)):
        shapes.update({f"model.layers.{i}.{n}": s for n, s in {**attn, **(sparse if is_sparse else dense)}.items()})
    return {n: torch.randn(s, generator=g, dtype=F64) * (1.0 if len(s) == 1 else 0.3) for n, s in shapes.items()}


def refused(cfg, weights):
    try:
        Model(cfg, weights)
    except UsageError:
        return True
    return False


def moe_self_test(g):
    """Qwen3-MoE: the sparse block against dense_moe, with and without norm_topk_prob; equal router
    probabilities go to the lower expert index; which layers are sparse (mlp_only_layers,
    decoder_sparse_step, no experts); a checkpoint of other layer kinds, shared experts and the
    window refused; a tiny Qwen3-MoE (a dense layer among sparse ones, all biases) causal-consistent."""
    H, E = 32, 8
    cfg = dict(architectures=[QWEN3MOE], hidden_size=H, intermediate_size=48, vocab_size=50, num_hidden_layers=4,
               num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6, rope_theta=10000.0,
               attention_bias=True, num_experts=E, num_experts_per_tok=2, moe_intermediate_size=16,
               norm_topk_prob=True, mlp_only_layers=[1], tie_word_embeddings=False)
    weights = moe_weights(g, cfg)
    model = Model(cfg, weights)
    x = torch.randn((9, H), generator=g, dtype=F64)
    L = model.layers[0]
    block_err = 0.0  # relative to the largest output: the two orders of rounding differ by a few ulps (2^-52 each)
    for k in (1, 2, 3):
        for norm in (True, False):
            want = dense_moe(x, L["router"], L["experts"], k, norm)
            got = sparse_moe(x, L, k, norm, torch.nn.functional.silu)
            block_err = max(block_err, float((got - want).abs().max() / want.abs().max()))
    # x = the first unit vector: the router logits are its first column exactly, 1 and 4 tied on top
    router = torch.randn((E, H), generator=g, dtype=F64)
    router[:, 0] = torch.tensor([0.1, 2.0, 0.3, 0.2, 2.0, -1.0, 1.5, 0.0], dtype=F64)
    unit = torch.zeros((1, H), dtype=F64)
    unit[0, 0] = 1.0
    ties = [route(unit, router, k, True)[1][0].tolist() for k in (1, 2, 3)]
    kinds_ok = (sparse_layers(cfg) == [True, False, True, True]
                and sparse_layers({**cfg, "mlp_only_layers": [], "decoder_sparse_step": 2}) == [False, True, False, True]
                and sparse_layers({**cfg, "num_experts": 0}) == [False] * 4
                and [L["router"] is not None for L in model.layers] == [True, False, True, True])
    refusals = [refused({**cfg, "mlp_only_layers": []}, weights),  # layer 1 lacks its router
                refused({**cfg, "mlp_only_layers": [1, 2]}, weights),  # layer 2's experts left unused
                refused({**cfg, "shared_expert_intermediate_size": 64}, weights),
                refused({**cfg, "use_sliding_window": True}, weights),
                refused(cfg, {**weights, "model.layers.0.mlp.shared_expert_gate.weight": torch.zeros((1, H), dtype=F64)})]
    worst = prefix_worst(model, torch.randint(0, 50, (12,), generator=g).tolist())
    print(f"self-test: Qwen3-MoE sparse block vs dense, relative {block_err:.3e}, ties pick {ties}, layer kinds "
          f"{'ok' if kinds_ok else 'WRONG'}, refusals {sum(refusals)} of {len(refusals)}, prefix max|diff| {worst:.3e}")
    return (block_err <= 2e-15 and ties == [[1], [1, 4], [1, 4, 6]] and kinds_ok and all(refusals)
            and worst <= 1e-12)


def f32(x):
    """The float32 value nearest x, as a Python float."""
    return float(np.float32(x))


def longrope_self_test(g):
    """Phi-3 longrope. Its parameters: the attention factor sqrt(1 + ln 4 / ln 8) for 8 positions of
    32, rope_scaling's own attention_factor, 1 unscaled, the "su" name, Phi3Config's default 4096;
    each factor of rope_inv_freq with its own frequency, as float32 values; a count that is not half
    the rotary dims refused. Then a tiny Phi-3 with constant factors (short 1.1, long 2.7, neither a
    float32 value) against the same model with linear scaling by float32(factor) and its query rows
    times attention_factor^2 (cos and sin times a on both q and k scale the scores by a^2): equal
    at T = 8 = original to the short one and at T = 9 to the long one. So a switch at T >= original,
    a missing attention factor or unrounded factors each fail it (the last by ~1e-7, shown)."""
    hd, original, max_pos = 8, 8, 32
    base = dict(architectures=[PHI3], max_position_embeddings=max_pos, original_max_position_embeddings=original,
                rope_theta=10000.0, rope_scaling=dict(rope_type="longrope", short_factor=[1.1] * (hd // 2),
                                                      long_factor=[2.7] * (hd // 2)))
    rs = base["rope_scaling"]
    af = longrope_params(base)[1]
    params_ok = (abs(af - math.sqrt(5.0 / 3.0)) <= 1e-15
                 and longrope_params({**base, "rope_scaling": {**rs, "attention_factor": 0.75}}) == (original, 0.75)
                 and longrope_params({**base, "max_position_embeddings": original}) == (original, 1.0)
                 and rope_kind({"rope_scaling": {"type": "su"}}) == "longrope"
                 and longrope_params({k: v for k, v in base.items() if k != "original_max_position_embeddings"})[0] == 4096)
    # distinct factors over 6 rotary dims: factor i goes with frequency theta^(-2i/6), as a float32 value
    factors = [1.0, 1.37, 5.9]
    three = {**base, "rope_scaling": dict(rope_type="longrope", short_factor=factors, long_factor=[2.0] * 3)}
    want = [1.0 / (f32(f) * 10000.0 ** (2 * i / 6)) for i, f in enumerate(factors)]
    got = rope_inv_freq(three, 6, seq_len=original).tolist()
    freq_err = max(abs(a - b) / b for a, b in zip(got, want))
    long_got = rope_inv_freq(three, 6, seq_len=original + 1).tolist()
    freq_ok = (freq_err <= 1e-15 and long_got == [1.0 / (2.0 * 10000.0 ** (2 * i / 6)) for i in range(3)]
               and got != [1.0 / (f * 10000.0 ** (2 * i / 6)) for i, f in enumerate(factors)])
    try:
        rope_inv_freq(three, 8, seq_len=1)
        freq_ok = False
    except UsageError:
        pass

    H, I, V, nh, nkv, layers = 32, 48, 50, 4, 2, 2
    cfg = dict(base, hidden_size=H, intermediate_size=I, vocab_size=V, num_hidden_layers=layers,
               num_attention_heads=nh, num_key_value_heads=nkv, head_dim=hd, rms_norm_eps=1e-5,
               partial_rotary_factor=1.0)
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,), "lm_head.weight": (V, H)}
    per_layer = {"input_layernorm.weight": (H,), "post_attention_layernorm.weight": (H,),
                 "self_attn.qkv_proj.weight": ((nh + 2 * nkv) * hd, H), "self_attn.o_proj.weight": (H, nh * hd),
                 "mlp.gate_up_proj.weight": (2 * I, H), "mlp.down_proj.weight": (H, I)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.{n}": s for n, s in per_layer.items()})
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (1.0 if len(s) == 1 else 0.3) for n, s in shapes.items()}
    scaled = dict(weights)
    for i in range(layers):
        name = f"model.layers.{i}.self_attn.qkv_proj.weight"
        scaled[name] = torch.cat((weights[name][: nh * hd] * (af * af), weights[name][nh * hd:]))
    model = Model(cfg, weights)
    linear = lambda factor, w: Model({**cfg, "rope_scaling": dict(rope_type="linear", factor=factor)}, w)
    seq = torch.randint(0, V, (original + 1,), generator=g).tolist()
    short_err = float((model.forward(seq[:-1]) - linear(f32(1.1), scaled).forward(seq[:-1])).abs().max())
    long_err = float((model.forward(seq) - linear(f32(2.7), scaled).forward(seq)).abs().max())
    # what each fault would give: the other factors at T = original, no attention factor, unrounded factors
    faults = [float((model.forward(seq[:-1]) - linear(f32(2.7), scaled).forward(seq[:-1])).abs().max()),
              float((model.forward(seq) - linear(f32(2.7), weights).forward(seq)).abs().max()),
              float((model.forward(seq[:-1]) - linear(1.1, scaled).forward(seq[:-1])).abs().max())]
    worst = prefix_worst(model, seq[:-1])  # every prefix of the short regime
    ok = params_ok and freq_ok and short_err <= 1e-12 and long_err <= 1e-12 and min(faults) > 1e-9 and worst <= 1e-12
    print(f"self-test: longrope parameters {'ok' if params_ok else 'WRONG'}, frequencies "
          f"{'ok' if freq_ok else 'WRONG'} ({freq_err:.1e}); vs linear x float32(factor) with q x attention_factor^2: "
          f"T={original} short {short_err:.3e}, T={original + 1} long {long_err:.3e} (faults: >= switch "
          f"{faults[0]:.1e}, no attention factor {faults[1]:.1e}, unrounded {faults[2]:.1e}); prefix max|diff| {worst:.3e}")
    return ok


def gemma2_by_hand(cfg, w, ids):
    """Gemma2ForCausalLM written another way, a query and a head at a time: Gemma2Config's defaults
    (caps 50 and 30, layers 0, 2, 4, ... sliding, rope_theta 10000, tied head); rope as a complex
    rotation of (x_k, x_k+hd/2); each query's softmax over the keys it may see only (the causal
    mask and the window), of cap * tanh(scale * q.k / cap); the final logits capped likewise."""
    H, nh, nkv, hd, eps = (cfg[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                                             "rms_norm_eps"))
    acap, fcap = cfg.get("attn_logit_softcapping", 50.0), cfg.get("final_logit_softcapping", 30.0)
    scale, window, half, T = cfg["query_pre_attn_scalar"] ** -0.5, cfg["sliding_window"], hd // 2, len(ids)
    theta = cfg.get("rope_theta", 10000.0)
    cap = lambda x, c: x if c is None else c * torch.tanh(x / c)

    def norm(x, name):  # (1 + w) made in float32, as Gemma2RMSNorm makes it
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * (w[name].to(torch.float32) + 1).to(F64)

    def rope(x, pos):  # x [heads, hd]
        angle = pos * theta ** (-2.0 * torch.arange(half, dtype=F64) / hd)
        z = torch.complex(x[:, :half], x[:, half:]) * torch.polar(torch.ones_like(angle), angle)
        return torch.cat((z.real, z.imag), dim=-1)

    embed = w["model.embed_tokens.weight"]
    h = torch.stack([embed[t] * math.sqrt(H) for t in ids])
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        x = norm(h, p + "input_layernorm.weight")
        q = [rope((w[p + "self_attn.q_proj.weight"] @ x[t]).view(nh, hd), t) for t in range(T)]
        k = [rope((w[p + "self_attn.k_proj.weight"] @ x[t]).view(nkv, hd), t) for t in range(T)]
        v = [(w[p + "self_attn.v_proj.weight"] @ x[t]).view(nkv, hd) for t in range(T)]
        rows = []
        for i in range(T):
            seen = [j for j in range(i + 1) if layer % 2 == 1 or i - j < window]
            heads = []
            for a in range(nh):
                kv = a // (nh // nkv)
                s = cap(torch.stack([q[i][a] @ k[j][kv] * scale for j in seen]), acap)
                e = torch.exp(s - s.max())
                heads.append(sum(pj * v[j][kv] for pj, j in zip(e / e.sum(), seen)))
            rows.append(torch.cat(heads))
        h = h + norm(torch.stack(rows) @ w[p + "self_attn.o_proj.weight"].T, p + "post_attention_layernorm.weight")
        x = norm(h, p + "pre_feedforward_layernorm.weight")
        gate, up = x @ w[p + "mlp.gate_proj.weight"].T, x @ w[p + "mlp.up_proj.weight"].T
        mlp = (torch.nn.functional.gelu(gate, approximate="tanh") * up) @ w[p + "mlp.down_proj.weight"].T
        h = h + norm(mlp, p + "post_feedforward_layernorm.weight")
    return cap(norm(h, "model.norm.weight") @ embed.T, fcap)


def gemma2_self_test(g):
    """A tiny Gemma 2 (3 layers: sliding, full, sliding; window 3 over 12 tokens) against
    gemma2_by_hand: with caps that bite (attention 2, final 3), with both null (no capping) and
    with both absent (Gemma2Config's 50 and 30), and rope_theta absent (10000) and given (on every
    layer: no local rope). The scores are large enough that capping them changes the logits by far
    more than the tolerance, so capping after the mask (masked keys would weigh exp(-cap), not 0),
    a missing final cap, or another order of / cap, tanh and * cap each fail it; capping after the
    mask also breaks the prefix check. The default layer kinds and layer_types; Gemma 3's q/k norm
    weights refused (Gemma 2 has none)."""
    H, I, V, nh, nkv, hd, layers = 32, 48, 50, 4, 2, 8, 3
    cfg = dict(architectures=[GEMMA2], hidden_size=H, intermediate_size=I, vocab_size=V, num_hidden_layers=layers,
               num_attention_heads=nh, num_key_value_heads=nkv, head_dim=hd, rms_norm_eps=1e-6, sliding_window=3,
               query_pre_attn_scalar=12, attn_logit_softcapping=2.0, final_logit_softcapping=3.0)
    shapes = {"model.embed_tokens.weight": (V, H), "model.norm.weight": (H,)}
    per_layer = {"input_layernorm": (H,), "post_attention_layernorm": (H,), "pre_feedforward_layernorm": (H,),
                 "post_feedforward_layernorm": (H,), "self_attn.q_proj": (nh * hd, H), "self_attn.k_proj": (nkv * hd, H),
                 "self_attn.v_proj": (nkv * hd, H), "self_attn.o_proj": (H, nh * hd), "mlp.gate_proj": (I, H),
                 "mlp.up_proj": (I, H), "mlp.down_proj": (H, I)}
    for i in range(layers):
        shapes.update({f"model.layers.{i}.{n}.weight": s for n, s in per_layer.items()})
    weights = {n: torch.randn(s, generator=g, dtype=F64) * (0.1 if len(s) == 1 else 0.5) for n, s in shapes.items()}
    seq = torch.randint(0, V, (12,), generator=g).tolist()
    # null caps, and a rope_theta of its own: every layer turns by it (Gemma 2 has no local rope)
    nulls = {**cfg, "attn_logit_softcapping": None, "final_logit_softcapping": None, "rope_theta": 1000.0}
    absent = {k: v for k, v in cfg.items() if not k.endswith("softcapping")}
    errs, hands = [], []
    for c in (cfg, nulls, absent):
        hands.append(gemma2_by_hand(c, weights, seq))
        errs.append(float((Model(c, weights).forward(seq) - hands[-1]).abs().max()))
    # how far the capping moves the logits: the attention's alone (final cap kept), and the final's
    bite = [float((gemma2_by_hand({**cfg, "attn_logit_softcapping": None}, weights, seq) - hands[0]).abs().max()),
            float((gemma2_by_hand({**cfg, "final_logit_softcapping": None}, weights, seq) - hands[0]).abs().max())]
    model = Model(cfg, weights)
    worst = prefix_worst(model, seq)
    kinds_ok = (model.slides == [True, False, True]
                and Model({**cfg, "layer_types": ["full_attention", "sliding_attention", "full_attention"]},
                          weights).slides == [False, True, False])
    q_norm = {**weights, "model.layers.0.self_attn.q_norm.weight": torch.zeros(hd, dtype=F64)}
    ok = max(errs) <= 1e-12 and min(bite) > 1e-2 and worst <= 1e-12 and kinds_ok and refused(cfg, q_norm)
    print(f"self-test: Gemma 2 vs by hand: caps 2/3 {errs[0]:.3e}, null {errs[1]:.3e}, default {errs[2]:.3e} "
          f"(capping moves logits: attention {bite[0]:.2e}, final {bite[1]:.2e}); prefix max|diff| {worst:.3e}, "
          f"layer kinds {'ok' if kinds_ok else 'WRONG'}, q_norm {'refused' if refused(cfg, q_norm) else 'ACCEPTED'}")
    return ok
