// The sequential driver: the Scheduler's plans run one at a time, in this thread, through the
// same step phases the actor pipeline runs (actors/step_phases.h). What the oracle tests run:
// the server's scheduling code, without its actors and threads.
#pragma once
#include <memory>
#include <vector>

#include "actors/draft_length.h"
#include "actors/engine_config.h"
#include "actors/run_stats.h"
#include "model/generation.h"

namespace exspec {

class Decoder;

class SequentialDriver {
 public:
  // draft may be null only in nonspec mode. The draft-length policy is calibrated here when
  // adaptive (as the engine's is at start).
  SequentialDriver(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, EngineConfig config);
  // Decodes every request to completion; results in request order. Throws when a step failed.
  std::vector<SeqResult> run(const std::vector<SeqRequest>& requests);
  // The last run's figures.
  const RunStats& stats() const { return stats_; }
  // Replaces the policy (speculative modes only): tests drive arbitrary K sequences with it.
  void set_policy(std::shared_ptr<DraftLengthPolicy> p) {
    if (policy_) policy_ = std::move(p);
  }

 private:
  std::shared_ptr<const Decoder> target_, draft_;
  EngineConfig config_;
  std::shared_ptr<DraftLengthPolicy> policy_;
  RunStats stats_;
};

}  // namespace exspec
