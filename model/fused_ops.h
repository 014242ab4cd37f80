// The seam between the decoder and the per-row CPU operations (model/kernels/row_ops.h): each function
// takes and returns tensors as the decoder's libtorch code does, and returns an undefined tensor
// where it does not apply (not the CPU, not float32 or bfloat16, a layout it does not read), so
// that the caller falls back to libtorch.
#pragma once
#include <ATen/core/Tensor.h>

#include "model/kernels/row_ops.h"

namespace exspec {

// HF's RMSNorm of the rows of x [..., H] with weight w [H], or with one weight a head [heads, H]
// over x's last two dims (q and k norms side by side); undefined where it does not apply.
at::Tensor fused_rms_norm(const at::Tensor& x, const at::Tensor& w, double eps);
// act(gate) * up for gu [N, 2I] (gate first) -> [N, I].
at::Tensor fused_gated_mul(rowops::Gate gate, const at::Tensor& gu);
// Rotate-half rope of x [Bx, Tx, heads, D] (its Bx * Tx rows equally spaced, heads D apart, unit
// stride in D) with cos and sin [Bx, Tx, 1, D] -> [Bx, Tx, heads, D].
at::Tensor fused_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
// h += y, float32 on the CPU, both contiguous and of one size: each element the IEEE sum that
// h.add_(y) gives it, without the operator's dispatch and iterator (two residuals a layer, a few
// microseconds each at one row). false, and h untouched, where it does not apply.
bool fused_add_(const at::Tensor& h, const at::Tensor& y);
// Gemma 2's final soft-capping of logits x: cap * tanh(x / cap) in x's dtype (each of the three
// steps rounded to it, as Hugging Face's ops are), -inf (a shortlisted head's other tokens) kept.
// On the CPU one scalar tanh an element: libtorch's vectorised tanh and its scalar tail give
// other bits, so an element's result would depend on where the batch put it. Always defined.
at::Tensor softcap_logits(const at::Tensor& x, double cap);

}  // namespace exspec
