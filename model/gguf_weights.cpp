#include "model/gguf_weights.h"

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>

#include "model/checkpoint.h"
#include "model/gguf_config.h"
#include "model/gguf/gguf_file.h"
#include "model/kernels/half_float.h"

namespace exspec::gguf {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool is_float(uint32_t t) {
  return t == uint32_t(TensorType::F32) || t == uint32_t(TensorType::F16) || t == uint32_t(TensorType::BF16);
}

// Q8_0 rows as the float32 values they stand for: q · d, exact (an 8-bit integer times a float16).
at::Tensor dequantise_q8_0(const TensorInfo& t, const std::vector<int64_t>& shape) {
  at::Tensor out = at::empty(shape, at::kFloat);
  float* dst = out.data_ptr<float>();
  const int64_t blocks = t.elements() / 32;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* src = t.data + b * 34;
    uint16_t d16;
    std::memcpy(&d16, src, 2);
    const float d = half_float(d16);
    for (int k = 0; k < 32; ++k) dst[b * 32 + k] = static_cast<float>(static_cast<int8_t>(src[2 + k])) * d;
  }
  return out;
}

// The converter's permutation of llama's q/k rows (per head: [pairs, 2] -> [2, pairs]) undone:
// rows of `t` are grouped by head, each head's D rows read as [D/2, 2] and written as [2, D/2].
at::Tensor unpermute(const at::Tensor& t, int64_t heads) {
  const int64_t rows = t.size(0), D = rows / heads;
  std::vector<int64_t> grouped{heads, D / 2, 2};
  for (int64_t k = 1; k < t.dim(); ++k) grouped.push_back(t.size(k));
  return t.reshape(grouped).transpose(1, 2).reshape(t.sizes()).contiguous();
}

}  // namespace

GgufWeights::GgufWeights(std::shared_ptr<const GgufFile> file, const ModelConfig& c, at::ScalarType dtype,
                         at::Device device)
    : file_(std::move(file)), config_(c), dtype_(dtype), device_(device) {
  const GgufFile& f = *file_;
  for (const auto& [hf, shape] : expected_weights(c)) {
    const std::string name = *gguf_name(hf);
    const TensorInfo* t = f.tensor(name);
    if (!t) throw std::runtime_error(f.path() + ": no tensor \"" + name + "\" (" + hf + ")");
    if (t->shape() != shape)
      throw std::runtime_error(f.path() + ": tensor \"" + name + "\" has shape " + shape_str(t->shape()) +
                               ", the metadata implies " + shape_str(shape));
    if (!is_float(t->type) && t->type != uint32_t(TensorType::Q8_0))
      throw std::runtime_error(f.path() + ": tensor \"" + name + "\" has type " + type_name(t->type) +
                               ", not served (F32, F16, BF16 and Q8_0 are; Q4_K and Q6_K kernels are phase 2 of issue 57)");
  }
  if (dtype != at::kChar) return;
  // int8 serves q, k and v as one product, and gate and up: their blocks are concatenated, so
  // each group must be all Q8_0 (packed as they are) or all float (quantised at load).
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const auto& group : {std::vector<std::string>{"attn_q", "attn_k", "attn_v"}, std::vector<std::string>{"ffn_gate", "ffn_up"}}) {
      const uint32_t first = f.tensor(p + group[0] + ".weight")->type;
      for (const auto& g : group)
        if ((f.tensor(p + g + ".weight")->type == uint32_t(TensorType::Q8_0)) != (first == uint32_t(TensorType::Q8_0)))
          throw std::runtime_error(f.path() + ": " + p + group[0] + " and " + p + g +
                                   " mix Q8_0 with float types: --dtype int8 serves them as one product (not served)");
    }
  }
}

at::Tensor GgufWeights::take(const std::string& hf) const {
  auto name = gguf_name(hf);
  const TensorInfo* t = name ? file_->tensor(*name) : nullptr;
  if (!t) throw std::runtime_error(file_->path() + ": no weight \"" + hf + "\" is expected");
  const std::vector<int64_t> shape = t->shape();
  at::Tensor w;
  if (t->type == uint32_t(TensorType::Q8_0) && dtype_ == at::kChar && shape.size() == 2) {
    // The blocks' bytes, a row of blocks per output: the int8 kernels pack them as they are.
    w = at::from_blob(const_cast<uint8_t*>(t->data), {shape[0], shape[1] / 32 * 34}, at::kByte).clone();
  } else if (t->type == uint32_t(TensorType::Q8_0)) {
    w = dequantise_q8_0(*t, shape);
  } else {
    const at::ScalarType st = t->type == uint32_t(TensorType::F32)   ? at::kFloat
                              : t->type == uint32_t(TensorType::F16) ? at::kHalf
                                                                      : at::kBFloat16;
    w = at::from_blob(const_cast<uint8_t*>(t->data), shape, st).clone();  // nothing of the mapping is kept
  }
  if (int64_t heads = permuted_heads(config_, hf)) w = unpermute(w, heads);
  if (w.scalar_type() == at::kByte) return w;
  // int8 quantises the products from float32; every other dtype takes the weights as served.
  return w.to(device_, dtype_ == at::kChar ? at::kFloat : dtype_);
}

}  // namespace exspec::gguf
