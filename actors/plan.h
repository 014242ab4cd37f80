// What the Scheduler hands out and what it takes back: one prefill or one step, planned in full
// (which rows, which K, how the batch is put together), and its outcome as plain data. The
// tensors a plan names are opaque here (model/spec_batch.h): the scheduler moves them between
// the pool and the steps, never looks inside.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/cost_model.h"
#include "model/generation.h"
#include "model/sampling.h"
#include "model/slot_row.h"  // in place: a row's slot, tokens and what each store holds

namespace exspec {

struct SeqTensors;
struct SpecBatch;
using SeqId = uint64_t;

// Prefill the target caches of sequences that joined (their draft catches up lazily).
// In place: one chunk of at most `chunk` positions over `slot_rows` (model/inplace.h).
struct PrefillPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;
  std::vector<std::vector<int64_t>> prompts;  // whole prompts; the last token becomes pending
  bool with_draft = false;                    // speculative modes: the draft follows them
  std::vector<SlotRow> slot_rows;             // in place: ids' slots (prompts unused)
  int64_t chunk = 0;
};

struct PrefillOutcome {
  int64_t serial = 0;
  std::string error;  // non-empty: every sequence of the prefill fails with it
  std::vector<std::shared_ptr<SeqTensors>> states;  // per sequence, in plan order
  std::vector<int64_t> draft_lag;                   // per sequence: tokens the draft lacks
  std::vector<int64_t> stored;                      // in place: positions the target's slot holds
  double seconds = 0;
};

// How the step's batch is put together (the copy it costs, cheapest first).
enum class Assembly {
  Continue,  // a fixed batch (nonspec, eqspec) goes on: drop `drop_rows`, realign, no copy
  Reuse,     // the rows are exactly the batch they were cut from, in order: no copy
  Stack,     // a same-length group: the rows' caches stacked, no padding
  Repad,     // mixed lengths: left-padded to the longest (ExSpec's realignment cost)
  InPlace,   // rows live in their store slots: nothing is put together, nothing copied
};
const char* assembly_name(Assembly a);

// One speculative step (K = 0: a plain target step, i.e. nonspec decoding).
struct StepPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;  // rows, in batch order
  int64_t k = 0;
  StepShape shape;         // what the draft-length policy priced
  Assembly assembly = Assembly::Repad;
  int64_t reserve = 0;     // spare cache positions left after each (re)alignment
  // Reuse, Stack, Repad: each row's state from the pool. Continue: the fixed batch.
  std::vector<std::shared_ptr<SeqTensors>> rows;
  std::shared_ptr<SpecBatch> batch;
  std::vector<int64_t> drop_rows;  // Continue: rows of `batch` that left it (ascending)
  bool keep_batch = false;         // fixed batch: the batch comes back whole, not cut into rows
  std::vector<RowSampling> sampling;  // per row (empty: every row plain greedy, no logprobs)
  std::vector<SlotRow> slot_rows;     // InPlace: each row's slot, in slot order
  // InPlace: each row's proposal without the draft model (actors/proposer.h; empty: the model's
  // drafts, or none), and whether the draft model drafts this step (K > 0 with a draft model).
  std::vector<std::vector<int64_t>> proposed;
  bool by_model = false;
};

struct StepTimes {
  double draft_s = 0, verify_s = 0, align_s = 0;
};

struct StepOutcome {
  int64_t serial = 0;
  std::string error;  // non-empty: every row of the step fails with it
  // Per row, in plan order.
  std::vector<std::vector<int64_t>> committed;      // accepted drafts, then the bonus token
  std::vector<std::vector<TokenLogprob>> logprobs;  // with `committed` (empty: none asked)
  std::vector<int64_t> accepted;
  std::vector<int64_t> draft_lag;                   // tokens the draft lacks after the step
  std::vector<int64_t> stored;                      // in place: positions the target's slot holds
  std::vector<std::shared_ptr<SeqTensors>> rows;    // each row's state (not keep_batch)
  std::shared_ptr<SpecBatch> batch;                 // keep_batch: the batch's state
  StepTimes times;
};

// The scheduler's next piece of work: nothing (idle, or the pipeline is full), a prefill or a step.
using Work = std::variant<std::monostate, PrefillPlan, StepPlan>;

// What producers hear of a sequence after an event: new tokens, and the result when it ended.
struct SeqEvent {
  SeqId id = 0;
  std::vector<int64_t> tokens;
  std::vector<TokenLogprob> logprobs;  // one per token, when asked for
  std::optional<SeqResult> finished;
};

}  // namespace exspec
