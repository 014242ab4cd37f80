// The Scheduler's constructor, its choice of K, and the outcomes coming back. Its plans are
// actors/scheduler/scheduler_plan.cpp, its jobs actors/jobs/inplace_jobs.cpp.
#include "actors/scheduler/scheduler.h"

#include <algorithm>
#include <stdexcept>

#include "actors/scheduler/step_trace.h"

namespace exspec {

Scheduler::Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
    : Executor(config, std::move(policy), max_in_flight),
      slots_(config.slots),
      target_blocks_(config.slots, row_blocks(config), config.block_size, config.prefix_cache),
      draft_blocks_(config.slots, row_blocks(config), config.block_size, config.prefix_cache),
      tables_(static_cast<size_t>(config.slots)) {
  if (config.mode != Mode::InPlace) throw std::invalid_argument("Scheduler: the paper's modes are PaperScheduler's");
}

// K for a step over p.ids (the policy's choice for these rows, or 0 without one) and the rows'
// sampling state. Rows may bring proposals of their own (actors/scheduler/proposer.h): without a draft
// model each row's drafts end where its proposal ends, and a step where no row has one is a
// plain step. Forming the batch copies nothing, so the policy prices it as reused.
void Scheduler::plan_k(StepPlan& p) {
  const int64_t rows = static_cast<int64_t>(p.ids.size());
  p.sampling = sampling_rows(pool_, p.ids);
  p.k = 0;
  p.shape = StepShape{rows, 0, 0, 0, /*reused=*/true};
  const int64_t longest = propose(p);
  if (!policy_) {
    // Predictions where nothing else drafts: verified as far as the longest reaches.
    p.k = std::min(longest, config_.max_draft_tokens);
    p.shape.k = p.k;
  } else if (config_.draft || longest > 0) {
    BatchOutlook o = policy_->outlook(pool_, p.ids);
    outlook_proposals(p, o);
    p.k = policy_->choose(o.rows, o.context, true, o.lag).k;
    if (!config_.draft) p.k = std::min(p.k, longest);
    if (trace_enabled()) trace_choice(*policy_, o, true, p.k);
    p.shape = StepShape{rows, p.k, o.context, o.lag, true};
  }
  p.by_model = p.k > 0 && config_.draft;
}

void Scheduler::prefilled(PrefillOutcome o) {
  const std::vector<SeqId> ids = prefill_done(o);
  copied(ids);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!prefill_row(ids[i], o, i)) continue;
    stored(pool_.at(ids[i]), o.stored[i]);
    publish(pool_.at(ids[i]));
  }
}

void Scheduler::complete(StepOutcome o) {
  const InFlight f = step_done(o);
  copied(f.ids);
  for (size_t b = 0; b < f.ids.size(); ++b) {
    Sequence& s = pool_.at(f.ids[b]);
    if (o.error.empty() && !s.cancel_pending) s.stored = o.stored.at(b);  // what the commit set
    if (write_row(f.ids[b], f, o, b)) publish(pool_.at(f.ids[b]));
  }
  ++step_;
}

}  // namespace exspec
