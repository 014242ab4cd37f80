#include "model/kernels/kquant_groups.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace exspec::kq {
namespace {

constexpr int64_t kSubs = kSuper / kSub;  // 8
constexpr int64_t kRowChunk = 8;          // rows whose sums stay in one stack buffer
constexpr int64_t kD = 0, kDmin = 16, kSc = 32, kM = 96, kQ = 160, kQ4Bytes = 1184;
constexpr int64_t kSc6 = 16, kQl6 = 144, kQh6 = 1168, kQ6Bytes = 1680;  // Q6_K's d at 0

void interleave_q4k(const uint8_t* const* blocks, uint8_t* g) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + kD + 2 * c, b, 2);
    std::memcpy(g + kDmin + 2 * c, b + 2, 2);
    const uint8_t* s = b + 4;  // kquant_kernel.cpp's q4k_scales, byte by byte
    for (int j = 0; j < 4; ++j) {
      g[kSc + 8 * j + c] = s[j] & 63;
      g[kM + 8 * j + c] = s[j + 4] & 63;
    }
    for (int j = 4; j < 8; ++j) {
      g[kSc + 8 * j + c] = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
      g[kM + 8 * j + c] = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
    for (int64_t p = 0; p < 4; ++p)
      for (int64_t t = 0; t < 8; ++t) std::memcpy(g + kQ + ((p * 8 + t) * kGroupCols + c) * 4, b + 16 + 32 * p + 4 * t, 4);
  }
}

void interleave_q6k(const uint8_t* const* blocks, uint8_t* g) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + 2 * c, b + 208, 2);
    for (int64_t i = 0; i < 16; ++i) g[kSc6 + 8 * i + c] = b[192 + i];
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 8; ++t) {
        for (int64_t pp = 0; pp < 2; ++pp)
          std::memcpy(g + kQl6 + (((h * 2 + pp) * 8 + t) * kGroupCols + c) * 4, b + 64 * h + 32 * pp + 4 * t, 4);
        std::memcpy(g + kQh6 + ((h * 8 + t) * kGroupCols + c) * 4, b + 128 + 32 * h + 4 * t, 4);
      }
  }
}

void gather_q6k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b + 208, g + 2 * c, 2);
  for (int64_t i = 0; i < 16; ++i) b[192 + i] = g[kSc6 + 8 * i + c];
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 8; ++t) {
      for (int64_t pp = 0; pp < 2; ++pp)
        std::memcpy(b + 64 * h + 32 * pp + 4 * t, g + kQl6 + (((h * 2 + pp) * 8 + t) * kGroupCols + c) * 4, 4);
      std::memcpy(b + 128 + 32 * h + 4 * t, g + kQh6 + ((h * 8 + t) * kGroupCols + c) * 4, 4);
    }
}

void gather_q4k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b, g + kD + 2 * c, 2);
  std::memcpy(b + 2, g + kDmin + 2 * c, 2);
  uint8_t sc[kSubs], m[kSubs];
  for (int j = 0; j < kSubs; ++j) sc[j] = g[kSc + 8 * j + c], m[j] = g[kM + 8 * j + c];
  uint8_t* s = b + 4;
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t t = 0; t < 8; ++t) std::memcpy(b + 16 + 32 * p + 4 * t, g + kQ + ((p * 8 + t) * kGroupCols + c) * 4, 4);
}

}  // namespace

int64_t group_block_bytes(uint8_t type) { return type == kQ4_K ? kQ4Bytes : type == kQ6_K ? kQ6Bytes : 0; }

void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block) {
  if (type == kQ4_K) interleave_q4k(blocks, group_block);
  else interleave_q6k(blocks, group_block);
}

void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block) {
  if (type == kQ4_K) gather_q4k(group_block, c, block);
  else gather_q6k(group_block, c, block);
}

#define EXSPEC_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

