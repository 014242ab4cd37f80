#include "actors/paper/paper_scheduler.h"

#include <algorithm>
#include <stdexcept>

#include "actors/scheduler/step_trace.h"

namespace exspec {

PaperScheduler::PaperScheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
    : Planner(config, std::move(policy), max_in_flight),
      // Every step appends at most K + 1 positions a row; one more keeps a realigned cache from
      // regrowing on the next append (the spare room is allocated, never copied).
      reserve_(largest_k(config) + 2),
      former_(static_cast<size_t>(config.batch_size), config.min_group_fill, config.max_wait) {
  if (config.mode == Mode::InPlace) throw std::invalid_argument("PaperScheduler: in place is the Scheduler's");
}

PaperWork PaperScheduler::plan() {
  if (full()) return {};
  // A fixed batch goes on as soon as its last step is back: it holds its place in the pipeline.
  if (!ready_fixed_.empty()) return plan_fixed_step();
  if (!prefilling_) {
    PaperPrefillPlan p = plan_prefill();
    if (!p.ids.empty()) return p;
  }
  if (fixed_batches()) return {};  // a fixed batch starts when its prefill returns
  PaperStepPlan s = plan_pool_step();
  if (s.ids.empty()) return {};
  return s;
}

// New sequences: a fixed batch of up to B waiting ones (nonspec, EqSpec), or the window's
// newcomers a batch's worth at a time (ExSpec): the first batches decode while the rest of a
// large refill waits, instead of every sequence waiting for one long prefill.
PaperPrefillPlan PaperScheduler::plan_prefill() {
  PaperPrefillPlan p;
  std::vector<SeqId> fresh;
  if (fixed_batches()) {
    fresh = pool_.take_waiting(static_cast<size_t>(config_.batch_size), config_.sort_by_length);
  } else {
    window_.refill(pool_);
    for (SeqId id : window_.members()) {
      const Sequence& s = pool_.at(id);
      if (!s.in_job() && s.state == SeqState::Prefilling && fresh.size() < static_cast<size_t>(config_.batch_size))
        fresh.push_back(id);
    }
  }
  if (fresh.empty()) return p;
  for (SeqId id : fresh) {
    const SeqRequest& r = pool_.at(id).request;
    p.prompts.push_back(r.prompt);
    p.prompt_logprobs.push_back(r.scores_prompt() ? r.prompt_logprobs : -1);
  }
  p.with_draft = config_.mode != Mode::NonSpec;
  p.ids = fresh;
  InFlight f;
  f.prefill = true;
  p.serial = start(std::move(fresh), f);
  prefilling_ = true;
  return p;
}

bool PaperScheduler::same_length(const std::vector<SeqId>& ids) const {
  for (SeqId id : ids)
    if (pool_.at(id).length() != pool_.at(ids[0]).length()) return false;
  return true;
}

PaperStepPlan PaperScheduler::plan_fixed_step() {
  FixedBatch fb = std::move(ready_fixed_.front());
  ready_fixed_.pop_front();
  PaperStepPlan p;
  p.ids = fb.ids;
  p.keep_batch = true;
  const bool first = fb.batch == nullptr;
  const bool grouped = same_length(fb.ids);
  p.assembly = !first ? Assembly::Continue : grouped ? Assembly::Stack : Assembly::Repad;
  p.rows = std::move(fb.rows);
  p.batch = std::move(fb.batch);
  p.drop_rows = std::move(fb.drop_rows);
  plan_k(p, /*reused=*/!first);  // a fixed batch lives on: no repad copy after its first step
  InFlight f;
  f.fixed = true;
  f.grouped = grouped;
  f.k = p.k;
  f.shape = p.shape;
  // The batch held its rows between its steps (a cancellation waits for the step boundary).
  p.serial = start(p.ids, f);
  return p;
}

// A row's state was cut from the batch of step `cut_step`: when the rows are exactly that
// batch, in order, it is reused as it is (model/paper/spec_batch.h, assemble).
bool PaperScheduler::reuses_cut_batch(const std::vector<SeqId>& ids) const {
  const PoolRow& first = rows_.at(ids[0]);
  if (first.cut_step < 0 || first.cut_rows != static_cast<int64_t>(ids.size())) return false;
  for (size_t i = 0; i < ids.size(); ++i) {
    const PoolRow& r = rows_.at(ids[i]);
    if (r.cut_step != first.cut_step || r.cut_row != static_cast<int64_t>(i)) return false;
  }
  return true;
}

PaperStepPlan PaperScheduler::plan_pool_step() {
  PaperStepPlan p;
  std::vector<Candidate> ready;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    if (!s.in_job() && s.state == SeqState::Running) ready.push_back({id, s.length(), s.last_step});
  }
  if (ready.empty()) return p;
  BatchChoice choice = former_.form(ready, step_, !policy_ || policy_->speculating());
  p.ids = std::move(choice.ids);
  const bool reused = reuses_cut_batch(p.ids);
  p.assembly = reused ? Assembly::Reuse : choice.same_length ? Assembly::Stack : Assembly::Repad;
  for (SeqId id : p.ids) p.rows.push_back(rows_.at(id).tensors);
  plan_k(p, reused);
  InFlight f;
  f.grouped = choice.same_length;
  f.k = p.k;
  f.shape = p.shape;
  p.serial = start(p.ids, f);
  return p;
}

