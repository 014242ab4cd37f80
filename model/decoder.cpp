#include "model/decoder.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

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

Decoder::Decoder(ModelConfig config, const WeightMap& w, const LoadOptions& opts)
    : config_(std::move(config)), onednn_(opts.pack_weights), dtype_(opts.dtype), device_(opts.device), rope_(config_, opts.device) {
  const bool pack = opts.pack_weights;
  embed_ = get(w, "model.embed_tokens.weight");
  norm_ = get(w, "model.norm.weight");
  lm_head_ = Linear(config_.tie_word_embeddings ? embed_ : get(w, "lm_head.weight"), {}, pack);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Layer l;
    l.ln1 = get(w, p + "input_layernorm.weight");
    l.ln2 = get(w, p + "post_attention_layernorm.weight");
    at::Tensor wqkv = at::cat({get(w, p + "self_attn.q_proj.weight"), get(w, p + "self_attn.k_proj.weight"),
                               get(w, p + "self_attn.v_proj.weight")});
    at::Tensor bqkv;
    if (config_.attention_bias)
      bqkv = at::cat({get(w, p + "self_attn.q_proj.bias"), get(w, p + "self_attn.k_proj.bias"),
                      get(w, p + "self_attn.v_proj.bias")});
    l.qkv = Linear(wqkv, bqkv, pack);
    l.o = Linear(get(w, p + "self_attn.o_proj.weight"),
                 config_.o_proj_bias() ? get(w, p + "self_attn.o_proj.bias") : at::Tensor(), pack);
    if (config_.qk_norm) {  // per head: q's weight on each of the H heads, then k's on the Hkv
      at::Tensor qn = get(w, p + "self_attn.q_norm.weight"), kn = get(w, p + "self_attn.k_norm.weight");
      l.qk_norm = at::cat({qn.expand({config_.num_heads, qn.size(0)}), kn.expand({config_.num_kv_heads, kn.size(0)})});
    }
    // GLM stores gate and up fused already ([gate; up] rows), as this decoder multiplies them.
    l.gate_up = Linear(config_.fused_gate_up ? get(w, p + "mlp.gate_up_proj.weight")
                                             : at::cat({get(w, p + "mlp.gate_proj.weight"), get(w, p + "mlp.up_proj.weight")}),
                       {}, pack);
    l.down = Linear(get(w, p + "mlp.down_proj.weight"), {}, pack);
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
  return std::make_shared<const Decoder>(std::move(c), w, opts);
}

KVCache Decoder::new_cache(int64_t batch, int64_t capacity) const {
  return KVCache(config_.num_layers, batch, config_.num_kv_heads, config_.head_dim, dtype_, device_, capacity);
}

int64_t Decoder::num_parameters() const {
  int64_t n = embed_.numel() + norm_.numel() + (config_.tie_word_embeddings ? 0 : lm_head_.numel());
  for (const auto& l : layers_) {
    for (const at::Tensor* t : {&l.ln1, &l.ln2, &l.post_attn_norm, &l.post_mlp_norm})
      if (t->defined()) n += t->numel();
    if (l.qk_norm.defined()) n += 2 * config_.head_dim;  // q_norm and k_norm as stored
    for (const Linear* f : {&l.qkv, &l.o, &l.gate_up, &l.down}) n += f->numel();
  }
  return n;
}

at::Tensor Decoder::layers(at::Tensor h, const at::Tensor& positions, const at::Tensor& blocked, const KVStep& kv,
                           const at::Tensor& content) const {
  const int64_t B = positions.size(0), T = positions.size(1);
  const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, D = config_.head_dim;
  // Packed, the rows of h are the N content positions of the [B, T] layout; the products, the
  // norms and the rope run on those alone ([1, N] below), and only attention sees [B, T].
  const bool packed = content.defined();
  const int64_t N = packed ? content.size(0) : B * T, Bx = packed ? 1 : B, Tx = packed ? N : T;
  at::Tensor pos = packed ? positions.reshape({1, B * T}).index_select(1, content) : positions;
  auto [cos, sin] = rope_.tables(pos.to(device_), dtype_);
  cos = cos.transpose(1, 2), sin = sin.transpose(1, 2);  // [Bx, Tx, 1, D]: one table for all heads
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const Layer& l = layers_[i];
    at::Tensor x = rms_norm(h, l.ln1, config_.rms_norm_eps);
    at::Tensor qkv = l.qkv(x);  // [N, (H + 2 Hkv) D]: q, k, v
    // q and k take the same rotation, so one rope (and one q/k norm) runs over their H + Hkv
    // heads: element for element the same arithmetic, in half the operator calls.
    at::Tensor qk = qkv.narrow(-1, 0, (H + Hkv) * D).view({Bx, Tx, H + Hkv, D});
    at::Tensor v = qkv.narrow(-1, (H + Hkv) * D, Hkv * D).view({Bx, Tx, Hkv, D});
    if (config_.qk_norm) qk = rms_norm(qk, l.qk_norm, config_.rms_norm_eps);
    qk = rope_.apply(qk, cos, sin);
    at::Tensor q = qk.narrow(2, 0, H);
    if (packed)  // padding queries read zeros; their outputs are dropped below
      q = at::zeros({B * T, H, D}, q.options()).index_copy_(0, content, q.reshape({N, H, D})).view({B, T, H, D});
    auto [keys, values] = kv(i, qk.narrow(2, H, Hkv), v);
    at::Tensor a = attention(q.transpose(1, 2), keys, values, blocked, onednn_).transpose(1, 2).reshape({B * T, H * D});
    if (packed) a = a.index_select(0, content);
    at::Tensor attn_out = l.o(a);
    if (l.post_attn_norm.defined()) attn_out = rms_norm(attn_out, l.post_attn_norm, config_.rms_norm_eps);
    h.add_(attn_out);  // h is this forward's own tensor (from the embedding)
    x = rms_norm(h, l.ln2, config_.rms_norm_eps);
    at::Tensor gu = l.gate_up(x);  // [B*T, 2 I]
    const int64_t I = gu.size(-1) / 2;
    at::Tensor mlp_out = l.down(at::silu(gu.narrow(-1, 0, I)) * gu.narrow(-1, I, I));
    if (l.post_mlp_norm.defined()) mlp_out = rms_norm(mlp_out, l.post_mlp_norm, config_.rms_norm_eps);
    h.add_(mlp_out);
  }
  return h;
}

