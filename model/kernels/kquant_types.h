// GGUF's K-quant block types as the kernels see them (kquant_kernel.h, kquant_groups.h): their
// ids and bytes are the table's (model/gguf/ggml_types.h).
#pragma once
#include <cstdint>

#include "model/gguf/ggml_types.h"

namespace exspec::kq {

constexpr int64_t kSuper = 256;  // inputs per super-block
constexpr int64_t kSub = 32;     // inputs per sub-block (and per activation scale)
constexpr uint8_t kQ4_K = static_cast<uint8_t>(gguf::TensorType::Q4_K), kQ5_K = static_cast<uint8_t>(gguf::TensorType::Q5_K),
                  kQ6_K = static_cast<uint8_t>(gguf::TensorType::Q6_K);
constexpr int64_t kQ4_KBytes = gguf::row(gguf::TensorType::Q4_K).block_bytes;
constexpr int64_t kQ5_KBytes = gguf::row(gguf::TensorType::Q5_K).block_bytes;
constexpr int64_t kQ6_KBytes = gguf::row(gguf::TensorType::Q6_K).block_bytes;

}  // namespace exspec::kq
