// float32 products whose rows and columns cannot see each other (torch-free; model/f32_weight.h
// is the seam).
//
// oneDNN picks its float32 kernel, blocking and order of sums by the row count and the ISA: on
// AVX2, 5 rows padded to 8 gave other bits, and so did a head multiplied over fewer columns. Here
// every output is one chain of fused multiply-adds over the inputs in order:
//     y = 0;  for k in 0..in-1: y = fma(x[k], w[k], y)
// whatever the batch, the row's place in it, the other rows and columns, the threads and the
// instruction set (AVX-512, AVX2+FMA and plain C++ do exactly this; the tests compare them).
// The paths vectorise over 16 output columns, never over the inputs.
#pragma once
#include <cstdint>

#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"

namespace exspec::f32 {

using Isa = isa::Isa;
Isa best_isa();  // isa.h: EXSPEC_ISA caps it

constexpr int64_t kTile = 16;  // output columns: one AVX-512 register, two AVX2 ones
constexpr int64_t kGroup = 4;  // tiles stored together, so that a one-row product reads one stream

// A weight [out, in] packed by tiles of 16 output rows, four tiles together at each input:
//   [groups of 4 tiles][in][4 tiles][16 columns], zero in the padding.
struct Weight {
  int64_t in = 0, out = 0, tiles = 0;
  AlignedArray<float> data;
  int64_t bytes() const { return static_cast<int64_t>(data.bytes()); }
  // The 16 columns of tile t at input k.
  float* at(int64_t t, int64_t k) { return data.data() + (((t / kGroup) * in + k) * kGroup + t % kGroup) * kTile; }
  const float* at(int64_t t, int64_t k) const { return const_cast<Weight*>(this)->at(t, k); }
};
Weight empty_weight(int64_t out, int64_t in);
// Packs rows [r0, r1) of a weight into w; `rows` points at row r0 (rows `ld` apart).
void pack_rows_into(Weight& w, const float* rows, int64_t ld, int64_t r0, int64_t r1);
// Row n of the weight as packed into dst [in]: pack_rows_into's inverse, bit for bit.
void unpack_row(const Weight& w, int64_t n, float* dst);

// y [m, out] (rows `ldy` apart) for the columns of tiles [t0, t1), from x [m, in] (rows `ldx`
// apart).
void multiply(const Weight& w, const float* x, int64_t m, int64_t ldx, float* y, int64_t ldy, int64_t t0, int64_t t1,
              Isa isa);

}  // namespace exspec::f32
