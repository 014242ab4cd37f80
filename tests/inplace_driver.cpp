#include "tests/inplace_driver.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "actors/acceptance.h"
#include "actors/draft_length.h"
#include "model/decoder.h"
#include "model/greedy.h"

namespace exspec::test {

struct InplaceRunner::Live {
  size_t req = 0;
  InplaceSeq seq;
  AcceptanceEstimate acceptance;
  int64_t last_step = -1;
};

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

bool any_host(const std::vector<SeqRequest>& requests) {
  for (const auto& r : requests)
    if (!r.sampling.plain_greedy() || r.sampling.logprobs >= 0) return true;
  return false;
}

}  // namespace

InplaceRunner::InplaceRunner(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, InplaceConfig c)
    : target_(std::move(target)), draft_(std::move(draft)), c_(std::move(c)) {
  if (c_.batch_size < 1 || c_.max_sequences < 1 || c_.chunk_tokens < 1 || c_.k < 0)
    throw std::invalid_argument("InplaceRunner: batch_size, max_sequences, chunk_tokens >= 1, k >= 0");
  if (!draft_) c_.k = 0, c_.policy.reset();
}

void InplaceRunner::admit(const std::vector<SeqRequest>& requests, std::vector<Live>& live, std::vector<size_t>& waiting) {
  while (!waiting.empty() && !slots_.full()) {
    Live l;
    l.req = waiting.front();
    l.seq.slot = slots_.acquire();  // the same slot in both stores, empty
    tstore_.set_length(l.seq.slot, 0);
    if (draft_) dstore_.set_length(l.seq.slot, 0);
    stats_.slot_reuses += slot_used_before_[l.seq.slot];
    slot_used_before_[l.seq.slot] = true;
    l.seq.tokens = requests[l.req].prompt;
    live.push_back(std::move(l));
    waiting.erase(waiting.begin());
  }
}

int64_t InplaceRunner::choose_k(const std::vector<SeqRequest>& requests, const std::vector<Live*>& rows,
                                const std::vector<SeqResult>& out) {
  if (!draft_) return 0;
  if (!c_.policy) return c_.k;
  std::vector<RowOutlook> outlook;
  int64_t context = 0, lag = 0;
  for (const Live* l : rows) {
    const SeqRequest& q = requests[l->req];
    const int64_t remaining = q.max_tokens - static_cast<int64_t>(out[l->req].tokens.size());
    outlook.push_back(c_.policy->outlook(l->acceptance, remaining, temperature_band(q.sampling.temperature)));
    context = std::max(context, static_cast<int64_t>(l->seq.tokens.size()));
    lag = std::max(lag, draft_lag(models_, l->seq));
  }
  return c_.policy->choose(outlook, context, /*reused=*/true, lag).k;
}

