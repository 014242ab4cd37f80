// The message protocol of the pipeline, as typed actor interfaces. Messages carry jobs
// (actors/jobs/job.h), each held by exactly one actor at a time. Every job, a step or a prefill of
// either planner, takes one path:
//   pool-manager --assemble--> realigner --draft--> drafter --verify--> verifier
//   --split--> realigner --done--> pool-manager
// (a job with nothing for the draft model goes from the realigner straight to the verifier, and
// one with nothing to assemble or split skips the realigner: actors/actor_handles.h).
#pragma once
#include <caf/all.hpp>

#include <memory>

#include "actors/sink.h"

namespace exspec {

class Job;
using JobPtr = std::shared_ptr<Job>;

// A submit from a producer, already validated and counted against the queue bound.
struct SubmitMsg {
  SeqId id = 0;
  SeqRequest request;
  int priority = 0;
  std::shared_ptr<TokenSink> sink;
};

using assemble_atom = caf::atom_constant<caf::atom("assemble")>;
using split_atom = caf::atom_constant<caf::atom("split")>;
using draft_atom = caf::atom_constant<caf::atom("draft")>;
using verify_atom = caf::atom_constant<caf::atom("verify")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using submit_many_atom = caf::atom_constant<caf::atom("submitmany")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;

using pool_manager_actor = caf::typed_actor<
    caf::reacts_to<submit_atom, std::shared_ptr<SubmitMsg>>,
    caf::reacts_to<submit_many_atom, std::shared_ptr<std::vector<SubmitMsg>>>, caf::reacts_to<cancel_atom, SeqId, int>,
    caf::reacts_to<done_atom, JobPtr>,
    caf::replies_to<shutdown_atom, bool>::with<bool>>;

using realigner_actor = caf::typed_actor<caf::reacts_to<assemble_atom, JobPtr>, caf::reacts_to<split_atom, JobPtr>>;
using drafter_actor = caf::typed_actor<caf::reacts_to<draft_atom, JobPtr>>;
using verifier_actor = caf::typed_actor<caf::reacts_to<verify_atom, JobPtr>>;

}  // namespace exspec

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(exspec::JobPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<exspec::SubmitMsg>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<std::vector<exspec::SubmitMsg>>)
