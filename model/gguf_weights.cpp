#include "model/gguf_weights.h"

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>

#include "model/checkpoint.h"
#include "model/gguf_config.h"
#include "model/gguf/gguf_file.h"
#include "model/kernels/half_float.h"
#include "model/kernels/kquant_kernel.h"

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

// Q4_K/Q6_K blocks as the float32 values they stand for (model/kernels/kquant_kernel.h).
at::Tensor dequantise_kquant(const TensorInfo& t, const std::vector<int64_t>& shape) {
  at::Tensor out = at::empty(shape, at::kFloat);
  const int64_t bb = kq::block_bytes(static_cast<uint8_t>(t.type));
  for (int64_t b = 0; b < t.elements() / kq::kSuper; ++b)
    kq::dequantise_block(static_cast<uint8_t>(t.type), t.data + b * bb, out.data_ptr<float>() + b * kq::kSuper);
  return out;
}

// Q4_K/Q6_K rows for the K-quant kernel, tagged with their type so that q, k and v (or gate and
// up) of different K types can be concatenated as one product: [out, 1, kq::tagged_width(in)].
at::Tensor tagged_kquant(const TensorInfo& t, int64_t out, int64_t in) {
  const int64_t width = kq::tagged_width(in), row = in / kq::kSuper * kq::block_bytes(static_cast<uint8_t>(t.type));
  at::Tensor w = at::zeros({out, 1, width}, at::kByte);
  uint8_t* dst = w.data_ptr<uint8_t>();
  for (int64_t r = 0; r < out; ++r) {
    dst[r * width] = static_cast<uint8_t>(t.type);
    std::memcpy(dst + r * width + 1, t.data + r * row, row);
  }
  return w;
}

// Under int8 a group multiplied as one product takes one kind of weight: float (quantised at
// load), Q8_0 blocks, or K-quant blocks (Q4_K and Q6_K rows may mix).
int kind(uint32_t t) { return t == uint32_t(TensorType::Q8_0) ? 1 : kq::is_kquant(t) ? 2 : 0; }
const char* kind_name(int k) { return k == 1 ? "Q8_0" : k == 2 ? "Q4_K/Q6_K" : "float types"; }

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
    if (!is_float(t->type) && t->type != uint32_t(TensorType::Q8_0) && !kq::is_kquant(t->type))
      throw std::runtime_error(f.path() + ": tensor \"" + name + "\" has type " + type_name(t->type) +
                               ", not served (F32, F16, BF16, Q8_0, Q4_K and Q6_K are)");
  }
  if (dtype != at::kChar) return;
  // int8 serves q, k and v as one product, and gate and up: their rows are concatenated, so each
  // group must be all Q8_0 (packed as they are), all Q4_K/Q6_K, or all float (quantised at load).
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    for (const auto& group : {std::vector<std::string>{"attn_q", "attn_k", "attn_v"}, std::vector<std::string>{"ffn_gate", "ffn_up"}}) {
      const uint32_t first = f.tensor(p + group[0] + ".weight")->type;
      for (const auto& g : group) {
        const uint32_t other = f.tensor(p + g + ".weight")->type;
        if (kind(other) != kind(first))
          throw std::runtime_error(f.path() + ": " + p + group[0] + " and " + p + g + " mix " + kind_name(kind(first)) +
                                   " with " + kind_name(kind(other)) + ": --dtype int8 serves them as one product (not served)");
      }
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
  } else if (kq::is_kquant(t->type) && dtype_ == at::kChar && shape.size() == 2) {
    w = tagged_kquant(*t, shape[0], shape[1]);  // the kernel keeps the blocks as they are
  } else if (kq::is_kquant(t->type)) {
    w = dequantise_kquant(*t, shape);
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
