// What kind of layer a decoder layer is: the choices of its maths that its weights do not say
// (ModelConfig::layer_kind). Every layer served today is of one kind, Llama's; later kinds (issue
// 71: a sliding window, GELU-tanh, Gemma's (1 + w) norm) are new values here, each with its maths
// in the Decoder's switch on it (model/decoder.cpp). Torch-free.
#pragma once

namespace exspec {

enum class AttentionWindow { Full };  // every earlier position of the sequence
enum class Activation { Silu };       // silu(gate) * up
enum class NormForm { Llama };        // RMSNorm: normalised in float32 at least, times w in the model's dtype

struct LayerKind {
  AttentionWindow window = AttentionWindow::Full;
  Activation activation = Activation::Silu;
  NormForm norm = NormForm::Llama;
  bool operator==(const LayerKind& o) const { return window == o.window && activation == o.activation && norm == o.norm; }
};

}  // namespace exspec
