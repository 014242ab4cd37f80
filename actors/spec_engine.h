// The sequential driver over the speculative steps: prefill, form batch, realign, draft, verify,
// write back. Used by `exspec generate` and the oracle tests; the actor pipeline runs the same
// steps in different actors.
#pragma once
#include <memory>
#include <vector>

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

 private:
  void run_fixed_batches(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out);
  void run_pool(const std::vector<SeqRequest>& requests, std::vector<SeqResult>& out);

  std::shared_ptr<const Decoder> target_, draft_;
  EngineConfig config_;
  RunStats stats_;
};

}  // namespace exspec
