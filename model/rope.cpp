#include "model/rope.h"

#include <ATen/ATen.h>

#include <cmath>

#include "model/fused_ops.h"

namespace exspec {

Rope::Rope(const ModelConfig& c, at::Device device) : interleaved_(c.rope_interleaved) {
  // The frequencies span the rotated dims only (HF: dim = head_dim * partial_rotary_factor).
  const int64_t dim = c.rotary_dim(), half = dim / 2;
  at::Tensor idx = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kDouble));
  at::Tensor inv = 1.0 / at::pow(c.rope_theta, idx / static_cast<double>(dim));
  const RopeScaling& rs = c.rope_scaling;
  if (rs.type == "linear") {
    inv = inv / rs.factor;
  } else if (rs.type == "factors") {
    TORCH_CHECK(static_cast<int64_t>(rs.factors.size()) == half, "rope: ", rs.factors.size(), " factors for ", half,
                " frequencies");
    inv = inv / at::tensor(rs.factors, at::TensorOptions().dtype(at::kDouble));
  } else if (rs.type == "longrope") {  // HF's order: 1 / (factor * base^(2i/dim))
    TORCH_CHECK(static_cast<int64_t>(rs.factors.size()) == half, "rope: longrope has ", rs.factors.size(),
                " factors for ", half, " frequencies (choose_longrope sets them)");
    inv = 1.0 / (at::tensor(rs.factors, at::TensorOptions().dtype(at::kDouble)) * at::pow(c.rope_theta, idx / static_cast<double>(dim)));
    attention_factor_ = rs.attention_factor;
  } else if (rs.type == "llama3") {
    // Meta's Llama 3.1 frequency-dependent scaling: long wavelengths are slowed by `factor`,
    // short ones kept, and the band between them interpolated smoothly.
    const double old_ctx = static_cast<double>(rs.original_max_position_embeddings);
    const double low_wavelen = old_ctx / rs.low_freq_factor;
    const double high_wavelen = old_ctx / rs.high_freq_factor;
    at::Tensor wavelen = 2.0 * M_PI / inv;
    at::Tensor scaled = at::where(wavelen > low_wavelen, inv / rs.factor, inv);
    at::Tensor smooth = (old_ctx / wavelen - rs.low_freq_factor) / (rs.high_freq_factor - rs.low_freq_factor);
    at::Tensor smoothed = (1.0 - smooth) * scaled / rs.factor + smooth * scaled;
    at::Tensor medium = (wavelen >= high_wavelen).logical_and(wavelen <= low_wavelen);
    inv = at::where(medium, smoothed, scaled);
  }
  TORCH_CHECK(inv.size(0) == half);
  inv_freq_ = inv.to(device);
}

ModelConfig local_rope_config(ModelConfig c) {
  if (c.rope_local_theta > 0) c.rope_theta = c.rope_local_theta, c.rope_scaling = RopeScaling{};
  return c;
}

std::pair<at::Tensor, at::Tensor> Rope::tables(const at::Tensor& position_ids, at::ScalarType dtype) const {
  at::Tensor angles = position_ids.to(at::kDouble).unsqueeze(-1) * inv_freq_;  // [B, T, R/2]
  // rotate-half pairs dim i with i + R/2; interleaved pairs 2i with 2i + 1: each layout needs
  // frequency i at both members of its pair.
  at::Tensor emb = (interleaved_ ? angles.repeat_interleave(2, -1) : at::cat({angles, angles}, -1)).unsqueeze(1);
  if (attention_factor_ != 1.0) return {(emb.cos() * attention_factor_).to(dtype), (emb.sin() * attention_factor_).to(dtype)};
  return {emb.cos().to(dtype), emb.sin().to(dtype)};
}

at::Tensor Rope::apply(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, bool fused) const {
  if (interleaved_) return apply_rope_interleaved_partial(x, cos, sin);
  const int64_t R = cos.size(-1), D = x.size(-1);
  if (R < D)  // Phi-3: rotate-half over the first R dims, the rest pass through
    return at::cat({apply_rope(x.narrow(-1, 0, R), cos, sin), x.narrow(-1, R, D - R)}, -1);
  at::Tensor y = fused ? fused_rope(x, cos, sin) : at::Tensor();
  return y.defined() ? y : apply_rope(x, cos, sin);
}

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  at::Tensor x1 = x.narrow(-1, 0, half);
  at::Tensor x2 = x.narrow(-1, half, half);
  at::Tensor rotated = at::cat({-x2, x1}, -1);
  return x * cos + rotated * sin;
}

at::Tensor apply_rope_interleaved_partial(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t R = cos.size(-1), D = x.size(-1);
  at::Tensor rot = x.narrow(-1, 0, R);
  // (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)
  at::Tensor pairs = rot.unflatten(-1, {R / 2, 2});
  at::Tensor rotated = at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
  at::Tensor out = rot * cos + rotated * sin;
  return R == D ? out : at::cat({out, x.narrow(-1, R, D - R)}, -1);
}

}  // namespace exspec
