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
    std::memcpy(g + 2 * c, b + 208, 2);
    for (int64_t i = 0; i < 16; ++i) g[kSc6 + 8 * i + c] = b[192 + i];
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 8; ++t) {
        for (int64_t pp = 0; pp < 2; ++pp)
          std::memcpy(g + kQl6 + (((h * 2 + pp) * 8 + t) * kGroupCols + c) * 4, b + 64 * h + 32 * pp + 4 * t, 4);
        std::memcpy(g + kQh6 + ((h * 8 + t) * kGroupCols + c) * 4, b + 128 + 32 * h + 4 * t, 4);
      }
  }
}

void gather_q6k(const uint8_t* g, int64_t c, uint8_t* b) {
  std::memcpy(b + 208, g + 2 * c, 2);
  for (int64_t i = 0; i < 16; ++i) b[192 + i] = g[kSc6 + 8 * i + c];
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 8; ++t) {
      for (int64_t pp = 0; pp < 2; ++pp)
        std::memcpy(b + 64 * h + 32 * pp + 4 * t, g + kQl6 + (((h * 2 + pp) * 8 + t) * kGroupCols + c) * 4, 4);
      std::memcpy(b + 128 + 32 * h + 4 * t, g + kQh6 + ((h * 8 + t) * kGroupCols + c) * 4, 4);
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

}  // namespace

int64_t group_block_bytes(uint8_t type) {
  return type == kQ4_K ? kQ4Bytes : type == kQ5_K ? kQ5Bytes : type == kQ6_K ? kQ6Bytes : 0;
}

void interleave(uint8_t type, const uint8_t* const* blocks, uint8_t* group_block) {
  switch (type) {
    case kQ4_K: return interleave_q4k(blocks, group_block);
    case kQ5_K: return interleave_q5k(blocks, group_block);
    case kQ6_K: return interleave_q6k(blocks, group_block);
  }
  throw std::invalid_argument("kquant groups: type id " + std::to_string(type) + " has no group layout");
}

void gather(uint8_t type, const uint8_t* group_block, int64_t c, uint8_t* block) {
  switch (type) {
    case kQ4_K: return gather_q4k(group_block, c, block);
    case kQ5_K: return gather_q5k(group_block, c, block);
    case kQ6_K: return gather_q6k(group_block, c, block);
  }
  throw std::invalid_argument("kquant groups: type id " + std::to_string(type) + " has no group layout");
}

}  // namespace exspec::kq
