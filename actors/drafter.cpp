// drafter: owns the draft model; drafts K tokens a step. It has no prefill of its own: a new
// sequence's prompt is the draft's lag, fed by its first drafting step (model/spec_batch.h).
#include <chrono>

#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_job.h"
#include "model/runtime.h"
#include "model/decoder.h"

namespace exspec {

drafter_actor::behavior_type drafter(drafter_actor::pointer self, std::shared_ptr<const Decoder> model,
                                     std::shared_ptr<const Route> route) {
  using Clock = std::chrono::steady_clock;
  return {
      [=](draft_atom, JobPtr job) {
        apply_thread_settings();
        const auto t = Clock::now();
        try {
          job->drafts = draft_tokens(*model, job->batch, job->k);
        } catch (const std::exception& e) {
          job->error = std::string("drafting failed: ") + e.what();
        }
        job->draft_s += std::chrono::duration<double>(Clock::now() - t).count();
        self->send(route->verifier, verify_atom::value, std::move(job));
      },
  };
}

}  // namespace exspec
