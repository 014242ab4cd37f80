// The float32 product as tensors: the seam between the decoder's Linear (model/linear.h) and the
// torch-free fixed-order kernel (model/kernels/f32_kernel.h): every output one chain of fused
// multiply-adds over the inputs in order, on AVX-512, AVX2+FMA or plain C++ (isa.h's cap). Like
// Bf16Weight it splits the output columns over the calling thread's OpenMP team, so each output
// is computed whole by one thread: the same bits at any thread count, row count or column set.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

#include "model/packed_matrix.h"

namespace exspec {

class F32Weight : public PackedMatrix {
 public:
  // weight [out, in] on CPU in float32; null for another device or dtype.
  static std::shared_ptr<const F32Weight> pack(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const override;  // x [M, in] float32 -> [M, out] float32
  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] int64 -> the weight's rows [N, in]
  int64_t bytes() const override;                            // the packed layout's

  WeightFormat format() const override { return WeightFormat::F32; }
  ~F32Weight() override;
  struct Impl;

 private:
  explicit F32Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
