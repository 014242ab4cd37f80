// Built with -ffp-contract=off (CMakeLists.txt): each clone below multiplies and adds as written.
#include "model/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "model/fast_exp.h"
#include "model/half_float.h"

namespace exspec::attn {
namespace {

constexpr int64_t kLanes = 16;

#define EXSPEC_INLINE inline __attribute__((always_inline))

// Row p of head h of batch row b, as float32 into dst[0, D).
EXSPEC_INLINE void load_row(const View& t, bool bf16, int64_t b, int64_t h, int64_t p, int64_t D, float* dst) {
  const int64_t off = b * t.sb + h * t.sh + p * t.sp;
  if (bf16) {
    const uint16_t* src = static_cast<const uint16_t*>(t.data) + off;
    for (int64_t d = 0; d < D; ++d) dst[d] = bf16_float(src[d]);
  } else {
    const float* src = static_cast<const float*>(t.data) + off;
    for (int64_t d = 0; d < D; ++d) dst[d] = src[d];
  }
}

// Σ_d a_d b_d: lane l sums d ≡ l (mod 16) in order, then the lanes by a fixed tree.
EXSPEC_INLINE float dot(const float* a, const float* b, int64_t D) {
  float lane[kLanes] = {};
  int64_t d = 0;
  for (; d + kLanes <= D; d += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lane[l] += a[d + l] * b[d + l];
  for (int64_t l = 0; d + l < D; ++l) lane[l] += a[d + l] * b[d + l];
  for (int64_t w = kLanes / 2; w >= 1; w /= 2)
    for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
  return lane[0];
}

struct Scratch {
  std::vector<float> q, row, acc, score;
  std::vector<int64_t> seen;
};

EXSPEC_INLINE void one_query(const Shape& s, const View& q, const View& k, const View& v, const bool* blocked,
                             const View& out, int64_t item, Scratch& w) {
  const int64_t t = item % s.T, h = item / s.T % s.H, b = item / (s.T * s.H);
  const int64_t kvh = h / (s.H / s.Hkv), D = s.D;
  const bool* open = blocked ? blocked + (b * s.T + t) * s.S : nullptr;
  load_row(q, s.bf16, b, h, t, D, w.q.data());
  int64_t n = 0;
  float top = -INFINITY;
  for (int64_t j = 0; j < s.S; ++j) {
    if (open && open[j]) continue;
    load_row(k, s.bf16, b, kvh, j, D, w.row.data());
    const float sc = dot(w.q.data(), w.row.data(), D) * s.scale;
    w.seen[n] = j, w.score[n] = sc, ++n;
    top = std::max(top, sc);
  }
  float* p = w.score.data();
  for (int64_t i = 0; i < n; ++i) p[i] = exp_f32(p[i] - top);
  float* o = w.acc.data();
  for (int64_t d = 0; d < D; ++d) o[d] = 0.0f;
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    sum += p[i];
    load_row(v, s.bf16, b, kvh, w.seen[i], D, w.row.data());
    for (int64_t d = 0; d < D; ++d) o[d] += p[i] * w.row[d];
  }
  const float inv = n > 0 ? 1.0f / sum : 0.0f;
  const int64_t off = b * out.sb + h * out.sh + t * out.sp;
  if (s.bf16) {
    uint16_t* dst = static_cast<uint16_t*>(out.data) + off;
    for (int64_t d = 0; d < D; ++d) dst[d] = float_bf16(o[d] * inv);
  } else {
    float* dst = static_cast<float*>(out.data) + off;
    for (int64_t d = 0; d < D; ++d) dst[d] = o[d] * inv;
  }
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void attention(const Shape& s, const View& q,
                                                                            const View& k, const View& v,
                                                                            const bool* blocked, const View& out,
                                                                            int64_t begin, int64_t end) {
  Scratch w;
  w.q.resize(s.D), w.row.resize(s.D), w.acc.resize(s.D);
  w.score.resize(s.S), w.seen.resize(s.S);
  for (int64_t item = begin; item < end; ++item) one_query(s, q, k, v, blocked, out, item, w);
}

}  // namespace exspec::attn
