#include "model/linear.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <stdexcept>

#include "model/bf16_weight.h"
#include "model/int8_matmul.h"
#include "model/kquant_matmul.h"
#include "model/onednn_matmul.h"

namespace exspec {

Linear::Linear(const at::Tensor& weight, const at::Tensor& bias, WeightPath path)
    : weight_(weight), bias_(bias), out_(weight.size(0)), in_(weight.size(1)) {
  if (KQuantWeight::is_tagged(weight)) {  // only GGUF's loader under int8 hands these on
    TORCH_CHECK(path == WeightPath::Int8, "Linear: Q4_K/Q6_K blocks are served under int8 only");
    kquant_ = KQuantWeight::from_tagged(weight);
    in_ = kquant_->in_features();
  } else if (path == WeightPath::Int8) {
    int8_ = Int8Weight::quantise(weight);
  }
  if (int8_) in_ = int8_->in_features();  // a Q8_0 weight comes as its blocks' bytes
  if (path == WeightPath::Packed) bf16_ = Bf16Weight::pack(weight);
  if ((path == WeightPath::Packed && !bf16_) || path == WeightPath::OneDnn) packed_ = PackedWeight::pack(weight);
  if (packed()) weight_ = at::Tensor();
  if ((int8_ || kquant_) && bias_.defined()) bias_ = bias_.to(at::kFloat);  // the product's dtype
}

int64_t Linear::bytes() const {
  auto held = [](const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.storage().nbytes()) : 0; };
  const int64_t packed = packed_  ? packed_->bytes()
                         : int8_  ? int8_->bytes()
                         : kquant_ ? kquant_->bytes()
                         : bf16_  ? bf16_->bytes()
                                  : 0;
  return packed + held(weight_) + held(bias_);
}

at::Tensor Linear::rows(const at::Tensor& ids) const {
  if (packed_) return packed_->rows(ids);
  if (int8_) return int8_->rows(ids);
  if (kquant_) return kquant_->rows(ids);
  if (bf16_) return bf16_->rows(ids);
  return at::embedding(weight_, ids);
}

at::Tensor Linear::columns(const at::Tensor& x, const at::Tensor& cols) const {
  if (!int8_ || bias_.defined()) throw std::invalid_argument("Linear::columns: an int8 (Q8_0) weight without a bias only");
  return int8_->columns(x, cols);
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  if (!packed()) return at::linear(x, weight_, bias_);
  RECORD_FUNCTION("exspec::packed_linear", std::vector<c10::IValue>());
  // The decoder passes rows [B*T, in]: those need no reshaping around the product.
  const at::Tensor rows = x.dim() == 2 ? x : x.reshape({-1, in_});
  at::Tensor y = int8_     ? int8_->multiply(rows)
                 : kquant_ ? kquant_->multiply(rows)
                 : bf16_   ? bf16_->multiply(rows)
                           : packed_->multiply(rows);
  if (bias_.defined()) y.add_(bias_);
  if (x.dim() == 2) return y;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_;
  return y.view(shape);
}

}  // namespace exspec
