#include "actors/spec_engine.h"

#include <ATen/ATen.h>

#include <chrono>
#include <stdexcept>

#include "actors/batch_former.h"
#include "actors/calibration.h"
#include "actors/sequence_pool.h"
#include "actors/window.h"
#include "model/decoder.h"
#include "model/greedy.h"
#include "model/spec_batch.h"
#include "model/speculative.h"

namespace exspec {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Plain greedy requests keep the tensor argmax path: no per-row host work at all.
bool any_host(const std::vector<SeqRequest>& requests) {
  for (const auto& r : requests)
    if (!r.sampling.plain_greedy() || r.sampling.logprobs >= 0) return true;
  return false;
}

bool all_equal(const at::Tensor& v) { return v.numel() == 0 || v.min().item<int64_t>() == v.max().item<int64_t>(); }

}  // namespace

SpecEngine::SpecEngine(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, EngineConfig c)
    : target_(std::move(target)), draft_(std::move(draft)), config_(c) {
  validate(config_);
  if (config_.mode == Mode::NonSpec) {
    draft_.reset();
  } else {
    if (!draft_) throw std::invalid_argument(std::string(mode_name(config_.mode)) + " needs a draft model");
    if (draft_->config().vocab_size != target_->config().vocab_size)
      throw std::invalid_argument("draft and target vocabularies differ (" +
                                  std::to_string(draft_->config().vocab_size) + " vs " +
                                  std::to_string(target_->config().vocab_size) + ")");
  }
  policy_ = make_policy(config_, *target_, draft_.get(), /*pipelined=*/false);
}

// Spare cache positions a step may append: K + 1 tokens a row (K at most the configured or
// the largest adaptive K; 0 in nonspec mode), plus one.
int64_t SpecEngine::cache_reserve() const {
  return (policy_ ? std::max(config_.draft_tokens, config_.max_draft_tokens) : 0) + 2;
}

int64_t SpecEngine::choose_k(const std::vector<RowOutlook>& rows, int64_t context, int64_t lag, bool reused,
                             StepShape& shape) {
  const int64_t k = policy_ ? policy_->choose(rows, context, reused, lag).k : 0;
  shape = StepShape{static_cast<int64_t>(rows.size()), k, context, lag, reused};
  stats_.count_k(k);
  return k;
}

void SpecEngine::learn(const StepShape& shape, double draft_s, double verify_s, double align_s) {
  if (policy_) policy_->observe_step(shape, draft_s, verify_s, align_s);
}

std::vector<SeqResult> SpecEngine::run(const std::vector<SeqRequest>& requests) {
  for (const auto& r : requests) validate_request(*target_, r);
  stats_ = RunStats{};
  stats_.sequences = static_cast<int64_t>(requests.size());
  std::vector<SeqResult> out(requests.size());
  const auto t0 = Clock::now();
  if (config_.mode == Mode::ExSpec) run_pool(requests, out);
  else run_fixed_batches(requests, out);
  stats_.wall_s = since(t0);
  return out;
}

