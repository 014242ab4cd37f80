#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "model/config_json.h"
#include "model/io_util.h"
#include "model/window_pattern.h"

namespace exspec {
namespace {

using nlohmann::json;
using namespace config_json;

// eos_token_id / bos_token_id may be an int, a list of ints or null.
std::vector<int64_t> id_list(const json& j, const char* key, const std::string& where) {
  std::vector<int64_t> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (it->is_number_integer()) {
    out.push_back(it->get<int64_t>());
  } else if (it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_number_integer()) fail(where, std::string("field \"") + key + "\" must hold integers");
      out.push_back(e.get<int64_t>());
    }
  } else {
    fail(where, std::string("field \"") + key + "\" must be an integer or a list of integers");
  }
  return out;
}

Arch arch_of(const std::string& architecture, const std::string& where) {
  if (const ArchitectureRow* r = architecture_by_class(architecture)) return r->arch;
  fail(where, "unknown architecture \"" + architecture + "\" (supported: " + architecture_classes() + ")");
}

// Which layers slide, and how far (ArchitectureRow: sliding_window_all, sliding_window_switch).
void parse_window(const json& j, ModelConfig& c, const std::string& where) {
  const ArchitectureRow& row = c.architecture_row();
  if (row.sliding_window_all) {  // null: no window; absent: the class's default
    auto w = j.find("sliding_window");
    c.sliding_window = w == j.end() ? row.sliding_window_default : w->is_null() ? 0 : need_int(j, "sliding_window", where);
  } else if (row.sliding_window_switch) {
    if (get_bool(j, "use_sliding_window", false, where)) {
      c.sliding_window = j.contains("sliding_window") && !j["sliding_window"].is_null() ? need_int(j, "sliding_window", where) : 4096;
      auto m = j.find("max_window_layers");
      if (m != j.end() && !m->is_null() && (!m->is_number_integer() || m->get<int64_t>() < 0))
        fail(where, "field \"max_window_layers\" must be a non-negative integer");
      const int64_t from = m != j.end() && !m->is_null() ? m->get<int64_t>() : 28;
      for (int64_t i = 0; i < c.num_layers; ++i)
        c.layer_windows.push_back(i >= from ? AttentionWindow::Sliding : AttentionWindow::Full);
    }
  } else if (row.sliding_window_pattern_default > 0) {  // Gemma 3: each pattern-th layer full
    auto w = j.find("sliding_window");
    c.sliding_window = w == j.end() ? row.sliding_window_default : w->is_null() ? 0 : need_int(j, "sliding_window", where);
    auto p = j.find("sliding_window_pattern");
    const int64_t pattern = p == j.end() || p->is_null() ? row.sliding_window_pattern_default : need_int(j, "sliding_window_pattern", where);
    c.layer_windows = windows_but_each(c.num_layers, pattern);
  } else if (get_bool(j, "use_sliding_window", false, where)) {
    fail(where, "use_sliding_window=true is not supported for " + c.architecture + " (Mistral's, Phi-3's, Qwen2's and Qwen3's windows are)");
  }
  auto types = j.find("layer_types");
  if (types == j.end() || types->is_null() || c.sliding_window == 0) return;
  if (!types->is_array() || static_cast<int64_t>(types->size()) != c.num_layers)
    fail(where, "field \"layer_types\" must list num_hidden_layers entries");
  c.layer_windows.clear();
  for (const json& t : *types) {
    const std::string s = t.is_string() ? t.get<std::string>() : "";
    if (s != "sliding_attention" && s != "full_attention")
      fail(where, "layer_types holds " + t.dump() + " (sliding_attention and full_attention are served)");
    c.layer_windows.push_back(s == "sliding_attention" ? AttentionWindow::Sliding : AttentionWindow::Full);
  }
}

const std::pair<const char*, Activation> kActivations[] = {{"silu", Activation::Silu}, {"gelu_pytorch_tanh", Activation::GeluTanh}};

const char* activation_name(Activation a) {
  for (const auto& [name, act] : kActivations)
    if (act == a) return name;
  throw std::logic_error("activation_name: an Activation without a name");
}

