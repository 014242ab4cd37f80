#include "model/kernels/q4_screen.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "model/gguf/half_float.h"
#include "model/kernels/int8_panels.h"

namespace exspec::q4s {
namespace {

constexpr int64_t kGroups = kBlock / 8;  // 4: eight inputs a 32-bit lane

// Quant k of row c (0..15) in a tile's block: byte 64·(k / 8) + 4·c + k % 4, the high nibble for
// k % 8 >= 4.
uint8_t* quant_byte(uint8_t* q, int64_t c, int64_t k) { return q + 64 * (k / 8) + 4 * c + k % 4; }
int32_t quant(const uint8_t* q, int64_t c, int64_t k) {
  const uint8_t v = *quant_byte(const_cast<uint8_t*>(q), c, k);
  return (k % 8 >= 4 ? v >> 4 : v & 0xF) - 8;
}

void plain_tiles(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  int8_panels::plain_tiles(w, x, y, ldy, t0, t1, [&](int64_t t, int64_t b, int64_t c, int64_t k) { return quant(w.quants(t, b), c, k); });
}


// Two tiles of one row in four chains (the low and high nibbles of each), block by block.
template <int TN>
EXSPEC_VNNI_TARGET void vnni_row(const Weight& w, const q8::Rows& x, int64_t r, int64_t t0, float* y, int64_t ldy) {
  const int64_t nb = w.blocks, ldq = nb * kBlock;
  const __m512i low = _mm512_set1_epi8(0x0F);
  __m512 acc[TN];
  for (int t = 0; t < TN; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int8_t* qx = x.q.data() + r * ldq + b * kBlock;
    const __m512 dx = _mm512_set1_ps(x.d[r * nb + b]);
    const __m512i corr = _mm512_set1_epi32(x.corr[r * nb + b] / 16);  // −8 · Σ qx, exact
    for (int t = 0; t < TN; ++t) {
      const uint8_t* blk = w.quants(t0 + t, b);
      __m512i lo_sum = corr, hi_sum = _mm512_setzero_si512();
      for (int64_t g = 0; g < kGroups; ++g) {
        const __m512i v = _mm512_load_si512(blk + g * 64);
        int32_t a, c;
        std::memcpy(&a, qx + 8 * g, 4);
        std::memcpy(&c, qx + 8 * g + 4, 4);
        lo_sum = _mm512_dpbusd_epi32(lo_sum, _mm512_and_si512(v, low), _mm512_set1_epi32(a));
        hi_sum = _mm512_dpbusd_epi32(hi_sum, _mm512_and_si512(_mm512_srli_epi16(v, 4), low), _mm512_set1_epi32(c));
      }
      const __m512 s = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w.scales(t0 + t, b)))), dx);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(lo_sum, hi_sum)), s, acc[t]);
    }
  }
  for (int t = 0; t < TN; ++t) {
    const int64_t col = (t0 + t) * kTile, n = std::min<int64_t>(kTile, w.out - col);
    _mm512_mask_storeu_ps(y + r * ldy + col, static_cast<__mmask16>(n >= 16 ? 0xffff : (1u << n) - 1), acc[t]);
  }
}

// AVX2: two tiles of one row, each tile's 16 rows as two halves of 8. vpmaddubsw takes the
// unsigned nibbles against the row's signed bytes; its pair sums (at most 2 · 15 · 127) add up in
// int16 over the block's low and high nibbles of its 4 groups (at most 30,480: no saturation),
// widened once a block. Integer sums are exact in any order, so a block's Σ is vpdpbusd's.
template <int TN>
EXSPEC_AVX2 void avx2_row(const Weight& w, const q8::Rows& x, int64_t r, int64_t t0, float* y, int64_t ldy) {
  const int64_t nb = w.blocks, ldq = nb * kBlock;
  const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  __m256 acc[TN][2];
  for (int t = 0; t < TN; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const int8_t* qx = x.q.data() + r * ldq + b * kBlock;
    const __m256 dx = _mm256_set1_ps(x.d[r * nb + b]);
    const __m256i corr = _mm256_set1_epi32(x.corr[r * nb + b] / 16);  // −8 · Σ qx, exact
    for (int t = 0; t < TN; ++t) {
      const uint8_t* blk = w.quants(t0 + t, b);
      __m256i s16[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int64_t g = 0; g < kGroups; ++g) {
        int32_t a, c;
        std::memcpy(&a, qx + 8 * g, 4);
        std::memcpy(&c, qx + 8 * g + 4, 4);
        const __m256i xa = _mm256_set1_epi32(a), xc = _mm256_set1_epi32(c);
        for (int h = 0; h < 2; ++h) {
          const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(blk + g * 64 + 32 * h));
          const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(v, low), xa);
          const __m256i hi = _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low), xc);
          s16[h] = _mm256_add_epi16(s16[h], _mm256_add_epi16(lo, hi));
        }
      }
      const int8_panels::Avx2Scales sw = int8_panels::avx2_half_scales(w.scales(t0 + t, b));
      for (int h = 0; h < 2; ++h) {
        const __m256i isum = _mm256_add_epi32(corr, _mm256_madd_epi16(s16[h], ones));
        acc[t][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(sw.h[h], dx), acc[t][h]);
      }
    }
  }
  for (int t = 0; t < TN; ++t)
    for (int h = 0; h < 2; ++h) {
      const int64_t col = (t0 + t) * kTile + 8 * h, n = std::min<int64_t>(8, w.out - col);
      if (n >= 8) {
        _mm256_storeu_ps(y + r * ldy + col, acc[t][h]);
      } else if (n > 0) {
        alignas(32) float tmp[8];
        _mm256_store_ps(tmp, acc[t][h]);
        std::memcpy(y + r * ldy + col, tmp, static_cast<size_t>(n) * sizeof(float));
      }
    }
}

