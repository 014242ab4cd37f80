// Built with -ffp-contract=off (CMakeLists.txt): each clone below multiplies and adds as written.
#include "model/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/kernels/fast_exp.h"
#include "model/kernels/fixed_order_dot.h"
#include "model/gguf/half_float.h"

namespace exspec::attn {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))

// Below this many queries of one kv head (G heads times consecutive t), one t at a time is faster.
constexpr int64_t kMinLanes = 6;

// Row p of head h of batch row b as float32: a pointer into a float32 tensor, or widened from
// bfloat16 into buf.
EXSPEC_INLINE const float* row(const View& t, bool bf16, int64_t b, int64_t h, int64_t p, int64_t D, float* buf) {
  const int64_t off = b * t.sb + h * t.sh + p * t.sp;
  if (!bf16) return static_cast<const float*>(t.data) + off;
  const uint16_t* src = static_cast<const uint16_t*>(t.data) + off;
  for (int64_t d = 0; d < D; ++d) buf[d] = bf16_float(src[d]);
  return buf;
}

using fixed_order::V16;  // 16 float32 lanes (fixed_order_dot.h)

// o[d0, d0 + 16 C) = Σ_i p_i rows_i[d0, d0 + 16 C), each column in order of i.
template <int C>
EXSPEC_INLINE void weigh_values(const float* p, const float* const* rows, int64_t n, int64_t d0, float* o) {
  V16 a[C] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int c = 0; c < C; ++c) {
      V16 vr;
      std::memcpy(&vr, rows[i] + d0 + 16 * c, sizeof vr);
      a[c] += p[i] * vr;
    }
  }
  std::memcpy(o + d0, a, sizeof a);
}

struct Scratch {
  std::vector<float> q, krow, vbuf, acc, score;
  std::vector<int64_t> seen;
  std::vector<const float*> vrows;
};

// The G query heads of kv head `kvh` at query t of batch row b: each key and value row is read
// once for all G. Each head's arithmetic is its own, as if computed alone.
EXSPEC_INLINE void one_group(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                             const View& out, int64_t item, Scratch& w) {
  const int64_t t = item % s.T, kvh = item / s.T % s.Hkv, b = item / (s.T * s.Hkv);
  const int64_t G = s.H / s.Hkv, D = s.D, S = s.S;
  const bool* closed = blocked ? blocked + (b * s.T + t) * S : nullptr;
  for (int64_t g = 0; g < G; ++g) {
    const float* qg = row(q, s.bf16, b, kvh * G + g, t, D, w.acc.data());
    std::copy(qg, qg + D, w.q.begin() + g * D);
  }
  int64_t n = 0;
  for (int64_t j = 0; j < S; ++j) {
    if (closed && closed[j]) continue;
    const float* kr = row(k, s.bf16, b, kvh, j, D, w.krow.data());
    for (int64_t g = 0; g < G; ++g) w.score[g * S + n] = capped(fixed_order_dot(w.q.data() + g * D, kr, D) * s.scale, s.softcap);
    w.seen[n++] = j;
  }
  for (int64_t g = 0; g < G; ++g) {
    float* p = w.score.data() + g * S;
    float top = -INFINITY;
    for (int64_t i = 0; i < n; ++i) top = std::max(top, p[i]);
    for (int64_t i = 0; i < n; ++i) p[i] = exp_f32(p[i] - top);
  }
  // The visible keys' value rows as float32 (bfloat16 ones widened once each).
  for (int64_t i = 0; i < n; ++i) {
    w.vrows[i] = row(v, s.bf16, b, kvh, w.seen[i], D, s.bf16 ? w.vbuf.data() + i * D : nullptr);
  }
  // o_d = Σ_i p_i v_id in order of i, 64 columns at a time in four registers: four independent
  // chains of adds, out of memory (a loop over i outside d made each add wait for the last).
  for (int64_t g = 0; g < G; ++g) {
    const float* p = w.score.data() + g * S;
    float* o = w.acc.data() + g * D;
    int64_t d0 = 0;
    for (; d0 + 64 <= D; d0 += 64) weigh_values<4>(p, w.vrows.data(), n, d0, o);
    for (; d0 + 16 <= D; d0 += 16) weigh_values<1>(p, w.vrows.data(), n, d0, o);
    for (; d0 < D; ++d0) {
      float a = 0.0f;
      for (int64_t i = 0; i < n; ++i) a += p[i] * w.vrows[i][d0];
      o[d0] = a;
    }
  }
  for (int64_t g = 0; g < G; ++g) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += w.score[g * S + i];
    const float inv = n > 0 ? 1.0f / sum : 0.0f;
    const float* o = w.acc.data() + g * D;
    const int64_t off = b * out.sb + (kvh * G + g) * out.sh + t * out.sp;
    if (s.bf16) {
      uint16_t* dst = static_cast<uint16_t*>(out.data) + off;
      for (int64_t d = 0; d < D; ++d) dst[d] = float_bf16(o[d] * inv);
    } else {
      float* dst = static_cast<float*>(out.data) + off;
      for (int64_t d = 0; d < D; ++d) dst[d] = o[d] * inv;
    }
  }
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void attention(const Shape& s, const View& q,
                                                                            const View& k, const View& v,
                                                                            const bool* blocked, const View& out,
                                                                            int64_t begin, int64_t end) {
  const int64_t G = s.H / s.Hkv;
  thread_local Scratch w;  // a step calls this once a layer on each thread: no allocations each time
  w.q.resize(G * s.D), w.krow.resize(s.D), w.acc.resize(G * s.D);
  w.score.resize(G * s.S), w.seen.resize(s.S), w.vrows.resize(s.S);
  if (s.bf16) w.vbuf.resize(s.S * s.D);
  // A run of one kv head's queries at consecutive t goes by lanes (attention_lanes)
  // in pieces of whole t's, up to 16 queries each; fewer than kMinLanes queries go one t at a time.
  // Both give a query the same bits: the choice is speed only.
  const int64_t per = std::max<int64_t>(1, 16 / G);
  for (int64_t item = begin; item < end;) {
    const int64_t t = item % s.T, nt = std::min({per, s.T - t, end - item});
    if (nt * G >= kMinLanes) {
      attention_lanes(s, q, k, v, blocked, out, item / (s.T * s.Hkv), item / s.T % s.Hkv, t, nt);
      item += nt;
    } else {
      one_group(s, q, k, v, blocked, out, item++, w);
    }
  }
}

}  // namespace exspec::attn
