// verifier: owns the target model. Prefills new sequences' target caches; verifies a step
// (BatchVerify) and commits it; nonspec steps are verifications of zero drafts.
#include <functional>

#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_phases.h"
#include "model/initial_thread.h"
#include "model/runtime.h"

namespace exspec {

namespace {

void run_phase(bool on_initial, const std::function<void()>& phase) {
  if (on_initial) return run_on_initial_thread(phase);  // inline when the initial thread is not parked
  apply_thread_settings();
  phase();
}

}  // namespace

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route, std::shared_ptr<KVStore> store,
                                       bool on_initial) {
  return {
      [=](prefill_atom, PrefillPtr w) {
        run_phase(on_initial, [&] { prefill_phase(*model, *w, store.get()); });
        self->send(route->pool_manager, prefilled_atom::value, std::move(w));
      },
      [=](verify_atom, StepPtr w) {
        run_phase(on_initial, [&] { verify_phase(*model, *w, store.get()); });
        self->send(route->realigner, split_atom::value, std::move(w));
      },
  };
}

}  // namespace exspec
