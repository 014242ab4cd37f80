// y = x · Wᵀ + b: every weight product of the decoder goes through here, so the CPU fast path is
// one seam and the model code stays device-generic.
//
// On CPU in float32 and bfloat16 the weight is packed once, at load, into oneDNN's blocked layout
// and multiplied by oneDNN's matmul (model/onednn_matmul.h). libtorch's at::linear hands a few rows
// to OpenBLAS's sgemm, which packs the whole weight again on every call; with one to a few dozen
// rows that copy costs more than the product (README, "The forward pass"). Everywhere else
// (float64, the oracle; float16; CUDA; a build without oneDNN) it is at::linear.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>

namespace exspec {

class PackedWeight;

class Linear {
 public:
  Linear() = default;
  // weight [out, in]; bias [out] or undefined. With `pack` and a supported device and dtype the
  // weight is packed and the plain copy released.
  explicit Linear(const at::Tensor& weight, const at::Tensor& bias = {}, bool pack = true);

  at::Tensor operator()(const at::Tensor& x) const;  // x [..., in] -> [..., out]

  int64_t numel() const { return out_ * in_ + (bias_.defined() ? out_ : 0); }
  bool packed() const { return packed_ != nullptr; }

 private:
  at::Tensor weight_, bias_;  // weight_ is undefined once packed: the packed copy is the only one
  int64_t out_ = 0, in_ = 0;
  std::shared_ptr<const PackedWeight> packed_;
};

}  // namespace exspec
