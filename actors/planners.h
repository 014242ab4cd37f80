// The planner of a mode, for the two drivers (the actor pipeline, actors/pool_manager.cpp, and
// the sequential driver): the in-place Scheduler (actors/scheduler/scheduler.h), or the
// PaperScheduler for the paper's modes (actors/paper/), each with its plans as jobs
// (actors/jobs/job_planner.h); and how the policy's calibration times the mode's work. Each mode
// plans jobs the other does not know; this is the one place that knows both.
#pragma once
#include <memory>

#include "actors/jobs/calibration.h"
#include "actors/jobs/job_planner.h"

namespace exspec {

std::unique_ptr<JobPlanner> make_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                         int max_in_flight);

// In place: the default ModeTimings (forward_slots, no copies); the paper's modes: theirs.
ModeTimings mode_timings(const EngineConfig& config);

}  // namespace exspec
