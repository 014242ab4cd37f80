// Rotary position embeddings (HF "rotate_half" convention), with linear and llama3 scaling.
#pragma once
#include <ATen/core/Tensor.h>

#include "model/model_config.h"

namespace exspec {

class Rope {
 public:
  Rope(const ModelConfig& c, at::Device device);
  // cos, sin of shape [B, 1, T, head_dim] in `dtype` for content positions [B, T].
  // Angles are computed in float64 (HF uses float32 here): the float64 oracle stays float64
  // end to end, and lower precisions get the correctly rounded table.
  std::pair<at::Tensor, at::Tensor> tables(const at::Tensor& position_ids, at::ScalarType dtype) const;
  const at::Tensor& inv_freq() const { return inv_freq_; }

 private:
  at::Tensor inv_freq_;  // [head_dim / 2], float64
};

// x: [B, H, T, D]; cos/sin from Rope::tables.
at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace exspec
