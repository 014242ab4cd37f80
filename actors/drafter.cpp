// drafter: owns the draft model. Prefills new sequences' draft caches; drafts K tokens a step.
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
      [=](prefill_atom, JobPtr job) {
        apply_thread_settings();
        const auto t = Clock::now();
        try {
          job->draft_caches = prefill_caches(*model, job->prefixes);
        } catch (const std::exception& e) {
          job->error = std::string("draft prefill failed: ") + e.what();
        }
        job->prefill_s += std::chrono::duration<double>(Clock::now() - t).count();
        self->send(route->verifier, prefill_atom::value, std::move(job));
      },
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
