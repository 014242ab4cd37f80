// The Scheduler's side of planning ahead (actors/scheduler/plan_ahead.h): the window's facts
// gathered, the next step chosen while a step runs, and the choice taken back when it is back.
#include <chrono>
#include <utility>

#include "actors/scheduler/scheduler.h"

namespace exspec {

WindowState Scheduler::window_state() const {
  WindowState w;
  w.chunk_in_flight = prefilling_;
  w.last_was_chunk = last_was_prefill_;
  w.batch = config_.batch_size;
  for (SeqId id : window_.members()) {
    const Sequence& s = pool_.at(id);
    w.members.push_back({id, s.slot, s.last_step, s.state, s.generated.empty(), s.in_job()});
  }
  return w;
}

void Scheduler::plan_ahead() {
  if (config_.plan_ahead == Toggle::Off || steps_out_.empty() || (ahead_ && ahead_->after == steps_out_.front().first))
    return;
  const auto t0 = std::chrono::steady_clock::now();
  PlannedStep p;
  p.after = steps_out_.front().first;
  // Its rows come back at the step count as it is now: it is the next step to complete.
  p.assumed = assume_back(window_state(), steps_out_.front().second, step_);
  p.choice = choose(p.assumed);
  for (SeqId id : p.choice.step_rows) p.tokens.push_back(pool_.at(id).tokens());
  ahead_ = std::move(p);
  stats_.plan_ahead_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::optional<PlannedStep> Scheduler::take_ahead(const WindowState& now) {
  if (!ahead_ || !ahead_->back) return std::nullopt;
  std::optional<PlannedStep> p = std::exchange(ahead_, std::nullopt);
  if (still_valid(*p, now)) {
    ++stats_.plans_kept;
    return p;
  }
  ++stats_.plans_redone;
  return std::nullopt;
}

}  // namespace exspec
