// Built with -ffp-contract=off (CMakeLists.txt): each path multiplies and adds as written.
#include "model/kernels/row_ops.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "model/kernels/fast_exp.h"
#include "model/kernels/f32_kernel.h"
#include "model/kernels/fixed_order_dot.h"
#include "model/gguf/half_float.h"

namespace exspec::rowops {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))

// What a libtorch operator in this dtype stores: bfloat16 rounds, float32 keeps.
EXSPEC_INLINE float round_to(Type t, float f) { return t == Type::BF16 ? bf16_float(float_bf16(f)) : f; }
// A row as float32 into buf (bfloat16 widened), so the loops below vectorise.
EXSPEC_INLINE const float* row_f32(Type t, const void* base, int64_t off, int64_t n, float* buf) {
  if (t == Type::F32) return static_cast<const float*>(base) + off;
  const uint16_t* src = static_cast<const uint16_t*>(base) + off;
  for (int64_t i = 0; i < n; ++i) buf[i] = bf16_float(src[i]);
  return buf;
}

}  // namespace

static EXSPEC_INLINE void weighted_add_body(const float* y, float w, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] + y[i] * w;
}

static EXSPEC_INLINE void rms_norm_body(Type t, const void* x, int64_t ldx, const void* w, float eps, void* y, int64_t ldy,
                            int64_t H, int64_t r0, int64_t r1) {
  std::vector<float> xb(t == Type::BF16 ? H : 0), wb(xb.size());
  const float* wf = row_f32(t, w, 0, H, wb.data());
  for (int64_t r = r0; r < r1; ++r) {
    const float* xf = row_f32(t, x, r * ldx, H, xb.data());
    const float inv = 1.0f / std::sqrt(fixed_order_dot(xf, xf, H) / static_cast<float>(H) + eps);
    if (t == Type::BF16) {
      uint16_t* dst = static_cast<uint16_t*>(y) + r * ldy;
      for (int64_t k = 0; k < H; ++k) dst[k] = float_bf16(wf[k] * bf16_float(float_bf16(xf[k] * inv)));
    } else {
      float* dst = static_cast<float*>(y) + r * ldy;
      for (int64_t k = 0; k < H; ++k) dst[k] = wf[k] * (xf[k] * inv);
    }
  }
}

static EXSPEC_INLINE void gated_mul_body(Type t, Gate gate, const void* gu, int64_t ldg, void* out, int64_t ldo, int64_t I,
                             int64_t r0, int64_t r1) {
  std::vector<float> gb(t == Type::BF16 ? I : 0), ub(gb.size()), act(static_cast<size_t>(I));
  for (int64_t r = r0; r < r1; ++r) {
    const float* g = row_f32(t, gu, r * ldg, I, gb.data());
    const float* u = row_f32(t, gu, r * ldg + I, I, ub.data());
    if (gate == Gate::Silu) {
      for (int64_t i = 0; i < I; ++i) act[i] = g[i] / (1.0f + exp_f32(-g[i]));
    } else {
      constexpr float kTwoC = 1.5957691216057308f;  // 2 sqrt(2 / pi)
      for (int64_t i = 0; i < I; ++i) act[i] = g[i] / (1.0f + exp_f32(-kTwoC * (g[i] + 0.044715f * (g[i] * g[i] * g[i]))));
    }
    if (t == Type::BF16) {
      uint16_t* dst = static_cast<uint16_t*>(out) + r * ldo;
      for (int64_t i = 0; i < I; ++i) dst[i] = float_bf16(bf16_float(float_bf16(act[i])) * u[i]);
    } else {
      float* dst = static_cast<float*>(out) + r * ldo;
      for (int64_t i = 0; i < I; ++i) dst[i] = act[i] * u[i];
    }
  }
}

static EXSPEC_INLINE void rope_body(Type t, const void* x, int64_t ldx, const void* cos, const void* sin, int64_t ldc, void* y,
                        int64_t heads, int64_t D, int64_t r0, int64_t r1) {
  const int64_t half = D / 2;
  std::vector<float> xb(t == Type::BF16 ? D : 0), cb(xb.size()), sb(xb.size()), o(static_cast<size_t>(D));
  for (int64_t r = r0; r < r1; ++r) {
    const float* c = row_f32(t, cos, r * ldc, D, cb.data());
    const float* s = row_f32(t, sin, r * ldc, D, sb.data());
    for (int64_t h = 0; h < heads; ++h) {
      const float* xi = row_f32(t, x, r * ldx + h * D, D, xb.data());
      // x * cos + rotate_half(x) * sin, rotate_half(x) = (-x2, x1); each product rounded in bfloat16
      for (int64_t i = 0; i < half; ++i)
        o[i] = round_to(t, xi[i] * c[i]) + round_to(t, -xi[i + half] * s[i]);
      for (int64_t i = half; i < D; ++i)
        o[i] = round_to(t, xi[i] * c[i]) + round_to(t, xi[i - half] * s[i]);
      const int64_t dst = (r * heads + h) * D;
      if (t == Type::BF16)
        for (int64_t i = 0; i < D; ++i) static_cast<uint16_t*>(y)[dst + i] = float_bf16(o[i]);
      else
        for (int64_t i = 0; i < D; ++i) static_cast<float*>(y)[dst + i] = o[i];
    }
  }
}

