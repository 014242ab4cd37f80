// The planner of a mode, for the two drivers (the actor pipeline, actors/pool_manager.cpp, and
// the sequential driver): the in-place Scheduler (actors/scheduler/scheduler.h), or the
// PaperScheduler for the paper's modes (actors/paper/). Each plans jobs the other does not
// know; this is the one place that knows both.
#pragma once
#include <memory>

#include "actors/scheduler/planner.h"

namespace exspec {

std::unique_ptr<Planner> make_planner(const EngineConfig& config, std::shared_ptr<DraftLengthPolicy> policy,
                                        int max_in_flight);

}  // namespace exspec
