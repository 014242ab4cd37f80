// drafter: owns the draft model and its KV store; runs a job's draft-model forward (drafting K
// tokens, or storing a prompt chunk in place). Its forwards run on the initial thread when that
// is parked (model/initial_thread.h).
#include "actors/jobs/job.h"
#include "actors/roles.h"
#include "actors/route.h"
#include "model/initial_thread.h"

namespace exspec {

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const Route> route, std::shared_ptr<KVStore> store, int threads) {
  return {
      [=](draft_atom, JobPtr j) {
        run_on_initial_thread([&] { j->draft(*model, store.get()); }, threads);
        self->send(route->verifier, verify_atom::value, std::move(j));
      },
  };
}

}  // namespace exspec
