// Rotary position embeddings, with linear, llama3 and longrope scaling. Two layouts: HF's "rotate_half"
// (Llama, Qwen; Phi-3 over the first rotary_dim dims of a head only), and GLM's partial rotary,
// where the first rotary_dim dims rotate as interleaved (even, odd) pairs. Past rotary_dim, the
// dims pass through.
#pragma once
#include <ATen/core/Tensor.h>

#include "model/model_config.h"

namespace exspec {

class Rope {
 public:
  Rope(const ModelConfig& c, at::Device device);
  // cos, sin of shape [B, 1, T, rotary_dim] in `dtype` for content positions [B, T].
  // Angles are computed in float64 (HF uses float32 here): the float64 oracle stays float64
  // end to end, and lower precisions get the correctly rounded table.
  std::pair<at::Tensor, at::Tensor> tables(const at::Tensor& position_ids, at::ScalarType dtype) const;
  const at::Tensor& inv_freq() const { return inv_freq_; }
  // x: [B, H, T, head_dim] rotated in this model's layout. `fused`: one pass on the CPU where it
  // applies (model/fused_ops.h: rotate-half in float32 or bfloat16, x [B, T, heads, D]).
  at::Tensor apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool fused = false) const;

 private:
  at::Tensor inv_freq_;  // [rotary_dim / 2], float64
  double attention_factor_ = 1.0;  // longrope: cos and sin scaled by it (HF's attention_scaling)
  bool interleaved_ = false;
};

// A forward's rope tables, [Bx, Tx, 1, rotary_dim] each, made once a forward: the model's, and
// the sliding layers' own where their kind says (RopeKind::Local, Gemma 3; else the same tensors).
struct RopeTables {
  at::Tensor cos, sin, local_cos, local_sin;
  const at::Tensor& cos_of(RopeKind k) const { return k == RopeKind::Local ? local_cos : cos; }
  const at::Tensor& sin_of(RopeKind k) const { return k == RopeKind::Local ? local_sin : sin; }
};
// The config of c's local rope (RopeKind::Local): rope_local_theta, unscaled.
ModelConfig local_rope_config(ModelConfig c);

// x: [B, H, T, D]; cos/sin from Rope::tables (rotate-half over all D dims).
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);
// GLM: the first cos.size(-1) dims of x rotate as (even, odd) pairs, the rest pass through.
at::Tensor apply_rope_interleaved_partial(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace exspec
