"""A Llama decoder in plain PyTorch, as Hugging Face's LlamaForCausalLM defines it (RMSNorm, rotary
embeddings with rotate_half, grouped-query attention, SwiGLU, tied embeddings), so that its weights
load in exspec under HF's names. Runs on Debian's torch 1.13 and on PyTorch 2.x."""
import math

import torch
import torch.nn.functional as F
from torch import nn

SHAPES = {  # the demo pair: target ~11M parameters, draft ~1.6M (about 1/7 of its work a token)
    "target": dict(hidden=384, layers=6, heads=6, kv_heads=2, head_dim=64, intermediate=1024),
    "draft": dict(hidden=192, layers=2, heads=3, kv_heads=1, head_dim=64, intermediate=512),
}
EPS, THETA = 1e-5, 10000.0


class RMSNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        var = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x.float() * torch.rsqrt(var + EPS)).to(x.dtype)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Layer(nn.Module):
    def __init__(self, s):
        super().__init__()
        h, hd = s["hidden"], s["head_dim"]
        self.heads, self.kv_heads, self.head_dim = s["heads"], s["kv_heads"], hd
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(h), RMSNorm(h)
        self.q_proj = nn.Linear(h, s["heads"] * hd, bias=False)
        self.k_proj = nn.Linear(h, s["kv_heads"] * hd, bias=False)
        self.v_proj = nn.Linear(h, s["kv_heads"] * hd, bias=False)
        self.o_proj = nn.Linear(s["heads"] * hd, h, bias=False)
        self.gate_proj = nn.Linear(h, s["intermediate"], bias=False)
        self.up_proj = nn.Linear(h, s["intermediate"], bias=False)
        self.down_proj = nn.Linear(s["intermediate"], h, bias=False)

    def attention(self, x, cos, sin, causal):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.heads, self.head_dim).transpose(1, 2)      # [B, nh, T, hd]
        k = self.k_proj(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)   # [B, nkv, T, hd]
        v = self.v_proj(x).view(B, T, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        # Written out rather than scaled_dot_product_attention: deterministic, and the same on 1.13.
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(causal, float("-inf"))
        out = F.softmax(scores.float(), dim=-1).to(v.dtype) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, -1))

    def forward(self, x, cos, sin, causal):
        x = x + self.attention(self.input_layernorm(x), cos, sin, causal)
        y = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(y)) * self.up_proj(y))


class Llama(nn.Module):
    def __init__(self, shape, vocab):
        super().__init__()
        self.shape, self.vocab = shape, vocab
        self.embed_tokens = nn.Embedding(vocab, shape["hidden"])
        self.layers = nn.ModuleList(Layer(shape) for _ in range(shape["layers"]))
        self.norm = RMSNorm(shape["hidden"])
        hd = shape["head_dim"]
        self.register_buffer("inv_freq", 1.0 / THETA ** (torch.arange(0, hd, 2).float() / hd), persistent=False)
        for name, p in self.named_parameters():
            if p.dim() == 2:  # GPT-2's init; residual outputs scaled by depth
                std = 0.02 / math.sqrt(2 * shape["layers"]) if name.endswith(("o_proj.weight", "down_proj.weight")) else 0.02
                nn.init.normal_(p, std=std)

    def forward(self, ids):  # ids [B, T] -> logits [B, T, V]
        T = ids.shape[1]
        freqs = torch.arange(T, device=ids.device).float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        x = self.embed_tokens(ids)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).triu(1)
        for layer in self.layers:
            x = layer(x, cos, sin, causal)
        return F.linear(self.norm(x), self.embed_tokens.weight)  # tied: lm_head = embed_tokens

    def hf_state(self):
        """HF names -> tensors (lm_head is tied, so not stored)."""
        out = {"model.embed_tokens.weight": self.embed_tokens.weight, "model.norm.weight": self.norm.weight}
        for i, l in enumerate(self.layers):
            p = f"model.layers.{i}."
            out[p + "input_layernorm.weight"] = l.input_layernorm.weight
            out[p + "post_attention_layernorm.weight"] = l.post_attention_layernorm.weight
            for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
                out[p + f"self_attn.{n}.weight"] = getattr(l, n).weight
            for n in ("gate_proj", "up_proj", "down_proj"):
                out[p + f"mlp.{n}.weight"] = getattr(l, n).weight
        return out

    def hf_config(self, bos, eos, context):
        s = self.shape
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
                "hidden_size": s["hidden"], "intermediate_size": s["intermediate"],
                "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
                "num_key_value_heads": s["kv_heads"], "head_dim": s["head_dim"], "rms_norm_eps": EPS,
                "rope_theta": THETA, "max_position_embeddings": context, "attention_bias": False,
                "tie_word_embeddings": True, "vocab_size": self.vocab, "bos_token_id": bos,
                "eos_token_id": eos, "torch_dtype": "bfloat16"}
