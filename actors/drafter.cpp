// drafter: owns the draft model; drafts K tokens a step. It has no prefill of its own: a new
// sequence's prompt is the draft's lag, fed by its first drafting step (model/spec_batch.h). Its
// forwards run on the initial thread when that is parked (model/initial_thread.h).
#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/initial_thread.h"

namespace exspec {

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const Route> route, std::shared_ptr<KVStore> store, int threads) {
  return {
      [=](draft_atom, StepPtr w) {
        run_on_initial_thread([&] { draft_phase(*model, *w, store.get()); }, threads);
        self->send(route->verifier, verify_atom::value, std::move(w));
      },
      // In place: the draft stores each prompt chunk too, before the target does.
      [=](prefill_atom, PrefillPtr w) {
        run_on_initial_thread([&] { draft_prefill_phase(*model, *w, store.get()); }, threads);
        self->send(route->verifier, prefill_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
