// The decoder's shape, read from a Hugging Face config.json (plus generation_config.json for EOS).
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/architectures.h"
#include "model/layer_kind.h"

namespace exspec {

struct RopeScaling {
  std::string type = "default";  // default | linear | llama3 | factors | longrope
  // "factors": a GGUF file's rope_freqs (llama.cpp's form of llama3 scaling): frequency i is
  // divided by factors[i].
  std::vector<double> factors;
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
  // "longrope" (Phi-3-128k, Phi-3.5, Phi-4-mini): frequency i is divided by short_factors[i], or
  // by long_factors[i] when long_context (the float32 values HF holds), and cos and sin are
  // scaled by attention_factor. HF switches by the forward's length, so its answer depends on
  // how a sequence was run; a load serves one set (choose_longrope, model/rope.h).
  std::vector<double> short_factors, long_factors;
  double attention_factor = 1.0;
  bool long_context = false;
  int64_t long_positions = 0;  // the config's context, which the long factors serve (choose_longrope)
  // A longrope load on its short factors: the context --longrope long would serve; else 0.
  int64_t longer_context() const { return type == "longrope" && !long_context ? long_positions : 0; }
};

// A mixture of experts' shape (Qwen3MoeConfig): num_experts 0 is a dense model.
struct ExpertsConfig {
  int64_t num_experts = 0;
  int64_t top_k = 0;                  // num_experts_per_tok: the experts each row goes through
  int64_t intermediate_size = 0;      // moe_intermediate_size: each expert's gated MLP
  bool norm_topk_prob = false;        // the top-k weights renormalised to sum to 1
  // Which layers are dense (config.json's mlp_only_layers, and those decoder_sparse_step skips);
  // empty: none.
  std::vector<int64_t> dense_layers;
};

struct ModelConfig {
  Arch arch = Arch::Llama;
  std::string architecture;  // the HF class name, e.g. "LlamaForCausalLM"
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v biases (always on for Qwen2; GLM's default)
  // HF: Llama/Qwen3 with attention_bias bias o_proj too; Qwen2 and GLM bias q/k/v only.
  bool o_proj_bias() const { return attention_bias && architecture_row().o_proj_bias; }
  const ArchitectureRow& architecture_row() const { return exspec::architecture(arch); }
  bool qk_norm = false;         // per-head RMSNorm of q and k (Qwen3)
  // GLM, Phi-3: only the first head_dim * partial_rotary_factor dims of a head rotate; GLM's as
  // interleaved (even, odd) pairs instead of Llama's two halves.
  double partial_rotary_factor = 1.0;
  bool rope_interleaved = false;
  int64_t rotary_dim() const { return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor); }
  bool fused_gate_up = false;   // GLM, Phi-3: one mlp.gate_up_proj [2 * intermediate, hidden], gate first
  bool fused_qkv = false;       // Phi-3: one self_attn.qkv_proj [(heads + 2 kv_heads) * head_dim, hidden]
  bool sandwich_norms = false;  // GLM-4-0414: post_self_attn_ / post_mlp_layernorm before each residual add
  // Positions a sliding layer's query sees, its own included (model/layer_kind.h); 0: no layer
  // slides. Mistral's sliding_window, or a GGUF file's attention.sliding_window.
  int64_t sliding_window = 0;
  // Which layers slide when sliding_window > 0; empty: every layer (Mistral, Phi-3). Qwen2's
  // max_window_layers, or config.json's layer_types.
  std::vector<AttentionWindow> layer_windows;
  // Gemma 3: sliding layers turn by a rope of this base, unscaled (model/layer_kind.h); 0: every
  // layer by rope_theta.
  double rope_local_theta = 0;
  Activation activation = Activation::Silu;  // the MLP's (config.json's hidden_act / hidden_activation)
  // Added to each norm weight at load, in float32, to make the multiplier of a Gemma-form norm:
  // 1 for Hugging Face's files, which hold w of (1 + w); 0 for GGUF's, whose converter added it.
  double norm_offset = 0;
  // Attention scores scale by query_pre_attn_scalar^-0.5 (Gemma); 0: by head_dim^-0.5.
  double query_pre_attn_scalar = 0;
  // Gemma 2: each score capped to cap * tanh(score / cap) after its scale, before the mask; the
  // final logits likewise (HF's attn_logit_softcapping, final_logit_softcapping). 0: none.
  double attn_logit_softcapping = 0, final_logit_softcapping = 0;
  ExpertsConfig experts;  // Qwen3-MoE; num_experts 0 elsewhere
  double attention_scale() const;
  // The embeddings' factor (sqrt(hidden_size) for Gemma, else 1), before rounding to the model's dtype.
  double embedding_scale() const;
  // The row's layout choices into the fields above: q/k norms, interleaved rope, fused
  // products, sandwich norms (config.json, GGUF and make-model alike).
  void take_row_layout();
  // Layer `layer`'s kind (model/layer_kind.h), from the row and the fields above; throws
  // std::out_of_range outside [0, num_layers).
  LayerKind layer_kind(int64_t layer) const;
  std::string torch_dtype = "float32";  // the stored dtype, as HF records it
  std::optional<int64_t> bos_id;
  std::vector<int64_t> eos_ids;

  // Parses config.json text; `where` names the file in error messages.
  static ModelConfig parse(const std::string& json_text, const std::string& where);
  // Reads DIR/config.json and, when present, DIR/generation_config.json (its eos ids win).
  static ModelConfig load(const std::string& dir);
  // config.json text that parse() reads back (used by make-model).
  std::string to_json_text() const;
};

// rope_scaling of config.json `j` (default, linear, llama3, longrope) for a class of `row`;
// `where` names the file. model/rope_scaling.cpp, as are the three below.
RopeScaling parse_rope_scaling(const nlohmann::json& j, const ArchitectureRow& row, const std::string& where);
// c's rope_scaling written into config.json `j`, as parse_rope_scaling reads it back.
void rope_scaling_json(const ModelConfig& c, nlohmann::json& j);
// HF's longrope attention factor: sqrt(1 + ln factor / ln original), 1 for factor <= 1.
double longrope_attention_factor(double factor, int64_t original);
// The set of longrope factors a load serves (LoadOptions::long_context): the short ones, with the
// context capped at the original (HF's answer for every sequence that fits), or the long ones for
// every sequence (llama.cpp's choice for a context past the original; HF's answer once a prompt is
// longer than the original). Other scalings are returned as they are.
ModelConfig choose_longrope(ModelConfig c, bool long_context);

}  // namespace exspec