// K for a step over p.ids (the policy's choice for these rows, or 0 in nonspec mode) and the
// rows' sampling state. The paper's modes draft with the draft model alone.
void PaperScheduler::plan_k(PaperStepPlan& p, bool reused) {
  const int64_t rows = static_cast<int64_t>(p.ids.size());
  p.reserve = reserve_;
  p.sampling = sampling_rows(pool_, p.ids);
  p.k = 0;
  p.shape = StepShape{rows, 0, 0, 0, reused};
  if (!policy_) return;
  BatchOutlook o = policy_->outlook(pool_, p.ids);
  p.k = policy_->choose(o.rows, o.context, reused, o.lag).k;
  if (trace_enabled()) trace_choice(*policy_, o, reused, p.k);
  p.shape = StepShape{rows, p.k, o.context, o.lag, reused};
}

void PaperScheduler::prefilled(PaperPrefillOutcome o) {
  const std::vector<SeqId> ids = prefill_done(o);
  FixedBatch fb;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!prefill_row(ids[i], o)) continue;
    Sequence& s = pool_.at(ids[i]);
    s.state = SeqState::Running;
    s.stored = held(s, o.draft_lag[i]);
    if (!o.prompt_logprobs.empty()) scored(s, o.prompt_logprobs[i], 0);
    if (!goes_on(s)) continue;
    if (fixed_batches()) {
      s.job = o.serial;  // the fixed batch holds it from now on
      fb.ids.push_back(ids[i]);
      fb.rows.push_back(std::move(o.states[i]));
    } else {
      rows_[ids[i]].tensors = std::move(o.states[i]);
    }
  }
  if (!fb.ids.empty()) ready_fixed_.push_back(std::move(fb));
}

void PaperScheduler::complete(PaperStepOutcome o) {
  const InFlight f = step_done(o);
  FixedBatch still;
  for (size_t b = 0; b < f.ids.size(); ++b) {
    const SeqId id = f.ids[b];
    if (!write_row(id, f, o, b)) {
      still.drop_rows.push_back(static_cast<int64_t>(b));
      continue;
    }
    pool_.at(id).stored = held(pool_.at(id), o.draft_lag[b]);
    still.ids.push_back(id);
    if (!f.fixed) rows_[id] = PoolRow{o.rows[b], o.serial, static_cast<int64_t>(b), static_cast<int64_t>(f.ids.size())};
  }
  ++step_;
  if (f.fixed && o.error.empty() && !still.ids.empty()) {
    still.batch = std::move(o.batch);  // the same batch goes round again (EqSpec: fixed batch)
    ready_fixed_.push_back(std::move(still));
  }
}

void PaperScheduler::release(const Sequence& s, bool) { rows_.erase(s.id); }

// Each model's cache covers every token but pending; the draft's less its lag.
Stored PaperScheduler::held(const Sequence& s, int64_t draft_lag) {
  return {s.length() - 1, s.length() - 1 - draft_lag};
}

}  // namespace exspec
