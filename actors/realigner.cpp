// realigner: everything that makes a batch rectangular again, off the forward-pass path.
// assemble: stack a same-length group or repad a mixed one (exspec), or drop finished rows and
// realign (eqspec). split: unpad-append-repad after verification and hand each row's state
// back to the pool (exspec), plus the plain per-row results for the pool-manager.
#include <ATen/ATen.h>

#include <chrono>

#include "actors/roles.h"
#include "actors/route.h"
#include "actors/step_job.h"
#include "model/runtime.h"

namespace exspec {

realigner_actor::behavior_type realigner(realigner_actor::pointer self, std::shared_ptr<const Route> route) {
  using Clock = std::chrono::steady_clock;
  return {
      [=](assemble_atom, JobPtr job) {
        apply_thread_settings();
        const auto t = Clock::now();
        const int64_t reserve = job->k + 2;
        try {
          if (job->batch.batch() == 0) {
            std::vector<const SeqTensors*> rows;
            for (const auto& s : job->inputs) rows.push_back(s.get());
            job->batch = assemble(rows, reserve, &job->reused);
            job->inputs.clear();  // the batch owns the caches now
          } else if (!job->drop_rows.empty()) {
            std::vector<int64_t> keep;
            for (int64_t b = 0, d = 0; b < job->batch.batch(); ++b) {
              if (d < static_cast<int64_t>(job->drop_rows.size()) && job->drop_rows[d] == b) ++d;
              else keep.push_back(b);
            }
            select_rows(job->batch, at::tensor(keep, at::kLong), reserve);
            job->drop_rows.clear();
          }
          const at::Tensor& len = job->batch.lengths;
          job->grouped = len.min().item<int64_t>() == len.max().item<int64_t>();
        } catch (const std::exception& e) {
          job->error = std::string("assembling the batch failed: ") + e.what();
        }
        job->align_s += std::chrono::duration<double>(Clock::now() - t).count();
        job->drafts = at::Tensor();
        if (!job->error.empty()) self->send(route->pool_manager, step_done_atom::value, std::move(job));
        else if (job->k > 0) self->send(route->drafter, draft_atom::value, std::move(job));
        else self->send(route->verifier, verify_atom::value, std::move(job));
      },
      [=](split_atom, JobPtr job) {
        apply_thread_settings();
        const auto t = Clock::now();
        if (job->error.empty()) {
          try {
            realign(job->batch.target, job->k + 2);
            realign(job->batch.draft, job->k + 2);
            const int64_t B = job->batch.batch();
            at::Tensor toks = job->verified.tokens.contiguous();
            auto acc = job->verified.accepted.accessor<int64_t, 1>();
            job->committed.assign(B, {});
            job->logprobs = std::move(job->verified.logprobs);
            job->accepted.assign(B, 0);
            for (int64_t b = 0; b < B; ++b) {
              job->accepted[b] = acc[b];
              const int64_t* p = toks[b].data_ptr<int64_t>();
              job->committed[b].assign(p, p + acc[b] + 1);
            }
            job->outputs.clear();
            if (!job->persistent)
              for (auto& row : split_rows(job->batch)) job->outputs.push_back(std::make_shared<SeqTensors>(std::move(row)));
          } catch (const std::exception& e) {
            job->error = std::string("realignment failed: ") + e.what();
          }
        }
        if (!job->persistent) job->batch = SpecBatch{};  // rows live on as views in the pool
        job->align_s += std::chrono::duration<double>(Clock::now() - t).count();
        self->send(route->pool_manager, step_done_atom::value, std::move(job));
      },
  };
}

}  // namespace exspec
