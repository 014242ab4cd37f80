// Built with -ffp-contract=off (CMakeLists.txt): each clone below multiplies and adds as written.
#include "model/kernels/attention_lanes.h"

// The helpers below pass vectors by value but are always inlined into the clones: no ABI to keep.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <cmath>
#include <vector>

#include "model/kernels/half_float.h"

namespace exspec::attn {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))

// W lanes of float32 and int32 (GCC's vector extensions: each clone lowers them to its own
// registers, every operation element-wise IEEE). Aligned as float, so std::vector holds them.
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * W), aligned(4)));
  typedef int32_t I __attribute__((vector_size(4 * W), aligned(4)));
};

template <class V, class E>
EXSPEC_INLINE V splat(E x) {
  V v;
  for (int i = 0; i < static_cast<int>(sizeof(V) / sizeof(E)); ++i) v[i] = x;
  return v;
}

// fast_exp.h's exp_f32, lane by lane: the same operations in the same order.
template <class F, class I>
EXSPEC_INLINE F exp_lanes(F x) {
  x = x < -87.0f ? splat<F>(-87.0f) : (x > 88.0f ? splat<F>(88.0f) : x);
  const F t = x * 1.44269504088896341f;
  const F n = (t + 12582912.0f) - 12582912.0f;
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const F z = r * r;
  F p = splat<F>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const I bits = (__builtin_convertvector(n, I) + 127) << 23;
  return p * reinterpret_cast<const F&>(bits);
}

struct Buffers {
  std::vector<float> qt, p, rows;     // queries [D][W]; scores, then weights [S][W]; bf16 rows widened
  std::vector<int32_t> open;          // [S][W]: -1 where the lane's query sees key j
  std::vector<uint8_t> all;           // [S]: every lane sees key j
};

// Row j of kv head kvh of batch row b, as float32 (bfloat16 rows widened once into `rows`).
struct Rows {
  const float* base = nullptr;
  int64_t stride = 0;
  const float* operator[](int64_t j) const { return base + j * stride; }
};

Rows rows_of(const Shape& s, const View& t, int64_t b, int64_t kvh, float* buf) {
  const int64_t off = b * t.sb + kvh * t.sh;
  if (!s.bf16) return {static_cast<const float*>(t.data) + off, t.sp};
  for (int64_t j = 0; j < s.S; ++j) {
    const uint16_t* src = static_cast<const uint16_t*>(t.data) + off + j * t.sp;
    for (int64_t d = 0; d < s.D; ++d) buf[j * s.D + d] = bf16_float(src[d]);
  }
  return {buf, s.D};
}

template <int W>
EXSPEC_INLINE void run(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                       const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt, Buffers& w) {
  using F = typename Lanes<W>::F;
  using I = typename Lanes<W>::I;
  const int64_t G = s.H / s.Hkv, D = s.D, S = s.S, n = nt * G;
  int64_t head[W], pos[W];  // lane l: query head kvh * G + l % G at t0 + l / G; spare lanes repeat lane 0
  for (int l = 0; l < W; ++l) head[l] = kvh * G + (l < n ? l % G : 0), pos[l] = t0 + (l < n ? l / G : 0);
  w.qt.resize(D * W), w.p.resize(S * W), w.open.resize(S * W), w.all.resize(S), w.rows.resize(s.bf16 ? 2 * S * D : 0);
  F* qt = reinterpret_cast<F*>(w.qt.data());
  F* p = reinterpret_cast<F*>(w.p.data());
  I* open = reinterpret_cast<I*>(w.open.data());
  for (int l = 0; l < W; ++l) {
    const int64_t off = b * q.sb + head[l] * q.sh + pos[l] * q.sp;
    for (int64_t d = 0; d < D; ++d)
      qt[d][l] = s.bf16 ? bf16_float(static_cast<const uint16_t*>(q.data)[off + d]) : static_cast<const float*>(q.data)[off + d];
  }
  for (int64_t j = 0; j < S; ++j) {
    bool all = true;
    for (int l = 0; l < W; ++l) {
      const bool o = !blocked || !blocked[(b * s.T + pos[l]) * S + j];
      open[j][l] = o ? -1 : 0;
      all = all && o;
    }
    w.all[j] = all;
  }
  const Rows keys = rows_of(s, k, b, kvh, w.rows.data()), values = rows_of(s, v, b, kvh, w.rows.data() + (s.bf16 ? S * D : 0));
  // Scores, and each lane's maximum over the keys it sees, in order of j.
  F top = splat<F>(-INFINITY);
  for (int64_t j = 0; j < S; ++j) {
    const float* kr = keys[j];
    F a[16] = {};
    int64_t d = 0;
    for (; d + 16 <= D; d += 16) {
#pragma GCC unroll 16
      for (int l = 0; l < 16; ++l) a[l] += qt[d + l] * kr[d + l];
    }
    for (int l = 0; d + l < D; ++l) a[l] += qt[d + l] * kr[d + l];
    for (int h = 8; h >= 1; h /= 2)
      for (int l = 0; l < h; ++l) a[l] += a[l + h];
    p[j] = a[0] * s.scale;
    top = (open[j] & (top < p[j])) ? p[j] : top;
  }
  F sum = {};
  I seen = {};
  for (int64_t j = 0; j < S; ++j) {
    const F e = exp_lanes<F, I>(p[j] - top);
    sum = open[j] ? sum + e : sum;
    seen = open[j] ? seen + 1 : seen;
    p[j] = e;
  }
  const F inv = seen > 0 ? splat<F>(1.0f) / sum : F{};
  // Σ_j p_j v_j per 16 columns of d (16 vectors held in registers), in order of j.
  for (int64_t d0 = 0; d0 < D; d0 += 16) {
    const int m = static_cast<int>(std::min<int64_t>(16, D - d0));
    F o[16] = {};
    for (int64_t j = 0; j < S; ++j) {
      const float* vr = values[j] + d0;
      const F pj = p[j];
      if (w.all[j] && m == 16) {
#pragma GCC unroll 16
        for (int l = 0; l < 16; ++l) o[l] += pj * vr[l];
      } else {
        for (int l = 0; l < m; ++l) o[l] = open[j] ? o[l] + pj * vr[l] : o[l];
      }
    }
    for (int l = 0; l < n; ++l) {
      const int64_t off = b * out.sb + head[l] * out.sh + pos[l] * out.sp + d0;
      for (int c = 0; c < m; ++c) {
        const float y = o[c][l] * inv[l];
        if (s.bf16) static_cast<uint16_t*>(out.data)[off + c] = float_bf16(y);
        else static_cast<float*>(out.data)[off + c] = y;
      }
    }
  }
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void attention_lanes(const Shape& s, const View& q,
                                                                                  const View& k, const View& v,
                                                                                  const bool* blocked, const View& out,
                                                                                  int64_t b, int64_t kvh, int64_t t0,
                                                                                  int64_t nt) {
  thread_local Buffers buffers;
  const int64_t n = nt * (s.H / s.Hkv);
  if (n <= 8) run<8>(s, q, k, v, blocked, out, b, kvh, t0, nt, buffers);
  else run<16>(s, q, k, v, blocked, out, b, kvh, t0, nt, buffers);
}

}  // namespace exspec::attn
