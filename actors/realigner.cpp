// realigner: everything that makes a batch rectangular again, off the forward-pass path: the
// assemble and split phases of a step (actors/step_phases.h).
#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/runtime.h"

namespace exspec {

realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const Route> route) {
  return {
      [=](assemble_atom, StepPtr w) {
        apply_thread_settings();
        assemble_phase(*w);
        if (!w->outcome.error.empty()) self->send(route->pool_manager, step_done_atom::value, std::move(w));
        else if (w->plan.by_model) self->send(route->drafter, draft_atom::value, std::move(w));
        else self->send(route->verifier, verify_atom::value, std::move(w));
      },
      [=](split_atom, StepPtr w) {
        apply_thread_settings();
        split_phase(*w);
        self->send(route->pool_manager, step_done_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
