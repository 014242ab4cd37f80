// verifier: owns the target model and its KV store; runs a job's target forward (storing a
// prompt, or verifying a step and committing it; plain steps verify zero drafts). Its forwards
// run on the initial thread when that is parked (model/initial_thread.h).
#include "actors/jobs/job.h"
#include "actors/roles.h"
#include "actors/route.h"
#include "model/initial_thread.h"

namespace exspec {

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route, std::shared_ptr<KVStore> store, int threads) {
  return {
      [=](verify_atom, JobPtr j) {
        run_on_initial_thread([&] { j->run_target(*model, store.get()); }, threads);
        self->send(route->realigner, split_atom::value, std::move(j));
      },
  };
}

}  // namespace exspec
