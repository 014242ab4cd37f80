// Int8 products whose rows cannot see each other (torch-free; model/int8_matmul.h is the seam).
//
// Weights are quantised as GGUF's Q8_0: per output row and block of 32 inputs, one float16
// scale d and 32 integers q in [-127, 127], w ≈ q · d. Each activation row is quantised the same
// way with its own scales (float32), so nothing about a row depends on any other row. A block's
// dot product is an integer sum, exact in every path; the blocks are then combined in float32 in
// one fixed order:
//     y = 0;  for b in blocks: y = fma(float(Σ_k qw·qx), dw_b · dx_b, y)
// so y is the same bits whatever the batch, the row's place in it, the other rows, the threads,
// and the instruction set (AVX-512 VNNI, AVX2 or plain C++: the tests compare all three).
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"
#include "model/kernels/tile_groups.h"

namespace exspec::q8 {

constexpr int64_t kBlock = 32;  // inputs per scale
constexpr int64_t kTile = 16;   // output columns a kernel call writes together (one zmm of int32)

using Isa = isa::Isa;
Isa best_isa();                // the fastest path this CPU runs (isa.h: EXSPEC_ISA caps it)
std::vector<Isa> isas_here();  // every path this CPU runs, plain first
const char* isa_name(Isa isa);

// A weight [out, in], quantised and packed by tiles of 16 output rows, four tiles stored
// together so that a one-row product (four tiles at a time) reads one stream. For each group of
// four tiles and each block, 2176 bytes (34 cache lines):
//   quants [4 tiles][8 groups of 4 inputs][16 columns][4]: q + 128 as a byte (the unsigned
//          operand of vpdpbusd; xor 0x80 gives q back as a signed byte), then
//   scales [4 tiles][16 columns]: d as float16.
// Padding columns, tiles and inputs are zero (q 0, d 0).
constexpr int64_t kGroup = 4;                                      // tiles stored together
constexpr int64_t kQuantBytes = kTile * kBlock;                    // one tile's block: 512
constexpr int64_t kGroupBlock = kGroup * (kQuantBytes + 2 * kTile);  // 2176

struct Weight : TileGroups<kQuantBytes> {};

// w: row-major float32 [out, in] (rows `ld` apart).
Weight quantise(const float* w, int64_t out, int64_t in, int64_t ld);
// Quantises rows [r0, r1) of a weight into q; `rows` points at row r0 (float32, rows `ld` apart).
// Disjoint tiles may be filled in parallel (a tile is 16 rows).
void quantise_rows_into(Weight& q, const float* rows, int64_t ld, int64_t r0, int64_t r1);
Weight empty_weight(int64_t out, int64_t in);  // zeroed, to fill with quantise_rows_into
// Rows [r0, r1) packed from GGUF Q8_0 blocks as they are (no re-quantising: dequantising and
// quantising again need not give the same blocks back). `blocks` points at row r0; a row is
// q.blocks blocks of 34 bytes: d as float16, then 32 int8 quants. q.in must be a multiple of 32.
// Returns false, packing nothing more, at a quant of -128: outside [-127, 127], what the kernels
// take.
bool pack_q8_0_rows_into(Weight& q, const uint8_t* blocks, int64_t r0, int64_t r1);
constexpr int64_t kQ8_0BlockBytes = 34;

// Row `row` of the weight as the float32 values it stands for (q · d, exact): the embedding.
void dequantise_row(const Weight& w, int64_t row, float* out);

// Activation rows quantised per block: q [m][blocks * 32] (padding 0), d [m][blocks], and
// corr [m][blocks] = -128 · Σ q (what vpdpbusd's unsigned weight bytes add, to take back).
struct Rows {
  int64_t m = 0, in = 0, blocks = 0;
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> corr;
};
void resize_rows(Rows& x, int64_t m, int64_t in);
// Quantises rows [r0, r1) of x (float32, rows `ld` apart) into `out` (resized by resize_rows), on
// float32's instruction set under EXSPEC_ISA; the second form on the one named (the tests': every
// path gives the same bits).
void quantise_activations(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out);
void quantise_activations(const float* x, int64_t ld, int64_t r0, int64_t r1, Rows& out, Isa isa);

// y[r, c] for every row r of x and the columns of tiles [t0, t1); y is float32 [m, w.out],
// rows `ldy` apart. Writes nothing outside those columns.
void multiply(const Weight& w, const Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);

}  // namespace exspec::q8
