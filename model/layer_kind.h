// What kind of layer a decoder layer is: the choices of its maths that its weights do not say
// (ModelConfig::layer_kind). Llama's kind; Mistral's sliding window; Gemma 3's GELU-tanh, (1 + w)
// norm and local rope; Qwen3-MoE's experts. A new kind is a new value here, with its maths in the
// Decoder's switch on it (model/decoder.cpp; a window is the mask its layers attend under, a rope
// kind its table, experts model/experts.h).
// Torch-free.
#pragma once

namespace exspec {

// Full: every earlier position of the sequence. Sliding: the query's own position and the
// ModelConfig::sliding_window - 1 before it (Hugging Face's sliding_window_overlay, llama.cpp's
// standard SWA: a key is hidden once query - key >= the window).
enum class AttentionWindow { Full, Sliding };
// Silu: silu(gate) * up. GeluTanh: gelu(gate) * up with gelu's tanh form (Hugging Face's
// gelu_pytorch_tanh; llama.cpp's LLM_FFN_GELU).
enum class Activation { Silu, GeluTanh };
// RMSNorm. Llama: normalised in float32 at least, then times w in the model's dtype. Gemma:
// normalised and times the multiplier (1 + w) in float32 at least, rounded to the model's dtype
// once (Gemma3RMSNorm); the Decoder keeps the multiplier, made at load (ModelConfig::norm_offset).
enum class NormForm { Llama, Gemma };
// The rope table a layer's q and k turn by: the model's (rope_theta and its scaling), or Gemma 3's
// local one on its sliding layers (rope_local_base_freq, unscaled).
enum class RopeKind { Global, Local };
// The MLP after attention. Dense: one gated MLP of intermediate_size. Experts: a router chooses
// top-k of the layer's experts for each row, whose gated MLPs (moe_intermediate_size) are summed
// with the router's weights, in ascending expert order (Qwen3MoeSparseMoeBlock; model/experts.h).
enum class Mlp { Dense, Experts };

struct LayerKind {
  AttentionWindow window = AttentionWindow::Full;
  Activation activation = Activation::Silu;
  NormForm norm = NormForm::Llama;
  RopeKind rope = RopeKind::Global;
  Mlp mlp = Mlp::Dense;
  bool operator==(const LayerKind& o) const {
    return window == o.window && activation == o.activation && norm == o.norm && rope == o.rope && mlp == o.mlp;
  }
};

}  // namespace exspec
