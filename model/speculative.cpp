#include "model/speculative.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "model/constrained.h"
#include "model/decoder.h"

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
    b.draft.cache = draft.new_cache(B, b.lag_tokens.size(1) + k + 2);
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
    at::Tensor logits = draft.forward(ids, pos, b.draft.mask, b.draft.cache, 1);
    at::Tensor next = logits.select(1, 0).argmax(-1).to(at::kCPU);
    drafts.push_back(next);
    ids = next.view({B, 1});
    pos = pos.select(1, pos.size(1) - 1).view({B, 1}) + 1;
    cols = at::ones({B, 1}, at::kLong);
  }
  return at::stack(drafts, 1);  // [B, K]
}

namespace {

// A row whose tokens are chosen on the host: sampled, with logprobs, or under a grammar.
bool on_host(const RowSampling& r) { return !r.params.plain_greedy() || r.params.logprobs >= 0 || r.matcher; }

bool needs_host(const std::vector<RowSampling>& rows) {
  for (const auto& r : rows)
    if (on_host(r)) return true;
  return false;
}

// Row b's logits [K+1, V] in float64 on the host: sampling is per row, on the CPU, so that it
// does not depend on the batch or the device.
at::Tensor host_row(const at::Tensor& logits, int64_t b) { return logits[b].to(at::kCPU, at::kDouble).contiguous(); }

// Replaces a row's predictions by the choices of plain decoding (sample_token: the argmax when
// greedy), column by column, up to the first one that differs from its draft or the last column
// the grammar walked to (later columns are never committed).
void choose_row(const at::Tensor& row, const RowSampling& rs, const int64_t* drafts, int64_t last, int64_t length,
                int64_t* pred) {
  const int64_t V = row.size(1);
  const double* x = row.data_ptr<double>();
  for (int64_t j = 0; j <= last; ++j) {
    pred[j] = sample_token(x + j * V, V, rs.params, rs.history(drafts, static_cast<size_t>(j)), length + j);
    if (j < last && pred[j] != drafts[j]) return;
  }
}

}  // namespace

VerifyResult verify(const Decoder& target, SpecBatch& b, const at::Tensor& drafts, const std::vector<RowSampling>& rows) {
  const int64_t B = b.batch(), K = drafts.size(1);
  at::Tensor ids = at::cat({b.pending.view({B, 1}), drafts.to(at::kLong)}, 1);        // [B, K+1]
  at::Tensor pos = (b.lengths - 1).view({B, 1}) + at::arange(K + 1, at::kLong).view({1, K + 1});
  append_mask(b.target, at::ones({B, K + 1}, at::kLong));
  at::Tensor logits = target.forward(ids, pos, b.target.mask, b.target.cache);       // [B, K+1, V]
  return accept(logits, drafts, b.lengths, rows);
}

VerifyResult accept(const at::Tensor& logits, const at::Tensor& drafts, const at::Tensor& lengths,
                    const std::vector<RowSampling>& rows) {
  const int64_t B = logits.size(0), K = drafts.size(1);
  at::Tensor pred = logits.argmax(-1).to(at::kCPU).contiguous();                     // [B, K+1]
  if (!rows.empty() && static_cast<int64_t>(rows.size()) != B) throw std::invalid_argument("verify: one RowSampling per row");
  const bool host = needs_host(rows);
  std::vector<at::Tensor> host_rows(host ? B : 0);
  at::Tensor d = drafts.to(at::kCPU, at::kLong).contiguous();
  // Per row, the last column acceptance may reach: K, or where the grammar's walk over the drafts
  // stopped (model/constrained.h).
  std::vector<int64_t> walked(static_cast<size_t>(B), K);
  if (host) {
    for (int64_t r = 0; r < B; ++r) {
      const RowSampling& rs = rows[r];
      if (!on_host(rs)) continue;
      host_rows[r] = host_row(logits, r);
      const int64_t* dr = d.data_ptr<int64_t>() + r * K;
      if (rs.matcher) walked[r] = mask_verified_row(*rs.matcher, host_rows[r].data_ptr<double>(), host_rows[r].size(1), dr, K);
      if (!rs.params.plain_greedy() || rs.matcher)
        choose_row(host_rows[r], rs, dr, walked[r], lengths[r].item<int64_t>(), pred.data_ptr<int64_t>() + r * (K + 1));
    }
  }
  VerifyResult v;
  // Vectorised first mismatch: the count of leading matches is the accepted prefix length.
  at::Tensor matches = pred.narrow(1, 0, K).eq(d);
  v.accepted = at::minimum(matches.to(at::kLong).cumprod(1).sum(1), at::tensor(walked, at::kLong));  // [B]
  v.bonus = pred.gather(1, v.accepted.view({B, 1})).view({B});                       // the TARGET's token
  v.tokens = at::cat({d, at::zeros({B, 1}, at::kLong)}, 1);
  v.tokens.scatter_(1, v.accepted.view({B, 1}), v.bonus.view({B, 1}));
  if (host) {
    v.logprobs.resize(B);
    for (int64_t r = 0; r < B; ++r) {
      const int64_t a = v.accepted[r].item<int64_t>();
      if (rows[r].matcher) settle_matcher(*rows[r].matcher, walked[r], a, v.bonus[r].item<int64_t>());
      if (rows[r].params.logprobs < 0) continue;
      const int64_t V = host_rows[r].size(1);
      for (int64_t j = 0; j <= a; ++j)
        v.logprobs[r].push_back(token_logprob(host_rows[r].data_ptr<double>() + j * V, V, v.tokens[r][j].item<int64_t>(),
                                              rows[r].params.logprobs));
    }
  }
  return v;
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
