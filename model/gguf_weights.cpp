#include "model/gguf_weights.h"

#include <ATen/ATen.h>

#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>

#include "model/checkpoint.h"
#include "model/gguf_config.h"
#include "model/gguf/gguf_file.h"
#include "model/kernels/kquant_kernel.h"
#include "model/layer_weights.h"

namespace exspec::gguf {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The rows' blocks as the kernel takes them, [rows, bytes a row]: `t`'s own (into is wt), or
// converted exactly into its packed type's. One copy: nothing of the mapping is kept.
at::Tensor packed_blocks(const TensorInfo& t, const WeightType& wt, const WeightType& into, int64_t rows) {
  const int64_t n = t.elements() / wt.block;
  at::Tensor out = at::empty({rows, n / rows * into.block_bytes}, at::kByte);
  uint8_t* dst = out.data_ptr<uint8_t>();
  const bool convert = into.id != wt.id;
  if (convert && (!wt.convert || wt.packed_as != into.id)) throw std::logic_error(std::string("gguf: no conversion of ") + wt.name + " into " + into.name);
  if (!convert) std::memcpy(dst, t.data, static_cast<size_t>(n * wt.block_bytes));
  for (int64_t b = 0; convert && b < n; ++b) wt.convert(t.data + b * wt.block_bytes, dst + b * into.block_bytes);
  return out;
}

// The float32 values a quantised tensor stands for (ggml_types.h: exactly ggml's).
at::Tensor dequantised(const TensorInfo& t, const WeightType& wt, const std::vector<int64_t>& shape) {
  at::Tensor out = at::empty(shape, at::kFloat);
  dequantise(wt, t.data, t.elements() / wt.block, out.data_ptr<float>());
  return out;
}

// Rows for a kernel of their own (Linear reads the tag: model/linear.cpp), each tagged with its
// type so that q, k and v (or gate and up) can be concatenated as one product and still say
// what they are: [out, 1, width], the type id, the row's blocks, zeros. K-quant rows are all
// kq::tagged_width wide, so that rows of different K types concatenate.
at::Tensor tagged(const at::Tensor& blocks, TensorType type, int64_t width) {
  const int64_t out = blocks.size(0), row = blocks.size(1);
  at::Tensor w = at::zeros({out, 1, width}, at::kByte);
  w.select(2, 0).fill_(static_cast<uint8_t>(type));
  w.view({out, width}).narrow(1, 1, row).copy_(blocks);
  return w;
}

// Under int8 a group multiplied as one product takes one path. Where its members' types differ,
// each takes this one and they must agree: Q8_0 blocks (a 4-bit type's converted exactly: the
// same products; its own kernel holds one table of values a weight), K-quant blocks (Q4_K and
// Q6_K rows may mix), or values quantised at load (float types and the rest). A 4-bit type with
// no Q8_0 form (IQ4_XS, Q4_1, Q5_1) agrees with no other type: beside one, the group takes its
// values.
Int8Path mixed_path(uint32_t t) {
  switch (const Int8Path p = weight_type(t)->int8) {
    case Int8Path::Q4: return weight_type(t)->convert ? Int8Path::Q8_0 : Int8Path::FromValues;
    case Int8Path::Q8_0:
    case Int8Path::KQuant: return p;
    case Int8Path::Float:
    case Int8Path::FromValues: return Int8Path::FromValues;
    case Int8Path::Refused: break;
  }
  throw std::logic_error("gguf: a group member of type " + type_name(t) + " has no int8 path");
}

// Whether a group of types `a` and `b` is one product on one path without changing either: the
// same type, or types whose mixed paths agree, none of them blocks kept only on a kernel of their
// own (a 4-bit type with no Q8_0 form).
bool group_agrees(uint32_t a, uint32_t b) {
  auto own_kernel_only = [](uint32_t t) { return weight_type(t)->int8 == Int8Path::Q4 && !weight_type(t)->convert; };
  if (a == b) return true;
  return mixed_path(a) == mixed_path(b) && !own_kernel_only(a) && !own_kernel_only(b);
}

// "blk.3.attn_q.weight" -> "blk.3.attn_q": a tensor as the group message names it.
std::string stem(const std::string& name) { return name.substr(0, name.rfind('.')); }

// The converter's permutation of llama's q/k rows (per head: [pairs, 2] -> [2, pairs]) undone:
// rows of `t` are grouped by head, each head's D rows read as [D/2, 2] and written as [2, D/2].
at::Tensor unpermute(const at::Tensor& t, int64_t heads) {
  const int64_t rows = t.size(0), D = rows / heads;
  std::vector<int64_t> grouped{heads, D / 2, 2};
  for (int64_t k = 1; k < t.dim(); ++k) grouped.push_back(t.size(k));
  return t.reshape(grouped).transpose(1, 2).reshape(t.sizes()).contiguous();
}

// Under int8, a matrix's blocks as its path's kernel takes them (model/linear.cpp): Q8_0 blocks as
// rows of bytes, the others tagged with their type; undefined for a path served from values.
at::Tensor int8_blocks(const TensorInfo& t, const WeightType& wt, bool to_q8_0) {
  const int64_t rows = t.shape()[0], in = t.shape()[1];
  switch (wt.int8) {
    case Int8Path::Q8_0: return packed_blocks(t, wt, row(TensorType::Q8_0), rows);
    case Int8Path::Q4:
      if (to_q8_0) return packed_blocks(t, wt, row(TensorType::Q8_0), rows);  // beside Q8_0 blocks in its group
      return tagged(packed_blocks(t, wt, wt, rows), wt.id, 1 + in / wt.block * wt.block_bytes);
    case Int8Path::KQuant: return tagged(packed_blocks(t, wt, row(wt.packed_as), rows), wt.packed_as, kq::tagged_width(in));
    case Int8Path::Float:
    case Int8Path::FromValues: return {};
    case Int8Path::Refused: break;
  }
  throw std::logic_error(std::string("gguf: type ") + wt.name + " has no int8 path");
}

// Expert e's [rows, cols] of a 3-D tensor of all a layer's experts ([experts, rows, cols]: each
// expert's rows whole blocks, one after another).
TensorInfo expert_view(const TensorInfo& t, int64_t e) {
  const int64_t experts = t.shape()[0];
  TensorInfo one = t;
  one.dims.pop_back();
  one.bytes = t.bytes / static_cast<uint64_t>(experts);
  one.data = t.data + static_cast<uint64_t>(e) * one.bytes;
  return one;
}

// Expert weights are checked as their 3-D tensor: each expert's shape after the expert count.
std::vector<int64_t> file_shape(const ModelConfig& c, const std::string& hf, std::vector<int64_t> shape) {
  if (expert_of(hf) >= 0) shape.insert(shape.begin(), c.experts.num_experts);
  return shape;
}

}  // namespace

