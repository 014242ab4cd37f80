// SequencePool (ExSpec, Algorithm 3): every sequence's state between steps: its request, its
// tokens, what each model's cache holds of it, and where it is in its life. Plain C++: the
// caches themselves are the planners' (in place: KV slots; the paper's modes: tensor rows).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "actors/scheduler/acceptance.h"
#include "model/seq_request.h"
#include "model/sampling.h"
#include "model/slot_row.h"

namespace exspec {

using SeqId = uint64_t;

// A sequence's life, as vLLM's RequestStatus and llama.cpp's slot_state:
//   Waiting     queued for the window (or a fixed batch); never taken yet
//   Prefilling  taken (in place: it holds a slot); its prompt is being stored (in place chunk by
//               chunk, while others decode)
//   Running     its stores hold every token but the pending one: a step may take it
//   Preempted   back at the head of the queue for want of blocks; it keeps its tokens and is
//               stored again (often from the prefix cache) when it is taken
//   Finished    done, cancelled or failed
// Whether a job holds it right now is Sequence::job, beside the state.
enum class SeqState { Waiting, Prefilling, Running, Preempted, Finished };

struct Sequence {
  SeqId id = 0;
  SeqRequest request;
  int priority = 0;                  // higher first (interactive before batch work)
  std::vector<int64_t> generated;
  std::vector<TokenLogprob> logprobs;  // one per generated token when request.sampling.logprobs >= 0
  std::vector<TokenLogprob> prompt_logprobs;  // request.prompt_logprobs: prompt tokens 1.. scored so far
  SeqState state = SeqState::Waiting;
  FinishReason finish = FinishReason::None;
  int64_t last_step = -1;               // the step that last advanced it (fairness)
  AcceptanceEstimate acceptance;        // of its drafts (adaptive K)
  int64_t drafted = 0, accepted = 0;    // its draft tokens verified, and accepted (usage details)
  // The job that holds it (its serial; 0: none). A fixed batch (nonspec, EqSpec) holds its rows
  // between its steps too.
  int64_t job = 0;
  // A cancellation asked while a job held it: it ends with this reason when the job is back.
  std::optional<FinishReason> cancel;
  // Its progress, the one record of it: what each model's store (in the paper's modes, cache)
  // holds of its tokens, as the last job reported. Every token but pending once its prompt is
  // stored; the draft's shorter by its lag. A plan hands a copy to the job (model/slot_row.h),
  // each forward is handed that, and the job's outcome brings the new counts back here.
  Stored stored;
  // In place: its slot in the stores (-1: none), and whether the draft's store follows the
  // target's prompt chunks (decided when it takes its slot; else the draft catches the prompt
  // up when it first drafts).
  int64_t slot = -1;
  bool draft_prefill = false;
  // Structured output (request.grammar): the matcher over exactly its generated tokens between
  // jobs; the job that holds the sequence advances it (model/constrained.h). Pre-emption and the
  // prefix cache keep the tokens, so it stays as it is.
  std::shared_ptr<grammar::Matcher> matcher;

  bool in_job() const { return job != 0; }
  // Whether its prefill must still score prompt tokens (then it computes every prompt position:
  // no cached prefix stands in for them).
  bool scoring() const {
    return request.scores_prompt() && prompt_logprobs.size() + 1 < request.prompt.size();
  }
  int64_t length() const { return static_cast<int64_t>(request.prompt.size() + generated.size()); }
  // Tokens before pending the draft lacks.
  int64_t draft_lag() const { return length() - 1 - stored.draft; }
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

  // Pops up to n queued sequences (higher priority first; then shortest prompt first when
  // sort_by_length, else arrival order); they are Prefilling now.
  // fits: whether the next one can be taken now (called in that order; the first that cannot
  // ends the taking, so a large request is not overtaken for ever).
  std::vector<SeqId> take_waiting(size_t n, bool sort_by_length,
                                  const std::function<bool(const Sequence&)>& fits = {});
  // A Prefilling or Running sequence back to the head of the queue, Preempted: it keeps its
  // tokens and is stored again when it is taken.
  void preempt(SeqId id);

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
  // Sequences that left the queue for the first time since the last call (the engine front's
  // queue bound counts them once: a pre-empted one that comes back is not queued there again).
  size_t take_dequeued() {
    const size_t n = dequeued_;
    dequeued_ = 0;
    return n;
  }

 private:
  SeqId next_id_ = 1;
  std::unordered_map<SeqId, Sequence> seqs_;
  std::deque<SeqId> waiting_;
  size_t unfinished_ = 0, dequeued_ = 0;
};

}  // namespace exspec
