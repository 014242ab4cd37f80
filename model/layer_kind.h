// What kind of layer a decoder layer is: the choices of its maths that its weights do not say
// (ModelConfig::layer_kind). Llama's kind, and Mistral's sliding window; later kinds (issue 71:
// GELU-tanh, Gemma's (1 + w) norm) are new values here, each with its maths in the Decoder's
// switch on it (model/decoder.cpp; a window is the mask its layers attend under). Torch-free.
#pragma once

namespace exspec {

// Full: every earlier position of the sequence. Sliding: the query's own position and the
// ModelConfig::sliding_window - 1 before it (Hugging Face's sliding_window_overlay, llama.cpp's
// standard SWA: a key is hidden once query - key >= the window).
enum class AttentionWindow { Full, Sliding };
enum class Activation { Silu };       // silu(gate) * up
enum class NormForm { Llama };        // RMSNorm: normalised in float32 at least, times w in the model's dtype

struct LayerKind {
  AttentionWindow window = AttentionWindow::Full;
  Activation activation = Activation::Silu;
  NormForm norm = NormForm::Llama;
  bool operator==(const LayerKind& o) const { return window == o.window && activation == o.activation && norm == o.norm; }
};

}  // namespace exspec
