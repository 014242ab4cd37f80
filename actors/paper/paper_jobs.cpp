#include "actors/paper/paper_jobs.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "actors/paper/paper_scheduler.h"
#include "model/decoder.h"
#include "model/oracle/plain_decode.h"

namespace exspec {
namespace {

std::vector<int64_t> lag_counts(const SpecBatch& b) {
  at::Tensor n = b.lag_tokens.ge(0).sum(1).to(at::kLong).contiguous();
  return std::vector<int64_t>(n.data_ptr<int64_t>(), n.data_ptr<int64_t>() + n.numel());
}

// A fixed batch goes on without the rows that left it, realigned.
void continue_batch(SpecBatch& batch, const PaperStepPlan& p) {
  if (p.drop_rows.empty()) return;
  std::vector<int64_t> keep;
  for (int64_t b = 0, d = 0; b < batch.batch(); ++b) {
    if (d < static_cast<int64_t>(p.drop_rows.size()) && p.drop_rows[d] == b) ++d;
    else keep.push_back(b);
  }
  select_rows(batch, at::tensor(keep, at::kLong), p.reserve);
}

}  // namespace

void PaperPrefillJob::run_target(const Decoder& target, KVStore*) {
  timed(outcome.error, outcome.seconds, "prefill", [&] {
    std::vector<std::vector<int64_t>> prefixes;
    for (const auto& p : plan.prompts) {
      if (p.empty()) throw std::invalid_argument("empty prompt");
      prefixes.emplace_back(p.begin(), p.end() - 1);
    }
    std::vector<SeqCache> caches = prefill_caches(target, prefixes);
    for (size_t i = 0; i < caches.size(); ++i) {
      auto s = std::make_shared<SeqTensors>(new_sequence(std::move(caches[i]), plan.prompts[i], plan.with_draft));
      outcome.draft_lag.push_back(static_cast<int64_t>(s->lag_tokens.size()));
      outcome.states.push_back(std::move(s));
    }
    // Echo: the prompt's logprobs, by the definition the oracle decodes with (a forward of the
    // prompt alone: the paper's prefill pads it beside others).
    outcome.prompt_logprobs.assign(plan.prompts.size(), {});
    for (size_t i = 0; i < plan.prompts.size(); ++i)
      if (i < plan.prompt_logprobs.size() && plan.prompt_logprobs[i] >= 0)
        outcome.prompt_logprobs[i] = prompt_logprobs(target, plan.prompts[i], plan.prompt_logprobs[i]);
  });
}

void PaperStepJob::assemble(const Models&) {
  PaperStepPlan& p = plan;
  timed(outcome.error, outcome.times.align_s, "assembling the batch", [&] {
    if (p.assembly == Assembly::Continue) {
      batch = std::move(*p.batch);
      p.batch.reset();
      continue_batch(batch, p);
      return;
    }
    std::vector<const SeqTensors*> rows;
    for (const auto& s : p.rows) rows.push_back(s.get());
    batch = exspec::assemble(rows, p.reserve, p.assembly == Assembly::Reuse);
    p.rows.clear();  // the batch holds the caches now
  });
}

void PaperStepJob::draft(const Decoder& draft, KVStore*) {
  timed(outcome.error, outcome.times.draft_s, "drafting", [&] { drafted = draft_tokens(draft, batch, plan.k); });
}

void PaperStepJob::run_target(const Decoder& target, KVStore*) {
  timed(outcome.error, outcome.times.verify_s, "verification", [&] {
    if (!drafted.defined()) drafted = at::empty({batch.batch(), 0}, at::kLong);
    verified = verify(target, batch, drafted, plan.sampling);
    commit(batch, verified, drafted);
  });
}

void PaperStepJob::split() {
  PaperStepOutcome& o = outcome;
  timed(o.error, o.times.align_s, "realignment", [&] {
    realign(batch.target, plan.reserve);
    realign(batch.draft, plan.reserve);
    take_verified(verified, o);
    o.draft_lag = lag_counts(batch);
    if (plan.keep_batch) {
      o.batch = std::make_shared<SpecBatch>(std::move(batch));
    } else {
      for (auto& row : split_rows(batch)) o.rows.push_back(std::make_shared<SeqTensors>(std::move(row)));
    }
  });
  batch = SpecBatch{};  // kept rows live on as views in the pool, a kept batch in the outcome
}

}  // namespace exspec
