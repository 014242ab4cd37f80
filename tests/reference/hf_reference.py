#!/usr/bin/python3
"""Independent float64 reference for exspec, written from the Hugging Face modelling definitions
(LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GlmForCausalLM, Glm4ForCausalLM,
MistralForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Qwen3MoeForCausalLM).
CPU, batch size 1, no KV cache: every greedy step recomputes the whole sequence.

Deliberate conventions (HF computes these in float32 even for a float64 model): the rope tables
(inv_freq, pos*inv_freq, cos, sin), RMSNorm, the attention softmax and Qwen3-MoE's router softmax
are all float64 here; but Gemma2RMSNorm's and Gemma3RMSNorm's multiplier 1.0 + weight.float() is
made in float32 as HF makes it, and longrope's factors are float32 values as HF's
torch.tensor(factors, float32) makes them. Gemma 2's soft-capping is HF's: tanh(x / cap) * cap of
the scaled attention scores before the mask is added, and of the final logits. longrope
(Phi-3-128k, Phi-3.5, Phi-4-mini) takes its long factors when the whole sequence is longer than
original_max_position_embeddings (HF's seq_len, max(position_ids) + 1, of a forward that re-runs
it all), else its short ones. Experts of equal router probability are chosen lower
index first (torch.topk leaves the order of ties unspecified).

  hf_reference.py --model DIR --prompts P.jsonl --max-tokens N \\
      --exspec-logits L.safetensors --exspec-generate G.jsonl [--tol 1e-9]
  hf_reference.py --model DIR --prompts P.jsonl --max-tokens N --dump-generate
  hf_reference.py --self-test          (tests/reference/self_test.py)
Exit status: 0 all match, 1 mismatch, 2 usage error / unreadable input / unsupported model.
"""
import argparse, json, math, os, struct, sys

import numpy as np
import torch

LLAMA, QWEN2, QWEN3 = "LlamaForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"
GLM, GLM4 = "GlmForCausalLM", "Glm4ForCausalLM"  # transformers' models/glm and models/glm4
MISTRAL = "MistralForCausalLM"  # transformers' models/mistral
PHI3 = "Phi3ForCausalLM"  # transformers' models/phi3
GEMMA3 = "Gemma3ForCausalLM"  # transformers' models/gemma3, the text model (Gemma3TextConfig)
GEMMA2 = "Gemma2ForCausalLM"  # transformers' models/gemma2 (Gemma2Config)
QWEN3MOE = "Qwen3MoeForCausalLM"  # transformers' models/qwen3_moe (Qwen3MoeConfig)
F64 = torch.float64


class UsageError(Exception):
    """Bad invocation, unreadable input or unsupported model (exit status 2)."""


# ---------------------------------------------------------------- safetensors
# Intentionally apart from scripts/train/safetensors_np.py, the tools' reader: the independent
# reference shares no code with the tools whose files and figures it checks, so that a mistake
# in one cannot agree with itself in the other.
_NP_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2"}


def read_safetensors(path):
    """Returns ({name: float64 tensor}, {name: stored dtype string})."""
    try:
        with open(path, "rb") as f:
            buf = f.read()
        (n,) = struct.unpack("<Q", buf[:8])
        header = json.loads(buf[8:8 + n])
    except (OSError, ValueError, struct.error) as e:
        raise UsageError(f"{path}: cannot read safetensors: {e}")
    data = memoryview(buf)[8 + n:]
    tensors, dtypes = {}, {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dt, shape = info["dtype"], info["shape"]
        if not 0 <= begin <= end <= len(data):
            raise UsageError(f"{path}: {name}: data_offsets {begin},{end} outside the data section")
        raw = data[begin:end]
        if dt == "BF16":  # bfloat16 is the high half of a float32
            arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
        elif dt in _NP_DTYPES:
            arr = np.frombuffer(raw, _NP_DTYPES[dt])
        else:
            raise UsageError(f"{path}: {name}: unsupported dtype {dt}")
        if arr.size != math.prod(shape):
            raise UsageError(f"{path}: {name}: {arr.size} elements for shape {shape}")
        tensors[name] = torch.from_numpy(arr.astype(np.float64).reshape(shape))
        dtypes[name] = dt
    return tensors, dtypes


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}")