void InplaceRunner::decode(const std::vector<SeqRequest>& requests, std::vector<Live>& live, std::vector<SeqResult>& out) {
  std::vector<Live*> rows;
  for (Live& l : live)
    if (prefill_remaining(models_, l.seq) == 0) rows.push_back(&l);
  if (rows.empty()) return;
  // The least recently stepped first (every ready sequence gets its turn), then in slot order:
  // consecutive slots read their keys as a view.
  std::stable_sort(rows.begin(), rows.end(), [](const Live* a, const Live* b) { return a->last_step < b->last_step; });
  if (static_cast<int64_t>(rows.size()) > c_.batch_size) rows.resize(c_.batch_size);
  std::sort(rows.begin(), rows.end(), [](const Live* a, const Live* b) { return a->seq.slot < b->seq.slot; });

  const int64_t K = choose_k(requests, rows, out);
  std::vector<const InplaceSeq*> seqs;
  std::vector<InplaceSeq*> mseqs;
  std::vector<int64_t> lags;
  int64_t context = 0;
  for (Live* l : rows) {
    seqs.push_back(&l->seq), mseqs.push_back(&l->seq), lags.push_back(draft_lag(models_, l->seq));
    context = std::max(context, static_cast<int64_t>(l->seq.tokens.size()));
  }
  auto t = Clock::now();
  at::Tensor drafts = draft_inplace(models_, seqs, K);
  const double draft_s = since(t);
  std::vector<RowSampling> sampling;
  if (any_host(requests))
    for (Live* l : rows) sampling.push_back(row_sampling(requests[l->req].sampling, requests[l->req].prompt, out[l->req].tokens));
  t = Clock::now();
  VerifyResult v = verify_inplace(models_, seqs, drafts, sampling);
  const double verify_s = since(t);
  commit_inplace(models_, mseqs, v, K);
  ++stats_.decode_steps;
  ++stats_.k_steps[K];
  stats_.drafted += static_cast<int64_t>(rows.size()) * K;
  stats_.accepted += v.accepted.sum().item<int64_t>();
  if (c_.policy)
    c_.policy->observe_step(StepShape{static_cast<int64_t>(rows.size()), K, context,
                                      *std::max_element(lags.begin(), lags.end()), true},
                            draft_s, verify_s, 0.0);

  auto acc = v.accepted.accessor<int64_t, 1>();
  for (size_t b = 0; b < rows.size(); ++b) {
    Live& l = *rows[b];
    SeqResult& r = out[l.req];
    const SeqRequest& q = requests[l.req];
    for (int64_t j = 0; j <= acc[b] && r.finish == FinishReason::None; ++j) {
      r.tokens.push_back(v.tokens[b][j].item<int64_t>());
      if (!v.logprobs.empty() && !v.logprobs[b].empty()) r.logprobs.push_back(v.logprobs[b][j]);
      r.finish = finish_after(q, r.tokens.back(), static_cast<int64_t>(r.tokens.size()));
    }
    if (c_.policy) c_.policy->learn(l.acceptance, K, acc[b], temperature_band(q.sampling.temperature));
    l.last_step = step_;
  }
  for (size_t i = live.size(); i-- > 0;) {
    if (out[live[i].req].finish == FinishReason::None) continue;
    slots_.release(live[i].seq.slot);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

std::vector<SeqResult> InplaceRunner::run(const std::vector<SeqRequest>& requests, const InplaceEvents& events) {
  const size_t n = requests.size();
  std::vector<SeqResult> out(n);
  // Each slot is sized for the longest sequence: prompt + max_tokens, plus the drafts a
  // verification writes beyond the last token it keeps.
  const int64_t k_max = c_.policy ? c_.policy->settings().k_max : c_.k;
  int64_t capacity = 1;
  for (const auto& r : requests) {
    validate_request(*target_, r);
    capacity = std::max(capacity, static_cast<int64_t>(r.prompt.size()) + r.max_tokens + k_max);
  }
  tstore_ = target_->new_store(c_.max_sequences, capacity);
  if (draft_) dstore_ = draft_->new_store(c_.max_sequences, capacity);
  models_ = InplaceModels{target_.get(), &tstore_, draft_.get(), draft_ ? &dstore_ : nullptr};
  slots_ = SlotTable(c_.max_sequences);
  slot_used_before_.assign(c_.max_sequences, false);
  stats_ = InplaceStats{};

  std::vector<bool> arrived(n, false);
  size_t arrivals = 0;
  std::vector<size_t> waiting;
  std::vector<Live> live;
  for (step_ = 0; arrivals < n || !waiting.empty() || !live.empty(); ++step_) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t at = i < events.arrive_at.size() ? events.arrive_at[i] : -1;
      if (arrived[i] || at > step_) continue;
      arrived[i] = true, ++arrivals;
      if (requests[i].max_tokens == 0) out[i].finish = FinishReason::Length;
      else waiting.push_back(i);
    }
    for (auto [req, at] : events.cancel_at) {  // the client goes away: its slot is free at once
      if (at != step_) continue;
      waiting.erase(std::remove(waiting.begin(), waiting.end(), req), waiting.end());
      for (size_t i = 0; i < live.size(); ++i) {
        if (live[i].req != req) continue;
        slots_.release(live[i].seq.slot);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    admit(requests, live, waiting);
    stats_.max_live = std::max<int64_t>(stats_.max_live, static_cast<int64_t>(live.size()));
    stats_.max_waiting = std::max<int64_t>(stats_.max_waiting, static_cast<int64_t>(waiting.size()));
    std::vector<const InplaceSeq*> prefilling;
    for (const Live& l : live)
      if (prefill_remaining(models_, l.seq) > 0) prefilling.push_back(&l.seq);
    if (!prefilling.empty()) {
      prefill_chunk(models_, prefilling, c_.chunk_tokens);
      ++stats_.prefill_forwards;
    }
    const int64_t before = stats_.decode_steps;
    decode(requests, live, out);
    if (!prefilling.empty()) stats_.decode_during_prefill += stats_.decode_steps - before;
  }
  stats_.steps = step_;
  return out;
}

}  // namespace exspec::test