at::Tensor Decoder::forward(const at::Tensor& input_ids, const at::Tensor& position_ids,
                            const at::Tensor& attention_mask, KVCache& cache, int64_t num_logits) const {
  c10::NoGradGuard no_grad;  // at::NoGradGuard is gone from PyTorch 2.x
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  const int64_t cached = cache.length();
  if (cache.num_layers() != config_.num_layers || (cached > 0 && cache.batch() != B))
    throw std::invalid_argument("Decoder::forward: KV cache does not match the batch");
  if (position_ids.sizes() != input_ids.sizes() || attention_mask.size(0) != B || attention_mask.size(1) != cached + T)
    throw std::invalid_argument("Decoder::forward: position_ids / attention_mask shapes do not match the input");

  at::Tensor ids = input_ids.to(device_, at::kLong);
  at::Tensor h = at::embedding(embed_, ids.view({B * T}));  // [B*T, hidden]: rows, as the products take them
  at::Tensor blocked = attention_blocked(attention_mask, cached, T);
  if (blocked.defined()) blocked = blocked.to(device_);
  cache.reserve(T);
  h = layers(h, position_ids, blocked, [&](int64_t i, const at::Tensor& k, const at::Tensor& v) {
    return cache.append(i, k.transpose(1, 2), v.transpose(1, 2));
  });
  cache.advance(T);

  h = h.view({B, T, h.size(-1)});
  if (num_logits >= 0 && num_logits < T) h = h.narrow(1, T - num_logits, num_logits);
  return lm_head_(rms_norm(h, norm_, config_.rms_norm_eps));
}

int64_t Decoder::kv_bytes_per_position() const {
  return config_.num_layers * 2 * config_.num_kv_heads * config_.head_dim * static_cast<int64_t>(c10::elementSize(dtype_));
}

KVStore Decoder::new_store(int64_t slots, int64_t capacity, int64_t block_size) const {
  return KVStore(config_.num_layers, slots, config_.num_kv_heads, config_.head_dim, capacity, dtype_, device_, block_size);
}

at::Tensor Decoder::forward_slots(const at::Tensor& input_ids, const std::vector<SlotSpan>& rows, KVStore& store,
                                  Logits logits) const {
  c10::NoGradGuard no_grad;  // at::NoGradGuard is gone from PyTorch 2.x
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  if (store.num_layers() != config_.num_layers) throw std::invalid_argument("Decoder::forward_slots: the store is another model's");
  if (static_cast<int64_t>(rows.size()) != B) throw std::invalid_argument("Decoder::forward_slots: one SlotSpan per row");
  const SlotForward f = store.plan(rows, T);
  // Right padding is not computed: the layers run packed on the content positions (f.content).
  at::Tensor ids = input_ids.to(device_, at::kLong).view({B * T});
  if (f.content.defined()) ids = ids.index_select(0, f.content);
  at::Tensor h = at::embedding(embed_, ids);  // [N, hidden]
  h = layers(
      h, f.positions, f.blocked,
      [&](int64_t i, const at::Tensor& k, const at::Tensor& v) { return store.write_read(i, f, k, v); }, f.content);
  if (logits == Logits::None) return {};
  const int64_t hidden = h.size(-1);
  if (logits == Logits::Last) {  // each row's last content position, a row of h
    std::vector<int64_t> last;
    int64_t before = 0;
    for (int64_t b = 0; b < B; ++b) {
      last.push_back(f.content.defined() ? before + f.counts[b] - 1 : b * T + f.counts[b] - 1);
      before += f.counts[b];
    }
    h = h.index_select(0, at::tensor(last, at::kLong).to(device_)).view({B, 1, hidden});
  } else {
    if (f.content.defined()) h = at::zeros({B * T, hidden}, h.options()).index_copy_(0, f.content, h);
    h = h.view({B, T, hidden});  // padding positions: zeros, logits nobody reads
  }
  return lm_head_(rms_norm(h, norm_, config_.rms_norm_eps));
}

}  // namespace exspec
