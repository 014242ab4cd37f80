#include "model/paper/speculative.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/decoder.h"
#include "model/oracle/dense_forward.h"

namespace exspec {
namespace {

// Appends `cols` columns of content (1) or not (0) to a cache state's mask.
void append_mask(CacheState& s, const at::Tensor& cols) { s.mask = at::cat({s.mask, cols.to(s.mask.device())}, 1); }

}  // namespace

at::Tensor draft_tokens(const Decoder& draft, SpecBatch& b, int64_t k) {
  const int64_t B = b.batch();
  if (k < 1) return at::empty({B, 0}, at::kLong);
  if (!b.has_draft) throw std::logic_error("draft_tokens: the batch has no draft");
  if (b.draft.cache.empty()) {  // nothing drafted yet: the whole prefix is the lag
    b.draft.cache = new_dense_cache(draft, B, b.lag_tokens.size(1) + k + 2);
    b.draft.mask = at::zeros({B, 0}, at::TensorOptions(at::kLong).device(draft.device()));
  }
  // The first forward feeds each row's lag, then pending: [lag..., pending], right-aligned.
  // Rows with a shorter lag get masked pad columns: holes that realignment removes later.
  const int64_t L = b.lag_tokens.size(1);
  at::Tensor ids = at::cat({b.lag_tokens.clamp_min(0), b.pending.view({B, 1})}, 1);               // [B, L+1]
  at::Tensor pos = (b.lengths - 1).view({B, 1}) + at::arange(-L, 1, at::kLong).view({1, L + 1});
  pos = pos.clamp_min(0);
  at::Tensor cols = at::cat({b.lag_tokens.ge(0).to(at::kLong), at::ones({B, 1}, at::kLong)}, 1);
  std::vector<at::Tensor> drafts;
  for (int64_t j = 0; j < k; ++j) {
    append_mask(b.draft, cols);
    at::Tensor logits = dense_forward(draft, ids, pos, b.draft.mask, b.draft.cache, 1);
    at::Tensor next = logits.select(1, 0).argmax(-1).to(at::kCPU);
    drafts.push_back(next);
    ids = next.view({B, 1});
    pos = pos.select(1, pos.size(1) - 1).view({B, 1}) + 1;
    cols = at::ones({B, 1}, at::kLong);
  }
  return at::stack(drafts, 1);  // [B, K]
}

VerifyResult verify(const Decoder& target, SpecBatch& b, const at::Tensor& drafts, const std::vector<RowSampling>& rows) {
  const int64_t B = b.batch(), K = drafts.size(1);
  at::Tensor ids = at::cat({b.pending.view({B, 1}), drafts.to(at::kLong)}, 1);        // [B, K+1]
  at::Tensor pos = (b.lengths - 1).view({B, 1}) + at::arange(K + 1, at::kLong).view({1, K + 1});
  append_mask(b.target, at::ones({B, K + 1}, at::kLong));
  at::Tensor logits = dense_forward(target, ids, pos, b.target.mask, b.target.cache);       // [B, K+1, V]
  return accept(logits, drafts, b.lengths, rows);
}

void commit(SpecBatch& b, const VerifyResult& v, const at::Tensor& drafts) {
  const int64_t B = b.batch(), K = drafts.size(1);
  const at::Tensor& a = v.accepted;
  const int64_t a_min = a.min().item<int64_t>(), a_max = a.max().item<int64_t>();
  const bool uniform = a_min == a_max;

  // Target: the K+1 verified positions hold [pending, d_1..d_K]; keep pending + d_1..d_a.
  if (uniform) {
    const int64_t drop = K - a_min;
    b.target.cache.truncate(b.target.cache.length() - drop);
    b.target.mask = b.target.mask.narrow(1, 0, b.target.mask.size(1) - drop);
  } else {
    at::Tensor keep = at::arange(K + 1, at::kLong).view({1, K + 1}).le(a.view({B, 1})).to(at::kLong);
    const int64_t S = b.target.mask.size(1);
    b.target.mask = at::cat({b.target.mask.narrow(1, 0, S - (K + 1)), keep.to(b.target.mask.device())}, 1);
  }

  // Draft: its last K positions hold [pending, d_1..d_{K-1}]; keep pending + d_1..d_min(a, K-1).
  // With all K accepted, d_K was never fed: it becomes the draft's lag. With K = 0 nothing was
  // fed: pending joins the lag.
  if (K == 0 && b.has_draft) {
    b.lag_tokens = at::cat({b.lag_tokens, b.pending.view({B, 1})}, 1);
  } else if (K > 0 && b.has_draft) {
    at::Tensor keep_n = at::minimum(a + 1, at::full({B}, K, at::kLong));
    const int64_t S = b.draft.mask.size(1);
    if (keep_n.min().item<int64_t>() == keep_n.max().item<int64_t>()) {
      const int64_t drop = K - keep_n[0].item<int64_t>();
      b.draft.cache.truncate(b.draft.cache.length() - drop);
      b.draft.mask = b.draft.mask.narrow(1, 0, S - drop);
    } else {
      at::Tensor keep = at::arange(K, at::kLong).view({1, K}).lt(keep_n.view({B, 1})).to(at::kLong);
      b.draft.mask = at::cat({b.draft.mask.narrow(1, 0, S - K), keep.to(b.draft.mask.device())}, 1);
    }
    at::Tensor all = a.eq(K);
    b.lag_tokens = all.any().item<bool>()
                      ? at::where(all, drafts.select(1, K - 1).to(at::kLong), at::full({B}, -1, at::kLong)).view({B, 1})
                      : at::empty({B, 0}, at::kLong);
  }
  b.pending = v.bonus.clone();
  b.lengths = b.lengths + a + 1;
}

}  // namespace exspec
