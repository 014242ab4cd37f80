// The work the Scheduler plans, done: one prefill, or one step in the paper's phases
//   assemble (realigner) -> draft (drafter, when the draft model drafts) -> verify (verifier)
//   -> split (realigner)
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
class KVStore;

struct PrefillWork {
  PrefillPlan plan;
  PrefillOutcome outcome;
};

// One step while it travels: exactly one role holds it at a time, and with it its tensors.
struct StepWork {
  StepPlan plan;
  SpecBatch batch;        // assembled from the plan's rows or fixed batch
  at::Tensor drafts;      // [B, K]: the draft model's, then with the plan's proposals in place
  std::vector<int64_t> agree;  // in place: per row, the leading drafts the draft model fed
  VerifyResult verified;
  StepOutcome outcome;
};

// In place (Assembly::InPlace, PrefillPlan::slot_rows): the phases take the model's KV store
// (model/kv_store.h), owned by the role that runs the model: the verifier the target's, the
// drafter the draft's. Each sets its rows' lengths in the store from the plan, then writes in
// place; assemble and split have nothing to do (alignment time 0 by construction).
void prefill_phase(const Decoder& target, PrefillWork& w, KVStore* store = nullptr);
// In place with a draft: the draft stores the same chunk as the target (eagerly, so that its
// first drafting step has no whole prompt to catch up); before prefill_phase.
void draft_prefill_phase(const Decoder& draft, PrefillWork& w, KVStore* store);
void assemble_phase(StepWork& w);
void draft_phase(const Decoder& draft, StepWork& w, KVStore* store = nullptr);
// In place: the step's drafts from the plan's proposals (actors/proposer.h) and the draft
// model's (when it ran, StepPlan::by_model). Called by verify_phase.
void settle_drafts(StepWork& w);
// BatchVerify (Algorithm 1) and commit.
void verify_phase(const Decoder& target, StepWork& w, KVStore* store = nullptr);
// Unpad-append-repad, then each row's results (and state, unless the batch is kept whole).
void split_phase(StepWork& w);

}  // namespace exspec
