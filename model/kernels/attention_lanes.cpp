// Built with -ffp-contract=off (CMakeLists.txt): each clone below multiplies and adds as written.
#include "model/kernels/attention_kernel.h"

// The helpers below pass vectors by value but are always inlined into the clones: no ABI to keep.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/fast_exp.h"
#include "model/gguf/half_float.h"

namespace exspec::attn {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))

// W lanes of float32 and int32 (GCC's vector extensions: each clone lowers them to its own
// registers, every operation element-wise IEEE).
template <int W>
struct Lanes {
  typedef float F __attribute__((vector_size(4 * W)));
  typedef int32_t I __attribute__((vector_size(4 * W)));
};

template <class V, class E>
EXSPEC_INLINE V splat(E x) {
  V v;
  for (int i = 0; i < static_cast<int>(sizeof(V) / sizeof(E)); ++i) v[i] = x;
  return v;
}

// Keys in a block of the values' pass: 32 rows of 64 float32 columns, 8 KiB, stay in L1 over its
// passes of 16 columns.
constexpr int64_t kKeyBlock = 32;
// Key rows the scores' pass asks for ahead of the one it multiplies.
constexpr int64_t kAhead = 4;

// 64-byte aligned (the lane vectors' alignment), grown as needed, kept from call to call.
struct Buffers {
  AlignedArray<float> qt, p, rows, acc;  // queries [D][W]; scores, then weights [S][W]; bf16 rows widened; [D][W]
  AlignedArray<int32_t> open;            // [S][W]: -1 where the lane's query sees key j
  std::vector<uint8_t> all;              // [S]: every lane sees key j
};

template <class T>
T* room(AlignedArray<T>& a, int64_t n) {
  if (static_cast<int64_t>(a.size()) < n) a = AlignedArray<T>(static_cast<size_t>(n));
  return a.data();
}

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

// Keys [j0, j1) into acc[0, M) (columns d0..d0 + M of the values): M = 16 unrolled in registers,
// M = 0 the tail of m < 16 columns.
template <class F, class I, int M>
EXSPEC_INLINE void weigh_values(F* acc, const F* p, const I* open, const uint8_t* all, const Rows& values, int64_t j0,
                                int64_t j1, int64_t d0, int m = M) {
  constexpr int C = M == 0 ? 16 : M;
  F o[C];
#pragma GCC unroll 16
  for (int l = 0; l < C; ++l) o[l] = l < m ? acc[l] : F{};
  for (int64_t j = j0; j < j1; ++j) {
    const float* vr = values[j] + d0;
    const F pj = p[j];
    if (all[j]) {
#pragma GCC unroll 16
      for (int l = 0; l < C; ++l)
        if (l < m) o[l] += pj * vr[l];
    } else {
      const I oj = open[j];
#pragma GCC unroll 16
      for (int l = 0; l < C; ++l)
        if (l < m) o[l] = oj ? o[l] + pj * vr[l] : o[l];
    }
  }
#pragma GCC unroll 16
  for (int l = 0; l < C; ++l)
    if (l < m) acc[l] = o[l];
}

// Lane l's query: head kvh * G + l % G at t0 + l / G; spare lanes (l >= n) repeat lane 0.
struct LaneMap {
  int64_t head[16], pos[16];
};

// The lanes' queries transposed into qt [D][W], and open[j] (all[j]): which lanes see key j.
template <int W, class F, class I>
EXSPEC_INLINE void gather_lanes(const Shape& s, const View& q, const bool* blocked, int64_t b, const LaneMap& m, F* qt,
                                I* open, uint8_t* all) {
  for (int l = 0; l < W; ++l) {
    const int64_t off = b * q.sb + m.head[l] * q.sh + m.pos[l] * q.sp;
    for (int64_t d = 0; d < s.D; ++d)
      qt[d][l] = s.bf16 ? bf16_float(static_cast<const uint16_t*>(q.data)[off + d]) : static_cast<const float*>(q.data)[off + d];
  }
  for (int64_t j = 0; j < s.S; ++j) {
    bool every = true;
    for (int l = 0; l < W; ++l) {
      const bool o = !blocked || !blocked[(b * s.T + m.pos[l]) * s.S + j];
      open[j][l] = o ? -1 : 0;
      every = every && o;
    }
    all[j] = every;
  }
}

// p[j]: each lane's score of key j (fixed_order_dot's lanes and tree, then the scale and the
// cap, lane by lane as the per-query path does them); returns
// each lane's maximum over the keys it sees, in order of j.
template <class F, class I>
EXSPEC_INLINE F scores(const Shape& s, const F* qt, const I* open, const Rows& keys, const Rows& values, F* p) {
  const int64_t D = s.D, S = s.S;
  F top;
  for (int l = 0; l < static_cast<int>(sizeof(F) / 4); ++l) top[l] = -INFINITY;
  for (int64_t j = 0; j < S; ++j) {
    const float* kr = keys[j];
    // The cache comes from memory (a layer's weights stream through the caches between its
    // steps): ask for the keys ahead and for this key's value row, read in the pass after this.
    for (int64_t c = 0; c < D; c += 16) {
      if (j + kAhead < S) __builtin_prefetch(keys[j + kAhead] + c);
      __builtin_prefetch(values[j] + c);
    }
    F a[16];  // each element by constant index, so that all 16 stay in registers
#pragma GCC unroll 16
    for (int l = 0; l < 16; ++l) a[l] = F{};
    int64_t d = 0;
    for (; d + 16 <= D; d += 16) {
#pragma GCC unroll 16
      for (int l = 0; l < 16; ++l) a[l] += qt[d + l] * kr[d + l];
    }
#pragma GCC unroll 16
    for (int l = 0; l < 16; ++l)
      if (d + l < D) a[l] += qt[d + l] * kr[d + l];
#pragma GCC unroll 4
    for (int h = 8; h >= 1; h /= 2) {
#pragma GCC unroll 8
      for (int l = 0; l < h; ++l) a[l] += a[l + h];
    }
    p[j] = a[0] * s.scale;
    if (s.softcap > 0.0f)
      for (int l = 0; l < static_cast<int>(sizeof(F) / 4); ++l) p[j][l] = capped(p[j][l], s.softcap);
    top = (open[j] & (top < p[j])) ? p[j] : top;
  }
  return top;
}

