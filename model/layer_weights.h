// Every weight a checkpoint holds, named once: its Hugging Face name, its GGUF twin, its shape in
// the config's sizes, when a model has it and how it is used. The checkpoint's expected tensors
// (checkpoint.cpp), the Decoder's constructor, GGUF's names (gguf_config.cpp) and fused groups
// (gguf_weights.cpp), and make-model's initialisation read this table. Torch-free.
//
// What varies by architecture comes from its row (model/architectures.h) through the config:
// q/k/v and o biases, Qwen3's q/k norms, GLM's and Phi-3's fused gate_up_proj, Phi-3's fused
// qkv_proj, GLM-4's sandwich norms.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "model/weight_id.h"

namespace exspec {

// A size of the config; a shape is [rows] or [rows, cols]. Inter2: 2 * intermediate_size;
// Q: heads * head_dim; KV: kv_heads * head_dim; Qkv: Q + 2 KV; Head: head_dim; Experts:
// num_experts; ExpertInter: an expert's moe_intermediate_size.
enum class WeightDim { None, Vocab, Hidden, Inter, Inter2, Q, KV, Qkv, Head, Experts, ExpertInter };
// When a model has the weight (a ModelConfig field, set from the row and config.json). The MLP's
// depend on the layer's kind too: SplitMlp, FusedMlp and DenseMlp are a dense layer's, Experts a
// layer of experts' (model/layer_kind.h).
enum class WeightWhen { Always, Untied, SplitQkv, FusedQkv, QkvBias, OBias, QkNorm, SplitMlp, FusedMlp, DenseMlp, Sandwich, Experts };
// How it is used, as far as loaders and make-model care.
enum class WeightRole {
  Table,     // embedding or head rows
  Norm,      // an RMSNorm's weight (make-model draws it around 1)
  PostNorm,  // a sandwich norm of a branch's output (make-model damps it in later layers)
  Product,   // a matrix multiplied by the activations
  Out,       // a product that writes a branch's output to the residual (make-model damps it in later layers)
  Bias,
  Router,    // a layer's router: a product whose logits choose the experts
};
// Weights multiplied as one product, their rows concatenated in table order. ExpertGateUp: one
// expert's gate and up.
enum class WeightGroup { None, Qkv, GateUp, ExpertGateUp };

struct WeightName {
  WeightId id;
  // A layer's: after "model.layers.N."; the model's: the whole name (hf_name: a row may differ).
  // An expert's holds '*' where its number goes (one tensor an expert).
  const char* hf;
  // The same after "blk.N."; null: no twin (its architectures are not served from GGUF). An
  // expert's is one 3-D tensor of all the layer's experts, [experts, rows, cols].
  const char* gguf;
  WeightDim rows, cols;  // cols None: a vector
  WeightWhen when;
  WeightRole role;
  WeightGroup group = WeightGroup::None;
  bool roped = false;  // q or k: rotated, so llama.cpp's converter permuted its rows (ArchitectureRow::gguf_permuted_qk)
};

// The model's weights and a layer's, in checkpoint order (the embedding, the layers, the rest).
const std::vector<WeightName>& model_weights();
const std::vector<WeightName>& layer_weights();
const WeightName& weight_name(WeightId id);
// The weight's Hugging Face name in architecture a's checkpoints: the table's, unless the row says
// otherwise (ArchitectureRow::hf_names: Gemma's norms).
const char* hf_name(Arch a, const WeightName& w);
// The row of a Hugging Face name ("model.layers.3.self_attn.q_proj.weight", "lm_head.weight") in
// architecture a's checkpoints, or null.
const WeightName* weight_by_hf(Arch a, const std::string& name);
bool is_layer_weight(const WeightName& w);
bool is_expert_weight(const WeightName& w);  // one tensor an expert (its name holds the number)

// Whether layer `layer` of a model of config c has the weight (the model's own: layer ignored).
bool has_weight(const ModelConfig& c, const WeightName& w, int64_t layer);
// The members of `group` layer `layer` has, in table order: its matrices, or with `bias` its
// biases (q, k and v; GLM's one gate_up_proj, or gate and up). Multiplied as one product.
std::vector<const WeightName*> group_weights(const ModelConfig& c, WeightGroup group, int64_t layer, bool bias = false);
std::vector<int64_t> weight_shape(const ModelConfig& c, const WeightName& w);  // an expert's: one expert's
// Full names: "model.layers.3.self_attn.q_proj.weight" / "blk.3.attn_q.weight" (layer ignored for
// the model's own weights; expert: an expert's number, ignored for the others); the GGUF one
// nullopt where there is no twin, an expert's the 3-D tensor of all of them.
std::string hf_weight_name(Arch a, WeightId id, int64_t layer = 0, int64_t expert = -1);
std::optional<std::string> gguf_weight_name(WeightId id, int64_t layer = 0);
// The expert number in a Hugging Face name ("model.layers.3.mlp.experts.5.up_proj.weight": 5), or -1.
int64_t expert_of(const std::string& hf_name);

}  // namespace exspec
