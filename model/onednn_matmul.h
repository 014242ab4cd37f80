// Products on oneDNN (the library libtorch already links), for the benchmarks' comparison only:
// oneDNN picks its kernel, blocking and order of sums by the row count and the instruction set,
// so a row's result moved with its batch (on AVX2 in float32 too, issue 69). Serving runs on the
// fixed-order kernels (model/f32_weight.h, model/bf16_weight.h).
// - PackedWeight: a weight packed once into oneDNN's blocked layout (brgemm kernels), Linear's
//   WeightPath::OneDnn (decoder_bench's path "onednn").
// Built when oneDNN's headers are found (EXSPEC_WITH_ONEDNN); without them pack() answers null.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "model/packed_matrix.h"

namespace exspec {

class PackedWeight : public PackedMatrix {
 public:
  // weight [out, in] on CPU in float32 or bfloat16; null for any other device or dtype, or when
  // this build or this CPU cannot run the packed product (see packed_matmul_support()).
  static std::shared_ptr<const PackedWeight> pack(const at::Tensor& weight);

  // x [M, in] in the weight's dtype -> [M, out] in that dtype, accumulated in float32.
  at::Tensor multiply(const at::Tensor& x) const override;
  int64_t bytes() const override;  // the packed layout's, padding included
  // Rows ids [N] (int64) of the weight, [N, in], copied out of the packed layout: a tied
  // embedding served from its head's packed copy, so that the model holds it once.
  at::Tensor rows(const at::Tensor& ids) const override;

  WeightFormat format() const override { return WeightFormat::OneDnn; }
  ~PackedWeight() override;
  struct Impl;

 private:
  explicit PackedWeight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The packed products' primitives, one per row count and weight shape: those held now (at most
// `capacity`, the most recently used), and the lookups that found one or made one.
struct PackedPlanStats {
  int64_t held = 0, capacity = 0, hits = 0, misses = 0;
};
PackedPlanStats packed_plan_stats();

// One line for logs: whether packed products run here, and on which instruction set (for
// example "oneDNN 2.6.3, avx512_core_bf16"), or why not.
std::string packed_matmul_support();

}  // namespace exspec
