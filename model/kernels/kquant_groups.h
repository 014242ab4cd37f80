// Q4_K, Q5_K and Q6_K rows in groups of 8, interleaved at load so that the vector path's lanes are the group's 8
// columns (kquant_kernel.h's Weight::groups). A sub-block's integer dot product then builds up in
// one lane of a vector (vpdpbusd over the 8 quads of 4 inputs, the row's 4 inputs broadcast to
// every column), so a row costs no horizontal sums: the per-column path folds 8 vectors a
// super-block and row, which made a verify step's rows cost 3x a plain step's on Q4_K. Every
// output is the per-column definition's operations in their order (kquant_kernel.h), lane by
// lane: the same bits. The vector paths over groups are in kquant_simd.inc.
//
// A group's super-block (kGroupBlockBytes), for columns c = 0..7 of the group:
//   d[c], dmin[c]       float16 as in the file                     (16 + 16 bytes)
//   sc[j][c], m[j][c]   the 6-bit scales and mins, one byte each  (64 + 64 bytes)
//   q[p][t][c][4]       bytes 4t..4t+3 of column c's 32-byte quant run p (sub-blocks 2p in the
//                       low nibbles, 2p + 1 in the high)           (1024 bytes)
// 1,184 bytes for 8 blocks of 144: 2.8 % more than the file. Q5_K rows: Q4_K's layout (their
// nibbles), then qh[t][c][4] bytes 4t..4t+3 of column c's 5th bits (256 bytes): 1,440 for 8
// blocks of 176, 2.3 % more. Q6_K rows likewise (1,680 bytes for
// 8 blocks of 210, the same bytes): d[c] float16; sc[i][c] the 16 int8 scales; ql[h][pp][t][c][4]
// bytes 4t..4t+3 of column c's low-bit run 64h + 32pp; qh[h][t][c][4] those of its high-bit run
// 32h. Its offset of 32 is taken off each 16 inputs' sum before the scale, as per column.
#pragma once
#include <cstdint>

#include "model/kernels/kquant_types.h"

namespace exspec::kq {

constexpr int64_t kGroupCols = 8;
// Where a group block's parts start, in bytes (the layout above).
namespace group_layout {
constexpr int64_t kD = 0, kDmin = 16, kSc = 32, kM = 96, kQ = 160, kQ4Bytes = 1184;  // Q4_K
constexpr int64_t kQh5 = 1184, kQ5Bytes = 1440;                                        // Q5_K: Q4_K's, then qh
constexpr int64_t kSc6 = 16, kQl6 = 144, kQh6 = 1168, kQ6Bytes = 1680;                 // Q6_K: d at 0
}  // namespace group_layout
// A group's super-block: 8 blocks of `type` interleaved; 0 for a type without a group layout.
int64_t group_block_bytes(uint8_t type);

// The group block of 8 blocks of `type` (one per column, in order). Throws for a type without one.
void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block);
// Column c's block (as in the file) back from a group block.
void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block);

}  // namespace exspec::kq
