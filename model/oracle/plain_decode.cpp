#include "model/oracle/plain_decode.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "grammar/matcher.h"
#include "model/constrained.h"
#include "model/decoder.h"
#include "model/oracle/dense_forward.h"
#include "model/oracle/padding.h"
#include "model/sampling.h"

namespace exspec {

namespace {

bool on_host(const SeqRequest& q) { return !q.sampling.plain_greedy() || q.sampling.logprobs >= 0 || q.grammar; }

// Sampled rows (and rows that want logprobs, and rows under a grammar) take their token from the
// sampler on the host, in float64, at absolute position prompt + generated: the definition of
// plain sampling. A grammar's mask goes onto the logits first (model/constrained.h), and its
// matcher takes the chosen token.
void sample_rows(const at::Tensor& logits, const std::vector<SeqRequest>& reqs, const std::vector<size_t>& active,
                 std::vector<SeqResult>& out, std::map<size_t, grammar::Matcher>& matchers, at::Tensor& next) {
  bool any = false;
  for (size_t i : active) any = any || on_host(reqs[i]);
  if (!any) return;
  at::Tensor x = logits.select(1, 0).to(at::kCPU, at::kDouble).contiguous();  // [B, V]
  at::Tensor chosen = next.to(at::kCPU).clone();
  const int64_t V = x.size(1);
  grammar::TokenBitset mask;
  for (size_t b = 0; b < active.size(); ++b) {
    const SeqRequest& q = reqs[active[b]];
    SeqResult& r = out[active[b]];
    double* row = x.data_ptr<double>() + static_cast<int64_t>(b) * V;
    grammar::Matcher* m = q.grammar ? &matchers.at(active[b]) : nullptr;
    if (m) mask_column(*m, mask, row, V);
    if (!q.sampling.plain_greedy() || m) {
      const TokenHistory h{q.prompt.data(), q.prompt.size(), r.tokens.data(), r.tokens.size(), nullptr, 0};
      chosen[b] = sample_token(row, V, q.sampling, h, static_cast<int64_t>(q.prompt.size() + r.tokens.size()));
    }
    if (m && !m->accept(static_cast<int32_t>(chosen[b].item<int64_t>())))
      throw std::logic_error("plain decoding chose a token its grammar refuses");
    if (q.sampling.logprobs >= 0)
      r.logprobs.push_back(token_logprob(row, V, chosen[b].item<int64_t>(), q.sampling.logprobs));
  }
  next = chosen.to(next.device());
}

void decode_chunk(const Decoder& model, const std::vector<SeqRequest>& reqs, const std::vector<size_t>& which,
                  std::vector<SeqResult>& out) {
  std::vector<std::vector<int64_t>> prompts;
  int64_t longest = 0, budget = 0;
  std::vector<size_t> active;  // request indices of the rows still in the batch
  std::map<size_t, grammar::Matcher> matchers;  // per constrained request
  for (size_t i : which) {
    if (reqs[i].max_tokens == 0) {
      out[i].finish = FinishReason::Length;
      continue;
    }
    if (reqs[i].grammar) matchers.emplace(i, grammar::Matcher(reqs[i].grammar));
    prompts.push_back(reqs[i].prompt);
    active.push_back(i);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(reqs[i].prompt.size()));
    budget = std::max(budget, reqs[i].max_tokens);
  }
  if (active.empty()) return;

  PaddedBatch pb = left_pad(prompts, /*pad_id=*/0, model.device());
  KVCache cache = new_dense_cache(model, static_cast<int64_t>(active.size()), longest + budget);
  at::Tensor mask = pb.mask;
  at::Tensor next_pos = mask.sum(1, /*keepdim=*/true);  // content length = next position id
  at::Tensor logits = dense_forward(model, pb.ids, pb.positions, mask, cache, 1);

  while (true) {
    at::Tensor next = logits.select(1, 0).argmax(-1);  // [B]
    sample_rows(logits, reqs, active, out, matchers, next);
    at::Tensor next_cpu = next.to(at::kCPU);
    auto na = next_cpu.accessor<int64_t, 1>();
    std::vector<int64_t> keep;
    for (int64_t b = 0; b < static_cast<int64_t>(active.size()); ++b) {
      SeqResult& r = out[active[b]];
      r.tokens.push_back(na[b]);
      r.finish = finish_after(reqs[active[b]], na[b], static_cast<int64_t>(r.tokens.size()));
      if (r.finish == FinishReason::None) keep.push_back(b);
    }
    if (keep.empty()) return;
    if (keep.size() != active.size()) {
      // Finished rows leave the batch so that no compute is spent on them.
      at::Tensor rows = at::tensor(keep, at::kLong).to(model.device());
      cache = cache.select_rows(rows);
      mask = mask.index_select(0, rows);
      next = next.index_select(0, rows);
      next_pos = next_pos.index_select(0, rows);
      std::vector<size_t> still;
      for (int64_t b : keep) still.push_back(active[b]);
      active = std::move(still);
    }
    mask = at::cat({mask, at::ones({mask.size(0), 1}, mask.options())}, 1);
    logits = dense_forward(model, next.unsqueeze(1), next_pos, mask, cache, 1);
    next_pos = next_pos + 1;
  }
}

}  // namespace

std::vector<TokenLogprob> prompt_logprobs(const Decoder& model, const std::vector<int64_t>& prompt, int64_t top) {
  const int64_t T = static_cast<int64_t>(prompt.size()), chunk = 256;
  std::vector<TokenLogprob> out;
  if (T < 2) return out;
  KVCache cache = new_dense_cache(model, 1, T);
  for (int64_t from = 0; from + 1 < T; from += chunk) {
    const int64_t n = std::min(chunk, T - 1 - from);  // positions from .. from + n - 1 predict from + 1 ..
    std::vector<int64_t> piece(prompt.begin() + from, prompt.begin() + from + n);
    at::Tensor ids = at::tensor(piece, at::kLong).view({1, n}).to(model.device());
    at::Tensor pos = at::arange(from, from + n, at::kLong).view({1, n}).to(model.device());
    at::Tensor logits =
        dense_forward(model, ids, pos, at::ones({1, from + n}, at::kLong), cache).to(at::kCPU, at::kDouble).contiguous();
    const int64_t V = logits.size(2);
    for (int64_t t = 0; t < n; ++t)
      out.push_back(token_logprob(logits.data_ptr<double>() + t * V, V, prompt[from + t + 1], top));
  }
  return out;
}

std::vector<SeqResult> plain_decode(const Decoder& model, const std::vector<SeqRequest>& requests,
                                       int64_t batch_size) {
  if (batch_size < 1) throw std::invalid_argument("batch size must be >= 1");
  for (const auto& r : requests) validate_request(model.config(), r);
  std::vector<SeqResult> out(requests.size());
  for (size_t start = 0; start < requests.size(); start += static_cast<size_t>(batch_size)) {
    std::vector<size_t> which;
    for (size_t i = start; i < std::min(requests.size(), start + static_cast<size_t>(batch_size)); ++i)
      which.push_back(i);
    decode_chunk(model, requests, which, out);
  }
  return out;
}

}  // namespace exspec
