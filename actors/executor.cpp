#include "actors/executor.h"

#include <algorithm>
#include <stdexcept>

#include "actors/paper/paper_scheduler.h"
#include "actors/scheduler.h"
#include "actors/step_trace.h"

namespace exspec {

Executor::Executor(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
    : config_(config),
      policy_(drafts(config) ? std::move(policy) : nullptr),
      // In place the window is the sequences holding a slot.
      window_(static_cast<size_t>(live_sequences(config)), config.sort_by_length),
      max_in_flight_(static_cast<size_t>(std::max(1, max_in_flight))) {
  validate(config_);
  if (drafts(config_) && !policy_)
    throw std::invalid_argument(std::string(mode_name(config_.mode)) + " needs a draft-length policy");
  if (trace_enabled())
    trace_engine(mode_name(config_.mode), config_.batch_size, live_sequences(config_), config_.adaptive_k, config_.draft_tokens);
}

std::unique_ptr<Executor> make_executor(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                        int max_in_flight) {
  if (config.mode == Mode::InPlace) return std::make_unique<Scheduler>(config, std::move(policy), max_in_flight);
  return std::make_unique<PaperScheduler>(config, std::move(policy), max_in_flight);
}

SeqId Executor::admit(SeqRequest request, int priority, SeqId id) {
  id = pool_.admit(std::move(request), priority, id);
  ++submitted_;
  ++stats_.sequences;
  if (pool_.at(id).state == SeqState::Finished) {  // max_tokens 0: never waits
    ++dequeued_;
    end(id, FinishReason::Length);
  }
  return id;
}

void Executor::cancel(SeqId id, FinishReason reason) {
  if (!pool_.contains(id)) return;
  Sequence& s = pool_.at(id);
  if (s.state == SeqState::Finished) return;
  if (s.busy) {  // at the step boundary; the first reason given stands
    if (!s.cancel_pending) s.cancel_pending = true, s.cancel_reason = reason;
    return;
  }
  end(id, reason);
}

void Executor::cancel_all() {
  for (SeqId id : pool_.unfinished_ids()) cancel(id, FinishReason::None);
}

int64_t Executor::start(std::vector<SeqId> ids, InFlight f) {
  for (SeqId id : ids) pool_.at(id).busy = true;
  f.ids = std::move(ids);
  in_flight_[++serial_] = std::move(f);
  return serial_;
}

Executor::InFlight Executor::finish(int64_t serial, bool prefill) {
  auto it = in_flight_.find(serial);
  if (it == in_flight_.end() || it->second.prefill != prefill)
    throw std::logic_error(prefill ? "Executor: unknown prefill" : "Executor: unknown step");
  InFlight f = std::move(it->second);
  in_flight_.erase(it);
  if (prefill) {
    prefilling_ = false;
    last_full_ = false;  // the pipeline held a prefill: the next interval is not a step's pace
  }
  return f;
}

std::vector<SeqId> Executor::prefill_done(const PrefillResult& o) {
  std::vector<SeqId> ids = finish(o.serial, /*prefill=*/true).ids;
  stats_.prefill_s += o.seconds;
  if (trace_enabled()) trace_prefill(ids.size(), o.seconds);
  return ids;
}

Executor::InFlight Executor::step_done(const StepResult& o) {
  InFlight f = finish(o.serial, /*prefill=*/false);
  time_pipeline(o);
  count_step(f, o);
  return f;
}

void Executor::count_step(const InFlight& f, const StepResult& o) {
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

bool Executor::prefill_row(SeqId id, const PrefillResult& o, size_t i) {
  Sequence& s = pool_.at(id);
  s.busy = false;
  if (s.cancel_pending || !o.error.empty()) {
    end(id, s.cancel_pending ? s.cancel_reason : FinishReason::None, o.error);
    return false;
  }
  s.draft_lag = o.draft_lag[i];
  return true;
}

bool Executor::write_row(SeqId id, const InFlight& f, const StepResult& o, size_t b) {
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
  if (policy_) policy_->learn(s.acceptance, k, a, band, by == Proposer::Prediction || by == Proposer::Grammar);
  s.draft_lag = o.draft_lag[b];
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
  if (!f.fixed) s.busy = false;  // a fixed batch holds its rows between its steps
  return true;
}

SeqEvent& Executor::event_for(SeqId id) {
  if (events_.empty() || events_.back().id != id) events_.push_back(SeqEvent{id, {}, {}, {}});
  return events_.back();
}

void Executor::end(SeqId id, FinishReason reason, const std::string& error) {
  Sequence& s = pool_.at(id);
  if (s.state == SeqState::Waiting) left_queue(s);
  release(s, !error.empty());  // not inside a job: nothing writes its state now
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

void Executor::time_pipeline(const StepResult& o) {
  const auto now = std::chrono::steady_clock::now();
  const bool full = in_flight_.size() + 1 == max_in_flight_ && !prefilling_ && o.error.empty();
  if (full && last_full_ && policy_)
    policy_->observe_interval(std::chrono::duration<double>(now - last_done_).count(), o.times.draft_s,
                              o.times.verify_s, o.times.align_s);
  last_done_ = now;
  last_full_ = full;
}

std::vector<SeqEvent> Executor::take_events() {
  std::vector<SeqEvent> out;
  out.swap(events_);
  return out;
}

size_t Executor::take_dequeued() {
  const size_t n = dequeued_;
  dequeued_ = 0;
  return n;
}

}  // namespace exspec
