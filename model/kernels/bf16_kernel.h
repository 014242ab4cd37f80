// bfloat16 products whose rows cannot see each other (torch-free; model/bf16_matmul.h is the seam).
//
// oneDNN picks its bfloat16 kernel and blocking by the row count, so a row's result moved with
// its batch; and at one row it read the weights at half the bandwidth. Here every output is one
// float32 sum over the input pairs in one fixed order, the AVX-512 BF16 instruction's:
//     y = 0;  for p in pairs: y += x[2p+1]·w[2p+1];  y += x[2p]·w[2p]     (vdpbf16ps)
// then rounded once to bfloat16, whatever the batch, the row's place in it, the other rows and
// the threads. The AVX2 path widens each bfloat16 to float32 (exact) and does the same fused
// multiply-adds with the instruction's flushing of subnormals (MXCSR's DAZ and FTZ); the plain
// C++ path does the same arithmetic in scalars and is the tests' reference.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"

namespace exspec::bf16 {

constexpr int64_t kTile = 16;  // output columns a register

using Isa = isa::Isa;  // Avx512: vdpbf16ps
Isa best_isa();        // isa.h: EXSPEC_ISA caps it
std::vector<Isa> isas_here();
const char* isa_name(Isa isa);

// A weight [out, in] packed by tiles of 16 output rows and pairs of inputs, four tiles stored
// together so that a one-row product (four tiles at a time) reads one stream:
//   [groups of 4 tiles][pairs][4 tiles][16 columns][2], zero in the padding.
constexpr int64_t kGroup = 4;

struct Weight {
  int64_t in = 0, out = 0, pairs = 0, tiles = 0;
  AlignedArray<uint16_t> data;
  int64_t bytes() const { return static_cast<int64_t>(data.bytes()); }
  // The 16 columns × 2 inputs of tile t at pair p.
  uint16_t* at(int64_t t, int64_t p) { return data.data() + (((t / kGroup) * pairs + p) * kGroup + t % kGroup) * kTile * 2; }
  const uint16_t* at(int64_t t, int64_t p) const { return const_cast<Weight*>(this)->at(t, p); }
};
Weight empty_weight(int64_t out, int64_t in);
// Packs rows [r0, r1) of a weight into w; `rows` points at row r0 (bfloat16 bits, rows `ld` apart).
void pack_rows_into(Weight& w, const uint16_t* rows, int64_t ld, int64_t r0, int64_t r1);
Weight pack(const uint16_t* src, int64_t out, int64_t in, int64_t ld);
// Row n of the weight as packed (in values) into dst: pack_rows_into's inverse, bit for bit. A
// head tied to the embedding serves the embedding's lookups this way.
void unpack_row(const Weight& w, int64_t n, uint16_t* dst);

// y [m, out] (bfloat16, rows `ldy` apart) for the columns of tiles [t0, t1), from x [m, in]
// (bfloat16, rows `ldx` apart).
void multiply(const Weight& w, const uint16_t* x, int64_t m, int64_t ldx, uint16_t* y, int64_t ldy, int64_t t0,
              int64_t t1, Isa isa);

}  // namespace exspec::bf16
