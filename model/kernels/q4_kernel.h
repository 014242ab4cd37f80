// GGUF's 4- and 5-bit types kept packed (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL: blocks of 32; IQ4_XS:
// super-blocks of 256), multiplied with rows that cannot see each other (torch-free;
// model/q4_matmul.h is the tensor seam).
//
// A block of 32 inputs holds 32 nibbles n (Q5_0, Q5_1: and a 5th bit h each), one scale s and,
// for Q4_1 and Q5_1, a min m; the weight is value[n] + 16·h times s, plus m, where value is the
// type's table of 16 int8 values (Q4_0: n − 8; Q5_0: n − 16; Q4_1, Q5_1: n; IQ4_NL and IQ4_XS:
// kvalues_iq4nl), and s is
//   the block's float16 d, or for IQ4_XS d · (ls − 32), d the super-block's float16, ls the
//   block's 6 bits. d has 11 significant bits and ls − 32 (in [−32, 31]) at most 6, so their
//   product is exact in float32 (not in float16: it is not a Q8_0 block), and so is q · s
//   (7 more bits): ggml's dequantisation computes the same product.
// Each output is, in every path, in this one order of float32 operations:
//     y = 0;  for b in blocks of 32, in order:
//       y = fma(float(Σ_k q_k·qx_k), s_b · dx_b, y)        q = value[n] + 16·h
//       y = fma(float(Σ_k qx_k), m_b · dx_b, y)            Q4_1 and Q5_1 only: the min's term
// the integer sums exact (|Σ| <= 32·127·127), s_b exact (above), each product s · dx one
// rounding. The min's term is the min times the activation block's sum (ggml's Q8_1 carries the
// same sum), so the kernel never forms d·q + m, which ggml's dequantisation rounds once. Nothing
// in it depends on the batch, the row's place in it, the threads or the instruction set (AVX-512
// VNNI, AVX2 or plain C++), so an output is the same bits whatever those are. For Q4_0, Q5_0 and
// IQ4_NL this is exactly what the Q8_0 kernel (q8_kernel.h) computes on the blocks converted to
// Q8_0 (q with the same d; model/gguf/ggml_blocks.h), bit for bit, read at the file's 18 or 22
// bytes a block where the converted blocks are 34. IQ4_XS has no Q8_0 form (its s is not a
// float16), nor do Q4_1 and Q5_1 (the min): each is read at its file's size (IQ4_XS: 138 bytes
// a super-block for 136, its 6-bit scales widened to a byte). The nibbles become bytes in
// registers through a 16-byte table (vpshufb), one table per weight; a 5th bit adds 16.
//
// Activation rows are q8::Rows (q8_kernel.h), as for every int8 product.
#pragma once
#include <cstdint>
#include <variant>
#include <vector>

#include "model/gguf/ggml_types.h"
#include "model/gguf/half_float.h"
#include "model/kernels/aligned_array.h"
#include "model/kernels/isa.h"
#include "model/kernels/tile_groups.h"
#include "model/kernels/q8_kernel.h"

