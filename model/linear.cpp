#include "model/linear.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include "model/onednn_matmul.h"

namespace exspec {

Linear::Linear(const at::Tensor& weight, const at::Tensor& bias, bool pack)
    : weight_(weight), bias_(bias), out_(weight.size(0)), in_(weight.size(1)) {
  if (pack) packed_ = PackedWeight::pack(weight);
  if (packed_) weight_ = at::Tensor();
}

int64_t Linear::bytes() const {
  auto held = [](const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.storage().nbytes()) : 0; };
  return (packed_ ? packed_->bytes() : held(weight_)) + held(bias_);
}

at::Tensor Linear::rows(const at::Tensor& ids) const {
  return packed_ ? packed_->rows(ids) : at::embedding(weight_, ids);
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  if (!packed_) return at::linear(x, weight_, bias_);
  RECORD_FUNCTION("exspec::packed_linear", std::vector<c10::IValue>());
  // The decoder passes rows [B*T, in]: those need no reshaping around the product.
  at::Tensor y = packed_->multiply(x.dim() == 2 ? x : x.reshape({-1, in_}));
  if (bias_.defined()) y.add_(bias_);
  if (x.dim() == 2) return y;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_;
  return y.view(shape);
}

}  // namespace exspec
