// The pipeline's three working roles (actors/roles.h). Each takes a job from a message, makes
// its call on it and hands it on (actors/messages.h has the path):
//   realigner  a job's assemble and split, off the forward-pass path: in place it copies the
//              blocks of cached prefixes and slot moves (actors/scheduler/block_manager.h); in the
//              paper's modes it puts batches together and realigns them (unpad-append-repad)
//   drafter    owns the draft model and its KV store; runs a job's draft-model forward
//              (drafting K tokens, or storing a prompt chunk in place)
//   verifier   owns the target model and its KV store; runs a job's target forward (storing a
//              prompt, or verifying a step and committing it; plain steps verify zero drafts)
// The drafter's and the verifier's forwards run on the initial thread when a command parks it
// (model/initial_thread.h).
#include "actors/jobs/job.h"
#include "actors/roles.h"
#include "actors/actor_handles.h"
#include "model/initial_thread.h"
#include "model/runtime.h"

namespace exspec {

realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const ActorHandles> handles,
                                         std::shared_ptr<KVStore> target_store, std::shared_ptr<KVStore> draft_store) {
  const Models stores{nullptr, target_store.get(), nullptr, draft_store.get()};
  return {
      [=](assemble_atom, JobPtr j) {
        apply_thread_settings();
        j->assemble(stores);
        if (!j->error().empty()) self->send(handles->pool_manager, done_atom::value, std::move(j));
        else to_forward(self, *handles, std::move(j));
      },
      [=](split_atom, JobPtr j) {
        apply_thread_settings();
        j->split();
        self->send(handles->pool_manager, done_atom::value, std::move(j));
      },
  };
}

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const ActorHandles> handles, std::shared_ptr<KVStore> store,
                                     int threads) {
  return {
      [=](draft_atom, JobPtr j) {
        run_on_initial_thread([&] { j->draft(*model, store.get()); }, threads);
        self->send(handles->verifier, verify_atom::value, std::move(j));
      },
  };
}

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const ActorHandles> handles, std::shared_ptr<KVStore> store,
                                       int threads) {
  return {
      [=](verify_atom, JobPtr j) {
        run_on_initial_thread([&] { j->run_target(*model, store.get()); }, threads);
        finish_job(self, *handles, std::move(j));
      },
  };
}

}  // namespace exspec
