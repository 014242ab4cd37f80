// A planner's work as jobs, for the two drivers (the actor pipeline, actors/pool_manager.cpp, and
// the sequential driver): the planners (actors/scheduler/planner.h) plan in plain C++ and know no
// jobs. A mode's adapter wraps each plan in the job that runs it and hands a returned job's
// outcome back to its planner; one template serves both modes, so that dispatch is written once.
#pragma once
#include <memory>
#include <stdexcept>
#include <utility>
#include <variant>

#include "actors/jobs/job.h"
#include "actors/scheduler/planner.h"

namespace exspec {

class JobPlanner {
 public:
  virtual ~JobPlanner() = default;
  // The planner behind the jobs: admit, cancel, events, statistics.
  virtual Planner& planner() = 0;
  // The next job, planned in full; null when nothing is ready or max_in_flight are out.
  virtual std::shared_ptr<Job> next() = 0;
  // A job next() handed out, back from the roles: its outcome is written back.
  virtual void done(std::shared_ptr<Job> job) = 0;
};

// P plans a variant of PrefillJob's and StepJob's plan types (their member `plan`) with plan(),
// and takes their outcomes (their member `outcome`) back with prefilled() and complete().
template <class P, class PrefillJob, class StepJob>
class PlannerJobs final : public JobPlanner {
 public:
  template <class... Args>
  explicit PlannerJobs(Args&&... args) : p_(std::forward<Args>(args)...) {}

  Planner& planner() override { return p_; }

  std::shared_ptr<Job> next() override {
    auto work = p_.plan();
    if (auto* p = std::get_if<decltype(PrefillJob::plan)>(&work)) return std::make_shared<PrefillJob>(std::move(*p));
    if (auto* s = std::get_if<decltype(StepJob::plan)>(&work)) return std::make_shared<StepJob>(std::move(*s));
    return nullptr;
  }

  void done(std::shared_ptr<Job> job) override {
    if (auto* p = dynamic_cast<PrefillJob*>(job.get())) return p_.prefilled(std::move(p->outcome));
    if (auto* s = dynamic_cast<StepJob*>(job.get())) return p_.complete(std::move(s->outcome));
    throw std::logic_error("a job its planner did not plan");
  }

 private:
  P p_;
};

}  // namespace exspec
