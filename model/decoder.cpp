#include "model/decoder.h"
#include "model/device_timeline.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <stdexcept>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "model/attention.h"
#include "model/fused_ops.h"
#include "model/gguf/gguf_file.h"
#include "model/gguf_config.h"
#include "model/gguf_weights.h"
#include "model/kernels/row_ops.h"
#include "model/int8_matmul.h"
#include "model/layer_weights.h"
#include "model/to_device.h"

namespace exspec {
namespace {

// act(gate) * up of gu [N, 2 I] (gate first).
at::Tensor gated(rowops::Gate g, const at::Tensor& gu, bool fused) {
  at::Tensor y = fused ? fused_gated_mul(g, gu) : at::Tensor();
  if (y.defined()) return y;
  const int64_t I = gu.size(-1) / 2;
  const at::Tensor gate = gu.narrow(-1, 0, I);
  return (g == rowops::Gate::Silu ? at::silu(gate) : at::gelu(gate, "tanh")) * gu.narrow(-1, I, I);
}

// The layer's kind (model/layer_kind.h) choosing its maths: a new kind is a new case here.
// RMSNorm, normalised in float32 at least; then Llama's (LlamaRMSNorm) scales by w in the model's
// dtype, Gemma's (Gemma3RMSNorm) by its multiplier 1 + w (float32 at least) before one rounding.
// `fused`: one pass on the CPU where w has x's dtype (model/fused_ops.h), where the two forms'
// arithmetic is the same (a Gemma multiplier is float32, so only a float32 model's).
at::Tensor layer_norm(NormForm form, const at::Tensor& x, const at::Tensor& w, double eps, bool fused) {
  at::Tensor y = fused ? fused_rms_norm(x, w, eps) : at::Tensor();
  if (y.defined()) return y;
  const bool low = x.scalar_type() == at::kHalf || x.scalar_type() == at::kBFloat16;
  at::Tensor xf = low ? x.to(at::kFloat) : x;
  xf = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  switch (form) {
    case NormForm::Llama: return w * xf.to(x.scalar_type());
    case NormForm::Gemma: return (xf * w).to(x.scalar_type());
  }
  throw std::logic_error("layer_norm: a NormForm without its maths");
}

at::Tensor activated(Activation a, const at::Tensor& gu, bool fused) {
  switch (a) {
    case Activation::Silu: return gated(rowops::Gate::Silu, gu, fused);
    case Activation::GeluTanh: return gated(rowops::Gate::GeluTanh, gu, fused);
  }
  throw std::logic_error("activated: an Activation without its maths");
}

int64_t storage_bytes(const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.storage().nbytes()) : 0; }

// int8: the activations' dtype.
at::ScalarType compute_dtype(at::ScalarType t) { return t == at::kChar ? at::kFloat : t; }

WeightPath weight_path(const LoadOptions& o) {
  if (o.dtype == at::kChar) return WeightPath::Int8;
  if (!o.pack_weights) return WeightPath::Plain;
  return o.onednn_bf16 ? WeightPath::OneDnn : WeightPath::Packed;
}

}  // namespace

Decoder::Decoder(ModelConfig config, const WeightMap& weights, const LoadOptions& opts)
    : Decoder(std::move(config), WeightSource([&weights](const std::string& name) {
                auto it = weights.find(name);
                if (it == weights.end()) throw std::runtime_error("missing weight \"" + name + "\"");
                return it->second;
              }), opts) {}

