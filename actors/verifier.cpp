// verifier: owns the target model. Prefills new sequences' target caches; verifies a step
// (BatchVerify) and commits it; nonspec steps are verifications of zero drafts.
#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/runtime.h"

namespace exspec {

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route) {
  return {
      [=](prefill_atom, PrefillPtr w) {
        apply_thread_settings();
        prefill_phase(*model, *w);
        self->send(route->pool_manager, prefilled_atom::value, std::move(w));
      },
      [=](verify_atom, StepPtr w) {
        apply_thread_settings();
        verify_phase(*model, *w);
        self->send(route->realigner, split_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
