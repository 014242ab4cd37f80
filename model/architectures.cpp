#include "model/architectures.h"

#include <stdexcept>

#include "model/weight_id.h"

namespace exspec {
namespace {

std::vector<ArchitectureRow> make_rows() {
  std::vector<ArchitectureRow> rows;
  ArchitectureRow llama{Arch::Llama, "llama", {"LlamaForCausalLM"}, "llama"};
  llama.o_proj_bias = true;
  llama.gguf_permuted_qk = true;
  rows.push_back(llama);

  ArchitectureRow qwen2{Arch::Qwen2, "qwen2", {"Qwen2ForCausalLM"}, "qwen2"};
  qwen2.qkv_bias = true;
  qwen2.sliding_window_switch = true;
  rows.push_back(qwen2);

  ArchitectureRow qwen3{Arch::Qwen3, "qwen3", {"Qwen3ForCausalLM"}, "qwen3"};
  qwen3.o_proj_bias = true;
  qwen3.qk_norm = true;
  qwen3.head_dim_free = true;
  qwen3.sliding_window_switch = true;  // Qwen3Config has Qwen2's switch
  rows.push_back(qwen3);

  // GLM-4-9B-chat-hf (GlmConfig) and GLM-4-0414 (Glm4Config): head_dim 128 and half of each
  // head rotating unless the config says otherwise.
  ArchitectureRow glm{Arch::Glm, "glm", {"GlmForCausalLM"}, nullptr};
  glm.attention_bias_default = true;
  glm.head_dim_default = 128;
  glm.head_dim_free = true;
  glm.partial_rotary_default = 0.5;
  glm.rope_interleaved = true;
  glm.fused_gate_up = true;
  rows.push_back(glm);

  ArchitectureRow glm4 = glm;
  glm4.arch = Arch::Glm4, glm4.name = "glm4", glm4.hf_classes = {"Glm4ForCausalLM"};
  glm4.sandwich_norms = true;
  rows.push_back(glm4);

  // Mistral is Llama without biases and with a sliding window (MistralConfig: 4096 unless
  // config.json says otherwise; Mistral 7B v0.2 and later say null).
  ArchitectureRow mistral{Arch::Mistral, "mistral", {"MistralForCausalLM"}, "llama"};
  mistral.gguf_permuted_qk = true;
  mistral.sliding_window_all = true;
  mistral.sliding_window_default = 4096;
  mistral.gguf_windowed = true;
  rows.push_back(mistral);

  // Phi-3 / Phi-4: q/k/v and gate/up each one tensor, rotate-half rope over the first
  // head_dim x partial_rotary_factor dims (Phi-4-mini: 0.75), a window when the config has one
  // (Phi-3-mini-4k: 2047; Phi3Config's default: none).
  ArchitectureRow phi3{Arch::Phi3, "phi3", {"Phi3ForCausalLM"}, "phi3"};
  phi3.fused_qkv = true;
  phi3.fused_gate_up = true;
  phi3.partial_rotary_default = 1.0;
  phi3.sliding_window_all = true;
  phi3.longrope_original_default = 4096;
  rows.push_back(phi3);

  // Gemma 3 text (Gemma3TextConfig): q/k norms and sandwich norms of the (1 + w) form, GELU-tanh,
  // embeddings scaled by sqrt(hidden), scores by query_pre_attn_scalar, and five sliding layers
  // (window 4096, local rope base 10000) to each full one.
  ArchitectureRow gemma3{Arch::Gemma3, "gemma3", {"Gemma3ForCausalLM"}, "gemma3"};
  gemma3.model_type = "gemma3_text";
  gemma3.qk_norm = true;
  gemma3.o_proj_bias = true;  // attention_bias biases o_proj too (Gemma3Attention)
  gemma3.head_dim_default = 256;
  gemma3.head_dim_free = true;
  gemma3.sandwich_norms = true;
  gemma3.sliding_window_default = 4096;
  gemma3.sliding_window_pattern_default = 6;
  gemma3.rope_local_default = 10000.0;
  gemma3.hf_names = {{WeightId::PostAttnNorm, "post_attention_layernorm.weight"},
                     {WeightId::MlpNorm, "pre_feedforward_layernorm.weight"},
                     {WeightId::PostMlpNorm, "post_feedforward_layernorm.weight"}};
  gemma3.norm = NormForm::Gemma;
  gemma3.activation = Activation::GeluTanh;
  gemma3.activation_key = "hidden_activation";
  gemma3.embedding_scaled = true;
  gemma3.query_pre_attn_scalar_default = 256;
  gemma3.tied_default = true;
  gemma3.gguf_hidden_scale_layers = 62;
  gemma3.softcapping = true;

  // Gemma 2 (Gemma2Config): Gemma 3's layers without its q/k norms and local rope, each 2nd layer
  // full, and the scores and the final logits soft-capped (cap * tanh(x / cap)).
  ArchitectureRow gemma2 = gemma3;
  gemma2.arch = Arch::Gemma2, gemma2.name = "gemma2", gemma2.hf_classes = {"Gemma2ForCausalLM"};
  gemma2.gguf = "gemma2", gemma2.model_type = nullptr;
  gemma2.qk_norm = false;
  gemma2.rope_local_default = 0;
  gemma2.sliding_window_pattern_default = 2;
  gemma2.attn_softcap_default = 50.0;
  gemma2.final_softcap_default = 30.0;
  gemma2.gguf_hidden_scale_layers = 46;
  rows.push_back(gemma2);
  rows.push_back(gemma3);

  // Qwen3-MoE: Qwen3's attention, and experts in place of the MLP (Qwen3MoeConfig: on every layer
  // unless decoder_sparse_step or mlp_only_layers say otherwise; norm_topk_prob off by default).
  ArchitectureRow qwen3moe = qwen3;
  qwen3moe.arch = Arch::Qwen3Moe, qwen3moe.name = "qwen3moe", qwen3moe.hf_classes = {"Qwen3MoeForCausalLM"};
  qwen3moe.gguf = "qwen3moe", qwen3moe.model_type = "qwen3_moe";
  qwen3moe.experts = true;
  rows.push_back(qwen3moe);
  return rows;
}

template <class Pred>
const ArchitectureRow* find(Pred pred) {
  for (const ArchitectureRow& r : architectures())
    if (pred(r)) return &r;
  return nullptr;
}

}  // namespace

const std::vector<ArchitectureRow>& architectures() {
  static const std::vector<ArchitectureRow> rows = make_rows();
  return rows;
}

const ArchitectureRow& architecture(Arch a) {
  if (const ArchitectureRow* r = find([&](const ArchitectureRow& r) { return r.arch == a; })) return *r;
  throw std::logic_error("architecture: no row for an Arch");
}

const ArchitectureRow* architecture_by_class(const std::string& hf_class) {
  return find([&](const ArchitectureRow& r) {
    for (const char* c : r.hf_classes)
      if (hf_class == c) return true;
    return false;
  });
}

const ArchitectureRow* architecture_by_name(const std::string& name) {
  return find([&](const ArchitectureRow& r) { return name == r.name; });
}

const ArchitectureRow* architecture_by_gguf(const std::string& gguf_arch, bool windowed) {
  auto named = [&](const ArchitectureRow& r) { return r.gguf && gguf_arch == r.gguf; };
  if (windowed)
    if (const ArchitectureRow* r = find([&](const ArchitectureRow& r) { return named(r) && r.gguf_windowed; })) return r;
  const ArchitectureRow* r = find([&](const ArchitectureRow& r) { return named(r) && !r.gguf_windowed; });
  return r && (!windowed || r->sliding_window_all || r->sliding_window_pattern_default > 0) ? r : nullptr;
}

std::string architecture_classes() {
  std::string out;
  for (const ArchitectureRow& r : architectures())
    for (const char* c : r.hf_classes) out += (out.empty() ? "" : ", ") + std::string(c);
  return out;
}

std::string architecture_names(const char* separator) {
  std::string out;
  for (const ArchitectureRow& r : architectures()) out += (out.empty() ? "" : separator) + std::string(r.name);
  return out;
}

std::string architecture_gguf_names() {
  std::string out;
  for (const ArchitectureRow& r : architectures())
    if (r.gguf && !r.gguf_windowed) out += (out.empty() ? "" : ", ") + std::string(r.gguf);
  return out;
}

const char* arch_name(Arch a) { return architecture(a).name; }

}  // namespace exspec
