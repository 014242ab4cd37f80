// SequencePool (ExSpec, Algorithm 3): every sequence's state between steps: its request, its
// tokens, what each model's cache holds of it, and where it is in its life. Plain C++: the
// caches themselves are the executors' (in place: KV slots; the paper's modes: tensor rows).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "actors/acceptance.h"
#include "model/generation.h"
#include "model/sampling.h"

namespace exspec {

using SeqId = uint64_t;

// A sequence's life. Waiting: queued for the window (or a fixed batch). Prefilling: taken; its
// prompt is being stored (in place chunk by chunk, while others decode). Decoding: its caches
// hold every token but the pending one, so a step may take it. Finished: done or cancelled.
// Whether it is inside a prefill or a step right now is `busy`, beside the state.
enum class SeqState { Waiting, Prefilling, Decoding, Finished };

struct Sequence {
  SeqId id = 0;
  SeqRequest request;
  int priority = 0;                  // higher first (interactive before batch work)
  std::vector<int64_t> generated;
  std::vector<TokenLogprob> logprobs;  // one per generated token when request.sampling.logprobs >= 0
  SeqState state = SeqState::Waiting;
  FinishReason finish = FinishReason::None;
  int64_t last_step = -1;               // the step that last advanced it (fairness)
  AcceptanceEstimate acceptance;        // of its drafts (adaptive K)
  int64_t draft_lag = 0;                // tokens the draft lacks, as the last step reported it
  int64_t drafted = 0, accepted = 0;    // its draft tokens verified, and accepted (usage details)
  // Scheduling (actors/executor.h): inside a job; a cancellation that waits for it to end.
  bool busy = false;
  bool cancel_pending = false;
  FinishReason cancel_reason = FinishReason::None;
  // In place: its slot in the stores (-1: none yet) and the positions the target's slot holds
  // (every token but pending once its prompt is stored: the prompt is stored when it reaches
  // prompt - 1), as the last prefill chunk or commit set them; whether the draft stores its
  // prompt chunks too (decided when it takes its slot; else the draft catches it up lazily).
  int64_t slot = -1, stored = 0;
  bool draft_prefill = false;
  bool preempted = false;  // sent back to the queue once for want of blocks (it keeps its tokens)
  // Structured output (request.grammar): the matcher over exactly its generated tokens between
  // steps; the step that holds the sequence advances it (model/constrained.h). Pre-emption and
  // the prefix cache keep the tokens, so it stays as it is.
  std::shared_ptr<grammar::Matcher> matcher;
  int64_t length() const { return static_cast<int64_t>(request.prompt.size() + generated.size()); }
  // The prompt, then the generated tokens.
  std::vector<int64_t> tokens() const {
    std::vector<int64_t> t = request.prompt;
    t.insert(t.end(), generated.begin(), generated.end());
    return t;
  }
};

class SequencePool;

// Each row's sampling state for a step over these sequences (copies: the pool changes while a
// step runs). Empty when every row is plain greedy without logprobs: greedy steps do no host work.
std::vector<RowSampling> sampling_rows(const SequencePool& pool, const std::vector<SeqId>& ids);

class SequencePool {
 public:
  // id 0 = the pool picks one; producers that need the id up front (the engine front) give it.
  SeqId admit(SeqRequest request, int priority = 0, SeqId id = 0);
  Sequence& at(SeqId id);
  const Sequence& at(SeqId id) const;
  bool contains(SeqId id) const { return seqs_.count(id) != 0; }

  // Pops up to n waiting sequences (higher priority first; then shortest prompt first when
  // sort_by_length, else arrival order); they are Prefilling now.
  // fits: whether the next one can be taken now (called in that order; the first that cannot
  // ends the taking, so a large request is not overtaken for ever).
  std::vector<SeqId> take_waiting(size_t n, bool sort_by_length,
                                  const std::function<bool(const Sequence&)>& fits = {});
  // A Prefilling or Decoding sequence back to the head of the queue (pre-empted: it keeps its
  // tokens and is stored again when it is taken).
  void requeue(SeqId id);

  // Write-back: appends committed tokens, stopping exactly where greedy decoding stops (the first
  // EOS, kept, or max_tokens). Returns how many were appended.
  // logprobs: one per token, or null.
  size_t write_back(SeqId id, const int64_t* tokens, size_t n, const TokenLogprob* logprobs = nullptr);
  // Ends a sequence now (cancelled or client gone).
  void cancel(SeqId id);
  // Forgets a finished sequence entirely.
  void erase(SeqId id) { seqs_.erase(id); }

  // Every sequence not finished yet, by id.
  std::vector<SeqId> unfinished_ids() const;

  size_t waiting() const { return waiting_.size(); }
  size_t unfinished() const { return unfinished_; }

 private:
  SeqId next_id_ = 1;
  std::unordered_map<SeqId, Sequence> seqs_;
  std::deque<SeqId> waiting_;
  size_t unfinished_ = 0;
};

}  // namespace exspec
