// What the engine hands back to its producers: each sequence's output on its TokenSink, and the
// figures the pool-manager publishes after every event (EngineStats). Neither tensors nor CAF:
// the engine front (actors/engine.h) and the pipeline's messages (actors/messages.h) both name them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/plan.h"
#include "actors/scheduler/run_stats.h"
#include "model/seq_request.h"

namespace exspec {

using SeqId = uint64_t;

// Receives one sequence's output. Called from engine threads: must be quick and must not call
// back into the engine synchronously except cancel().
class TokenSink {
 public:
  virtual ~TokenSink() = default;
  // Tokens committed since the last call, in order (EOS included when it ended the sequence).
  virtual void on_tokens(SeqId id, const std::vector<int64_t>& delta) = 0;
  // Sequences that asked for logprobs: called just before on_tokens with one entry per token.
  virtual void on_logprobs(SeqId, const std::vector<TokenLogprob>&) {}
  // Where on_tokens' tokens came from (one origin each) and each step's K: called just before it.
  virtual void on_origins(SeqId, const TokenOrigins&) {}
  // Sequences that asked for prompt logprobs (SeqRequest::prompt_logprobs): once, before any
  // token, an entry for each prompt token after the first (none for a one-token prompt).
  virtual void on_prompt_logprobs(SeqId, const std::vector<TokenLogprob>&) {}
  // Exactly once per accepted submit: finish is Stop/Length, or None when cancelled.
  virtual void on_finish(SeqId id, const SeqResult& result) = 0;
};

struct EngineStats {
  RunStats totals;       // since start
  size_t queued = 0;     // waiting for the window
  size_t active = 0;     // in the window
  size_t submitted = 0, finished = 0, cancelled = 0;
  int64_t slots = 0, slots_used = 0;  // in place: the KV stores' slots, and those taken
  BlockCounts blocks;                 // in place: the target's store's blocks
  SpeculationEstimates speculation;  // the draft-length policy's view (adaptive = false: fixed K)
};

}  // namespace exspec
