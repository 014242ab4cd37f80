// GGUF's K-quant weights (Q2_K to Q6_K) as tensors: the seam between the decoder's Linear (model/linear.h)
// and the torch-free kernel (model/kernels/kquant_kernel.h). The blocks keep their contents (rows
// of one type interleaved 8 at a time, model/kernels/kquant_groups.h); each activation row is quantised with its own block scales (as the int8 kernels do), so
// nothing of a row depends on another. float32 in and out; the output columns are split over the
// calling thread's OpenMP team, each output computed whole by one thread.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

#include "model/int8_matmul.h"

namespace exspec {

class KQuantWeight : public Int8Matrix {
 public:
  // weight: uint8 [out, 1, kq::tagged_width(in)] (model/gguf_weights.h hands K-quant tensors on so);
  // null for anything else.
  static std::shared_ptr<const KQuantWeight> from_tagged(const at::Tensor& weight);
  static bool is_tagged(const at::Tensor& weight);

  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] -> the rows' values [N, in] float32
  at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const override;

  int64_t out_features() const override;
  int64_t in_features() const override;
  int64_t units() const override;  // tiles of 16 output columns
  void multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const override;
  int64_t bytes() const override;  // the blocks as stored

  WeightFormat format() const override { return WeightFormat::KQuant; }
  ~KQuantWeight() override;
  struct Impl;

 private:
  explicit KQuantWeight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
