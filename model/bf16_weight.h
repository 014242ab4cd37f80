// The bfloat16 product as tensors: the seam between the decoder's Linear (model/linear.h) and the
// torch-free kernel (model/kernels/bf16_kernel.h), one fixed order of float32 sums per output:
// vdpbf16ps's, on AVX-512 BF16, AVX2+FMA or plain C++ (isa.h's cap). bfloat16 in and out. Like Int8Weight
// (model/int8_matmul.h) it splits the output columns over the calling thread's OpenMP team, so
// each output is computed whole by one thread: the same bits at any thread count.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

#include "model/packed_matrix.h"

namespace exspec {

class Bf16Weight : public PackedMatrix {
 public:
  // weight [out, in] on CPU in bfloat16; null for another device or dtype.
  static std::shared_ptr<const Bf16Weight> pack(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const override;  // x [M, in] bfloat16 -> [M, out] bfloat16
  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] int64 -> the weight's rows [N, in] bfloat16
  int64_t bytes() const override;                            // the packed layout's

  WeightFormat format() const override { return WeightFormat::Bf16; }
  ~Bf16Weight() override;
  struct Impl;

 private:
  explicit Bf16Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
