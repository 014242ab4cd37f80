// verifier: owns the target model. Prefills new sequences' target caches; verifies a step
// (BatchVerify) and commits it; nonspec steps are verifications of zero drafts. Its forwards run
// on the initial thread when that is parked (model/initial_thread.h).
#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/initial_thread.h"

namespace exspec {

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route, std::shared_ptr<KVStore> store, int threads) {
  return {
      [=](prefill_atom, PrefillPtr w) {
        run_on_initial_thread([&] { prefill_phase(*model, *w, store.get()); }, threads);
        self->send(route->pool_manager, prefilled_atom::value, std::move(w));
      },
      [=](verify_atom, StepPtr w) {
        run_on_initial_thread([&] { verify_phase(*model, *w, store.get()); }, threads);
        self->send(route->realigner, split_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
