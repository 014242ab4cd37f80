// GGUF's 4-bit types kept packed (Q4_0, IQ4_NL: blocks of 32; IQ4_XS: super-blocks of 256),
// multiplied with rows that cannot see each other (torch-free; model/q4_matmul.h is the tensor
// seam).
//
// A block of 32 inputs holds 32 nibbles n and one scale s; the weight is value[n] · s, where value
// is the type's table of 16 int8 values (Q4_0: n − 8; IQ4_NL and IQ4_XS: kvalues_iq4nl), and s is
//   Q4_0, IQ4_NL: the block's float16 d;
//   IQ4_XS: d · (ls − 32), d the super-block's float16, ls the block's 6 bits. d has 11
//           significant bits and ls − 32 (in [−32, 31]) at most 6, so their product is exact in
//           float32 (not in float16: it is not a Q8_0 block), and so is value[n] · s (7 more bits):
//           ggml's dequantisation computes the same product.
// Each output is, in every path, in this one order of float32 operations:
//     y = 0;  for b in blocks of 32, in order: y = fma(float(Σ_k value[n_k]·qx_k), s_b · dx_b, y)
// the integer sum exact (|Σ| <= 32·127·127), s_b exact (above), s_b · dx_b one rounding. Nothing
// in it depends on the batch, the row's place in it, the threads or the instruction set (AVX-512
// VNNI, AVX2 or plain C++), so an output is the same bits whatever those are. For Q4_0 and IQ4_NL
// this is exactly what the Q8_0 kernel (q8_kernel.h) computes on the blocks converted to Q8_0
// (value[n] with the same d; model/gguf/ggml_blocks.h), bit for bit, read at 18 bytes a block
// where the converted blocks are 34; IQ4_XS has no Q8_0 form (its s is not a float16), and is
// read at 138 bytes a super-block (the file's 136, its 6-bit scales widened to a byte). The
// nibbles become bytes in registers through a 16-byte table (vpshufb), one table per weight.
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
constexpr int64_t kBlockBytes = 18;   // a Q4_0 or IQ4_NL block: d as float16, then 16 bytes of nibbles
constexpr int64_t kXsBlockBytes = 136;  // an IQ4_XS super-block: d, scales_h, scales_l[4], 8 × 16 bytes of nibbles

// Layout: tiles of 16 output rows, four tiles stored together (as q8_kernel.h's) so that a
// one-row product reads one stream, by stored blocks of Sub blocks of 32 (1: Q4_0, IQ4_NL; 8:
// IQ4_XS's super-block). For each group of four tiles and each stored block:
//   [4 tiles] quants: [Sub blocks][4 vectors g][16 columns][4 bytes]: byte j of a column's 4 in
//          vector g holds input 4g + j in its low nibble and input 16 + 4g + j in its high one
//          (the file's byte 4g + j, as it is), so one 32-bit lane per column, as vpdpbusd reads
//          it; then, where Sub > 1, [Sub][16 columns] the int8 ls − 32 of each block of 32;
//   [4 tiles] scales: [16 columns] d as float16.
// Padding columns are nibble 0 with d = 0.
constexpr int64_t kGroup = 4;                        // tiles stored together
constexpr int64_t kQuantBytes = kTile * kBlock / 2;  // one tile's nibbles of a block of 32: 256
template <int64_t Sub>
inline constexpr int64_t kStoredBytes = Sub * kQuantBytes + (Sub > 1 ? Sub * kTile : 0);

template <int64_t Sub>
struct Packed : TileGroups<kStoredBytes<Sub>> {
  static constexpr int64_t kSub = Sub;
  int8_t values[16] = {};   // the type's value of each nibble
  uint8_t biased[16] = {};  // value + 128: vpdpbusd's unsigned operand (the rows' corr takes it back)
  bool small = false;       // every |value| <= 16 (Q4_0): AVX2 sums a block's products in int16
  // Tile t's nibbles of block j (of 32) in stored block b, and (Sub > 1) its columns' ls − 32.
  uint8_t* nibbles(int64_t t, int64_t b, int64_t j) { return this->quants(t, b) + j * kQuantBytes; }
  const uint8_t* nibbles(int64_t t, int64_t b, int64_t j) const { return const_cast<Packed*>(this)->nibbles(t, b, j); }
  int8_t* multipliers(int64_t t, int64_t b, int64_t j) {
    return reinterpret_cast<int8_t*>(this->quants(t, b) + Sub * kQuantBytes + j * kTile);
  }
  const int8_t* multipliers(int64_t t, int64_t b, int64_t j) const { return const_cast<Packed*>(this)->multipliers(t, b, j); }
  int64_t blocks32() const { return this->blocks * Sub; }  // blocks of 32 inputs: the rows'
};
using Weight = Packed<1>;    // Q4_0, IQ4_NL
using XsWeight = Packed<8>;  // IQ4_XS

// Zeroed, for `out` rows of `in` inputs (a multiple of 32; of 256 for XsWeight) of a type whose
// nibbles stand for the 16 `values` (each in [-127, 127], what the AVX2 path's sign trick
// takes). Throws otherwise.
Weight empty_weight(int64_t out, int64_t in, const int8_t* values);
XsWeight empty_xs_weight(int64_t out, int64_t in, const int8_t* values);
// Rows [r0, r1) from the file's blocks as they are (18 bytes, or IQ4_XS's 136); `blocks` points
// at row r0. Disjoint tiles may be filled in parallel.
void pack_rows_into(Weight& w, const uint8_t* blocks, int64_t r0, int64_t r1);
void pack_rows_into(XsWeight& w, const uint8_t* blocks, int64_t r0, int64_t r1);

// Row `row` as the float32 values it stands for (value[n] · s, exact): the embedding.
void dequantise_row(const Weight& w, int64_t row, float* out);
void dequantise_row(const XsWeight& w, int64_t row, float* out);

using Isa = isa::Isa;
Isa best_isa();                // isa.h: EXSPEC_ISA caps it
std::vector<Isa> isas_here();  // plain first
const char* isa_name(Isa isa);

// y[r, c] for every row r of x and the columns of tiles [t0, t1); y float32 [m, w.out], rows
// `ldy` apart. x is quantised by q8::quantise_activations with in = w.in. Writes nothing else.
void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);
void multiply(const XsWeight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);

}  // namespace exspec::q4
