#include "model/inplace.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "grammar/matcher.h"
#include "model/constrained.h"
#include "model/decoder.h"
#include "model/to_device.h"

namespace exspec {
namespace {

// Right-padded ids [B, T] of token runs (padding 0: never stored, never read as content).
at::Tensor right_padded(const std::vector<std::vector<int64_t>>& runs, int64_t T) {
  const int64_t B = static_cast<int64_t>(runs.size());
  at::Tensor ids = at::zeros({B, T}, at::kLong);
  auto a = ids.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b)
    for (size_t t = 0; t < runs[b].size(); ++t) a[b][static_cast<int64_t>(t)] = runs[b][t];
  return ids;
}

// A row's `count` new tokens after what the target's (draft's) store holds of it, in its blocks:
// the row's counters say where they go (model/slot_row.h), the store remembers nothing.
SlotSpan target_span(const SlotRow& r, int64_t count) { return {r.slot, r.target_len, count, r.target_blocks}; }
SlotSpan draft_span(const SlotRow& r, int64_t count) { return {r.slot, r.draft_len, count, r.draft_blocks}; }

}  // namespace

int64_t prefill_chunk(const ModelSet& m, const std::vector<SlotRow*>& rows, int64_t budget, int64_t top,
                      std::vector<std::vector<TokenLogprob>>* logprobs) {
  if (budget < 1) throw std::invalid_argument("prefill_chunk: the token budget must be >= 1");
  std::vector<SlotRow*> todo;
  std::vector<int64_t> rem;
  std::vector<size_t> index;  // each todo row's place in rows
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t r = rows[i]->prefill_remaining();
    if (r > 0) todo.push_back(rows[i]), rem.push_back(r), index.push_back(i);
  }
  if (logprobs) logprobs->assign(rows.size(), {});
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
  todo.resize(static_cast<size_t>(best_n));
  // The draft follows the prompt chunk by chunk: its slot must be exactly as far as the
  // target's (a draft behind by a lag would need the lag fed first).
  if (m.draft)
    for (const SlotRow* s : todo)
      if (s->draft_len != s->target_len) throw std::logic_error("prefill_chunk: the draft's slot is not where the target's is");
  std::vector<std::vector<int64_t>> runs;
  std::vector<int64_t> counts;
  std::vector<SlotSpan> target_rows, draft_rows;
  for (int64_t i = 0; i < best_n; ++i) {
    const SlotRow* s = todo[i];
    const int64_t n = std::min(rem[i], best_T);
    runs.emplace_back(s->tokens.begin() + s->target_len, s->tokens.begin() + s->target_len + n);
    counts.push_back(n);
    target_rows.push_back(target_span(*s, n));
    if (m.draft) draft_rows.push_back(draft_span(*s, n));
  }
  at::Tensor ids = right_padded(runs, best_T);
  const at::Tensor logits =
      m.target->forward_slots(ids, target_rows, *m.target_store, logprobs ? Decoder::Logits::All : Decoder::Logits::None);
  if (m.draft) m.draft->forward_slots(ids, draft_rows, *m.draft_store, Decoder::Logits::None);
  if (logprobs)  // position p predicts token p + 1: a prompt token, as the pending one is never stored
    for (int64_t i = 0; i < best_n; ++i) {
      const at::Tensor row = logits[i].narrow(0, 0, counts[i]).to(at::kCPU, at::kDouble).contiguous();
      const int64_t V = row.size(1);
      for (int64_t t = 0; t < counts[i]; ++t)
        (*logprobs)[index[i]].push_back(
            token_logprob(row.data_ptr<double>() + t * V, V, todo[i]->tokens[todo[i]->target_len + t + 1], top));
    }
  int64_t stored = 0;
  for (int64_t i = 0; i < best_n; ++i) {  // the counters advance once the forwards went through
    todo[i]->target_len += counts[i];
    if (m.draft) todo[i]->draft_len += counts[i];
    stored += counts[i];
  }
  return stored;
}

namespace {

// The drafts of rows under a grammar: the masked argmax of the draft's logits [B, V], taken by
// each row's matcher; a row whose grammar allows nothing more keeps the plain argmax (cut at
// verification). The destructor rolls the matchers back to where the step found them.
struct GrammarDrafts {
  const std::vector<RowSampling>& rows;
  std::vector<int64_t> taken, live;
  grammar::TokenBitset scratch;