// A pair of tiles (2 × 6.9 KB at 768 inputs) stays in L1 for every row: row(tiles, r, t) with
// tiles std::integral_constant<int, 2> or <int, 1> for a last odd tile.
template <class Row>
void tile_pairs(int64_t m, int64_t t0, int64_t t1, const Row& row) {
  for (int64_t t = t0; t < t1; t += 2)
    for (int64_t r = 0; r < m; ++r) {
      if (t + 1 < t1) row(std::integral_constant<int, 2>{}, r, t);
      else row(std::integral_constant<int, 1>{}, r, t);
    }
}

// A tile's bytes: its blocks' quants and scales, padded to 64.
int64_t tile_stride(int64_t blocks) { return (blocks * (kQuantBytes + 2 * kTile) + 63) / 64 * 64; }

}  // namespace

int64_t weight_bytes(int64_t out, int64_t in) { return (out + kTile - 1) / kTile * tile_stride((in + kBlock - 1) / kBlock); }

Weight empty_weight(int64_t out, int64_t in) {
  if (out <= 0 || in <= 0) throw std::invalid_argument("q4s::empty_weight: empty weight");
  Weight w;
  w.out = out, w.in = in;
  w.blocks = (in + kBlock - 1) / kBlock;
  w.tiles = (out + kTile - 1) / kTile;
  w.stride = tile_stride(w.blocks);
  w.data = AlignedArray<uint8_t>(static_cast<size_t>(w.tiles * w.stride));  // scales 0
  for (int64_t t = 0; t < w.tiles; ++t) std::memset(w.quants(t, 0), 0x88, w.blocks * kQuantBytes);  // q = 0
  return w;
}

void quantise_rows_into(Weight& w, const float* rows, int64_t ld, int64_t r0, int64_t r1) {
  for (int64_t n = r0; n < r1; ++n) {
    const int64_t t = n / kTile, c = n % kTile;
    for (int64_t b = 0; b < w.blocks; ++b) {
      const float* v = rows + (n - r0) * ld + b * kBlock;
      const int64_t len = std::min(kBlock, w.in - b * kBlock);
      float amax = 0.0f;
      for (int64_t k = 0; k < len; ++k) amax = std::max(amax, std::abs(v[k]));
      const uint16_t dh = float_half(amax / 7.0f);
      const float d = half_float(dh);
      uint8_t* blk = w.quants(t, b);
      w.scales(t, b)[c] = dh;
      for (int64_t k = 0; k < len; ++k) {
        const int32_t q = d > 0 ? std::clamp(static_cast<int32_t>(std::lround(v[k] / d)), -8, 7) : 0;
        uint8_t& byte = *quant_byte(blk, c, k);
        byte = k % 8 >= 4 ? static_cast<uint8_t>((byte & 0x0F) | ((q + 8) << 4)) : static_cast<uint8_t>((byte & 0xF0) | (q + 8));
      }
    }
  }
}

void dequantise_row(const Weight& w, int64_t row, float* out) {
  const int64_t t = row / kTile, c = row % kTile;
  for (int64_t b = 0; b < w.blocks; ++b) {
    const uint8_t* blk = w.quants(t, b);
    const float d = half_float(w.scales(t, b)[c]);
    for (int64_t k = 0; k < std::min(kBlock, w.in - b * kBlock); ++k) out[b * kBlock + k] = static_cast<float>(quant(blk, c, k)) * d;
  }
}

Isa best_isa() {
  static const Isa isa = isa::best(isa::Family::Int8);
  return isa;
}

std::vector<Isa> isas_here() { return isa::here(isa::Family::Int8); }

void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa) {
  if (x.blocks != w.blocks) throw std::invalid_argument("q4s::multiply: rows and weight differ in length");
  if (t0 >= t1 || x.m == 0) return;
  switch (isa) {
    case Isa::Avx512:
      return tile_pairs(x.m, t0, t1,
                        [&](auto tn, int64_t r, int64_t t) { vnni_row<decltype(tn)::value>(w, x, r, t, y, ldy); });
    case Isa::Avx2:
      return tile_pairs(x.m, t0, t1,
                        [&](auto tn, int64_t r, int64_t t) { avx2_row<decltype(tn)::value>(w, x, r, t, y, ldy); });
    case Isa::Plain: return plain_tiles(w, x, y, ldy, t0, t1);
  }
  throw std::invalid_argument("q4s::multiply: unknown instruction set");
}

}  // namespace exspec::q4s
