// What every packed weight format gives Linear (model/linear.h): its product, its rows and its
// bytes. Linear holds one weight of some format through this, so a new format is a new class
// here and no new branch there.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace exspec {

enum class WeightFormat {
  F32,     // float32, fixed order (model/f32_weight.h)
  Bf16,    // bfloat16, fixed order (model/bf16_weight.h)
  Q8_0,    // int8 blocks of 32 (model/int8_matmul.h)
  KQuant,  // a GGUF file's K-quant (Q2_K to Q6_K) blocks (model/kquant_matmul.h)
  Q4,      // a GGUF file's 4-bit blocks of 32 (Q4_0, IQ4_NL) (model/q4_matmul.h)
  OneDnn,  // oneDNN's blocked layout: the benchmarks' comparison only (model/onednn_matmul.h)
};

class PackedMatrix {
 public:
  virtual ~PackedMatrix() = default;
  virtual WeightFormat format() const = 0;
  // x [M, in] -> [M, out], in the format's activation dtype (float32 for the integer formats).
  virtual at::Tensor multiply(const at::Tensor& x) const = 0;
  // The weight's rows ids [N] -> [N, in], the values it stands for: a head tied to the embedding
  // serves the embedding's lookups, and the model holds that matrix once.
  virtual at::Tensor rows(const at::Tensor& ids) const = 0;
  virtual int64_t bytes() const = 0;  // as held, the layout's padding included
};

}  // namespace exspec
