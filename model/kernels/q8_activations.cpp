// Built with -ffp-contract=off (CMakeLists.txt). Each product's activation rows, quantised as
// q8_kernel.h says: every int8 and K-quant product runs this on its input first.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/kernels/f32_kernel.h"
#include "model/kernels/q8_kernel.h"

// The helpers below pass vectors by value but are always inlined into the clones: no ABI to keep.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace exspec::q8 {
namespace {

#define EXSPEC_INLINE inline __attribute__((always_inline))

// Rounds to the nearest integer, ties to even, for |v| < 2^22: adding 1.5 * 2^23 leaves no
// fraction bits. Plain adds, so every clone gets the same bits; V: float, or lanes of floats.
template <class V>
EXSPEC_INLINE V round_even(V v) {
  return (v + 12582912.0f) - 12582912.0f;
}

typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
typedef int8_t B16 __attribute__((vector_size(16)));

// std::max(a, b) lane by lane: (a < b) ? b : a.
EXSPEC_INLINE F16 max_lanes(F16 a, F16 b) { return a < b ? b : a; }
EXSPEC_INLINE F16 abs_lanes(F16 a) { return reinterpret_cast<F16>(reinterpret_cast<I16>(a) & 0x7fffffff); }

// One whole block of 32 inputs, in vectors: the same operations as the scalar block below (the
// maximum's tree, d, its inverse, each rounding), so the same bits; the sum of the integers is
// exact in any order.
EXSPEC_INLINE void whole_block(const float* x, int8_t* q, float& d_out, int32_t& corr) {
  F16 a, b;
  std::memcpy(&a, x, 64);
  std::memcpy(&b, x + 16, 64);
  F16 lane = max_lanes(abs_lanes(a), abs_lanes(b));
  lane = max_lanes(lane, __builtin_shuffle(lane, I16{8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7}));
  lane = max_lanes(lane, __builtin_shuffle(lane, I16{4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15}));
  lane = max_lanes(lane, __builtin_shuffle(lane, I16{2, 3, 0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  lane = max_lanes(lane, __builtin_shuffle(lane, I16{1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const float d = lane[0] / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  const I16 ka = __builtin_convertvector(round_even(a * id), I16);
  const I16 kb = __builtin_convertvector(round_even(b * id), I16);
  const B16 qa = __builtin_convertvector(ka, B16), qb = __builtin_convertvector(kb, B16);
  std::memcpy(q, &qa, 16);
  std::memcpy(q + 16, &qb, 16);
  const I16 k = ka + kb;
  int32_t sum = 0;
  for (int l = 0; l < 16; ++l) sum += k[l];
  d_out = d;
  corr = -128 * sum;
}

// The same block on AVX2 in intrinsics, operation for operation: GCC takes whole_block's 16-float
// vectors through the stack there (4x the AVX-512 time). vmaxps(b, a) returns its second operand
// unless the first is greater, as max_lanes(a, b) does; the integers, all within ±127, pack
// without saturating, and their sum is exact in any order.
__attribute__((target("avx2,fma"))) inline void whole_block_avx2(const float* x, int8_t* q, float& d_out,
                                                                 int32_t& corr) {
  const __m256 keep = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 v[4];
  for (int h = 0; h < 4; ++h) v[h] = _mm256_loadu_ps(x + 8 * h);
  // Lane l of 16: max(|x_l|, |x_l+16|), lanes 0-7 then 8-15 (max_lanes(a, b) is vmaxps(b, a));
  // then the tree, l against l + 8, + 4, + 2, + 1.
  const __m256 lo = _mm256_max_ps(_mm256_and_ps(v[2], keep), _mm256_and_ps(v[0], keep));
  const __m256 hi = _mm256_max_ps(_mm256_and_ps(v[3], keep), _mm256_and_ps(v[1], keep));
  const __m256 lane = _mm256_max_ps(hi, lo);
  __m128 l4 = _mm_max_ps(_mm256_extractf128_ps(lane, 1), _mm256_castps256_ps128(lane));
  l4 = _mm_max_ps(_mm_movehl_ps(l4, l4), l4);                         // l against l + 2
  l4 = _mm_max_ps(_mm_shuffle_ps(l4, l4, _MM_SHUFFLE(1, 1, 1, 1)), l4);  // 0 against 1
  const float d = _mm_cvtss_f32(l4) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  const __m256 vid = _mm256_set1_ps(id), magic = _mm256_set1_ps(12582912.0f);
  __m256i k[4];
  for (int h = 0; h < 4; ++h)
    k[h] = _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(v[h], vid), magic), magic));
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(k[0], k[1]), _mm256_packs_epi32(k[2], k[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  const __m256i sum8 = _mm256_add_epi32(_mm256_add_epi32(k[0], k[1]), _mm256_add_epi32(k[2], k[3]));
  const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum8), _mm256_extracti128_si256(sum8, 1));
  const __m128i s2 = _mm_add_epi32(s4, _mm_unpackhi_epi64(s4, s4));
  d_out = d;
  corr = -128 * _mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 1)));
}

// A block of n <= 32 inputs (the row's last, where in is not a multiple of 32), padded with 0.
void part_block(const float* x, int64_t n, int8_t* q, float& d_out, int32_t& corr) {
  float v[kBlock];
  for (int64_t j = 0; j < kBlock; ++j) v[j] = j < n ? x[j] : 0.0f;
  float lane[16];
  for (int64_t l = 0; l < 16; ++l) lane[l] = std::max(std::fabs(v[l]), std::fabs(v[l + 16]));
  for (int64_t s = 8; s >= 1; s /= 2)
    for (int64_t l = 0; l < s; ++l) lane[l] = std::max(lane[l], lane[l + s]);
  const float d = lane[0] / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  int32_t sum = 0;
  for (int64_t j = 0; j < kBlock; ++j) {
    const int32_t k = static_cast<int32_t>(round_even(v[j] * id));
    q[j] = static_cast<int8_t>(k);
    sum += k;
  }
  d_out = d;
  corr = -128 * sum;
}


// Each row alone: d = max|x| / 127 per block, q = round(x / d) (ties to even; the weights use
// GGUF's roundf at load, where speed does not matter). The body, inlined into a function built
// for each instruction set.
template <bool Avx2>
EXSPEC_INLINE void quantise_body(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out) {
  const int64_t nb = out.blocks, ldq = nb * kBlock, whole = out.in / kBlock;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      const float* src = x + r * ld + b * kBlock;
      int8_t* q = out.q.data() + r * ldq + b * kBlock;
      if (b < whole && Avx2) whole_block_avx2(src, q, out.d[r * nb + b], out.corr[r * nb + b]);
      else if (b < whole) whole_block(src, q, out.d[r * nb + b], out.corr[r * nb + b]);
      else part_block(src, out.in - b * kBlock, q, out.d[r * nb + b], out.corr[r * nb + b]);
    }
  }
}

__attribute__((target("avx512f,avx2,fma"))) void quantise_avx512(const float* x, int64_t ld, int64_t r0, int64_t r1,
                                                                  Rows& out) {
  quantise_body<false>(x, ld, r0, r1, out);
}
__attribute__((target("avx2,fma"))) void quantise_avx2(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out) {
  quantise_body<true>(x, ld, r0, r1, out);
}
void quantise_plain(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out) {
  quantise_body<false>(x, ld, r0, r1, out);
}

}  // namespace

void quantise_activations(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out, Isa isa) {
  switch (isa) {
    case Isa::Avx512: return quantise_avx512(x, ld, r0, r1, out);
    case Isa::Avx2: return quantise_avx2(x, ld, r0, r1, out);
    case Isa::Plain: return quantise_plain(x, ld, r0, r1, out);
  }
  throw std::invalid_argument("q8::quantise_activations: unknown instruction set");
}

void quantise_activations(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out) {
  quantise_activations(x, ld, r0, r1, out, f32::best_isa());  // float work: float32's cap
}

}  // namespace exspec::q8
