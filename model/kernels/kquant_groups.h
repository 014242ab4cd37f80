// K-quant rows (Q2_K to Q6_K) in groups of 8, interleaved at load so that the vector path's lanes are the group's 8
// columns (kquant_kernel.h's Weight::groups). A sub-block's integer dot product then builds up in
// one lane of a vector (vpdpbusd over the 8 quads of 4 inputs, the row's 4 inputs broadcast to
// every column), so a row costs no horizontal sums: the per-column path folds 8 vectors a
// super-block and row, which made a verify step's rows cost 3x a plain step's on Q4_K. Every
// output is the per-column definition's operations in their order (kquant_kernel.h), lane by
// lane: the same bits. The vector paths over groups are in kquant_group_simd.inc.
//
// A group's super-block, for columns c = 0..7 of the group (x[..][c][4]: bytes 4t..4t+3 of column
// c's 32-byte run, quad t of it):
//   Q4_K (1,184 bytes for 8 blocks of 144, 2.8 % more): d[c], dmin[c] float16 as in the file; the
//        6-bit scales and mins sc[j][c], m[j][c] a byte each; q[p][t][c][4] of quant run p
//        (sub-blocks 2p in the low nibbles, 2p + 1 in the high).
//   Q5_K (1,440 for 8 of 176, 2.3 % more): Q4_K's layout (its nibbles), then qh[t][c][4] of its
//        5th bits.
//   Q6_K (1,680, the same bytes): d[c]; sc[i][c] the 16 int8 scales; then for each h and t, in
//        one stream, ql[c][4] of its low-bit runs 64h and 64h + 32 and qh[c][4] of its high-bit
//        run 32h (three streams, one per run, read one row 1.3x more slowly: docs/performance.md).
//        Its offset of 32 is taken off each 16 inputs' sum before the scale, as per column.
//   Q3_K (912 for 8 of 110, 3.6 % more): d[c]; sc[i][c] its 16 scales as int8 (sc − 32);
//        qs[n][t][c][4] of its 2-bit run n; hm[t][c][4] of its high-bit mask. Its quants are
//        read as 0..7 (q + 4), and 4 · Σ qx is taken off as Q6_K's 32 · Σ qx is.
//   Q2_K (672, the same bytes): d[c], dmin[c]; s[i][c] its 16 scale bytes as in the file (scale
//        in the low nibble, min in the high); qs[n][t][c][4] of its 2-bit run n.
#pragma once
#include <cstdint>

#include "model/kernels/kquant_types.h"

namespace exspec::kq {

constexpr int64_t kGroupCols = 8;
// Where a group block's parts start, in bytes (the layout above).
namespace group_layout {
constexpr int64_t kD = 0, kDmin = 16, kSc = 32, kM = 96, kQ = 160, kQ4Bytes = 1184;  // Q4_K
constexpr int64_t kQh5 = 1184, kQ5Bytes = 1440;                                        // Q5_K: Q4_K's, then qh
constexpr int64_t kSc6 = 16, kQ6 = 144, kQ6Bytes = 1680;                              // Q6_K: d at 0
constexpr int64_t kSc3 = 16, kQs3 = 144, kHm3 = 656, kQ3Bytes = 912;                   // Q3_K: d at 0
constexpr int64_t kSc2 = 32, kQs2 = 160, kQ2Bytes = 672;                               // Q2_K: d at 0, dmin at 16
}  // namespace group_layout
// A group's super-block: 8 blocks of `type` interleaved; 0 for a type without a group layout.
int64_t group_block_bytes(uint8_t type);

// The group block of 8 blocks of `type` (one per column, in order). Throws for a type without one.
void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block);
// Column c's block (as in the file) back from a group block.
void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block);

}  // namespace exspec::kq
