#include "model/kernels/kquant_groups.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/gguf/ggml_blocks.h"

namespace exspec::kq {
namespace {

using namespace group_layout;
constexpr int64_t kSubs = kSuper / kSub;  // 8

// Q4_K's, and Q5_K's (its nibbles at byte 48, after qh: `quants` is where the nibbles start).
void interleave_q4k(const uint8_t* const* blocks, uint8_t* g, int64_t quants = 16) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + kD + 2 * c, b, 2);
    std::memcpy(g + kDmin + 2 * c, b + 2, 2);
    int sc[kSubs], m[kSubs];
    gguf::blocks::k4_scales(b + 4, sc, m);
    for (int j = 0; j < kSubs; ++j) {
      g[kSc + 8 * j + c] = static_cast<uint8_t>(sc[j]);
      g[kM + 8 * j + c] = static_cast<uint8_t>(m[j]);
    }
    for (int64_t p = 0; p < 4; ++p)
      for (int64_t t = 0; t < 8; ++t) std::memcpy(g + kQ + ((p * 8 + t) * kGroupCols + c) * 4, b + quants + 32 * p + 4 * t, 4);
  }
}

void interleave_q5k(const uint8_t* const* blocks, uint8_t* g) {
  interleave_q4k(blocks, g, 48);
  for (int64_t c = 0; c < kGroupCols; ++c)
    for (int64_t t = 0; t < 8; ++t) std::memcpy(g + kQh5 + (t * kGroupCols + c) * 4, blocks[c] + 16 + 4 * t, 4);
}

void interleave_q6k(const uint8_t* const* blocks, uint8_t* g) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + 2 * c, b + d_offset(kQ6_K), 2);
    for (int64_t i = 0; i < 16; ++i) g[kSc6 + 8 * i + c] = b[192 + i];
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 8; ++t) {
        for (int64_t pp = 0; pp < 2; ++pp)
          std::memcpy(g + kQ6 + (h * 8 + t) * 96 + pp * 32 + c * 4, b + 64 * h + 32 * pp + 4 * t, 4);
        std::memcpy(g + kQ6 + (h * 8 + t) * 96 + 64 + c * 4, b + 128 + 32 * h + 4 * t, 4);
      }
  }
}

void gather_q6k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b + d_offset(kQ6_K), g + 2 * c, 2);
  for (int64_t i = 0; i < 16; ++i) b[192 + i] = g[kSc6 + 8 * i + c];
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 8; ++t) {
      for (int64_t pp = 0; pp < 2; ++pp)
        std::memcpy(b + 64 * h + 32 * pp + 4 * t, g + kQ6 + (h * 8 + t) * 96 + pp * 32 + c * 4, 4);
      std::memcpy(b + 128 + 32 * h + 4 * t, g + kQ6 + (h * 8 + t) * 96 + 64 + c * 4, 4);
    }
}

void gather_q4k(const uint8_t* g, int64_t c, uint8_t* b, int64_t quants = 16) {
  std::memcpy(b, g + kD + 2 * c, 2);
  std::memcpy(b + 2, g + kDmin + 2 * c, 2);
  uint8_t sc[kSubs], m[kSubs];
  for (int j = 0; j < kSubs; ++j) sc[j] = g[kSc + 8 * j + c], m[j] = g[kM + 8 * j + c];
  uint8_t* s = b + 4;
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t t = 0; t < 8; ++t) std::memcpy(b + quants + 32 * p + 4 * t, g + kQ + ((p * 8 + t) * kGroupCols + c) * 4, 4);
}

void gather_q5k(const uint8_t* g, int64_t c, uint8_t* b) {
  gather_q4k(g, c, b, 48);
  for (int64_t t = 0; t < 8; ++t) std::memcpy(b + 16 + 4 * t, g + kQh5 + (t * kGroupCols + c) * 4, 4);
}

// Q3_K's 12 bytes of scales back from its 16 six-bit values (ggml_blocks' q3_k_scales, inverted:
// every bit of the 12 is one scale's).
void q3k_pack_scales(const int* v, uint8_t* s) {
  for (int i = 0; i < 8; ++i) s[i] = static_cast<uint8_t>((v[i] & 0xF) | ((v[i + 8] & 0xF) << 4));
  for (int r = 0; r < 4; ++r) {
    s[8 + r] = 0;
    for (int q = 0; q < 4; ++q) s[8 + r] = static_cast<uint8_t>(s[8 + r] | (((v[4 * q + r] >> 4) & 3) << (2 * q)));
  }
}

