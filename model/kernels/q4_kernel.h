// GGUF's 4-bit blocks of 32 (Q4_0, IQ4_NL) kept packed at 18 bytes a block, multiplied with rows
// that cannot see each other (torch-free; model/q4_matmul.h is the tensor seam).
//
// A block is a float16 scale d and 32 nibbles n; the weight is value[n] · d, where value is the
// type's table of 16 int8 values (Q4_0: n − 8; IQ4_NL: kvalues_iq4nl). So each block is exactly a
// Q8_0 block with quants value[n] and the same d (model/gguf/ggml_blocks.h converts them so), and
// this kernel computes exactly what the Q8_0 kernel (q8_kernel.h) computes on those converted
// blocks: the same integer block sums Σ value[n]·qx, combined in the same float32 order,
//     y = 0;  for b in blocks: y = fma(float(Σ_k value[n_k]·qx_k), d_b · dx_b, y)
// so every output is the Q8_0 path's bits, whatever the batch, the threads and the instruction
// set (AVX-512 VNNI, AVX2 or plain C++; the tests compare each with the Q8_0 kernel). It reads
// 18 bytes a block where the converted blocks are 34: the nibbles are turned into bytes in
// registers through a 16-byte table (vpshufb), one table per weight.
//
// Activation rows are q8::Rows (q8_kernel.h), as for every int8 product.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"
#include "model/kernels/tile_groups.h"
#include "model/kernels/q8_kernel.h"

namespace exspec::q4 {

constexpr int64_t kBlock = 32;        // inputs per scale
constexpr int64_t kTile = 16;         // output columns a kernel call writes together
constexpr int64_t kBlockBytes = 18;   // a file's block: d as float16, then 16 bytes of nibbles

// Layout: tiles of 16 output rows, four tiles stored together (as q8_kernel.h's) so that a
// one-row product reads one stream. For each group of four tiles and each block, 1152 bytes:
//   quants [4 tiles][4 vectors g][16 columns][4 bytes]: byte j of a column's 4 in vector g holds
//          input 4g + j in its low nibble and input 16 + 4g + j in its high one (the file's
//          byte 4g + j, as it is), so one 32-bit lane per column, as vpdpbusd reads it, then
//   scales [4 tiles][16 columns]: d as float16.
// Padding columns are nibble 0 with d = 0.
constexpr int64_t kGroup = 4;                                        // tiles stored together
constexpr int64_t kQuantBytes = kTile * kBlock / 2;                  // one tile's block: 256
constexpr int64_t kGroupBlock = kGroup * (kQuantBytes + 2 * kTile);  // 1152

struct Weight : TileGroups<kQuantBytes> {
  int8_t values[16] = {};   // the type's value of each nibble
  uint8_t biased[16] = {};  // value + 128: vpdpbusd's unsigned operand (the rows' corr takes it back)
  bool small = false;       // every |value| <= 16 (Q4_0): AVX2 sums a block's products in int16
};

// Zeroed, for `out` rows of `in` inputs (a multiple of 32) of a type whose nibbles stand for the
// 16 `values` (each in [-127, 127], what the AVX2 path's sign trick takes). Throws otherwise.
Weight empty_weight(int64_t out, int64_t in, const int8_t* values);
// Rows [r0, r1) from the file's blocks as they are; `blocks` points at row r0, a row is
// w.blocks blocks of 18 bytes. Disjoint tiles may be filled in parallel.
void pack_rows_into(Weight& w, const uint8_t* blocks, int64_t r0, int64_t r1);

// Row `row` as the float32 values it stands for (value[n] · d, exact): the embedding.
void dequantise_row(const Weight& w, int64_t row, float* out);

using Isa = isa::Isa;
Isa best_isa();                // isa.h: EXSPEC_ISA caps it
std::vector<Isa> isas_here();  // plain first
const char* isa_name(Isa isa);

// y[r, c] for every row r of x and the columns of tiles [t0, t1); y float32 [m, w.out], rows
// `ldy` apart. x is quantised by q8::quantise_activations with in = w.in. Writes nothing else.
void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);

}  // namespace exspec::q4
