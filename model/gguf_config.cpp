// GGUF metadata -> ModelConfig, and llama.cpp's tensor names -> Hugging Face's.
#include "model/gguf_config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>

#include "model/layer_weights.h"
#include "model/window_pattern.h"

namespace exspec::gguf {

double shortest_decimal(double f32_value) {
  const float want = static_cast<float>(f32_value);
  char buf[40];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(want));
    if (std::strtof(buf, nullptr) == want) return std::strtod(buf, nullptr);
  }
  return f32_value;
}

namespace {

int64_t positive(const GgufFile& f, const std::string& key) {
  const int64_t v = f.get_int(key);
  if (v <= 0) throw std::runtime_error(f.path() + ": metadata \"" + key + "\" must be positive, is " + std::to_string(v));
  return v;
}

std::vector<double> rope_factors(const GgufFile& f, const std::string& name, int64_t half) {
  const TensorInfo* t = f.tensor(name);
  if (!t) throw std::runtime_error(f.path() + ": no tensor \"" + name + "\"");
  if (t->type != uint32_t(TensorType::F32) || t->dims.size() != 1 || t->dims[0] != half)
    throw std::runtime_error(f.path() + ": tensor \"" + name + "\" must be F32 [" + std::to_string(half) + "], is " +
                             type_name(t->type) + " with " + std::to_string(t->elements()) + " elements");
  std::vector<double> out;
  for (int64_t i = 0; i < half; ++i) {
    float v;
    std::memcpy(&v, t->data + 4 * i, 4);
    if (!(v > 0)) throw std::runtime_error(f.path() + ": " + name + " holds " + std::to_string(v) + " (factors must be positive)");
    out.push_back(v);
  }
  return out;
}

// Phi-3's longrope as llama.cpp's converter writes it: both factor sets, the original context and
// the attention factor, which is stored in float32 (absent: 1, as llama.cpp reads it): where it is
// the float32 of HF's formula, the formula's float64 value is taken, so that an F32 file equals
// its directory.
void longrope_fields(const GgufFile& f, const std::string& p, ModelConfig& c) {
  RopeScaling& rs = c.rope_scaling;
  rs.type = "longrope";
  rs.long_factors = rope_factors(f, "rope_factors_long.weight", c.rotary_dim() / 2);
  rs.short_factors = rope_factors(f, "rope_factors_short.weight", c.rotary_dim() / 2);
  // Absent: the whole context, as llama.cpp's n_ctx_orig_yarn.
  rs.original_max_position_embeddings = f.int_or(p + "rope.scaling.original_context_length") ? positive(f, p + "rope.scaling.original_context_length")
                                                                                          : c.max_position_embeddings;
  rs.factor = static_cast<double>(c.max_position_embeddings) / static_cast<double>(rs.original_max_position_embeddings);
  const double formula = longrope_attention_factor(rs.factor, rs.original_max_position_embeddings);
  const auto stored = f.float_or(p + "rope.scaling.attn_factor");
  rs.attention_factor = !stored ? 1.0 : static_cast<float>(formula) == static_cast<float>(*stored) ? formula : *stored;
}

// Which layers slide (llama.cpp's load_swa_pattern): attention.sliding_window_pattern as one
// number n (each n-th layer full) or one bool a layer (true: sliding); absent: the row's n.
std::vector<AttentionWindow> window_pattern(const GgufFile& f, const std::string& key, int64_t layers, int64_t n) {
  std::vector<AttentionWindow> out;
  const Value* v = f.find(key);
  if (v && v->type == ValueType::Array) {
    if (static_cast<int64_t>(v->items.size()) != layers)
      throw std::runtime_error(f.path() + ": " + key + " has " + std::to_string(v->items.size()) + " entries for " +
                               std::to_string(layers) + " layers");
    for (const Value& b : v->items) out.push_back(b.i || b.u ? AttentionWindow::Sliding : AttentionWindow::Full);
    return out;
  }
  return windows_but_each(layers, v ? positive(f, key) : n);
}

// Gemma 2 and 3's own keys: llama.cpp's, and its rules where the file says nothing.
void gemma_fields(const GgufFile& f, const std::string& p, const ArchitectureRow& row, ModelConfig& c) {
  c.norm_offset = 0;  // the converter stored the multiplier 1 + w
  if (row.sliding_window_pattern_default > 0 && c.sliding_window > 0)
    c.layer_windows = window_pattern(f, p + "attention.sliding_window_pattern", c.num_layers, row.sliding_window_pattern_default);
  if (row.rope_local_default > 0)
    c.rope_local_theta = shortest_decimal(f.float_or(p + "rope.freq_base_swa").value_or(row.rope_local_default));
  // No key holds query_pre_attn_scalar: llama.cpp takes hidden / heads for the 27B models (62-layer
  // Gemma 3, whose config.json says 168; 46-layer Gemma 2, 144) and the head size otherwise.
  if (row.query_pre_attn_scalar_default > 0)
    c.query_pre_attn_scalar =
        static_cast<double>(c.num_layers == row.gguf_hidden_scale_layers ? c.hidden_size / c.num_heads : c.head_dim);
  // Gemma 2's caps, its defaults where the file has none (llama.cpp's gemma2 always caps);
  // llama.cpp's gemma3 reads none, so a gemma3 file that carries one is refused.
  if (row.attn_softcap_default > 0) {
    c.attn_logit_softcapping = shortest_decimal(f.float_or(p + "attn_logit_softcapping").value_or(row.attn_softcap_default));
    c.final_logit_softcapping = shortest_decimal(f.float_or(p + "final_logit_softcapping").value_or(row.final_softcap_default));
    return;
  }
  for (const char* cap : {"final_logit_softcapping", "attn_logit_softcapping"})
    if (f.float_or(p + cap).value_or(0.0) != 0.0)
      throw std::runtime_error(f.path() + ": " + p + cap + " is not served for " + p.substr(0, p.size() - 1) + " (gemma2's is)");
}

// Qwen3-MoE's experts (llama.cpp's qwen3moe: experts on every layer, their top-k weights always
// renormalised, softmax gating). What it reads otherwise is refused by name.
void expert_fields(const GgufFile& f, const std::string& p, const ArchitectureRow& row, ModelConfig& c) {
  if (!row.experts) return;
  ExpertsConfig& e = c.experts;
  e.num_experts = positive(f, p + "expert_count");
  e.top_k = positive(f, p + "expert_used_count");
  const std::string inter = p + "expert_feed_forward_length";
  const Value* v = f.find(inter);
  if (v && v->type == ValueType::Array) {  // one a layer: served where all are the same
    const std::vector<int64_t> sizes = f.get_ints(inter);
    if (sizes.empty() || std::count(sizes.begin(), sizes.end(), sizes[0]) != static_cast<std::ptrdiff_t>(sizes.size()))
      throw std::runtime_error(f.path() + ": " + inter + " differs between layers (not served)");
    e.intermediate_size = sizes[0];
  } else {
    e.intermediate_size = v ? positive(f, inter) : c.intermediate_size / e.top_k;  // llama.cpp's fallback
  }
  e.norm_topk_prob = true;
  if (e.top_k > e.num_experts) throw std::runtime_error(f.path() + ": expert_used_count exceeds expert_count");
  if (f.int_or(p + "expert_shared_count").value_or(0) != 0)
    throw std::runtime_error(f.path() + ": " + p + "expert_shared_count: shared experts are not served");
  if (const double s = f.float_or(p + "expert_weights_scale").value_or(0.0); s != 0.0 && s != 1.0)
    throw std::runtime_error(f.path() + ": " + p + "expert_weights_scale " + std::to_string(s) + " is not served");
  if (f.int_or(p + "expert_gating_func").value_or(1) != 1)
    throw std::runtime_error(f.path() + ": " + p + "expert_gating_func: only softmax gating (1) is served");
}

}  // namespace

