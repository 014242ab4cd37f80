// Built with -ffp-contract=off (CMakeLists.txt). Each product's activation rows, quantised as
// q8_kernel.h says: every int8 and K-quant product runs this on its input first.
#include <algorithm>
#include <cmath>
#include <cstring>

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

}  // namespace

// Each row alone: d = max|x| / 127 per block, q = round(x / d) (ties to even; the weights use
// GGUF's roundf at load, where speed does not matter).
__attribute__((target_clones("avx512f", "avx2", "default"))) void quantise_activations(const float* x, int64_t ld,
                                                                                         int64_t r0, int64_t r1,
                                                                                         Rows& out) {
  const int64_t nb = out.blocks, ldq = nb * kBlock, whole = out.in / kBlock;
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      const float* src = x + r * ld + b * kBlock;
      int8_t* q = out.q.data() + r * ldq + b * kBlock;
      if (b < whole) whole_block(src, q, out.d[r * nb + b], out.corr[r * nb + b]);
      else part_block(src, out.in - b * kBlock, q, out.d[r * nb + b], out.corr[r * nb + b]);
    }
  }
}

}  // namespace exspec::q8
