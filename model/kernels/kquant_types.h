// GGUF's K-quant block types as the kernels see them (kquant_kernel.h, kquant_groups.h): their
// ids and bytes are the table's (model/gguf/ggml_types.h).
#pragma once
#include <cstdint>

#include "model/gguf/ggml_types.h"

namespace exspec::kq {

constexpr int64_t kSuper = 256;  // inputs per super-block
constexpr int64_t kSub = 32;     // inputs per sub-block (and per activation scale)
constexpr uint8_t kQ2_K = static_cast<uint8_t>(gguf::TensorType::Q2_K), kQ3_K = static_cast<uint8_t>(gguf::TensorType::Q3_K),
                  kQ4_K = static_cast<uint8_t>(gguf::TensorType::Q4_K), kQ5_K = static_cast<uint8_t>(gguf::TensorType::Q5_K),
                  kQ6_K = static_cast<uint8_t>(gguf::TensorType::Q6_K);
constexpr int64_t kQ2_KBytes = gguf::row(gguf::TensorType::Q2_K).block_bytes;
constexpr int64_t kQ3_KBytes = gguf::row(gguf::TensorType::Q3_K).block_bytes;
constexpr int64_t kQ4_KBytes = gguf::row(gguf::TensorType::Q4_K).block_bytes;
constexpr int64_t kQ5_KBytes = gguf::row(gguf::TensorType::Q5_K).block_bytes;
constexpr int64_t kQ6_KBytes = gguf::row(gguf::TensorType::Q6_K).block_bytes;
constexpr int64_t kMaxBlockBytes = kQ6_KBytes;  // the largest: a tagged row's room per super-block

// Where each type's float16 scales are in its block (ggml-common.h); dmin < 0: none.
constexpr int64_t d_offset(uint8_t type) { return type == kQ2_K ? 80 : type == kQ3_K ? 108 : type == kQ6_K ? 208 : 0; }
constexpr int64_t dmin_offset(uint8_t type) { return type == kQ2_K ? 82 : type == kQ4_K || type == kQ5_K ? 2 : -1; }

// Q3_K's 16 scales of a block as the kernel multiplies them, sc − 32 (−32..31).
inline void q3k_signed_scales(const uint8_t* block, int8_t* sc) {
  int v[16];
  gguf::blocks::q3_k_scales(block + 96, v);
  for (int i = 0; i < 16; ++i) sc[i] = static_cast<int8_t>(v[i] - 32);
}

}  // namespace exspec::kq
