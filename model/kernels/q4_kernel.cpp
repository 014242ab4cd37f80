// The packed 4-bit kernel's three paths (q4_kernel.h); the weights' packing is q4_pack.cpp.
#include "model/kernels/q4_kernel.h"

#include <immintrin.h>

#include <cstring>
#include <stdexcept>

#include "model/kernels/int8_panels.h"

namespace exspec::q4 {
namespace {

using int8_panels::prefetch_ahead;
using layout::kVectors;

// The plain path: q against the rows' blocks in order, the reference the others equal.
template <int64_t Sub, int Parts>
void plain_tiles(const Packed<Sub, Parts>& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  auto quant = [&](int64_t t, int64_t b, int64_t c, int64_t k) { return int32_t{layout::quant(w, t, b / Sub, b % Sub, c, k)}; };
  auto scale = [&](int64_t t, int64_t b, int64_t c) { return layout::block_scale(w, t, b / Sub, b % Sub, c); };
  if constexpr ((Parts & kMin) != 0)
    int8_panels::plain_tiles(w, x, y, ldy, t0, t1, quant, scale, [&](int64_t t, int64_t b, int64_t c) { return half_float(w.mins(t, b)[c]); });
  else
    int8_panels::plain_tiles(w, x, y, ldy, t0, t1, quant, scale);
}

// The four bytes of a row's block that vector g's low (hi = 0) or high (hi = 1) nibbles meet.
inline int32_t four(const q8::Rows& x, int64_t r, int64_t b, int64_t g, int hi) { return int8_panels::four(x, r, b, hi * 16 + g * 4); }

// Stored block b's block j of the group from tile t0 on: what the first rows prefetch.
template <int64_t Sub, int Parts>
void prefetch_block(const Packed<Sub, Parts>& w, int64_t t0, int64_t b, int64_t j) {
  constexpr int64_t part = Packed<Sub, Parts>::kGroupBlock / Sub;
  prefetch_ahead(w.quants(t0, b) + j * part, part);
}

// ---- AVX2: the nibbles through the signed table, then the Q8_0 kernel's sign trick ----

// 16 where bit i of `bits` is set, for byte i of 32: a 5th bit's weight, 32 bytes at a time.
EXSPEC_AVX2 inline __m256i avx2_sixteens(uint32_t bits) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)),
                                             _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(16));
}

// Tile block wq's integer sums for R rows, 8 columns a register (isum[r][h]: columns 8h..8h+7).
// vpmaddubsw takes x's magnitudes (unsigned) against the values carrying x's sign, a pair of
// products to an int16. Run (Packed::run) vectors' pair sums of a column, each at most 2·|q|·127,
// add in int16 without overflow (4 at |q| <= 16: Q4_0, Q4_1, Q5_0; 2 at |q| <= 32: Q5_1) and
// one vpmaddwd widens them; at Run 0 each is widened at once. Exact either way: the same
// integers as the Q8_0 kernel's. high: the block's 5th bits (kHigh), or null.
template <int R, int Run>
EXSPEC_AVX2 inline void avx2_block(const uint8_t* wq, const uint8_t* high, __m256i table, const q8::Rows& x, int64_t r0, int64_t b,
                                   __m256i (&isum)[R][2]) {
  const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  __m256i part[R][2];  // int16 sums over a run of vectors; isum the int32 sums
  for (int r = 0; r < R; ++r) part[r][0] = part[r][1] = isum[r][0] = isum[r][1] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kVectors; ++g) {
    __m256i lo[2], hi[2];
    for (int h = 0; h < 2; ++h) {
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq + g * 64 + h * 32));
      lo[h] = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
      hi[h] = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
      if (high) {
        uint32_t bl, bh;
        std::memcpy(&bl, high + g * 16 + h * 4, 4);
        std::memcpy(&bh, high + g * 16 + 8 + h * 4, 4);
        lo[h] = _mm256_add_epi8(lo[h], avx2_sixteens(bl));
        hi[h] = _mm256_add_epi8(hi[h], avx2_sixteens(bh));
      }
    }
    for (int r = 0; r < R; ++r) {
      const __m256i xl = _mm256_set1_epi32(four(x, r0 + r, b, g, 0)), xh = _mm256_set1_epi32(four(x, r0 + r, b, g, 1));
      const __m256i al = _mm256_sign_epi8(xl, xl), ah = _mm256_sign_epi8(xh, xh);
      for (int h = 0; h < 2; ++h) {
        const __m256i pl = _mm256_maddubs_epi16(al, _mm256_sign_epi8(lo[h], xl));
        const __m256i ph = _mm256_maddubs_epi16(ah, _mm256_sign_epi8(hi[h], xh));
        if constexpr (Run > 0) {
          part[r][h] = g % Run ? _mm256_add_epi16(part[r][h], _mm256_add_epi16(pl, ph)) : _mm256_add_epi16(pl, ph);
          if (g % Run == Run - 1) isum[r][h] = _mm256_add_epi32(isum[r][h], _mm256_madd_epi16(part[r][h], ones));
        } else {
          isum[r][h] = _mm256_add_epi32(isum[r][h], _mm256_add_epi32(_mm256_madd_epi16(pl, ones), _mm256_madd_epi16(ph, ones)));
        }
      }
    }
  }
}

