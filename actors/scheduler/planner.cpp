#include "actors/scheduler/planner.h"

#include <algorithm>
#include <stdexcept>

#include "actors/scheduler/step_trace.h"

namespace exspec {
namespace {

const std::vector<int64_t> kNone;

// Where a row's n committed tokens came from: its accepted drafts (the proposer's; past a
// grammar's forced tokens, the draft model's that filled the row), then the target's token
// (bonus or correction). A token the grammar forced counts as the grammar's, also when the
// target sampled it itself under the mask (past the drafts the step verified: K 0, say).
void note_origins(TokenOrigins& out, const std::vector<int64_t>& committed, size_t n, int64_t accepted, Proposer by,
                  const std::vector<int64_t>& forced) {
  bool on_forced = true;  // the tokens so far are the forced ones: the next forced token is still forced
  for (size_t j = 0; j < n; ++j) {
    on_forced = on_forced && j < forced.size() && committed[j] == forced[j];
    if (on_forced) out.tokens.push_back(TokenOrigin::Grammar);
    else if (static_cast<int64_t>(j) >= accepted) out.tokens.push_back(TokenOrigin::Target);
    else out.tokens.push_back(by == Proposer::Grammar ? TokenOrigin::Model : origin_of(by));
  }
}

}  // namespace

Planner::Planner(EngineConfig config, std::shared_ptr<DraftLengthPolicy> policy, int max_in_flight)
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

SeqId Planner::admit(SeqRequest request, int priority, SeqId id) {
  id = pool_.admit(std::move(request), priority, id);
  ++submitted_;
  ++stats_.sequences;
  const SeqRequest& r = pool_.at(id).request;
  if (r.prompt_logprobs >= 0 && !r.scores_prompt()) event_for(id).prompt_logprobs.emplace();  // nothing to score
  if (pool_.at(id).state == SeqState::Finished) end(id, FinishReason::Length);  // max_tokens 0: never waits
  return id;
}

void Planner::cancel(SeqId id, FinishReason reason) {
  if (!pool_.contains(id)) return;
  Sequence& s = pool_.at(id);
  if (s.state == SeqState::Finished) return;
  if (s.in_job()) {  // at the step boundary; the first reason given stands
    if (!s.cancel) s.cancel = reason;
    return;
  }
  end(id, reason);
}

void Planner::cancel_all() {
  for (SeqId id : pool_.unfinished_ids()) cancel(id, FinishReason::None);
}

int64_t Planner::start(std::vector<SeqId> ids, InFlight f) {
  ++serial_;
  for (SeqId id : ids) pool_.at(id).job = serial_;
  f.ids = std::move(ids);
  in_flight_[serial_] = std::move(f);
  return serial_;
}

Planner::InFlight Planner::finish(int64_t serial, bool prefill) {
  auto it = in_flight_.find(serial);
  if (it == in_flight_.end() || it->second.prefill != prefill)
    throw std::logic_error(prefill ? "Planner: unknown prefill" : "Planner: unknown step");
  InFlight f = std::move(it->second);
  in_flight_.erase(it);
  if (prefill) {
    prefilling_ = false;
    last_full_ = false;  // the pipeline held a prefill: the next interval is not a step's pace
  }
  return f;
}

std::vector<SeqId> Planner::prefill_done(const PrefillResult& o) {
  std::vector<SeqId> ids = finish(o.serial, /*prefill=*/true).ids;
  stats_.prefill_s += o.seconds;
  if (trace_enabled()) trace_prefill(ids.size(), o.seconds);
  return ids;
}

Planner::InFlight Planner::step_done(const StepResult& o) {
  InFlight f = finish(o.serial, /*prefill=*/false);
  time_pipeline(o);
  count_step(f, o);
  return f;
}

void Planner::count_step(const InFlight& f, const StepResult& o) {
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

bool Planner::prefill_row(SeqId id, const PrefillResult& o) {
  Sequence& s = pool_.at(id);
  s.job = 0;
  if (s.cancel || !o.error.empty()) {
    end(id, s.cancel.value_or(FinishReason::None), o.error);
    return false;
  }
  return true;
}

bool Planner::write_row(SeqId id, const InFlight& f, const StepResult& o, size_t b) {
  Sequence& s = pool_.at(id);
  if (!o.error.empty() || s.cancel) {
    s.job = 0;
    end(id, s.cancel.value_or(FinishReason::None), o.error);
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
  const std::vector<TokenLogprob>* lp = b < o.logprobs.size() && !o.logprobs[b].empty() ? &o.logprobs[b] : nullptr;
  const size_t before = s.generated.size();
  const size_t n = pool_.write_back(id, o.committed[b].data(), o.committed[b].size(), lp ? lp->data() : nullptr);
  stats_.committed += static_cast<int64_t>(n);
  s.last_step = step_;
  if (n > 0) {
    SeqEvent& e = event_for(id);
    e.tokens.insert(e.tokens.end(), s.generated.begin() + static_cast<int64_t>(before), s.generated.end());
    if (lp) e.logprobs.insert(e.logprobs.end(), lp->begin(), lp->begin() + static_cast<int64_t>(n));
    note_origins(e.origins, o.committed[b], n, o.accepted[b], by, b < f.forced.size() ? f.forced[b] : kNone);
    e.origins.step_k.push_back(k);
  }
  if (s.state == SeqState::Finished) {
    s.job = 0;
    end(id, s.finish);
    return false;
  }
  if (!f.fixed) s.job = 0;  // a fixed batch holds its rows between its steps
  return true;
}

void Planner::scored(Sequence& s, const std::vector<TokenLogprob>& entries, size_t first) {
  if (!s.scoring()) return;  // scored before it was pre-empted: the recompute adds nothing
  for (size_t k = 0; k < entries.size(); ++k)
    if (first + k == s.prompt_logprobs.size()) s.prompt_logprobs.push_back(entries[k]);
  if (!s.scoring()) event_for(s.id).prompt_logprobs = s.prompt_logprobs;
}

bool Planner::goes_on(Sequence& s) {
  if (s.request.max_tokens > 0) return true;
  end(s.id, FinishReason::Length);
  return false;
}

SeqEvent& Planner::event_for(SeqId id) {
  if (events_.empty() || events_.back().id != id) events_.push_back(SeqEvent{id, {}, {}, {}, {}, {}});
  return events_.back();
}

void Planner::end(SeqId id, FinishReason reason, const std::string& error) {
  Sequence& s = pool_.at(id);
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

void Planner::time_pipeline(const StepResult& o) {
  const auto now = std::chrono::steady_clock::now();
  const bool full = in_flight_.size() + 1 == max_in_flight_ && !prefilling_ && o.error.empty();
  if (full && last_full_ && policy_)
    policy_->observe_interval(std::chrono::duration<double>(now - last_done_).count(), o.times.draft_s,
                              o.times.verify_s, o.times.align_s);
  last_done_ = now;
  last_full_ = full;
}

std::vector<SeqEvent> Planner::take_events() {
  std::vector<SeqEvent> out;
  out.swap(events_);
  return out;
}


}  // namespace exspec