  explicit GrammarDrafts(const std::vector<RowSampling>& r) : rows(r), taken(r.size(), 0), live(r.size(), 1) {}
  ~GrammarDrafts() {
    for (size_t b = 0; b < rows.size(); ++b)
      if (rows[b].matcher) rows[b].matcher->rollback(static_cast<size_t>(taken[b]));
  }
  void choose(const at::Tensor& logits, at::Tensor& next) {
    for (size_t b = 0; b < rows.size(); ++b) {
      if (!rows[b].matcher || !live[b]) continue;
      at::Tensor x = logits[static_cast<int64_t>(b)].to(at::kCPU, at::kDouble).contiguous();
      const int64_t t = masked_argmax(*rows[b].matcher, scratch, x.data_ptr<double>(), x.size(0));
      if (t < 0) live[b] = 0;
      else next[static_cast<int64_t>(b)] = t, ++taken[b];
    }
  }
};

bool any_grammar(const std::vector<RowSampling>& rows) {
  for (const RowSampling& r : rows)
    if (r.matcher) return true;
  return false;
}

}  // namespace

at::Tensor draft_inplace(const ModelSet& m, const std::vector<const SlotRow*>& rows, int64_t k,
                         const std::vector<RowSampling>& sampling) {
  const int64_t B = static_cast<int64_t>(rows.size());
  if (k < 1) return at::empty({B, 0}, at::kLong);
  if (!m.draft) throw std::logic_error("draft_inplace: no draft model");
  // First forward: each row's lag, then pending (the runs differ in length: right padding).
  std::vector<std::vector<int64_t>> runs;
  std::vector<SlotSpan> spans;
  int64_t T = 0;
  for (const SlotRow* s : rows) {
    if (s->prefill_remaining() > 0) throw std::logic_error("draft_inplace: a row is still prefilling");
    runs.emplace_back(s->tokens.begin() + s->draft_len, s->tokens.end());
    spans.push_back(draft_span(*s, static_cast<int64_t>(runs.back().size())));
    T = std::max(T, spans.back().count);
  }
  at::Tensor ids = right_padded(runs, T);
  std::vector<at::Tensor> drafts;
  std::optional<GrammarDrafts> grammar;
  if (any_grammar(sampling)) grammar.emplace(sampling);
  for (int64_t j = 0; j < k; ++j) {
    at::Tensor logits = m.draft->forward_slots(ids, spans, *m.draft_store, Decoder::Logits::Last);
    // Stays on the device as the next forward's input, unless a grammar masks the draft's choice
    // on the host.
    at::Tensor next = argmax_last(logits.select(1, 0));
    if (grammar) {
      next = next.to(at::kCPU);
      grammar->choose(logits.select(1, 0), next);
    }
    drafts.push_back(next);
    ids = next.view({B, 1});
    for (SlotSpan& sp : spans) sp.start += sp.count, sp.count = 1;  // each draft after the last
  }
  return at::stack(drafts, 1);  // [B, K], on the draft's device: verification reads it there
}

VerifyResult verify_inplace(const ModelSet& m, const std::vector<const SlotRow*>& rows, const at::Tensor& drafts,
                            const std::vector<RowSampling>& sampling) {
  const int64_t B = static_cast<int64_t>(rows.size()), K = drafts.size(1);
  std::vector<int64_t> pending, lengths;
  std::vector<SlotSpan> spans;
  for (const SlotRow* s : rows) {
    if (s->prefill_remaining() != 0) throw std::logic_error("verify_inplace: a row's target slot is not at pending");
    pending.push_back(s->tokens.back());
    lengths.push_back(static_cast<int64_t>(s->tokens.size()));
    spans.push_back(target_span(*s, K + 1));
  }
  // Drafts on the device (the draft model's) stay there: the ids are put together where they are.
  at::Tensor d = drafts.to(at::kLong);
  at::Tensor ids = at::cat({to_device(at::tensor(pending, at::kLong).view({B, 1}), d.device()), d}, 1);  // [B, K+1]
  at::Tensor logits = m.target->forward_slots(ids, spans, *m.target_store, Decoder::Logits::All);
  return accept(logits, d, at::tensor(lengths, at::kLong), sampling);
}

void commit_inplace(const std::vector<SlotRow*>& rows, const VerifyResult& v, int64_t k,
                    const std::vector<int64_t>& agree) {
  at::Tensor tokens = v.tokens.to(at::kCPU).contiguous();
  auto acc = v.accepted.accessor<int64_t, 1>();
  for (size_t b = 0; b < rows.size(); ++b) {
    SlotRow& s = *rows[b];
    const int64_t a = acc[static_cast<int64_t>(b)], after = s.before_pending() + a + 1;
    // Target: [pending, d_1..d_K] were written after pending's position; pending and d_1..d_a stay.
    s.target_len = after;
    // Draft: its last forward left [pending, d_1..d_{K-1}] there (nothing at K = 0); it keeps
    // what was accepted.
    s.draft_len = after - lag_after_step(s.draft_lag(), k, a, agree.empty() ? k : agree.at(b));
    const int64_t* row = tokens.data_ptr<int64_t>() + static_cast<int64_t>(b) * tokens.size(1);
    s.tokens.insert(s.tokens.end(), row, row + a + 1);
  }
}

}  // namespace exspec