GgufWeights::GgufWeights(std::shared_ptr<const GgufFile> file, const ModelConfig& c, at::ScalarType dtype,
                         at::Device device)
    : file_(std::move(file)), config_(c), dtype_(dtype), device_(device) {
  const GgufFile& f = *file_;
  for (const auto& [hf, one] : expected_weights(c)) {
    const std::string name = *gguf_name(c.arch, hf);
    const TensorInfo* t = f.tensor(name);
    if (!t) throw std::runtime_error(f.path() + ": no tensor \"" + name + "\" (" + hf + ")");
    const std::vector<int64_t> shape = file_shape(c, hf, one);
    if (t->shape() != shape)
      throw std::runtime_error(f.path() + ": tensor \"" + name + "\" has shape " + shape_str(t->shape()) +
                               ", the metadata implies " + shape_str(shape));
    const WeightType* wt = weight_type(t->type);
    if (!wt || !wt->served())
      throw std::runtime_error(f.path() + ": tensor \"" + name + "\" has type " + type_name(t->type) + ", not served (" +
                               served_type_names() + " are)");
  }
  if (dtype != at::kChar) return;
  // What int8 does with a type other than its own blocks is said once at start-up.
  std::map<std::string, int64_t> changed;
  for (const auto& t : f.tensors())
    if (const WeightType* wt = weight_type(t.type); wt && wt->served() && !wt->is_float() && wt->changed_under_int8())
      ++changed[std::string(wt->name) + ": " + int8_description(*wt)];
  for (const auto& [what, n] : changed) std::cerr << "exspec: gguf: " << n << " tensors of " << what << std::endl;
  plan_groups();
}

