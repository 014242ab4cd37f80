// What the PaperScheduler (nonspec, EqSpec, ExSpec) hands out and takes back. Their rows are
// tensor states cut out of batches and put together again (model/paper/spec_batch.h); the scheduler
// moves them between the pool and the steps and never looks inside.
#pragma once
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "actors/scheduler/plan.h"

namespace exspec {

struct SeqTensors;
struct SpecBatch;

// Prefill the target caches of sequences that joined (their draft catches up lazily).
struct PaperPrefillPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;
  std::vector<std::vector<int64_t>> prompts;  // whole prompts; the last token becomes pending
  bool with_draft = false;                    // speculative modes: the draft follows them
  std::vector<int64_t> prompt_logprobs;       // per prompt: SeqRequest::prompt_logprobs
};

struct PaperPrefillOutcome : PrefillResult {
  std::vector<std::shared_ptr<SeqTensors>> states;  // per sequence, in plan order
  std::vector<int64_t> draft_lag;                   // per sequence: tokens before pending the draft lacks
  std::vector<std::vector<TokenLogprob>> prompt_logprobs;  // per sequence: its prompt's, when asked for
};

// How the step's batch is put together (the copy it costs, cheapest first).
enum class Assembly {
  Continue,  // a fixed batch (nonspec, eqspec) goes on: drop `drop_rows`, realign, no copy
  Reuse,     // the rows are exactly the batch they were cut from, in order: no copy
  Stack,     // a same-length group: the rows' caches stacked, no padding
  Repad,     // mixed lengths: left-padded to the longest (ExSpec's realignment cost)
};

struct PaperStepPlan {
  int64_t serial = 0;
  std::vector<SeqId> ids;  // rows, in batch order
  int64_t k = 0;
  StepShape shape;
  Assembly assembly = Assembly::Repad;
  int64_t reserve = 0;  // spare cache positions left after each (re)alignment
  // Reuse, Stack, Repad: each row's state from the pool. Continue: the fixed batch.
  std::vector<std::shared_ptr<SeqTensors>> rows;
  std::shared_ptr<SpecBatch> batch;
  std::vector<int64_t> drop_rows;  // Continue: rows of `batch` that left it (ascending)
  bool keep_batch = false;         // fixed batch: the batch comes back whole, not cut into rows
  std::vector<RowSampling> sampling;
};

struct PaperStepOutcome : StepResult {
  std::vector<std::shared_ptr<SeqTensors>> rows;  // each row's state (not keep_batch)
  std::shared_ptr<SpecBatch> batch;               // keep_batch: the batch's state
  std::vector<int64_t> draft_lag;                 // per row: tokens before pending the draft lacks after it
};

using PaperWork = std::variant<std::monostate, PaperPrefillPlan, PaperStepPlan>;

}  // namespace exspec
