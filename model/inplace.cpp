#include "model/inplace.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>

#include "model/decoder.h"

namespace exspec {
namespace {

int64_t pending_count(const InplaceSeq& s) { return static_cast<int64_t>(s.tokens.size()) - 1; }  // tokens before pending

// Right-padded ids [B, T] of token runs (padding 0: never stored, never read as content).
at::Tensor right_padded(const std::vector<std::vector<int64_t>>& runs, int64_t T) {
  const int64_t B = static_cast<int64_t>(runs.size());
  at::Tensor ids = at::zeros({B, T}, at::kLong);
  auto a = ids.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b)
    for (size_t t = 0; t < runs[b].size(); ++t) a[b][static_cast<int64_t>(t)] = runs[b][t];
  return ids;
}

std::vector<int64_t> slots_of(const std::vector<const InplaceSeq*>& rows) {
  std::vector<int64_t> s;
  for (const InplaceSeq* r : rows) s.push_back(r->slot);
  return s;
}

}  // namespace

int64_t prefill_remaining(const InplaceModels& m, const InplaceSeq& s) {
  return pending_count(s) - m.target_store->length(s.slot);
}

int64_t draft_lag(const InplaceModels& m, const InplaceSeq& s) {
  return m.draft_store ? pending_count(s) - m.draft_store->length(s.slot) : 0;
}

int64_t prefill_chunk(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, int64_t budget) {
  if (budget < 1) throw std::invalid_argument("prefill_chunk: the token budget must be >= 1");
  std::vector<const InplaceSeq*> todo;
  std::vector<int64_t> rem;
  for (const InplaceSeq* s : rows) {
    const int64_t r = prefill_remaining(m, *s);
    if (r > 0) todo.push_back(s), rem.push_back(r);
  }
  // The first n rows at the deepest width T_n that keeps their content within the budget and
  // their padded positions within twice it (padding is not computed by the products, only by
  // attention): the n that stores the most tokens, the fewest rows among equals.
  int64_t best_n = 0, best_T = 0, best_tokens = 0, longest = 0;
  for (int64_t n = 1; n <= static_cast<int64_t>(todo.size()) && n <= budget; ++n) {
    longest = std::max(longest, rem[n - 1]);
    auto stores = [&](int64_t T) {
      int64_t tokens = 0;
      for (int64_t i = 0; i < n; ++i) tokens += std::min(rem[i], T);
      return tokens;
    };
    int64_t lo = 1, hi = std::min(longest, 2 * budget / n);  // stores(1) = n <= budget
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (stores(mid) <= budget) lo = mid;
      else hi = mid - 1;
    }
    const int64_t tokens = stores(lo);
    if (tokens > best_tokens) best_n = n, best_T = lo, best_tokens = tokens;
  }
  if (best_n == 0) return 0;
  std::vector<std::vector<int64_t>> runs;
  std::vector<int64_t> slots, counts;
  const int64_t T = best_T;
  for (int64_t i = 0; i < best_n; ++i) {
    const InplaceSeq* s = todo[i];
    const int64_t from = m.target_store->length(s->slot), n = std::min(rem[i], T);
    runs.emplace_back(s->tokens.begin() + from, s->tokens.begin() + from + n);
    slots.push_back(s->slot);
    counts.push_back(n);
  }
  at::Tensor ids = right_padded(runs, T);
  m.target->forward_slots(ids, counts, *m.target_store, slots, Decoder::Logits::None);
  if (m.draft) {
    // The draft follows the prompt chunk by chunk: its slot must be exactly as far as the
    // target's (a draft behind by a lag would need the lag fed first).
    for (size_t b = 0; b < slots.size(); ++b)
      if (m.draft_store->length(slots[b]) != m.target_store->length(slots[b]) - counts[b])
        throw std::logic_error("prefill_chunk: the draft's slot is not where the target's was");
    m.draft->forward_slots(ids, counts, *m.draft_store, slots, Decoder::Logits::None);
  }
  int64_t stored = 0;
  for (int64_t n : counts) stored += n;
  return stored;
}