ModelConfig config_from_gguf(const GgufFile& f) {
  ModelConfig c;
  const std::string arch = f.get_string("general.architecture");
  const std::string p = arch + ".";
  // llama.cpp's own key; its converter writes none for Mistral (served there with full attention).
  const int64_t window = f.find(p + "attention.sliding_window") ? f.get_int(p + "attention.sliding_window") : 0;
  if (window < 0) throw std::runtime_error(f.path() + ": attention.sliding_window is negative");
  const ArchitectureRow* row = architecture_by_gguf(arch, window > 0);
  if (!row && window > 0 && architecture_by_gguf(arch))
    throw std::runtime_error(f.path() + ": a sliding window on architecture \"" + arch + "\" is not served");
  if (!row)
    throw std::runtime_error(f.path() + ": architecture \"" + arch + "\" is not served (" + architecture_gguf_names() + " are)");
  c.arch = row->arch, c.architecture = row->hf_classes.front();
  c.sliding_window = window;
  c.hidden_size = positive(f, p + "embedding_length");
  c.intermediate_size = positive(f, p + "feed_forward_length");
  c.num_layers = positive(f, p + "block_count");
  c.num_heads = positive(f, p + "attention.head_count");
  c.num_kv_heads = f.find(p + "attention.head_count_kv") ? positive(f, p + "attention.head_count_kv") : c.num_heads;
  c.head_dim = f.find(p + "attention.key_length") ? positive(f, p + "attention.key_length") : c.hidden_size / c.num_heads;
  if (f.find(p + "attention.value_length") && f.get_int(p + "attention.value_length") != c.head_dim)
    throw std::runtime_error(f.path() + ": attention.value_length differs from key_length (not served)");
  c.max_position_embeddings = positive(f, p + "context_length");
  c.rms_norm_eps = shortest_decimal(f.get_float(p + "attention.layer_norm_rms_epsilon"));
  c.rope_theta = shortest_decimal(f.float_or(p + "rope.freq_base").value_or(10000.0));
  if (c.num_heads % c.num_kv_heads != 0 || c.head_dim % 2 != 0)
    throw std::runtime_error(f.path() + ": head counts or head size do not make a model (heads " +
                             std::to_string(c.num_heads) + ", kv heads " + std::to_string(c.num_kv_heads) + ", head size " +
                             std::to_string(c.head_dim) + ")");
  if (auto dims = f.int_or(p + "rope.dimension_count"); dims && *dims != c.head_dim) {
    // Phi-3's partial rope (rotate-half over the first dims) is its row's; GLM is not read from GGUF.
    if (row->partial_rotary_default > 0 && !row->rope_interleaved && *dims > 0 && *dims < c.head_dim && *dims % 2 == 0)
      c.partial_rotary_factor = static_cast<double>(*dims) / static_cast<double>(c.head_dim);
    if (c.rotary_dim() != *dims)
      throw std::runtime_error(f.path() + ": rope.dimension_count " + std::to_string(*dims) + " differs from the head size " +
                               std::to_string(c.head_dim) + " (partial rope is served for phi3 only, in even dims)");
  }
  const std::string embd_name = *gguf_weight_name(WeightId::Embed);
  const TensorInfo* embd = f.tensor(embd_name);
  if (!embd || embd->dims.size() != 2) throw std::runtime_error(f.path() + ": no 2-D tensor \"" + embd_name + "\"");
  c.vocab_size = embd->dims[1];
  if (auto type = f.string_or(p + "rope.scaling.type"); type && *type != "none") {
    if (*type != "linear") throw std::runtime_error(f.path() + ": rope scaling \"" + *type + "\" is not served (linear is)");
    c.rope_scaling.type = "linear";
    c.rope_scaling.factor = shortest_decimal(f.get_float(p + "rope.scaling.factor"));
  }
  if (f.tensor("rope_freqs.weight")) {
    c.rope_scaling.type = "factors";
    c.rope_scaling.factors = rope_factors(f, "rope_freqs.weight", c.head_dim / 2);
  }
  if (f.tensor("rope_factors_long.weight") || f.tensor("rope_factors_short.weight")) longrope_fields(f, p, c);
  c.tie_word_embeddings = f.tensor(*gguf_weight_name(WeightId::Head)) == nullptr;
  c.attention_bias = row->qkv_bias || f.tensor(*gguf_weight_name(WeightId::QBias, 0)) != nullptr;
  c.take_row_layout();
  gemma_fields(f, p, *row, c);
  expert_fields(f, p, *row, c);
  c.torch_dtype = "float32";
  if (auto bos = f.int_or("tokenizer.ggml.bos_token_id")) c.bos_id = *bos;
  if (auto eos = f.int_or("tokenizer.ggml.eos_token_id")) c.eos_ids.push_back(*eos);
  if (auto eot = f.int_or("tokenizer.ggml.eot_token_id"); eot && (c.eos_ids.empty() || c.eos_ids[0] != *eot))
    c.eos_ids.push_back(*eot);
  return c;
}

