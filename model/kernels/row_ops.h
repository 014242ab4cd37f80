// The decoder's small per-row operations, each one pass over its rows on the CPU (torch-free;
// model/fused_ops.h is the seam). At one row a forward ran some 30 libtorch operators a layer, a
// few microseconds each; these replace the norm (6), the rope (7) and the gated activation (3).
// Each row is computed alone, in one fixed order (the norm's sum: 16 lanes, then a fixed tree),
// so a row's result does not depend on its batch; and the file is built without contraction, so
// the AVX-512, AVX2 and plain paths do the same arithmetic. float32's cap (isa.h: EXSPEC_ISA)
// chooses the path. bfloat16 rounds where libtorch's
// bfloat16 operators do (after each multiplication), so the results stay Hugging Face's.
#pragma once
#include <cstdint>

namespace exspec::rowops {

// The element type of every tensor a call reads and writes.
enum class Type { F32, BF16 };

// y = w * (x / sqrt(mean(x^2) + eps)) for rows [r0, r1) of x [n, H] (rows ldx apart), into y
// (rows ldy apart). bfloat16: y = bf16(w * bf16(x * r)), r in float32 (HF's LlamaRMSNorm).
void rms_norm(Type t, const void* x, int64_t ldx, const void* w, float eps, void* y, int64_t ldy, int64_t H, int64_t r0,
              int64_t r1);

// The gate's activation. Silu: g / (1 + e^-g). GeluTanh: 0.5 g (1 + tanh(y)), y = sqrt(2/pi)(g +
// 0.044715 g^3), computed as g / (1 + e^(-2y)), the same function without tanh's cancellation.
enum class Gate { Silu, GeluTanh };

// out = act(gate) * up for rows [r0, r1) of gu [n, 2I] (gate first, rows ldg apart), into out
// [n, I] (rows ldo apart). bfloat16: bf16(bf16(act(g)) * u).
void gated_mul(Type t, Gate gate, const void* gu, int64_t ldg, void* out, int64_t ldo, int64_t I, int64_t r0, int64_t r1);

// Rotate-half rope over every head of rows [r0, r1): x [n, heads, D] (rows ldx apart, heads D
// apart), cos and sin [n, D] (rows ldc apart), into y [n, heads, D] (contiguous rows).
// y_i = x_i cos_i - x_{i+D/2} sin_i and y_{i+D/2} = x_{i+D/2} cos_{i+D/2} + x_i sin_{i+D/2}, each
// product and the sum rounded in bfloat16 as libtorch's x * cos + rotate_half(x) * sin does.
void rope(Type t, const void* x, int64_t ldx, const void* cos, const void* sin, int64_t ldc, void* y, int64_t heads,
          int64_t D, int64_t r0, int64_t r1);

// out[i] = out[i] + y[i] * w for i in [0, n), float32: the product rounded, then the sum, as
// libtorch's y.mul_(w) then out.add_(y) give them (a row's sum over its experts, model/experts.h).
void weighted_add(const float* y, float w, float* out, int64_t n);

// The index of the largest value of each of n rows of V float32 (rows ld apart), as at::argmax
// gives it: the first of equal maxima (-0 and +0 equal), and the first NaN in a row that has one.
// Two passes, the first in vectors: the greedy choice over a verify's K + 1 rows of logits.
void argmax_rows(const float* x, int64_t ld, int64_t V, int64_t n, int64_t* out);

// The indices of the k largest of v[0..n) (1 <= k <= n), from the largest down; of equal values
// the first; NaN ranks below every other value. Vectors of 16 are skipped whole while none is
// above the k-th so far: a draft head's candidates (model/screened_head.h).
void top_k(const float* v, int64_t n, int64_t k, int64_t* out);

}  // namespace exspec::rowops