// nonspec and eqspec: fixed batches of B in request order; after every verification the batch
// is realigned (EqSpec, Algorithm 2) and finished rows leave it.
void SpecEngine::run_fixed_batches(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out) {
  const int64_t reserve = cache_reserve();
  const bool host = any_host(requests);
  for (size_t start = 0; start < requests.size(); start += static_cast<size_t>(config_.batch_size)) {
    std::vector<size_t> rows;
    std::vector<std::vector<int64_t>> prompts;
    for (size_t i = start; i < std::min(requests.size(), start + static_cast<size_t>(config_.batch_size)); ++i) {
      if (requests[i].max_tokens == 0) {
        out[i].finish = FinishReason::Length;
        continue;
      }
      rows.push_back(i);
      prompts.push_back(requests[i].prompt);
    }
    if (rows.empty()) continue;
    auto t = Clock::now();
    std::vector<SeqTensors> seqs = prefill(*target_, draft_.get(), prompts);
    stats_.prefill_s += since(t);
    t = Clock::now();
    std::vector<const SeqTensors*> ptrs;
    for (const auto& s : seqs) ptrs.push_back(&s);
    SpecBatch batch = assemble(ptrs, reserve);
    stats_.align_s += since(t);
    std::vector<AcceptanceEstimate> acceptance(rows.size());
    std::vector<int64_t> lag;  // the draft catches up lazily: at first its lag is the prompt prefix
    for (const auto& s : seqs) lag.push_back(static_cast<int64_t>(s.draft_lag.size()));

    while (!rows.empty()) {
      stats_.grouped_steps += all_equal(batch.lengths);
      std::vector<RowOutlook> outlook;
      int64_t context = 0, max_lag = 0;
      for (size_t b = 0; b < rows.size(); ++b) {
        const int64_t done = static_cast<int64_t>(out[rows[b]].tokens.size());
        if (policy_)
          outlook.push_back(policy_->outlook(acceptance[b], requests[rows[b]].max_tokens - done,
                                             temperature_band(requests[rows[b]].sampling.temperature)));
        else outlook.push_back(RowOutlook{});
        context = std::max(context, static_cast<int64_t>(requests[rows[b]].prompt.size()) + done);
        max_lag = std::max(max_lag, lag[b]);
      }
      StepShape shape;
      const int64_t K = choose_k(outlook, context, max_lag, true, shape);
      t = Clock::now();
      at::Tensor drafts = draft_ ? draft_tokens(*draft_, batch, K) : at::empty({batch.batch(), 0}, at::kLong);
      const double draft_s = since(t);
      std::vector<RowSampling> sampling;
      for (size_t b = 0; host && b < rows.size(); ++b)
        sampling.push_back(row_sampling(requests[rows[b]].sampling, requests[rows[b]].prompt, out[rows[b]].tokens));
      t = Clock::now();
      VerifyResult v = verify(*target_, batch, drafts, sampling);
      const double verify_s = since(t);
      stats_.draft_s += draft_s;
      stats_.verify_s += verify_s;
      commit(batch, v, drafts);
      ++stats_.steps;
      stats_.row_verifications += batch.batch();
      stats_.drafted += batch.batch() * K;
      stats_.accepted += v.accepted.sum().item<int64_t>();

      std::vector<int64_t> keep;
      auto acc = v.accepted.accessor<int64_t, 1>();
      for (int64_t b = 0; b < static_cast<int64_t>(rows.size()); ++b) {
        SeqResult& r = out[rows[b]];
        const SeqRequest& q = requests[rows[b]];
        for (int64_t j = 0; j <= acc[b] && r.finish == FinishReason::None; ++j) {
          r.tokens.push_back(v.tokens[b][j].item<int64_t>());
          if (!v.logprobs.empty() && !v.logprobs[b].empty()) r.logprobs.push_back(v.logprobs[b][j]);
          r.finish = finish_after(q, r.tokens.back(), static_cast<int64_t>(r.tokens.size()));
          ++stats_.committed;
        }
        if (r.finish == FinishReason::None) keep.push_back(b);
        const int band = temperature_band(q.sampling.temperature);
        stats_.count_band(band, K, acc[b]);
        if (policy_) policy_->learn(acceptance[b], lag[b], K, acc[b], band);
      }
      t = Clock::now();
      if (keep.size() != rows.size()) {
        std::vector<size_t> still;
        std::vector<AcceptanceEstimate> still_acc;
        std::vector<int64_t> still_lag;
        for (int64_t b : keep) still.push_back(rows[b]), still_acc.push_back(acceptance[b]), still_lag.push_back(lag[b]);
        rows = std::move(still);
        acceptance = std::move(still_acc);
        lag = std::move(still_lag);
        if (!rows.empty()) select_rows(batch, at::tensor(keep, at::kLong), reserve);
      }
      if (!rows.empty()) {
        realign(batch.target, reserve);
        realign(batch.draft, reserve);
      }
      const double align_s = since(t);
      stats_.align_s += align_s;
      learn(shape, draft_s, verify_s, align_s);
    }
  }
}

