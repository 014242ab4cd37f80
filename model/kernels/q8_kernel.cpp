#include "model/kernels/q8_kernel.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/gguf/half_float.h"
#include "model/kernels/int8_panels.h"

namespace exspec::q8 {
namespace {

using int8_panels::four;
using int8_panels::prefetch_ahead;

constexpr int64_t kGroups = kBlock / 4;           // vpdpbusd sums 4 bytes a lane

// One block of 32 values -> q in [-127, 127] and d = max|v| / 127 (GGUF's quantize_row_q8_0).
float quantise_block(const float* v, int64_t n, int8_t* q) {
  float amax = 0.0f;
  for (int64_t j = 0; j < n; ++j) amax = std::max(amax, std::fabs(v[j]));
  const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int64_t j = 0; j < kBlock; ++j) {
    const float r = j < n ? std::round(v[j] * id) : 0.0f;
    q[j] = static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f));
  }
  return d;
}

// ---- plain C++: the reference every other path equals, bit for bit ----

void plain_tiles(const Weight& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  int8_panels::plain_tiles(w, x, y, ldy, t0, t1, [&](int64_t t, int64_t b, int64_t c, int64_t k) {
    return static_cast<int32_t>(w.quants(t, b)[(k / 4) * 64 + c * 4 + k % 4]) - 128;
  });
}

// ---- AVX2: vpmaddubsw with the sign trick (|x| unsigned, w carrying x's sign), 8 columns a register ----

// R rows by the tn <= 4 tiles of one stored group, block by block, as vnni_stream below: the
// group's blocks are one stream, read once for all R rows and prefetched ahead by the first rows.
// The float sums live in L1; each output keeps the same order of sums.
template <int R>
EXSPEC_AVX2 void avx2_stream(const Weight& w, const Rows& x, int64_t r0, int64_t t0, int tn, float* y, int64_t ldy) {
  const int64_t nb = w.blocks;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  alignas(32) float acc[R][kGroup][kTile] = {};
  for (int64_t b = 0; b < nb; ++b) {
    if (r0 == 0) prefetch_ahead(w.quants(t0, b), kGroupBlock);
    for (int t = 0; t < tn; ++t) {
      __m256i isum[R][2];
      for (int r = 0; r < R; ++r) isum[r][0] = isum[r][1] = _mm256_setzero_si256();
      const uint8_t* wq = w.quants(t0 + t, b);
      for (int64_t g = 0; g < kGroups; ++g) {
        const __m256i wv[2] = {_mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(wq + g * 64)), flip),
                               _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(wq + g * 64 + 32)), flip)};
        for (int r = 0; r < R; ++r) {
          const __m256i xb = _mm256_set1_epi32(four(x, r0 + r, b, g * 4));
          for (int h = 0; h < 2; ++h) isum[r][h] = int8_panels::avx2_dot(isum[r][h], wv[h], xb);
        }
      }
      int8_panels::avx2_combine<R>(acc, t, isum, w.scales(t0 + t, b), x, r0, b);
    }
  }
  int8_panels::avx2_store<R>(acc, tn, r0, t0, w.out, y, ldy);
}

// Rows in groups of at most 4 (8 integer sums in registers), as even as they split, each group
// reading each stored group of four tiles in one pass.
void avx2_tiles(const Weight& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  int8_panels::row_groups<4>(x, t0, t1, [&](auto rc, int64_t r, int64_t t, int tn) {
    avx2_stream<decltype(rc)::value>(w, x, r, t, tn, y, ldy);
  });
}

// ---- AVX-512 VNNI: vpdpbusd, unsigned weight bytes (q + 128) against the row's signed bytes ----

