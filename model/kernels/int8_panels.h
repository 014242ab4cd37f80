// What the kernels on q8::Rows that store four tiles of 16 columns together (q8_kernel.cpp: Q8_0
// blocks; q4_kernel.cpp: 4-bit blocks) share around their integer sums: the plain reference
// loop, the weights' prefetch, the split of the rows into groups, and the stores of a group's
// sums, and the float order every one of them keeps. Torch-free; for the kernels' .cpp files
// only (it defines target-specific inline functions). Rows is q8::Rows (q8_kernel.h: per block of
// 32 inputs, int8 q, float32 d), a template argument so that q8_kernel.cpp can include this.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "model/gguf/half_float.h"
#include "model/kernels/isa.h"
#include "model/kernels/panel_loop.h"

#define EXSPEC_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace exspec::int8_panels {

constexpr int64_t kTile = 16, kGroup = 4;  // columns a tile, tiles stored together
constexpr int64_t kBlock = 32;              // inputs a scale

// Row r's Σ q of its block b: the corr the rows carry is -128 times it (exact).
template <class Rows>
inline int32_t block_sum(const Rows& x, int64_t r, int64_t b) {
  return -x.corr[r * x.blocks + b] / 128;
}

struct NoMin {};  // a type without a min (plain_tiles' `min`)

// The plain path, the reference the others equal bit for bit: per output, its blocks of 32 in
// order,
//     y = fma(float(Σ_k q·qx), d · dx, y)
//     y = fma(float(Σ_k qx), m · dx, y)      where the type has a min m (Q4_1, Q5_1)
// with quant(t, b, c, k) the weight's integer q of column c, input k of tile t's block b (b
// counts blocks of 32, as the rows do), scale(t, b, c) its d, and min(t, b, c) its m, float32s
// that hold them exactly.
template <class W, class Rows, class Quant, class Scale, class Min = NoMin>
void plain_tiles(const W& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, const Quant& quant, const Scale& scale,
                 const Min& min = {}) {
  const int64_t nb = x.blocks, ldq = nb * kBlock;
  for (int64_t r = 0; r < x.m; ++r)
    for (int64_t t = t0; t < t1; ++t)
      for (int64_t c = 0; c < kTile && t * kTile + c < w.out; ++c) {
        float acc = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
          const int8_t* xq = x.q.data() + r * ldq + b * kBlock;
          int32_t isum = 0;
          for (int64_t k = 0; k < kBlock; ++k) isum += quant(t, b, c, k) * xq[k];
          const float s = scale(t, b, c) * x.d[r * nb + b];
          acc = std::fma(static_cast<float>(isum), s, acc);
          if constexpr (!std::is_same_v<Min, NoMin>)
            acc = std::fma(static_cast<float>(block_sum(x, r, b)), min(t, b, c) * x.d[r * nb + b], acc);
        }
        y[r * ldy + t * kTile + c] = acc;
      }
}

// The same where d is w.scales(t, b)[c], a float16 a block of 32.
template <class W, class Rows, class Quant>
void plain_tiles(const W& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, const Quant& quant) {
  plain_tiles(w, x, y, ldy, t0, t1, quant, [&](int64_t t, int64_t b, int64_t c) { return half_float(w.scales(t, b)[c]); });
}

// Bytes ahead of the weights' stream that the first row group prefetches: measured on the 150M
// shapes at one row, 2 threads (docs/performance.md#figures-that-were-in-code-comments).
constexpr int64_t kPrefetch = 16 << 10;
// Non-temporal: a forward reads each weight once, so its lines are not worth a place in the outer
// caches, where they would evict what the rest of the forward reads again (the KV store, the
// activations). A verify's 7-row forward got faster with it, the products alone did not change
// (docs/performance.md, issue 62).
inline void prefetch_ahead(const uint8_t* at, int64_t bytes) {
  const char* next = reinterpret_cast<const char*>(at) + kPrefetch;
  for (int64_t line = 0; line < bytes / 64; ++line) _mm_prefetch(next + line * 64, _MM_HINT_NTA);
}

// The four bytes of row r's block b from input k on: what one 32-bit lane of weights meets.
template <class Rows>
inline int32_t four(const Rows& x, int64_t r, int64_t b, int64_t k) {
  int32_t v;
  std::memcpy(&v, x.q.data() + (r * x.blocks + b) * kBlock + k, 4);
  return v;
}

// Rows in groups of at most R, as even as they split, each group reading each stored group of
// four tiles in one pass (panel_loop.h): stream(std::integral_constant<int, rows>, r, t, tn).
template <int R, class Rows, class Stream>
void row_groups(const Rows& x, int64_t t0, int64_t t1, const Stream& stream) {
  const int64_t groups = (x.m + R - 1) / R;
  const int rows = static_cast<int>((x.m + groups - 1) / groups);
  for_panels(x.m, t0, t1, chunk_rows(x.blocks * kBlock), rows, kGroup, [&](int64_t r, int rn, int64_t t, int tn) {
    with_constant<R>(rn, [&](auto rc) { stream(rc, r, t, tn); });
  });
}

// Σ w·x of 8 columns' 4 inputs a lane (w: signed weight bytes, xb: a row's 4 bytes broadcast),
// added to sum: x's magnitudes (unsigned) against w carrying x's sign, as vpmaddubsw takes them;
// a pair of products fits int16 (|w|, |x| <= 127), so the sum is exact.
EXSPEC_AVX2 inline __m256i avx2_dot(__m256i sum, __m256i w, __m256i xb) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(xb, xb), _mm256_sign_epi8(w, xb));
  return _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}

