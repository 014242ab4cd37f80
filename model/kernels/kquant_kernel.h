// GGUF's K-quant weights (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), kept as their blocks, multiplied with
// rows that cannot see each other (torch-free; model/kquant_matmul.h is the tensor seam).
//
// A row of the weight is a run of super-blocks of 256 inputs, each of 8 sub-blocks of 32:
//   Q2_K (84 bytes): 16 scale bytes (sc_i in the low nibble, m_i in the high, one per 16
//        inputs), 64 bytes of 2-bit quants q, d, dmin (float16): w = d·sc_i·q − dmin·m_i;
//   Q3_K (110 bytes): hmask[32] (sub-block j's high bits in bit j), 64 bytes of 2-bit quants, 12
//        bytes of 6-bit scales (one per 16 inputs), d: w = d·(sc_i − 32)·(q − 4·!hbit);
//   Q4_K (144 bytes): d, dmin (float16), 12 bytes of 6-bit scales sc[8] and mins m[8], 128 bytes
//        of 4-bit quants q: w = d·sc_j·q − dmin·m_j;
//   Q5_K (176 bytes): Q4_K's, with qh[32] (the 5th bits: sub-block j's in bit j) before the
//        nibbles: the same arithmetic with 5-bit q;
//   Q6_K (210 bytes): ql[128] (low 4 bits), qh[64] (high 2 bits), 16 int8 scales (one per 16
//        inputs), d (float16): w = d·sc_i·(q − 32).
// Rows of these types may be mixed in one weight (a Q4_K_M file's attn_v is Q6_K where q and k
// are Q4_K, and the decoder multiplies the three as one). Q3_K's A_j is the integer its exact
// conversion to Q6_K (ggml_blocks.h) gives, so it is that conversion's output, bit for bit.
//
// Each activation row is quantised as the int8 kernels' (model/q8_kernel.h q8::Rows: per block of
// 32, int8 q and a float32 scale dx), which line up with the sub-blocks. Per sub-block j of
// super-block s the integer parts are exact:
//   Q4_K, Q5_K: A_j = sc_j · Σ q·qx,  B_j = m_j · Σ qx;
//   Q6_K, Q3_K: A_j = Σ_{two halves i of 16} sc_i · Σ w_q·qx, w_q the quant's signed value (q − 32,
//               q − 4·!hbit);
//   Q2_K:       A_j = Σ_{halves i} sc_i · Σ q·qx,  B_j = Σ_{halves i} m_i · Σ qx
// and are combined in float32 into eight sums, one per sub-block position j, in super-block order:
//   acc_j = fma(float(A_j), d·dx, acc_j);  the types with mins then  acc_j = fma(float(−B_j), dmin·dx, acc_j)
// and y = ((acc0 + acc4) + (acc2 + acc6)) + ((acc1 + acc5) + (acc3 + acc7)).
// Whole groups of 8 rows of one type are interleaved (kquant_groups.h), with the same
// arithmetic; AVX-512 multiplies two adjacent groups of one type at once in 512-bit registers
// where several rows share the quants' decoding. So an output is the same bits whatever the
// batch, the row's place in it, the other rows, the threads, the register width and the
// instruction set (AVX-512 VNNI, AVX2, or plain C++).
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernels/aligned_array.h"
#include "model/kernels/kquant_types.h"
#include "model/kernels/q8_kernel.h"

namespace exspec::kq {


bool is_kquant(uint32_t ggml_type);
int64_t block_bytes(uint8_t type);  // 0 for a type not here

// How GGUF's loader hands such a weight on (model/gguf_weights.h): a byte row per output of
// tagged_width(in) bytes, the row's ggml type id, then its blocks, then zeros.
int64_t tagged_width(int64_t in);

struct Weight {
  int64_t out = 0, in = 0, supers = 0;
  std::vector<uint8_t> types;    // per output row
  std::vector<int64_t> offsets;  // per output row: where its blocks start in data (-1: in a group)
  // Per group of 8 rows (8g .. 8g + 7): where its super-blocks start in data when all 8 are of
  // one type, interleaved (kquant_groups.h); -1: its rows are kept one by one, as in the file.
  std::vector<int64_t> groups;
  AlignedArray<uint8_t> data;    // the rows' blocks, as in the file, and the groups'
  int64_t bytes() const { return static_cast<int64_t>(data.bytes()); }
  const uint8_t* row(int64_t r) const { return data.data() + offsets[r]; }  // a row not in a group
  // Row r's super-block s as in the file: in place, or gathered into `scratch` (210 bytes).
  const uint8_t* block(int64_t r, int64_t s, uint8_t* scratch) const;
};

// From tagged rows (`out` rows of tagged_width(in) bytes). Throws naming the row at a type not
// here or an `in` that is not whole super-blocks.
Weight from_tagged(const uint8_t* tagged, int64_t out, int64_t in);

void dequantise_row(const Weight& w, int64_t row, float* out);  // the row's `in` values

// y[r, c] for every row r of x and the output columns [c0, c1); y float32 [m, w.out], rows ldy
// apart. x is quantised by q8::quantise_activations with in = w.in.
using Isa = isa::Isa;
Isa best_isa();  // isa.h: EXSPEC_ISA caps it
std::vector<Isa> isas_here();  // plain first
const char* isa_name(Isa isa);
void multiply(const Weight& w, const q8::Rows& x, float* y, int64_t ldy, int64_t c0, int64_t c1, Isa isa);

}  // namespace exspec::kq
