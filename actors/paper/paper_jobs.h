// The PaperScheduler's work as jobs (actors/jobs/job.h): a prefill of the target caches, or a step
// in the paper's phases: assemble (the realigner puts the batch together from its rows, or goes
// on with a fixed batch) -> draft -> verify and commit -> split (unpad-append-repad, then the
// rows cut apart again unless the batch is kept whole).
#pragma once
#include <ATen/core/Tensor.h>

#include "actors/jobs/job.h"
#include "actors/jobs/job_planner.h"
#include "actors/paper/paper_plan.h"
#include "actors/paper/paper_scheduler.h"
#include "model/paper/spec_batch.h"
#include "model/paper/speculative.h"

namespace exspec {

class PaperPrefillJob : public Job {
 public:
  explicit PaperPrefillJob(PaperPrefillPlan p) : plan(std::move(p)) { outcome.serial = plan.serial; }
  bool prefills() const override { return true; }
  void assemble(const Models&) override {}
  bool assembles() const override { return false; }
  bool drafts() const override { return false; }  // the draft catches up lazily (model/paper/spec_batch.h)
  void draft(const Decoder&, KVStore*) override {}
  void run_target(const Decoder& target, KVStore* store) override;
  const std::string& error() const override { return outcome.error; }

  PaperPrefillPlan plan;
  PaperPrefillOutcome outcome;
};

class PaperStepJob : public Job {
 public:
  explicit PaperStepJob(PaperStepPlan p) : plan(std::move(p)) { outcome.serial = plan.serial; }
  bool prefills() const override { return false; }
  void assemble(const Models&) override;
  bool drafts() const override { return plan.k > 0; }
  void draft(const Decoder& draft, KVStore* store) override;
  void run_target(const Decoder& target, KVStore* store) override;  // BatchVerify (Algorithm 1), commit
  void split() override;
  bool splits() const override { return true; }
  const std::string& error() const override { return outcome.error; }

  PaperStepPlan plan;
  SpecBatch batch;     // assembled from the plan's rows or fixed batch
  at::Tensor drafted;  // [B, K]
  VerifyResult verified;
  PaperStepOutcome outcome;
};

// The PaperScheduler with its plans as these jobs (actors/jobs/job_planner.h).
using PaperJobPlanner = PlannerJobs<PaperScheduler, PaperPrefillJob, PaperStepJob>;

}  // namespace exspec