at::Tensor draft_inplace(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, int64_t k) {
  const int64_t B = static_cast<int64_t>(rows.size());
  if (k < 1) return at::empty({B, 0}, at::kLong);
  if (!m.draft) throw std::logic_error("draft_inplace: no draft model");
  // First forward: each row's lag, then pending (the runs differ in length: right padding).
  std::vector<std::vector<int64_t>> runs;
  std::vector<int64_t> counts;
  int64_t T = 0;
  for (const InplaceSeq* s : rows) {
    if (m.target_store && prefill_remaining(m, *s) > 0) throw std::logic_error("draft_inplace: a row is still prefilling");
    runs.emplace_back(s->tokens.begin() + m.draft_store->length(s->slot), s->tokens.end());
    counts.push_back(static_cast<int64_t>(runs.back().size()));
    T = std::max(T, counts.back());
  }
  const std::vector<int64_t> slots = slots_of(rows);
  at::Tensor ids = right_padded(runs, T);
  std::vector<at::Tensor> drafts;
  for (int64_t j = 0; j < k; ++j) {
    at::Tensor logits = m.draft->forward_slots(ids, counts, *m.draft_store, slots, Decoder::Logits::Last);
    at::Tensor next = logits.select(1, 0).argmax(-1).to(at::kCPU);
    drafts.push_back(next);
    ids = next.view({B, 1});
    counts.assign(B, 1);
  }
  return at::stack(drafts, 1);  // [B, K]
}

VerifyResult verify_inplace(const InplaceModels& m, const std::vector<const InplaceSeq*>& rows, const at::Tensor& drafts,
                            const std::vector<RowSampling>& sampling) {
  const int64_t B = static_cast<int64_t>(rows.size()), K = drafts.size(1);
  std::vector<int64_t> pending, lengths;
  for (const InplaceSeq* s : rows) {
    if (prefill_remaining(m, *s) != 0) throw std::logic_error("verify_inplace: a row's target slot is not at pending");
    pending.push_back(s->tokens.back());
    lengths.push_back(static_cast<int64_t>(s->tokens.size()));
  }
  at::Tensor d = drafts.to(at::kCPU, at::kLong);
  at::Tensor ids = at::cat({at::tensor(pending, at::kLong).view({B, 1}), d}, 1);  // [B, K+1]
  at::Tensor logits = m.target->forward_slots(ids, std::vector<int64_t>(B, K + 1), *m.target_store, slots_of(rows),
                                              Decoder::Logits::All);
  return accept(logits, d, at::tensor(lengths, at::kLong), sampling);
}

void commit_inplace(const InplaceModels& m, const std::vector<InplaceSeq*>& rows, const VerifyResult& v, int64_t k) {
  at::Tensor tokens = v.tokens.to(at::kCPU).contiguous();
  auto acc = v.accepted.accessor<int64_t, 1>();
  for (size_t b = 0; b < rows.size(); ++b) {
    InplaceSeq& s = *rows[b];
    const int64_t a = acc[static_cast<int64_t>(b)], before = pending_count(s), after = before + a + 1;
    // Target: [pending, d_1..d_K] were written after `before`; pending and d_1..d_a stay.
    m.target_store->set_length(s.slot, after);
    // Draft: its last forward left [pending, d_1..d_{K-1}] after `before`; it keeps what was accepted.
    if (m.draft_store && k > 0) m.draft_store->set_length(s.slot, after - lag_after_step(draft_lag(m, s), k, a));
    const int64_t* row = tokens.data_ptr<int64_t>() + static_cast<int64_t>(b) * tokens.size(1);
    s.tokens.insert(s.tokens.end(), row, row + a + 1);
  }
}

}  // namespace exspec
