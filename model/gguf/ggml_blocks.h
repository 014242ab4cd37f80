// Each served ggml block type's dequantisation, and the exact conversions of some into another
// packed type's blocks: the functions ggml_types.cpp's rows point at. Torch-free.
//
// Block layouts (little-endian, ggml-common.h), with d, dmin, m float16:
//   Q4_0 (32 values, 18 bytes): d, qs[16]            w = d·(q − 8), q the low nibbles then the high
//   Q4_1 (32, 20): d, m, qs[16]                       w = d·q + m
//   Q5_0 (32, 22): d, qh (u32: the 5th bits), qs[16]  w = d·(q − 16)
//   Q5_1 (32, 24): d, m, qh, qs[16]                   w = d·q + m
//   Q8_0 (32, 34): d, q[32] (int8)                    w = d·q
//   IQ4_NL (32, 18): d, qs[16]                        w = d·kvalues[q] (a fixed non-linear table)
//   MXFP4 (32, 17): e (E8M0), qs[16]                  w = 2^(e − 128)·kvalues_fp4[q]
//   Q2_K (256, 84): scales[16] (4-bit scale, 4-bit min), qs[64], d, dmin
//                                                     w = d·sc·q − dmin·m, 16 values a scale
//   Q3_K (256, 110): hmask[32], qs[64], scales[12] (6-bit), d
//                                                     w = d·(sc − 32)·(q − 4·!hbit), 16 a scale
//   Q4_K (256, 144): d, dmin, scales[12] (6-bit sc and m), qs[128]     w = d·sc·q − dmin·m, 32 a scale
//   Q5_K (256, 176): d, dmin, scales[12], qh[32], qs[128]              the same with 5-bit q
//   Q6_K (256, 210): ql[128], qh[64], scales[16] (int8), d             w = d·sc·(q − 32), 16 a scale
//   IQ4_XS (256, 136): d, scales_h (u16), scales_l[4], qs[128]         w = d·(ls − 32)·kvalues[q], 32 a scale
#pragma once
#include <cstdint>

namespace exspec::gguf::blocks {

// The values a 4-bit block of 32's nibbles stand for, before the scale d (ggml-common.h): the
// packed 4-bit kernel's tables (model/kernels/q4_kernel.h) and the conversions' below. Q5_0's
// and Q5_1's 5th bit adds 16 to its nibble's value.
inline constexpr int8_t kQ4_0Values[16] = {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7};  // n − 8
inline constexpr int8_t kQ5_0Values[16] = {-16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1};  // n − 16
inline constexpr int8_t kNibbleValues[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};  // n: Q4_1, Q5_1
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void q4_0(const uint8_t* b, float* out);
void q4_1(const uint8_t* b, float* out);
void q5_0(const uint8_t* b, float* out);
void q5_1(const uint8_t* b, float* out);
void q8_0(const uint8_t* b, float* out);
void iq4_nl(const uint8_t* b, float* out);
void mxfp4(const uint8_t* b, float* out);
void q2_k(const uint8_t* b, float* out);
void q3_k(const uint8_t* b, float* out);
void q4_k(const uint8_t* b, float* out);
void q5_k(const uint8_t* b, float* out);
void q6_k(const uint8_t* b, float* out);
void iq4_xs(const uint8_t* b, float* out);

// The K types' parts, for the kernels' plain paths too: Q4_K/Q5_K's 6-bit scales and mins of
// sub-blocks 0..7 from their 12 bytes; quant k (0..255) of a Q4_K (0..15), Q5_K (0..31) or Q6_K
// (0..63, before its −32) super-block.
void k4_scales(const uint8_t* s, int* sc, int* m);
int q4_k_quant(const uint8_t* b, int k);
int q5_k_quant(const uint8_t* b, int k);
int q6_k_quant(const uint8_t* b, int k);
// Q3_K's 16 scales (0..63, before their −32) from its 12 bytes; its quant k as −4..3; Q2_K's
// quant k (0..3) from its 64 bytes of quants.
void q3_k_scales(const uint8_t* s, int* out);
int q3_k_quant(const uint8_t* b, int k);
int q2_k_quant(const uint8_t* qs, int k);
// IQ4_XS's 6-bit ls (0..63) of block ib (0..7) of 32: its scale is d · (ls − 32).
int iq4_xs_scale(const uint8_t* b, int ib);

// Exact conversions: the same values as one block of the target type.
void q4_0_to_q8_0(const uint8_t* b, uint8_t* out);    // q − 8 with the same d
void q5_0_to_q8_0(const uint8_t* b, uint8_t* out);    // q − 16 with the same d
void iq4_nl_to_q8_0(const uint8_t* b, uint8_t* out);  // kvalues[q] (−127..113) with the same d
void q3_k_to_q6_k(const uint8_t* b, uint8_t* out);    // scale sc − 32, quant q + 32: 28..35

}  // namespace exspec::gguf::blocks
