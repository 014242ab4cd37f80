// The in-place Scheduler's work as jobs (actors/jobs/job.h): a prompt chunk, or a step. Each takes
// the model's KV store (model/kv_store.h), owned by the role that runs the model: the verifier
// the target's, the drafter the draft's. Each hands its rows' counts (the plan's copies of the
// sequences' own) to the forwards, which write in place; nothing is put together before a step
// or split after it. The outcome brings the new counts back.
#pragma once
#include <ATen/core/Tensor.h>

#include "actors/jobs/job.h"
#include "actors/jobs/job_planner.h"
#include "actors/scheduler/plan.h"
#include "actors/scheduler/scheduler.h"
#include "model/accept.h"

namespace exspec {

class ChunkJob : public Job {
 public:
  explicit ChunkJob(PrefillPlan p) : plan(std::move(p)) { outcome.serial = plan.serial; }
  bool prefills() const override { return true; }
  // The plan's copies of cached prefixes (PrefillPlan::copies).
  void assemble(const Models& m) override;
  bool assembles() const override { return !plan.copies.empty(); }
  bool drafts() const override { return plan.with_draft; }
  // The draft stores the same chunk as the target, first (eagerly, so that its first drafting
  // step has no whole prompt to catch up).
  void draft(const Decoder& draft, KVStore* store) override;
  void run_target(const Decoder& target, KVStore* store) override;
  const std::string& error() const override { return outcome.error; }

  PrefillPlan plan;
  std::vector<int64_t> drafted;  // per row: what the draft's store holds after its call (drafts())
  PrefillOutcome outcome;
};

class StepJob : public Job {
 public:
  explicit StepJob(StepPlan p) : plan(std::move(p)) { outcome.serial = plan.serial; }
  bool prefills() const override { return false; }
  // The plan's copies of cached prefixes, then its slot moves (StepPlan::moves): each model's
  // blocks copied to the new slot's.
  void assemble(const Models& m) override;
  bool assembles() const override { return !plan.moves.empty() || !plan.copies.empty(); }
  bool drafts() const override { return plan.by_model; }
  void draft(const Decoder& draft, KVStore* store) override;
  // The step's drafts settled (settle_drafts), BatchVerify (Algorithm 1) and commit.
  void run_target(const Decoder& target, KVStore* store) override;
  const std::string& error() const override { return outcome.error; }

  StepPlan plan;
  at::Tensor drafted;           // [B, K]: the draft model's, then with the plan's proposals in place
  std::vector<int64_t> agree;   // per row, the leading drafts the draft model fed
  VerifyResult verified;
  StepOutcome outcome;
};

// The step's drafts from the plan's proposals (actors/scheduler/proposer.h) and the draft model's (when
// it ran, StepPlan::by_model).
void settle_drafts(StepJob& j);

// The in-place Scheduler with its plans as these jobs (actors/jobs/job_planner.h).
using InplaceJobPlanner = PlannerJobs<Scheduler, ChunkJob, StepJob>;

}  // namespace exspec
