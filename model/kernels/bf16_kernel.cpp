#include "model/kernels/bf16_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/gguf/half_float.h"
#include "model/kernels/panel_loop.h"

namespace exspec::bf16 {
namespace {

constexpr uint32_t kExp = 0x7f800000u;

// What vdpbf16ps does with subnormals: read as zero, and a subnormal result written as zero.
float daz(float f) { return (float_bits(f) & kExp) == 0 ? bits_float(float_bits(f) & 0x80000000u) : f; }
float ftz(float f) { return daz(f); }

// vcvtneps2bf16: round to nearest even, a subnormal input read as zero.
uint16_t round_bf16(float f) { return float_bf16(daz(f)); }

void plain_tiles(const Weight& w, const uint16_t* x, int64_t m, int64_t ldx, uint16_t* y, int64_t ldy, int64_t t0,
                 int64_t t1) {
  for (int64_t r = 0; r < m; ++r) {
    const uint16_t* xr = x + r * ldx;
    for (int64_t t = t0; t < t1; ++t) {
      for (int64_t c = 0; c < kTile && t * kTile + c < w.out; ++c) {
        float acc = 0.0f;
        for (int64_t p = 0; p < w.pairs; ++p) {
          const uint16_t* wp = w.at(t, p) + c * 2;
          const float x1 = 2 * p + 1 < w.in ? daz(bf16_float(xr[2 * p + 1])) : 0.0f;
          const float x0 = daz(bf16_float(xr[2 * p]));
          acc = ftz(std::fma(x1, daz(bf16_float(wp[1])), acc));
          acc = ftz(std::fma(x0, daz(bf16_float(wp[0])), acc));
        }
        y[r * ldy + t * kTile + c] = round_bf16(acc);
      }
    }
  }
}

#define EXSPEC_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// The pair (x[2p], x[2p+1]) of a row as one 32-bit lane; the last of an odd row pairs with 0.
EXSPEC_BF16 inline __m512i pair_of(const uint16_t* xr, int64_t p, int64_t in) {
  uint32_t two;
  if (2 * p + 1 < in) std::memcpy(&two, xr + 2 * p, 4);
  else two = xr[2 * p];
  return _mm512_set1_epi32(static_cast<int32_t>(two));
}

template <int R, int TN>
EXSPEC_BF16 void bf16_panel(const Weight& w, const uint16_t* x, int64_t ldx, int64_t r0, int64_t t0, uint16_t* y,
                            int64_t ldy) {
  __m512 acc[R][TN];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TN; ++t) acc[r][t] = _mm512_setzero_ps();
  for (int64_t p = 0; p < w.pairs; ++p) {
    __m512i wv[TN];
    for (int t = 0; t < TN; ++t) wv[t] = _mm512_load_si512(w.at(t0 + t, p));
    for (int r = 0; r < R; ++r) {
      const __m512i xb = pair_of(x + (r0 + r) * ldx, p, w.in);
      for (int t = 0; t < TN; ++t) acc[r][t] = _mm512_dpbf16_ps(acc[r][t], (__m512bh)wv[t], (__m512bh)xb);
    }
  }
  for (int t = 0; t < TN; ++t) {
    const int64_t col = (t0 + t) * kTile, n = std::min<int64_t>(kTile, w.out - col);
    const __mmask16 mask = static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1);
    for (int r = 0; r < R; ++r)
      _mm256_mask_storeu_epi16(y + (r0 + r) * ldy + col, mask, (__m256i)_mm512_cvtneps_pbh(acc[r][t]));
  }
}

// Four rows by four tiles: each weight register serves four rows, each broadcast four tiles.
void bf16_tiles(const Weight& w, const uint16_t* x, int64_t m, int64_t ldx, uint16_t* y, int64_t ldy, int64_t t0,
                int64_t t1) {
  for_fixed_panels<4, 4>(m, t0, t1, chunk_rows(w.pairs * 4), [&](auto rn, auto tn, int64_t r, int64_t t) {
    bf16_panel<decltype(rn)::value, decltype(tn)::value>(w, x, ldx, r, t, y, ldy);
  });
}

#define EXSPEC_BF16_AVX2 __attribute__((target("avx2,fma")))

// A pair's two bfloat16 in a 32-bit lane, widened to float32 exactly: the odd one is the high
// half as it stands, the even one the low half moved up.
EXSPEC_BF16_AVX2 inline __m256 odd_half(__m256i v) {
  return _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
}
EXSPEC_BF16_AVX2 inline __m256 even_half(__m256i v) { return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)); }

