#include "actors/step_phases.h"

#include <ATen/ATen.h>

#include <chrono>
#include <functional>
#include <stdexcept>

#include "model/decoder.h"

namespace exspec {
namespace {

// Runs a phase unless an earlier one failed; adds its time to `seconds`; a failure becomes the
// outcome's error (the scheduler fails the work's sequences with it).
void timed(std::string& error, double& seconds, const char* what, const std::function<void()>& phase) {
  if (!error.empty()) return;
  const auto t = std::chrono::steady_clock::now();
  try {
    phase();
  } catch (const std::exception& e) {
    error = std::string(what) + " failed: " + e.what();
  }
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::vector<int64_t> lag_counts(const SpecBatch& b) {
  at::Tensor n = b.draft_lag.ge(0).sum(1).to(at::kLong).contiguous();
  return std::vector<int64_t>(n.data_ptr<int64_t>(), n.data_ptr<int64_t>() + n.numel());
}

}  // namespace

void prefill_phase(const Decoder& target, PrefillWork& w) {
  PrefillOutcome& o = w.outcome;
  o.serial = w.plan.serial;
  timed(o.error, o.seconds, "prefill", [&] {
    std::vector<std::vector<int64_t>> prefixes;
    for (const auto& p : w.plan.prompts) {
      if (p.empty()) throw std::invalid_argument("empty prompt");
      prefixes.emplace_back(p.begin(), p.end() - 1);
    }
    std::vector<SeqCache> caches = prefill_caches(target, prefixes);
    for (size_t i = 0; i < caches.size(); ++i) {
      auto s = std::make_shared<SeqTensors>(new_sequence(std::move(caches[i]), w.plan.prompts[i], w.plan.with_draft));
      o.draft_lag.push_back(static_cast<int64_t>(s->draft_lag.size()));
      o.states.push_back(std::move(s));
    }
  });
}

void assemble_phase(StepWork& w) {
  StepPlan& p = w.plan;
  w.outcome.serial = p.serial;
  timed(w.outcome.error, w.outcome.times.align_s, "assembling the batch", [&] {
    if (p.assembly == Assembly::Continue) {
      w.batch = std::move(*p.batch);
      p.batch.reset();
      if (!p.drop_rows.empty()) {
        std::vector<int64_t> keep;
        for (int64_t b = 0, d = 0; b < w.batch.batch(); ++b) {
          if (d < static_cast<int64_t>(p.drop_rows.size()) && p.drop_rows[d] == b) ++d;
          else keep.push_back(b);
        }
        select_rows(w.batch, at::tensor(keep, at::kLong), p.reserve);
      }
    } else {
      std::vector<const SeqTensors*> rows;
      for (const auto& s : p.rows) rows.push_back(s.get());
      w.batch = assemble(rows, p.reserve, p.assembly == Assembly::Reuse);
      p.rows.clear();  // the batch holds the caches now
    }
  });
}

void draft_phase(const Decoder& draft, StepWork& w) {
  timed(w.outcome.error, w.outcome.times.draft_s, "drafting", [&] { w.drafts = draft_tokens(draft, w.batch, w.plan.k); });
}

void verify_phase(const Decoder& target, StepWork& w) {
  timed(w.outcome.error, w.outcome.times.verify_s, "verification", [&] {
    if (!w.drafts.defined()) w.drafts = at::empty({w.batch.batch(), 0}, at::kLong);
    w.verified = verify(target, w.batch, w.drafts, w.plan.sampling);
    commit(w.batch, w.verified, w.drafts);
  });
}

void split_phase(StepWork& w) {
  StepOutcome& o = w.outcome;
  timed(o.error, o.times.align_s, "realignment", [&] {
    realign(w.batch.target, w.plan.reserve);
    realign(w.batch.draft, w.plan.reserve);
    const int64_t B = w.batch.batch();
    at::Tensor toks = w.verified.tokens.contiguous();
    auto acc = w.verified.accepted.accessor<int64_t, 1>();
    o.committed.assign(B, {});
    o.accepted.assign(B, 0);
    o.logprobs = std::move(w.verified.logprobs);
    for (int64_t b = 0; b < B; ++b) {
      o.accepted[b] = acc[b];
      const int64_t* t = toks[b].data_ptr<int64_t>();
      o.committed[b].assign(t, t + acc[b] + 1);
    }
    o.draft_lag = lag_counts(w.batch);
    if (w.plan.keep_batch) {
      o.batch = std::make_shared<SpecBatch>(std::move(w.batch));
    } else {
      for (auto& row : split_rows(w.batch)) o.rows.push_back(std::make_shared<SeqTensors>(std::move(row)));
    }
  });
  w.batch = SpecBatch{};  // kept rows live on as views in the pool, a kept batch in the outcome
}

}  // namespace exspec
