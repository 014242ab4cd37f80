// The paper's modes as the drivers see them (actors/planners.h): the PaperScheduler with its plans
// as jobs, and how calibration times their work. Torch-free, so that the mode picker names them
// without the paper's batch headers.
#pragma once
#include <memory>

#include "actors/jobs/calibration.h"
#include "actors/jobs/job_planner.h"

namespace exspec {

std::unique_ptr<JobPlanner> make_paper_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                               int max_in_flight);
// The dense forward, and each model's cache repadded and realigned (model/paper/paper_timings.h).
ModeTimings paper_mode_timings();

}  // namespace exspec
