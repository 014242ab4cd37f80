#include "model/linear.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>

#include <stdexcept>

#include "model/bf16_weight.h"
#include "model/f32_weight.h"
#include "model/gguf/ggml_types.h"
#include "model/int8_matmul.h"
#include "model/kquant_matmul.h"
#include "model/onednn_matmul.h"
#include "model/q4_matmul.h"

namespace exspec {

namespace {

// A GGUF file's blocks, tagged with their ggml type (only GGUF's loader under int8 hands these
// on): the kernel the type's row names (model/gguf/ggml_types.h).
std::shared_ptr<const PackedMatrix> pack_tagged(const at::Tensor& weight, WeightPath path) {
  const uint32_t id = weight.size(0) > 0 && weight.size(2) > 0 ? weight.select(1, 0).select(1, 0)[0].item<uint8_t>() : 0;
  const gguf::WeightType* type = gguf::weight_type(id);
  TORCH_CHECK(path == WeightPath::Int8, "Linear: ", gguf::type_name(id), " blocks are served under int8 only");
  switch (type ? type->int8 : gguf::Int8Path::Refused) {
    case gguf::Int8Path::KQuant: return KQuantWeight::from_tagged(weight);
    case gguf::Int8Path::Q4: return Q4Weight::from_tagged(weight);
    case gguf::Int8Path::Refused:
    case gguf::Int8Path::Float:
    case gguf::Int8Path::FromValues:
    case gguf::Int8Path::Q8_0: break;  // never tagged: Q8_0 comes as plain rows of blocks
  }
  throw std::invalid_argument("Linear: tagged rows of type " + gguf::type_name(id) + " have no kernel of their own");
}

std::shared_ptr<const PackedMatrix> pack(const at::Tensor& weight, WeightPath path) {
  if (KQuantWeight::is_tagged(weight)) return pack_tagged(weight, path);
  switch (path) {
    case WeightPath::Plain: return nullptr;
    case WeightPath::Int8: return Int8Weight::quantise(weight);
    case WeightPath::OneDnn: return PackedWeight::pack(weight);
    case WeightPath::Packed:
      if (auto f = F32Weight::pack(weight)) return f;
      return Bf16Weight::pack(weight);
  }
  throw std::invalid_argument("Linear: unknown weight path");
}

}  // namespace

Linear::Linear(const at::Tensor& weight, const at::Tensor& bias, WeightPath path)
    : weight_(weight), bias_(bias), out_(weight.size(0)), in_(weight.size(1)) {
  packed_ = pack(weight, path);
  if (!packed_) return;
  weight_ = at::Tensor();
  int8_ = dynamic_cast<const Int8Matrix*>(packed_.get());  // once: a layer of experts asks on every call
  // A GGUF block weight comes as its blocks' bytes: the inputs are what its rows stand for.
  if (int8_) in_ = int8_->in_features();
  if (int8_ && bias_.defined()) bias_ = bias_.to(at::kFloat);  // the product's dtype
}

bool Linear::int8() const { return packed_ && int8_; }
const Int8Matrix* Linear::int8_matrix() const { return packed_ && !bias_.defined() ? int8_ : nullptr; }
bool Linear::kquant() const { return packed_ && packed_->format() == WeightFormat::KQuant; }

int64_t Linear::bytes() const {
  auto held = [](const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.storage().nbytes()) : 0; };
  return (packed_ ? packed_->bytes() : 0) + held(weight_) + held(bias_);
}

at::Tensor Linear::rows(const at::Tensor& ids) const {
  return packed_ ? packed_->rows(ids) : at::embedding(weight_, ids);
}

at::Tensor Linear::columns(const at::Tensor& x, const at::Tensor& cols) const {
  if (const Int8Matrix* q = int8_matrix()) return q->columns(x, cols);
  throw std::invalid_argument("Linear::columns: an int8 weight (Q8_0, 4-bit or K-quant blocks) without a bias, only");
}

at::Tensor Linear::operator()(const at::Tensor& x) const {
  if (!packed_) return at::linear(x, weight_, bias_);
  RECORD_FUNCTION("exspec::packed_linear", std::vector<c10::IValue>());
  // The decoder passes rows [B*T, in]: those need no reshaping around the product.
  const at::Tensor rows = x.dim() == 2 ? x : x.reshape({-1, in_});
  at::Tensor y = packed_->multiply(rows);
  if (bias_.defined()) y.add_(bias_);
  if (x.dim() == 2) return y;
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = out_;
  return y.view(shape);
}

}  // namespace exspec
