// GGUF's 4- and 5-bit types (Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS) as tensors: the seam between the decoder's Linear
// (model/linear.h) and the torch-free packed 4-bit kernel (model/kernels/q4_kernel.h), whose
// products are exact integer block sums in one fixed float order (for Q4_0, Q5_0 and IQ4_NL the
// Q8_0 kernel's on the blocks' exact conversion, bit for bit), read at the file's size. float32 in and out; each activation row is quantised alone, and the
// output columns are split over the calling thread's OpenMP team, each computed whole by one
// thread.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

#include "model/int8_matmul.h"

namespace exspec {

class Q4Weight : public Int8Matrix {
 public:
  // weight: uint8 [out, 1, 1 + in / block * block bytes], tagged rows as GGUF's loader hands them on
  // (model/gguf_weights.h): each row its ggml type id, then its blocks. Throws at rows of
  // different types or of a type whose int8 path is not Int8Path::Q4 (model/gguf/ggml_types.h).
  static std::shared_ptr<const Q4Weight> from_tagged(const at::Tensor& weight);

  at::Tensor rows(const at::Tensor& ids) const override;    // ids [N] -> the rows' values [N, in] float32
  // Some outputs of each row, the same bits as multiply's: Int8Weight::columns (a draft head's
  // candidates, model/screened_head.h).
  at::Tensor columns(const at::Tensor& x, const at::Tensor& cols) const override;

  int64_t out_features() const override;
  int64_t in_features() const override;
  int64_t units() const override;  // groups of q4::kGroup tiles
  void multiply_units(const q8::Rows& x, float* y, int64_t ldy, int64_t u0, int64_t u1) const override;
  int64_t bytes() const override;  // nibbles and scales as stored

  WeightFormat format() const override { return WeightFormat::Q4; }
  ~Q4Weight() override;
  struct Impl;

 private:
  explicit Q4Weight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exspec
