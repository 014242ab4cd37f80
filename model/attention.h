// The one attention function of exspec: plain matmul-softmax, so that it is identical on
// libtorch 1.13 (Debian) and PyTorch 2.x (CUDA), and exact enough for the float64 oracle.
#pragma once
#include <ATen/core/Tensor.h>

namespace exspec {

// q [B, H, T, D]; k, v [B, Hkv, S, D] with H a multiple of Hkv (grouped-query attention);
// blocked [B, T, S] bool, true where a query may not look (padding and causality folded in), or
// undefined when nothing is blocked. Returns [B, H, T, D].
// `onednn` (the decoder's "own CPU kernels" switch; the name is older than them): on the CPU in
// float32 and bfloat16, the kernel that computes each query alone in one fixed order
// (model/kernels/attention_kernel.h: a row's result does not depend on its batch). Elsewhere, and
// with false (the tests' reference), at::matmul.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& blocked,
                     bool onednn = true);

// blocked[b, t, s] = !(mask[b, s] && s <= cached + t), for a forward over T new positions after
// `cached` positions; mask is [B, cached + T] (1 = content, 0 = padding). Computed once per
// forward, used by every layer. Undefined when t == 1 and a host mask has no padding.
at::Tensor attention_blocked(const at::Tensor& mask, int64_t cached, int64_t t);

}  // namespace exspec