Decoder::Decoder(ModelConfig config, const WeightSource& get, const LoadOptions& opts)
    : config_(choose_longrope(std::move(config), opts.long_context)), onednn_(opts.pack_weights), dtype_(compute_dtype(opts.dtype)), device_(opts.device),
      rope_(config_, opts.device), rope_local_(local_rope_config(config_), opts.device) {
  const bool int8 = opts.dtype == at::kChar;
  if (int8 && !device_.is_cpu()) throw std::invalid_argument("int8 weights run on the CPU only (--device cpu)");
  const WeightPath pack = weight_path(opts);
  // int8 quantises the products' weights from the file's dtype; the norms are float32, copied.
  embed_ = get(hf_weight_name(config_.arch, WeightId::Embed));
  norm_ = norm_weight(get(hf_weight_name(config_.arch, WeightId::FinalNorm)));
  const at::Tensor head = config_.tie_word_embeddings ? embed_ : get(hf_weight_name(config_.arch, WeightId::Head));
  if (!opts.head_shortlist.empty()) shortlist_ = ShortlistHead(head, opts.head_shortlist, pack);
  // A tied head also serves the embedding's lookups: kept whole beside a shortlist.
  if (opts.head_shortlist.empty() || config_.tie_word_embeddings) lm_head_ = Linear(head, {}, pack);
  if (opts.head_screen > 0 && !opts.head_shortlist.empty())
    throw std::invalid_argument("a draft's head takes a shortlist or a screen, not both (--draft-shortlist, --draft-screen)");
  // int8's own rows serve an untied embedding: quantised at load, or a GGUF file's Q8_0, Q4_K or
  // Q6_K blocks (model/linear.h).
  if (int8 && !config_.tie_word_embeddings) embed_int8_ = Linear(embed_, {}, WeightPath::Int8);
  // One copy of the embedding: a tied head serves the lookups (from its packed copy, or embed_
  // itself when unpacked); int8's own quantised rows serve an untied one.
  if (config_.tie_word_embeddings || embed_int8_.int8()) embed_ = at::Tensor();
  for (int64_t i = 0; i < config_.num_layers; ++i) layers_.push_back(load_layer(get, i, pack));
  // After the layers: auto weighs the head against all a token reads.
  const bool auto_screen = opts.head_screen == kScreenAuto && opts.head_shortlist.empty() && screen_pays(lm_head_, product_bytes());
  if (opts.head_screen > 0 || auto_screen) screen_ = ScreenedHead(lm_head_, auto_screen ? kAutoScreenCandidates : opts.head_screen);
}

// Layer i's weights by their rows in model/layer_weights.h: a group's present members (q, k and
// v; GLM's one gate_up_proj, or gate and up; an expert's gate and up) concatenated as one product,
// in table order.
Decoder::Layer Decoder::load_layer(const WeightSource& get, int64_t i, WeightPath pack) const {
  auto has = [&](WeightId id) { return has_weight(config_, weight_name(id), i); };
  auto weight = [&](WeightId id, int64_t expert = -1) { return get(hf_weight_name(config_.arch, id, i, expert)); };
  auto norm = [&](WeightId id) { return norm_weight(weight(id)); };
  auto group = [&](WeightGroup g, bool bias, int64_t expert = -1) {
    std::vector<at::Tensor> parts;
    for (const WeightName* w : group_weights(config_, g, i, bias)) parts.push_back(weight(w->id, expert));
    return parts.empty() ? at::Tensor() : parts.size() == 1 ? parts[0] : at::cat(parts);
  };
  Layer l;
  l.kind = config_.layer_kind(i);
  l.ln1 = norm(WeightId::AttnNorm);
  l.ln2 = norm(WeightId::MlpNorm);
  l.qkv = Linear(group(WeightGroup::Qkv, false), group(WeightGroup::Qkv, true), pack);
  l.o = Linear(weight(WeightId::O), has(WeightId::OBias) ? weight(WeightId::OBias) : at::Tensor(), pack);
  if (has(WeightId::QNorm)) {  // per head: q's weight on each of the H heads, then k's on the Hkv
    at::Tensor qn = norm(WeightId::QNorm), kn = norm(WeightId::KNorm);
    l.qk_norm = at::cat({qn.expand({config_.num_heads, qn.size(0)}), kn.expand({config_.num_kv_heads, kn.size(0)})});
  }
  switch (l.kind.mlp) {
    case Mlp::Dense:
      l.gate_up = Linear(group(WeightGroup::GateUp, false), {}, pack);  // [gate; up] rows, as this decoder multiplies them
      l.down = Linear(weight(WeightId::Down), {}, pack);
      break;
    case Mlp::Experts: {
      // The router in the activations' dtype (float32 under int8): it only chooses.
      const at::Tensor router = weight(WeightId::Router);
      l.experts.router = Linear(pack == WeightPath::Int8 ? router.to(at::kFloat) : router, {},
                                pack == WeightPath::Int8 ? WeightPath::Packed : pack);
      for (int64_t e = 0; e < config_.experts.num_experts; ++e) {
        l.experts.gate_up.emplace_back(group(WeightGroup::ExpertGateUp, false, e), at::Tensor(), pack);
        l.experts.down.emplace_back(weight(WeightId::ExpertDown, e), at::Tensor(), pack);
      }
      l.experts.top_k = config_.experts.top_k;
      l.experts.norm_topk_prob = config_.experts.norm_topk_prob;
      break;
    }
  }
  if (has(WeightId::PostAttnNorm)) l.post_attn_norm = norm(WeightId::PostAttnNorm);
  if (has(WeightId::PostMlpNorm)) l.post_mlp_norm = norm(WeightId::PostMlpNorm);
  return l;
}

