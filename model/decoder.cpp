#include "model/decoder.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/attention.h"

namespace exspec {
namespace {

// HF RMSNorm: normalise in float32 at least, scale in the model dtype.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
  const bool low = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
  at::Tensor xf = low ? x.to(at::kFloat) : x;
  at::Tensor var = xf.pow(2).mean(-1, /*keepdim=*/true);
  xf = xf * at::rsqrt(var + eps);
  return w * xf.to(x.scalar_type());
}

at::Tensor get(const WeightMap& w, const std::string& name) {
  auto it = w.find(name);
  if (it == w.end()) throw std::runtime_error("missing weight \"" + name + "\"");
  return it->second;
}

}  // namespace

Decoder::Decoder(ModelConfig config, const WeightMap& w, at::ScalarType dtype, at::Device device)
    : config_(std::move(config)), dtype_(dtype), device_(device), rope_(config_, device) {
  embed_ = get(w, "model.embed_tokens.weight");
  norm_ = get(w, "model.norm.weight");
  lm_head_ = config_.tie_word_embeddings ? embed_ : get(w, "lm_head.weight");
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Layer l;
    l.ln1 = get(w, p + "input_layernorm.weight");
    l.ln2 = get(w, p + "post_attention_layernorm.weight");
    l.wq = get(w, p + "self_attn.q_proj.weight");
    l.wk = get(w, p + "self_attn.k_proj.weight");
    l.wv = get(w, p + "self_attn.v_proj.weight");
    l.wo = get(w, p + "self_attn.o_proj.weight");
    if (config_.attention_bias) {
      l.bq = get(w, p + "self_attn.q_proj.bias");
      l.bk = get(w, p + "self_attn.k_proj.bias");
      l.bv = get(w, p + "self_attn.v_proj.bias");
    }
    if (config_.o_proj_bias()) l.bo = get(w, p + "self_attn.o_proj.bias");
    if (config_.qk_norm) {
      l.q_norm = get(w, p + "self_attn.q_norm.weight");
      l.k_norm = get(w, p + "self_attn.k_norm.weight");
    }
    if (config_.fused_gate_up) {  // GLM: views of the fused [gate; up] rows, no copy
      const at::Tensor gate_up = get(w, p + "mlp.gate_up_proj.weight");
      l.w_gate = gate_up.narrow(0, 0, config_.intermediate_size);
      l.w_up = gate_up.narrow(0, config_.intermediate_size, config_.intermediate_size);
    } else {
      l.w_gate = get(w, p + "mlp.gate_proj.weight");
      l.w_up = get(w, p + "mlp.up_proj.weight");
    }
    l.w_down = get(w, p + "mlp.down_proj.weight");
    if (config_.sandwich_norms) {
      l.post_attn_norm = get(w, p + "post_self_attn_layernorm.weight");
      l.post_mlp_norm = get(w, p + "post_mlp_layernorm.weight");
    }
    layers_.push_back(std::move(l));
  }
}

std::shared_ptr<const Decoder> Decoder::load(const std::string& dir, const LoadOptions& opts) {
  ModelConfig c = ModelConfig::load(dir);
  WeightMap w = load_weights(dir, c, opts.dtype, opts.device);
  return std::make_shared<const Decoder>(std::move(c), w, opts.dtype, opts.device);
}

KVCache Decoder::new_cache(int64_t batch, int64_t capacity) const {
  return KVCache(config_.num_layers, batch, config_.num_kv_heads, config_.head_dim, dtype_, device_, capacity);
}

int64_t Decoder::num_parameters() const {
  int64_t n = embed_.numel() + norm_.numel() + (config_.tie_word_embeddings ? 0 : lm_head_.numel());
  for (const auto& l : layers_)
    for (const at::Tensor* t : {&l.ln1, &l.ln2, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.bo, &l.q_norm,
                                &l.k_norm, &l.w_gate, &l.w_up, &l.w_down, &l.post_attn_norm, &l.post_mlp_norm})
      if (t->defined()) n += t->numel();
  return n;
}

at::Tensor Decoder::forward(const at::Tensor& input_ids, const at::Tensor& position_ids,
                            const at::Tensor& attention_mask, KVCache& cache, int64_t num_logits) const {
  at::NoGradGuard no_grad;
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, D = config_.head_dim;
  const int64_t cached = cache.length();
  if (cache.num_layers() != config_.num_layers || (cached > 0 && cache.batch() != B))
    throw std::invalid_argument("Decoder::forward: KV cache does not match the batch");
  if (position_ids.sizes() != input_ids.sizes() || attention_mask.size(0) != B || attention_mask.size(1) != cached + T)
    throw std::invalid_argument("Decoder::forward: position_ids / attention_mask shapes do not match the input");

  at::Tensor ids = input_ids.to(device_, at::kLong);
  at::Tensor h = at::embedding(embed_, ids);
  auto [cos, sin] = rope_.tables(position_ids.to(device_), dtype_);
  at::Tensor allowed = attention_allowed(attention_mask.to(device_), cached, T);
  cache.reserve(T);

  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const Layer& l = layers_[i];
    at::Tensor x = rms_norm(h, l.ln1, config_.rms_norm_eps);
    at::Tensor q = at::linear(x, l.wq, l.bq).view({B, T, H, D});
    at::Tensor k = at::linear(x, l.wk, l.bk).view({B, T, Hkv, D});
    at::Tensor v = at::linear(x, l.wv, l.bv).view({B, T, Hkv, D});
    if (config_.qk_norm) {
      q = rms_norm(q, l.q_norm, config_.rms_norm_eps);
      k = rms_norm(k, l.k_norm, config_.rms_norm_eps);
    }
    q = rope_.apply(q.transpose(1, 2), cos, sin);
    k = rope_.apply(k.transpose(1, 2), cos, sin);
    auto [keys, values] = cache.append(i, k, v.transpose(1, 2));
    at::Tensor a = attention(q, keys, values, allowed).transpose(1, 2).reshape({B, T, H * D});
    at::Tensor attn_out = at::linear(a, l.wo, l.bo);
    if (l.post_attn_norm.defined()) attn_out = rms_norm(attn_out, l.post_attn_norm, config_.rms_norm_eps);
    h = h + attn_out;
    x = rms_norm(h, l.ln2, config_.rms_norm_eps);
    at::Tensor mlp_out = at::linear(at::silu(at::linear(x, l.w_gate)) * at::linear(x, l.w_up), l.w_down);
    if (l.post_mlp_norm.defined()) mlp_out = rms_norm(mlp_out, l.post_mlp_norm, config_.rms_norm_eps);
    h = h + mlp_out;
  }
  cache.advance(T);

  if (num_logits >= 0 && num_logits < T) h = h.narrow(1, T - num_logits, num_logits);
  return at::linear(rms_norm(h, norm_, config_.rms_norm_eps), lm_head_);
}

}  // namespace exspec
