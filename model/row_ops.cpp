// Built with -ffp-contract=off (CMakeLists.txt): each clone multiplies and adds as written.
#include "model/row_ops.h"

#include <cmath>
#include <cstring>

#include "model/fast_exp.h"
#include "model/half_float.h"

namespace exspec::rowops {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))
#define EXSPEC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

constexpr int64_t kLanes = 16;

EXSPEC_INLINE float load(Type t, const void* p, int64_t i) {
  return t == Type::BF16 ? bf16_float(static_cast<const uint16_t*>(p)[i]) : static_cast<const float*>(p)[i];
}
// What a libtorch operator in this dtype stores: bfloat16 rounds, float32 keeps.
EXSPEC_INLINE float round_to(Type t, float f) { return t == Type::BF16 ? bf16_float(float_bf16(f)) : f; }
EXSPEC_INLINE void store(Type t, void* p, int64_t i, float f) {
  if (t == Type::BF16) static_cast<uint16_t*>(p)[i] = float_bf16(f);
  else static_cast<float*>(p)[i] = f;
}

// A row as float32 into buf (bfloat16 widened), so the loops below vectorise.
EXSPEC_INLINE const float* row_f32(Type t, const void* base, int64_t off, int64_t n, float* buf) {
  if (t == Type::F32) return static_cast<const float*>(base) + off;
  const uint16_t* src = static_cast<const uint16_t*>(base) + off;
  for (int64_t i = 0; i < n; ++i) buf[i] = bf16_float(src[i]);
  return buf;
}

}  // namespace

EXSPEC_CLONES void rms_norm(Type t, const void* x, int64_t ldx, const void* w, float eps, void* y, int64_t ldy,
                            int64_t H, int64_t r0, int64_t r1) {
  float xb[4096 + kLanes], wb[4096 + kLanes];
  float* xbuf = H <= 4096 ? xb : new float[H];
  float* wbuf = H <= 4096 ? wb : new float[H];
  const float* wf = row_f32(t, w, 0, H, wbuf);
  for (int64_t r = r0; r < r1; ++r) {
    const float* xf = row_f32(t, x, r * ldx, H, xbuf);
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= H; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lane[l] += xf[i + l] * xf[i + l];
    for (int64_t l = 0; i + l < H; ++l) lane[l] += xf[i + l] * xf[i + l];
    for (int64_t s = kLanes / 2; s >= 1; s /= 2)
      for (int64_t l = 0; l < s; ++l) lane[l] += lane[l + s];
    const float inv = 1.0f / std::sqrt(lane[0] / static_cast<float>(H) + eps);
    if (t == Type::BF16) {
      uint16_t* dst = static_cast<uint16_t*>(y) + r * ldy;
      for (int64_t k = 0; k < H; ++k) dst[k] = float_bf16(wf[k] * bf16_float(float_bf16(xf[k] * inv)));
    } else {
      float* dst = static_cast<float*>(y) + r * ldy;
      for (int64_t k = 0; k < H; ++k) dst[k] = wf[k] * (xf[k] * inv);
    }
  }
  if (xbuf != xb) delete[] xbuf;
  if (wbuf != wb) delete[] wbuf;
}

EXSPEC_CLONES void silu_mul(Type t, const void* gu, int64_t ldg, void* out, int64_t ldo, int64_t I, int64_t r0,
                            int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t i = 0; i < I; ++i) {
      const float g = load(t, gu, r * ldg + i), u = load(t, gu, r * ldg + I + i);
      const float act = round_to(t, g / (1.0f + exp_f32(-g)));
      store(t, out, r * ldo + i, act * u);
    }
  }
}

EXSPEC_CLONES void rope(Type t, const void* x, int64_t ldx, const void* cos, const void* sin, int64_t ldc, void* y,
                        int64_t heads, int64_t D, int64_t r0, int64_t r1) {
  const int64_t half = D / 2;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t in = r * ldx + h * D, o = (r * heads + h) * D, c = r * ldc;
      for (int64_t i = 0; i < D; ++i) {
        const float xi = load(t, x, in + i);
        const float other = i < half ? -load(t, x, in + i + half) : load(t, x, in + i - half);
        const float a = round_to(t, xi * load(t, cos, c + i)), b = round_to(t, other * load(t, sin, c + i));
        store(t, y, o + i, a + b);
      }
    }
  }
}

}  // namespace exspec::rowops
