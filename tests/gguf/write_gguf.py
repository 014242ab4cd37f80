#!/usr/bin/python3
"""Writes a Hugging Face checkpoint directory (as `exspec make-model` makes them) as a GGUF file,
the way llama.cpp's convert_hf_to_gguf.py does: its tensor names, the Q/K row permutation of
llama's rope, llama3 rope factors as a rope_freqs tensor, Phi-3's longrope factors as
rope_factors_long / rope_factors_short with their original context length and attn_factor, Qwen3-MoE's experts stacked into one 3-D
tensor a projection, Gemma 2's soft-capping keys, tokenizer.ggml.* metadata and the chat template; F32, F16, BF16 or Q8_0
(quantised as gguf-py does), Q4_K, Q6_K or Q4_K_M's mix (kquants.py), or one of the other types exspec serves (more_quants.py). Given a tokenizer.json instead of
a directory, writes its tokenizer metadata alone (with tokenizer_config.json beside it). Test-only: numpy and the standard
library, no torch, no llama.cpp.

usage: write_gguf.py HF_DIR|TOKENIZER_JSON OUT.gguf [--type f32|f16|bf16|q8_0|q8_0_as_f32|q4_k|q6_k|q4_k_m|q4_0|q4_0_mix|iq4_xs_mix|q4_1|q5_0|q5_1|q2_k|q3_k|q5_k|iq4_nl|iq4_xs|mxfp4] [--version 2|3] [--alignment N]
                     [--tokenizer TOKENIZER_JSON] [--pre NAME]
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np

import kquants
import more_quants
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "train"))
from safetensors_np import read_arrays  # noqa: E402

# gguf metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# ggml tensor types and llama.cpp's file types (LlamaFileType)
GGML = {"f32": 0, "f16": 1, "q8_0": 8, "bf16": 30, "q4_k": 12, "q6_k": 14}
FILE_TYPE = {"f32": 0, "f16": 1, "q8_0": 7, "bf16": 32, "q8_0_as_f32": 0, "q4_k": 14, "q6_k": 18, "q4_k_m": 15}
# the other types (more_quants.py), each file all of one type: llama.cpp's file types, the _S
# variants where there are several
FILE_TYPE.update({"q4_0": 2, "q4_1": 3, "q5_0": 8, "q5_1": 9, "q2_k": 10, "q3_k": 11, "q5_k": 16, "iq4_nl": 25,
                  "iq4_xs": 30, "mxfp4": 38})
# A Q4_0 file whose fused groups mix types: attn_k in IQ4_NL beside Q4_0 q and v, ffn_up in Q8_0
# beside a Q4_0 gate (exspec serves such groups as Q8_0 blocks, model/gguf_weights.cpp).
FILE_TYPE["q4_0_mix"] = 2
MIX = {"attn_k.weight": "iq4_nl", "ffn_up.weight": "q8_0"}
# An IQ4_XS file whose fused groups mix it with types it has no common blocks with: attn_v in
# Q4_1, ffn_gate in Q8_0 (exspec serves such groups from their values, quantised at load).
FILE_TYPE["iq4_xs_mix"] = 30
MIX_XS = {"attn_v.weight": "q4_1", "ffn_gate.weight": "q8_0"}
# llama.cpp's converter writes Mistral as llama (conversion/__init__.py) and no window; this
# writer adds llama.cpp's own key for one (as its converters do for Gemma, Cohere and others).
ARCH = {"LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3", "MistralForCausalLM": "llama",
        "Phi3ForCausalLM": "phi3", "Gemma3ForCausalLM": "gemma3", "Qwen3MoeForCausalLM": "qwen3moe",
        "Gemma2ForCausalLM": "gemma2"}
# Qwen3-MoE (conversion/qwen.py Qwen2MoeModel.modify_tensors): each sparse layer's experts stacked
# into one 3-D tensor a projection, numpy shape [expert, rows, cols] (GGUF ne [cols, rows, expert]),
# in the converter's order; the router as ffn_gate_inp.
EXPERT_PROJ = (("down_proj", "ffn_down_exps.weight"), ("gate_proj", "ffn_gate_exps.weight"),
               ("up_proj", "ffn_up_exps.weight"))
# Gemma 3 (conversion/gemma.py Gemma3Model) and Gemma 2 (Gemma2Model): their norms by llama.cpp's
# names (gguf-py's ATTN_POST_NORM, FFN_PRE_NORM, FFN_POST_NORM), each stored as the multiplier
# 1 + w that Gemma3RMSNorm / Gemma2RMSNorm scale by
GEMMA_NAMES = {"post_attention_layernorm.weight": "post_attention_norm.weight",
               "pre_feedforward_layernorm.weight": "ffn_norm.weight",
               "post_feedforward_layernorm.weight": "post_ffw_norm.weight"}
# Gemma 2 (conversion/gemma.py Gemma2Model.set_gguf_parameters, which writes no rope key: llama.cpp
# takes rope.freq_base 10000 then): Gemma2Config's defaults for what config.json leaves out, as the
# converter reads its hparams through transformers' AutoConfig
GEMMA2_DEFAULTS = {"attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "sliding_window": 4096,
                   "head_dim": 256, "rope_theta": 10000.0}
# token types (llama.cpp's llama_token_type)
NORMAL, CONTROL, USER_DEFINED, UNUSED = 1, 3, 4, 5

LLAMA3_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
               "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def read_safetensors(path):
    return {name: a.astype(np.float32) for name, a in read_arrays(path).items()}


def permute(w, n_head, n_head_kv):  # convert_hf_to_gguf.py LlamaModel.permute
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(cfg):  # convert_hf_to_gguf.py LlamaModel.generate_extra_tensors
    rs = cfg["rope_scaling"]
    base = cfg.get("rope_theta", 10000.0)
    dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor = rs.get("factor", 8.0)
    low, high = rs.get("low_freq_factor", 1.0), rs.get("high_freq_factor", 4.0)
    old = rs.get("original_max_position_embeddings", 8192)
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def phi3_longrope(cfg):
    """llama.cpp's Phi3 converter (conversion/phi.py Phi3MiniModel) for a config with longrope
    factors: (original context length, attn_factor, long factors, short factors), the factors as
    float32 arrays of half the rotary dims; None for a config without long factors. The original
    length rope_scaling's original_max_position_embeddings, else the top-level one (the converter
    mirrors the top-level key into its rope parameters only when they lack it); attn_factor the
    converter's own sqrt(1 + ln(scale) / ln(original)) for scale = max_position_embeddings /
    original > 1, else 1 (it does not read rope_scaling's attention_factor)."""
    rs = cfg.get("rope_scaling") or {}
    if not rs.get("long_factor"):
        return None
    kind = (rs.get("rope_type") or rs.get("type") or "").lower()
    if kind not in ("longrope", "su"):
        sys.exit("write_gguf.py: phi3 rope factors of rope type %r are not written" % kind)
    original = rs.get("original_max_position_embeddings") or cfg.get("original_max_position_embeddings")
    if original is None:
        sys.exit("write_gguf.py: phi3 longrope without original_max_position_embeddings")
    scale = cfg["max_position_embeddings"] / original
    attn_factor = math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1.0 else 1.0
    heads = cfg["num_attention_heads"]
    rot = int((cfg.get("head_dim") or cfg["hidden_size"] // heads) * cfg.get("partial_rotary_factor", 1.0))
    long_f, short_f = (np.array(rs.get(k) or [], dtype=np.float32) for k in ("long_factor", "short_factor"))
    if len(long_f) != rot // 2 or len(short_f) != rot // 2:
        sys.exit("write_gguf.py: phi3 longrope factors: %d long, %d short, expected %d (half the rotary dims)"
                 % (len(long_f), len(short_f), rot // 2))
    return original, attn_factor, long_f, short_f


def np_roundf(n):  # gguf-py quants.py: round half away from zero
    a = np.abs(n)
    floored = np.floor(a)
    b = floored + np.floor(2 * (a - floored))
    return np.sign(n) * b


def quantize_q8_0(w):  # gguf-py quants.py Q8_0.quantize_blocks
    rows = w.astype(np.float32).reshape(-1, 32)
    d = np.abs(rows).max(axis=-1, keepdims=True) / 127
    with np.errstate(divide="ignore"):
        inv = np.where(d == 0, 0, 1 / d)
    qs = np_roundf(rows * inv)
    return np.concatenate([d.astype(np.float16).view(np.uint8), qs.astype(np.int8).view(np.uint8)], axis=-1).tobytes()


def tensor_bytes(name, w, kind, n_layers=0, has_output=True, n_expert=0):
    """(ggml type, bytes) as the converter stores it: 1-D tensors stay F32 (norms, biases), and so
    does an MoE router (ffn_gate_inp), which neither the converter nor llama-quantize quantises.
    A 3-D tensor (an MoE layer's experts) is its experts' rows one after another: each expert's
    rows quantised as a 2-D tensor of those rows would be."""
    if kind == "f32" or w.ndim == 1 or name.endswith("ffn_gate_inp.weight"):
        return GGML["f32"], w.astype(np.float32).tobytes()
    if kind == "q4_0_mix":
        kind = next((t for suffix, t in MIX.items() if name.endswith(suffix)), "q4_0")
    if kind == "iq4_xs_mix":
        kind = next((t for suffix, t in MIX_XS.items() if name.endswith(suffix)), "iq4_xs")
    if kind == "f16":
        return GGML["f16"], w.astype(np.float16).tobytes()
    if kind == "bf16":  # gguf-py: round to nearest even, as torch does
        u = w.astype(np.float32).view(np.uint32).astype(np.uint64)
        u = (u + (0x7FFF + ((u >> 16) & 1))) >> 16
        return GGML["bf16"], u.astype(np.uint16).tobytes()
    if kind in ("q4_k", "q6_k", "q4_k_m"):
        # Rows that are not whole super-blocks of 256 fall back to Q8_0 (llama-quantize takes
        # Q5_0 for Q4_K, which exspec does not serve, and Q8_0 for Q6_K).
        chosen = kquants.kquant_type(name, kind, n_layers, has_output, n_expert)
        if w.shape[-1] % kquants.QK or chosen == kquants.Q8_0:
            kind = "q8_0"
        elif chosen == kquants.Q6_K:
            return GGML["q6_k"], kquants.quantize_q6_k(w)
        elif chosen == kquants.Q5_K:  # Q4_K_M's attn_output in a model of 8 experts
            return kquants.Q5_K, more_quants.q5_k(w)
        else:
            return GGML["q4_k"], kquants.quantize_q4_k(w)
    if kind in more_quants.TYPES:
        type_id, block, quantise = more_quants.TYPES[kind]
        if w.shape[-1] % block == 0:
            return type_id, quantise(w)
        kind = "q8_0"  # rows that are not whole blocks, as for the K types above
    if w.shape[-1] % 32:
        return GGML["f16"], w.astype(np.float16).tobytes()
    if kind == "q8_0_as_f32":  # not the converter's: the values a Q8_0 file stands for, q * d, as F32
        b = np.frombuffer(quantize_q8_0(w), dtype=np.uint8).reshape(-1, 34)
        d = b[:, :2].copy().view(np.float16).astype(np.float32)
        return GGML["f32"], (b[:, 2:].view(np.int8).astype(np.float32) * d).astype(np.float32).tobytes()
    return GGML["q8_0"], quantize_q8_0(w)


def gguf_tensors(cfg, weights, arch):
    """(gguf name, array) in llama.cpp's names, q/k permuted for llama."""
    n_head, n_kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    names = {"input_layernorm.weight": "attn_norm.weight", "post_attention_layernorm.weight": "ffn_norm.weight",
             "self_attn.q_proj.weight": "attn_q.weight", "self_attn.k_proj.weight": "attn_k.weight",
             "self_attn.v_proj.weight": "attn_v.weight", "self_attn.o_proj.weight": "attn_output.weight",
             "self_attn.q_proj.bias": "attn_q.bias", "self_attn.k_proj.bias": "attn_k.bias",
             "self_attn.v_proj.bias": "attn_v.bias", "self_attn.o_proj.bias": "attn_output.bias",
             "self_attn.q_norm.weight": "attn_q_norm.weight", "self_attn.k_norm.weight": "attn_k_norm.weight",
             "mlp.gate_proj.weight": "ffn_gate.weight", "mlp.up_proj.weight": "ffn_up.weight",
             "mlp.down_proj.weight": "ffn_down.weight",
             # phi3 (conversion/phi.py): the fused tensors keep their layout, the gate and up as one ffn_up
             "self_attn.qkv_proj.weight": "attn_qkv.weight", "mlp.gate_up_proj.weight": "ffn_up.weight",
             # qwen3moe: a sparse layer's router; its dense layers (mlp_only_layers, decoder_sparse_step)
             # keep the ffn_gate/ffn_up/ffn_down above, which llama.cpp's converter does not map for
             # qwen3moe nor its loader read (it wants ffn_gate_inp on every layer)
             "mlp.gate.weight": "ffn_gate_inp.weight"}
    out, experts = [], {}
    if arch == "llama" and (cfg.get("rope_scaling") or {}).get("rope_type") == "llama3":
        out.append(("rope_freqs.weight", llama3_rope_factors(cfg)))
    longrope = phi3_longrope(cfg) if arch == "phi3" else None
    if longrope:  # the converter's generate_extra_tensors: long, then short, 1-D (F32 in every type)
        out += [("rope_factors_long.weight", longrope[2]), ("rope_factors_short.weight", longrope[3])]
    for name, w in weights.items():
        if ".mlp.experts." in name:
            out += stacked_experts(cfg, experts, name, w)
            continue
        if name == "model.embed_tokens.weight":
            g = "token_embd.weight"
        elif name == "model.norm.weight":
            g = "output_norm.weight"
        elif name == "lm_head.weight":
            if arch == "gemma2":  # Gemma2Model.filter_tensors skips it: llama.cpp's gemma2 reads token_embd
                continue
            g = "output.weight"
        else:
            parts = name.split(".")
            assert parts[:2] == ["model", "layers"], name
            rest = ".".join(parts[3:])
            g = "blk.%s.%s" % (parts[2], GEMMA_NAMES.get(rest, names.get(rest)) if arch in ("gemma3", "gemma2")
                               else names[rest])
            if arch == "llama" and parts[-2] in ("q_proj", "k_proj"):
                w = permute(w, n_head, n_head if parts[-2] == "q_proj" else n_kv)
        if arch in ("gemma3", "gemma2") and name.endswith("norm.weight"):
            w = w.astype(np.float32) + np.float32(1.0)
        out.append((g, w))
    return out


def stacked_experts(cfg, experts, name, w):
    """Collects model.layers.N.mlp.experts.E.PROJ.weight; once layer N has all of its experts'
    three projections, returns them stacked (expert E at index E), as the converter does."""
    parts = name.split(".")  # model layers N mlp experts E PROJ weight
    layer = experts.setdefault(parts[2], {})
    layer[(parts[6], int(parts[5]))] = w
    n = cfg.get("num_experts", 128)  # Qwen3MoeConfig's defaults, here and in model_kv
    if len(layer) < 3 * n:
        return []
    return [("blk.%s.%s" % (parts[2], g), np.stack([layer[(proj, e)] for e in range(n)]))
            for proj, g in EXPERT_PROJ]


def pre_name(tok):
    pre = tok.get("pre_tokenizer") or {}
    if pre.get("type") == "ByteLevel" and (pre.get("use_regex", True) or not tok["model"].get("merges")):
        return "gpt-2"  # without merges (the made checkpoints') any split gives the same ids
    if pre.get("type") == "Sequence":
        split = [p for p in pre["pretokenizers"] if p.get("type") == "Split"]
        regex = split[0]["pattern"].get("Regex") if split else None
        if regex == LLAMA3_REGEX:
            return "llama-bpe"
        if regex == QWEN2_REGEX:
            return "qwen2"
    sys.exit("write_gguf.py: no llama.cpp pre-tokenizer name for this tokenizer.json (give --pre)")


def looks_special(text):  # convert_hf_to_gguf.py TextModel.does_token_look_special
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]") or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<\uff5c") and text.endswith("\uff5c>"))
            or (text.startswith("<unused") and text.endswith(">")))


def spm_kv(tok, n, tc):
    """A SentencePiece-style BPE tokenizer.json (byte fallback, as Llama 2's and Gemma's) as
    tokenizer.ggml.model "llama", the way the converter's _create_vocab_sentencepiece writes it:
    tokens, scores and token types of the pieces, then the added tokens of tokenizer_config.json
    over them (control when special or special-looking, else user-defined with "\u2581" written as
    a space). A SentencePiece model's scores order its merges: here each piece scores minus the
    rank of the first merge that makes it (below all, when none does). A tokenizer.json whose
    normalizer prepends no "\u2581" is Gemma's: its converters write add_space_prefix false."""
    model = tok["model"]
    added = tc.get("added_tokens_decoder") or {str(t["id"]): t for t in tok.get("added_tokens", [])}
    first = {}
    for rank, m in enumerate(model["merges"]):
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        first.setdefault(a + b, rank)
    tokens, types, scores = ["[PAD%d]" % i for i in range(n)], [UNUSED] * n, [-10000.0] * n
    for text, i in model["vocab"].items():
        tokens[i] = text
        scores[i] = -float(first[text] + 1) if text in first else -float(len(model["merges"]) + 1)
        if text == model.get("unk_token"):
            types[i] = 2  # UNKNOWN
        elif len(text) == 6 and text.startswith("<0x") and text.endswith(">"):
            types[i] = 6  # BYTE
        else:
            types[i] = NORMAL
    for i, t in ((int(k), v) for k, v in added.items()):
        special = t.get("special") or looks_special(t["content"])
        tokens[i] = t["content"] if special else t["content"].replace("\u2581", " ")
        types[i], scores[i] = (CONTROL if special else USER_DEFINED), -1000.0
    kv = [("tokenizer.ggml.model", STRING, "llama"), ("tokenizer.ggml.pre", STRING, "default"),
          ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens), ("tokenizer.ggml.scores", (ARRAY, F32), scores),
          ("tokenizer.ggml.token_type", (ARRAY, I32), types)]
    norm = tok.get("normalizer") or {}
    if not any(step.get("type") == "Prepend" for step in norm.get("normalizers", [norm])):
        kv.append(("tokenizer.ggml.add_space_prefix", BOOL, False))
    return kv