// exspec: SequencePool + window + same-length groups (Algorithm 3). Rows return to the pool
// after every step; batches are re-formed from whichever sequences line up.
void SpecEngine::run_pool(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out) {
  const int64_t reserve = cache_reserve();
  SequencePool pool;
  std::vector<SeqId> ids;
  for (const auto& r : requests) ids.push_back(pool.admit(r));
  Window window(static_cast<size_t>(config_.window), config_.sort_by_length);
  BatchFormer former(static_cast<size_t>(config_.batch_size), config_.min_group_fill, config_.max_wait);

  for (int64_t step = 0; pool.unfinished() > 0; ++step) {
    // Phase 4 of the previous step / start: refill the window, prefilling the newcomers.
    std::vector<SeqId> fresh = window.refill(pool);
    for (size_t s = 0; s < fresh.size(); s += static_cast<size_t>(config_.batch_size)) {
      std::vector<std::vector<int64_t>> prompts;
      std::vector<SeqId> part(fresh.begin() + s, fresh.begin() + std::min(fresh.size(), s + config_.batch_size));
      for (SeqId id : part) prompts.push_back(pool.at(id).request.prompt);
      auto t = Clock::now();
      std::vector<SeqTensors> st = prefill(*target_, draft_.get(), prompts);
      stats_.prefill_s += since(t);
      for (size_t i = 0; i < part.size(); ++i) {
        pool.at(part[i]).draft_lag = static_cast<int64_t>(st[i].draft_lag.size());
        pool.at(part[i]).tensors = std::make_shared<SeqTensors>(std::move(st[i]));
      }
    }

    // Phase 1: form the batch (same-length group first), assemble it (stack or repad).
    std::vector<Candidate> ready;
    for (SeqId id : window.members()) {
      const Sequence& s = pool.at(id);
      ready.push_back({id, s.length(), s.last_step});
    }
    BatchChoice choice = former.form(ready, step, !policy_ || policy_->speculating());
    auto t = Clock::now();
    std::vector<const SeqTensors*> ptrs;
    for (SeqId id : choice.ids) ptrs.push_back(pool.at(id).tensors.get());
    bool reused = false;
    SpecBatch batch = assemble(ptrs, reserve, &reused);
    double align_s = since(t);
    stats_.grouped_steps += all_equal(batch.lengths);
    stats_.reused_steps += reused;

    // Phases 2 and 3: choose K, draft, verify.
    const BatchOutlook o = policy_->outlook(pool, choice.ids);
    StepShape shape;
    const int64_t K = choose_k(o.rows, o.context, o.lag, reused, shape);
    t = Clock::now();
    at::Tensor drafts = draft_tokens(*draft_, batch, K);
    const double draft_s = since(t);
    t = Clock::now();
    VerifyResult v = verify(*target_, batch, drafts, sampling_rows(pool, choice.ids));
    const double verify_s = since(t);
    stats_.draft_s += draft_s;
    stats_.verify_s += verify_s;
    commit(batch, v, drafts);
    ++stats_.steps;
    stats_.row_verifications += batch.batch();
    stats_.drafted += batch.batch() * K;
    stats_.accepted += v.accepted.sum().item<int64_t>();

    // Phase 4: write back; finished sequences leave the window; the others return to the pool.
    t = Clock::now();
    realign(batch.target, reserve);
    realign(batch.draft, reserve);
    std::vector<SeqTensors> rows = split_rows(batch);
    auto acc = v.accepted.accessor<int64_t, 1>();
    at::Tensor toks = v.tokens.contiguous();
    for (int64_t b = 0; b < static_cast<int64_t>(choice.ids.size()); ++b) {
      const SeqId id = choice.ids[b];
      const TokenLogprob* lp = v.logprobs.empty() || v.logprobs[b].empty() ? nullptr : v.logprobs[b].data();
      stats_.committed += static_cast<int64_t>(pool.write_back(id, toks[b].data_ptr<int64_t>(), acc[b] + 1, lp));
      Sequence& s = pool.at(id);
      s.last_step = step;
      const int band = temperature_band(s.request.sampling.temperature);
      stats_.count_band(band, K, acc[b]);
      policy_->learn(s.acceptance, s.draft_lag, K, acc[b], band);
      if (s.status == SeqStatus::Finished) window.remove(id);
      else *s.tensors = std::move(rows[b]);
    }
    align_s += since(t);
    stats_.align_s += align_s;
    learn(shape, draft_s, verify_s, align_s);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const Sequence& s = pool.at(ids[i]);
    out[i].tokens = s.generated;
    out[i].finish = s.finish;
    out[i].logprobs = s.logprobs;
  }
}

}  // namespace exspec
