// The bfloat16 product as tensors: the seam between the decoder's Linear (model/linear.h) and the
// torch-free vdpbf16ps kernel (model/kernels/bf16_kernel.h), one fixed order of float32 sums per
// output. bfloat16 in and out; null where the CPU has no BF16 instructions. Like Int8Weight
// (model/int8_matmul.h) it splits the output columns over the calling thread's OpenMP team, so
// each output is computed whole by one thread: the same bits at any thread count.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

namespace exspec {

class Bf16Weight {
 public:
  // weight [out, in] on CPU in bfloat16; null for another device or dtype, or without BF16
  // instructions (then oneDNN or at::linear, as before).
  static std::shared_ptr<const Bf16Weight> pack(const at::Tensor& weight);

  at::Tensor multiply(const at::Tensor& x) const;  // x [M, in] bfloat16 -> [M, out] bfloat16
  at::Tensor rows(const at::Tensor& ids) const;    // ids [N] int64 -> the weight's rows [N, in] bfloat16
  int64_t bytes() const;                            // the packed layout's

  ~Bf16Weight();
  struct Impl;

 private:
  explicit Bf16Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
