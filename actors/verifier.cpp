// verifier: owns the target model. Prefills new sequences' target caches; verifies a step
// (BatchVerify) and commits it; nonspec steps are verifications of zero drafts.
#include <ATen/ATen.h>

#include <chrono>

#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_job.h"
#include "model/runtime.h"
#include "model/decoder.h"

namespace exspec {

verifier_actor::behavior_type verifier(verifier_actor::pointer self, std::shared_ptr<const Decoder> model,
                                       std::shared_ptr<const Route> route) {
  using Clock = std::chrono::steady_clock;
  return {
      [=](prefill_atom, JobPtr job) {
        apply_thread_settings();
        const auto t = Clock::now();
        if (job->error.empty()) {
          try {
            job->target_caches = prefill_caches(*model, job->prefixes);
          } catch (const std::exception& e) {
            job->error = std::string("prefill failed: ") + e.what();
          }
        }
        job->prefill_s += std::chrono::duration<double>(Clock::now() - t).count();
        self->send(route->pool_manager, prefilled_atom::value, std::move(job));
      },
      [=](verify_atom, JobPtr job) {
        apply_thread_settings();
        if (job->error.empty()) {
          const auto t = Clock::now();
          try {
            if (!job->drafts.defined()) job->drafts = at::empty({job->batch.batch(), 0}, at::kLong);
            job->verified = verify(*model, job->batch, job->drafts, job->sampling);
            commit(job->batch, job->verified, job->drafts);
          } catch (const std::exception& e) {
            job->error = std::string("verification failed: ") + e.what();
          }
          job->verify_s += std::chrono::duration<double>(Clock::now() - t).count();
        }
        self->send(route->realigner, split_atom::value, std::move(job));
      },
  };
}

}  // namespace exspec
