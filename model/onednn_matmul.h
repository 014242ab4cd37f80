// The CPU-only matrix products, on oneDNN (the library libtorch already links): the one seam
// for CPU tricks, so the decoder itself stays device-generic.
// - PackedWeight: a weight packed once into oneDNN's blocked layout (brgemm kernels); a product
//   reads the weight exactly once and copies nothing else of it, at any row count. Used by
//   model/linear.cpp.
// - batched_matmul: attention's small batched products, one call for all heads and rows;
//   libtorch 1.13's CPU bmm issues one BLAS call per head and row. Used by model/attention.cpp.
// Built when oneDNN's headers are found (EXSPEC_WITH_ONEDNN); without them both answer "not
// here" and the callers stay on libtorch.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

namespace exspec {

class PackedWeight {
 public:
  // weight [out, in] on CPU in float32 or bfloat16; null for any other device or dtype, or when
  // this build or this CPU cannot run the packed product (see packed_matmul_support()).
  static std::shared_ptr<const PackedWeight> pack(const at::Tensor& weight);

  // x [M, in] in the weight's dtype -> [M, out] in that dtype, accumulated in float32.
  at::Tensor multiply(const at::Tensor& x) const;
  int64_t bytes() const;  // the packed layout's, padding included
  // Rows ids [N] (int64) of the weight, [N, in], copied out of the packed layout: a tied
  // embedding served from its head's packed copy, so that the model holds it once.
  at::Tensor rows(const at::Tensor& ids) const;

  ~PackedWeight();
  struct Impl;

 private:
  explicit PackedWeight(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// out = a · b for a [X, M, K] and b [X, K, N] (any strides with unit stride in one of the last
// two dims, e.g. a transposed view of the key cache), on CPU in float32, or bfloat16 where the
// CPU has BF16 instructions. Returns an undefined tensor where it does not apply (another dtype
// or device, this build without oneDNN): the caller then uses at::matmul.
at::Tensor batched_matmul(const at::Tensor& a, const at::Tensor& b);

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
