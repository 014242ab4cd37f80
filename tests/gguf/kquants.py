"""Q4_K and Q6_K blocks for write_gguf.py, and the types llama.cpp's Q4_K_M gives each tensor.

The blocks are the format's (ggml-common.h's block_q4_K, block_q6_K; gguf-py's quants.py reads them
back as these do). The scales are chosen as llama.cpp's reference quantisers choose them in
outline, without their search for a better scale: Q4_K takes each sub-block's range (min clamped to
0 or below) as scale and min, Q6_K the value of largest magnitude as −32. numpy only.
"""
import numpy as np

Q4_K, Q5_K, Q6_K, Q8_0 = 12, 13, 14, 8
QK = 256


def roundf(n):  # round half away from zero, as ggml's nearest_int and gguf-py's np_roundf
    a = np.abs(n)
    f = np.floor(a)
    return np.sign(n) * (f + np.floor(2 * (a - f)))


def f16(a):
    return np.asarray(a, dtype=np.float32).astype(np.float16)


def quantize_q4_k(w):
    x = w.astype(np.float32).reshape(-1, 8, 32)
    lo = np.minimum(x.min(axis=-1), 0)
    scale = (x.max(axis=-1) - lo) / 15
    mins = -lo
    max_scale, max_min = scale.max(axis=-1, keepdims=True), mins.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ls = np.where(max_scale > 0, np.minimum(roundf(scale * (63 / max_scale)), 63), 0)
        lm = np.where(max_min > 0, np.minimum(roundf(mins * (63 / max_min)), 63), 0)
    d, dmin = f16(max_scale / 63), f16(max_min / 63)
    dl = d.astype(np.float32) * ls  # the scales the file will hold, as the reader computes them
    ml = dmin.astype(np.float32) * lm
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(dl[..., None] > 0, roundf((x + ml[..., None]) / dl[..., None]), 0)
    q = np.clip(q, 0, 15).astype(np.uint8)
    ls, lm = ls.astype(np.uint8), lm.astype(np.uint8)
    sc = np.zeros((x.shape[0], 12), dtype=np.uint8)  # 6-bit scales and mins, packed
    sc[:, 0:4] = ls[:, 0:4] | ((ls[:, 4:8] >> 4) << 6)
    sc[:, 4:8] = lm[:, 0:4] | ((lm[:, 4:8] >> 4) << 6)
    sc[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    q = q.reshape(-1, 4, 2, 32)  # 64 values a chunk: the first 32 in the low nibbles
    qs = (q[:, :, 0, :] | (q[:, :, 1, :] << 4)).reshape(-1, 128)
    return np.concatenate([d.reshape(-1, 1).view(np.uint8), dmin.reshape(-1, 1).view(np.uint8), sc, qs], axis=-1).tobytes()


def quantize_q6_k(w):
    x = w.astype(np.float32).reshape(-1, 16, 16)
    idx = np.abs(x).argmax(axis=-1)
    big = np.take_along_axis(x, idx[..., None], axis=-1)[..., 0]
    scale = big / -32  # the largest magnitude becomes q − 32 = −32
    top = np.take_along_axis(scale, np.abs(scale).argmax(axis=-1)[..., None], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        iscale = np.where(top != 0, -128 / top, 0)
    ls = np.clip(roundf(iscale * scale), -128, 127)
    d = f16(np.where(iscale != 0, 1 / iscale, 0))
    dl = d.astype(np.float32) * ls
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(dl[..., None] != 0, roundf(x / dl[..., None]), 0)
    q = (np.clip(q, -32, 31) + 32).astype(np.uint8).reshape(-1, 2, 4, 32)  # per half: 4 runs of 32
    low = np.concatenate([(q[:, :, 0] & 0xF) | ((q[:, :, 2] & 0xF) << 4), (q[:, :, 1] & 0xF) | ((q[:, :, 3] & 0xF) << 4)],
                         axis=-1).reshape(-1, 128)
    qh = ((q[:, :, 0] >> 4) | ((q[:, :, 1] >> 4) << 2) | ((q[:, :, 2] >> 4) << 4) | ((q[:, :, 3] >> 4) << 6)).reshape(-1, 64)
    scales = ls.astype(np.int8).view(np.uint8)
    return np.concatenate([low.astype(np.uint8), qh.astype(np.uint8), scales, d.reshape(-1, 1).view(np.uint8)],
                          axis=-1).tobytes()


def use_more_bits(i, n):  # llama.cpp's llama-quant.cpp: the layers Q4_K_M gives Q6_K
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def kquant_type(name, kind, n_layers, has_output, n_expert=0):
    """The ggml type of a 2-D tensor (or 3-D, an MoE layer's experts) in a file of `kind` (q4_k,
    q6_k, q4_k_m). Q4_K_M as llama-quant.cpp's llama_tensor_get_type_impl chooses: the head (or the
    tied embeddings) Q6_K; attn_v and ffn_down (ffn_down_exps too, its layer read from the name)
    Q6_K on use_more_bits' layers; and, for a model of exactly 8 experts (its Mixtral rule),
    attn_v and attn_k Q8_0 and attn_output Q5_K; everything else Q4_K."""
    if kind == "q6_k":
        return Q6_K
    if kind == "q4_k":
        return Q4_K
    if name == "output.weight" or (name == "token_embd.weight" and not has_output):
        return Q6_K
    parts = name.split(".")
    if parts[0] != "blk":
        return Q4_K
    if n_expert == 8 and parts[2] in ("attn_v", "attn_k"):
        return Q8_0
    if n_expert == 8 and parts[2] == "attn_output":
        return Q5_K
    if parts[2] in ("attn_v", "ffn_down", "ffn_down_exps") and use_more_bits(int(parts[1]), n_layers):
        return Q6_K
    return Q4_K
