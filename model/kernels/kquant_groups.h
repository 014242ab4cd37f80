// Q4_K rows in groups of 8, interleaved at load so that the vector path's lanes are the group's 8
// columns (kquant_kernel.h's Weight::groups). A sub-block's integer dot product then builds up in
// one lane of a vector (vpdpbusd over the 8 quads of 4 inputs, the row's 4 inputs broadcast to
// every column), so a row costs no horizontal sums: the per-column path folds 8 vectors a
// super-block and row, which made a verify step's rows cost 3x a plain step's on Q4_K. Every
// output is the per-column definition's operations in their order (kquant_kernel.h), lane by
// lane: the same bits.
//
// A group's super-block (kGroupBlockBytes), for columns c = 0..7 of the group:
//   d[c], dmin[c]       float16 as in the file                     (16 + 16 bytes)
//   sc[j][c], m[j][c]   the 6-bit scales and mins, one byte each  (64 + 64 bytes)
//   q[p][t][c][4]       bytes 4t..4t+3 of column c's 32-byte quant run p (sub-blocks 2p in the
//                       low nibbles, 2p + 1 in the high)           (1024 bytes)
// 1,184 bytes for 8 blocks of 144: 2.8 % more than the file. Q6_K rows likewise (1,680 bytes for
// 8 blocks of 210, the same bytes): d[c] float16; sc[i][c] the 16 int8 scales; ql[h][pp][t][c][4]
// bytes 4t..4t+3 of column c's low-bit run 64h + 32pp; qh[h][t][c][4] those of its high-bit run
// 32h. Its offset of 32 is taken off each 16 inputs' sum before the scale, as per column.
#pragma once
#include <cstdint>

#include "model/kernels/kquant_kernel.h"

namespace exspec::kq {

constexpr int64_t kGroupCols = 8;
// A group's super-block: 8 blocks of `type` interleaved.
int64_t group_block_bytes(uint8_t type);

// The group block of 8 blocks of `type` (one per column, in order).
void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block);
// Column c's block (as in the file) back from a group block.
void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block);

// y[r, 8g + c] for every row of x and the group's columns c in [c0, c1) (of 0..8), on AVX-512
// VNNI (256-bit registers). q6_offsets: per row and super-block, 32 · Σ qx over each 16 inputs
// in kquant_kernel.cpp's halves() order (2 vectors of 8). Requires best_isa() == Avx512Vnni.
void vnni_group(const Weight& w, const q8::Rows& x, const int32_t* q6_offsets, int64_t g, int64_t c0, int64_t c1,
                float* y, int64_t ldy);

}  // namespace exspec::kq
