// The one attention function of exspec: plain matmul-softmax, so that it is identical on
// libtorch 1.13 (Debian) and PyTorch 2.x (CUDA), and exact enough for the float64 oracle.
#pragma once
#include <ATen/core/Tensor.h>

#include "model/layer_kind.h"

namespace exspec {

// q [B, H, T, D]; k, v [B, Hkv, S, D] with H a multiple of Hkv (grouped-query attention);
// blocked [B, T, S] bool, true where a query may not look (padding and causality folded in), or
// undefined when nothing is blocked. Scores are scaled by `scale` (ModelConfig::attention_scale:
// D^-0.5, or Gemma's query_pre_attn_scalar^-0.5), then, where softcap > 0, capped to
// softcap * tanh(score / softcap) before the mask (Gemma 2's attn_logit_softcapping). Returns [B, H, T, D].
// `onednn` (the decoder's "own CPU kernels" switch; the name is older than them): on the CPU in
// float32 and bfloat16, the kernel that computes each query alone in one fixed order
// (model/kernels/attention_kernel.h: a row's result does not depend on its batch). Elsewhere, and
// with false (the tests' reference), at::matmul.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& blocked,
                     double scale, bool onednn = true, double softcap = 0);

class KVStore;
struct SlotForward;

// The in-place CPU step's attention straight over its KV store: stores layer `layer`'s keys and
// values of the forward's tokens (KVStore::write_read_direct) and runs attention()'s own kernel
// on the store's memory, so each query gets the bits attention() gives it over write_read's
// views, without the dozen tensor operations a layer those cost. qk [B, T, H + Hkv, D] (the
// q heads, then the k heads), v [B, T, Hkv, D], blocked [B, T, window] bool or undefined.
// Returns [B * T, H * D]; undefined, and nothing stored, where it does not apply (not the CPU,
// not float32 or bfloat16, a store read by rows or by gather, padded rows, other strides).
at::Tensor attention_in_store(KVStore& store, const SlotForward& f, int64_t layer, const at::Tensor& qk,
                              const at::Tensor& v, int64_t H, const at::Tensor& blocked, double scale, double softcap);

// blocked[b, t, s] = !(mask[b, s] && s <= cached + t), for a forward over T new positions after
// `cached` positions; mask is [B, cached + T] (1 = content, 0 = padding). Computed once per
// forward, used by every layer. Undefined when t == 1 and a host mask has no padding.
at::Tensor attention_blocked(const at::Tensor& mask, int64_t cached, int64_t t);

// The masks one forward's layers attend under, one per attention window (model/layer_kind.h),
// made once a forward: each layer reads its kind's.
struct AttentionMasks {
  at::Tensor full;     // [B, T, S]: attention_blocked's, or a KV store's (undefined: none blocked)
  at::Tensor sliding;  // full, and the keys the window has passed (undefined: none blocked)
  int64_t window = 0;  // the sliding window's positions; 0: no layer slides (`sliding` unused)
  const at::Tensor& of(AttentionWindow w) const;  // throws for Sliding when window is 0
};
// `full` and, when window > 0, `sliding` = full or (query_pos - key_pos >= window), from the
// content positions of the keys, key_pos [B or 1, S], and of the queries, query_pos [B, T].
AttentionMasks attention_masks(const at::Tensor& full, const at::Tensor& key_pos, const at::Tensor& query_pos,
                               int64_t window);
// The content position of each key of a left- (or inner-) padded cache: mask [B, S] (1 =
// content) -> [B, S] int64, the number of content keys before it.
at::Tensor key_positions(const at::Tensor& mask);

}  // namespace exspec