std::vector<const Linear*> Decoder::Layer::products() const {
  std::vector<const Linear*> out{&qkv, &o};
  if (!experts.active()) return out.push_back(&gate_up), out.push_back(&down), out;
  out.push_back(&experts.router);
  for (size_t e = 0; e < experts.gate_up.size(); ++e) out.push_back(&experts.gate_up[e]), out.push_back(&experts.down[e]);
  return out;
}

int64_t Decoder::Layer::product_bytes(bool active) const {
  int64_t n = 0;
  for (const Linear* f : products()) n += f->bytes();
  if (!active || !experts.active()) return n;
  const int64_t all = static_cast<int64_t>(experts.gate_up.size()) * experts.expert_bytes();
  return n - all + experts.top_k * experts.expert_bytes();
}

at::Tensor Decoder::norm_weight(const at::Tensor& w) const {
  if (config_.architecture_row().norm == NormForm::Llama) return w.to(dtype_, false, true);
  // A GGUF file holds the multiplier itself, in float32 (norm_offset 0).
  at::Tensor m = config_.norm_offset != 0 ? w.to(dtype_).to(at::kFloat) + config_.norm_offset : w.to(at::kFloat);
  return m.to(dtype_ == at::kDouble ? at::kDouble : at::kFloat, false, true);
}

std::shared_ptr<const Decoder> Decoder::load(const std::string& dir, const LoadOptions& opts) {
  if (gguf::is_gguf_path(dir)) {  // llama.cpp's format: config, weights and names from the file
    auto file = gguf::GgufFile::open(dir);
    ModelConfig c = gguf::config_from_gguf(*file);
    const gguf::GgufWeights w(file, c, opts.dtype, opts.device);
    return std::make_shared<const Decoder>(std::move(c), WeightSource([&w](const std::string& name) { return w.take(name); }),
                                           opts);
  }
  ModelConfig c = ModelConfig::load(dir);
  // int8 reads the weights as stored (no converted copy of the whole file) and quantises each.
  at::ScalarType read = opts.dtype;
  if (read == at::kChar) read = c.torch_dtype == "bfloat16" ? at::kBFloat16 : c.torch_dtype == "float16" ? at::kHalf : at::kFloat;
  const CheckpointWeights w(dir, c, read, opts.device);
  auto m = std::make_shared<const Decoder>(std::move(c), WeightSource([&w](const std::string& name) { return w.take(name); }), opts);
#ifdef __GLIBC__
  // Each weight's read and converted copies were freed as its kept form was made, between the
  // allocations of those kept forms: glibc keeps the holes (57 MB of 571 MB in float32, 150M)
  // until asked to give back the pages of free memory.
  malloc_trim(0);
#endif
  return m;
}

