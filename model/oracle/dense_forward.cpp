#include "model/oracle/dense_forward.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <stdexcept>

#include "model/attention.h"
#include "model/decoder.h"
#include "model/to_device.h"

namespace exspec {

// The decoder's layers run here as in forward_slots; only the cache and the padding differ.
struct DenseForward {
  static at::Tensor run(const Decoder& m, const at::Tensor& input_ids, const at::Tensor& position_ids,
                        const at::Tensor& attention_mask, KVCache& cache, int64_t num_logits) {
    c10::NoGradGuard no_grad;  // at::NoGradGuard is gone from PyTorch 2.x
    const int64_t B = input_ids.size(0), T = input_ids.size(1);
    const int64_t cached = cache.length();
    if (cache.num_layers() != m.config_.num_layers || (cached > 0 && cache.batch() != B))
      throw std::invalid_argument("dense_forward: KV cache does not match the batch");
    if (position_ids.sizes() != input_ids.sizes() || attention_mask.size(0) != B ||
        attention_mask.size(1) != cached + T)
      throw std::invalid_argument("dense_forward: position_ids / attention_mask shapes do not match the input");

    at::Tensor ids = to_device(input_ids.to(at::kLong), m.device_);
    at::Tensor h = m.embed(ids.view({B * T}));  // [B*T, hidden]: rows, as the products take them
    at::Tensor blocked = attention_blocked(attention_mask, cached, T);
    if (blocked.defined()) blocked = to_device(blocked, m.device_);
    // A sliding window counts content positions: padding keys hold none. Without a window the
    // key positions are not computed (as Decoder::slot_masks).
    const int64_t window = m.config_.sliding_window;
    const AttentionMasks masks =
        window <= 0 ? AttentionMasks{blocked, blocked, 0}
                    : attention_masks(blocked, to_device(key_positions(attention_mask), m.device_),
                                      to_device(position_ids, m.device_), window);
    cache.reserve(T);
    h = m.layers(h, position_ids, masks, [&](int64_t i, const at::Tensor& k, const at::Tensor& v) {
      return cache.append(i, k.transpose(1, 2), v.transpose(1, 2));
    });
    cache.advance(T);

    h = h.view({B, T, h.size(-1)});
    if (num_logits >= 0 && num_logits < T) h = h.narrow(1, T - num_logits, num_logits);
    return m.head(m.final_norm(h));
  }
};

at::Tensor dense_forward(const Decoder& model, const at::Tensor& input_ids, const at::Tensor& position_ids,
                         const at::Tensor& attention_mask, KVCache& cache, int64_t num_logits) {
  return DenseForward::run(model, input_ids, position_ids, attention_mask, cache, num_logits);
}

KVCache new_dense_cache(const Decoder& model, int64_t batch, int64_t capacity) {
  const ModelConfig& c = model.config();
  return KVCache(c.num_layers, batch, c.num_kv_heads, c.head_dim, model.dtype(), model.device(), capacity);
}

}  // namespace exspec
