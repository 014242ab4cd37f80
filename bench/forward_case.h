// One benchmarked forward: B rows whose cache holds `context` prompt tokens, then T new tokens
// each. run() puts the cache back to the prompt and runs the step, so it can repeat. Shared by
// decoder_bench's timings and its per-operator profile, so both measure the same forward.
#pragma once
#include <ATen/ATen.h>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"

namespace exspec {

class ForwardCase {
 public:
  ForwardCase(const Decoder& m, int64_t batch, int64_t tokens, int64_t context)
      : m_(m), context_(context), cache_(new_dense_cache(m, batch, context + tokens)) {
    const int64_t vocab = m.config().vocab_size;
    dense_forward(m, at::randint(vocab, {batch, context}, at::kLong),
                  at::arange(context, at::kLong).expand({batch, context}), at::ones({batch, context}, at::kLong), cache_,
                  1);
    step_ = at::randint(vocab, {batch, tokens}, at::kLong);
    pos_ = (at::arange(tokens, at::kLong) + context).expand({batch, tokens});
    mask_ = at::ones({batch, context + tokens}, at::kLong);
  }

  void run() {
    cache_.truncate(context_);
    dense_forward(m_, step_, pos_, mask_, cache_);
  }

 private:
  const Decoder& m_;
  int64_t context_;
  KVCache cache_;
  at::Tensor step_, pos_, mask_;
};

}  // namespace exspec