namespace {

// The group's scales for one super-block, as float lanes (one a column).
struct GroupScales {
  __m256 d, dmin, sc[8], m[8];
};

EXSPEC_VNNI inline void group_scales(const uint8_t* gb, GroupScales& g) {
  g.d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(gb + kD)));
  g.dmin = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(gb + kDmin)));
  for (int64_t j = 0; j < kSubs; ++j) {
    g.sc[j] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kSc + 8 * j))));
    g.m[j] = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kM + 8 * j))));
  }
}

EXSPEC_VNNI inline __m256i four_bytes(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Sub-block j's two terms for row r into acc_j, lanes = columns, as vnni_column does per column:
// sc · Σ q·qx and m · Σ qx exact in float32, then two fused steps.
EXSPEC_VNNI inline void q4_terms(const GroupScales& g, const q8::Rows& x, int64_t s, int64_t r, int64_t j, __m256i dot,
                                 __m256& acc) {
  const float dx = x.d[r * x.blocks + s * kSubs + j];
  const int32_t corr = x.corr[r * x.blocks + s * kSubs + j];
  const __m256 dxj = _mm256_set1_ps(dx);
  const __m256 t = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(dot), g.sc[j]), _mm256_mul_ps(g.d, dxj), acc);
  const __m256 mx = _mm256_mul_ps(_mm256_set1_ps(static_cast<float>((-corr) >> 7)), g.m[j]);
  acc = _mm256_fnmadd_ps(mx, _mm256_mul_ps(g.dmin, dxj), t);
}

// One super-block of the group for R rows from row r: acc[i * 8 + j] gains sub-block j's terms
// for row r + i. Each 32 bytes of quants (quad t of the sub-blocks 2p and 2p + 1, for the 8
// columns) are decoded once for the R rows; a pair of sub-blocks is finished before the next
// starts, so that few sums are live at once.
template <int R>
EXSPEC_VNNI inline void group_superblock(const uint8_t* gb, const GroupScales& g, const q8::Rows& x, int64_t s, int64_t r,
                                         __m256* acc) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const int64_t ldq = x.blocks * kSub;
  const int8_t* xq[R];
  for (int i = 0; i < R; ++i) xq[i] = x.q.data() + (r + i) * ldq + s * kSuper;
#pragma GCC unroll 4
  for (int64_t p = 0; p < 4; ++p) {
    __m256i dot[R][2];
    for (int i = 0; i < R; ++i) dot[i][0] = dot[i][1] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int64_t t = 0; t < 8; ++t) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gb + kQ + (p * 8 + t) * 32));
      const __m256i lo = _mm256_and_si256(v, low), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
      for (int i = 0; i < R; ++i) {
        dot[i][0] = _mm256_dpbusd_epi32(dot[i][0], lo, four_bytes(xq[i] + 64 * p + 4 * t));
        dot[i][1] = _mm256_dpbusd_epi32(dot[i][1], hi, four_bytes(xq[i] + 64 * p + 32 + 4 * t));
      }
    }
    for (int i = 0; i < R; ++i)
      for (int64_t e = 0; e < 2; ++e) q4_terms(g, x, s, r + i, 2 * p + e, dot[i][e], acc[i * kSubs + 2 * p + e]);
  }
}

// One Q6_K super-block of the group for R rows from row r: acc[i * 8 + j] gains sub-block j's
// term for row r + i, lanes = columns, as vnni_column does per column: per 16 inputs, sc ·
// (Σ q·qx − 32 · Σ qx), exact in int32, a sub-block's two halves added, then one fused step with
// d·dx_j. The quants are decoded once for the R rows, four sub-blocks at a time.
template <int R>
EXSPEC_VNNI inline void q6_superblock(const uint8_t* gb, const q8::Rows& x, const int32_t* q6_offsets, int64_t s,
                                      int64_t r, __m256* acc) {
  const __m256i low = _mm256_set1_epi8(0x0F), high = _mm256_set1_epi8(0x30);
  const int8_t* xq[R];
  for (int i = 0; i < R; ++i) xq[i] = x.q.data() + (r + i) * x.blocks * kSub + s * kSuper;
  const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(gb)));