def tokenizer_kv(hf_dir, tok_path, pre, vocab_size):
    tok = json.load(open(tok_path))
    model = tok["model"]
    if model["type"] != "BPE":
        sys.exit("write_gguf.py: only BPE tokenizers are written")
    spm = bool(model.get("byte_fallback"))
    added = {t["id"]: t for t in tok.get("added_tokens", [])}
    ids = dict(model["vocab"])
    for t in added.values():
        ids[t["content"]] = t["id"]
    n = max(vocab_size, max(ids.values()) + 1)
    tokens = ["[PAD%d]" % i for i in range(n)]
    types = [UNUSED] * n
    for text, i in ids.items():
        tokens[i] = text
        types[i] = (CONTROL if added[i].get("special") else USER_DEFINED) if i in added else NORMAL
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    cfg_path = os.path.join(os.path.dirname(tok_path), "tokenizer_config.json")
    tc = json.load(open(cfg_path)) if os.path.exists(cfg_path) else {}
    if spm:
        kv = spm_kv(tok, n, tc)
    else:
        kv = [("tokenizer.ggml.model", STRING, "gpt2"), ("tokenizer.ggml.pre", STRING, pre or pre_name(tok)),
              ("tokenizer.ggml.tokens", (ARRAY, STRING), tokens), ("tokenizer.ggml.token_type", (ARRAY, I32), types),
              ("tokenizer.ggml.merges", (ARRAY, STRING), merges)]

    def content(v):
        return v.get("content") if isinstance(v, dict) else v
    for key, field in (("bos_token_id", "bos_token"), ("eos_token_id", "eos_token"), ("unknown_token_id", "unk_token"),
                       ("padding_token_id", "pad_token")):
        if content(tc.get(field)) in ids:
            kv.append(("tokenizer.ggml." + key, U32, ids[content(tc[field])]))
    for flag in ("add_bos_token", "add_eos_token"):
        if isinstance(tc.get(flag), bool):
            kv.append(("tokenizer.ggml." + flag, BOOL, tc[flag]))
    template = tc.get("chat_template")
    jinja = os.path.join(os.path.dirname(tok_path), "chat_template.jinja")
    if template is None and os.path.exists(jinja):
        template = open(jinja).read()
    if isinstance(template, str):
        kv.append(("tokenizer.chat_template", STRING, template))
    return kv