// Gemma's layer maths that config.json states: the MLP's activation, the local rope's base, the
// attention scale, the soft-capping; and the bidirectional attention that no kind serves yet.
void parse_layer_maths(const json& j, ModelConfig& c, const std::string& where) {
  const ArchitectureRow& row = c.architecture_row();
  const std::string act = j.contains(row.activation_key) && j[row.activation_key].is_string()
                              ? j[row.activation_key].get<std::string>() : activation_name(row.activation);
  bool known = false;
  for (const auto& [name, a] : kActivations)
    if (act == name) c.activation = a, known = true;
  if (!known) fail(where, "unsupported " + std::string(row.activation_key) + " \"" + act + "\" (supported: silu, gelu_pytorch_tanh)");
  if (row.rope_local_default > 0) c.rope_local_theta = get_double(j, "rope_local_base_freq", row.rope_local_default, where);
  if (row.query_pre_attn_scalar_default > 0) {
    c.query_pre_attn_scalar = get_double(j, "query_pre_attn_scalar", static_cast<double>(row.query_pre_attn_scalar_default), where);
    if (!(c.query_pre_attn_scalar > 0)) fail(where, "field \"query_pre_attn_scalar\" must be positive");
  }
  auto cap = [&](const char* key, double dflt) {
    auto it = j.find(key);
    if (it == j.end()) return dflt;
    if (it->is_null()) return 0.0;
    if (!row.softcapping) fail(where, std::string(key) + " is not served for " + c.architecture + " (Gemma 2's and Gemma 3's are)");
    const double v = get_double(j, key, 0.0, where);
    if (!(v > 0)) fail(where, std::string("field \"") + key + "\" must be positive or null");
    return v;
  };
  c.attn_logit_softcapping = cap("attn_logit_softcapping", row.attn_softcap_default);
  c.final_logit_softcapping = cap("final_logit_softcapping", row.final_softcap_default);
  if (get_bool(j, "use_bidirectional_attention", false, where)) fail(where, "use_bidirectional_attention=true is not served");
}

// Qwen3MoeConfig's experts, its defaults where config.json leaves a field out: layer i has
// experts unless it is in mlp_only_layers or decoder_sparse_step skips it ((i + 1) % step != 0).
void parse_experts(const json& j, ModelConfig& c, const std::string& where) {
  ExpertsConfig& e = c.experts;
  auto int_or = [&](const char* key, int64_t dflt) { return j.contains(key) && !j[key].is_null() ? need_int(j, key, where) : dflt; };
  e.num_experts = int_or("num_experts", 128);
  e.top_k = int_or("num_experts_per_tok", 8);
  e.intermediate_size = int_or("moe_intermediate_size", 768);
  e.norm_topk_prob = get_bool(j, "norm_topk_prob", c.architecture_row().norm_topk_default, where);
  if (e.top_k > e.num_experts)
    fail(where, "num_experts_per_tok (" + std::to_string(e.top_k) + ") exceeds num_experts (" + std::to_string(e.num_experts) + ")");
  const int64_t step = int_or("decoder_sparse_step", 1);
  std::vector<int64_t> only;
  if (auto m = j.find("mlp_only_layers"); m != j.end() && !m->is_null()) {
    if (!m->is_array()) fail(where, "field \"mlp_only_layers\" must be a list of layer numbers");
    for (const json& i : *m) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= c.num_layers)
        fail(where, "mlp_only_layers holds " + i.dump() + " (layers are 0 .. num_hidden_layers - 1)");
      only.push_back(i.get<int64_t>());
    }
  }
  for (int64_t i = 0; i < c.num_layers; ++i)
    if (std::find(only.begin(), only.end(), i) != only.end() || (i + 1) % step != 0) e.dense_layers.push_back(i);
}

// The row's rope and MLP layout: GLM's partial interleaved rope (partial_rotary_factor defaults
// to the row's; other architectures must not set it), fused MLP and sandwich norms.
void parse_row_fields(const json& j, ModelConfig& c, const std::string& where) {
  const ArchitectureRow& row = c.architecture_row();
  if (row.partial_rotary_default > 0) {
    c.partial_rotary_factor = get_double(j, "partial_rotary_factor", row.partial_rotary_default, where);
  } else if (j.contains("partial_rotary_factor") && get_double(j, "partial_rotary_factor", 1.0, where) != 1.0) {
    fail(where, "partial_rotary_factor is only supported for GLM and Phi-3 models");
  }
  c.take_row_layout();
  parse_window(j, c, where);
  parse_layer_maths(j, c, where);
  if (row.experts) parse_experts(j, c, where);
  if (!(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1) || c.rotary_dim() < 2 || c.rotary_dim() % 2 != 0)
    fail(where, "partial_rotary_factor must be in (0, 1] and give an even rotary dimension (head_dim " +
                    std::to_string(c.head_dim) + " x " + std::to_string(c.partial_rotary_factor) + ")");
}

}  // namespace

