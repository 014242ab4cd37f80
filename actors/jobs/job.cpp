#include "actors/jobs/job.h"

#include <chrono>
#include <exception>

#include "actors/scheduler/plan.h"
#include "model/accept.h"

namespace exspec {

void run_job(Job& job, const Models& m) {
  job.assemble(m);
  if (job.drafts()) job.draft(*m.draft, m.draft_store);
  job.run_target(*m.target, m.target_store);
  job.split();
}

void take_verified(VerifyResult& v, StepResult& o) {
  const int64_t B = v.accepted.size(0);
  at::Tensor toks = v.tokens.contiguous();
  auto acc = v.accepted.accessor<int64_t, 1>();
  o.committed.assign(B, {});
  o.accepted.assign(B, 0);
  o.logprobs = std::move(v.logprobs);
  for (int64_t b = 0; b < B; ++b) {
    o.accepted[b] = acc[b];
    const int64_t* t = toks[b].data_ptr<int64_t>();
    o.committed[b].assign(t, t + acc[b] + 1);
  }
}

void timed(std::string& error, double& seconds, const char* what, const std::function<void()>& call) {
  if (!error.empty()) return;
  const auto t = std::chrono::steady_clock::now();
  try {
    call();
  } catch (const std::exception& e) {
    error = std::string(what) + " failed: " + e.what();
  }
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace exspec