def model_kv(cfg, arch, kind, name):
    if arch == "gemma2":
        return gemma2_kv(cfg, kind, name)
    heads = cfg["num_attention_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
    kv = [("general.architecture", STRING, arch), ("general.type", STRING, "model"), ("general.name", STRING, name),
          ("%s.block_count" % arch, U32, cfg["num_hidden_layers"]),
          ("%s.context_length" % arch, U32, cfg["max_position_embeddings"]),
          ("%s.embedding_length" % arch, U32, cfg["hidden_size"]),
          ("%s.feed_forward_length" % arch, U32, cfg["intermediate_size"]),
          ("%s.attention.head_count" % arch, U32, heads),
          ("%s.attention.head_count_kv" % arch, U32, cfg.get("num_key_value_heads") or heads),
          ("%s.rope.freq_base" % arch, F32, cfg.get("rope_theta", 10000.0)),
          ("%s.attention.layer_norm_rms_epsilon" % arch, F32, cfg["rms_norm_eps"]),
          ("general.file_type", U32, FILE_TYPE[kind])]
    if "head_dim" in cfg:
        kv += [("%s.attention.key_length" % arch, U32, head_dim), ("%s.attention.value_length" % arch, U32, head_dim)]
    if arch == "llama":
        kv += [("llama.vocab_size", U32, cfg["vocab_size"]), ("llama.rope.dimension_count", U32, head_dim)]
    if cfg["architectures"][0] == "MistralForCausalLM" and cfg.get("sliding_window", 4096):
        kv.append(("%s.attention.sliding_window" % arch, U32, cfg.get("sliding_window", 4096)))
    if arch == "gemma3":  # conversion/gemma.py: the window (each 6th layer full unless a pattern key says
        # otherwise, which the converter does not write), and TextModel's linear rope scaling
        if cfg.get("sliding_window_pattern", 6) != 1 and cfg.get("sliding_window"):
            kv.append(("gemma3.attention.sliding_window", U32, cfg["sliding_window"]))
        types = cfg.get("layer_types")
        if types:  # llama.cpp reads one bool a layer (load_swa_pattern)
            kv.append(("gemma3.attention.sliding_window_pattern", (ARRAY, BOOL), [t == "sliding_attention" for t in types]))
        rs = cfg.get("rope_scaling") or {}
        if rs.get("rope_type", rs.get("type")) == "linear":
            kv += [("gemma3.rope.scaling.type", STRING, "linear"), ("gemma3.rope.scaling.factor", F32, rs["factor"])]
    if arch == "phi3":  # llama.cpp's Phi3 converter: the rotary dims, and the window when there is one
        kv.append(("phi3.rope.dimension_count", U32, int(head_dim * cfg.get("partial_rotary_factor", 1.0))))
        if cfg.get("sliding_window"):
            kv.append(("phi3.attention.sliding_window", U32, cfg["sliding_window"]))
        # the pretrained context (the converter's always; here when the config has it) and, with
        # longrope factors, their attention factor
        original = (cfg.get("rope_scaling") or {}).get("original_max_position_embeddings") or \
            cfg.get("original_max_position_embeddings")
        if original is not None:
            kv.append(("phi3.rope.scaling.original_context_length", U32, original))
        longrope = phi3_longrope(cfg)
        if longrope:
            kv.append(("phi3.rope.scaling.attn_factor", F32, longrope[1]))
    if arch == "qwen3moe":  # TextModel's expert counts and Qwen2MoeModel's expert width
        kv += [("qwen3moe.expert_count", U32, cfg.get("num_experts", 128)),
               ("qwen3moe.expert_used_count", U32, cfg.get("num_experts_per_tok", 8)),
               ("qwen3moe.expert_feed_forward_length", U32, cfg.get("moe_intermediate_size", 768))]
    if kind in ("q8_0", "q4_k", "q6_k", "q4_k_m"):
        kv.append(("general.quantization_version", U32, 2))
    return kv


def gemma2_check(cfg):
    """What a gemma2 file cannot hold, refused: llama.cpp's gemma2 always soft-caps both scores and
    logits (a key left out is its default, 50 and 30) and always windows its sliding layers (4096
    when left out), so a null cap or window cannot be written (the converter itself fails on one:
    struct.pack of None); no rope scaling; no head of its own (the converter drops lm_head.weight,
    llama.cpp reads token_embd)."""
    for key in ("attn_logit_softcapping", "final_logit_softcapping", "sliding_window"):
        if key in cfg and cfg[key] is None:
            sys.exit("write_gguf.py: gemma2 with %s null is not written: llama.cpp's gemma2 has no way to "
                     "switch it off (a file without the key takes its default %g)" % (key, GEMMA2_DEFAULTS[key]))
    if cfg.get("rope_scaling"):
        sys.exit("write_gguf.py: gemma2 with rope_scaling is not written: the converter writes no rope key")
    if not cfg.get("tie_word_embeddings", True):
        sys.exit("write_gguf.py: an untied gemma2 is not written: the converter drops lm_head.weight and "
                 "llama.cpp's gemma2 reads token_embd as its head")


def gemma2_kv(cfg, kind, name):
    """conversion/gemma.py Gemma2Model.set_gguf_parameters, in its order (it calls no parent's, so
    writes no rope.freq_base, rope.dimension_count or vocab_size): the caps F32, the window U32.
    A rope_theta other than llama.cpp's default 10000, or layer_types other than Gemma2Config's
    default (layers 0, 2, 4, ... sliding), are added by llama.cpp's own keys (rope.freq_base, and
    attention.sliding_window_pattern as one bool a layer, which its load_swa_pattern reads);
    the converter would lose them. No key holds query_pre_attn_scalar: llama.cpp scales the
    scores by head_dim^-0.5, (hidden / heads)^-0.5 for 46 layers (Gemma 2 27B)."""
    gemma2_check(cfg)
    get = lambda key: cfg.get(key, GEMMA2_DEFAULTS[key])
    heads, n = cfg["num_attention_heads"], cfg["num_hidden_layers"]
    kv = [("general.architecture", STRING, "gemma2"), ("general.type", STRING, "model"), ("general.name", STRING, name),
          ("gemma2.context_length", U32, cfg["max_position_embeddings"]),
          ("gemma2.embedding_length", U32, cfg["hidden_size"]),
          ("gemma2.block_count", U32, n),
          ("gemma2.feed_forward_length", U32, cfg["intermediate_size"]),
          ("gemma2.attention.head_count", U32, heads),
          ("gemma2.attention.head_count_kv", U32, cfg.get("num_key_value_heads") or heads),
          ("gemma2.attention.layer_norm_rms_epsilon", F32, cfg["rms_norm_eps"]),
          ("gemma2.attention.key_length", U32, get("head_dim")),
          ("gemma2.attention.value_length", U32, get("head_dim")),
          ("general.file_type", U32, FILE_TYPE[kind]),
          ("gemma2.attn_logit_softcapping", F32, get("attn_logit_softcapping")),
          ("gemma2.final_logit_softcapping", F32, get("final_logit_softcapping")),
          ("gemma2.attention.sliding_window", U32, get("sliding_window"))]
    if float(get("rope_theta")) != 10000.0:
        kv.append(("gemma2.rope.freq_base", F32, get("rope_theta")))
    types = cfg.get("layer_types")
    if types and types != ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]:
        kv.append(("gemma2.attention.sliding_window_pattern", (ARRAY, BOOL), [t == "sliding_attention" for t in types]))
    if kind in ("q8_0", "q4_k", "q6_k", "q4_k_m"):
        kv.append(("general.quantization_version", U32, 2))
    return kv


