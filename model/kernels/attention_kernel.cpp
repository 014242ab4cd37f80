// Built with -ffp-contract=off (CMakeLists.txt): each clone below multiplies and adds as written.
#include "model/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "model/kernels/f32_kernel.h"
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

using fixed_order::V4;  // 4 float32 lanes (fixed_order_dot.h: why no wider)

// Keys a block: 32 rows of up to 128 float32 columns (16 KiB) stay in L1 over a block's passes.
constexpr int64_t kKeyBlock = 32;

// o[d0, d0 + 4 C) += Σ_{i0 <= i < i1} p_i rows_i[d0, d0 + 4 C), each column in order of i.
template <int C>
EXSPEC_INLINE void weigh_values(const float* p, const float* const* rows, int64_t i0, int64_t i1, int64_t d0, float* o) {
  V4 a[C];
  std::memcpy(a, o + d0, sizeof a);
  for (int64_t i = i0; i < i1; ++i) {
    for (int c = 0; c < C; ++c) {
      V4 vr;
      std::memcpy(&vr, rows[i] + d0 + 4 * c, sizeof vr);
      a[c] += p[i] * vr;
    }
  }
  std::memcpy(o + d0, a, sizeof a);
}

struct Scratch {
  std::vector<float> q, kbuf, vbuf, acc, score;
  std::vector<int64_t> seen;
  std::vector<const float*> krows, vrows;
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
  // The visible keys' rows as float32 (bfloat16 ones widened once each).
  int64_t n = 0;
  for (int64_t j = 0; j < S; ++j) {
    if (closed && closed[j]) continue;
    w.krows[n] = row(k, s.bf16, b, kvh, j, D, s.bf16 ? w.kbuf.data() + n * D : nullptr);
    w.seen[n++] = j;
  }
  // Keys in blocks that stay in L1 while every head takes its scores from them.
  for (int64_t i0 = 0; i0 < n; i0 += kKeyBlock) {
    const int64_t i1 = std::min(n, i0 + kKeyBlock);
    for (int64_t g = 0; g < G; ++g) {
      const float* qg = w.q.data() + g * D;
      float* p = w.score.data() + g * S;
      for (int64_t i = i0; i < i1; ++i) p[i] = capped(fixed_order_dot(qg, w.krows[i], D) * s.scale, s.softcap);
    }
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
  // o_d = Σ_i p_i v_id in order of i, 32 columns at a time in eight 4-float registers (eight
  // independent chains of adds), over blocks of value rows that stay in L1 while every head and
  // column takes its terms from them; between blocks a sum waits in acc.
  std::fill(w.acc.begin(), w.acc.end(), 0.0f);
  for (int64_t i0 = 0; i0 < n; i0 += kKeyBlock) {
    const int64_t i1 = std::min(n, i0 + kKeyBlock);
    for (int64_t g = 0; g < G; ++g) {
      const float* p = w.score.data() + g * S;
      float* o = w.acc.data() + g * D;
      int64_t d0 = 0;
      for (; d0 + 32 <= D; d0 += 32) weigh_values<8>(p, w.vrows.data(), i0, i1, d0, o);
      for (; d0 + 4 <= D; d0 += 4) weigh_values<1>(p, w.vrows.data(), i0, i1, d0, o);
      for (; d0 < D; ++d0) {
        float a = o[d0];
        for (int64_t i = i0; i < i1; ++i) a += p[i] * w.vrows[i][d0];
        o[d0] = a;
      }
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

// The whole kernel for one instruction set: inlined into a function built for it, with the
// lanes path built for the same one.
EXSPEC_INLINE void attention_body(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                                  const View& out, int64_t begin, int64_t end, LanesFn lanes, int64_t max_lanes) {
  const int64_t G = s.H / s.Hkv;
  thread_local Scratch w;  // a step calls this once a layer on each thread: no allocations each time
  w.q.resize(G * s.D), w.acc.resize(G * s.D);
  w.score.resize(G * s.S), w.seen.resize(s.S), w.krows.resize(s.S), w.vrows.resize(s.S);
  if (s.bf16) w.kbuf.resize(s.S * s.D), w.vbuf.resize(s.S * s.D);
  // A run of one kv head's queries at consecutive t goes by lanes (attention_lanes) in pieces of
  // whole t's, up to max_lanes queries each: the lanes' vectors this path holds in registers (16
  // floats are a zmm; on AVX2, GCC takes a 16-float vector through the stack, 6x slower). Fewer
  // than kMinLanes queries, or more than max_lanes, go one t at a time. Both give a query the same
  // bits: the choice is speed only.
  const int64_t per = std::max<int64_t>(1, max_lanes / G);
  for (int64_t item = begin; item < end;) {
    const int64_t t = item % s.T, nt = std::min({per, s.T - t, end - item});
    if (nt * G >= kMinLanes && nt * G <= max_lanes) {
      lanes(s, q, k, v, blocked, out, item / (s.T * s.Hkv), item / s.T % s.Hkv, t, nt);
      item += nt;
    } else {
      one_group(s, q, k, v, blocked, out, item++, w);
    }
  }
}

}  // namespace

Isa kernel_isa() { return f32::best_isa(); }

LanesFn lanes_for(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return attention_lanes_avx512;
    case Isa::Avx2: return attention_lanes_avx2;
    case Isa::Plain: return attention_lanes_plain;
  }
  throw std::invalid_argument("attention: unknown instruction set");
}

__attribute__((target("avx512f,avx2,fma"))) void attention_avx512(const Shape& s, const View& q, const View& k,
                                                                   const View& v, const bool* blocked, const View& out,
                                                                   int64_t begin, int64_t end) {
  attention_body(s, q, k, v, blocked, out, begin, end, attention_lanes_avx512, 16);
}

__attribute__((target("avx2,fma"))) void attention_avx2(const Shape& s, const View& q, const View& k, const View& v,
                                                        const bool* blocked, const View& out, int64_t begin,
                                                        int64_t end) {
  attention_body(s, q, k, v, blocked, out, begin, end, attention_lanes_avx2, 8);
}

void attention_plain(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                     int64_t begin, int64_t end) {
  attention_body(s, q, k, v, blocked, out, begin, end, attention_lanes_plain, 4);
}

void attention(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
               int64_t begin, int64_t end) {
  switch (kernel_isa()) {
    case Isa::Avx512: return attention_avx512(s, q, k, v, blocked, out, begin, end);
    case Isa::Avx2: return attention_avx2(s, q, k, v, blocked, out, begin, end);
    case Isa::Plain: return attention_plain(s, q, k, v, blocked, out, begin, end);
  }
  throw std::invalid_argument("attention: unknown instruction set");
}

}  // namespace exspec::attn
