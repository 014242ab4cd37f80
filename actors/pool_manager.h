// pool-manager: the actor around the planner (actors/scheduler/planner.h), which owns the SequencePool
// and refills the window. It turns producer messages into admit/cancel calls, the planner's
// jobs into messages to the roles, and jobs coming back into done calls; then it publishes the
// stats and tells the sinks. It decides nothing itself.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>

#include "actors/messages.h"
#include "actors/scheduler/draft_length.h"
#include "actors/scheduler/engine_config.h"
#include "actors/sink.h"

namespace exspec {

struct ActorHandles;

// The pool-manager's figures, published after every event it handles, so that producers read
// them without a round trip through the actor system (stats() stays cheap and never blocks on
// actors, e.g. for /metrics).
struct StatsBoard {
  std::mutex mu;
  EngineStats stats;
};

struct PoolManagerSettings {
  EngineConfig decoding;
  bool overlap = true;  // two pieces of work in flight: draft batch t+1 while t is verified
  // Shared with the engine front: sequences admitted but not yet in the window (queue bound).
  std::shared_ptr<std::atomic<size_t>> queued;
  std::shared_ptr<StatsBoard> board;
  // Chooses K per step (null in nonspec mode); the scheduler's alone.
  std::shared_ptr<DraftLengthPolicy> policy;
};

pool_manager_actor spawn_pool_manager(caf::actor_system& system, PoolManagerSettings settings,
                                      std::shared_ptr<const ActorHandles> handles);

}  // namespace exspec