def sampling_kv(hf_dir):  # gguf-py's add_sampling_*: a checkpoint's recommended sampling
    path = os.path.join(hf_dir, "generation_config.json")
    g = json.load(open(path)) if os.path.exists(path) else {}
    keys = [("temperature", "temp", F32), ("top_p", "top_p", F32), ("min_p", "min_p", F32),
            ("repetition_penalty", "penalty_repeat", F32), ("top_k", "top_k", I32)]
    return [("general.sampling." + key, t, g[field]) for field, key, t in keys if g.get(field) is not None]


def pack_value(t, v):
    if isinstance(t, tuple):  # (ARRAY, item type)
        return struct.pack("<IQ", t[1], len(v)) + b"".join(pack_value(t[1], x) for x in v)
    if t == STRING:
        b = v.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    return struct.pack("<" + {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
                              U64: "Q", I64: "q", F64: "d"}[t], v)


def write(path, kv, tensors, version, alignment):
    if alignment != 32:
        kv = kv + [("general.alignment", U32, alignment)]
    out = bytearray(struct.pack("<IIQQ", 0x46554747, version, len(tensors), len(kv)))
    for key, t, v in kv:
        out += pack_value(STRING, key) + struct.pack("<I", ARRAY if isinstance(t, tuple) else t) + pack_value(t, v)
    offset, blobs = 0, []
    for name, (ggml_type, shape, blob) in tensors:
        out += pack_value(STRING, name) + struct.pack("<I", len(shape))
        out += b"".join(struct.pack("<Q", d) for d in reversed(shape))  # innermost first
        out += struct.pack("<IQ", ggml_type, offset)
        blobs.append(blob)
        offset += (len(blob) + alignment - 1) // alignment * alignment
    out += b"\0" * (-len(out) % alignment)
    for blob in blobs:
        out += blob + b"\0" * (-len(blob) % alignment)
    with open(path, "wb") as f:
        f.write(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hf_dir")
    ap.add_argument("out")
    ap.add_argument("--type", default="f32", choices=sorted(FILE_TYPE))
    ap.add_argument("--version", type=int, default=3)
    ap.add_argument("--alignment", type=int, default=32)
    ap.add_argument("--tokenizer", help="a tokenizer.json to write instead of the directory's")
    ap.add_argument("--pre", help="tokenizer.ggml.pre (llama.cpp's pre-tokenizer name)")
    a = ap.parse_args()
    if a.hf_dir.endswith(".json"):  # a tokenizer.json alone: its metadata and no tensors
        kv = [("general.architecture", STRING, "llama"), ("general.type", STRING, "vocab")]
        write(a.out, kv + tokenizer_kv(None, a.hf_dir, a.pre, 0), [], a.version, a.alignment)
        return
    cfg = json.load(open(os.path.join(a.hf_dir, "config.json")))
    arch = ARCH.get(cfg["architectures"][0])
    if arch is None:
        sys.exit("write_gguf.py: architecture %s is not written" % cfg["architectures"][0])
    if arch == "gemma2":
        gemma2_check(cfg)
    if arch == "qwen3moe" and not cfg.get("norm_topk_prob", False):
        # llama.cpp's qwen3moe renormalises the chosen experts' weights always (build_moe_ffn's
        # norm_w, fixed in src/models/qwen3moe.cpp) and has no key to say otherwise
        sys.exit("write_gguf.py: qwen3moe without norm_topk_prob is not written: a GGUF file's weights are renormalised")
    index = os.path.join(a.hf_dir, "model.safetensors.index.json")
    if os.path.exists(index):  # sharded: each shard once, in the index's order
        weights = {}
        for shard in dict.fromkeys(json.load(open(index))["weight_map"].values()):
            weights.update(read_safetensors(os.path.join(a.hf_dir, shard)))
    else:
        weights = read_safetensors(os.path.join(a.hf_dir, "model.safetensors"))
    tensors = []
    named = gguf_tensors(cfg, weights, arch)
    has_output = any(name == "output.weight" for name, _ in named)
    n_expert = cfg.get("num_experts", 128) if arch == "qwen3moe" else 0
    for name, w in named:
        t, blob = tensor_bytes(name, w, a.type, cfg["num_hidden_layers"], has_output, n_expert)
        tensors.append((name, (t, list(w.shape), blob)))
    kv = model_kv(cfg, arch, a.type, os.path.basename(os.path.normpath(a.hf_dir)))
    tok = a.tokenizer or os.path.join(a.hf_dir, "tokenizer.json")
    kv += tokenizer_kv(a.hf_dir, tok, a.pre, cfg["vocab_size"]) + sampling_kv(a.hf_dir)
    write(a.out, kv, tensors, a.version, a.alignment)


if __name__ == "__main__":
    main()
