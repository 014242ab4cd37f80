// The oracle's forward: the decoder over a left-padded batch with a dense per-layer KV cache
// (model/oracle/kv_cache.h). Plain decoding (model/oracle/plain_decode.h), the paper's batch code
// (model/paper/) and the tests run it; serving runs Decoder::forward_slots on a KVStore instead
// (model/decoder.h), and includes neither this nor the cache.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "model/oracle/kv_cache.h"

namespace exspec {

class Decoder;

// input_ids, position_ids: [B, T] int64; attention_mask: [B, cache.length() + T], 1 = content,
// 0 = padding (left padding). Appends T positions to `cache`. Returns logits
// [B, num_logits, vocab] for the last num_logits positions (all T when num_logits < 0).
at::Tensor dense_forward(const Decoder& model, const at::Tensor& input_ids, const at::Tensor& position_ids,
                         const at::Tensor& attention_mask, KVCache& cache, int64_t num_logits = -1);

// An empty cache of `batch` rows for the model, with room for `capacity` positions (it grows).
KVCache new_dense_cache(const Decoder& model, int64_t batch, int64_t capacity = 0);

}  // namespace exspec