// 8 lanes a vector, two side by side: a 64-byte vector is one zmm on AVX-512, but GCC lowers it
// through the stack for the AVX2 and plain clones (12x slower there). The maximum's value is the
// same in any order, and its first index is found in order.
static EXSPEC_INLINE void argmax_rows_body(const float* x, int64_t ld, int64_t V, int64_t n, int64_t* out) {
  typedef float F8 __attribute__((vector_size(32)));
  typedef int32_t I8 __attribute__((vector_size(32)));
  for (int64_t r = 0; r < n; ++r) {
    const float* row = x + r * ld;
    F8 top[2];
    for (int l = 0; l < 8; ++l) top[0][l] = top[1][l] = -INFINITY;
    I8 nan[2] = {};
    int64_t i = 0;
    for (; i + 16 <= V; i += 16) {
      F8 v[2];
      std::memcpy(&v[0], row + i, sizeof v[0]);  // one copy a vector: a copy of both went through the stack
      std::memcpy(&v[1], row + i + 8, sizeof v[1]);
      for (int h = 0; h < 2; ++h) {
        nan[h] |= v[h] != v[h];
        top[h] = v[h] > top[h] ? v[h] : top[h];
      }
    }
    float best = -INFINITY;
    bool any_nan = false;
    for (int h = 0; h < 2; ++h)
      for (int l = 0; l < 8; ++l) best = top[h][l] > best ? top[h][l] : best, any_nan = any_nan || nan[h][l];
    for (; i < V; ++i) best = row[i] > best ? row[i] : best, any_nan = any_nan || row[i] != row[i];
    // Its first index: 16 at a time up to the vectors that hold it, then one by one.
    int64_t j = 0;
    for (; j + 16 <= V; j += 16) {
      F8 v[2];
      std::memcpy(&v[0], row + j, sizeof v[0]);
      std::memcpy(&v[1], row + j + 8, sizeof v[1]);
      const I8 hit = any_nan ? (v[0] != v[0]) | (v[1] != v[1]) : (v[0] == best) | (v[1] == best);
      bool any = false;
      for (int l = 0; l < 8; ++l) any = any || hit[l];
      if (any) break;
    }
    while (j < V && !(any_nan ? row[j] != row[j] : row[j] == best)) ++j;
    out[r] = j < V ? j : 0;
  }
}

namespace {

// v placed among best[0..filled) (descending; k at most), out alongside.
inline void place(float v, int64_t i, int64_t k, int64_t& filled, float* best, int64_t* out) {
  v = v == v ? v : -INFINITY;  // NaN ranks last
  if (filled == k && !(v > best[k - 1])) return;
  int64_t at = filled < k ? filled++ : k - 1;
  for (; at > 0 && v > best[at - 1]; --at) best[at] = best[at - 1], out[at] = out[at - 1];
  best[at] = v;
  out[at] = i;
}

}  // namespace

static EXSPEC_INLINE void top_k_body(const float* v, int64_t n, int64_t k, int64_t* out) {
  typedef float F16 __attribute__((vector_size(64)));
  typedef int32_t I16 __attribute__((vector_size(64)));
  std::vector<float> best(static_cast<size_t>(k));
  int64_t filled = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    if (filled == k) {
      F16 x;
      std::memcpy(&x, v + i, sizeof x);
      const I16 above = x > best[k - 1];  // NaN: false
      bool any = false;
      for (int l = 0; l < 16; ++l) any = any || above[l];
      if (!any) continue;
    }
    for (int64_t j = i; j < i + 16; ++j) place(v[j], j, k, filled, best.data(), out);
  }
  for (; i < n; ++i) place(v[i], i, k, filled, best.data(), out);
}

// Each operation once per instruction set: its body inlined into a function built for it, and
// the one float32's cap chooses (isa.h: EXSPEC_ISA; before, target_clones took the CPU's best
// whatever the cap said). Every path does the same multiplies and adds (-ffp-contract=off).
using Isa = isa::Isa;

#define EXSPEC_ROW_PATHS(NAME, PARAMS, ARGS)                                                       \
  __attribute__((target("avx512f,avx2,fma"))) static void NAME##_avx512 PARAMS { NAME##_body ARGS; } \
  __attribute__((target("avx2,fma"))) static void NAME##_avx2 PARAMS { NAME##_body ARGS; }           \
  static void NAME##_plain PARAMS { NAME##_body ARGS; }                                            \
  void NAME PARAMS {                                                                               \
    switch (f32::best_isa()) {                                                                     \
      case Isa::Avx512: return NAME##_avx512 ARGS;                                                 \
      case Isa::Avx2: return NAME##_avx2 ARGS;                                                     \
      case Isa::Plain: break;                                                                      \
    }                                                                                              \
    NAME##_plain ARGS;                                                                             \
  }

EXSPEC_ROW_PATHS(weighted_add, (const float* y, float w, float* out, int64_t n), (y, w, out, n))
EXSPEC_ROW_PATHS(rms_norm,
                 (Type t, const void* x, int64_t ldx, const void* w, float eps, void* y, int64_t ldy, int64_t H,
                  int64_t r0, int64_t r1),
                 (t, x, ldx, w, eps, y, ldy, H, r0, r1))
EXSPEC_ROW_PATHS(gated_mul,
                 (Type t, Gate gate, const void* gu, int64_t ldg, void* out, int64_t ldo, int64_t I, int64_t r0,
                  int64_t r1),
                 (t, gate, gu, ldg, out, ldo, I, r0, r1))
EXSPEC_ROW_PATHS(rope,
                 (Type t, const void* x, int64_t ldx, const void* cos, const void* sin, int64_t ldc, void* y,
                  int64_t heads, int64_t D, int64_t r0, int64_t r1),
                 (t, x, ldx, cos, sin, ldc, y, heads, D, r0, r1))
EXSPEC_ROW_PATHS(argmax_rows, (const float* x, int64_t ld, int64_t V, int64_t n, int64_t* out), (x, ld, V, n, out))
EXSPEC_ROW_PATHS(top_k, (const float* v, int64_t n, int64_t k, int64_t* out), (v, n, k, out))

}  // namespace exspec::rowops
