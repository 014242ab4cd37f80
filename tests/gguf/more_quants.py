"""Blocks of the other ggml types exspec serves (model/gguf/ggml_types.h), for write_gguf.py's
test files: Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4 (blocks of 32), Q2_K, Q3_K, Q5_K and IQ4_XS
(super-blocks of 256). The layouts are ggml-common.h's; the scales are chosen plainly (a block's
range or largest magnitude), without llama.cpp's search for better ones. numpy only.
"""
import numpy as np

KV_IQ4 = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.float32)
KV_FP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], np.float32)


def _f16(a):
    return np.asarray(a, np.float32).astype(np.float16)


def _half(a):  # float16 fields, one per row: (n, 2) bytes
    return _f16(a).reshape(-1, 1).view(np.uint8)


def _inv(d):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d != 0, 1 / d, 0).astype(np.float32)


def _nibbles(q):  # (..., 32) quants 0..15 -> (..., 16) bytes: values 0..15 low, 16..31 high
    return (q[..., :16] | (q[..., 16:] << 4)).astype(np.uint8)


def _signed_max(x):  # the value of largest magnitude along the last axis
    return np.take_along_axis(x, np.abs(x).argmax(axis=-1)[..., None], axis=-1)[..., 0]


def _qh(q):  # 5th bits of (n, 32) quants as a little-endian u32 per row
    bits = ((q >> 4) & 1).astype(np.uint32) << np.arange(32, dtype=np.uint32)
    return bits.sum(axis=-1, dtype=np.uint32).astype("<u4").reshape(-1, 1).view(np.uint8)


def _blocks32(w):
    return w.astype(np.float32).reshape(-1, 32)


def q4_0(w):
    x = _blocks32(w)
    d = _signed_max(x) / -8
    q = np.clip(np.trunc(x * _inv(d)[:, None] + 8.5), 0, 15).astype(np.uint8)
    return np.concatenate([_half(d), _nibbles(q)], axis=-1).tobytes()


def q4_1(w, levels=15):
    x = _blocks32(w)
    lo, hi = x.min(axis=-1), x.max(axis=-1)
    d = (hi - lo) / levels
    q = np.clip(np.round((x - lo[:, None]) * _inv(d)[:, None]), 0, levels).astype(np.uint8)
    if levels == 15:
        return np.concatenate([_half(d), _half(lo), _nibbles(q)], axis=-1).tobytes()
    return np.concatenate([_half(d), _half(lo), _qh(q), _nibbles(q & 0xF)], axis=-1).tobytes()


def q5_0(w):
    x = _blocks32(w)
    d = _signed_max(x) / -16
    q = np.clip(np.trunc(x * _inv(d)[:, None] + 16.5), 0, 31).astype(np.uint8)
    return np.concatenate([_half(d), _qh(q), _nibbles(q & 0xF)], axis=-1).tobytes()


def q5_1(w):
    return q4_1(w, levels=31)


def _nearest_in(x, d, table):  # per row of x (n, k) and scale d (n,): the nearest table index
    return np.abs(d[:, None, None] * table[None, None, :] - x[:, :, None]).argmin(axis=-1).astype(np.uint8)


def iq4_nl(w):
    x = _blocks32(w)
    d = _f16(_signed_max(x) / -127).astype(np.float32)
    return np.concatenate([_half(d), _nibbles(_nearest_in(x, d, KV_IQ4))], axis=-1).tobytes()


def mxfp4(w):
    x = _blocks32(w)
    amax = np.abs(x).max(axis=-1)
    with np.errstate(divide="ignore"):
        e = np.where(amax > 0, np.floor(np.log2(amax)) - 2 + 127, 0).astype(np.uint8)
    d = np.ldexp(np.float32(1), e.astype(np.int32) - 128).astype(np.float32)
    return np.concatenate([e.reshape(-1, 1), _nibbles(_nearest_in(x, d, KV_FP4))], axis=-1).tobytes()


def _runs2(q):  # (n, 256) 2-bit quants -> (n, 64): value 128h + 32p + l in byte 32h + l, bits 2p
    q = q.reshape(-1, 2, 4, 32).astype(np.uint8)
    return (q[:, :, 0] | (q[:, :, 1] << 2) | (q[:, :, 2] << 4) | (q[:, :, 3] << 6)).reshape(-1, 64)


def _scaled_with_min(x, levels, scale_levels):
    """Sub-blocks x (n, subs, k) as q·d·ls − dmin·lm: per sub-block a range of `levels` steps from
    min(x, 0), its scale and min quantised to 0..scale_levels against the super-block's d and dmin.
    Returns (q, ls, lm, d, dmin)."""
    lo = np.minimum(x.min(axis=-1), 0)
    sc, mn = (x.max(axis=-1) - lo) / levels, -lo
    d, dmin = sc.max(axis=-1) / scale_levels, mn.max(axis=-1) / scale_levels
    ls = np.clip(np.round(sc * _inv(d)[:, None]), 0, scale_levels).astype(np.uint8)
    lm = np.clip(np.round(mn * _inv(dmin)[:, None]), 0, scale_levels).astype(np.uint8)
    dl = _f16(d).astype(np.float32)[:, None] * ls
    ml = _f16(dmin).astype(np.float32)[:, None] * lm
    q = np.clip(np.round((x + ml[..., None]) * _inv(dl)[..., None]), 0, levels).astype(np.uint8)
    return q, ls, lm, d, dmin


