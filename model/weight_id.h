// Which weight of a checkpoint, by its role in the decoder: the id the weight table
// (model/layer_weights.h) and an architecture's own names (model/architectures.h) key on.
#pragma once

namespace exspec {

// Which weight: what the Decoder asks for.
enum class WeightId {
  Embed, FinalNorm, Head,  // the model's own
  AttnNorm, Qkv, Q, K, V, QBias, KBias, VBias, QNorm, KNorm, O, OBias, PostAttnNorm,  // a layer's attention
  MlpNorm, GateUp, Gate, Up, Down, PostMlpNorm,                                  // a layer's MLP
  Router, ExpertGate, ExpertUp, ExpertDown,  // a layer's mixture of experts (one of each an expert)
};

}  // namespace exspec
