// 4-bit weights for a draft head's screen (model/screened_head.h): half the bytes of Q8_0, read
// with as little work a byte as vpdpbusd allows, since the screen runs on every draft token.
// Torch-free.
//
// Per output row and block of 32 inputs: one float16 scale d and 32 quants q in [-8, 7],
// w ≈ q · d (max|w| / 7 sets d). Activation rows are q8::Rows (model/kernels/q8_kernel.h). The
// weights are stored unsigned (q + 8), so a block's integer sum Σ (q + 8)·qx is corrected by
// corr / 16 = −8 · Σ qx, and the blocks combine in float32 as the int8 kernels' do:
//     y = 0;  for b in blocks: y = fma(float(Σ_k q·qx), d_b · dx_b, y)
// in every path (AVX-512 VNNI, AVX2 and plain C++: the tests compare them bit for bit).
//
// Layout: tiles of 16 output rows, each tile one run of bytes (64-byte aligned): its blocks'
// quants, 256 bytes a block, then its blocks' scales, 16 float16 a block. A block's quants are
// [4 groups of 8 inputs][16 rows][4 bytes], the low nibble of byte k input 8g + k and the high
// nibble input 8g + 4 + k (one 32-bit lane per row, as vpdpbusd reads it). Padding rows are
// q = 0 (stored 8), d = 0.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"
#include "model/kernels/q8_kernel.h"

namespace exspec::q4s {

constexpr int64_t kTile = 16, kBlock = 32;
constexpr int64_t kQuantBytes = kTile * kBlock / 2;  // 256 a tile's block

struct Weight {
  int64_t in = 0, out = 0, blocks = 0, tiles = 0, stride = 0;  // stride: a tile's bytes, padded to 64
  AlignedArray<uint8_t> data;
  int64_t bytes() const { return static_cast<int64_t>(data.bytes()); }
  uint8_t* quants(int64_t t, int64_t b) { return data.data() + t * stride + b * kQuantBytes; }
  uint16_t* scales(int64_t t, int64_t b) {
    return reinterpret_cast<uint16_t*>(data.data() + t * stride + blocks * kQuantBytes) + b * kTile;
  }
  const uint8_t* quants(int64_t t, int64_t b) const { return const_cast<Weight*>(this)->quants(t, b); }
  const uint16_t* scales(int64_t t, int64_t b) const { return const_cast<Weight*>(this)->scales(t, b); }
};

Weight empty_weight(int64_t out, int64_t in);  // every quant 0, every scale 0
int64_t weight_bytes(int64_t out, int64_t in);   // what empty_weight(out, in) holds
// Quantises rows [r0, r1) into w; `rows` points at row r0 (float32, `ld` apart). Disjoint tiles
// may be filled in parallel.
void quantise_rows_into(Weight& w, const float* rows, int64_t ld, int64_t r0, int64_t r1);
void dequantise_row(const Weight& w, int64_t row, float* out);  // q · d, exact in float32

using Isa = isa::Isa;
Isa best_isa();  // AVX-512 VNNI, else AVX2, else plain: the best the CPU has and EXSPEC_ISA allows
std::vector<Isa> isas_here();  // every path this CPU runs, plain first
// y[r, c] for every row r of x (x.in == w.in) and the columns of tiles [t0, t1); y float32,
// rows ldy apart; nothing outside those columns is written.
void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);

}  // namespace exspec::q4s
