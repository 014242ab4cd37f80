// A piece of work while it travels through the roles: one prefill or one step, planned by an
// planner (actors/scheduler/planner.h) and held by exactly one role at a time, with its tensors. Every
// job takes the same path, whichever planner planned it:
//   assemble (realigner, when assembles()) -> draft (drafter, when drafts()) -> run_target (verifier)
//   -> split (realigner, when splits())
// run_job below is that path in one thread (the sequential driver, the tests); the actor
// pipeline makes the same four calls, each on its role (actors/messages.h). A call that fails
// records the error in the job; the later calls then pass it on untouched, and the planner
// fails the job's sequences with it.
#pragma once
#include <functional>
#include <string>

#include "model/model_set.h"

namespace exspec {

struct StepResult;
struct VerifyResult;
// The models a job's forwards run on, with their stores (model/model_set.h).
using Models = ModelSet;

class Job {
 public:
  virtual ~Job() = default;
  // Puts the batch together: in place, moves rows into the slots the plan gave them (the stores
  // of m; its models are unused); in the paper's modes, builds the batch from its rows.
  virtual void assemble(const Models& m) = 0;
  // A prefill (a prompt, or a chunk of prompts), not a step.
  virtual bool prefills() const = 0;
  // Whether the draft model has a forward in this job (a drafting step, a prompt chunk it stores).
  virtual bool drafts() const = 0;
  virtual void draft(const Decoder& draft, KVStore* store) = 0;
  // The target's forward: store a prompt (chunk), or verify and commit a step.
  virtual void run_target(const Decoder& target, KVStore* store) = 0;
  // Makes the batch's rows stand alone again (the paper's realignment and split).
  virtual void split() {}
  // Whether assemble (split) has anything to do: a job without it skips the realigner, whose hop
  // is a thread's wake-up each way (actors/actor_handles.h routes it).
  virtual bool assembles() const { return true; }
  virtual bool splits() const { return false; }
  virtual const std::string& error() const = 0;
};

// The step function: assemble -> draft (when drafts()) -> run_target -> split, for one job, in
// this thread.
void run_job(Job& job, const Models& m);

// A verification's accepted counts, committed tokens (accepted drafts, then the bonus) and
// logprobs, per row, into a step's result.
void take_verified(VerifyResult& v, StepResult& o);

// Runs one call of a job unless an earlier one failed; adds its time to `seconds`; an exception
// becomes `error` (prefixed with `what`).
void timed(std::string& error, double& seconds, const char* what, const std::function<void()>& call);

}  // namespace exspec