// Tile t's scales s of block j in stored block b, 8 columns a register: d, or d · (ls − 32).
template <int64_t Sub, int Parts>
EXSPEC_AVX2 inline int8_panels::Avx2Scales avx2_scales(const Packed<Sub, Parts>& w, int64_t t, int64_t b, int64_t j) {
  int8_panels::Avx2Scales s = int8_panels::avx2_half_scales(w.scales(t, b));
  if constexpr (Sub > 1) {
    const __m128i ls = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.multipliers(t, b, j)));
    s.h[0] = _mm256_mul_ps(s.h[0], _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(ls)));
    s.h[1] = _mm256_mul_ps(s.h[1], _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(ls, 8))));
  }
  return s;
}

// R rows by the tn <= 4 tiles of one stored group, block by block, in the Q8_0 kernel's order
// (q8_kernel.cpp avx2_stream): the float sums in L1, one stream read once for all R rows.
template <int R, int Run, int64_t Sub, int Parts>
EXSPEC_AVX2 void avx2_stream(const Packed<Sub, Parts>& w, const q8::Rows& x, int64_t r0, int64_t t0, int tn, float* y, int64_t ldy) {
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.values)));
  alignas(32) float acc[R][kGroup][kTile] = {};
  for (int64_t b = 0; b < w.blocks; ++b)
    for (int64_t j = 0; j < Sub; ++j) {
      if (r0 == 0) prefetch_block(w, t0, b, j);
      for (int t = 0; t < tn; ++t) {
        __m256i isum[R][2];
        const uint8_t* high = (Parts & kHigh) != 0 ? w.high(t0 + t, b) : nullptr;
        avx2_block<R, Run>(w.nibbles(t0 + t, b, j), high, table, x, r0, b * Sub + j, isum);
        int8_panels::avx2_combine<R>(acc, t, isum, avx2_scales(w, t0 + t, b, j), x, r0, b * Sub + j);
        if constexpr ((Parts & kMin) != 0) int8_panels::avx2_add_min<R>(acc, t, int8_panels::avx2_half_scales(w.mins(t0 + t, b)), x, r0, b * Sub + j);
      }
    }
  int8_panels::avx2_store<R>(acc, tn, r0, t0, w.out, y, ldy);
}

// Rows in groups of at most 4, as even as they split, as the Q8_0 kernel's AVX2 path.
template <int64_t Sub, int Parts>
void avx2_tiles(const Packed<Sub, Parts>& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  int8_panels::row_groups<4>(x, t0, t1, [&](auto rc, int64_t r, int64_t t, int tn) {
    constexpr int R = decltype(rc)::value;
    if (w.run == 4) avx2_stream<R, 4>(w, x, r, t, tn, y, ldy);
    else if (w.run == 2) avx2_stream<R, 2>(w, x, r, t, tn, y, ldy);
    else avx2_stream<R, 0>(w, x, r, t, tn, y, ldy);
  });
}

// ---- AVX-512 VNNI: the nibbles through the biased table (value + 128), then vpdpbusd ----

// A tile's block's vector g as two vectors of bytes q + 128: inputs 4g.. and 16 + 4g... high: the
// block's 5th bits (kHigh), or null.
EXSPEC_VNNI_TARGET inline void vnni_unpack(const uint8_t* wq, const uint8_t* high, int64_t g, __m512i table, __m512i& lo, __m512i& hi) {
  const __m512i low = _mm512_set1_epi8(0x0F), v = _mm512_load_si512(wq + g * 64);
  lo = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low));
  hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
  if (high) {
    uint64_t bl, bh;
    std::memcpy(&bl, high + g * 16, 8);
    std::memcpy(&bh, high + g * 16 + 8, 8);
    const __m512i sixteen = _mm512_set1_epi8(16);
    lo = _mm512_mask_add_epi8(lo, static_cast<__mmask64>(bl), lo, sixteen);
    hi = _mm512_mask_add_epi8(hi, static_cast<__mmask64>(bh), hi, sixteen);
  }
}