def q2_k(w):
    q, ls, lm, d, dmin = _scaled_with_min(w.astype(np.float32).reshape(-1, 16, 16), 3, 15)
    return np.concatenate([ls | (lm << 4), _runs2(q.reshape(-1, 256)), _half(d), _half(dmin)], axis=-1).tobytes()


def _scales12(s):  # 16 six-bit scales -> Q3_K's 12 bytes
    out = np.zeros((s.shape[0], 12), np.uint8)
    out[:, :8] = (s[:, :8] & 0xF) | ((s[:, 8:] & 0xF) << 4)
    for i in range(16):
        out[:, 8 + i % 4] |= ((s[:, i] >> 4) & 3) << (2 * (i // 4))
    return out


def q3_k(w):
    x = w.astype(np.float32).reshape(-1, 16, 16)
    scale = _signed_max(x) / -4
    d = np.abs(scale).max(axis=-1) / 31
    ls = (np.clip(np.round(scale * _inv(d)[:, None]), -32, 31) + 32).astype(np.uint8)
    dl = _f16(d).astype(np.float32)[:, None] * (ls.astype(np.float32) - 32)
    q = np.clip(np.round(x * _inv(dl)[..., None]), -4, 3).astype(np.int8).reshape(-1, 2, 4, 32)
    hbit = (q >= 0).astype(np.uint8)
    low = np.where(q >= 0, q, q + 4).astype(np.uint8)
    hmask = np.zeros((q.shape[0], 32), np.uint8)
    for h in range(2):
        for p in range(4):
            hmask |= hbit[:, h, p] << (4 * h + p)
    return np.concatenate([hmask, _runs2(low.reshape(-1, 256)), _scales12(ls), _half(d)], axis=-1).tobytes()


def _k4_scales(ls, lm):  # Q4_K/Q5_K's 12 bytes of 6-bit scales and mins
    sc = np.zeros((ls.shape[0], 12), np.uint8)
    sc[:, 0:4] = ls[:, 0:4] | ((ls[:, 4:8] >> 4) << 6)
    sc[:, 4:8] = lm[:, 0:4] | ((lm[:, 4:8] >> 4) << 6)
    sc[:, 8:12] = (ls[:, 4:8] & 0xF) | ((lm[:, 4:8] & 0xF) << 4)
    return sc


def q5_k(w):
    q, ls, lm, d, dmin = _scaled_with_min(w.astype(np.float32).reshape(-1, 8, 32), 31, 63)
    qh = np.zeros((q.shape[0], 32), np.uint8)
    for j in range(8):
        qh |= ((q[:, j] >> 4) & 1) << j
    qs = ((q[:, 0::2] & 0xF) | ((q[:, 1::2] & 0xF) << 4)).reshape(-1, 128)
    return np.concatenate([_half(d), _half(dmin), _k4_scales(ls, lm), qh, qs], axis=-1).tobytes()


def iq4_xs(w):
    x = w.astype(np.float32).reshape(-1, 8, 32)
    scale = _signed_max(x) / -127
    d = np.abs(scale).max(axis=-1) / 31
    ls = (np.clip(np.round(scale * _inv(d)[:, None]), -32, 31) + 32).astype(np.uint8)
    dl = _f16(d).astype(np.float32)[:, None] * (ls.astype(np.float32) - 32)
    q = _nearest_in(x.reshape(-1, 32), dl.reshape(-1), KV_IQ4).reshape(-1, 8, 32)
    scales_h = (((ls >> 4) & 3).astype(np.uint16) << (2 * np.arange(8, dtype=np.uint16))).sum(axis=-1, dtype=np.uint16)
    scales_l = (ls[:, 0::2] & 0xF) | ((ls[:, 1::2] & 0xF) << 4)
    return np.concatenate([_half(d), scales_h.astype("<u2").reshape(-1, 1).view(np.uint8), scales_l,
                           _nibbles(q).reshape(-1, 128)], axis=-1).tobytes()


# write_gguf.py's --type name -> (ggml type id, elements a block, quantiser)
TYPES = {"q4_0": (2, 32, q4_0), "q4_1": (3, 32, q4_1), "q5_0": (6, 32, q5_0), "q5_1": (7, 32, q5_1),
         "iq4_nl": (20, 32, iq4_nl), "mxfp4": (39, 32, mxfp4), "q2_k": (10, 256, q2_k), "q3_k": (11, 256, q3_k),
         "q5_k": (13, 256, q5_k), "iq4_xs": (23, 256, iq4_xs)}
