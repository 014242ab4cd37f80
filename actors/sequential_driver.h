// The sequential driver: the planner's jobs (actors/scheduler/planner.h) run one at a time, in this
// thread, through the step function the actor pipeline runs (run_job, actors/jobs/job.h). What the
// oracle tests run: the server's scheduling code, without its actors and threads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "actors/scheduler/run_stats.h"
#include "model/seq_request.h"

namespace exspec {

class Decoder;

// When requests arrive and clients go away, counted in pieces of work run (a prefill chunk or a
// step each): what a server sees, replayed deterministically for the oracle tests.
struct Timeline {
  std::vector<int64_t> arrive_at;       // per request (absent, or <= 0: before the first piece)
  std::map<size_t, int64_t> cancel_at;  // request -> when its client goes away (finish None)
};

// What a run's schedule looked like (the tests check it did what the timeline meant).
struct DriverTrace {
  int64_t prefills = 0, steps = 0;
  int64_t steps_between_prefills = 0;  // steps with a prefill before and after them (chunked prefill)
  size_t max_active = 0, max_waiting = 0;  // sequences in the window (in place: holding a slot) / queued
};

class SequentialDriver {
 public:
  // draft null: nonspec, or in place with plain steps (K = 0); the paper's modes need one. The draft-length policy is calibrated here when
  // adaptive (as the engine's is at start).
  SequentialDriver(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, EngineConfig config);
  // Decodes every request to completion; results in request order. Throws when a step failed.
  std::vector<SeqResult> run(const std::vector<SeqRequest>& requests, const Timeline& timeline = {});
  // The last run's figures, and its schedule.
  const RunStats& stats() const { return stats_; }
  const DriverTrace& trace() const { return trace_; }
  // Replaces the policy (speculative modes only): tests drive arbitrary K sequences with it.
  void set_policy(std::shared_ptr<DraftLengthPolicy> p) {
    if (policy_) policy_ = std::move(p);
  }

 private:
  std::shared_ptr<const Decoder> target_, draft_;
  EngineConfig config_;
  std::shared_ptr<DraftLengthPolicy> policy_;
  RunStats stats_;
  DriverTrace trace_;
};

}  // namespace exspec
