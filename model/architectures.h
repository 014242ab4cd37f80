// Each architecture exspec serves as one row: its names (ours, Hugging Face's classes, GGUF's
// general.architecture) and what its layers are where config.json does not say (Hugging Face's
// class defaults). Config parsing (model_config.cpp), GGUF's config (gguf_config.cpp),
// `make-model` and the docs read the row; nothing else names an architecture.
//
// Adding one: its row here (and its Arch), then what its layers need that no row field says yet:
// docs/adding-a-model.md, step by step. A layer's weight names are model/layer_weights.h's table.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/layer_kind.h"
#include "model/weight_id.h"

namespace exspec {

enum class Arch { Llama, Qwen2, Qwen3, Glm, Glm4, Mistral, Phi3, Gemma2, Gemma3, Qwen3Moe };

struct ArchitectureRow {
  Arch arch;
  const char* name;                      // "llama": make-model's --arch, config.json's model_type
  std::vector<const char*> hf_classes;   // config.json's architectures[0]; the first is what make-model writes
  const char* gguf;                      // general.architecture, or null: not served from GGUF
  const char* model_type = nullptr;      // config.json's model_type where it is not `name` (gemma3_text)
  // Hugging Face's defaults and fixed choices for the class:
  bool qkv_bias = false;                 // q/k/v biases always (Qwen2)
  bool attention_bias_default = false;   // attention_bias when config.json leaves it out (GLM: on)
  bool o_proj_bias = false;              // attention_bias biases o_proj too (Llama, Qwen3)
  bool qk_norm = false;                  // per-head RMSNorm of q and k (Qwen3)
  int64_t head_dim_default = 0;          // head_dim when config.json leaves it out (0: hidden / heads)
  bool head_dim_free = false;            // head_dim need not be hidden / heads (Qwen3)
  double partial_rotary_default = 0;     // partial_rotary_factor when config.json leaves it out; 0: every dim rotates and config.json may not say otherwise
  bool rope_interleaved = false;         // (even, odd) pairs rotate, not two halves (GLM)
  bool fused_gate_up = false;            // one mlp.gate_up_proj, gate first (GLM, Phi-3)
  bool fused_qkv = false;                // one self_attn.qkv_proj: q, then k, then v (Phi-3)
  bool sandwich_norms = false;           // post-attention and post-MLP norms before each residual add (GLM-4-0414)
  bool gguf_permuted_qk = false;         // llama.cpp's converter permutes q/k rows for its rope (Llama)
  // config.json's sliding_window bounds every layer's attention (null: none; absent: this
  // default, 0 none). Mistral, Phi-3.
  bool sliding_window_all = false;
  int64_t sliding_window_default = 0;
  // Qwen2's and Qwen3's switch: with use_sliding_window, sliding_window (default 4096) bounds the layers from
  // max_window_layers (default 28) on. Rows with neither refuse use_sliding_window. With either,
  // config.json's layer_types ("sliding_attention" / "full_attention") says which layers slide.
  bool sliding_window_switch = false;
  // Only the GGUF files that say `gguf` and carry {gguf}.attention.sliding_window are this
  // row's: a llama file with a window is Mistral's (llama.cpp's converter writes Mistral as
  // llama). A row with sliding_window_all and without this takes its files with or without one.
  bool gguf_windowed = false;
  // Gemma 3's window pattern: sliding_window (default sliding_window_default) bounds every layer
  // but each pattern-th (config.json's sliding_window_pattern, default this), unless layer_types
  // says which. 0: no pattern.
  int64_t sliding_window_pattern_default = 0;
  // Sliding layers turn by a rope of their own: rope_local_base_freq (default this), unscaled
  // (Gemma 3). 0: one rope for all layers.
  double rope_local_default = 0;
  // longrope's original context when config.json states none (Phi3Config: 4096); 0: the whole
  // context, with rope_scaling's own factor (model/rope_scaling.cpp).
  int64_t longrope_original_default = 0;
  // Soft-capping of the scores and the final logits (cap * tanh(x / cap)): config.json's
  // attn_logit_softcapping and final_logit_softcapping may ask for it (null: off; absent: these
  // defaults, 0 none). Gemma 2 (on by default), Gemma 3 (off by default).
  bool softcapping = false;
  double attn_softcap_default = 0, final_softcap_default = 0;
  // GGUF has no query_pre_attn_scalar: llama.cpp takes hidden / heads for the model of this many
  // layers (Gemma 3 27B: 62, Gemma 2 27B: 46), and the head size for the others.
  int64_t gguf_hidden_scale_layers = 0;
  // Names where Hugging Face's class differs from the table's (model/layer_weights.h): Gemma's
  // post_attention_layernorm is the norm after attention, the table's is Llama's before the MLP.
  std::vector<std::pair<WeightId, const char*>> hf_names;
  // The layers' maths (model/layer_kind.h) and the model's around them:
  NormForm norm = NormForm::Llama;              // Gemma: (1 + w), in float32
  Activation activation = Activation::Silu;     // when config.json names none (Gemma: gelu_pytorch_tanh)
  const char* activation_key = "hidden_act";    // the config.json field that names it (Gemma: hidden_activation)
  bool embedding_scaled = false;                // embeddings times sqrt(hidden_size), in the model's dtype (Gemma)
  // Attention scores scale by query_pre_attn_scalar^-0.5 (default this) instead of head_dim^-0.5
  // (Gemma). 0: head_dim.
  int64_t query_pre_attn_scalar_default = 0;
  bool tied_default = false;                    // tie_word_embeddings when config.json leaves it out (Gemma: true)
  // Layers of experts (Mlp::Experts) where config.json's num_experts, num_experts_per_tok,
  // moe_intermediate_size, decoder_sparse_step and mlp_only_layers say (Qwen3-MoE); its
  // norm_topk_prob when config.json leaves it out.
  bool experts = false;
  bool norm_topk_default = false;
};

const std::vector<ArchitectureRow>& architectures();
const ArchitectureRow& architecture(Arch a);
// By Hugging Face class, our name or GGUF name; null when no row has it.
const ArchitectureRow* architecture_by_class(const std::string& hf_class);
const ArchitectureRow* architecture_by_name(const std::string& name);
// GGUF: `windowed` when the file carries attention.sliding_window (a row with gguf_windowed).
const ArchitectureRow* architecture_by_gguf(const std::string& gguf_arch, bool windowed = false);
// "LlamaForCausalLM, MistralForCausalLM, ..." / "llama, qwen2, ..." / "llama, qwen2, qwen3": for
// error messages and usage lines.
std::string architecture_classes();
std::string architecture_names(const char* separator = ", ");
std::string architecture_gguf_names();

const char* arch_name(Arch a);  // the row's name

}  // namespace exspec