int64_t Decoder::num_parameters() const {
  const int64_t head = config_.tie_word_embeddings ? 0 : config_.vocab_size * config_.hidden_size;  // as stored
  int64_t n = config_.vocab_size * config_.hidden_size + norm_.numel() + head;
  for (const auto& l : layers_) {
    for (const at::Tensor* t : {&l.ln1, &l.ln2, &l.post_attn_norm, &l.post_mlp_norm})
      if (t->defined()) n += t->numel();
    if (l.qk_norm.defined()) n += 2 * config_.head_dim;  // q_norm and k_norm as stored
    for (const Linear* f : l.products()) n += f->numel();
  }
  return n;
}

bool Decoder::kquant_weights() const {
  if (head_weight().kquant()) return true;
  for (const auto& l : layers_)
    for (const Linear* f : l.products())
      if (f->kquant()) return true;
  return false;
}

at::Tensor Decoder::embed(const at::Tensor& ids) const {
  at::Tensor h = embed_int8_.int8() ? embed_int8_.rows(ids) : embed_.defined() ? at::embedding(embed_, ids) : lm_head_.rows(ids);
  // Gemma: times sqrt(hidden) rounded to the activations' dtype (Gemma3TextScaledWordEmbedding).
  const double scale = config_.embedding_scale();
  return scale == 1.0 ? h : h.mul_(at::scalar_tensor(scale, at::TensorOptions().dtype(h.scalar_type())));
}

int64_t Decoder::weight_bytes() const {
  // A tied embedding is released where the head serves its rows: then the head's copy is the only one.
  int64_t n = storage_bytes(embed_) + storage_bytes(norm_) + lm_head_.bytes() + shortlist_.rows().bytes() + screen_.bytes() +
              (embed_int8_.int8() ? embed_int8_.bytes() : 0);
  for (const auto& l : layers_) {
    for (const at::Tensor* t : {&l.ln1, &l.ln2, &l.qk_norm, &l.post_attn_norm, &l.post_mlp_norm}) n += storage_bytes(*t);
    n += l.product_bytes(false);
  }
  return n;
}

int64_t Decoder::product_bytes() const {
  // A tied head stays whole beside a shortlist; a screen reads the int8 head's candidates' tiles alone.
  int64_t n = shortlist_.active() ? shortlist_.rows().bytes() : screen_.active() ? screen_.bytes() : lm_head_.bytes();
  for (const auto& l : layers_) n += l.product_bytes(true);
  return n;
}

std::pair<at::Tensor, at::Tensor> Decoder::pre_attention(const Layer& l, const at::Tensor& h, const RopeTables& rope,
                                                         int64_t Bx, int64_t Tx) const {
  const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, D = config_.head_dim;
  at::Tensor x = layer_norm(l.kind.norm, h, l.ln1, config_.rms_norm_eps, onednn_);
  at::Tensor qkv = l.qkv(x);  // [N, (H + 2 Hkv) D]: q, k, v
  // q and k take the same rotation, so one rope (and one q/k norm) runs over their H + Hkv
  // heads: element for element the same arithmetic, in half the operator calls.
  at::Tensor qk = qkv.narrow(-1, 0, (H + Hkv) * D).view({Bx, Tx, H + Hkv, D});
  at::Tensor v = qkv.narrow(-1, (H + Hkv) * D, Hkv * D).view({Bx, Tx, Hkv, D});
  if (config_.qk_norm) qk = layer_norm(l.kind.norm, qk, l.qk_norm, config_.rms_norm_eps, onednn_);
  return {rope_.apply(qk, rope.cos_of(l.kind.rope), rope.sin_of(l.kind.rope), onednn_), v};
}