// int8 serves q, k and v as one product, and gate and up: their rows are concatenated, so each
// group takes one path (mixed_path). A group whose types take different ones (a Q5_K_M file's
// Q5_K attn_q beside a Q6_K attn_v) is served from its values, quantised at load; a 4-bit type
// beside Q8_0 blocks as Q8_0 blocks.
void GgufWeights::plan_groups() {
  const GgufFile& f = *file_;
  int64_t mixed = 0, converted = 0;
  std::string mixed_example, converted_example;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    for (WeightGroup group : {WeightGroup::Qkv, WeightGroup::GateUp, WeightGroup::ExpertGateUp}) {
      std::vector<std::string> names;  // the group's matrices in this file (model/layer_weights.h)
      for (const WeightName* w : group_weights(config_, group, i)) names.push_back(*gguf_weight_name(w->id, i));
      if (names.empty()) continue;  // a dense layer's experts, or the MLP of a layer of experts
      const uint32_t first = f.tensor(names[0])->type;
      std::string example;  // the first member of another type
      bool mixes = false;
      for (const auto& g : names) {
        const uint32_t other = f.tensor(g)->type;
        if (other != first && example.empty()) example = stem(names[0]) + " " + type_name(first) + " with " + stem(g) + " " + type_name(other);
        mixes = mixes || !group_agrees(other, first);
      }
      if (example.empty()) continue;  // one type: its own path
      std::set<std::string>& into = mixes ? from_values_ : to_q8_0_;
      bool changed = false;
      for (const auto& g : names)
        if (mixes || weight_type(f.tensor(g)->type)->int8 == Int8Path::Q4) into.insert(g), changed = true;
      if (!changed) continue;
      (mixes ? mixed : converted) += 1;
      std::string& said = mixes ? mixed_example : converted_example;
      if (said.empty()) said = example;
    }
  }
  if (mixed)
    std::cerr << "exspec: gguf: " << mixed << " groups multiplied as one product mix " << mixed_example
              << " (and the like): their values quantised to Q8_0 at load" << std::endl;
  if (converted)
    std::cerr << "exspec: gguf: " << converted << " groups multiplied as one product mix " << converted_example
              << " (and the like): their 4-bit blocks converted exactly to Q8_0 blocks at load (the same products)" << std::endl;
}

at::Tensor GgufWeights::take(const std::string& hf) const {
  auto name = gguf_name(config_.arch, hf);
  const TensorInfo* all = name ? file_->tensor(*name) : nullptr;
  if (!all) throw std::runtime_error(file_->path() + ": no weight \"" + hf + "\" is expected");
  const int64_t expert = expert_of(hf);
  const TensorInfo one = expert >= 0 ? expert_view(*all, expert) : TensorInfo();
  const TensorInfo* t = expert >= 0 ? &one : all;
  const std::vector<int64_t> shape = t->shape();
  const WeightType& wt = *weight_type(t->type);  // checked at open
  const bool blocks = dtype_ == at::kChar && shape.size() == 2 && !from_values_.count(*name);
  at::Tensor w = blocks ? int8_blocks(*t, wt, to_q8_0_.count(*name) > 0) : at::Tensor();
  if (!w.defined() && !wt.is_float()) {
    w = dequantised(*t, wt, shape);
  } else if (!w.defined()) {
    const at::ScalarType st = wt.id == TensorType::F32 ? at::kFloat : wt.id == TensorType::F16 ? at::kHalf : at::kBFloat16;
    w = at::from_blob(const_cast<uint8_t*>(t->data), shape, st).clone();  // nothing of the mapping is kept
  }
  if (int64_t heads = permuted_heads(config_, hf)) w = unpermute(w, heads);
  if (w.scalar_type() == at::kByte) return w;
  // int8 quantises the products from float32; every other dtype takes the weights as served,
  // but for the norms: in float32 (float64 for the oracle), as the file holds them. The Decoder
  // rounds Llama's to the activations' dtype itself and keeps Gemma's multiplier (1 + w, the
  // converter's sum) in float32, as llama.cpp does.
  const WeightRole role = weight_by_hf(config_.arch, hf)->role;
  const bool norm = role == WeightRole::Norm || role == WeightRole::PostNorm;
  const at::ScalarType to = dtype_ == at::kChar || (norm && dtype_ != at::kDouble) ? at::kFloat : dtype_;
  return w.to(device_, to);
}

}  // namespace exspec::gguf
