// drafter: owns the draft model; drafts K tokens a step. It has no prefill of its own: a new
// sequence's prompt is the draft's lag, fed by its first drafting step (model/spec_batch.h).
#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/runtime.h"

namespace exspec {

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const Route> route) {
  return {
      [=](draft_atom, StepPtr w) {
        apply_thread_settings();
        draft_phase(*model, *w);
        self->send(route->verifier, verify_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
