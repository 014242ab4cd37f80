#include "model/layer_weights.h"

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace exspec {

namespace {
using W = WeightId;
using D = WeightDim;
using When = WeightWhen;
using R = WeightRole;
using G = WeightGroup;
}  // namespace

const std::vector<WeightName>& model_weights() {
  static const std::vector<WeightName> rows{
      // id          Hugging Face                 GGUF                  rows       cols       when          role
      {W::Embed,     "model.embed_tokens.weight", "token_embd.weight",  D::Vocab,  D::Hidden, When::Always, R::Table},
      {W::FinalNorm, "model.norm.weight",         "output_norm.weight", D::Hidden, D::None,   When::Always, R::Norm},
      {W::Head,      "lm_head.weight",            "output.weight",      D::Vocab,  D::Hidden, When::Untied, R::Table},
  };
  return rows;
}

const std::vector<WeightName>& layer_weights() {
  static const std::vector<WeightName> rows{
      // id             after "model.layers.N."            after "blk.N."        rows       cols       when            role         group      roped
      {W::AttnNorm,     "input_layernorm.weight",          "attn_norm.weight",   D::Hidden, D::None,   When::Always,   R::Norm},
      {W::Qkv,          "self_attn.qkv_proj.weight",       "attn_qkv.weight",    D::Qkv,    D::Hidden, When::FusedQkv, R::Product,  G::Qkv},
      {W::Q,            "self_attn.q_proj.weight",         "attn_q.weight",      D::Q,      D::Hidden, When::SplitQkv, R::Product,  G::Qkv,    true},
      {W::K,            "self_attn.k_proj.weight",         "attn_k.weight",      D::KV,     D::Hidden, When::SplitQkv, R::Product,  G::Qkv,    true},
      {W::V,            "self_attn.v_proj.weight",         "attn_v.weight",      D::KV,     D::Hidden, When::SplitQkv, R::Product,  G::Qkv},
      {W::QBias,        "self_attn.q_proj.bias",           "attn_q.bias",        D::Q,      D::None,   When::QkvBias,  R::Bias,     G::Qkv,    true},
      {W::KBias,        "self_attn.k_proj.bias",           "attn_k.bias",        D::KV,     D::None,   When::QkvBias,  R::Bias,     G::Qkv,    true},
      {W::VBias,        "self_attn.v_proj.bias",           "attn_v.bias",        D::KV,     D::None,   When::QkvBias,  R::Bias,     G::Qkv},
      {W::QNorm,        "self_attn.q_norm.weight",         "attn_q_norm.weight", D::Head,   D::None,   When::QkNorm,   R::Norm},
      {W::KNorm,        "self_attn.k_norm.weight",         "attn_k_norm.weight", D::Head,   D::None,   When::QkNorm,   R::Norm},
      {W::O,            "self_attn.o_proj.weight",         "attn_output.weight", D::Hidden, D::Q,      When::Always,   R::Out},
      {W::OBias,        "self_attn.o_proj.bias",           "attn_output.bias",   D::Hidden, D::None,   When::OBias,    R::Bias},
      {W::PostAttnNorm, "post_self_attn_layernorm.weight", "post_attention_norm.weight", D::Hidden, D::None, When::Sandwich, R::PostNorm},
      {W::MlpNorm,      "post_attention_layernorm.weight", "ffn_norm.weight",    D::Hidden, D::None,   When::Always,   R::Norm},
      // llama.cpp's phi3 keeps the fused gate and up as one ffn_up (gate rows first, as here).
      {W::GateUp,       "mlp.gate_up_proj.weight",         "ffn_up.weight",      D::Inter2, D::Hidden, When::FusedMlp, R::Product,  G::GateUp},
      {W::Gate,         "mlp.gate_proj.weight",            "ffn_gate.weight",    D::Inter,  D::Hidden, When::SplitMlp, R::Product,  G::GateUp},
      {W::Up,           "mlp.up_proj.weight",              "ffn_up.weight",      D::Inter,  D::Hidden, When::SplitMlp, R::Product,  G::GateUp},
      {W::Down,         "mlp.down_proj.weight",            "ffn_down.weight",    D::Hidden, D::Inter,  When::DenseMlp, R::Out},
      {W::PostMlpNorm,  "post_mlp_layernorm.weight",       "post_ffw_norm.weight", D::Hidden, D::None,   When::Sandwich, R::PostNorm},
      // Qwen3-MoE's experts: Hugging Face's one tensor an expert, llama.cpp's one of all of them.
      {W::Router,       "mlp.gate.weight",                 "ffn_gate_inp.weight",  D::Experts, D::Hidden, When::Experts, R::Router},
      {W::ExpertGate,   "mlp.experts.*.gate_proj.weight",  "ffn_gate_exps.weight", D::ExpertInter, D::Hidden, When::Experts, R::Product, G::ExpertGateUp},
      {W::ExpertUp,     "mlp.experts.*.up_proj.weight",    "ffn_up_exps.weight",   D::ExpertInter, D::Hidden, When::Experts, R::Product, G::ExpertGateUp},
      {W::ExpertDown,   "mlp.experts.*.down_proj.weight",  "ffn_down_exps.weight", D::Hidden, D::ExpertInter, When::Experts, R::Out},
  };
  return rows;
}

const WeightName& weight_name(WeightId id) {
  for (const auto* table : {&model_weights(), &layer_weights()})
    for (const WeightName& w : *table)
      if (w.id == id) return w;
  throw std::logic_error("weight_name: no row for a WeightId");
}

const char* hf_name(Arch a, const WeightName& w) {
  for (const auto& [id, name] : architecture(a).hf_names)
    if (id == w.id) return name;
  return w.hf;
}

namespace {

// Whether `name` from `from` on is `pattern`, a '*' in it standing for an expert's number.
bool matches(const std::string& name, size_t from, const char* pattern) {
  size_t i = from;
  for (const char* p = pattern; *p; ++p) {
    if (*p != '*') {
      if (i >= name.size() || name[i] != *p) return false;
      ++i;
      continue;
    }
    const size_t digits = i;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    if (i == digits) return false;
  }
  return i == name.size();
}

}  // namespace

const WeightName* weight_by_hf(Arch a, const std::string& name) {
  for (const WeightName& w : model_weights())
    if (name == hf_name(a, w)) return &w;
  const std::string layers = "model.layers.";
  const size_t dot = name.rfind(layers, 0) == 0 ? name.find('.', layers.size()) : std::string::npos;
  if (dot == std::string::npos) return nullptr;
  for (const WeightName& w : layer_weights())
    if (matches(name, dot + 1, hf_name(a, w))) return &w;
  return nullptr;
}

bool is_layer_weight(const WeightName& w) {
  return &w >= layer_weights().data() && &w < layer_weights().data() + layer_weights().size();
}

bool is_expert_weight(const WeightName& w) { return std::strchr(w.hf, '*') != nullptr; }

int64_t expert_of(const std::string& hf) {
  const std::string key = ".experts.";
  const size_t at = hf.find(key);
  if (at == std::string::npos) return -1;
  size_t i = at + key.size(), digits = i;
  while (i < hf.size() && std::isdigit(static_cast<unsigned char>(hf[i]))) ++i;
  return i == digits || i >= hf.size() || hf[i] != '.' ? -1 : std::stoll(hf.substr(digits, i - digits));
}

bool has_weight(const ModelConfig& c, const WeightName& w, int64_t layer) {
  const bool dense = !is_layer_weight(w) || c.layer_kind(layer).mlp == Mlp::Dense;
  switch (w.when) {
    case WeightWhen::Always: return true;
    case WeightWhen::Untied: return !c.tie_word_embeddings;
    case WeightWhen::SplitQkv: return !c.fused_qkv;
    case WeightWhen::FusedQkv: return c.fused_qkv;
    case WeightWhen::QkvBias: return c.attention_bias;
    case WeightWhen::OBias: return c.o_proj_bias();
    case WeightWhen::QkNorm: return c.qk_norm;
    case WeightWhen::SplitMlp: return dense && !c.fused_gate_up;
    case WeightWhen::FusedMlp: return dense && c.fused_gate_up;
    case WeightWhen::DenseMlp: return dense;
    case WeightWhen::Sandwich: return c.sandwich_norms;
    case WeightWhen::Experts: return !dense;
  }
  return false;
}

std::vector<const WeightName*> group_weights(const ModelConfig& c, WeightGroup group, int64_t layer, bool bias) {
  std::vector<const WeightName*> members;
  for (const WeightName& w : layer_weights())
    if (w.group == group && (w.role == WeightRole::Bias) == bias && has_weight(c, w, layer)) members.push_back(&w);
  return members;
}

namespace {

int64_t size(const ModelConfig& c, WeightDim d) {
  switch (d) {
    case WeightDim::None: return 0;
    case WeightDim::Vocab: return c.vocab_size;
    case WeightDim::Hidden: return c.hidden_size;
    case WeightDim::Inter: return c.intermediate_size;
    case WeightDim::Inter2: return 2 * c.intermediate_size;
    case WeightDim::Q: return c.num_heads * c.head_dim;
    case WeightDim::KV: return c.num_kv_heads * c.head_dim;
    case WeightDim::Qkv: return (c.num_heads + 2 * c.num_kv_heads) * c.head_dim;
    case WeightDim::Head: return c.head_dim;
    case WeightDim::Experts: return c.experts.num_experts;
    case WeightDim::ExpertInter: return c.experts.intermediate_size;
  }
  return 0;
}

}  // namespace

std::vector<int64_t> weight_shape(const ModelConfig& c, const WeightName& w) {
  if (w.cols == WeightDim::None) return {size(c, w.rows)};
  return {size(c, w.rows), size(c, w.cols)};
}

std::string hf_weight_name(Arch a, WeightId id, int64_t layer, int64_t expert) {
  const WeightName& w = weight_name(id);
  if (!is_layer_weight(w)) return hf_name(a, w);
  std::string name = "model.layers." + std::to_string(layer) + "." + hf_name(a, w);
  if (const size_t star = name.find('*'); star != std::string::npos) {
    if (expert < 0) throw std::logic_error("hf_weight_name: an expert's weight without its number");
    name.replace(star, 1, std::to_string(expert));
  }
  return name;
}

std::optional<std::string> gguf_weight_name(WeightId id, int64_t layer) {
  const WeightName& w = weight_name(id);
  if (!w.gguf) return std::nullopt;
  return is_layer_weight(w) ? "blk." + std::to_string(layer) + "." + w.gguf : std::string(w.gguf);
}

}  // namespace exspec