#pragma GCC unroll 2
  for (int64_t h = 0; h < 2; ++h) {  // sub-blocks 4h .. 4h + 3, finished before the next four
    __m256i dot[R][8];  // [row][part * 2 + half]
    for (int i = 0; i < R; ++i)
      for (int k = 0; k < 8; ++k) dot[i][k] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int64_t t = 0; t < 8; ++t) {
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gb + kQh6 + (h * 8 + t) * 32));
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gb + kQl6 + ((h * 2) * 8 + t) * 32));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(gb + kQl6 + ((h * 2 + 1) * 8 + t) * 32));
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high)),
          _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(qh, high)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low), _mm256_and_si256(_mm256_srli_epi16(qh, 2), high))};
      for (int i = 0; i < R; ++i)
        for (int64_t part = 0; part < 4; ++part)  // sub-block 4h + part, its half t / 4
          dot[i][part * 2 + t / 4] =
              _mm256_dpbusd_epi32(dot[i][part * 2 + t / 4], q[part], four_bytes(xq[i] + 128 * h + 32 * part + 4 * t));
    }
    for (int i = 0; i < R; ++i) {
      const int32_t* off = q6_offsets + ((r + i) * (x.blocks / kSubs) + s) * 16;
      const float* dx = x.d.data() + (r + i) * x.blocks + s * kSubs;
      for (int64_t part = 0; part < 4; ++part) {
        const int64_t j = 4 * h + part;
        __m256i a = _mm256_setzero_si256();
        for (int64_t e = 0; e < 2; ++e) {
          const int64_t k = 2 * j + e;  // halves() order: vector k / 8, lane (k % 2) * 4 + (k % 8) / 2
          const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(gb + kSc6 + 8 * k)));
          const int32_t o = off[(k / 8) * 8 + (k % 2) * 4 + (k % 8) / 2];
          a = _mm256_add_epi32(a, _mm256_mullo_epi32(_mm256_sub_epi32(dot[i][part * 2 + e], _mm256_set1_epi32(o)), sc));
        }
        acc[i * kSubs + j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(a), _mm256_mul_ps(d, _mm256_set1_ps(dx[j])), acc[i * kSubs + j]);
      }
    }
  }
}

}  // namespace

EXSPEC_VNNI void vnni_group(const Weight& w, const q8::Rows& x, const int32_t* q6_offsets, int64_t g, int64_t c0, int64_t c1,
                            float* y, int64_t ldy) {
  const uint8_t type = w.types[g * kGroupCols];
  const int64_t gbytes = group_block_bytes(type);
  const uint8_t* base = w.data.data() + w.groups[g];
  for (int64_t q0 = 0; q0 < x.m; q0 += kRowChunk) {
    const int64_t q1 = std::min(x.m, q0 + kRowChunk);
    __m256 acc[kRowChunk * kSubs];
    for (int64_t i = 0; i < (q1 - q0) * kSubs; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t s = 0; s < w.supers; ++s) {
      const uint8_t* gb = base + s * gbytes;
      if (type == kQ6_K) {
        int64_t r = q0;
        for (; r + 2 <= q1; r += 2) q6_superblock<2>(gb, x, q6_offsets, s, r, acc + (r - q0) * kSubs);
        if (r < q1) q6_superblock<1>(gb, x, q6_offsets, s, r, acc + (r - q0) * kSubs);
        continue;
      }
      GroupScales gs;
      group_scales(gb, gs);
      int64_t r = q0;
      for (; r + 2 <= q1; r += 2) group_superblock<2>(gb, gs, x, s, r, acc + (r - q0) * kSubs);
      if (r < q1) group_superblock<1>(gb, gs, x, s, r, acc + (r - q0) * kSubs);
    }
    for (int64_t r = q0; r < q1; ++r) {
      const __m256* a = acc + (r - q0) * kSubs;  // reduce8's order, lane by lane
      const __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6])),
                                     _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7])));
      alignas(32) float out[kGroupCols];
      _mm256_store_ps(out, v);
      std::copy(out + c0, out + c1, y + r * ldy + g * kGroupCols + c0);
    }
  }
}

}  // namespace exspec::kq