def load_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_safetensors(os.path.join(model_dir, "model.safetensors"))[0]
    weight_map = read_json(index)["weight_map"]
    weights = {}
    for file in sorted(set(weight_map.values())):
        part = read_safetensors(os.path.join(model_dir, file))[0]
        missing = [n for n, f in weight_map.items() if f == file and n not in part]
        if missing:
            raise UsageError(f"{file}: lacks {missing[:3]} listed in the index")
        weights.update(part)
    return weights


# ---------------------------------------------------------------- model
def rope_kind(cfg):
    rs = cfg.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    return "longrope" if kind == "su" else kind  # "su": Phi-3's first name for it (Phi3Config renames it)


def longrope_params(cfg):
    """(original_max_position_embeddings, attention_factor) of a longrope config, as transformers'
    _compute_longrope_parameters: the top-level original_max_position_embeddings (Phi3Config's,
    its default 4096 when config.json has none), else rope_scaling's; factor the ratio of
    max_position_embeddings to it. A config with neither (not Phi-3's) keeps
    max_position_embeddings and rope_scaling's factor. attention_factor: rope_scaling's when
    given, else 1 for factor <= 1, else sqrt(1 + ln(factor) / ln(original))."""
    rs = cfg["rope_scaling"]
    original = cfg.get("original_max_position_embeddings") or rs.get("original_max_position_embeddings")
    if original is None and (cfg.get("architectures") or [None])[0] == PHI3:
        original = 4096
    if original is not None:
        factor = cfg["max_position_embeddings"] / original
    else:
        original, factor = cfg["max_position_embeddings"], rs.get("factor", 1.0)
    attention_factor = rs.get("attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    return original, float(attention_factor)


def rope_inv_freq(cfg, dim, default_theta=10000.0, seq_len=None):
    """Frequencies of the `dim` rotated dims of a head (all of it but for GLM's and Phi-3's partial
    rotary). longrope's depend on the length `seq_len` of the sequence."""
    theta = float(cfg.get("rope_theta", default_theta))
    rs = cfg.get("rope_scaling") or {}
    kind = rope_kind(cfg)
    if kind == "longrope":  # transformers' _compute_longrope_parameters, in float64 but for the factors
        if seq_len is None:
            raise UsageError("longrope's frequencies need the sequence length")
        original, _ = longrope_params(cfg)
        factors = rs["long_factor"] if seq_len > original else rs["short_factor"]
        if len(rs["long_factor"]) != dim // 2 or len(rs["short_factor"]) != dim // 2:
            raise UsageError(f"longrope: {len(rs['short_factor'])} short and {len(rs['long_factor'])} long "
                             f"factors, expected {dim // 2} (half the rotary dims)")
        ext = torch.tensor(factors, dtype=torch.float32).to(F64)
        return 1.0 / (ext * theta ** (torch.arange(0, dim, 2, dtype=F64) / dim))
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=F64) / dim)
    if kind == "default":
        return inv_freq
    if kind == "linear":
        return inv_freq / rs["factor"]
    if kind == "llama3":  # transformers' _compute_llama3_parameters, in float64
        factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old_ctx = rs["original_max_position_embeddings"]
        low_freq_wavelen, high_freq_wavelen = old_ctx / low, old_ctx / high
        wavelen = 2 * math.pi / inv_freq
        inv_freq_llama = torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_ctx / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * inv_freq_llama / factor + smooth * inv_freq_llama
        is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
        return torch.where(is_medium, smoothed, inv_freq_llama)
    raise UsageError(f"unsupported rope_scaling type {kind!r}")