// Tile t's scales s of block j in stored block b: d, or d · (ls − 32).
template <int64_t Sub, int Parts>
EXSPEC_VNNI_TARGET inline __m512 vnni_scales(const Packed<Sub, Parts>& w, int64_t t, int64_t b, int64_t j) {
  const __m512 d = int8_panels::vnni_half_scales(w.scales(t, b));
  if constexpr (Sub == 1) return d;
  const __m128i ls = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.multipliers(t, b, j)));
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(ls)));
}

// R rows by the tn <= 4 tiles of one stored group, block by block: each vector is unpacked once
// for all R rows, the float sums live in L1 (q8_kernel.cpp vnni_stream).
template <int R, int64_t Sub, int Parts>
EXSPEC_VNNI_TARGET void vnni_stream(const Packed<Sub, Parts>& w, const q8::Rows& x, int64_t r0, int64_t t0, int tn, float* y, int64_t ldy) {
  const int64_t nb = x.blocks;
  const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.biased)));
  alignas(64) float acc[R][kGroup][kTile] = {};
  for (int64_t b = 0; b < w.blocks; ++b)
    for (int64_t j = 0; j < Sub; ++j) {
      const int64_t bx = b * Sub + j;  // the rows' block of 32
      if (r0 == 0) prefetch_block(w, t0, b, j);
      for (int t = 0; t < tn; ++t) {
        __m512i isum[R];
        for (int r = 0; r < R; ++r) isum[r] = _mm512_set1_epi32(x.corr[(r0 + r) * nb + bx]);
        const uint8_t* high = (Parts & kHigh) != 0 ? w.high(t0 + t, b) : nullptr;
        for (int64_t g = 0; g < kVectors; ++g) {
          __m512i lo, hi;
          vnni_unpack(w.nibbles(t0 + t, b, j), high, g, table, lo, hi);
          for (int r = 0; r < R; ++r) {
            isum[r] = _mm512_dpbusd_epi32(isum[r], lo, _mm512_set1_epi32(four(x, r0 + r, bx, g, 0)));
            isum[r] = _mm512_dpbusd_epi32(isum[r], hi, _mm512_set1_epi32(four(x, r0 + r, bx, g, 1)));
          }
        }
        int8_panels::vnni_combine<R>(acc, t, isum, vnni_scales(w, t0 + t, b, j), x, r0, bx);
        if constexpr ((Parts & kMin) != 0) int8_panels::vnni_add_min<R>(acc, t, int8_panels::vnni_half_scales(w.mins(t0 + t, b)), x, r0, bx);
      }
    }
  for (int t = 0; t < tn; ++t)
    for (int r = 0; r < R; ++r) int8_panels::vnni_store(y + (r0 + r) * ldy, w.out, t0 + t, _mm512_load_ps(acc[r][t]));
}

// Rows in groups of at most 8, as even as they split, each reading a stored group of four tiles
// once (the Q8_0 kernel's split). One row too: unlike the Q8_0 kernel's, a one-row panel with
// the four tiles' sums in registers measured 4-6 % slower than this stream at one row
// (kernel_rows --dtypes q4_0, 2026-11-29, Zen 5).
template <int64_t Sub, int Parts>
void vnni_tiles(const Packed<Sub, Parts>& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1) {
  int8_panels::row_groups<8>(x, t0, t1, [&](auto rc, int64_t r, int64_t t, int tn) {
    vnni_stream<decltype(rc)::value>(w, x, r, t, tn, y, ldy);
  });
}

}  // namespace

Isa best_isa() { return q8::best_isa(); }  // the same registers and the same cap as the Q8_0 kernel
std::vector<Isa> isas_here() { return q8::isas_here(); }
const char* isa_name(Isa isa) { return q8::isa_name(isa); }

template <int64_t Sub, int Parts>
void multiply(const Packed<Sub, Parts>& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa) {
  if (x.blocks != w.blocks32()) throw std::invalid_argument("q4::multiply: rows and weight differ in length");
  if (t0 >= t1 || x.m == 0) return;
  switch (isa) {
    case Isa::Avx512: vnni_tiles(w, x, y, ldy, t0, t1); return;
    case Isa::Avx2: avx2_tiles(w, x, y, ldy, t0, t1); return;
    case Isa::Plain: plain_tiles(w, x, y, ldy, t0, t1); return;
  }
  throw std::invalid_argument("q4::multiply: unknown instruction set");
}

#define EXSPEC_Q4_FORM(W) \
  template void multiply(const W& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);
EXSPEC_Q4_FORM(Weight)
EXSPEC_Q4_FORM(XsWeight)
EXSPEC_Q4_FORM(Q4_1Weight)
EXSPEC_Q4_FORM(Q5_0Weight)
EXSPEC_Q4_FORM(Q5_1Weight)

}  // namespace exspec::q4
