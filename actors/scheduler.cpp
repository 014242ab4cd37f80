#include "actors/scheduler.h"

#include <algorithm>
#include <stdexcept>

#include "actors/step_trace.h"

namespace exspec {

const char* assembly_name(Assembly a) {
  switch (a) {
    case Assembly::Continue: return "continue";
    case Assembly::Reuse: return "reuse";
    case Assembly::Stack: return "stack";
    case Assembly::Repad: return "repad";
    case Assembly::InPlace: return "inplace";
  }
  return "?";
}

Scheduler::Scheduler(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
    : config_(config),
      policy_(drafts(config) ? std::move(policy) : nullptr),
      max_in_flight_(static_cast<size_t>(std::max(1, max_in_flight))),
      // Every step appends at most K + 1 positions a row; one more keeps a realigned cache from
      // regrowing on the next append (the spare room is allocated, never copied).
      reserve_(largest_k(config) + 2),
      window_(static_cast<size_t>(config.window), config.sort_by_length),
      former_(static_cast<size_t>(config.batch_size), config.min_group_fill, config.max_wait),
      slots_(config.mode == Mode::InPlace ? config.window : 0) {
  validate(config_);
  if (drafts(config_) && !policy_)
    throw std::invalid_argument(std::string(mode_name(config_.mode)) + " needs a draft-length policy");
  if (trace_enabled())
    trace_engine(mode_name(config_.mode), config_.batch_size, config_.window, config_.adaptive_k, config_.draft_tokens);
}

SeqId Scheduler::admit(SeqRequest request, int priority, SeqId id) {
  id = pool_.admit(std::move(request), priority, id);
  ++submitted_;
  ++stats_.sequences;
  if (pool_.at(id).state == SeqState::Finished) {  // max_tokens 0: never waits
    ++dequeued_;
    end(id, FinishReason::Length);
  }
  return id;
}

void Scheduler::cancel(SeqId id, FinishReason reason) {
  if (!pool_.contains(id)) return;
  Sequence& s = pool_.at(id);
  if (s.state == SeqState::Finished) return;
  if (s.busy) {  // at the step boundary; the first reason given stands
    if (!s.cancel_pending) s.cancel_pending = true, s.cancel_reason = reason;
    return;
  }
  end(id, reason);
}

void Scheduler::cancel_all() {
  for (SeqId id : pool_.unfinished_ids()) cancel(id, FinishReason::None);
}

Work Scheduler::next() {
  if (in_flight_.size() >= max_in_flight_) return {};
  if (in_place()) return next_in_place();
  // A fixed batch goes on as soon as its last step is back: it holds its place in the pipeline.
  if (!ready_fixed_.empty()) return plan_fixed_step();
  if (!prefilling_) {
    PrefillPlan p = plan_prefill();
    if (!p.ids.empty()) return p;
  }
  if (fixed_batches()) return {};  // a fixed batch starts when its prefill returns
  StepPlan s = plan_pool_step();
  if (s.ids.empty()) return {};
  return s;
}

int64_t Scheduler::start(std::vector<SeqId> ids, InFlight f) {
  for (SeqId id : ids) pool_.at(id).busy = true;
  f.ids = std::move(ids);
  in_flight_[++serial_] = std::move(f);
  return serial_;
}

// New sequences: a fixed batch of up to B waiting ones (nonspec, EqSpec), or the window's
// newcomers a batch's worth at a time (ExSpec): the first batches decode while the rest of a
// large refill waits, instead of every sequence waiting for one long prefill.
PrefillPlan Scheduler::plan_prefill() {
  PrefillPlan p;
  std::vector<SeqId> fresh;
  if (fixed_batches()) {
    fresh = pool_.take_waiting(static_cast<size_t>(config_.batch_size), config_.sort_by_length);
    dequeued_ += fresh.size();
  } else {
    dequeued_ += window_.refill(pool_).size();
    for (SeqId id : window_.members()) {
      const Sequence& s = pool_.at(id);
      if (!s.busy && s.state == SeqState::Prefilling && fresh.size() < static_cast<size_t>(config_.batch_size))
        fresh.push_back(id);
    }
  }
  if (fresh.empty()) return p;
  for (SeqId id : fresh) p.prompts.push_back(pool_.at(id).request.prompt);
  p.with_draft = config_.mode != Mode::NonSpec;
  p.ids = fresh;
  InFlight f;
  f.prefill = true;
  p.serial = start(std::move(fresh), f);
  prefilling_ = true;
  return p;
}

bool Scheduler::same_length(const std::vector<SeqId>& ids) const {
  for (SeqId id : ids)
    if (pool_.at(id).length() != pool_.at(ids[0]).length()) return false;
  return true;
}

StepPlan Scheduler::plan_fixed_step() {
  FixedBatch fb = std::move(ready_fixed_.front());
  ready_fixed_.pop_front();
  StepPlan p;
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
  // Its rows stayed busy between its steps (a cancellation waits for the step boundary).
  p.serial = start(p.ids, f);
  return p;
}

// A row's state was cut from the batch of step `cut_step`: when the rows are exactly that
// batch, in order, it is reused as it is (model/spec_batch.h, assemble).
bool Scheduler::reuses_cut_batch(const std::vector<SeqId>& ids) const {
  const Sequence& first = pool_.at(ids[0]);
  if (first.cut_step < 0 || first.cut_rows != static_cast<int64_t>(ids.size())) return false;
  for (size_t i = 0; i < ids.size(); ++i) {
    const Sequence& s = pool_.at(ids[i]);
    if (s.cut_step != first.cut_step || s.cut_row != static_cast<int64_t>(i)) return false;
  }
  return true;
}

StepPlan Scheduler::plan_pool_step() {
  StepPlan p;
  std::vector<Candidate> ready;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    if (!s.busy && s.state == SeqState::Decoding) ready.push_back({id, s.length(), s.last_step});
  }
  if (ready.empty()) return p;
  BatchChoice choice = former_.form(ready, step_, !policy_ || policy_->speculating());
  p.ids = std::move(choice.ids);
  const bool reused = reuses_cut_batch(p.ids);
  p.assembly = reused ? Assembly::Reuse : choice.same_length ? Assembly::Stack : Assembly::Repad;
  for (SeqId id : p.ids) p.rows.push_back(pool_.at(id).tensors);
  plan_k(p, reused);
  InFlight f;
  f.grouped = choice.same_length;
  f.k = p.k;
  f.shape = p.shape;
  p.serial = start(p.ids, f);
  return p;
}

// K for a step over p.ids (the policy's choice for these rows, or 0 in nonspec mode) and the
// rows' sampling state. In place, rows may bring proposals of their own (actors/proposer.h):
// without a draft model each row's drafts end where its proposal ends, and a step where no row
// has one is a plain step.
void Scheduler::plan_k(StepPlan& p, bool reused) {
  const int64_t rows = static_cast<int64_t>(p.ids.size());
  p.reserve = reserve_;
  p.sampling = sampling_rows(pool_, p.ids);
  p.k = 0;
  p.shape = StepShape{rows, 0, 0, 0, reused};
  const int64_t longest = in_place() ? propose(p) : 0;
  if (!policy_) {
    // Predictions where nothing else drafts: verified as far as the longest reaches.
    p.k = std::min(longest, config_.max_draft_tokens);
    p.shape.k = p.k;
  } else if (config_.draft || longest > 0) {
    BatchOutlook o = policy_->outlook(pool_, p.ids);
    if (in_place()) outlook_proposals(p, o);
    p.k = policy_->choose(o.rows, o.context, reused, o.lag).k;
    if (!config_.draft) p.k = std::min(p.k, longest);
    if (trace_enabled()) trace_choice(*policy_, o, reused, p.k);
    p.shape = StepShape{rows, p.k, o.context, o.lag, reused};
  }
  p.by_model = p.k > 0 && config_.draft;
}

void Scheduler::prefilled(PrefillOutcome o) {
  auto it = in_flight_.find(o.serial);
  if (it == in_flight_.end() || !it->second.prefill) throw std::logic_error("Scheduler: unknown prefill");
  const std::vector<SeqId> ids = std::move(it->second.ids);
  in_flight_.erase(it);
  prefilling_ = false;
  last_full_ = false;  // the pipeline held a prefill: the next interval is not a step's pace
  stats_.prefill_s += o.seconds;
  if (trace_enabled()) trace_prefill(ids.size(), o.seconds);
  FixedBatch fb;
  for (size_t i = 0; i < ids.size(); ++i) {
    Sequence& s = pool_.at(ids[i]);
    s.busy = false;
    if (s.cancel_pending || !o.error.empty()) {
      end(ids[i], s.cancel_pending ? s.cancel_reason : FinishReason::None, o.error);
      continue;
    }
    s.draft_lag = o.draft_lag[i];
    if (in_place()) {
      stored_in_place(s, o.stored[i]);
      continue;
    }
    s.state = SeqState::Decoding;
    if (fixed_batches()) {
      s.busy = true;  // the fixed batch holds it from now on
      fb.ids.push_back(ids[i]);
      fb.rows.push_back(std::move(o.states[i]));
    } else {
      s.tensors = std::move(o.states[i]);
    }
  }
  if (!fb.ids.empty()) ready_fixed_.push_back(std::move(fb));
}

void Scheduler::complete(StepOutcome o) {
  auto it = in_flight_.find(o.serial);
  if (it == in_flight_.end() || it->second.prefill) throw std::logic_error("Scheduler: unknown step");
  const InFlight f = std::move(it->second);
  in_flight_.erase(it);
  time_pipeline(o);
  count_step(f, o);
  FixedBatch still;
  for (size_t b = 0; b < f.ids.size(); ++b) {
    if (write_row(f.ids[b], f, o, b)) still.ids.push_back(f.ids[b]);
    else still.drop_rows.push_back(static_cast<int64_t>(b));
  }
  ++step_;
  if (f.fixed && o.error.empty() && !still.ids.empty()) {
    still.batch = std::move(o.batch);  // the same batch goes round again (EqSpec: fixed batch)
    ready_fixed_.push_back(std::move(still));
  }
}

void Scheduler::count_step(const InFlight& f, const StepOutcome& o) {
  stats_.draft_s += o.times.draft_s;
  stats_.verify_s += o.times.verify_s;
  stats_.align_s += o.times.align_s;
  if (!o.error.empty()) return;
  ++stats_.steps;
  stats_.grouped_steps += f.grouped;
  stats_.reused_steps += f.shape.reused && !f.fixed;
  stats_.row_verifications += static_cast<int64_t>(f.ids.size());
  stats_.count_k(f.k);
  if (trace_enabled()) trace_step(policy_.get(), f.shape, o.times, f.grouped);
  if (!policy_) return;
  policy_->observe_step(f.shape, o.times.draft_s, o.times.verify_s, o.times.align_s);
}

bool Scheduler::write_row(SeqId id, const InFlight& f, const StepOutcome& o, size_t b) {
  Sequence& s = pool_.at(id);
  if (!o.error.empty() || s.cancel_pending) {
    s.busy = false;
    end(id, s.cancel_pending ? s.cancel_reason : FinishReason::None, o.error);
    return false;
  }
  // A row's drafts are its proposal's when no draft model filled the rest (what fills it may be
  // accepted too: it is then committed, but not counted as drafted).
  const int64_t k = f.row_k.empty() ? f.k : f.row_k[b], a = std::min(o.accepted[b], k);
  const Proposer by = f.proposers.empty() ? Proposer::Model : f.proposers[b];
  stats_.drafted += k, stats_.accepted += a;
  s.drafted += k, s.accepted += a;
  const int band = temperature_band(s.request.sampling.temperature);
  stats_.count_band(band, k, a);
  stats_.count_proposer(static_cast<int>(by), k, a);
  if (policy_) policy_->learn(s.acceptance, k, a, band, by == Proposer::Prediction);
  s.draft_lag = o.draft_lag[b];
  if (f.in_place) s.stored = o.stored.at(b);  // what commit_inplace set
  const std::vector<TokenLogprob>* lp = b < o.logprobs.size() && !o.logprobs[b].empty() ? &o.logprobs[b] : nullptr;
  const size_t before = s.generated.size();
  const size_t n = pool_.write_back(id, o.committed[b].data(), o.committed[b].size(), lp ? lp->data() : nullptr);
  stats_.committed += static_cast<int64_t>(n);
  s.last_step = step_;
  if (n > 0) {
    SeqEvent& e = event_for(id);
    e.tokens.insert(e.tokens.end(), s.generated.begin() + static_cast<int64_t>(before), s.generated.end());
    if (lp) e.logprobs.insert(e.logprobs.end(), lp->begin(), lp->begin() + static_cast<int64_t>(n));
  }
  if (s.state == SeqState::Finished) {
    s.busy = false;
    end(id, s.finish);
    return false;
  }
  if (!f.fixed) {
    if (!f.in_place) {
      s.tensors = o.rows[b];
      s.cut_step = o.serial, s.cut_row = static_cast<int64_t>(b), s.cut_rows = static_cast<int64_t>(f.ids.size());
    }
    s.busy = false;
  }
  return true;
}

SeqEvent& Scheduler::event_for(SeqId id) {
  if (events_.empty() || events_.back().id != id) events_.push_back(SeqEvent{id, {}, {}, {}});
  return events_.back();
}

// Ends a sequence that is not inside a step: frees it and tells its producer.
void Scheduler::end(SeqId id, FinishReason reason, const std::string& error) {
  Sequence& s = pool_.at(id);
  if (s.state == SeqState::Waiting) ++dequeued_;
  if (s.slot >= 0) release_slot(s, !error.empty());  // not inside a step: nothing writes the slot now
  if (s.state != SeqState::Finished) pool_.cancel(id);
  window_.remove(id);
  SeqResult r;
  r.tokens = s.generated;
  r.logprobs = s.logprobs;
  r.finish = s.finish != FinishReason::None ? s.finish : reason;
  r.error = error;
  r.drafted = s.drafted, r.accepted = s.accepted;
  if (r.finish == FinishReason::None) ++cancelled_;
  else ++finished_;
  event_for(id).finished = std::move(r);
  pool_.erase(id);
}

// Two step completions in a row with the pipeline full of steps: the time between them is what
// a step really costs when phases overlap (the policy learns the overlap from it).
void Scheduler::time_pipeline(const StepOutcome& o) {
  const auto now = std::chrono::steady_clock::now();
  const bool full = in_flight_.size() + 1 == max_in_flight_ && !prefilling_ && o.error.empty();
  if (full && last_full_ && policy_)
    policy_->observe_interval(std::chrono::duration<double>(now - last_done_).count(), o.times.draft_s,
                              o.times.verify_s, o.times.align_s);
  last_done_ = now;
  last_full_ = full;
}

std::vector<SeqEvent> Scheduler::take_events() {
  std::vector<SeqEvent> out;
  out.swap(events_);
  return out;
}

size_t Scheduler::take_dequeued() {
  const size_t n = dequeued_;
  dequeued_ = 0;
  return n;
}

}  // namespace exspec
