// The work the Scheduler plans, done: one prefill, or one step in the paper's phases
//   assemble (realigner) -> draft (drafter, K > 0 only) -> verify (verifier) -> split (realigner)
// Each phase is a plain function over the work item, called by its role actor in the pipeline
// and in sequence by the sequential driver: the step is written once. A phase that fails sets
// the outcome's error; the later phases then pass the item on untouched.
#pragma once
#include <ATen/core/Tensor.h>

#include "actors/plan.h"
#include "model/spec_batch.h"
#include "model/speculative.h"

namespace exspec {

class Decoder;

struct PrefillWork {
  PrefillPlan plan;
  PrefillOutcome outcome;
};

// One step while it travels: exactly one role holds it at a time, and with it its tensors.
struct StepWork {
  StepPlan plan;
  SpecBatch batch;        // assembled from the plan's rows or fixed batch
  at::Tensor drafts;      // [B, K]
  VerifyResult verified;
  StepOutcome outcome;
};

void prefill_phase(const Decoder& target, PrefillWork& w);
void assemble_phase(StepWork& w);
void draft_phase(const Decoder& draft, StepWork& w);
// BatchVerify (Algorithm 1) and commit.
void verify_phase(const Decoder& target, StepWork& w);
// Unpad-append-repad, then each row's results (and state, unless the batch is kept whole).
void split_phase(StepWork& w);

}  // namespace exspec