template <int W>
EXSPEC_INLINE void run(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                       const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt, Buffers& w) {
  using F = typename Lanes<W>::F;
  using I = typename Lanes<W>::I;
  const int64_t G = s.H / s.Hkv, D = s.D, S = s.S, n = nt * G;
  LaneMap m;
  for (int l = 0; l < W; ++l) m.head[l] = kvh * G + (l < n ? l % G : 0), m.pos[l] = t0 + (l < n ? l / G : 0);
  w.all.resize(S);
  F* qt = reinterpret_cast<F*>(room(w.qt, D * W));
  F* p = reinterpret_cast<F*>(room(w.p, S * W));
  I* open = reinterpret_cast<I*>(room(w.open, S * W));
  F* acc = reinterpret_cast<F*>(room(w.acc, D * W));
  float* rows = room(w.rows, s.bf16 ? 2 * S * D : 1);
  gather_lanes<W>(s, q, blocked, b, m, qt, open, w.all.data());
  const Rows keys = rows_of(s, k, b, kvh, rows), values = rows_of(s, v, b, kvh, rows + (s.bf16 ? S * D : 0));
  const F top = scores(s, qt, open, keys, values, p);
  F sum = {};
  I seen = {};
  for (int64_t j = 0; j < S; ++j) {
    const F e = exp_f32<F, I>(p[j] - top);
    sum = open[j] ? sum + e : sum;
    seen = open[j] ? seen + 1 : seen;
    p[j] = e;
  }
  const F inv = seen > 0 ? splat<F>(1.0f) / sum : F{};
  // Σ_j p_j v_j: for a block of keys (their value rows stay in L1), 16 columns of d at a time in
  // registers; each (lane, column) adds its terms in order of j.
  for (int64_t d = 0; d < D; ++d) acc[d] = F{};
  for (int64_t j0 = 0; j0 < S; j0 += kKeyBlock) {
    const int64_t j1 = std::min(S, j0 + kKeyBlock);
    int64_t d0 = 0;
    for (; d0 + 16 <= D; d0 += 16) weigh_values<F, I, 16>(acc + d0, p, open, w.all.data(), values, j0, j1, d0);
    if (d0 < D) weigh_values<F, I, 0>(acc + d0, p, open, w.all.data(), values, j0, j1, d0, D - d0);
  }
  for (int l = 0; l < n; ++l) {
    const int64_t off = b * out.sb + m.head[l] * out.sh + m.pos[l] * out.sp;
    for (int64_t d = 0; d < D; ++d) {
      const float y = acc[d][l] * inv[l];
      if (s.bf16) static_cast<uint16_t*>(out.data)[off + d] = float_bf16(y);
      else static_cast<float*>(out.data)[off + d] = y;
    }
  }
}

// The lanes for one instruction set: the body inlined into a function built for it.
EXSPEC_INLINE void lanes_body(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                              const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt) {
  thread_local Buffers buffers;
  const int64_t n = nt * (s.H / s.Hkv);
  if (n <= 8) run<8>(s, q, k, v, blocked, out, b, kvh, t0, nt, buffers);
  else run<16>(s, q, k, v, blocked, out, b, kvh, t0, nt, buffers);
}

}  // namespace

__attribute__((target("avx512f,avx2,fma"))) void attention_lanes_avx512(const Shape& s, const View& q, const View& k,
                                                                         const View& v, const bool* blocked,
                                                                         const View& out, int64_t b, int64_t kvh,
                                                                         int64_t t0, int64_t nt) {
  lanes_body(s, q, k, v, blocked, out, b, kvh, t0, nt);
}

__attribute__((target("avx2,fma"))) void attention_lanes_avx2(const Shape& s, const View& q, const View& k,
                                                              const View& v, const bool* blocked, const View& out,
                                                              int64_t b, int64_t kvh, int64_t t0, int64_t nt) {
  lanes_body(s, q, k, v, blocked, out, b, kvh, t0, nt);
}

void attention_lanes_plain(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                           const View& out, int64_t b, int64_t kvh, int64_t t0, int64_t nt) {
  lanes_body(s, q, k, v, blocked, out, b, kvh, t0, nt);
}

void attention_lanes(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked, const View& out,
                     int64_t b, int64_t kvh, int64_t t0, int64_t nt) {
  lanes_for(kernel_isa())(s, q, k, v, blocked, out, b, kvh, t0, nt);
}

}  // namespace exspec::attn