ModelConfig ModelConfig::parse(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(where, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(where, "expected a JSON object");

  ModelConfig c;
  auto archs = j.find("architectures");
  if (archs == j.end() || !archs->is_array() || archs->empty() || !(*archs)[0].is_string())
    fail(where, "missing field \"architectures\" (e.g. [\"LlamaForCausalLM\"])");
  c.architecture = (*archs)[0].get<std::string>();
  c.arch = arch_of(c.architecture, where);
  const ArchitectureRow& row = c.architecture_row();

  c.hidden_size = need_int(j, "hidden_size", where);
  c.intermediate_size = need_int(j, "intermediate_size", where);
  c.num_layers = need_int(j, "num_hidden_layers", where);
  c.num_heads = need_int(j, "num_attention_heads", where);
  c.num_kv_heads = j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null()
                       ? need_int(j, "num_key_value_heads", where)
                       : c.num_heads;
  // HF's GlmConfig / Glm4Config default head_dim to 128, not hidden_size / heads.
  c.head_dim = j.contains("head_dim") && !j["head_dim"].is_null() ? need_int(j, "head_dim", where)
               : row.head_dim_default                             ? row.head_dim_default
                                                                  : c.hidden_size / c.num_heads;
  c.vocab_size = need_int(j, "vocab_size", where);
  c.max_position_embeddings = need_int(j, "max_position_embeddings", where);
  if (!j.contains("rms_norm_eps")) fail(where, "missing field \"rms_norm_eps\"");
  c.rms_norm_eps = get_double(j, "rms_norm_eps", 1e-6, where);
  c.rope_theta = get_double(j, "rope_theta", 10000.0, where);
  c.rope_scaling = parse_rope_scaling(j, row, where);
  c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", row.tied_default, where);
  c.attention_bias = row.qkv_bias || get_bool(j, "attention_bias", row.attention_bias_default, where);
  parse_row_fields(j, c, where);
  const RopeScaling& rs = c.rope_scaling;
  if (rs.type == "longrope" &&
      (static_cast<int64_t>(rs.short_factors.size()) != c.rotary_dim() / 2 ||
       static_cast<int64_t>(rs.long_factors.size()) != c.rotary_dim() / 2))
    fail(where, "longrope's short_factor and long_factor need " + std::to_string(c.rotary_dim() / 2) +
                    " values each (half the rotary dims), have " + std::to_string(rs.short_factors.size()) + " and " +
                    std::to_string(rs.long_factors.size()));

  if (c.num_heads % c.num_kv_heads != 0)
    fail(where, "num_attention_heads (" + std::to_string(c.num_heads) +
                    ") must be a multiple of num_key_value_heads (" + std::to_string(c.num_kv_heads) + ")");
  if (c.head_dim % 2 != 0) fail(where, "head_dim must be even for rotary embeddings");
  if (!row.head_dim_free && !j.contains("head_dim") && c.hidden_size % c.num_heads != 0)
    fail(where, "hidden_size must be a multiple of num_attention_heads");
  if (get_bool(j, "mlp_bias", false, where)) fail(where, "mlp_bias=true is not supported");

  if (j.contains("torch_dtype") && j["torch_dtype"].is_string()) c.torch_dtype = j["torch_dtype"].get<std::string>();

  auto bos = id_list(j, "bos_token_id", where);
  if (!bos.empty()) c.bos_id = bos[0];
  c.eos_ids = id_list(j, "eos_token_id", where);
  return c;
}

ModelConfig ModelConfig::load(const std::string& dir) {
  const std::string path = dir + "/config.json";
  ModelConfig c = parse(read_text_file(path), path);
  const std::string gen = dir + "/generation_config.json";
  if (file_exists(gen)) {
    json g;
    try {
      g = json::parse(read_text_file(gen));
    } catch (const json::parse_error& e) {
      fail(gen, std::string("not valid JSON: ") + e.what());
    }
    auto eos = id_list(g, "eos_token_id", gen);
    if (!eos.empty()) c.eos_ids = eos;
    auto bos = id_list(g, "bos_token_id", gen);
    if (!bos.empty()) c.bos_id = bos[0];
  }
  return c;
}

void ModelConfig::take_row_layout() {
  const ArchitectureRow& row = architecture_row();
  qk_norm = row.qk_norm;
  rope_interleaved = row.rope_interleaved;
  fused_gate_up = row.fused_gate_up;
  fused_qkv = row.fused_qkv;
  sandwich_norms = row.sandwich_norms;
  activation = row.activation;
  norm_offset = row.norm == NormForm::Gemma ? 1.0 : 0.0;  // Hugging Face's files; GGUF's say 0
  rope_local_theta = row.rope_local_default;
  query_pre_attn_scalar = static_cast<double>(row.query_pre_attn_scalar_default);
  attn_logit_softcapping = row.attn_softcap_default;
  final_logit_softcapping = row.final_softcap_default;
}

double ModelConfig::attention_scale() const {
  return 1.0 / std::sqrt(query_pre_attn_scalar > 0 ? query_pre_attn_scalar : static_cast<double>(head_dim));
}

double ModelConfig::embedding_scale() const {
  return architecture_row().embedding_scaled ? std::sqrt(static_cast<double>(hidden_size)) : 1.0;
}

LayerKind ModelConfig::layer_kind(int64_t layer) const {
  if (layer < 0 || layer >= num_layers)
    throw std::out_of_range("layer_kind: layer " + std::to_string(layer) + " of " + std::to_string(num_layers));
  // The row's norm, the config's activation, a window on the layers that slide, and Gemma's
  // local rope on those.
  LayerKind k;
  if (sliding_window > 0) k.window = layer_windows.empty() ? AttentionWindow::Sliding : layer_windows[layer];
  k.activation = activation;
  k.norm = architecture_row().norm;
  if (rope_local_theta > 0 && k.window == AttentionWindow::Sliding) k.rope = RopeKind::Local;
  const auto& dense = experts.dense_layers;
  if (experts.num_experts > 0 && std::find(dense.begin(), dense.end(), layer) == dense.end()) k.mlp = Mlp::Experts;
  return k;
}

std::string ModelConfig::to_json_text() const {
  json j;
  j["architectures"] = {architecture_row().hf_classes.front()};
  j["model_type"] = architecture_row().model_type ? architecture_row().model_type : arch_name(arch);
  j["hidden_size"] = hidden_size;
  j["intermediate_size"] = intermediate_size;
  j["num_hidden_layers"] = num_layers;
  j["num_attention_heads"] = num_heads;
  j["num_key_value_heads"] = num_kv_heads;
  j["head_dim"] = head_dim;
  j["vocab_size"] = vocab_size;
  j["max_position_embeddings"] = max_position_embeddings;
  j["rms_norm_eps"] = rms_norm_eps;
  j["rope_theta"] = rope_theta;
  rope_scaling_json(*this, j);
  j["tie_word_embeddings"] = tie_word_embeddings;
  if (arch == Arch::Llama || arch == Arch::Glm || arch == Arch::Glm4) j["attention_bias"] = attention_bias;
  if (architecture_row().partial_rotary_default > 0) j["partial_rotary_factor"] = partial_rotary_factor;
  if (architecture_row().sliding_window_all) j["sliding_window"] = sliding_window > 0 ? json(sliding_window) : json(nullptr);
  if (architecture_row().sliding_window_switch && sliding_window > 0) {
    j["use_sliding_window"] = true;
    j["sliding_window"] = sliding_window;
  }
  if (sliding_window > 0 && !layer_windows.empty()) {
    j["layer_types"] = json::array();
    for (AttentionWindow w : layer_windows) j["layer_types"].push_back(w == AttentionWindow::Sliding ? "sliding_attention" : "full_attention");
  }
  const ArchitectureRow& row = architecture_row();
  j[row.activation_key] = activation_name(activation);
  if (row.sliding_window_pattern_default > 0) j["sliding_window"] = sliding_window > 0 ? json(sliding_window) : json(nullptr);
  if (row.rope_local_default > 0) j["rope_local_base_freq"] = rope_local_theta;
  if (row.query_pre_attn_scalar_default > 0) j["query_pre_attn_scalar"] = query_pre_attn_scalar;
  if (row.softcapping) {
    j["attn_logit_softcapping"] = attn_logit_softcapping > 0 ? json(attn_logit_softcapping) : json(nullptr);
    j["final_logit_softcapping"] = final_logit_softcapping > 0 ? json(final_logit_softcapping) : json(nullptr);
  }
  if (row.experts) {
    j["num_experts"] = experts.num_experts;
    j["num_experts_per_tok"] = experts.top_k;
    j["moe_intermediate_size"] = experts.intermediate_size;
    j["norm_topk_prob"] = experts.norm_topk_prob;
    j["decoder_sparse_step"] = 1;
    j["mlp_only_layers"] = experts.dense_layers;
  }
  j["torch_dtype"] = torch_dtype;
  if (bos_id) j["bos_token_id"] = *bos_id;
  if (eos_ids.size() == 1) j["eos_token_id"] = eos_ids[0];
  else if (!eos_ids.empty()) j["eos_token_id"] = eos_ids;
  return j.dump(2) + "\n";
}

}  // namespace exspec