// One row by TN tiles, all in registers: TN independent chains against the memory latency.
template <int R, int TN>
EXSPEC_VNNI_TARGET void vnni_panel(const Weight& w, const Rows& x, int64_t r0, int64_t t0, float* y, int64_t ldy) {
  const int64_t nb = w.blocks;
  __m512 acc[R][TN];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < TN; ++t) acc[r][t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    // Each sum starts at -128 Σ q of the row's block (stored negated): the unsigned weight bytes'
    // offset, taken back exactly.
    __m512i isum[R][TN];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < TN; ++t) isum[r][t] = _mm512_set1_epi32(x.corr[(r0 + r) * nb + b]);
    // The first rows stream the weights from memory: ask for what comes next.
    if (r0 == 0) prefetch_ahead(w.quants(t0, b), TN * (kQuantBytes + 2 * kTile));
    for (int64_t g = 0; g < kGroups; ++g) {
      __m512i wv[TN];
      for (int t = 0; t < TN; ++t) wv[t] = _mm512_load_si512(w.quants(t0 + t, b) + g * 64);
      for (int r = 0; r < R; ++r) {
        const __m512i xb = _mm512_set1_epi32(four(x, r0 + r, b, g * 4));
        for (int t = 0; t < TN; ++t) isum[r][t] = _mm512_dpbusd_epi32(isum[r][t], wv[t], xb);
      }
    }
    for (int t = 0; t < TN; ++t) {
      const __m512 sw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(w.scales(t0 + t, b))));
      for (int r = 0; r < R; ++r) {
        const __m512 s = _mm512_mul_ps(sw, _mm512_set1_ps(x.d[(r0 + r) * nb + b]));
        acc[r][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[r][t]), s, acc[r][t]);
      }
    }
  }
  for (int t = 0; t < TN; ++t)
    for (int r = 0; r < R; ++r) int8_panels::vnni_store(y + (r0 + r) * ldy, w.out, t0 + t, acc[r][t]);
}

// R rows by the tn <= 4 tiles of one stored group, block by block: the group's blocks are one
// stream, read once for all R rows (a verify step's K + 1). The float sums live in L1 (R · 4
// registers would not fit beside the integer ones); each output keeps the same order of sums.
template <int R>
EXSPEC_VNNI_TARGET void vnni_stream(const Weight& w, const Rows& x, int64_t r0, int64_t t0, int tn, float* y, int64_t ldy) {
  const int64_t nb = w.blocks;
  alignas(64) float acc[R][kGroup][kTile] = {};
  for (int64_t b = 0; b < nb; ++b) {
    if (r0 == 0) prefetch_ahead(w.quants(t0, b), kGroupBlock);
    for (int t = 0; t < tn; ++t) {
      __m512i isum[R];
      for (int r = 0; r < R; ++r) isum[r] = _mm512_set1_epi32(x.corr[(r0 + r) * nb + b]);
      const uint8_t* wq = w.quants(t0 + t, b);
      for (int64_t g = 0; g < kGroups; ++g) {
        const __m512i wv = _mm512_load_si512(wq + g * 64);
        for (int r = 0; r < R; ++r) isum[r] = _mm512_dpbusd_epi32(isum[r], wv, _mm512_set1_epi32(four(x, r0 + r, b, g * 4)));
      }
      int8_panels::vnni_combine<R>(acc, t, isum, w.scales(t0 + t, b), x, r0, b);
    }
  }
  for (int t = 0; t < tn; ++t)
    for (int r = 0; r < R; ++r) int8_panels::vnni_store(y + (r0 + r) * ldy, w.out, t0 + t, _mm512_load_ps(acc[r][t]));
}

// Rows in groups of at most 8 (8 integer sums in registers), as even as they split, each group
// reading each stored group of four tiles in one pass: at a verify step's K + 1 <= 8 rows the
// weights stream once, as for one row.
void vnni_tiles(const Weight& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  if (x.m == 1) {  // one row: the four tiles' sums in four chains (one chain a tile is latency-bound)
    for_fixed_panels<1, kGroup>(1, t0, t1, 1, [&](auto rn, auto tn, int64_t r, int64_t t) {
      vnni_panel<decltype(rn)::value, decltype(tn)::value>(w, x, r, t, y, ldy);
    });
    return;
  }
  int8_panels::row_groups<8>(x, t0, t1, [&](auto rc, int64_t r, int64_t t, int tn) {
    vnni_stream<decltype(rc)::value>(w, x, r, t, tn, y, ldy);
  });
}

}  // namespace

Isa best_isa() {
  static const Isa isa = isa::best(isa::Family::Int8);  // zmm registers only
  return isa;
}