at::Tensor Decoder::post_attention(const Layer& l, at::Tensor h, const at::Tensor& a) const {
  at::Tensor attn_out = l.o(a);
  if (l.post_attn_norm.defined()) attn_out = layer_norm(l.kind.norm, attn_out, l.post_attn_norm, config_.rms_norm_eps, onednn_);
  if (!(onednn_ && fused_add_(h, attn_out))) h.add_(attn_out);  // h is this forward's own tensor (from the embedding)
  at::Tensor x = layer_norm(l.kind.norm, h, l.ln2, config_.rms_norm_eps, onednn_);
  auto act = [&](const at::Tensor& gu) { return activated(l.kind.activation, gu, onednn_); };
  at::Tensor mlp_out;
  switch (l.kind.mlp) {
    case Mlp::Dense: mlp_out = l.down(act(l.gate_up(x))); break;  // gate_up: [B*T, 2 I]
    case Mlp::Experts: {
      int64_t read = 0;
      mlp_out = l.experts(x, act, &read);
      expert_layer_runs_.fetch_add(1, std::memory_order_relaxed);
      experts_read_.fetch_add(read, std::memory_order_relaxed);
      break;
    }
  }
  if (l.post_mlp_norm.defined()) mlp_out = layer_norm(l.kind.norm, mlp_out, l.post_mlp_norm, config_.rms_norm_eps, onednn_);
  if (!(onednn_ && fused_add_(h, mlp_out))) h.add_(mlp_out);
  return h;
}

at::Tensor Decoder::layers(at::Tensor h, const at::Tensor& positions, const AttentionMasks& masks, const KVStep& kv,
                           const at::Tensor& content) const {
  const int64_t B = positions.size(0), T = positions.size(1);
  // Packed, the rows of h are the N content positions of the [B, T] layout; the products, the
  // norms and the rope run on those alone ([1, N] below), and only attention sees [B, T].
  const bool packed = content.defined();
  const int64_t N = packed ? content.size(0) : B * T, Bx = packed ? 1 : B, Tx = packed ? N : T;
  at::Tensor pos = packed ? positions.reshape({1, B * T}).index_select(1, content) : positions;
  const RopeTables rope = rope_tables(to_device(pos, device_));
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    auto [qk, v] = pre_attention(layers_[i], h, rope, Bx, Tx);
    h = post_attention(layers_[i], h, attend(i, qk, v, masks.of(layers_[i].kind.window), kv, content, B, T));
  }
  return h;
}

// No layer's, but of the row's form: Gemma's final norm is (1 + w) too.
at::Tensor Decoder::final_norm(const at::Tensor& h) const {
  return layer_norm(config_.architecture_row().norm, h, norm_, config_.rms_norm_eps, onednn_);
}

RopeTables Decoder::rope_tables(const at::Tensor& pos) const {
  RopeTables t;
  auto [cos, sin] = rope_.tables(pos, dtype_);
  t.cos = t.local_cos = cos.transpose(1, 2), t.sin = t.local_sin = sin.transpose(1, 2);  // [Bx, Tx, 1, D]: one table for all heads
  if (config_.rope_local_theta > 0 && config_.sliding_window > 0) {
    auto [lcos, lsin] = rope_local_.tables(pos, dtype_);
    t.local_cos = lcos.transpose(1, 2), t.local_sin = lsin.transpose(1, 2);
  }
  return t;
}

at::Tensor Decoder::attend(int64_t i, const at::Tensor& qk, const at::Tensor& v, const at::Tensor& blocked,
                           const KVStep& kv, const at::Tensor& content, int64_t B, int64_t T) const {
  const int64_t H = config_.num_heads, Hkv = config_.num_kv_heads, D = config_.head_dim;
  if (onednn_ && kv.store && !content.defined()) {
    at::Tensor a = attention_in_store(*kv.store, *kv.f, i, qk, v, H, blocked, config_.attention_scale(),
                                      config_.attn_logit_softcapping);
    if (a.defined()) return a;
  }
  at::Tensor q = qk.narrow(2, 0, H);
  if (content.defined())  // padding queries read zeros; their outputs are dropped below
    q = at::zeros({B * T, H, D}, q.options()).index_copy_(0, content, q.reshape({-1, H, D})).view({B, T, H, D});
  auto [keys, values] = kv(i, qk.narrow(2, H, Hkv), v);
  at::Tensor a = attention(q.transpose(1, 2), keys, values, blocked, config_.attention_scale(), onednn_,
                           config_.attn_logit_softcapping)
                     .transpose(1, 2)
                     .reshape({B * T, H * D});
  return content.defined() ? a.index_select(0, content) : a;
}

