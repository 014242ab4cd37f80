#include "model/kernels/f32_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "model/kernels/panel_loop.h"

namespace exspec::f32 {
namespace {

// The reference: per tile and row, 16 chains of std::fma over the inputs in order.
void plain_tiles(const Weight& w, const float* x, int64_t m, int64_t ldx, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  for (int64_t r = 0; r < m; ++r) {
    const float* xr = x + r * ldx;
    for (int64_t t = t0; t < t1; ++t) {
      float acc[kTile] = {};
      for (int64_t k = 0; k < w.in; ++k) {
        const float* wk = w.at(t, k);
        for (int64_t c = 0; c < kTile; ++c) acc[c] = std::fma(xr[k], wk[c], acc[c]);
      }
      for (int64_t c = 0; c < kTile && t * kTile + c < w.out; ++c) y[r * ldy + t * kTile + c] = acc[c];
    }
  }
}

int64_t columns_in(const Weight& w, int64_t t) { return std::min<int64_t>(kTile, w.out - t * kTile); }

#define EXSPEC_F32_512 __attribute__((target("avx512f,avx2,fma")))
#define EXSPEC_F32_256 __attribute__((target("avx2,fma")))

template <int R, int TN>
EXSPEC_F32_512 void panel512(const Weight& w, const float* x, int64_t ldx, int64_t r0, int64_t t0, float* y,
                             int64_t ldy) {
  __m512 acc[R][TN];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TN; ++t) acc[r][t] = _mm512_setzero_ps();
  const float* xr = x + r0 * ldx;
  for (int64_t k = 0; k < w.in; ++k) {
    __m512 wv[TN];
    for (int t = 0; t < TN; ++t) wv[t] = _mm512_load_ps(w.at(t0 + t, k));
    for (int r = 0; r < R; ++r) {
      const __m512 xb = _mm512_set1_ps(xr[r * ldx + k]);
      for (int t = 0; t < TN; ++t) acc[r][t] = _mm512_fmadd_ps(xb, wv[t], acc[r][t]);
    }
  }
  for (int t = 0; t < TN; ++t) {
    const int64_t n = columns_in(w, t0 + t);
    const __mmask16 mask = static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1);
    for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(y + (r0 + r) * ldy + (t0 + t) * kTile, mask, acc[r][t]);
  }
}

// The 16 columns as two halves of 8.
template <int R, int TN>
EXSPEC_F32_256 void panel256(const Weight& w, const float* x, int64_t ldx, int64_t r0, int64_t t0, float* y,
                             int64_t ldy) {
  __m256 acc[R][TN][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TN; ++t) acc[r][t][0] = acc[r][t][1] = _mm256_setzero_ps();
  const float* xr = x + r0 * ldx;
  for (int64_t k = 0; k < w.in; ++k) {
    __m256 wv[TN][2];
    for (int t = 0; t < TN; ++t) {
      wv[t][0] = _mm256_load_ps(w.at(t0 + t, k));
      wv[t][1] = _mm256_load_ps(w.at(t0 + t, k) + 8);
    }
    for (int r = 0; r < R; ++r) {
      const __m256 xb = _mm256_broadcast_ss(xr + r * ldx + k);
      for (int t = 0; t < TN; ++t)
        for (int h = 0; h < 2; ++h) acc[r][t][h] = _mm256_fmadd_ps(xb, wv[t][h], acc[r][t][h]);
    }
  }
  for (int t = 0; t < TN; ++t) {
    const int64_t n = columns_in(w, t0 + t);
    for (int r = 0; r < R; ++r) {
      float* dst = y + (r0 + r) * ldy + (t0 + t) * kTile;
      if (n == kTile) {
        _mm256_storeu_ps(dst, acc[r][t][0]);
        _mm256_storeu_ps(dst + 8, acc[r][t][1]);
      } else {
        alignas(32) float tmp[kTile];
        _mm256_store_ps(tmp, acc[r][t][0]);
        _mm256_store_ps(tmp + 8, acc[r][t][1]);
        std::copy(tmp, tmp + n, dst);
      }
    }
  }
}

template <int R, int TN>
void avx512_tiles(const Weight& w, const float* x, int64_t m, int64_t ldx, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  for_fixed_panels<R, TN>(m, t0, t1, chunk_rows(w.in * 4), [&](auto rn, auto tn, int64_t r, int64_t t) {
    panel512<decltype(rn)::value, decltype(tn)::value>(w, x, ldx, r, t, y, ldy);
  });
}

template <int R, int TN>
void avx2_tiles(const Weight& w, const float* x, int64_t m, int64_t ldx, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  for_fixed_panels<R, TN>(m, t0, t1, chunk_rows(w.in * 4), [&](auto rn, auto tn, int64_t r, int64_t t) {
    panel256<decltype(rn)::value, decltype(tn)::value>(w, x, ldx, r, t, y, ldy);
  });
}

}  // namespace

Isa best_isa() {
  static const Isa isa = isa::best(isa::Family::F32);
  return isa;
}

Weight empty_weight(int64_t out, int64_t in) {
  if (out <= 0 || in <= 0) throw std::invalid_argument("f32::empty_weight: empty weight");
  Weight w;
  w.out = out, w.in = in;
  w.tiles = (out + kTile - 1) / kTile;
  w.data = AlignedArray<float>(static_cast<size_t>((w.tiles + kGroup - 1) / kGroup * kGroup * in * kTile));
  return w;
}

void pack_rows_into(Weight& w, const float* rows, int64_t ld, int64_t r0, int64_t r1) {
  for (int64_t n = r0; n < r1; ++n)
    for (int64_t k = 0; k < w.in; ++k) w.at(n / kTile, k)[n % kTile] = rows[(n - r0) * ld + k];
}

void unpack_row(const Weight& w, int64_t n, float* dst) {
  for (int64_t k = 0; k < w.in; ++k) dst[k] = w.at(n / kTile, k)[n % kTile];
}

// One row: the four tiles of a group in registers, one stream of weights. More rows: each
// weight register serves several rows (AVX-512 has the registers for 4 × 4 accumulators, AVX2's
// 16 for 3 rows × 2 tiles × 2 halves).
void multiply(const Weight& w, const float* x, int64_t m, int64_t ldx, float* y, int64_t ldy, int64_t t0, int64_t t1,
              Isa isa) {
  if (t0 >= t1 || m == 0) return;
  switch (isa) {
    case Isa::Avx512: return m == 1 ? avx512_tiles<1, 4>(w, x, m, ldx, y, ldy, t0, t1)
                                    : avx512_tiles<4, 4>(w, x, m, ldx, y, ldy, t0, t1);
    case Isa::Avx2: return m == 1 ? avx2_tiles<1, 4>(w, x, m, ldx, y, ldy, t0, t1)
                                  : avx2_tiles<3, 2>(w, x, m, ldx, y, ldy, t0, t1);
    case Isa::Plain: return plain_tiles(w, x, m, ldx, y, ldy, t0, t1);
  }
  throw std::invalid_argument("f32::multiply: unknown instruction set");
}

}  // namespace exspec::f32
