#include "actors/paper/paper_mode.h"

#include "actors/paper/paper_jobs.h"
#include "model/paper/paper_timings.h"

namespace exspec {

std::unique_ptr<JobPlanner> make_paper_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                               int max_in_flight) {
  return std::make_unique<PaperJobPlanner>(config, std::move(policy), max_in_flight);
}

ModeTimings paper_mode_timings() {
  ModeTimings t;
  t.forward = dense_forward_run;
  t.copy = [](const Decoder& m, int64_t rows, int64_t context) { return time_repad(m, rows, context); };
  t.gather = [](const Decoder& m, int64_t rows, int64_t context) { return time_realign(m, rows, context); };
  return t;
}

}  // namespace exspec
