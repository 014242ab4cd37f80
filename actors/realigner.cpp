// realigner: keeps the KV caches aligned, off the forward-pass path: a job's assemble and split.
// In place it moves scattered rows into consecutive slots (actors/scheduler/slot_moves.h); in the paper's
// modes it puts batches together and realigns them (unpad-append-repad).
#include "actors/jobs/job.h"
#include "actors/roles.h"
#include "actors/route.h"
#include "model/runtime.h"

namespace exspec {

realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const Route> route,
                                         std::shared_ptr<KVStore> target_store, std::shared_ptr<KVStore> draft_store) {
  const Models stores{nullptr, target_store.get(), nullptr, draft_store.get()};
  return {
      [=](assemble_atom, JobPtr j) {
        apply_thread_settings();
        j->assemble(stores);
        if (!j->error().empty()) self->send(route->pool_manager, done_atom::value, std::move(j));
        else if (j->drafts()) self->send(route->drafter, draft_atom::value, std::move(j));
        else self->send(route->verifier, verify_atom::value, std::move(j));
      },
      [=](split_atom, JobPtr j) {
        apply_thread_settings();
        j->split();
        self->send(route->pool_manager, done_atom::value, std::move(j));
      },
  };
}

}  // namespace exspec
