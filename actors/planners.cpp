#include "actors/planners.h"

#include "actors/paper/paper_scheduler.h"
#include "actors/scheduler/scheduler.h"

namespace exspec {

std::unique_ptr<Planner> make_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                        int max_in_flight) {
  if (config.mode == Mode::InPlace) return std::make_unique<Scheduler>(config, std::move(policy), max_in_flight);
  return std::make_unique<PaperScheduler>(config, std::move(policy), max_in_flight);
}

}  // namespace exspec