def rms_norm(x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def gemma_multiplier(weight):
    """Gemma2RMSNorm and Gemma3RMSNorm scale by (1.0 + self.weight.float()): a float32 sum, whatever
    the model's dtype."""
    return (1.0 + weight.to(torch.float32)).to(F64)


def softcap(x, cap):
    """Gemma 2's logit soft-capping, in HF's order: x / cap, tanh, times cap (no capping for None)."""
    if cap is None:
        return x
    return torch.tanh(x / cap) * cap


def gelu_tanh(x):
    """HF's gelu_pytorch_tanh (GELUTanh)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def linear(x, weight, bias=None):
    y = x @ weight.T
    return y if bias is None else y + bias


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_pairs(x):
    """GLM's rotate_half: (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)."""
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((-odd, even), dim=-1).flatten(-2)


def glm_rope(x, cos, sin):
    """GLM's apply_rotary_pos_emb: cos/sin come as cat(freqs, freqs) over the rotary dims; GLM keeps
    their first half and repeats each entry twice (pairs (2i, 2i+1) share frequency i), rotates the
    first rotary dims of the head and passes the rest through."""
    cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)
    sin = sin[..., : sin.shape[-1] // 2].repeat_interleave(2, dim=-1)
    r = cos.shape[-1]
    rot, rest = x[..., :r], x[..., r:]
    return torch.cat((rot * cos + rotate_pairs(rot) * sin, rest), dim=-1)


def route(x, router, top_k, norm_topk_prob):
    """Qwen3MoeSparseMoeBlock's routing of tokens x [T, hidden]: (weights [T, top_k], experts
    [T, top_k]). Softmax over the experts of each token, its top_k (ties: lower index first, by a
    stable sort), renormalised to sum 1 when norm_topk_prob."""
    probs = torch.softmax(linear(x, router), dim=-1)
    top, chosen = torch.sort(probs, dim=-1, descending=True, stable=True)
    weights, chosen = top[:, :top_k], chosen[:, :top_k]
    if norm_topk_prob:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights, chosen


def sparse_moe(x, L, top_k, norm_topk_prob, act):
    """Qwen3MoeSparseMoeBlock.forward: each expert in index order adds its SwiGLU MLP of the tokens
    routed to it, times their routing weights, as HF's index_add_ does."""
    weights, chosen = route(x, L["router"], top_k, norm_topk_prob)
    out = torch.zeros_like(x)
    for e, (gate, up, down) in enumerate(L["experts"]):
        rows, slot = torch.nonzero(chosen == e, as_tuple=True)
        if len(rows):
            h = x[rows]
            out.index_add_(0, rows, linear(act(linear(h, gate)) * linear(h, up), down) * weights[rows, slot, None])
    return out


def sparse_layers(cfg):
    """Qwen3MoeDecoderLayer: layer i's MLP is the sparse block unless mlp_only_layers lists it, when
    there are experts and (i + 1) is a multiple of decoder_sparse_step (Qwen3MoeConfig's defaults:
    128 experts, step 1, no dense layers)."""
    dense, step, n_exp = cfg.get("mlp_only_layers") or [], cfg.get("decoder_sparse_step", 1), cfg.get("num_experts", 128)
    return [i not in dense and n_exp > 0 and (i + 1) % step == 0 for i in range(cfg["num_hidden_layers"])]


class Model:
    def __init__(self, cfg, weights):
        arch = (cfg.get("architectures") or [None])[0]
        if arch not in (LLAMA, QWEN2, QWEN3, GLM, GLM4, MISTRAL, PHI3, GEMMA2, GEMMA3, QWEN3MOE):
            raise UsageError(f"unsupported architecture {arch!r}")
        self.moe = arch == QWEN3MOE
        self.n_experts = self.top_k = self.moe_inter = 0
        if self.moe:
            self.moe_config(cfg)
        self.gemma = arch in (GEMMA2, GEMMA3)
        # Gemma2Config: attention scores, after their scaling and before the mask, and the final
        # logits soft-capped (defaults 50 and 30; null: no capping); Gemma 3 has neither.
        self.attn_cap = cfg.get("attn_logit_softcapping", 50.0) if arch == GEMMA2 else None
        self.final_cap = cfg.get("final_logit_softcapping", 30.0) if arch == GEMMA2 else None
        # Gemma2MLP / Gemma3MLP use hidden_activation (default gelu_pytorch_tanh); the others hidden_act.
        act = cfg.get("hidden_activation", "gelu_pytorch_tanh") if self.gemma else cfg.get("hidden_act", "silu")
        if act not in ("silu", "gelu_pytorch_tanh"):
            raise UsageError(f"unsupported activation {act!r}")
        self.act = torch.nn.functional.silu if act == "silu" else gelu_tanh
        H, V = cfg["hidden_size"], cfg["vocab_size"]
        I = cfg.get("intermediate_size", 6144) if self.moe else cfg["intermediate_size"]
        self.nh = cfg["num_attention_heads"]
        self.nkv = cfg.get("num_key_value_heads") or self.nh
        self.glm = arch in (GLM, GLM4)
        # GlmConfig / Glm4Config default: head_dim 128, partial_rotary_factor 0.5, attention_bias on.
        self.hd = cfg.get("head_dim") or (128 if self.glm else 256 if self.gemma else H // self.nh)
        self.eps = cfg["rms_norm_eps"]
        self.vocab = V
        self.qk_norm = arch in (QWEN3, GEMMA3, QWEN3MOE)  # not Gemma 2's
        # Qwen2: q/k/v always biased, o never. Llama, Qwen3, Qwen3-MoE: attention_bias biases q, k, v AND o.
        # GLM: attention_bias (default on) biases q, k, v; o_proj never has a bias.
        # Mistral: no biases anywhere, and MistralConfig's sliding_window (default 4096, null: none):
        # MistralAttention's mask hides key j from query i once i - j >= sliding_window.
        qkv_bias = arch == QWEN2 or (arch not in (MISTRAL, PHI3) and cfg.get("attention_bias", self.glm))
        # Gemma3TextConfig: sliding_window 4096 on every layer but each sliding_window_pattern-th
        # (default 6) unless layer_types lists them; those layers turn by their own rope
        # (rope_local_base_freq, default 10000, unscaled); scores scale by query_pre_attn_scalar
        # (default 256) ** -0.5; embeddings times hidden_size ** 0.5; the head tied by default.
        self.window = cfg.get("sliding_window", 4096) if arch == MISTRAL else None
        # Phi3Attention: one qkv_proj (q rows, then k, then v), no biases; Phi3MLP: one
        # gate_up_proj (gate rows first); rotate-half over the first head_dim x
        # partial_rotary_factor dims; Phi3Config's sliding_window (default none) as Mistral's.
        self.phi3 = arch == PHI3
        if self.phi3:
            self.window = cfg.get("sliding_window")
        # Qwen2Config / Qwen3Config: sliding_window only with use_sliding_window (default 4096), on
        # the layers from max_window_layers (default 28) on, unless layer_types lists them.
        if arch in (QWEN2, QWEN3) and cfg.get("use_sliding_window"):
            self.window = cfg.get("sliding_window", 4096)
        n = cfg["num_hidden_layers"]
        first = cfg.get("max_window_layers", 28) if arch in (QWEN2, QWEN3) else 0
        types = cfg.get("layer_types") or ["sliding_attention" if i >= first else "full_attention" for i in range(n)]
        if self.gemma:  # Gemma2Config: window 4096 on layers 0, 2, 4, ... unless layer_types says otherwise
            self.window = cfg.get("sliding_window", 4096)
            pattern = cfg.get("sliding_window_pattern", 6) if arch == GEMMA3 else 2
            types = cfg.get("layer_types") or ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
        self.slides = [bool(self.window) and t == "sliding_attention" for t in types]
        o_bias = arch in (LLAMA, QWEN3, GEMMA2, GEMMA3, QWEN3MOE) and cfg.get("attention_bias", False)
        mlp_bias = arch == LLAMA and cfg.get("mlp_bias", False)
        self.sandwich = arch in (GLM4, GEMMA2, GEMMA3)  # GLM-4: post_self_attn_layernorm, post_mlp_layernorm
        rotary = int(self.hd * cfg.get("partial_rotary_factor", 0.5 if self.glm else 1.0)) if self.glm or self.phi3 else self.hd
        self.rotary = rotary
        # longrope: the frequencies are the forward's (they depend on its length), cos and sin
        # times the attention factor
        self.longrope = rope_kind(cfg) == "longrope"
        self.rope_cfg, self.attention_factor = cfg, (longrope_params(cfg)[1] if self.longrope else None)
        # Gemma 3's default rope_theta is 1e6 and its sliding layers turn by their own rope; Gemma 2
        # has one rope (default 10000) for all layers.
        self.gemma3 = arch == GEMMA3
        self.default_theta = 1_000_000.0 if self.gemma3 else 10000.0
        self.inv_freq = rope_inv_freq(cfg, rotary, self.default_theta,
                                      seq_len=0 if self.longrope else None)  # checks the factors' count
        self.local_inv_freq = self.inv_freq
        if self.gemma3:
            self.local_inv_freq = rope_inv_freq({"rope_theta": cfg.get("rope_local_base_freq", 10000.0)}, rotary)
        self.scale = cfg.get("query_pre_attn_scalar", 256) ** -0.5 if self.gemma else self.hd ** -0.5
        used = set()

        def get(name, *shape, present=True):
            if not present:
                return None
            if name not in weights:
                raise UsageError(f"missing tensor {name}")
            if tuple(weights[name].shape) != shape:
                raise UsageError(f"{name}: shape {list(weights[name].shape)}, expected {list(shape)}")
            used.add(name)
            return weights[name]

        q_out, kv_out = self.nh * self.hd, self.nkv * self.hd
        self.embed = get("model.embed_tokens.weight", V, H)
        self.layers = []
        sparse = sparse_layers(cfg) if self.moe else [False] * cfg["num_hidden_layers"]
        for i in range(cfg["num_hidden_layers"]):
            p = f"model.layers.{i}."
            a = p + "self_attn."
            fused_mlp = self.glm or self.phi3
            dense_mlp = not (fused_mlp or sparse[i])
            self.layers.append(dict(
                in_norm=get(p + "input_layernorm.weight", H),
                qkv=get(a + "qkv_proj.weight", q_out + 2 * kv_out, H, present=self.phi3),
                q=get(a + "q_proj.weight", q_out, H, present=not self.phi3), qb=get(a + "q_proj.bias", q_out, present=qkv_bias),
                k=get(a + "k_proj.weight", kv_out, H, present=not self.phi3), kb=get(a + "k_proj.bias", kv_out, present=qkv_bias),
                v=get(a + "v_proj.weight", kv_out, H, present=not self.phi3), vb=get(a + "v_proj.bias", kv_out, present=qkv_bias),
                o=get(a + "o_proj.weight", H, q_out), ob=get(a + "o_proj.bias", H, present=o_bias),
                q_norm=get(a + "q_norm.weight", self.hd, present=self.qk_norm),
                k_norm=get(a + "k_norm.weight", self.hd, present=self.qk_norm),
                post_norm=get(p + ("pre_feedforward_layernorm.weight" if self.gemma else "post_attention_layernorm.weight"), H),
                gate=get(p + "mlp.gate_proj.weight", I, H, present=dense_mlp),
                gate_b=get(p + "mlp.gate_proj.bias", I, present=mlp_bias),
                up=get(p + "mlp.up_proj.weight", I, H, present=dense_mlp),
                up_b=get(p + "mlp.up_proj.bias", I, present=mlp_bias),
                gate_up=get(p + "mlp.gate_up_proj.weight", 2 * I, H, present=fused_mlp),
                down=get(p + "mlp.down_proj.weight", H, I, present=not sparse[i]),
                down_b=get(p + "mlp.down_proj.bias", H, present=mlp_bias),
                # Qwen3MoeSparseMoeBlock: the router (no bias), then each expert's Qwen3MoeMLP
                router=get(p + "mlp.gate.weight", self.n_experts, H, present=sparse[i]),
                experts=[tuple(get(f"{p}mlp.experts.{e}.{proj}.weight", *shape) for proj, shape in
                               (("gate_proj", (self.moe_inter, H)), ("up_proj", (self.moe_inter, H)),
                                ("down_proj", (H, self.moe_inter))))
                         for e in range(self.n_experts)] if sparse[i] else None,
                attn_out_norm=get(p + ("post_attention_layernorm.weight" if self.gemma else "post_self_attn_layernorm.weight"),
                                  H, present=self.sandwich),
                mlp_out_norm=get(p + ("post_feedforward_layernorm.weight" if self.gemma else "post_mlp_layernorm.weight"),
                                 H, present=self.sandwich),
            ))
            if self.gemma:  # every Gemma RMSNorm weight stands for its multiplier 1 + w (Gemma 2: no q/k norms)
                for key in ("in_norm", "post_norm", "q_norm", "k_norm", "attn_out_norm", "mlp_out_norm"):
                    if self.layers[-1][key] is not None:
                        self.layers[-1][key] = gemma_multiplier(self.layers[-1][key])
        self.norm = get("model.norm.weight", H)
        if self.gemma:
            self.norm = gemma_multiplier(self.norm)
        tied = cfg.get("tie_word_embeddings", self.gemma)
        self.lm_head = self.embed if tied else get("lm_head.weight", V, H)
        # An unread tensor means the checkpoint has something this model definition ignores.
        unused = sorted(n for n in weights if n not in used and not n.endswith("rotary_emb.inv_freq")
                        and not (tied and n == "lm_head.weight"))
        if unused:
            raise UsageError(f"checkpoint tensors not used by {arch}: {unused[:5]}")

    def moe_config(self, cfg):
        """Qwen3MoeConfig's MoE keys and defaults; what Qwen3-MoE does not have is refused by name."""
        self.n_experts = cfg.get("num_experts", 128)
        self.top_k = cfg.get("num_experts_per_tok", 8)
        self.moe_inter = cfg.get("moe_intermediate_size", 768)
        self.norm_topk_prob = cfg.get("norm_topk_prob", False)
        if not 0 < self.top_k <= self.n_experts and any(sparse_layers(cfg)):
            raise UsageError(f"num_experts_per_tok {self.top_k} outside 1..num_experts ({self.n_experts})")
        if cfg.get("shared_expert_intermediate_size"):  # Qwen2-MoE's shared expert and its gate
            raise UsageError("shared experts (shared_expert_intermediate_size) are Qwen2-MoE's, not Qwen3-MoE's")
        if cfg.get("use_sliding_window"):  # transformers' versions differ on which layers slide
            raise UsageError("Qwen3-MoE with use_sliding_window is not implemented")

    def forward(self, ids):
        """Logits [T, vocab] at every position of token list `ids` (positions 0..T-1)."""
        T, nh, nkv, hd = len(ids), self.nh, self.nkv, self.hd
        if T == 0 or min(ids) < 0 or max(ids) >= self.vocab:
            raise UsageError(f"prompt ids must be a non-empty list in [0, {self.vocab})")
        def table(inv_freq):
            angles = torch.arange(T, dtype=F64)[:, None] * inv_freq[None, :]
            emb = torch.cat((angles, angles), dim=-1)[:, None, :]  # [T, 1, rotary dims], broadcast over heads
            return emb.cos(), emb.sin()
        rope, local_rope = table(self.inv_freq), table(self.local_inv_freq)
        if self.longrope:  # HF's rotary embedding: cos and sin times attention_scaling, on every layer
            cos, sin = table(rope_inv_freq(self.rope_cfg, self.rotary, self.default_theta, seq_len=T))
            rope = (cos * self.attention_factor, sin * self.attention_factor)
            local_rope = local_rope if self.gemma3 else rope  # Gemma 3's sliding layers: their own, unscaled
        query, key = torch.arange(T)[:, None], torch.arange(T)[None, :]
        causal = torch.zeros((T, T), dtype=F64).masked_fill(key > query, -math.inf)
        windowed = causal.masked_fill(query - key >= (self.window or T), -math.inf) if self.window else causal
        h = self.embed[torch.tensor(ids)]
        if self.gemma:  # Gemma2Model's normalizer, Gemma3TextScaledWordEmbedding
            h = h * self.embed.shape[1] ** 0.5
        for L, slides in zip(self.layers, self.slides):
            cos, sin = local_rope if slides else rope
            x = rms_norm(h, L["in_norm"], self.eps)
            if self.phi3:
                qkv = linear(x, L["qkv"])
                q = qkv[:, : nh * hd].reshape(T, nh, hd)
                k = qkv[:, nh * hd : (nh + nkv) * hd].reshape(T, nkv, hd)
                v = qkv[:, (nh + nkv) * hd :].reshape(T, nkv, hd)
            else:
                q = linear(x, L["q"], L["qb"]).view(T, nh, hd)
                k = linear(x, L["k"], L["kb"]).view(T, nkv, hd)
                v = linear(x, L["v"], L["vb"]).view(T, nkv, hd)
            if self.qk_norm:  # Qwen3: per-head RMSNorm over head_dim, before rope
                q, k = rms_norm(q, L["q_norm"], self.eps), rms_norm(k, L["k_norm"], self.eps)
            if self.glm:
                q, k = glm_rope(q, cos, sin), glm_rope(k, cos, sin)
            elif self.phi3:  # rotate_half on q[..., :rotary], the rest passed through
                r = self.rotary
                q = torch.cat((q[..., :r] * cos + rotate_half(q[..., :r]) * sin, q[..., r:]), dim=-1)
                k = torch.cat((k[..., :r] * cos + rotate_half(k[..., :r]) * sin, k[..., r:]), dim=-1)
            else:
                q = q * cos + rotate_half(q) * sin
                k = k * cos + rotate_half(k) * sin
            # GQA as HF repeat_kv: query head j reads kv head j // (nh / nkv).
            k = k.repeat_interleave(nh // nkv, dim=1)
            v = v.repeat_interleave(nh // nkv, dim=1)
            q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)  # [heads, T, hd]
            # Gemma 2: the scaled scores soft-capped, then the mask added (masked keys stay -inf)
            scores = softcap((q @ k.transpose(1, 2)) * self.scale, self.attn_cap) + (windowed if slides else causal)
            attn = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(T, nh * hd)
            out = linear(attn, L["o"], L["ob"])
            if self.sandwich:  # Glm4DecoderLayer: the branch output is normalised before the residual add
                out = rms_norm(out, L["attn_out_norm"], self.eps)
            h = h + out
            x = rms_norm(h, L["post_norm"], self.eps)
            if L["router"] is not None:
                out = sparse_moe(x, L, self.top_k, self.norm_topk_prob, self.act)
            elif self.glm or self.phi3:  # GlmMLP / Phi3MLP: gate_up_proj, chunk(2): gate first, then up; up * silu(gate)
                gate, up = linear(x, L["gate_up"]).chunk(2, dim=-1)
                out = linear(up * torch.nn.functional.silu(gate), L["down"], L["down_b"])
            else:
                mlp = self.act(linear(x, L["gate"], L["gate_b"])) * linear(x, L["up"], L["up_b"])
                out = linear(mlp, L["down"], L["down_b"])
            if self.sandwich:
                out = rms_norm(out, L["mlp_out_norm"], self.eps)
            h = h + out
        return softcap(linear(rms_norm(h, self.norm, self.eps), self.lm_head), self.final_cap)


def greedy(model, prompt, max_tokens, eos_ids, first_logits=None):
    """Returns (generated ids, finish_reason, top-1 minus top-2 logit margin at each step)."""
    seq, out, margins = list(prompt), [], []
    while len(out) < max_tokens:
        logits = first_logits if (not out and first_logits is not None) else model.forward(seq)
        last = logits[-1]
        top = torch.topk(last, min(2, last.numel())).values
        margins.append(float(top[0] - top[-1]))
        tok = int(torch.argmax(last))  # first index on ties
        out.append(tok)
        seq.append(tok)
        if tok in eos_ids:
            return out, "stop", margins
    return out, "length", margins


def eos_ids(model_dir, cfg):
    gen_path = os.path.join(model_dir, "generation_config.json")
    eos = read_json(gen_path).get("eos_token_id") if os.path.exists(gen_path) else None
    if eos is None:
        eos = cfg.get("eos_token_id")
    return set() if eos is None else {eos} if isinstance(eos, int) else set(eos)


def read_jsonl(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: {e}")


# ---------------------------------------------------------------- modes
def compare(args, model, prompts, eos):
    ex_logits, ex_dtypes = read_safetensors(args.exspec_logits)
    ex_gen, failures = {}, []
    for rec in read_jsonl(args.exspec_generate):
        if rec.get("index") in ex_gen:
            failures.append(f"{args.exspec_generate}: index {rec.get('index')} appears twice")
        ex_gen[rec.get("index")] = rec
    for i, ids in enumerate(prompts):
        ref = model.forward(ids)
        name = f"logits.{i}"
        got = ex_logits.get(name)
        if got is None or tuple(got.shape) != tuple(ref.shape) or ex_dtypes[name] != "F64":
            desc = "missing" if got is None else f"{ex_dtypes[name]} {list(got.shape)}"
            failures.append(f"prompt {i}: {name} is {desc}, expected F64 {list(ref.shape)}")
        else:
            diff = (got - ref).abs()
            worst = float(diff.max())
            print(f"prompt {i}: T={len(ids)} logits max|diff| = {worst:.3e}")
            if not worst <= args.tol:  # also catches NaN
                pos, col = divmod(int(torch.nan_to_num(diff, nan=math.inf).argmax()), ref.shape[1])
                failures.append(f"prompt {i}: logits max|diff| {worst:.3e} > tol {args.tol:g} at position "
                                f"{pos}, vocab id {col} (exspec {float(got[pos, col])!r}, "
                                f"reference {float(ref[pos, col])!r})")
        toks, reason, margins = greedy(model, ids, args.max_tokens, eos, first_logits=ref)
        rec = ex_gen.pop(i, None)
        if rec is None:
            failures.append(f"prompt {i}: no line with index {i} in {args.exspec_generate}")
            continue
        theirs = rec.get("token_ids")
        if theirs != toks:
            theirs = theirs if isinstance(theirs, list) else []
            at = next((j for j, (a, b) in enumerate(zip(theirs, toks)) if a != b), min(len(theirs), len(toks)))
            pick = lambda xs: xs[at] if at < len(xs) else "<end>"
            margin = f", reference top-2 margin {margins[at]:.3e}" if at < len(margins) else ""
            failures.append(f"prompt {i}: generated ids differ at position {at}: exspec {pick(theirs)}, "
                            f"reference {pick(toks)} (lengths {len(theirs)} vs {len(toks)}{margin})")
        elif rec.get("finish_reason") != reason:
            failures.append(f"prompt {i}: finish_reason exspec {rec.get('finish_reason')!r}, reference {reason!r}")
        else:
            print(f"prompt {i}: {len(toks)} generated ids match ({reason})")
    if ex_gen:
        failures.append(f"{args.exspec_generate}: unexpected indices {sorted(ex_gen, key=str)}")
    for f in failures:
        print("MISMATCH " + f, file=sys.stderr)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model")
    ap.add_argument("--prompts")
    ap.add_argument("--max-tokens", type=int)
    ap.add_argument("--exspec-logits")
    ap.add_argument("--exspec-generate")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--dump-generate", action="store_true", help="print own greedy JSONL, compare nothing")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        from self_test import self_test  # tests/reference/self_test.py, next to this file
        return self_test()
    if not (args.model and args.prompts and args.max_tokens is not None and args.max_tokens >= 0):
        ap.error("--model, --prompts and --max-tokens (>= 0) are required")
    if not args.dump_generate and not (args.exspec_logits and args.exspec_generate):
        ap.error("--exspec-logits and --exspec-generate are required (or --dump-generate)")
    try:
        cfg = read_json(os.path.join(args.model, "config.json"))
        model = Model(cfg, load_weights(args.model))
        eos = eos_ids(args.model, cfg)
        prompts = [rec.get("prompt_ids") for rec in read_jsonl(args.prompts)]
        if not all(isinstance(p, list) and p and all(isinstance(t, int) for t in p) for p in prompts):
            raise UsageError(f"{args.prompts}: every line needs a non-empty int list \"prompt_ids\"")
        if args.dump_generate:
            for i, ids in enumerate(prompts):
                toks, reason, _ = greedy(model, ids, args.max_tokens, eos)
                print(json.dumps({"index": i, "token_ids": toks, "finish_reason": reason}), flush=True)
            return 0
        status = compare(args, model, prompts, eos)
    except (UsageError, KeyError) as e:
        msg = f"missing key {e}" if isinstance(e, KeyError) else str(e)
        print(f"hf_reference.py: {msg}", file=sys.stderr)
        return 2
    print("hf_reference: all match" if status == 0 else "hf_reference: MISMATCH", file=sys.stderr)
    return status


if __name__ == "__main__":
    with torch.no_grad():
        sys.exit(main())
