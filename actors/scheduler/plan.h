// What the in-place Scheduler hands out and what it takes back: one prefill chunk or one step,
// planned in full (which rows, which K, where each row's drafts come from), and its outcome as
// plain data. Each row is a SlotRow (model/slot_row.h): its slot, its tokens and what each
// model's store holds of it (a copy of the sequence's own counts, Sequence::stored); an outcome
// brings the new counts back. The paper's modes have their own plans (actors/paper/paper_plan.h);
// the results every step and prefill return, whichever mode ran them, are the bases here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "actors/scheduler/cost_model.h"
#include "actors/scheduler/proposer.h"
#include "model/seq_request.h"
#include "model/sampling.h"
#include "model/slot_row.h"

namespace exspec {

using SeqId = uint64_t;

struct StepTimes {
  double draft_s = 0, verify_s = 0, align_s = 0;
};

// What every step returns, per row in plan order.
struct StepResult {
  int64_t serial = 0;
  std::string error;  // non-empty: every row of the step fails with it
  std::vector<std::vector<int64_t>> committed;      // accepted drafts, then the bonus token
  std::vector<std::vector<TokenLogprob>> logprobs;  // with `committed` (empty: none asked)
  std::vector<int64_t> accepted;
  StepTimes times;
};

// What every prefill returns, per sequence in plan order.
struct PrefillResult {
  int64_t serial = 0;
  std::string error;  // non-empty: every sequence of the prefill fails with it
  double seconds = 0;
};

// Blocks copied in each store before a job's forwards (the realigner's, in assemble): (from, to)
// block ids. A newcomer's cached prefix found in another slot's row is copied into its own
// blocks once, so that its keys are read as a view with its neighbours' at every later forward.
struct BlockCopies {
  std::vector<std::pair<int64_t, int64_t>> target, draft;
  bool empty() const { return target.empty() && draft.empty(); }
  void append(const BlockCopies& o) {
    target.insert(target.end(), o.target.begin(), o.target.end());
    draft.insert(draft.end(), o.draft.begin(), o.draft.end());
  }
};

// One chunk of the prompts still being stored: at most `chunk` positions over `rows`
// (prefill_chunk in model/inplace.h picks how many rows and how much of each).
struct PrefillPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;
  std::vector<SlotRow> rows;
  bool with_draft = false;  // the draft stores the chunk too (else it catches up when it drafts)
  int64_t chunk = 0;
  BlockCopies copies;  // the rows' cached prefixes into their own blocks, first
  // >= 0: the chunk (one row) scores the prompt tokens it predicts, with this many of the most
  // likely tokens (SeqRequest::prompt_logprobs).
  int64_t prompt_logprobs = -1;
};

struct PrefillOutcome : PrefillResult {
  std::vector<Stored> stored;  // per sequence: what each store holds of it now
  // prompt_logprobs: per sequence, the entries of the prompt tokens after the positions stored
  std::vector<std::vector<TokenLogprob>> prompt_logprobs;
};

// A sequence moved to a free slot before its step (the realigner's job in place): its blocks are
// copied into the new slot's own (from, to block ids), in the target's store and the draft's.
struct SlotMove {
  int64_t from = -1, to = -1;
  std::vector<std::pair<int64_t, int64_t>> target, draft;
};

// One step over rows in their slots (K = 0: a plain target step).
struct StepPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;  // rows, in slot order
  std::vector<SlotRow> rows;  // their slots after `moves`
  // Rows moved first, so that the step's slots are consecutive: attention then reads their keys
  // as a view instead of gathering them at every layer (model/kv_store.h).
  std::vector<SlotMove> moves;
  BlockCopies copies;  // the rows' cached prefixes into their own blocks, before the moves
  int64_t k = 0;
  StepShape shape;  // what the draft-length policy priced
  std::vector<RowSampling> sampling;  // per row (empty: every row plain greedy, no logprobs)
  // Each row's proposal without the draft model (actors/scheduler/proposer.h; empty: the model's drafts,
  // or none), and whether the draft model drafts this step (K > 0 with a draft model).
  std::vector<std::vector<int64_t>> proposed;
  std::vector<Proposer> proposers;  // per row: where its drafts come from this step
  bool by_model = false;
};

struct StepOutcome : StepResult {
  std::vector<Stored> stored;  // per row: what each store holds of it after the commit
};

// The scheduler's next piece of work: nothing (idle, or the pipeline is full), a prefill or a step.
using Work = std::variant<std::monostate, PrefillPlan, StepPlan>;

// Where a sequence's newly committed tokens came from: one origin per token, and the draft length
// (K) of each step that committed them for it (0: a plain step).
struct TokenOrigins {
  std::vector<TokenOrigin> tokens;
  std::vector<int64_t> step_k;
};

// What producers hear of a sequence after an event: new tokens, and the result when it ended.
struct SeqEvent {
  SeqId id = 0;
  std::optional<std::vector<TokenLogprob>> prompt_logprobs;  // once, when asked for, before any token
  std::vector<int64_t> tokens;
  std::vector<TokenLogprob> logprobs;  // one per token, when asked for
  std::optional<SeqResult> finished;
  TokenOrigins origins;  // where `tokens` came from
};

}  // namespace exspec