// A 2-bit run (Q2_K's and Q3_K's qs: two runs of 32 bytes) between a block and a group block.
void runs_in(const uint8_t* qs, uint8_t* g, int64_t c) {
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t t = 0; t < 8; ++t) std::memcpy(g + ((n * 8 + t) * kGroupCols + c) * 4, qs + 32 * n + 4 * t, 4);
}
void runs_out(const uint8_t* g, int64_t c, uint8_t* qs) {
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t t = 0; t < 8; ++t) std::memcpy(qs + 32 * n + 4 * t, g + ((n * 8 + t) * kGroupCols + c) * 4, 4);
}

void interleave_q3k(const uint8_t* const* blocks, uint8_t* g) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + 2 * c, b + d_offset(kQ3_K), 2);
    int8_t sc[16];
    q3k_signed_scales(b, sc);
    for (int i = 0; i < 16; ++i) g[kSc3 + 8 * i + c] = static_cast<uint8_t>(sc[i]);
    runs_in(b + 32, g + kQs3, c);
    for (int64_t t = 0; t < 8; ++t) std::memcpy(g + kHm3 + (t * kGroupCols + c) * 4, b + 4 * t, 4);
  }
}

void gather_q3k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b + d_offset(kQ3_K), g + 2 * c, 2);
  int sc[16];
  for (int i = 0; i < 16; ++i) sc[i] = static_cast<int8_t>(g[kSc3 + 8 * i + c]) + 32;
  q3k_pack_scales(sc, b + 96);
  runs_out(g + kQs3, c, b + 32);
  for (int64_t t = 0; t < 8; ++t) std::memcpy(b + 4 * t, g + kHm3 + (t * kGroupCols + c) * 4, 4);
}

void interleave_q2k(const uint8_t* const* blocks, uint8_t* g) {
  for (int64_t c = 0; c < kGroupCols; ++c) {
    const uint8_t* b = blocks[c];
    std::memcpy(g + kD + 2 * c, b + d_offset(kQ2_K), 2);
    std::memcpy(g + kDmin + 2 * c, b + dmin_offset(kQ2_K), 2);
    for (int i = 0; i < 16; ++i) g[kSc2 + 8 * i + c] = b[i];
    runs_in(b + 16, g + kQs2, c);
  }
}

void gather_q2k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b + d_offset(kQ2_K), g + kD + 2 * c, 2);
  std::memcpy(b + dmin_offset(kQ2_K), g + kDmin + 2 * c, 2);
  for (int i = 0; i < 16; ++i) b[i] = g[kSc2 + 8 * i + c];
  runs_out(g + kQs2, c, b + 16);
}

}  // namespace

int64_t group_block_bytes(uint8_t type) {
  switch (type) {
    case kQ2_K: return kQ2Bytes;
    case kQ3_K: return kQ3Bytes;
    case kQ4_K: return kQ4Bytes;
    case kQ5_K: return kQ5Bytes;
    case kQ6_K: return kQ6Bytes;
  }
  return 0;
}

void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block) {
  switch (type) {
    case kQ2_K: return interleave_q2k(blocks, group_block);
    case kQ3_K: return interleave_q3k(blocks, group_block);
    case kQ4_K: return interleave_q4k(blocks, group_block);
    case kQ5_K: return interleave_q5k(blocks, group_block);
    case kQ6_K: return interleave_q6k(blocks, group_block);
  }
  throw std::invalid_argument("kquant groups: type id " + std::to_string(type) + " has no group layout");
}

void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block) {
  switch (type) {
    case kQ2_K: return gather_q2k(group_block, c, block);
    case kQ3_K: return gather_q3k(group_block, c, block);
    case kQ4_K: return gather_q4k(group_block, c, block);
    case kQ5_K: return gather_q5k(group_block, c, block);
    case kQ6_K: return gather_q6k(group_block, c, block);
  }
  throw std::invalid_argument("kquant groups: type id " + std::to_string(type) + " has no group layout");
}

}  // namespace exspec::kq