std::optional<std::string> gguf_name(Arch a, const std::string& hf) {
  const WeightName* w = weight_by_hf(a, hf);
  if (!w || !w->gguf) return std::nullopt;
  if (!is_layer_weight(*w)) return w->gguf;
  const size_t from = std::strlen("model.layers."), dot = hf.find('.', from);
  return "blk." + hf.substr(from, dot - from) + "." + w->gguf;  // the layer's number as written
}

int64_t permuted_heads(const ModelConfig& c, const std::string& hf) {
  if (!c.architecture_row().gguf_permuted_qk) return 0;  // qwen2/qwen3 keep Hugging Face's row order (NeoX rope)
  const WeightName* w = weight_by_hf(c.arch, hf);
  if (!w || !w->roped) return 0;
  return w->rows == WeightDim::Q ? c.num_heads : c.num_kv_heads;
}

std::vector<std::pair<std::string, int64_t>> type_counts(const GgufFile& f) {
  std::map<std::string, int64_t> n;
  for (const auto& t : f.tensors()) ++n[type_name(t.type)];
  return {n.begin(), n.end()};
}

std::vector<std::string> describe_file(const GgufFile& f) {
  std::vector<std::string> out;
  out.push_back("GGUF v" + std::to_string(f.version()) + ", architecture " +
                f.string_or("general.architecture").value_or("(none)") +
                (f.find("general.name") ? ", name \"" + f.string_or("general.name").value_or("") + "\"" : ""));
  uint64_t bytes = 0;
  std::string types;
  for (const auto& [type, n] : type_counts(f)) types += (types.empty() ? "" : ", ") + type + " " + std::to_string(n);
  for (const auto& t : f.tensors()) bytes += t.bytes;
  out.push_back("tensors: " + std::to_string(f.tensors().size()) + " (" + types + "), " + std::to_string(bytes) +
                " bytes in the file");
  std::map<std::string, const WeightType*> rows;  // the file's types, by name as above
  for (const auto& t : f.tensors()) rows[type_name(t.type)] = weight_type(t.type);
  for (const auto& [type, wt] : rows) {
    if (wt && !wt->is_float())
      out.push_back(type + ": " + (wt->served() ? "under int8 " + int8_description(*wt) + ", under other dtypes its exact values"
                                                : std::string("not served")));
  }
  if (auto model = f.string_or("tokenizer.ggml.model")) {
    const Value* tokens = f.find("tokenizer.ggml.tokens");
    const Value* merges = f.find("tokenizer.ggml.merges");
    out.push_back("tokenizer: " + *model + (*model == "gpt2" ? " (byte-level BPE)" : *model == "llama" ? " (SentencePiece)" : "") +
                  ", pre-tokenizer " + f.string_or("tokenizer.ggml.pre").value_or("(none)") + ", " +
                  std::to_string(tokens ? tokens->items.size() : 0) + " tokens, " +
                  std::to_string(merges ? merges->items.size() : 0) + " merges");
  } else {
    out.push_back("tokenizer: none (prompts must be token ids)");
  }
  const Value* tmpl = f.find("tokenizer.chat_template");
  out.push_back(tmpl ? "chat template: yes (" + std::to_string(tmpl->s.size()) + " bytes)" : "chat template: none");
  return out;
}

}  // namespace exspec::gguf
