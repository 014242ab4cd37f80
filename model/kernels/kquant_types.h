// GGUF's K-quant block types as the kernels see them (kquant_kernel.h, kquant_groups.h).
#pragma once
#include <cstdint>

namespace exspec::kq {

constexpr int64_t kSuper = 256;  // inputs per super-block
constexpr int64_t kSub = 32;     // inputs per sub-block (and per activation scale)
constexpr uint8_t kQ4_K = 12, kQ6_K = 14;  // ggml's type ids
constexpr int64_t kQ4_KBytes = 144, kQ6_KBytes = 210;

}  // namespace exspec::kq