// A tile's 16 weight scales d as float32, 8 columns a register (AVX2) or 16 (AVX-512).
struct Avx2Scales {
  __m256 h[2];
};
EXSPEC_AVX2 inline Avx2Scales avx2_half_scales(const uint16_t* d) {
  return {{_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d))),
           _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(d + 8)))}};
}
EXSPEC_VNNI_TARGET inline __m512 vnni_half_scales(const uint16_t* d) {
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(d)));
}

// Block b's (of 32) integer sums of R rows by tile t (8 columns a register) into their float
// sums, in the kernels' one order: acc = fma(float(Σ), d · dx, acc), d the tile's scales.
template <int R, class Rows>
EXSPEC_AVX2 inline void avx2_combine(float (&acc)[R][kGroup][kTile], int t, const __m256i (&isum)[R][2], const Avx2Scales& sw,
                                     const Rows& x, int64_t r0, int64_t b) {
  for (int r = 0; r < R; ++r) {
    const __m256 dx = _mm256_set1_ps(x.d[(r0 + r) * x.blocks + b]);
    for (int h = 0; h < 2; ++h) {
      float* a = acc[r][t] + h * 8;
      _mm256_store_ps(a, _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][h]), _mm256_mul_ps(sw.h[h], dx), _mm256_load_ps(a)));
    }
  }
}
template <int R, class Rows>
EXSPEC_AVX2 inline void avx2_combine(float (&acc)[R][kGroup][kTile], int t, const __m256i (&isum)[R][2], const uint16_t* d,
                                     const Rows& x, int64_t r0, int64_t b) {
  avx2_combine<R>(acc, t, isum, avx2_half_scales(d), x, r0, b);
}

// The same for the AVX-512 streams: 16 columns a register.
template <int R, class Rows>
EXSPEC_VNNI_TARGET inline void vnni_combine(float (&acc)[R][kGroup][kTile], int t, const __m512i (&isum)[R], __m512 sw,
                                            const Rows& x, int64_t r0, int64_t b) {
  for (int r = 0; r < R; ++r) {
    const __m512 s = _mm512_mul_ps(sw, _mm512_set1_ps(x.d[(r0 + r) * x.blocks + b]));
    _mm512_store_ps(acc[r][t], _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r]), s, _mm512_load_ps(acc[r][t])));
  }
}
template <int R, class Rows>
EXSPEC_VNNI_TARGET inline void vnni_combine(float (&acc)[R][kGroup][kTile], int t, const __m512i (&isum)[R], const uint16_t* d,
                                            const Rows& x, int64_t r0, int64_t b) {
  vnni_combine<R>(acc, t, isum, vnni_half_scales(d), x, r0, b);
}

// A min's term after block b's (plain_tiles' order): acc = fma(float(Σ qx), m · dx, acc), m the
// tile's mins as float32.
template <int R, class Rows>
EXSPEC_AVX2 inline void avx2_add_min(float (&acc)[R][kGroup][kTile], int t, const Avx2Scales& m, const Rows& x, int64_t r0, int64_t b) {
  for (int r = 0; r < R; ++r) {
    const __m256 dx = _mm256_set1_ps(x.d[(r0 + r) * x.blocks + b]);
    const __m256 sum = _mm256_set1_ps(static_cast<float>(block_sum(x, r0 + r, b)));
    for (int h = 0; h < 2; ++h) {
      float* a = acc[r][t] + h * 8;
      _mm256_store_ps(a, _mm256_fmadd_ps(sum, _mm256_mul_ps(m.h[h], dx), _mm256_load_ps(a)));
    }
  }
}
template <int R, class Rows>
EXSPEC_VNNI_TARGET inline void vnni_add_min(float (&acc)[R][kGroup][kTile], int t, __m512 m, const Rows& x, int64_t r0, int64_t b) {
  for (int r = 0; r < R; ++r) {
    const __m512 s = _mm512_mul_ps(m, _mm512_set1_ps(x.d[(r0 + r) * x.blocks + b]));
    const __m512 sum = _mm512_set1_ps(static_cast<float>(block_sum(x, r0 + r, b)));
    _mm512_store_ps(acc[r][t], _mm512_fmadd_ps(sum, s, _mm512_load_ps(acc[r][t])));
  }
}

// The columns of tile t that exist (a weight's last tile may be part padding).
inline int64_t tile_cols(int64_t out, int64_t t) { return std::min<int64_t>(kTile, out - t * kTile); }

// R rows' float sums of tn tiles, kept in L1 by the streams, to y (8 columns a register).
template <int R>
EXSPEC_AVX2 void avx2_store(const float (&acc)[R][kGroup][kTile], int tn, int64_t r0, int64_t t0, int64_t out, float* y,
                            int64_t ldy) {
  for (int t = 0; t < tn; ++t)
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) {
        const int64_t n = std::min<int64_t>(8, tile_cols(out, t0 + t) - h * 8);
        float* dst = y + (r0 + r) * ldy + (t0 + t) * kTile + h * 8;
        if (n >= 8) _mm256_storeu_ps(dst, _mm256_load_ps(acc[r][t] + h * 8));
        else if (n > 0) std::memcpy(dst, acc[r][t] + h * 8, n * sizeof(float));
      }
}

// One tile's 16 sums to row `dst` of y, the padding columns left alone.
EXSPEC_VNNI_TARGET inline void vnni_store(float* dst, int64_t out, int64_t t, __m512 v) {
  const int64_t n = tile_cols(out, t);
  _mm512_mask_storeu_ps(dst + t * kTile, static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1), v);
}

}  // namespace exspec::int8_panels
