#include "actors/jobs/calibration.h"

#include <algorithm>

#include "actors/scheduler/cost_model.h"
#include "model/tools/calibrate.h"
#include "model/decoder.h"

namespace exspec {

void calibrate(StepCostModel& costs, const Decoder& target, const Decoder* draft, int64_t max_rows, int64_t max_k,
               const ModeTimings& mode, ForwardThreads threads) {
  const ForwardPath& path = mode.forward;
  auto verify = [&](int64_t rows, int64_t tokens, int64_t ctx) {
    costs.observe_target_forward(rows, tokens, ctx, time_forward(target, rows, tokens, ctx, 2, path, threads.target));
  };
  auto drafting = [&](int64_t rows, int64_t tokens, int64_t ctx) {
    costs.observe_draft_forward(rows, tokens, ctx,
                                time_forward(*draft, rows, tokens, ctx, 2, path, threads.draft, true));
  };
  const int64_t max_pos = std::max<int64_t>(16, target.config().max_position_embeddings);
  const int64_t long_ctx = std::min<int64_t>(256, max_pos / 2), short_ctx = std::min<int64_t>(32, long_ctx / 2);
  const int64_t rows_hi = std::max<int64_t>(1, max_rows), tokens_hi = std::max<int64_t>(2, max_k + 1);
  const int64_t catch_up = std::max(tokens_hi + 1, short_ctx);
  for (int64_t rows : {int64_t{1}, std::max<int64_t>(1, rows_hi / 4), rows_hi}) {
    for (int64_t ctx : {short_ctx, long_ctx}) {
      for (int64_t tokens : {int64_t{1}, tokens_hi}) {
        verify(rows, tokens, ctx);
        if (draft) drafting(rows, tokens, ctx);
      }
      // Verification of short drafts, where a wrong guess costs most: the step from one token a
      // row to a few is not linear on CPU (matrix-vector to matrix-matrix kernels), and with
      // only the two ends measured the fit overpredicts short drafts.
      for (int64_t tokens : {int64_t{2}, int64_t{4}})
        if (tokens < tokens_hi) verify(rows, tokens, ctx);
      // The draft catching up a prompt's worth of tokens (lazy draft prefill, after plain steps).
      if (draft) drafting(rows, catch_up, ctx);
      // The paper's modes copy both models' caches by a repad and gather them by a realignment;
      // in place there is neither (mode.copy and mode.gather are null), and seeding their cost
      // would make every drafting step look dearer than it is.
      if (!draft) continue;
      if (mode.copy) costs.observe_copy(rows, ctx, mode.copy(target, rows, ctx) + mode.copy(*draft, rows, ctx));
      if (mode.gather) costs.observe_gather(rows, ctx, mode.gather(target, rows, ctx) + mode.gather(*draft, rows, ctx));
    }
    if (rows_hi == 1) break;
  }
}

std::shared_ptr<DraftLengthPolicy> make_policy(const EngineConfig& c, const Decoder& target, const Decoder* draft,
                                               bool pipelined, const ModeTimings& mode, ForwardThreads threads) {
  // Without a draft model (prompt lookup) drafting costs no forward: only the target is priced.
  if (!drafts(c) || (!draft && c.speculate != Speculate::Ngram)) return nullptr;
  DraftLengthSettings s;
  s.adaptive = c.adaptive_k;
  s.fixed_k = c.draft_tokens;
  s.k_min = c.min_draft_tokens;
  s.k_max = c.max_draft_tokens;
  s.pipelined = pipelined;
  s.target_experts = {target.config().experts.num_experts, target.config().experts.top_k};
  auto p = std::make_shared<DraftLengthPolicy>(s);
  if (s.adaptive) {
    calibrate(p->costs(), target, draft, c.batch_size, s.k_max, mode, threads);
    if (!draft) return p;  // lookup's agreement is the workload's: learned per request
    const AgreementSample a = measure_agreement(target, *draft);
    p->seed_acceptance(static_cast<double>(a.agreed), static_cast<double>(a.positions));
    if (pipelined)
      p->seed_serial_share(overlap_serial_share(target, *draft, std::max<int64_t>(1, c.batch_size),
                                                std::clamp<int64_t>(c.draft_tokens, 1, std::max<int64_t>(1, s.k_max)),
                                                std::min<int64_t>(128, target.config().max_position_embeddings / 2), 2,
                                                mode.forward, threads));
  }
  return p;
}

}  // namespace exspec