AttentionMasks Decoder::slot_masks(const SlotForward& f) const {
  if (config_.sliding_window <= 0) return {f.blocked, f.blocked, 0};
  const at::Tensor key_pos = at::arange(f.window, at::TensorOptions().dtype(at::kLong).device(f.positions.device()));
  return attention_masks(f.blocked, key_pos.view({1, f.window}), f.positions, config_.sliding_window);
}

int64_t Decoder::kv_bytes_per_position() const {
  return config_.num_layers * 2 * config_.num_kv_heads * config_.head_dim * static_cast<int64_t>(c10::elementSize(dtype_));
}

KVStore Decoder::new_store(int64_t slots, int64_t capacity, int64_t block_size) const {
  return KVStore(config_.num_layers, slots, config_.num_kv_heads, config_.head_dim, capacity, dtype_, device_, block_size);
}

at::Tensor Decoder::forward_slots(const at::Tensor& input_ids, const std::vector<SlotSpan>& rows, KVStore& store,
                                  Logits logits) const {
  c10::InferenceMode inference;  // no autograd keys to dispatch through: ~430 calls a small step
  const device_timeline::Scope timed(device_.is_cuda());
  const int64_t B = input_ids.size(0), T = input_ids.size(1);
  if (store.num_layers() != config_.num_layers) throw std::invalid_argument("Decoder::forward_slots: the store is another model's");
  if (static_cast<int64_t>(rows.size()) != B) throw std::invalid_argument("Decoder::forward_slots: one SlotSpan per row");
  const SlotForward f = store.plan(rows, T);
  // Right padding is not computed: the layers run packed on the content positions (f.content).
  at::Tensor ids = to_device(input_ids.to(at::kLong), device_).view({B * T});
  at::Tensor out;  // rows padded to a bucket where the store has them (model/step_runner.h)
  if (store.step() && forward_bucketed(ids, f, store, logits, out)) return out;
  if (f.content.defined()) ids = ids.index_select(0, f.content);
  at::Tensor h = embed(ids);  // [N, hidden]
  h = layers(h, f.positions, slot_masks(f),
             KVStep([&](int64_t i, const at::Tensor& k, const at::Tensor& v) { return store.write_read(i, f, k, v); },
                    &store, &f),
             f.content);
  if (logits == Logits::None) return {};
  const int64_t hidden = h.size(-1);
  if (logits == Logits::Last) {  // each row's last content position, a row of h
    std::vector<int64_t> last;
    int64_t before = 0;
    for (int64_t b = 0; b < B; ++b) {
      last.push_back(f.content.defined() ? before + f.counts[b] - 1 : b * T + f.counts[b] - 1);
      before += f.counts[b];
    }
    h = h.index_select(0, to_device(at::tensor(last, at::kLong), device_)).view({B, 1, hidden});
  } else {
    if (f.content.defined()) h = at::zeros({B * T, hidden}, h.options()).index_copy_(0, f.content, h);
    h = h.view({B, T, hidden});  // padding positions: zeros, logits nobody reads
  }
  return head(final_norm(h));
}

at::Tensor Decoder::head(const at::Tensor& h) const {
  const at::Tensor l = shortlist_.active() ? shortlist_(h) : screen_.active() ? screen_(h, lm_head_) : lm_head_(h);
  return config_.final_logit_softcapping > 0 ? softcap_logits(l, config_.final_logit_softcapping) : l;
}

}  // namespace exspec
