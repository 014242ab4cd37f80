// The sequential driver over the speculative steps: prefill, form batch, realign, draft, verify,
// write back. Used by `exspec generate` and the oracle tests; the actor pipeline runs the same
// steps in different actors.
#pragma once
#include <memory>
#include <vector>

#include "actors/draft_length.h"
#include "actors/engine_config.h"
#include "actors/run_stats.h"
#include "model/generation.h"

namespace exspec {

class Decoder;

class SpecEngine {
 public:
  // draft may be null only in nonspec mode.
  SpecEngine(std::shared_ptr<const Decoder> target, std::shared_ptr<const Decoder> draft, EngineConfig config);
  // Decodes every request to completion; results in request order.
  std::vector<SeqResult> run(const std::vector<SeqRequest>& requests);
  const RunStats& stats() const { return stats_; }
  const DraftLengthPolicy* policy() const { return policy_.get(); }
  // Replaces the calibrated policy (speculative modes only).
  void set_policy(std::shared_ptr<DraftLengthPolicy> p) {
    if (policy_) policy_ = std::move(p);
  }

 private:
  void run_fixed_batches(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out);
  void run_pool(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out);

  std::shared_ptr<const Decoder> target_, draft_;
  // K of the next step over these rows (0 in nonspec mode); shape gets what the policy priced.
  int64_t choose_k(const std::vector<RowOutlook>& rows, int64_t context, int64_t lag, bool reused, StepShape& shape);
  void learn(const StepShape& shape, double draft_s, double verify_s, double align_s);
  int64_t cache_reserve() const;

  EngineConfig config_;
  std::shared_ptr<DraftLengthPolicy> policy_;
  RunStats stats_;
};

}  // namespace exspec
