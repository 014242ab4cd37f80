#include "actors/planners.h"

#include "actors/jobs/inplace_jobs.h"
#include "actors/paper/paper_mode.h"

namespace exspec {

std::unique_ptr<JobPlanner> make_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                         int max_in_flight) {
  if (config.mode == Mode::InPlace)
    return std::make_unique<InplaceJobPlanner>(config, std::move(policy), max_in_flight);
  return make_paper_planner(config, std::move(policy), max_in_flight);
}

ModeTimings mode_timings(const EngineConfig& config) {
  return config.mode == Mode::InPlace ? ModeTimings{} : paper_mode_timings();
}

}  // namespace exspec
