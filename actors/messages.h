// The message protocol of the pipeline, as typed actor interfaces. Messages carry the
// Scheduler's work items (actors/step_phases.h): a PrefillWork or a StepWork, each held by
// exactly one actor at a time. One step:
//   pool-manager --assemble--> realigner --draft--> drafter --verify--> verifier
//   --split--> realigner --step_done--> pool-manager
// (K = 0 goes from the realigner straight to the verifier.) A prefill of new sequences:
//   pool-manager --prefill--> verifier --prefilled--> pool-manager
// (the draft catches up lazily, in its first drafting step: model/spec_batch.h).
#pragma once
#include <caf/all.hpp>

#include <memory>

#include "actors/engine.h"

namespace exspec {

struct PrefillWork;
struct StepWork;
using PrefillPtr = std::shared_ptr<PrefillWork>;
using StepPtr = std::shared_ptr<StepWork>;

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
using prefill_atom = caf::atom_constant<caf::atom("prefill")>;
using prefilled_atom = caf::atom_constant<caf::atom("prefilled")>;
using step_done_atom = caf::atom_constant<caf::atom("stepdone")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using submit_many_atom = caf::atom_constant<caf::atom("submitmany")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using shutdown_atom = caf::atom_constant<caf::atom("shutdown")>;

using pool_manager_actor = caf::typed_actor<
    caf::reacts_to<submit_atom, std::shared_ptr<SubmitMsg>>,
    caf::reacts_to<submit_many_atom, std::shared_ptr<std::vector<SubmitMsg>>>, caf::reacts_to<cancel_atom, SeqId, int>,
    caf::reacts_to<prefilled_atom, PrefillPtr>, caf::reacts_to<step_done_atom, StepPtr>,
    caf::replies_to<shutdown_atom, bool>::with<bool>>;

using realigner_actor = caf::typed_actor<caf::reacts_to<assemble_atom, StepPtr>, caf::reacts_to<split_atom, StepPtr>>;
using drafter_actor = caf::typed_actor<caf::reacts_to<draft_atom, StepPtr>>;
using verifier_actor = caf::typed_actor<caf::reacts_to<prefill_atom, PrefillPtr>, caf::reacts_to<verify_atom, StepPtr>>;

}  // namespace exspec

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(exspec::PrefillPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(exspec::StepPtr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<exspec::SubmitMsg>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<std::vector<exspec::SubmitMsg>>)