// vdpbf16ps's arithmetic on AVX2: per pair, an fma with the odd product, then one with the even
// product (a product of two bfloat16 is exact in float32). The caller has set DAZ and FTZ, as the
// instruction has them.
template <int R, int TN>
EXSPEC_BF16_AVX2 void avx2_panel(const Weight& w, const uint16_t* x, int64_t ldx, int64_t r0, int64_t t0, uint16_t* y,
                                 int64_t ldy) {
  __m256 acc[R][TN][2];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TN; ++t) acc[r][t][0] = acc[r][t][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < w.pairs; ++p) {
    __m256 wo[TN][2], we[TN][2];
    for (int t = 0; t < TN; ++t)
      for (int h = 0; h < 2; ++h) {
        const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(w.at(t0 + t, p) + h * 16));
        wo[t][h] = odd_half(v), we[t][h] = even_half(v);
      }
    for (int r = 0; r < R; ++r) {
      const uint16_t* xr = x + (r0 + r) * ldx;
      const __m256 xo = _mm256_set1_ps(2 * p + 1 < w.in ? bf16_float(xr[2 * p + 1]) : 0.0f);
      const __m256 xe = _mm256_set1_ps(bf16_float(xr[2 * p]));
      for (int t = 0; t < TN; ++t)
        for (int h = 0; h < 2; ++h) {
          acc[r][t][h] = _mm256_fmadd_ps(xo, wo[t][h], acc[r][t][h]);
          acc[r][t][h] = _mm256_fmadd_ps(xe, we[t][h], acc[r][t][h]);
        }
    }
  }
  for (int t = 0; t < TN; ++t) {
    const int64_t col = (t0 + t) * kTile, n = std::min<int64_t>(kTile, w.out - col);
    for (int r = 0; r < R; ++r) {
      alignas(32) float sums[kTile];
      _mm256_store_ps(sums, acc[r][t][0]);
      _mm256_store_ps(sums + 8, acc[r][t][1]);
      for (int64_t c = 0; c < n; ++c) y[(r0 + r) * ldy + col + c] = round_bf16(sums[c]);
    }
  }
}

// One row: the four tiles of a group, one stream; more rows: four rows a tile.
void avx2_tiles(const Weight& w, const uint16_t* x, int64_t m, int64_t ldx, uint16_t* y, int64_t ldy, int64_t t0,
                int64_t t1) {
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6), on this thread for this call
  const auto panel = [&](auto rn, auto tn, int64_t r, int64_t t) {
    avx2_panel<decltype(rn)::value, decltype(tn)::value>(w, x, ldx, r, t, y, ldy);
  };
  if (m == 1) for_fixed_panels<1, 4>(m, t0, t1, 1, panel);
  else for_fixed_panels<4, 1>(m, t0, t1, chunk_rows(w.pairs * 4), panel);
  _mm_setcsr(saved);
}

}  // namespace

Isa best_isa() {
  static const Isa isa = isa::best(isa::Family::Bf16);
  return isa;
}

std::vector<Isa> isas_here() { return isa::here(isa::Family::Bf16); }

const char* isa_name(Isa isa) { return isa::name(isa, isa::Family::Bf16); }

Weight empty_weight(int64_t out, int64_t in) {
  if (out <= 0 || in <= 0) throw std::invalid_argument("bf16::empty_weight: empty weight");
  Weight w;
  w.out = out, w.in = in;
  w.pairs = (in + 1) / 2;
  w.tiles = (out + kTile - 1) / kTile;
  w.data = AlignedArray<uint16_t>(static_cast<size_t>((w.tiles + kGroup - 1) / kGroup * kGroup * w.pairs * kTile * 2));
  return w;
}

void pack_rows_into(Weight& w, const uint16_t* rows, int64_t ld, int64_t r0, int64_t r1) {
  for (int64_t n = r0; n < r1; ++n) {
    const int64_t t = n / kTile, c = n % kTile;
    for (int64_t k = 0; k < w.in; ++k) w.at(t, k / 2)[c * 2 + k % 2] = rows[(n - r0) * ld + k];
  }
}

void unpack_row(const Weight& w, int64_t n, uint16_t* dst) {
  const int64_t t = n / kTile, c = n % kTile;
  for (int64_t k = 0; k < w.in; ++k) dst[k] = w.at(t, k / 2)[c * 2 + k % 2];
}

Weight pack(const uint16_t* src, int64_t out, int64_t in, int64_t ld) {
  Weight w = empty_weight(out, in);
  pack_rows_into(w, src, ld, 0, out);
  return w;
}

void multiply(const Weight& w, const uint16_t* x, int64_t m, int64_t ldx, uint16_t* y, int64_t ldy, int64_t t0,
              int64_t t1, Isa isa) {
  if (t0 >= t1 || m == 0) return;
  switch (isa) {
    case Isa::Avx512: return bf16_tiles(w, x, m, ldx, y, ldy, t0, t1);
    case Isa::Avx2: return avx2_tiles(w, x, m, ldx, y, ldy, t0, t1);
    case Isa::Plain: return plain_tiles(w, x, m, ldx, y, ldy, t0, t1);
  }
  throw std::invalid_argument("bf16::multiply: unknown instruction set");
}

}  // namespace exspec::bf16