namespace exspec::q4 {

constexpr int64_t kBlock = 32;          // inputs per scale
constexpr int64_t kTile = 16;           // output columns a kernel call writes together
constexpr int64_t kBlockBytes = 18;     // a Q4_0 or IQ4_NL block: d as float16, then 16 bytes of nibbles
constexpr int64_t kXsBlockBytes = 136;  // an IQ4_XS super-block: d, scales_h, scales_l[4], 8 × 16 bytes of nibbles

// What a stored block holds besides nibbles and d (Packed's Parts, bits):
constexpr int kHigh = 1;  // Q5_0, Q5_1: each value's 5th bit
constexpr int kMin = 2;   // Q4_1, Q5_1: a float16 min a block of 32

// Layout: tiles of 16 output rows, four tiles stored together (as q8_kernel.h's) so that a
// one-row product reads one stream, by stored blocks of Sub blocks of 32 (1; IQ4_XS: 8, its
// super-block). For each group of four tiles and each stored block:
//   [4 tiles] quants: [Sub blocks][4 vectors g][16 columns][4 bytes]: byte j of a column's 4 in
//          vector g holds input 4g + j in its low nibble and input 16 + 4g + j in its high one
//          (the file's byte 4g + j, as it is), so one 32-bit lane per column, as vpdpbusd reads
//          it; then, where Sub > 1, [Sub][16 columns] the int8 ls − 32 of each block of 32;
//          where kHigh, [4 vectors g][low, high nibbles][8 bytes]: a 64-bit mask whose bit i is
//          the 5th bit of byte i's input in vector g;
//   [4 tiles] scales: [16 columns] d as float16; where kMin, then [16 columns] m as float16.
// Padding columns are nibble 0 with d = m = 0. Every part stays 64-byte aligned.
constexpr int64_t kGroup = 4;                        // tiles stored together
constexpr int64_t kQuantBytes = kTile * kBlock / 2;  // one tile's nibbles of a block of 32: 256
constexpr int64_t kHighBytes = kTile * kBlock / 8;   // one tile's 5th bits of a block of 32: 64
template <int64_t Sub, int Parts>
inline constexpr int64_t kStoredBytes = Sub * kQuantBytes + (Sub > 1 ? Sub * kTile : 0) + (Parts & kHigh ? kHighBytes : 0);

template <int64_t Sub, int Parts = 0>
struct Packed : TileGroups<kStoredBytes<Sub, Parts>, (Parts & kMin ? 4 : 2) * kTile> {
  static_assert(Sub == 1 || Parts == 0, "a super-block has neither 5th bits nor mins");
  static constexpr int64_t kSub = Sub;
  static constexpr int kParts = Parts;
  int8_t values[16] = {};   // the type's value of each nibble (before a 5th bit's 16)
  uint8_t biased[16] = {};  // value + 128: vpdpbusd's unsigned operand (the rows' corr takes it back)
  // How many of a block's 4 vectors AVX2 sums in int16 before widening: 4 where every |q| <= 16
  // (Q4_0, Q4_1, Q5_0), 2 where every |q| <= 32 (Q5_1), 0 otherwise (each product widened).
  int run = 0;
  // Tile t's nibbles of block j (of 32) in stored block b; (Sub > 1) its columns' ls − 32;
  // (kHigh) its 5th bits; (kMin) its columns' mins.
  uint8_t* nibbles(int64_t t, int64_t b, int64_t j) { return this->quants(t, b) + j * kQuantBytes; }
  const uint8_t* nibbles(int64_t t, int64_t b, int64_t j) const { return const_cast<Packed*>(this)->nibbles(t, b, j); }
  int8_t* multipliers(int64_t t, int64_t b, int64_t j) {
    return reinterpret_cast<int8_t*>(this->quants(t, b) + Sub * kQuantBytes + j * kTile);
  }
  const int8_t* multipliers(int64_t t, int64_t b, int64_t j) const { return const_cast<Packed*>(this)->multipliers(t, b, j); }
  uint8_t* high(int64_t t, int64_t b) { return this->quants(t, b) + kQuantBytes; }
  const uint8_t* high(int64_t t, int64_t b) const { return const_cast<Packed*>(this)->high(t, b); }
  const uint16_t* mins(int64_t t, int64_t b) const { return this->scales(t, b) + kTile; }
  uint16_t* mins(int64_t t, int64_t b) { return this->scales(t, b) + kTile; }
  int64_t blocks32() const { return this->blocks * Sub; }  // blocks of 32 inputs: the rows'
};
using Weight = Packed<1>;                    // Q4_0, IQ4_NL
using XsWeight = Packed<8>;                  // IQ4_XS
using Q4_1Weight = Packed<1, kMin>;          // Q4_1
using Q5_0Weight = Packed<1, kHigh>;         // Q5_0
using Q5_1Weight = Packed<1, kHigh | kMin>;  // Q5_1
using AnyWeight = std::variant<Weight, XsWeight, Q4_1Weight, Q5_0Weight, Q5_1Weight>;

// Zeroed, for `out` rows of `in` inputs (a multiple of 32 Sub) of a type whose nibbles stand for
// the 16 `values` (each, and with a 5th bit's 16, in [-127, 127], what the AVX2 path's sign
// trick takes). Throws otherwise.
template <int64_t Sub, int Parts>
Packed<Sub, Parts> empty_packed(int64_t out, int64_t in, const int8_t* values);
inline Weight empty_weight(int64_t out, int64_t in, const int8_t* values) { return empty_packed<1, 0>(out, in, values); }
inline XsWeight empty_xs_weight(int64_t out, int64_t in, const int8_t* values) { return empty_packed<8, 0>(out, in, values); }
// The form of type t's blocks, zeroed (its row's `nibbles` the values). Throws for a type the
// kernel does not take (its row's int8 path is not Int8Path::Q4).
AnyWeight empty_for(const gguf::WeightType& t, int64_t out, int64_t in);

// Rows [r0, r1) from the file's blocks as they are (ggml's: d, [m], [qh], 16 bytes of nibbles;
// or IQ4_XS's 136 bytes); `blocks` points at row r0. Disjoint tiles may be filled in parallel.
template <int64_t Sub, int Parts>
void pack_rows_into(Packed<Sub, Parts>& w, const uint8_t* blocks, int64_t r0, int64_t r1);
void pack_rows_into(AnyWeight& w, const uint8_t* blocks, int64_t r0, int64_t r1);

// Row `row` as the float32 values it stands for (q · s, exact, plus m in one rounding, as ggml's
// dequantisation): the embedding.
template <int64_t Sub, int Parts>
void dequantise_row(const Packed<Sub, Parts>& w, int64_t row, float* out);

// Where the layout above keeps each input's parts: read by the plain reference, the packing and
// the dequantisation, so that one place says it.
namespace layout {

constexpr int64_t kVectors = kQuantBytes / 64;  // 64-byte vectors of a tile's nibbles of a block: 4

// Input k's (0..31) byte of column c in a tile's nibbles of a block: vector (k % 16) / 4, lane c.
inline int64_t byte_at(int64_t c, int64_t k) { return ((k % 16) / 4) * 64 + c * 4 + k % 4; }
inline int nibble(const uint8_t* nibbles, int64_t c, int64_t k) {
  const uint8_t byte = nibbles[byte_at(c, k)];
  return k < 16 ? byte & 0x0F : byte >> 4;
}
// Input k's 5th bit: bit c·4 + k % 4 of the 64-bit mask of its vector's low (k < 16) or high nibbles.
inline int64_t high_bit_at(int64_t c, int64_t k) { return ((k % 16) / 4 * 16 + (k < 16 ? 0 : 8)) * 8 + c * 4 + k % 4; }
inline int high_bit(const uint8_t* high, int64_t c, int64_t k) {
  const int64_t i = high_bit_at(c, k);
  return (high[i / 8] >> (i % 8)) & 1;
}

// The integer q of input k, column c, of tile t's block j in stored block b: value[n] (+ 16 h).
template <int64_t Sub, int Parts>
int quant(const Packed<Sub, Parts>& w, int64_t t, int64_t b, int64_t j, int64_t c, int64_t k) {
  int q = w.values[nibble(w.nibbles(t, b, j), c, k)];
  if constexpr ((Parts & kHigh) != 0) q += 16 * high_bit(w.high(t, b), c, k);
  return q;
}

// Block j's scale s of column c in tile t's stored block b: d, or d · (ls − 32), exact.
template <int64_t Sub, int Parts>
float block_scale(const Packed<Sub, Parts>& w, int64_t t, int64_t b, int64_t j, int64_t c) {
  const float d = half_float(w.scales(t, b)[c]);
  if constexpr (Sub == 1) return d;
  else return d * static_cast<float>(w.multipliers(t, b, j)[c]);
}

}  // namespace layout

using Isa = isa::Isa;
Isa best_isa();                // isa.h: EXSPEC_ISA caps it
std::vector<Isa> isas_here();  // plain first
const char* isa_name(Isa isa);

// y[r, c] for every row r of x and the columns of tiles [t0, t1); y float32 [m, w.out], rows
// `ldy` apart. x is quantised by q8::quantise_activations with in = w.in. Writes nothing else.
template <int64_t Sub, int Parts>
void multiply(const Packed<Sub, Parts>& w, const q8::Rows& x, float* y, int64_t ldy, int64_t t0, int64_t t1, Isa isa);

}  // namespace exspec::q4