std::vector<Isa> isas_here() { return isa::here(isa::Family::Int8); }

const char* isa_name(Isa isa) { return isa::name(isa, isa::Family::Int8); }

Weight empty_weight(int64_t out, int64_t in) {
  if (out <= 0 || in <= 0) throw std::invalid_argument("q8::empty_weight: empty weight");
  Weight q;
  q.out = out, q.in = in;
  q.blocks = (in + kBlock - 1) / kBlock;
  q.tiles = (out + kTile - 1) / kTile;
  q.allocate();  // scales 0
  for (int64_t t = 0; t < (q.tiles + kGroup - 1) / kGroup * kGroup; ++t)  // q = 0 in the padding
    for (int64_t b = 0; b < q.blocks; ++b) std::memset(q.quants(t, b), 0x80, kQuantBytes);
  return q;
}

void quantise_rows_into(Weight& q, const float* rows, int64_t ld, int64_t r0, int64_t r1) {
  int8_t block[kBlock];
  for (int64_t n = r0; n < r1; ++n) {
    const int64_t t = n / kTile, c = n % kTile;
    for (int64_t b = 0; b < q.blocks; ++b) {
      const float d = quantise_block(rows + (n - r0) * ld + b * kBlock, std::min(kBlock, q.in - b * kBlock), block);
      q.scales(t, b)[c] = float_half(d);
      uint8_t* dst = q.quants(t, b) + c * 4;
      for (int64_t k = 0; k < kBlock; ++k) dst[(k / 4) * 64 + k % 4] = static_cast<uint8_t>(block[k] + 128);
    }
  }
}

bool pack_q8_0_rows_into(Weight& q, const uint8_t* blocks, int64_t r0, int64_t r1) {
  for (int64_t n = r0; n < r1; ++n) {
    const int64_t t = n / kTile, c = n % kTile;
    for (int64_t b = 0; b < q.blocks; ++b) {
      const uint8_t* src = blocks + ((n - r0) * q.blocks + b) * kQ8_0BlockBytes;
      uint16_t d;
      std::memcpy(&d, src, 2);
      q.scales(t, b)[c] = d;
      uint8_t* dst = q.quants(t, b) + c * 4;
      for (int64_t k = 0; k < kBlock; ++k) {
        const int8_t v = static_cast<int8_t>(src[2 + k]);
        if (v == -128) return false;
        dst[(k / 4) * 64 + k % 4] = static_cast<uint8_t>(v + 128);
      }
    }
  }
  return true;
}

Weight quantise(const float* w, int64_t out, int64_t in, int64_t ld) {
  Weight q = empty_weight(out, in);
  quantise_rows_into(q, w, ld, 0, out);
  return q;
}

void dequantise_row(const Weight& w, int64_t row, float* out) {
  const int64_t t = row / kTile, c = row % kTile;
  for (int64_t b = 0; b < w.blocks; ++b) {
    const float d = half_float(w.scales(t, b)[c]);
    const uint8_t* src = w.quants(t, b) + c * 4;
    for (int64_t k = 0; k < kBlock && b * kBlock + k < w.in; ++k)
      out[b * kBlock + k] = static_cast<float>(static_cast<int32_t>(src[(k / 4) * 64 + k % 4]) - 128) * d;
  }
}

void resize_rows(Rows& x, int64_t m, int64_t in) {
  x.m = m;
  x.in = in;
  x.blocks = (in + kBlock - 1) / kBlock;
  x.q.resize(static_cast<size_t>(m * x.blocks * kBlock));
  x.d.resize(static_cast<size_t>(m * x.blocks));
  x.corr.resize(static_cast<size_t>(m * x.blocks));
}

void multiply(const Weight& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa) {
  if (x.blocks != w.blocks) throw std::invalid_argument("q8::multiply: rows and weight differ in length");
  if (t0 >= t1 || x.m == 0) return;
  switch (isa) {
    case Isa::Avx512: vnni_tiles(w, x, y, ldy, t0, t1); break;
    case Isa::Avx2: avx2_tiles(w, x, y, ldy, t0, t1); break;
    default: plain_tiles(w, x, y, ldy, t0, t1); break;
  }
}

}  // namespace exspec::q8
